import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../core/k8s/objects.ts';
import { keysForDecisionChange, keysForGatewayChange, keysForManagedClusterChange, keysForPlacementChange, keysForPolicyChange, keysForWorkChange, type KindedPolicy } from './eventkeys.ts';

const AUTH = { group: 'kuadrant.io', resource: 'authpolicies' };
const RLP = { group: 'kuadrant.io', resource: 'ratelimitpolicies' };
const obj = (namespace: string, name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'X', metadata: { namespace, name, ...extra } });

test('a policy change maps to itself and the possible rivals of its old and new versions, without version', () => {
  const rivals: Record<string, KubeObject[]> = { 'a/p:1': [obj('b', 'p')], 'a/p:2': [obj('c', 'p'), obj('b', 'p')] };
  const rivalsOf = (p: KubeObject): KubeObject[] => rivals[`${p.metadata.namespace}/${p.metadata.name}:${p.metadata.resourceVersion}`] ?? [];
  const before = obj('a', 'p', { resourceVersion: '1' });
  const after = obj('a', 'p', { resourceVersion: '2' });
  assert.deepEqual(keysForPolicyChange(AUTH, { old: before, object: after }, rivalsOf), [
    'authpolicies.kuadrant.io|a/p',
    'authpolicies.kuadrant.io|b/p',
    'authpolicies.kuadrant.io|c/p',
  ]);
  assert.deepEqual(keysForPolicyChange(AUTH, { object: obj('a', 'p', { resourceVersion: '3' }) }, rivalsOf), ['authpolicies.kuadrant.io|a/p'], 'no possible rival: itself only');
});

test('a Gateway change maps to the policies targeting it before and after (a rename of the Gateway key included)', () => {
  const targeting: Record<string, KindedPolicy[]> = {
    'ns/gw': [{ gr: AUTH, policy: obj('ns', 'auth') }],
    'ns/gw2': [{ gr: RLP, policy: obj('ns', 'rlp') }, { gr: AUTH, policy: obj('ns', 'auth') }],
  };
  const lookup = (key: string): KindedPolicy[] => targeting[key] ?? [];
  assert.deepEqual(keysForGatewayChange({ old: obj('ns', 'gw'), object: obj('ns', 'gw2') }, lookup), [
    'authpolicies.kuadrant.io|ns/auth',
    'ratelimitpolicies.kuadrant.io|ns/rlp',
  ]);
  assert.deepEqual(keysForGatewayChange({ object: obj('ns', 'other') }, lookup), []);
  // Same-named Gateways elsewhere: their lanes may now conflict with this one's.
  const byName = (name: string): KubeObject[] => (name === 'gw' ? [obj('ns', 'gw'), obj('team-b', 'gw')] : []);
  const targetingB = (key: string): KindedPolicy[] => (key === 'team-b/gw' ? [{ gr: AUTH, policy: obj('team-b', 'b') }] : lookup(key));
  assert.deepEqual(keysForGatewayChange({ object: obj('ns', 'gw') }, targetingB, byName), ['authpolicies.kuadrant.io|ns/auth', 'authpolicies.kuadrant.io|team-b/b']);
});

test('a PlacementDecision change maps to the policies on the Gateways of its Placement, old label included', () => {
  const label = (p: string): Partial<KubeObject['metadata']> => ({ labels: { 'cluster.open-cluster-management.io/placement': p } });
  const gateways: Record<string, KubeObject[]> = { 'ns/east': [obj('ns', 'gw-e')], 'ns/west': [obj('ns', 'gw-w')] };
  const policies: Record<string, KindedPolicy[]> = { 'ns/gw-e': [{ gr: AUTH, policy: obj('ns', 'e') }], 'ns/gw-w': [{ gr: AUTH, policy: obj('ns', 'w') }] };
  const keys = keysForDecisionChange(
    { old: obj('ns', 'd', label('east')), object: obj('ns', 'd', label('west')) },
    (p) => gateways[p] ?? [],
    (g) => policies[g] ?? [],
  );
  assert.deepEqual(keys, ['authpolicies.kuadrant.io|ns/e', 'authpolicies.kuadrant.io|ns/w']);
  assert.deepEqual(keysForDecisionChange({ object: obj('ns', 'd') }, () => [obj('ns', 'gw-e')], () => []), [], 'no placement label: nothing');
});

