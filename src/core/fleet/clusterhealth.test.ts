import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AVAILABLE_CONDITION, RECOVERY_GRACE_MS, UNAVAILABLE_TAINT, UNREACHABLE_TAINT, clusterHealth } from './clusterhealth.ts';
import type { KubeObject } from '../k8s/objects.ts';

function managedCluster(opts: { available?: 'True' | 'False' | 'Unknown'; taint?: string; deleting?: boolean } = {}): KubeObject {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name: 'c2', ...(opts.deleting ? { deletionTimestamp: '2026-11-25T05:10:00Z' } : {}) },
    spec: { hubAcceptsClient: true, ...(opts.taint ? { taints: [{ key: opts.taint, effect: 'NoSelect', timeAdded: '2026-11-25T05:01:00Z' }] } : {}) },
    status: opts.available
      ? { conditions: [{ type: AVAILABLE_CONDITION, status: opts.available, reason: opts.available === 'True' ? 'ManagedClusterAvailable' : 'ManagedClusterLeaseUpdateStopped', message: 'Registration agent stopped updating its lease.', lastTransitionTime: '2026-11-25T05:00:30Z' }] }
      : {},
  };
}

test('a ManagedCluster available and untainted is healthy; none at all is absent; one being deleted is deleting', () => {
  assert.deepEqual(clusterHealth(managedCluster({ available: 'True' })), { state: 'healthy' });
  assert.deepEqual(clusterHealth(undefined), { state: 'absent' });
  assert.deepEqual(clusterHealth(managedCluster({ available: 'Unknown', deleting: true })), { state: 'deleting' });
});

test('OCM\'s unreachable taint, or Available not True, makes a cluster unavailable, with OCM\'s reason and since when', () => {
  assert.deepEqual(clusterHealth(managedCluster({ available: 'Unknown', taint: UNREACHABLE_TAINT })), {
    state: 'unavailable',
    reason: 'ManagedClusterLeaseUpdateStopped',
    message: 'OCM marks cluster c2 unreachable (ManagedClusterConditionAvailable=Unknown): Registration agent stopped updating its lease.',
    since: '2026-11-25T05:00:30Z',
  });
  // Tainted while the condition still says True (the taint controller ran first): the taint's time.
  const tainted = clusterHealth(managedCluster({ available: 'True', taint: UNAVAILABLE_TAINT }));
  assert.equal(tainted.state, 'unavailable');
  assert.equal(tainted.state === 'unavailable' && tainted.since, '2026-11-25T05:01:00Z');
  // Not tainted yet, but the lease already expired.
  assert.equal(clusterHealth(managedCluster({ available: 'False' })).state, 'unavailable');
  // Never joined: no condition at all — OCM cannot vouch for it either.
  const joined = clusterHealth(managedCluster());
  assert.deepEqual(joined, { state: 'unavailable', reason: 'NotAvailable', message: 'cluster c2 is not available (ManagedClusterConditionAvailable=absent)' });
});

test('a taint of another key does not make a cluster unavailable', () => {
  const mc = managedCluster({ available: 'True' });
  (mc.spec as Record<string, unknown>).taints = [{ key: 'example.com/gpu', effect: 'NoSelect' }];
  assert.deepEqual(clusterHealth(mc), { state: 'healthy' });
});

test('a cluster just available again stays in doubt for the recovery grace (its Placements take it back after OCM lifts the taint)', () => {
  const mc = managedCluster({ available: 'True' });
  const back = Date.parse('2026-11-25T05:00:30Z');
  const early = clusterHealth(mc, back + 1_000);
  assert.deepEqual(early, {
    state: 'unavailable',
    reason: 'ClusterRecovering',
    message: 'cluster c2 became available again: its Placements may not have taken it back yet',
    since: '2026-11-25T05:00:30Z',
    recheckAt: back + RECOVERY_GRACE_MS,
  });
  assert.deepEqual(clusterHealth(mc, back + RECOVERY_GRACE_MS), { state: 'healthy' });
  assert.deepEqual(clusterHealth(mc), { state: 'healthy' }, 'without a clock: what OCM says now');
});
