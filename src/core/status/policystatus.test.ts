import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AncestorCondition, ClusterFeedback } from '../works/feedback.ts';
import { MAX_OVERRIDDEN_BY, STATUS_GRACE_MS, aggregatePolicyStatus, clusterVerdict, judgePolicy, statusRecheckDelay } from './policystatus.ts';
import type { ClusterInput, ClusterStatus } from './policystatus.ts';
import { policyStatusAnnotation, readPolicyStatus } from './annotation.ts';
import { statusTransitions } from './transitions.ts';
import { NOW, JUST_APPLIED, feedback, work, one } from '../../../testkit/statusfixtures.ts';
import { deepFreeze } from '../k8s/freeze.ts';

test('aggregatePolicyStatus: the docs/design/status.md#status-on-the-hub example, one enforced and one overridden cluster', () => {
  const status = aggregatePolicyStatus({
    now: NOW,
    clusters: {
      c2: work({ enforced: { status: 'False', reason: 'Overridden', message: 'AuthPolicy is overridden by [ns/local-auth]' } }),
      c1: work(),
    },
  });
  assert.deepEqual(status, {
    summary: { clusters: 2, applied: 2, enforced: 1, overridden: 1, pending: 0, failed: 0 },
    clusters: {
      c1: {
        state: 'Enforced',
        applied: true,
        available: true,
        enforced: 'True',
        reason: 'Enforced',
        message: 'AuthPolicy has been successfully enforced',
        upToDate: true,
      },
      c2: {
        state: 'Overridden',
        applied: true,
        available: true,
        enforced: 'False',
        reason: 'Overridden',
        message: 'AuthPolicy is overridden by [ns/local-auth]',
        upToDate: true,
      },
    },
  });
});

test('aggregatePolicyStatus: no clusters gives a zero summary', () => {
  assert.deepEqual(aggregatePolicyStatus({ now: NOW, clusters: {} }), {
    summary: { clusters: 0, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 0 },
    clusters: {},
  });
});

// [name, input, expected state, reason, enforced, message?]
const CASES: [string, ClusterInput, ClusterStatus['state'], string, ClusterStatus['enforced'], string?][] = [
  ['Enforced=True', work(), 'Enforced', 'Enforced', 'True'],
  ['Enforced=True without a reason', work({ enforced: { status: 'True' } }), 'Enforced', 'Enforced', 'True', ''],
  [
    'PartiallyEnforced counts as enforced',
    work({ enforced: { status: 'True', reason: 'PartiallyEnforced', message: 'AuthPolicy is partially overridden: x' } }),
    'Enforced',
    'PartiallyEnforced',
    'True',
  ],
  ['Overridden', work({ enforced: { status: 'False', reason: 'Overridden', message: 'm' } }), 'Overridden', 'Overridden', 'False'],
  ['Overridden whatever the status', work({ enforced: { status: 'True', reason: 'Overridden' } }), 'Overridden', 'Overridden', 'True'],
  ['Enforced=False, another reason', work({ enforced: { status: 'False', reason: 'MissingDependency', message: 'no authorino' } }), 'Failed', 'MissingDependency', 'False', 'no authorino'],
  ['Enforced=False without a reason', work({ enforced: { status: 'False' } }), 'Failed', 'NotEnforced', 'False'],
  ['Enforced=Unknown', work({ enforced: { status: 'Unknown', reason: 'Unknown', message: 'reconciling' } }), 'Pending', 'Unknown', 'Unknown', 'reconciling'],
  ['no Enforced feedback yet', work({ enforced: undefined }), 'Pending', 'Pending', 'Unknown'],
  ['not applied yet', work({ applied: false, enforced: undefined }), 'Pending', 'Pending', 'Unknown'],
  [
    'Accepted=False',
    work({ accepted: { status: 'False', reason: 'TargetNotFound', message: 'gateway not found' }, enforced: undefined }),
    'Failed',
    'TargetNotFound',
    'Unknown',
    'gateway not found',
  ],
  [
    'apply error',
    work({ applied: false, applyError: 'Failed to apply manifest: namespaces "x" not found' }),
    'Failed',
    'ApplyFailed',
    'True',
    'Failed to apply manifest: namespaces "x" not found',
  ],
  ['feedback error', work({ feedbackError: 'bad path' }), 'Failed', 'FeedbackFailed', 'True', 'bad path'],
  ['apply error before feedback error', work({ applyError: 'a', feedbackError: 'f' }), 'Failed', 'ApplyFailed', 'True', 'a'],
  ['work without status', { state: 'pending' }, 'Pending', 'Pending', 'Unknown'],
  ['too large', { state: 'tooLarge', message: 'exceeds 512000 bytes' }, 'Failed', 'TooLarge', 'Unknown', 'exceeds 512000 bytes'],
  ['conflicted', { state: 'conflicted', message: 'already synced from ns/older' }, 'Failed', 'Conflicted', 'False', 'already synced from ns/older'],
  ['awaiting a spoke report', { state: 'awaitingReport', message: 'no report from the spoke agent yet' }, 'Pending', 'AwaitingSpokeReport', 'Unknown', 'no report from the spoke agent yet'],
];