test('a work change maps to its source policy by group+resource, or to the spoke configuration', () => {
  const ref = JSON.stringify({ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', namespace: 'ns', name: 'p' });
  const work = obj('c1', 'w', { annotations: { 'policysync.kuadrant.io/source-ref': ref } });
  assert.deepEqual(keysForWorkChange({ object: work }), { spokeConfig: false, policies: ['authpolicies.kuadrant.io|ns/p'] });
  assert.deepEqual(keysForWorkChange({ object: obj('c1', 'w') }), { spokeConfig: false, policies: [] }, 'a work without a source-ref maps to nothing');
  assert.deepEqual(keysForWorkChange({ object: obj('c1', 's', { labels: { 'policysync.kuadrant.io/spoke-config': 'true' } }) }), { spokeConfig: true, policies: [] });
});

test('a spoke configuration work wakes the syncer when what it wrote changed or the work goes, not on a status update (a report heartbeat)', () => {
  const config = (hash: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject =>
    ({ ...obj('c1', 's', { labels: { 'policysync.kuadrant.io/spoke-config': 'true' }, annotations: { 'policysync.kuadrant.io/spec-hash': hash }, ...extra }), status: { n: hash } });
  const before = config('h1');
  assert.equal(keysForWorkChange({ old: before, object: { ...config('h1'), status: { heartbeat: 2 } } }).spokeConfig, false);
  assert.equal(keysForWorkChange({ old: before, object: config('h2') }).spokeConfig, true);
  assert.equal(keysForWorkChange({ old: before, object: config('h1', { deletionTimestamp: '2026-11-23T00:00:00Z' }) }).spokeConfig, true);
  assert.equal(keysForWorkChange({ old: before, object: before }).spokeConfig, true, 'a delete (old and object the same) wakes it');
});

test('a Placement change maps to the policies on the Gateways it places', () => {
  const gateways: Record<string, KubeObject[]> = { 'ns/east': [obj('ns', 'gw-e')] };
  const policies: Record<string, KindedPolicy[]> = { 'ns/gw-e': [{ gr: AUTH, policy: obj('ns', 'e') }, { gr: RLP, policy: obj('ns', 'r') }] };
  assert.deepEqual(keysForPlacementChange({ object: obj('ns', 'east') }, (p) => gateways[p] ?? [], (g) => policies[g] ?? []), [
    'authpolicies.kuadrant.io|ns/e',
    'ratelimitpolicies.kuadrant.io|ns/r',
  ]);
  assert.deepEqual(keysForPlacementChange({ object: obj('ns', 'west') }, (p) => gateways[p] ?? [], (g) => policies[g] ?? []), []);
});

test('a ManagedCluster change maps to the policies with works there only when what OCM vouches for changed', () => {
  const cluster = (available: string, taints: unknown[] = [], resourceVersion = '1'): KubeObject => ({
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name: 'c2', resourceVersion },
    spec: { taints },
    status: { conditions: [{ type: 'ManagedClusterConditionAvailable', status: available, reason: 'R', message: '', lastTransitionTime: '2026-11-25T05:00:00Z' }] },
  });
  const ref = JSON.stringify({ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', namespace: 'ns', name: 'p' });
  const works = (name: string): KubeObject[] => (name === 'c2' ? [obj('c2', 'w', { annotations: { 'policysync.kuadrant.io/source-ref': ref } })] : []);
  const taint = { key: 'cluster.open-cluster-management.io/unreachable', effect: 'NoSelect' };
  assert.deepEqual(keysForManagedClusterChange({ old: cluster('True'), object: cluster('Unknown', [taint]) }, works), ['authpolicies.kuadrant.io|ns/p']);
  assert.deepEqual(keysForManagedClusterChange({ old: cluster('True'), object: cluster('True', [], '2') }, works), [], 'a lease renewal: nothing');
  assert.deepEqual(keysForManagedClusterChange({ object: cluster('True') }, works), ['authpolicies.kuadrant.io|ns/p'], 'added (or deleted): its works\' policies');
});
