import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../core/k8s/objects.ts';
import type { ClusterStatus, PolicyStatus } from '../core/status/policystatus.ts';
import { holdsCurrentRevision, policyProgress, unmetLines } from './waitcondition.ts';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const SPEC = { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }, rules: { a: 1 } };
const POLICY: KubeObject = { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { name: 'p', namespace: 'ns', generation: 2 }, spec: SPEC };

const value = (name: string, v: string | number) => ({ name, fieldValue: typeof v === 'number' ? { type: 'Integer', integer: v } : { type: 'String', string: v } });
const condition = (type: string, status = 'True', observedGeneration = 1) => ({ type, status, reason: type, message: '', observedGeneration, lastTransitionTime: '2026-01-01T00:00:00Z' });

interface WorkOptions {
  spec?: Record<string, unknown>;
  applied?: boolean;
  /** The work's generation the Applied condition observed (the work is at generation 1). */
  appliedGeneration?: number;
  enforced?: [string, string];
  copyGeneration?: number;
  enforcedGeneration?: number;
  status?: false;
  /** The revision the copy carries (its annotation), and the one the feedback read back. */
  revision?: number | string;
  feedbackRevision?: number | string;
}

function work(cluster: string, o: WorkOptions = {}): KubeObject {
  // The copy's targets are rewritten: another name, no namespace.
  const annotations = o.revision === undefined ? {} : { annotations: { 'policysync.kuadrant.io/revision': String(o.revision) } };
  const copy = { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { name: 'p', namespace: 'ns', ...annotations }, spec: { ...(o.spec ?? SPEC), targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'downstream' } } };
  const [status, reason] = o.enforced ?? ['True', 'Enforced'];
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name: 'w', namespace: cluster, generation: 1 },
    spec: { workload: { manifests: [copy] } },
    ...(o.status === false
      ? {}
      : {
          status: {
            conditions: [condition('Applied', o.applied === false ? 'False' : 'True', o.appliedGeneration ?? 1), condition('Available')],
            resourceStatus: {
              manifests: [
                {
                  resourceMeta: { ordinal: 0 },
                  statusFeedback: { values: [value('generation', o.copyGeneration ?? 3), value('enforcedStatus', status), value('enforcedReason', reason), value('enforcedMessage', 'm'), value('enforcedGeneration', o.enforcedGeneration ?? 3), ...(o.feedbackRevision === undefined ? [] : [value('revision', String(o.feedbackRevision))])] },
                  conditions: [],
                },
              ],
            },
          },
        }),
  };
}

const entry = (state: ClusterStatus['state'], reason: string): ClusterStatus => ({ state, applied: true, available: true, enforced: 'True', reason, message: `${reason} message`, upToDate: true });

function status(clusters: Record<string, ClusterStatus>, problems?: PolicyStatus['problems']): PolicyStatus {
  return { summary: { clusters: Object.keys(clusters).length, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 0 }, clusters, ...(problems ? { problems } : {}) };
}

const reached = (p: ReturnType<typeof policyProgress>) => p.clusters.map((c) => [c.cluster, c.reached, c.reason]);

test('holdsCurrentRevision: the copy carries the hub spec but for the rewritten targets', () => {
  assert.equal(holdsCurrentRevision(POLICY, work('c1')), true);
  assert.equal(holdsCurrentRevision(POLICY, work('c1', { spec: { ...SPEC, rules: { a: 2 } } })), false);
  assert.equal(holdsCurrentRevision({ ...POLICY, spec: { rules: { a: 1 }, targetRefs: [] } }, work('c1')), true, 'key order and target form do not matter');
  assert.equal(holdsCurrentRevision(POLICY, { ...work('c1'), spec: {} }), false);
});

test('enforced: every cluster Enforced on the current copy, observed by the spoke controller', () => {
  const p = policyProgress('enforced', POLICY, status({ c1: entry('Enforced', 'Enforced'), c2: entry('Enforced', 'Enforced') }), [work('c1'), work('c2')], NOW);
  assert.equal(p.reached, true);
  assert.deepEqual(reached(p), [['c1', true, 'Enforced'], ['c2', true, 'Enforced']]);
  const stale = policyProgress('enforced', POLICY, status({ c1: entry('Enforced', 'Enforced') }), [work('c1', { enforcedGeneration: 2 })], NOW);
  assert.deepEqual(reached(stale), [['c1', false, 'NotObserved']]);
});

test('synced: the current revision applied, whatever the spoke controller says of it; enforced: not then', () => {
  const works = [work('c1', { enforced: ['False', 'MissingResource'] })];
  const hub = status({ c1: entry('Failed', 'MissingResource') });
  assert.deepEqual(reached(policyProgress('synced', POLICY, hub, works, NOW)), [['c1', true, 'MissingResource']]);
  assert.deepEqual(reached(policyProgress('enforced', POLICY, hub, works, NOW)), [['c1', false, 'MissingResource']]);
});

test('not synced: an earlier revision in the work, a work not applied for its generation, no work, no work status', () => {
  const hub = status({ c1: entry('Enforced', 'Enforced') });
  assert.deepEqual(reached(policyProgress('synced', POLICY, hub, [work('c1', { spec: { rules: { a: 0 } } })], NOW)), [['c1', false, 'OutOfDate']]);
  assert.deepEqual(reached(policyProgress('synced', POLICY, hub, [{ ...work('c1'), metadata: { name: 'w', namespace: 'c1', generation: 2 } }], NOW)), [['c1', false, 'NotApplied']]);
  // Applied=False: the work agent failed to apply it, and says so.
  assert.deepEqual(reached(policyProgress('synced', POLICY, hub, [work('c1', { applied: false })], NOW)), [['c1', false, 'ApplyFailed']]);
  assert.deepEqual(reached(policyProgress('synced', POLICY, hub, [], NOW)), [['c1', false, 'Enforced']]);
  assert.deepEqual(reached(policyProgress('synced', POLICY, hub, [work('c1', { status: false })], NOW)), [['c1', false, 'NotApplied']]);
});