for (const [name, input, state, reason, enforced, message] of CASES) {
  test(`aggregatePolicyStatus: ${name} → ${state}/${reason}`, () => {
    const status = aggregatePolicyStatus({ now: NOW, clusters: { c1: input } });
    const cluster = status.clusters?.c1;
    assert.ok(cluster);
    assert.equal(cluster.state, state);
    assert.equal(cluster.reason, reason);
    assert.equal(cluster.enforced, enforced);
    if (message !== undefined) assert.equal(cluster.message, message);
    // Exactly one category.
    const { enforced: e, overridden, pending, failed } = status.summary;
    assert.equal(e + overridden + pending + failed, 1);
    assert.equal(status.summary[state === 'Enforced' ? 'enforced' : state === 'Overridden' ? 'overridden' : state === 'Pending' ? 'pending' : 'failed'], 1);
  });
}

test('aggregatePolicyStatus: tooLarge keeps applied/available/enforced of the retained work, never upToDate', () => {
  const cluster = one({ state: 'tooLarge', feedback: feedback() });
  assert.deepEqual(
    { applied: cluster.applied, available: cluster.available, enforced: cluster.enforced, upToDate: cluster.upToDate },
    { applied: true, available: true, enforced: 'True', upToDate: false },
  );
  assert.match(one({ state: 'tooLarge' }).message, /size limit/);
});

test('aggregatePolicyStatus: a cluster awaiting its spoke report is Pending, not applied; a work kept there (its copy of another name) says what it last said, never upToDate', () => {
  const held = one({ state: 'awaitingReport', message: 'm' });
  assert.deepEqual({ applied: held.applied, available: held.available, upToDate: held.upToDate }, { applied: false, available: false, upToDate: false });
  const kept = one({ state: 'awaitingReport', message: 'm', feedback: feedback() });
  assert.deepEqual(
    { state: kept.state, reason: kept.reason, applied: kept.applied, enforced: kept.enforced, upToDate: kept.upToDate },
    { state: 'Pending', reason: 'AwaitingSpokeReport', applied: true, enforced: 'True', upToDate: false },
  );
});

test('aggregatePolicyStatus: upToDate needs the current work applied and enforcedGeneration equal to generation', () => {
  assert.equal(one(work()).upToDate, true);
  assert.equal(one(work({ appliedObservedCurrent: false })).upToDate, false);
  assert.equal(one(work({ applied: false })).upToDate, false);
  assert.equal(one(work({ enforcedGeneration: 1 })).upToDate, false);
  assert.equal(one(work({ enforcedGeneration: undefined })).upToDate, false);
  assert.equal(one(work({ generation: undefined, enforcedGeneration: undefined })).upToDate, false);
  assert.equal(one({ state: 'pending' }).upToDate, false);
  assert.equal(one({ state: 'conflicted', message: 'm' }).upToDate, false);
});

