import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cachedObject, workCacheView } from './cacheview.ts';
import { readClusterFeedback } from './feedback.ts';
import { feedbackRulesFor } from './feedbackrules.ts';
import { buildManifestWork, readSourceRef, readSpecHash } from './manifestwork.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { countWorkStates } from './workstate.ts';

/** One cache's transform: the tests below share its table, as the works of one cache do. */
const cachedWork = workCacheView();
const GW = 'gateway.networking.k8s.io';
const btp = { group: 'gateway.envoyproxy.io', version: 'v1alpha1', resource: 'backendtrafficpolicies' };
const policy: KubeObject = {
  apiVersion: 'gateway.envoyproxy.io/v1alpha1',
  kind: 'BackendTrafficPolicy',
  metadata: { name: 'p', namespace: 'team-a', uid: 'u1' },
  spec: {},
};
const copy: KubeObject = {
  apiVersion: 'gateway.envoyproxy.io/v1alpha1',
  kind: 'BackendTrafficPolicy',
  metadata: { name: 'p', namespace: 'team-a', labels: { app: 'shop' } },
  spec: {
    targetRefs: [
      { group: GW, kind: 'Gateway', name: 'shop' },
      { group: GW, kind: 'Gateway', name: 'api' },
    ],
    rateLimit: { type: 'Global', global: { rules: Array.from({ length: 50 }, (_, i) => ({ limit: { requests: i, unit: 'Second' } })) } },
  },
};
const value = (name: string, v: string | number) => ({ name, fieldValue: typeof v === 'number' ? { type: 'Integer', integer: v } : { type: 'String', string: v } });

/** A work as the apiserver sends it (parsed: each its own copy): with managedFields and the work agent's status. */
function observedWork(cluster = 'c1', uid = 'w1'): KubeObject {
  const built = buildManifestWork({ gvr: btp, policy, cluster, copy, feedbackRules: feedbackRulesFor({ rawFeedback: false, ancestorGateways: ['api', 'shop'] }), deleteOption: 'Foreground', controller: 'abc' });
  const applied = { type: 'Applied', status: 'True', reason: 'AppliedManifestWorkComplete', message: 'ok', observedGeneration: 2, lastTransitionTime: '2026-01-01T00:00:00Z' };
  return JSON.parse(JSON.stringify({
    ...built,
    metadata: {
      ...built.metadata,
      uid,
      resourceVersion: '42',
      generation: 2,
      creationTimestamp: '2026-01-01T00:00:00Z',
      finalizers: ['cluster.open-cluster-management.io/manifest-work-cleanup'],
      managedFields: [
        { manager: 'policy-sync', operation: 'Update', apiVersion: 'work.open-cluster-management.io/v1', time: '2026-01-01T00:05:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:workload': {} } } },
        { manager: 'work-agent', operation: 'Update', subresource: 'status', time: '2026-01-01T00:09:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': {} } },
      ],
    },
    status: {
      conditions: [applied, { ...applied, type: 'Available' }],
      resourceStatus: {
        manifests: [
          {
            resourceMeta: { ordinal: 0, group: btp.group, resource: btp.resource, name: 'p', namespace: 'team-a' },
            statusFeedback: { values: [value('generation', 2), value('ancestor0Status', 'True'), value('ancestor0Reason', 'Accepted'), value('ancestor1Status', 'False'), value('ancestor1Reason', 'Conflicted')] },
            conditions: [{ ...applied, type: 'Applied' }],
          },
        ],
      },
    },
  })) as KubeObject;
}

test('cachedWork keeps what the hub reads back: every reader answers the same as on the whole work', () => {
  const whole = observedWork();
  const cached = cachedWork(whole);
  assert.deepEqual(readClusterFeedback(cached), readClusterFeedback(whole));
  assert.deepEqual(readClusterFeedback(cached).ancestors.map((a) => [a.gateway, a.entries.map((e) => e.reason)]), [
    ['api', ['Accepted']],
    ['shop', ['Conflicted']],
  ]);
  assert.deepEqual(countWorkStates([cached]), countWorkStates([whole]));
  assert.equal(readSpecHash(cached), readSpecHash(whole));
  assert.deepEqual(readSourceRef(cached), readSourceRef(whole));
  assert.deepEqual(cached.metadata.labels, whole.metadata.labels);
  for (const key of ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'finalizers', 'creationTimestamp'] as const) {
    assert.deepEqual(cached.metadata[key], whole.metadata[key], key);
  }
});