test('Overridden counts as there for both; Unknown, Conflicted and TooLarge do not, whatever the work says', () => {
  const works = [work('c1'), work('c2'), work('c3'), work('c4')];
  const hub = status({ c1: entry('Overridden', 'Overridden'), c2: entry('Unknown', 'ClusterUnreachable'), c3: entry('Failed', 'Conflicted'), c4: entry('Failed', 'TooLarge') });
  for (const waitFor of ['synced', 'enforced'] as const) {
    assert.deepEqual(reached(policyProgress(waitFor, POLICY, hub, works, NOW)), [
      ['c1', true, 'Overridden'],
      ['c2', false, 'ClusterUnreachable'],
      ['c3', false, 'Conflicted'],
      ['c4', false, 'TooLarge'],
    ]);
  }
  // Withdrawn by local policies: no work, still there.
  assert.equal(policyProgress('enforced', POLICY, status({ c1: entry('Overridden', 'Overridden') }), [], NOW).reached, true);
});

test('a cluster with a work the annotation does not list yet counts; a work being deleted does not', () => {
  const hub = status({ c1: entry('Enforced', 'Enforced') });
  const p = policyProgress('enforced', POLICY, hub, [work('c1'), work('c2', { enforced: ['Unknown', 'Pending'] })], NOW);
  assert.deepEqual(reached(p), [['c1', true, 'Enforced'], ['c2', false, 'Pending']]);
  const deleting = { ...work('c2'), metadata: { name: 'w', namespace: 'c2', generation: 1, deletionTimestamp: '2026-01-01T00:00:00Z' } };
  assert.equal(policyProgress('enforced', POLICY, hub, [work('c1'), deleting], NOW).reached, true);
});

test('never there: no status yet, no cluster (with the hub\'s problems), policy gone', () => {
  assert.deepEqual(policyProgress('synced', POLICY, undefined, [], NOW).problem?.reason, 'NotReported');
  const nowhere = policyProgress('synced', POLICY, status({}, [{ reason: 'NoClusters', message: 'placed on no cluster' }]), [], NOW);
  assert.deepEqual([nowhere.reached, nowhere.problem], [false, { reason: 'NoClusters', message: 'placed on no cluster' }]);
  assert.equal(policyProgress('synced', undefined, undefined, [], NOW).problem?.reason, 'NotFound');
  assert.deepEqual(unmetLines('authpolicy.kuadrant.io/ns/p', 'synced', nowhere), ['authpolicy.kuadrant.io/ns/p: not synced: NoClusters: placed on no cluster']);
  const p = policyProgress('enforced', POLICY, status({ c1: entry('Unknown', 'ClusterUnreachable') }), [], NOW);
  assert.deepEqual(unmetLines('x', 'enforced', p), ['x: not enforced on c1: Unknown ClusterUnreachable: ClusterUnreachable message']);
});

test('a copy carrying its revision holds the current one only at the policy\'s generation: an edit of the targets alone is a new revision', () => {
  assert.equal(holdsCurrentRevision(POLICY, work('c1', { revision: 2 })), true);
  // Same spec but for the targets, of revision 1: not the current copy (it was not, before revisions were recorded).
  assert.equal(holdsCurrentRevision(POLICY, work('c1', { revision: 1 })), false);
  assert.equal(holdsCurrentRevision(POLICY, work('c1')), true, 'no revision recorded: the spec decides');
  const progress = policyProgress('synced', POLICY, status({ c1: entry('Enforced', 'Enforced') }), [work('c1', { revision: 1 })], NOW);
  assert.deepEqual(reached(progress), [['c1', false, 'OutOfDate']]);
});

test('enforced: a verdict read from the copy of an earlier revision is not about the current one', () => {
  const hub = status({ c1: entry('Enforced', 'Enforced') });
  assert.deepEqual(reached(policyProgress('enforced', POLICY, hub, [work('c1', { revision: 2, feedbackRevision: 1 })], NOW)), [['c1', false, 'NotObserved']]);
  assert.deepEqual(reached(policyProgress('enforced', POLICY, hub, [work('c1', { revision: 2, feedbackRevision: 2 })], NOW)), [['c1', true, 'Enforced']]);
});

test('enforced: after a variant change (same revision, another tag) the verdict on the copy before is not about the new one', () => {
  const hub = status({ c1: entry('Enforced', 'Enforced') });
  const [before, after] = ['2/0123456789', '2/abcdef0123'];
  assert.deepEqual(reached(policyProgress('enforced', POLICY, hub, [work('c1', { revision: after, feedbackRevision: before })], NOW)), [['c1', false, 'NotObserved']]);
  assert.deepEqual(reached(policyProgress('enforced', POLICY, hub, [work('c1', { revision: after, feedbackRevision: 2 })], NOW)), [['c1', false, 'NotObserved']], 'nor the base copy\'s');
  assert.deepEqual(reached(policyProgress('enforced', POLICY, hub, [work('c1', { revision: after, feedbackRevision: after })], NOW)), [['c1', true, 'Enforced']]);
});