test('aggregatePolicyStatus: summary.applied counts applied works across categories', () => {
  const status = aggregatePolicyStatus({
    now: NOW,
    clusters: {
      a: work(),
      b: work({ enforced: { status: 'False', reason: 'Overridden' } }),
      c: work({ applied: false }),
      d: work({ feedbackError: 'x' }),
      e: { state: 'pending' },
      f: { state: 'conflicted', message: 'm' },
    },
  });
  assert.deepEqual(status.summary, { clusters: 6, applied: 3, enforced: 1, overridden: 1, pending: 2, failed: 2 });
  assert.deepEqual(Object.keys(status.clusters ?? {}), ['a', 'b', 'c', 'd', 'e', 'f']);
});

// GEP-713 ancestors, and statuses the hub cannot read (docs/design/status.md#reading-spoke-status).

const EG = 'gateway.envoyproxy.io/gatewayclass-controller';
const ACCEPTED: AncestorCondition = { status: 'True', reason: 'Accepted', message: 'Policy has been accepted.', observedGeneration: 2, controllerName: EG };
const CONFLICTED: AncestorCondition = {
  status: 'False',
  reason: 'Conflicted',
  message: 'Unable to target Gateway shop, another BackendTrafficPolicy has already attached to it',
  observedGeneration: 2,
  controllerName: EG,
};
/** A long-applied work (past the grace) whose copy reports ancestors only, by Gateway. */
function ancestors(byGateway: Record<string, AncestorCondition[]>, extra: Partial<ClusterFeedback> = {}): ClusterInput {
  return work({
    accepted: undefined,
    enforced: undefined,
    enforcedGeneration: undefined,
    appliedAt: NOW - STATUS_GRACE_MS - 1,
    ancestors: Object.entries(byGateway).map(([gateway, entries]) => ({ gateway, entries })),
    ...extra,
  });
}
/** A work whose copy reports nothing the hub reads, applied `since` ms before NOW. */
function silent(since: number, extra: Partial<ClusterFeedback> = {}): ClusterInput {
  return work({ accepted: undefined, enforced: undefined, enforcedGeneration: undefined, appliedAt: NOW - since, ancestors: [{ gateway: 'shop', entries: [] }], ...extra });
}

