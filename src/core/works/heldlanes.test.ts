import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../k8s/objects.ts';
import { desiredWorksForPolicy, type GatewayPlacement } from './desiredworks.ts';
import { heldLanes, holdersOf } from './heldlanes.ts';
import { workCacheView } from './cacheview.ts';
import type { ManifestWork } from './manifestwork.ts';

const GW = 'gateway.networking.k8s.io';
const auth = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };

function policy(namespace: string, name: string, targets: string[]): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { name, namespace, uid: `${namespace}-${name}`, creationTimestamp: '2026-11-01T00:00:00Z', generation: 1 },
    spec: { targetRefs: [...targets.map((t) => ({ group: GW, kind: 'Gateway', name: t })), { group: GW, kind: 'HTTPRoute', name: 'route' }] },
  };
}

/** The works the hub would write for the policy, every Gateway in the shared downstream namespace `gateways`. */
function worksOf(p: KubeObject, clusters: string[]): ManifestWork[] {
  const placement: GatewayPlacement = { managed: true, downstreamNamespaceTemplate: 'gateways', clusters, kindAllowed: true };
  const { works } = desiredWorksForPolicy({ gvr: auth, policy: p, gateways: () => placement, rawFeedback: false, statusFeedback: [], maxWorkBytes: 1 << 20 });
  return [...works.values()];
}

test("a work holds, on its cluster, the downstream Gateways its copy targets, each for the hub Gateway of that name in the policy's namespace", () => {
  const [work] = worksOf(policy('team-b', 'b-auth', ['gw', 'other']), ['spoke-1']);
  assert.deepEqual(heldLanes(work!), [
    { downstream: 'gateways/gw', holder: 'team-b/gw' },
    { downstream: 'gateways/other', holder: 'team-b/other' },
  ]);
});

test('holdersOf reads the works of one cluster; a work that is nobody\'s (its parts disagree) holds nothing', () => {
  const mine = worksOf(policy('team-b', 'b-auth', ['gw']), ['spoke-1']);
  const theirs = worksOf(policy('team-c', 'c-auth', ['elsewhere']), ['spoke-1']);
  assert.deepEqual(holdersOf([...mine, ...theirs], 'gateways/gw'), ['team-b/gw']);
  assert.deepEqual(holdersOf(theirs, 'gateways/gw'), []);
  const [work] = mine;
  const forged: KubeObject = { ...work!, metadata: { ...work!.metadata, labels: { ...work!.metadata.labels, 'policysync.kuadrant.io/source': '0000000000000000' } } };
  assert.deepEqual(heldLanes(forged), []);
  assert.deepEqual(heldLanes({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }), []);
});

test('cached works (frozen, as the hub caches them) that hold the same one lane share one answer; a work being built gets its own', () => {
  const cached = (w: ManifestWork): KubeObject => workCacheView()(JSON.parse(JSON.stringify(w)) as KubeObject);
  const [a1, a2] = worksOf(policy('team-b', 'b-auth', ['gw']), ['spoke-1', 'spoke-2']);
  const [b1] = worksOf(policy('team-b', 'b-rate', ['gw']), ['spoke-1']);
  const lanes = [a1!, a2!, b1!].map((w) => heldLanes(cached(w)));
  assert.deepEqual(lanes[0], [{ downstream: 'gateways/gw', holder: 'team-b/gw' }]);
  assert.equal(lanes[1], lanes[0]);
  assert.equal(lanes[2], lanes[0]);
  assert.ok(Object.isFrozen(lanes[0]) && Object.isFrozen(lanes[0][0]));
  const building = heldLanes(a1!);
  assert.deepEqual(building, lanes[0]);
  assert.notEqual(building, lanes[0]);
});
