import assert from 'node:assert/strict';
import { test } from 'node:test';
import { laneConflicts, mayShareLane, refusedClusters, type GatewayLane } from './lanes.ts';

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

test('the lane belongs to whoever holds it: an older Gateway arriving where a newer one holds the lane is refused, and the holder keeps it', () => {
  const older = lane('team-a', '2026-11-01T00:00:00Z', ['spoke-1']);
  const newer = lane('team-b', '2026-11-02T00:00:00Z', ['spoke-1']);
  const all = [older, newer];
  const heldByNewer = (cluster: string, downstream: string): string[] => (cluster === 'spoke-1' && downstream === 'gateways/gw' ? ['team-b/gw'] : []);
  const forOlder = laneConflicts(older, all, heldByNewer);
  assert.deepEqual(forOlder.map((c) => [c.cluster, c.keeper, c.refused]), [['spoke-1', 'team-b/gw', 'team-a/gw']]);
  assert.match(forOlder[0]!.message, /team-b\/gw \(its policies' copies are there already\) keeps it, the policies of team-a\/gw are not placed there/);
  assert.deepEqual([...refusedClusters(older, forOlder)], ['spoke-1']);
  // The holder's side says the same, and keeps the cluster: its works are never deleted for the newcomer.
  const forNewer = laneConflicts(newer, all, heldByNewer);
  assert.deepEqual(forNewer.map((c) => [c.keeper, c.refused]), [['team-b/gw', 'team-a/gw']]);
  assert.deepEqual([...refusedClusters(newer, forNewer)], []);
  // Elsewhere (no works hold it), the older takes it as before.
  const both2 = [lane('team-a', '2026-11-01T00:00:00Z', ['spoke-2']), lane('team-b', '2026-11-02T00:00:00Z', ['spoke-2'])];
  assert.deepEqual(laneConflicts(both2[1]!, both2, heldByNewer).map((c) => [c.keeper, c.refused]), [['team-a/gw', 'team-b/gw']]);
});

test('a holder that is the older says so as before; several holders: the oldest of them keeps it', () => {
  const a = lane('team-a', '2026-11-01T00:00:00Z', ['c']);
  const b = lane('team-b', '2026-11-02T00:00:00Z', ['c']);
  const c = lane('team-c', '2026-10-01T00:00:00Z', ['c']);
  const heldByA = (): string[] => ['team-a/gw'];
  assert.match(laneConflicts(b, [a, b], heldByA)[0]!.message, /team-a\/gw \(the older\) keeps it/);
  // team-c is the oldest but holds nothing; team-a and team-b both hold (a state left by an earlier version): team-a keeps.
  const heldByBoth = (): string[] => ['team-b/gw', 'team-a/gw'];
  assert.deepEqual(laneConflicts(c, [a, b, c], heldByBoth).map((x) => [x.keeper, x.refused]), [['team-a/gw', 'team-c/gw']]);
  assert.deepEqual(laneConflicts(a, [a, b, c], heldByBoth).map((x) => x.refused), ['team-b/gw', 'team-c/gw']);
  assert.deepEqual(laneConflicts(b, [a, b, c], heldByBoth).map((x) => [x.keeper, x.refused]), [['team-a/gw', 'team-b/gw']]);
});

test("works of a Gateway not placed there (its placement moved, its works not gone yet) still hold the lane; its own works never refuse a Gateway", () => {
  const a = lane('team-a', '2026-11-01T00:00:00Z', ['spoke-1']);
  const b = lane('team-b', '2026-11-02T00:00:00Z', ['spoke-2']);
  const heldByB = (cluster: string): string[] => (cluster === 'spoke-1' ? ['team-b/gw'] : []);
  assert.deepEqual(laneConflicts(a, [a, b], heldByB).map((x) => [x.cluster, x.keeper, x.refused]), [['spoke-1', 'team-b/gw', 'team-a/gw']]);
  // A holder no longer cached (deleted, another class) counts as the newest, but still holds.
  assert.deepEqual(laneConflicts(a, [a], () => ['team-z/gw']).map((x) => [x.keeper, x.refused]), [['team-z/gw', 'team-a/gw']]);
  assert.deepEqual(laneConflicts(a, [a, b], () => ['team-a/gw']), []);
});

test('mayShareLane: only a Gateway of the same name and downstream namespace could', () => {
  const a = lane('team-a', '2026-11-01T00:00:00Z', ['spoke-1']);
  assert.equal(mayShareLane(a, [a]), false);
  assert.equal(mayShareLane(a, [a, lane('team-b', '2026-11-01T00:00:00Z', [], 'gateways')]), true);
  assert.equal(mayShareLane(a, [lane('team-b', '2026-11-01T00:00:00Z', ['spoke-1'], 'team-b')]), false);
  assert.equal(mayShareLane(a, [lane('team-b', '2026-11-01T00:00:00Z', ['spoke-1'], 'gateways', 'other')]), false);
});
