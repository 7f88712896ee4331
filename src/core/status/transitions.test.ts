import { test } from 'node:test';
import assert from 'node:assert/strict';
import { policyStatusAnnotation, readPolicyStatus } from './annotation.ts';
import { aggregatePolicyStatus } from './policystatus.ts';
import type { ClusterInput, PolicyStatus } from './policystatus.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { LANE_CONFLICT_REASON } from './statusinput.ts';
import { newProblems, rolloutEvent, spokeTruthNews, statusEvents, statusTransitions } from './transitions.ts';
import type { RolloutStatus } from './rolloutstatus.ts';
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
  const before = readPolicyStatus(policyStatusAnnotation(statusOf({ ...manyClusters(300), gone: { state: 'overridden', message: 'by ns/local', by: ['ns/local'] } })));
  assert.deepEqual(Object.keys(before?.clusters ?? {}), ['gone']);
  const after = statusOf({ 'cluster-0000': work({ applyError: 'x' }), gone: work(), fresh: work() });
  assert.deepEqual(
    statusTransitions(before, after).map((t) => [t.cluster, t.type]),
    [['gone', 'Enforced']],
    'cluster-0000 and fresh are not listed: unknown, no Event',
  );
});

test('spokeTruthNews: a cluster newly Drifted is news (the write must not wait); the same drift again, or its end, is not', () => {
  const drift = { fields: ['spec.rules'], managers: [{ manager: 'kubectl-edit', operation: 'Update', time: '2026-12-02T18:37:33Z' }], since: '2026-12-02T18:37:33Z' };
  const enforced = statusOf({ c1: work(), c2: work() });
  const drifted = statusOf({ c1: { ...work(), drift: { drift, correcting: true } } as ClusterInput, c2: work() });
  assert.equal(spokeTruthNews(enforced, drifted), true);
  assert.equal(spokeTruthNews(undefined, drifted), true, 'no status before: news');
  assert.equal(spokeTruthNews(drifted, drifted), false, 'said already');
  assert.equal(spokeTruthNews(drifted, enforced), false, 'put back: an ordinary transition');
  assert.equal(spokeTruthNews(enforced, statusOf({ c1: work({ applyError: 'boom' }), c2: work() })), false, 'a failure is not spoke truth');
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

// Progressive rollouts (core/rollout): one Event each time the rollout moves.

const progressing = (revision: number, wave: number, waves = 3): RolloutStatus => ({
  strategy: 'Progressive',
  revision,
  state: 'Progressing',
  wave,
  waves,
  message: `wave ${wave} of ${waves}: c${wave}`,
});
const halted: RolloutStatus = {
  strategy: 'Progressive',
  revision: 2,
  state: 'Halted',
  wave: 1,
  waves: 3,
  halted: { cluster: 'c1', reason: 'TargetNotFound', message: 'AuthPolicy target shop was not found', rolledBack: false },
  message: 'halted at revision 2: c1: TargetNotFound: AuthPolicy target shop was not found; the clusters reached keep it, the others their previous revision',
};
const complete: RolloutStatus = { strategy: 'Progressive', revision: 2, state: 'Complete', wave: 3, waves: 3, message: 'revision 2 on every cluster' };

function withRollout(rollout: RolloutStatus | undefined): PolicyStatus {
  const status = statusOf({ c1: work(), c2: work() });
  return rollout ? { ...status, rollout } : status;
}

test('rolloutEvent: a new wave (or a new revision) is RolloutProgressing, naming the revision and the wave', () => {
  assert.deepEqual(rolloutEvent(undefined, withRollout(progressing(2, 1))), { type: 'Normal', reason: 'RolloutProgressing', message: 'revision 2: wave 1 of 3: c1' });
  assert.deepEqual(rolloutEvent(withRollout(progressing(2, 1)), withRollout(progressing(2, 2))), { type: 'Normal', reason: 'RolloutProgressing', message: 'revision 2: wave 2 of 3: c2' });
  assert.deepEqual(rolloutEvent(withRollout(progressing(2, 1)), withRollout(progressing(3, 1))), { type: 'Normal', reason: 'RolloutProgressing', message: 'revision 3: wave 1 of 3: c1' });
  assert.deepEqual(rolloutEvent(withRollout(complete), withRollout(progressing(3, 1)))?.reason, 'RolloutProgressing');
  assert.deepEqual(rolloutEvent(withRollout(undefined), withRollout(progressing(2, 1)))?.reason, 'RolloutProgressing', 'a status from before the rollout block');
});

test('rolloutEvent: nothing while the rollout stands where it stood, whatever its message says', () => {
  assert.equal(rolloutEvent(withRollout(progressing(2, 2)), withRollout({ ...progressing(2, 2), message: 'wave 2 of 3: c2, c4' })), undefined);
  assert.equal(rolloutEvent(withRollout(halted), withRollout({ ...halted, halted: { ...halted.halted!, rolledBack: true } })), undefined);
  assert.equal(rolloutEvent(withRollout(complete), withRollout(complete)), undefined);
});

test('rolloutEvent: a halt is a Warning RolloutHalted in the rollout\'s words; a completion a Normal RolloutComplete', () => {
  assert.deepEqual(rolloutEvent(withRollout(progressing(2, 1)), withRollout(halted)), { type: 'Warning', reason: 'RolloutHalted', message: halted.message });
  assert.deepEqual(rolloutEvent(undefined, withRollout(halted)), { type: 'Warning', reason: 'RolloutHalted', message: halted.message }, 'seen halted first: told');
  assert.deepEqual(rolloutEvent(withRollout(progressing(2, 3)), withRollout(complete)), { type: 'Normal', reason: 'RolloutComplete', message: 'revision 2 on every cluster' });
  assert.deepEqual(rolloutEvent(withRollout(halted), withRollout(complete))?.reason, 'RolloutComplete');
  assert.deepEqual(rolloutEvent(withRollout({ ...complete, revision: 1 }), withRollout(complete))?.reason, 'RolloutComplete', 'a revision placed everywhere at once still completes');
});

test('rolloutEvent: nothing for a policy first seen complete, nor for All or no rollout at all', () => {
  assert.equal(rolloutEvent(undefined, withRollout(complete)), undefined);
  assert.equal(rolloutEvent(withRollout(undefined), withRollout(complete)), undefined);
  const all: RolloutStatus = { strategy: 'All', revision: 2, state: 'Progressing', message: 'revision 2 being placed on c1' };
  assert.equal(rolloutEvent(undefined, withRollout(all)), undefined);
  assert.equal(rolloutEvent(withRollout(progressing(2, 1)), withRollout(all)), undefined);
  assert.equal(rolloutEvent(withRollout(progressing(2, 1)), withRollout(undefined)), undefined);
});

test('rolloutEvent: the rollout read back from the annotation (a restart) is where it stood: no Event', () => {
  for (const rollout of [progressing(2, 2), halted, complete]) {
    const status = withRollout(rollout);
    const readBack = readPolicyStatus(policyStatusAnnotation(status));
    assert.deepEqual(readBack?.rollout, rollout);
    assert.equal(rolloutEvent(readBack, status), undefined);
  }
});

test('statusEvents: the rollout\'s Event after the clusters\' transitions, before the new problems', () => {
  const policy = object('AuthPolicy', 'p');
  const before = { ...statusOf({ c1: { state: 'pending' } }), rollout: progressing(2, 1) };
  const after = {
    ...aggregatePolicyStatus({ now: NOW, clusters: { c1: work({ accepted: { status: 'False', reason: 'TargetNotFound', message: 'AuthPolicy target shop was not found' } }) }, problems: [{ reason: 'NoClusters', message: 'x' }] }),
    rollout: halted,
  };
  assert.deepEqual(
    statusEvents(policy, before, after).map((e) => [e.type, e.reason]),
    [
      ['Warning', 'Failed'],
      ['Warning', 'RolloutHalted'],
      ['Warning', 'NoClusters'],
    ],
  );
  assert.deepEqual(statusEvents(policy, after, after), []);
});
