import assert from 'node:assert/strict';
import { test } from 'node:test';
import { laneConflicts, refusedClusters, type GatewayLane } from './lanes.ts';

const lane = (namespace: string, created: string, clusters: string[], downstreamNamespace = 'gateways', name = 'gw'): GatewayLane => ({
  namespace,
  name,
  creationTimestamp: created,
  downstreamNamespace,
  clusters,
});

test('two hub Gateways that are one downstream Gateway on a cluster: the older keeps it, the newer is refused there, both are told', () => {
  const a = lane('team-a', '2026-11-01T00:00:00Z', ['spoke-1', 'spoke-2']);
  const b = lane('team-b', '2026-11-02T00:00:00Z', ['spoke-1']);
  const all = [a, b];
  const forB = laneConflicts(b, all);
  assert.deepEqual(forB.map((c) => [c.cluster, c.keeper, c.refused, c.downstream]), [['spoke-1', 'team-a/gw', 'team-b/gw', 'gateways/gw']]);
  assert.match(forB[0]!.message, /team-a\/gw \(the older\) keeps it, the policies of team-b\/gw are not placed there/);
  assert.deepEqual([...refusedClusters(b, forB)], ['spoke-1']);
  // The keeper hears of it too, and keeps every cluster.
  const forA = laneConflicts(a, all);
  assert.deepEqual(forA.map((c) => c.refused), ['team-b/gw']);
  assert.deepEqual([...refusedClusters(a, forA)], []);
});

test('no conflict where the downstream namespaces differ ({namespace} in the template), the clusters differ, or the names differ', () => {
  const a = lane('team-a', '2026-11-01T00:00:00Z', ['spoke-1'], 'team-a');
  const b = lane('team-b', '2026-11-02T00:00:00Z', ['spoke-1'], 'team-b');
  assert.deepEqual(laneConflicts(b, [a, b]), []);
  assert.deepEqual(laneConflicts(lane('team-b', '2026-11-02T00:00:00Z', ['spoke-2']), [lane('team-a', '2026-11-01T00:00:00Z', ['spoke-1'])]), []);
  assert.deepEqual(laneConflicts(lane('team-b', '2026-11-02T00:00:00Z', ['spoke-1'], 'gateways', 'other'), [lane('team-a', '2026-11-01T00:00:00Z', ['spoke-1'])]), []);
});

test('equal ages: the namespace then name decide, the same way from either side', () => {
  const a = lane('a', '2026-11-01T00:00:00Z', ['c']);
  const b = lane('b', '2026-11-01T00:00:00Z', ['c']);
  assert.deepEqual(laneConflicts(a, [a, b]).map((c) => c.keeper), ['a/gw']);
  assert.deepEqual(laneConflicts(b, [a, b]).map((c) => c.keeper), ['a/gw']);
  // Three at once: the oldest keeps it; a refused one hears only of its own refusal.
  const c = lane('c', '2026-10-01T00:00:00Z', ['c']);
  assert.deepEqual(laneConflicts(b, [a, b, c]).map((x) => [x.keeper, x.refused]), [['c/gw', 'b/gw']]);
  assert.deepEqual(laneConflicts(c, [a, b, c]).map((x) => x.refused), ['a/gw', 'b/gw']);
});
