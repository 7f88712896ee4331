import { test } from 'node:test';
import assert from 'node:assert/strict';
import { policyStatusAnnotation, readPolicyStatus } from './annotation.ts';
import { aggregatePolicyStatus } from './policystatus.ts';
import type { ClusterInput, PolicyStatus } from './policystatus.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { LANE_CONFLICT_REASON } from './statusinput.ts';
import { newProblems, statusEvents, statusTransitions } from './transitions.ts';
import { NOW, manyClusters, work } from '../../../testkit/statusfixtures.ts';

function statusOf(clusters: Record<string, ClusterInput>): PolicyStatus {
  return aggregatePolicyStatus({ now: NOW, clusters });
}

test('statusTransitions reports clusters that became enforced, overridden or failed, sorted by cluster', () => {
  const before = statusOf({ c1: { state: 'pending' }, c2: work(), c3: work(), c4: work() });
  const after = statusOf({
    c4: work({ enforced: { status: 'False', reason: 'Overridden', message: 'AuthPolicy is overridden by [ns/l]' } }),
    c3: work({ applyError: 'boom' }),
    c2: work(),
    c1: work(),
  });
  assert.deepEqual(statusTransitions(before, after), [
    { cluster: 'c1', type: 'Enforced', reason: 'Enforced', message: 'AuthPolicy has been successfully enforced' },
    { cluster: 'c3', type: 'Failed', reason: 'ApplyFailed', message: 'boom' },
    { cluster: 'c4', type: 'Overridden', reason: 'Overridden', message: 'AuthPolicy is overridden by [ns/l]' },
  ]);
});

test('statusTransitions ignores clusters that stay in their category, even with a new reason, and clusters becoming pending', () => {
  const before = statusOf({
    c1: work(),
    c2: work({ applyError: 'a' }),
    c3: work(),
  });
  const after = statusOf({
    c1: work({ enforced: { status: 'True', reason: 'PartiallyEnforced', message: 'partially' } }),
    c2: work({ feedbackError: 'f' }),
    c3: { state: 'pending' },
  });
  assert.deepEqual(statusTransitions(before, after), []);
  assert.deepEqual(statusTransitions(after, after), []);
});

test('statusTransitions: without a previous status every non-pending cluster is new', () => {
  const after = statusOf({ b: { state: 'conflicted', message: 'm' }, a: work(), c: { state: 'pending' } });
  assert.deepEqual(
    statusTransitions(undefined, after).map((t) => [t.cluster, t.type]),
    [
      ['a', 'Enforced'],
      ['b', 'Failed'],
    ],
  );
});

test('statusTransitions: a cluster new since before counts; a truncated before gives nothing', () => {
  const before = statusOf({ a: work() });
  assert.deepEqual(
    statusTransitions(before, statusOf({ a: work(), constructor: work() })).map((t) => t.cluster),
    ['constructor'],
  );
  const truncated = readPolicyStatus(policyStatusAnnotation(statusOf(manyClusters(300))));
  assert.ok(truncated);
  assert.deepEqual(statusTransitions(truncated, statusOf({ a: work({ applyError: 'x' }) })), []);
});

test('statusTransitions after a truncated before that lists some clusters: only those listed are compared', () => {
  const before = readPolicyStatus(policyStatusAnnotation(statusOf({ ...manyClusters(300), gone: { state: 'overridden', message: 'by ns/local' } })));
  assert.deepEqual(Object.keys(before?.clusters ?? {}), ['gone']);
  const after = statusOf({ 'cluster-0000': work({ applyError: 'x' }), gone: work(), fresh: work() });
  assert.deepEqual(
    statusTransitions(before, after).map((t) => [t.cluster, t.type]),
    [['gone', 'Enforced']],
    'cluster-0000 and fresh are not listed: unknown, no Event',
  );
});

test('problems are kept sorted and deduplicated in the status, survive a round trip, and only new ones are reported', () => {
  const before = aggregatePolicyStatus({
    now: NOW,
    clusters: {},
    problems: [{ reason: 'TargetNotSynced', message: 'spec.targetRefs[1]: CrossNamespace' }],
  });
  const after = aggregatePolicyStatus({
    now: NOW,
    clusters: {},
    problems: [
      { reason: 'TargetNotSynced', message: 'spec.targetRefs[1]: CrossNamespace' },
      { reason: 'NoClusters', message: 'placed on no cluster' },
      { reason: 'NoClusters', message: 'placed on no cluster' },
    ],
  });
  assert.deepEqual(after.problems, [
    { reason: 'NoClusters', message: 'placed on no cluster' },
    { reason: 'TargetNotSynced', message: 'spec.targetRefs[1]: CrossNamespace' },
  ]);
  assert.deepEqual(readPolicyStatus(policyStatusAnnotation(after)), after);
  assert.deepEqual(newProblems(readPolicyStatus(policyStatusAnnotation(before)), after), [{ reason: 'NoClusters', message: 'placed on no cluster' }]);
  assert.deepEqual(newProblems(undefined, before), before.problems);
  assert.equal(aggregatePolicyStatus({ now: NOW, clusters: {} }).problems, undefined, 'no problems, no key');
});

const object = (kind: string, name: string): KubeObject => ({ apiVersion: 'v1', kind, metadata: { namespace: 'ns', name } });

test('statusEvents: one per transition on the policy (Normal when enforced), then one per new problem, a lane conflict on both Gateways too', () => {
  const policy = object('AuthPolicy', 'p');
  const [gw1, gw2] = [object('Gateway', 'a'), object('Gateway', 'b')];
  const lane = `lanes: ${'x'.repeat(300)}`;
  const before = aggregatePolicyStatus({ now: NOW, clusters: { c1: { state: 'pending' }, c2: work() }, problems: [{ reason: 'NoClusters', message: 'old' }] });
  const after = aggregatePolicyStatus({
    now: NOW,
    clusters: { c1: work(), c2: work({ applyError: 'boom' }), c3: { state: 'unknown', reason: 'ManagedClusterLeaseUpdateStopped', message: 'gone' } },
    problems: [
      { reason: 'NoClusters', message: 'old' },
      { reason: LANE_CONFLICT_REASON, message: lane },
      { reason: 'TargetNotSynced', message: 'spec.targetRefs[0]: CrossNamespace' },
    ],
  });
  const events = statusEvents(policy, before, after, [{ message: lane, gateways: [gw1, gw2] }]);
  const cut = after.problems?.find((p) => p.reason === LANE_CONFLICT_REASON)?.message;
  assert.ok(cut && cut !== lane, 'the lane message is cut in the status, and still matched');
  assert.deepEqual(
    events.map((e) => [e.object.metadata.name, e.type, e.reason, e.message]),
    [
      ['p', 'Normal', 'Enforced', 'cluster c1: Enforced: AuthPolicy has been successfully enforced'],
      ['p', 'Warning', 'Failed', 'cluster c2: ApplyFailed: boom'],
      ['p', 'Warning', 'ClusterUnknown', 'cluster c3: ManagedClusterLeaseUpdateStopped: gone; its ManifestWork is kept as it was'],
      ['p', 'Warning', LANE_CONFLICT_REASON, cut],
      ['a', 'Warning', LANE_CONFLICT_REASON, cut],
      ['b', 'Warning', LANE_CONFLICT_REASON, cut],
      ['p', 'Warning', 'TargetNotSynced', 'spec.targetRefs[0]: CrossNamespace'],
    ],
  );
  assert.deepEqual(statusEvents(policy, after, after), [], 'nothing new, no Event');
});