// [name, input, state, reason, enforced, message?]
const SHAPES: [string, ClusterInput, ClusterStatus['state'], string, ClusterStatus['enforced'], string?][] = [
  ['every ancestor entry Accepted=True', ancestors({ shop: [ACCEPTED] }), 'Enforced', 'Accepted', 'True', 'Policy has been accepted.'],
  ['an ancestor entry Accepted=False', ancestors({ shop: [CONFLICTED] }), 'Failed', 'Conflicted', 'False', CONFLICTED.message],
  ['one of several entries for a Gateway is False', ancestors({ shop: [ACCEPTED, { ...CONFLICTED, reason: 'Invalid', message: 'bad' }] }), 'Failed', 'Invalid', 'False', 'bad'],
  [
    'False without reason or message',
    ancestors({ shop: [{ status: 'False', controllerName: EG }] }),
    'Failed',
    'NotAccepted',
    'False',
    `the policy is not accepted by ${EG} for Gateway shop`,
  ],
  ['an ancestor entry Accepted=Unknown', ancestors({ shop: [{ status: 'Unknown', reason: 'Pending', message: 'resolving' }] }), 'Pending', 'Pending', 'Unknown', 'resolving'],
  ['True without reason or message', ancestors({ shop: [{ status: 'True' }] }), 'Enforced', 'Accepted', 'True', 'the policy is accepted'],
  ['True without a message, from a named controller', ancestors({ shop: [{ status: 'True', controllerName: EG }] }), 'Enforced', 'Accepted', 'True', `the policy is accepted by ${EG}`],
  ['Unknown without reason or message', ancestors({ shop: [{ status: 'Unknown' }] }), 'Pending', 'Pending', 'Unknown', "the policy's acceptance for Gateway shop is not decided yet"],
  [
    'several Gateways, one rejected: the message names it',
    ancestors({ api: [ACCEPTED], shop: [CONFLICTED] }),
    'Failed',
    'Conflicted',
    'False',
    `Gateway shop: ${CONFLICTED.message}`,
  ],
  ['several Gateways, all accepted', ancestors({ api: [ACCEPTED], shop: [ACCEPTED] }), 'Enforced', 'Accepted', 'True', 'Gateway api: Policy has been accepted.'],
  [
    'a Gateway without an entry, past the grace',
    ancestors({ api: [ACCEPTED], shop: [] }),
    'Enforced',
    'PartiallyEnforced',
    'True',
    'accepted for Gateway api; no status.ancestors entry for Gateway shop 60s after the copy was applied (does the Gateway exist on the cluster?)',
  ],
  [
    'a Gateway without an entry, within the grace',
    ancestors({ api: [ACCEPTED], extra: [], shop: [] }, { appliedAt: JUST_APPLIED }),
    'Pending',
    'Pending',
    'Unknown',
    'waiting for the status.ancestors entry for Gateways extra, shop on the cluster',
  ],
  [
    'an Enforced condition wins over ancestors (the spoke agent says Overridden)',
    ancestors({ shop: [ACCEPTED] }, { enforced: { status: 'False', reason: 'Overridden', message: 'overridden by [ns/l]' } }),
    'Overridden',
    'Overridden',
    'False',
  ],
  ['Accepted=False in conditions wins over ancestors', ancestors({ shop: [ACCEPTED] }, { accepted: { status: 'False', reason: 'Invalid', message: 'm' } }), 'Failed', 'Invalid', 'Unknown'],
  [
    'no status within the grace',
    silent(STATUS_GRACE_MS - 1),
    'Pending',
    'Pending',
    'Unknown',
    "waiting for the policy's status on the cluster: an Enforced condition, or a status.ancestors entry for Gateway shop",
  ],
  ['no status within the grace, a copy without Gateways', silent(0, { ancestors: [] }), 'Pending', 'Pending', 'Unknown', "waiting for the policy's status on the cluster: an Enforced condition"],
  [
    'no status past the grace',
    silent(STATUS_GRACE_MS),
    'Failed',
    'NoStatus',
    'Unknown',
    'no status 60s after the copy was applied: no Accepted or Enforced condition and no status.ancestors entry for Gateway shop ' +
      "(is the kind's controller running on the cluster, and does the Gateway exist there?)",
  ],
  ['no status and no known apply time', silent(0, { appliedAt: undefined }), 'Failed', 'NoStatus', 'Unknown'],
  [
    'another status shape past the grace',
    silent(STATUS_GRACE_MS, { firstConditionType: 'Ready', firstAncestorName: 'other' }),
    'Failed',
    'UnrecognisedStatus',
    'Unknown',
    "the policy's status on the cluster has no Accepted or Enforced condition and no status.ancestors entry for Gateway shop; " +
      'it has condition "Ready" and an ancestor entry for Gateway "other"',
  ],
  ['ancestors of other Gateways only, within the grace', silent(10, { firstAncestorName: 'other' }), 'Pending', 'Pending', 'Unknown'],
  ['Accepted=True without Enforced, within the grace', silent(10, { accepted: { status: 'True', reason: 'Accepted', message: 'ok' } }), 'Pending', 'Pending', 'Unknown', 'waiting for the Enforced condition of the policy on the cluster'],
  ['Accepted=True without Enforced, past the grace', silent(STATUS_GRACE_MS, { accepted: { status: 'True', reason: 'Accepted', message: 'ok' } }), 'Enforced', 'Accepted', 'True', 'ok'],
  ['Accepted=Unknown without Enforced', silent(0, { accepted: { status: 'Unknown', reason: 'Reconciling', message: 'r' } }), 'Pending', 'Reconciling', 'Unknown', 'r'],
  ['an apply error before any status shape', silent(STATUS_GRACE_MS, { applyError: 'boom' }), 'Failed', 'ApplyFailed', 'Unknown', 'boom'],
  ['not applied: no grace runs', silent(STATUS_GRACE_MS, { applied: false }), 'Pending', 'Pending', 'Unknown', 'waiting for the ManifestWork to be applied on the cluster'],
];

