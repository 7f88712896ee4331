import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../k8s/objects.ts';
import { buildSpokeCopy, isHubOnlyAnnotation } from './spokecopy.ts';

const GW = 'gateway.networking.k8s.io';
const spec = { targetRef: { group: GW, kind: 'Gateway', name: 'gw' }, rules: { a: 1 } };

function hubPolicy(): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: {
      name: 'p',
      namespace: 'team-a',
      uid: 'u-1',
      resourceVersion: '42',
      generation: 3,
      creationTimestamp: '2024-05-01T10:00:00Z',
      deletionTimestamp: '2024-05-02T10:00:00Z',
      managedFields: [{ manager: 'kubectl' }],
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'x' }],
      finalizers: ['example.com/f'],
      selfLink: '/apis/x',
      labels: { app: 'shop' },
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': '{"big":true}',
        'kuadrant.io/policies-synced': '[{"cluster":"c1","name":"p","namespace":"team-a"}]',
        'policysync.kuadrant.io/status': '{"summary":{}}',
        'policysync.kuadrant.io/delete-option': 'Orphan',
        'example.com/keep': 'yes',
      },
    },
    spec: { targetRef: { group: GW, kind: 'Gateway', name: 'gw', namespace: 'team-a' } },
    status: { conditions: [{ type: 'Accepted', status: 'True' }] },
  };
}

test('buildSpokeCopy keeps apiVersion, kind, name, labels and foreign annotations, and nothing else', () => {
  const copy = buildSpokeCopy(hubPolicy(), { downstreamNamespace: 'kuadrant-team-a', spec });
  assert.deepEqual(copy, {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: {
      name: 'p',
      namespace: 'kuadrant-team-a',
      labels: { app: 'shop' },
      annotations: {
        'example.com/keep': 'yes',
        'kuadrant.io/policy-synced': 'team-a/p',
        'kuadrant.io/origin-creation': '2024-05-01T10:00:00Z',
        'policysync.kuadrant.io/revision': '3',
      },
    },
    spec,
  });
});

test('buildSpokeCopy: the revision annotation is the hub policy\'s generation, never a value set on the hub policy', () => {
  const policy = hubPolicy();
  policy.metadata.generation = 12;
  policy.metadata.annotations = { ...policy.metadata.annotations, 'policysync.kuadrant.io/revision': '999' };
  const copy = buildSpokeCopy(policy, { downstreamNamespace: 'x', spec });
  assert.equal(copy.metadata.annotations?.['policysync.kuadrant.io/revision'], '12');
});

test('buildSpokeCopy: no generation (or not a number), no revision annotation, and a hub-set one is not copied', () => {
  const policy = hubPolicy();
  delete policy.metadata.generation;
  policy.metadata.annotations = { ...policy.metadata.annotations, 'policysync.kuadrant.io/revision': '5' };
  assert.equal(buildSpokeCopy(policy, { downstreamNamespace: 'x', spec }).metadata.annotations?.['policysync.kuadrant.io/revision'], undefined);
  (policy.metadata as Record<string, unknown>).generation = '4';
  assert.equal(buildSpokeCopy(policy, { downstreamNamespace: 'x', spec }).metadata.annotations?.['policysync.kuadrant.io/revision'], undefined);
});

test('buildSpokeCopy writes origin-creation from a Date in the apiserver format', () => {
  const policy = hubPolicy();
  policy.metadata.creationTimestamp = new Date('2024-05-01T10:00:00.000Z');
  const copy = buildSpokeCopy(policy, { downstreamNamespace: 'team-a', spec });
  assert.equal(copy.metadata.annotations?.['kuadrant.io/origin-creation'], '2024-05-01T10:00:00Z');
});

test('buildSpokeCopy omits an empty labels map and overrides a hub-set policy-synced value', () => {
  const copy = buildSpokeCopy(
    {
      apiVersion: 'kuadrant.io/v1',
      kind: 'RateLimitPolicy',
      metadata: { name: 'r', namespace: 'ns', labels: {}, annotations: { 'kuadrant.io/policy-synced': 'forged/x' } },
      spec: {},
    },
    { downstreamNamespace: 'ns', spec: {} },
  );
  assert.deepEqual(copy.metadata, { name: 'r', namespace: 'ns', annotations: { 'kuadrant.io/policy-synced': 'ns/r' } });
});

test('buildSpokeCopy does not modify the hub policy', () => {
  const policy = hubPolicy();
  const before = structuredClone(policy);
  buildSpokeCopy(policy, { downstreamNamespace: 'x', spec });
  assert.deepEqual(policy, before);
});

test('isHubOnlyAnnotation matches last-applied, policies-synced and every policysync.kuadrant.io key', () => {
  assert.equal(isHubOnlyAnnotation('kubectl.kubernetes.io/last-applied-configuration'), true);
  assert.equal(isHubOnlyAnnotation('kuadrant.io/policies-synced'), true);
  assert.equal(isHubOnlyAnnotation('policysync.kuadrant.io/anything'), true);
  assert.equal(isHubOnlyAnnotation('kuadrant.io/policy-synced'), false);
  assert.equal(isHubOnlyAnnotation('example.com/keep'), false);
});