test('cachedWork keeps the copy it places (spec and metadata), and leaves out the feedback rules and the fields of managedFields', () => {
  const whole = observedWork();
  const cached = cachedWork(whole);
  const { name, namespace, labels, annotations } = copy.metadata;
  assert.deepEqual(cached.spec, {
    workload: {
      manifests: [
        {
          apiVersion: copy.apiVersion,
          kind: copy.kind,
          metadata: { name, namespace, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
          spec: copy.spec,
        },
      ],
    },
  });
  assert.equal((cached.spec as { manifestConfigs?: unknown }).manifestConfigs, undefined);
  assert.deepEqual(cached.metadata.managedFields, [{ time: '2026-01-01T00:05:00Z' }, { time: '2026-01-01T00:09:00Z', subresource: 'status' }]);
  assert.ok(JSON.stringify(cached).length < (JSON.stringify(whole).length * 2) / 3, `${JSON.stringify(cached).length} of ${JSON.stringify(whole).length} bytes`);
  assert.ok(whole.metadata.managedFields?.length === 2 && (whole.spec as { manifestConfigs?: unknown }).manifestConfigs, 'the input is not modified');
});

test('cachedObject drops managedFields and kubectl\'s last-applied annotation, nothing else', () => {
  const object: KubeObject = {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: {
      name: 'p',
      namespace: 'ns',
      resourceVersion: '7',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"spec":{}}', keep: 'me' },
      managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
    },
    spec: { targetRef: { group: GW, kind: 'Gateway', name: 'gw' }, rules: { a: 1 } },
    status: { conditions: [] },
  };
  assert.deepEqual(cachedObject(object), {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { name: 'p', namespace: 'ns', resourceVersion: '7', annotations: { keep: 'me' } },
    spec: object.spec,
    status: object.status,
  });
  const bare: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
  assert.deepEqual(cachedObject(bare), bare);
});

test('the works of a policy on several clusters share what they hold alike, and every reader still answers as on each whole work', () => {
  const wholes = ['c1', 'c2', 'c3', 'c4'].map((cluster, i) => observedWork(cluster, `w${i}`));
  const cached = wholes.map((w) => cachedWork(structuredClone(w)));
  cached.forEach((c, i) => {
    const whole = wholes[i]!;
    assert.deepEqual(readClusterFeedback(c), readClusterFeedback(whole));
    assert.deepEqual(countWorkStates([c]), countWorkStates([whole]));
    assert.equal(readSpecHash(c), readSpecHash(whole));
    assert.deepEqual(readSourceRef(c), readSourceRef(whole));
    assert.deepEqual(c.metadata, { ...whole.metadata, managedFields: [{ time: '2026-01-01T00:05:00Z' }, { time: '2026-01-01T00:09:00Z', subresource: 'status' }] });
    assert.deepEqual(c.status, whole.status);
  });
  // Held once from the second work on at the latest (a part holding a string seen for the first time is not kept).
  const [, second, ...rest] = cached;
  for (const c of rest) {
    for (const part of ['labels', 'annotations', 'managedFields', 'finalizers'] as const) assert.equal(c.metadata[part], second!.metadata[part], part);
    assert.equal(c.spec, second!.spec);
    assert.equal(c.status, second!.status);
    assert.notEqual(c.metadata, second!.metadata);
  }
  assert.deepEqual(new Set(cached.map((c) => c.metadata.uid)), new Set(['w0', 'w1', 'w2', 'w3']));
});

test('each cache shares within its own table: works of two caches share nothing', () => {
  const wholes = ['c1', 'c2', 'c3'].map((cluster, i) => observedWork(cluster, `w${i}`));
  const cache = (): KubeObject[] => {
    const view = workCacheView();
    return wholes.map((w) => view(structuredClone(w)));
  };
  const [a, b] = [cache(), cache()];
  // A part is shared once every string in it has been seen: from a policy's second work on.
  assert.equal(a[2]!.metadata.labels, a[1]!.metadata.labels, 'one cache: shared');
  assert.equal(b[2]!.metadata.labels, b[1]!.metadata.labels, 'one cache: shared');
  assert.notEqual(b[2]!.metadata.labels, a[2]!.metadata.labels, 'two caches: each its own');
  assert.deepEqual(b, a);
});