for (const [name, input, state, reason, enforced, message] of SHAPES) {
  test(`aggregatePolicyStatus: ${name} → ${state}/${reason}`, () => {
    const status = aggregatePolicyStatus({ now: NOW, clusters: { c1: input } });
    const cluster = status.clusters?.c1;
    assert.ok(cluster);
    assert.deepEqual([cluster.state, cluster.reason, cluster.enforced], [state, reason, enforced]);
    if (message !== undefined) assert.equal(cluster.message, message);
    const { enforced: e, overridden, pending, failed } = status.summary;
    assert.equal(e + overridden + pending + failed, 1);
  });
}

test('aggregatePolicyStatus: the grace ends exactly STATUS_GRACE_MS after the apply', () => {
  assert.equal(one(silent(STATUS_GRACE_MS - 1)).state, 'Pending');
  assert.equal(one(silent(STATUS_GRACE_MS)).reason, 'NoStatus');
});

test('aggregatePolicyStatus: upToDate for ancestors needs every entry to have observed the copy generation', () => {
  assert.equal(one(ancestors({ shop: [ACCEPTED] })).upToDate, true);
  assert.equal(one(ancestors({ api: [ACCEPTED], shop: [ACCEPTED, ACCEPTED] })).upToDate, true);
  assert.equal(one(ancestors({ api: [ACCEPTED], shop: [{ ...ACCEPTED, observedGeneration: 1 }] })).upToDate, false);
  assert.equal(one(ancestors({ shop: [{ ...ACCEPTED, observedGeneration: undefined }] })).upToDate, false);
  assert.equal(one(ancestors({ shop: [ACCEPTED] }, { appliedObservedCurrent: false })).upToDate, false);
  assert.equal(one(ancestors({ shop: [ACCEPTED] }, { generation: undefined })).upToDate, false);
  assert.equal(one(ancestors({ shop: [CONFLICTED] })).upToDate, true, 'a rejection of the current generation is current too');
  assert.equal(one(silent(STATUS_GRACE_MS)).upToDate, false);
  assert.equal(one(silent(STATUS_GRACE_MS, { accepted: { status: 'True' } })).upToDate, false);
});

test('aggregatePolicyStatus: a message of the spoke controller is cut like the others', () => {
  assert.equal(one(ancestors({ shop: [{ ...CONFLICTED, message: 'x'.repeat(1000) }] })).message.length, 256);
});

test('aggregatePolicyStatus: tooLarge reports enforced from the retained work, whatever its status shape', () => {
  const retained = (input: ClusterInput) => (input.state === 'work' ? input.feedback : undefined);
  assert.equal(one({ state: 'tooLarge', feedback: retained(ancestors({ shop: [ACCEPTED] })) }).enforced, 'True');
  assert.equal(one({ state: 'tooLarge', feedback: retained(ancestors({ shop: [CONFLICTED] })) }).enforced, 'False');
});

test('statusRecheckDelay: the time left until the first cluster waiting for a status reaches the grace', () => {
  const clusters = {
    a: silent(10_000),
    b: silent(40_000),
    c: ancestors({ api: [ACCEPTED], shop: [] }, { appliedAt: NOW - 30_000 }),
    d: work(),
    e: silent(STATUS_GRACE_MS + 1),
    f: { state: 'pending' } as const,
    g: { state: 'conflicted', message: 'm' } as const,
  };
  assert.equal(statusRecheckDelay({ now: NOW, clusters }), STATUS_GRACE_MS - 40_000);
  assert.equal(statusRecheckDelay({ now: NOW, clusters: { c: clusters.c } }), STATUS_GRACE_MS - 30_000);
  assert.equal(statusRecheckDelay({ now: NOW, clusters: { d: clusters.d, e: clusters.e, f: clusters.f, g: clusters.g } }), undefined);
  assert.equal(statusRecheckDelay({ now: NOW, clusters: {} }), undefined);
});

test('statusRecheckDelay: past the delay, the waiting cluster is judged and nothing waits any more', () => {
  const clusters = { a: silent(10_000) };
  const delay = statusRecheckDelay({ now: NOW, clusters });
  assert.ok(delay !== undefined && delay > 0);
  const later = NOW + delay;
  const moved = { a: silent(10_000 + delay) };
  assert.equal(aggregatePolicyStatus({ now: later, clusters: moved }).clusters?.a?.reason, 'NoStatus');
  assert.equal(statusRecheckDelay({ now: later, clusters: moved }), undefined);
});

// The kind's own statusFeedback values.

test('aggregatePolicyStatus: a cluster carries the kind\'s statusFeedback values, sorted by name, strings cut', () => {
  const cluster = one(work({ extra: { phase: 'Ready', limitsTotal: 4, ready: false, long: 'l'.repeat(400) } }));
  assert.deepEqual(Object.keys(cluster.statusFeedback ?? {}), ['limitsTotal', 'long', 'phase', 'ready']);
  assert.deepEqual(cluster.statusFeedback, { limitsTotal: 4, long: `${'l'.repeat(255)}…`, phase: 'Ready', ready: false });
  assert.equal('statusFeedback' in one(work()), false, 'no values, no key');
  assert.deepEqual(one(silent(STATUS_GRACE_MS, { extra: { x: 1 } })).statusFeedback, { x: 1 }, 'on a failed cluster too');
  const retained = work({ extra: { x: 2 } });
  assert.deepEqual(one({ state: 'tooLarge', feedback: retained.state === 'work' ? retained.feedback : undefined }).statusFeedback, { x: 2 });
});

test('aggregatePolicyStatus: a copy kept off a cluster by local policies is Overridden there, naming them, not applied', () => {
  const status = aggregatePolicyStatus({ now: NOW, clusters: { c1: work(), c2: { state: 'overridden', message: 'AuthPolicy is overridden by [ns/local]', by: ['ns/local'] } } });
  assert.deepEqual(status.summary, { clusters: 2, applied: 1, enforced: 1, overridden: 1, pending: 0, failed: 0 });
  assert.deepEqual(status.clusters?.c2, {
    state: 'Overridden',
    applied: false,
    available: false,
    enforced: 'False',
    reason: 'Overridden',
    message: 'AuthPolicy is overridden by [ns/local]',
    upToDate: true,
    overriddenBy: ['ns/local'],
  });
});

test('aggregatePolicyStatus: the overriding local policies are named sorted and once, at most MAX_OVERRIDDEN_BY, the rest counted', () => {
  const overridden = (by: string[]): ClusterStatus => one({ state: 'overridden', message: 'AuthPolicy is overridden by […]', by });
  assert.deepEqual(overridden(['ns/b', 'ns/a', 'ns/b']).overriddenBy, ['ns/a', 'ns/b']);
  assert.equal('overriddenByMore' in overridden(['ns/a']), false, 'nothing left out, no count');
  const names = Array.from({ length: MAX_OVERRIDDEN_BY + 3 }, (_, i) => `ns/local-${String(i).padStart(2, '0')}`);
  const capped = overridden([...names].reverse());
  assert.deepEqual(capped.overriddenBy, names.slice(0, MAX_OVERRIDDEN_BY));
  assert.equal(capped.overriddenByMore, 3);
  const none = overridden([]);
  assert.equal('overriddenBy' in none, false, 'an empty list is no field');
  // Only the hub's own finding names them: a spoke controller's Overridden says who in its message alone.
  const byController = one(work({ enforced: { status: 'False', reason: 'Overridden', message: 'AuthPolicy is overridden by [ns/l]' } }));
  assert.equal(byController.state, 'Overridden');
  assert.equal('overriddenBy' in byController, false);
});

test('aggregatePolicyStatus: a local note replaces reason and message only while the controller enforces the copy', () => {
  const note = { reason: 'PartiallyEnforced' as const, message: 'AuthPolicy is partially overridden: listener "https" of Gateway gw by [ns/l]', by: ['ns/l'] };
  const enforced = one({ state: 'work', feedback: feedback(), local: note });
  assert.deepEqual([enforced.state, enforced.reason, enforced.message, enforced.enforced], ['Enforced', 'PartiallyEnforced', note.message, 'True']);
  assert.deepEqual(enforced.overriddenBy, ['ns/l'], 'the local policies that take part of it are named');
  // The controller's own word stands where it does not enforce the copy (e.g. its own precedence rule).
  const overridden = one({ state: 'work', feedback: feedback({ enforced: { status: 'False', reason: 'Overridden', message: 'AuthPolicy is overridden by [ns/l]' } }), local: note });
  assert.deepEqual([overridden.state, overridden.reason, overridden.message], ['Overridden', 'Overridden', 'AuthPolicy is overridden by [ns/l]']);
  assert.equal('overriddenBy' in overridden, false, 'nor the names that go with the note');
  const conflicted = one({ ...ancestors({ gw: [CONFLICTED] }), local: { reason: 'OverridesLocal', message: 'm' } } as ClusterInput);
  assert.equal(conflicted.state, 'Failed');
  assert.equal(conflicted.reason, 'Conflicted');
  const gep = one({ ...ancestors({ gw: [ACCEPTED] }), local: { reason: 'OverridesLocal', message: 'BackendTrafficPolicy overrides [ns/l] on the cluster' } } as ClusterInput);
  assert.deepEqual([gep.state, gep.reason, gep.message], ['Enforced', 'OverridesLocal', 'BackendTrafficPolicy overrides [ns/l] on the cluster']);
  assert.equal('overriddenBy' in gep, false, 'the hub policy overrides them: they override nothing');
});

test('a spoke reason reaches the status (and its Events) as a valid reason: UpperCamelCase, at most 128 characters', () => {
  const rejected = (reason: string) => one(work({ accepted: { status: 'False', reason, message: 'no' } }));
  assert.equal(rejected('target_not_found').reason, 'TargetNotFound');
  assert.equal(rejected(`Bad ${'x'.repeat(100_000)}`).reason.length, 128);
  assert.equal(rejected('!!!').reason, 'SpokeReason');
  assert.equal(rejected('TargetNotFound').reason, 'TargetNotFound');
  const enforced = one(work({ enforced: { status: 'False', reason: '\u001b[31mno\u001b[0m' } }));
  assert.match(enforced.reason, /^[A-Z][A-Za-z0-9]{0,127}$/);
});

test('a cluster whose work is kept while OCM cannot vouch for it counts as unknown, reads back, and its entry is a transition', () => {
  const status = aggregatePolicyStatus({ clusters: { c2: { state: 'unknown', reason: 'ManagedClusterLeaseUpdateStopped', message: 'OCM marks cluster c2 unreachable' } }, now: 0 });
  assert.deepEqual(status.summary, { clusters: 1, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 0, unknown: 1 });
  assert.equal(status.clusters?.c2?.state, 'Unknown');
  assert.deepEqual(readPolicyStatus(policyStatusAnnotation(status)), status);
  assert.deepEqual(statusTransitions(undefined, status).map((t) => [t.cluster, t.type, t.reason]), [['c2', 'Unknown', 'ManagedClusterLeaseUpdateStopped']]);
  // The common case has no `unknown` count at all: annotations written before are unchanged.
  assert.equal('unknown' in aggregatePolicyStatus({ clusters: {}, now: 0 }).summary, false);
});

test('judgePolicy: the status and the recheck delay of aggregatePolicyStatus and statusRecheckDelay, each cluster judged once', () => {
  const input = {
    now: NOW,
    clusters: { a: silent(10_000), b: work(), c: { state: 'pending' } as const, d: ancestors({ api: [ACCEPTED], shop: [] }, { appliedAt: NOW - 30_000 }) },
    problems: [{ reason: 'NoClusters', message: 'm' }],
  };
  const judged: ClusterInput[] = [];
  const judgement = judgePolicy(input, (cluster, now) => {
    judged.push(cluster);
    return clusterVerdict(cluster, now);
  });
  assert.equal(judged.length, 4, 'one verdict per cluster');
  assert.deepEqual(new Set(judged), new Set(Object.values(input.clusters)));
  assert.deepEqual(judgement, { status: aggregatePolicyStatus(input), recheckDelay: statusRecheckDelay(input) });
  assert.equal(judgement.recheckDelay, STATUS_GRACE_MS - 30_000);
  assert.deepEqual(judgePolicy({ now: NOW, clusters: { b: work() } }), { status: aggregatePolicyStatus({ now: NOW, clusters: { b: work() } }) }, 'none waits: no delay');
});

test('clusterVerdict judges frozen feedback once, but judges again while it waits for the grace, and judges a local note each time', () => {
  const silentFeedback = deepFreeze(feedback({ accepted: undefined, enforced: undefined, enforcedGeneration: undefined, appliedAt: NOW - 1_000 }));
  const waiting = clusterVerdict({ state: 'work', feedback: silentFeedback }, NOW);
  assert.equal(waiting.status.state, 'Pending');
  assert.equal(waiting.recheckAt, NOW - 1_000 + STATUS_GRACE_MS);
  // The grace ends: the same feedback is judged anew, not answered from the first verdict.
  const late = clusterVerdict({ state: 'work', feedback: silentFeedback }, NOW + STATUS_GRACE_MS);
  assert.equal(late.status.state, 'Failed');
  assert.equal(late.status.reason, 'NoStatus');
  assert.equal(clusterVerdict({ state: 'work', feedback: silentFeedback }, NOW + 2 * STATUS_GRACE_MS), late, 'settled: judged once');

  const enforced = deepFreeze(feedback());
  const first = clusterVerdict({ state: 'work', feedback: enforced }, NOW);
  assert.equal(clusterVerdict({ state: 'work', feedback: enforced }, NOW + 1), first);
  assert.ok(Object.isFrozen(first.status), 'shared, so frozen');
  const noted = clusterVerdict({ state: 'work', feedback: enforced, local: { reason: 'PartiallyEnforced', message: 'local ns/a takes part', by: ['ns/a'] } }, NOW);
  assert.equal(noted.status.reason, 'PartiallyEnforced');
  assert.equal(clusterVerdict({ state: 'work', feedback: enforced }, NOW).status.reason, 'Enforced', 'the note is not kept for the next reader');
  // Feedback that can change in place is judged each time.
  const live = feedback();
  assert.equal(clusterVerdict({ state: 'work', feedback: live }, NOW).status.state, 'Enforced');
  live.enforced = { status: 'False', reason: 'Invalid', message: 'bad' };
  assert.equal(clusterVerdict({ state: 'work', feedback: live }, NOW).status.state, 'Failed');
});
