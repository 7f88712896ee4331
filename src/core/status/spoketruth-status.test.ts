// What the hub policy's status says of the spokes' truth (docs/concepts/status.md#what-runs-on-a-spoke): a placed copy
// not as sent is Failed, reason Drifted, naming what differs and whether it is being put back; a copy that runs where
// no work of the policy places it is Pending, reason Removing, for LINGER_GRACE_MS, then Failed, reason Lingering; the
// summary counts both, and the status annotation keeps what they name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../k8s/objects.ts';
import type { CopyDrift } from '../spoke/spokereport.ts';
import { LINGER_GRACE_MS, type SpokeTruth } from '../spoke/spoketruth.ts';
import { desiredWorksForPolicy } from '../works/desiredworks.ts';
import { rehashWork, withReapplyLabel, type ManifestWork } from '../works/manifestwork.ts';
import { policyStatusAnnotation, readPolicyStatus } from './annotation.ts';
import { DRIFTED, LINGERING, REMOVING, aggregatePolicyStatus, clusterVerdict, driftText, statusRecheckDelay, type ClusterInput, type LingeringNote } from './policystatus.ts';
import { statusAggregateInput } from './statusinput.ts';
import { NOW, feedback, one, work } from '../../../testkit/statusfixtures.ts';

const EDIT_TIME = '2026-01-01T00:05:00Z';
const DRIFT: CopyDrift = { fields: ['spec.targetRef.name'], managers: [{ manager: 'other-tool', operation: 'Update', time: EDIT_TIME }], since: EDIT_TIME };
const REMOVAL: CopyDrift = { fields: ['spec.rules'], managers: [] };

const drifted = (drift: CopyDrift, correcting: boolean): ClusterInput => ({ state: 'work', feedback: feedback(), drift: { drift, correcting } });

test('a work whose copy drifted is Failed, reason Drifted, naming the fields and managers, being put back (drift: Correct)', () => {
  const status = one(drifted(DRIFT, true));
  assert.deepEqual(status, {
    state: 'Failed',
    // What the spoke's controller says of the copy that runs is still told.
    applied: true,
    available: true,
    enforced: 'True',
    reason: DRIFTED,
    message: 'the copy on the cluster is not what the hub sent: spec.targetRef.name changed by other-tool (Update, 2026-01-01T00:05:00Z); being put back',
    // What runs is not the revision the hub sent, whatever its controller says of it.
    upToDate: false,
    drift: DRIFT,
  });
});

test('with drift: Report the drifted copy is left as it is, and the message says so', () => {
  const status = one(drifted(DRIFT, false));
  assert.equal(status.reason, DRIFTED);
  assert.match(status.message, /; left as it is \(drift: Report\)$/);
  assert.doesNotMatch(status.message, /being put back/);
});

test('a removal no field manager owns is named as such; fields past those named are counted', () => {
  const status = one(drifted(REMOVAL, true));
  assert.equal(status.message, "the copy on the cluster is not what the hub sent: spec.rules differ (no field manager owns the change: a removal, or a default the spoke's schema sets otherwise); being put back");
  assert.deepEqual(status.drift, REMOVAL);
  assert.equal(driftText({ fields: ['spec.a', 'spec.b'], more: 3, managers: [{ manager: 'm' }, { manager: 'n', operation: 'Apply' }] }), 'spec.a, spec.b and 3 more changed by m, n (Apply)');
});

test('Drifted whatever the controller says of the copy: an enforced, a pending and a rejected copy alike', () => {
  for (const f of [feedback(), feedback({ enforced: { status: 'Unknown', reason: 'Unknown' } }), feedback({ enforced: { status: 'False', reason: 'Invalid', message: 'bad' } })]) {
    const { status } = clusterVerdict({ state: 'work', feedback: f, drift: { drift: DRIFT, correcting: true } }, NOW);
    assert.deepEqual([status.state, status.reason, status.upToDate], ['Failed', DRIFTED, false]);
  }
});

test('aggregatePolicyStatus: drifted clusters are counted failed and in summary.drifted; none drifted, no count', () => {
  const status = aggregatePolicyStatus({ now: NOW, clusters: { c1: drifted(DRIFT, true), c2: work(), c3: drifted(REMOVAL, false) } });
  assert.deepEqual(status.summary, { clusters: 3, applied: 3, enforced: 1, overridden: 0, pending: 0, failed: 2, drifted: 2 });
  assert.equal(aggregatePolicyStatus({ now: NOW, clusters: { c1: work() } }).summary.drifted, undefined);
});

const note = (name: string, lingering: boolean, since: string, namespace = 'shop', seenAt = Date.parse(since)): LingeringNote => ({ kind: 'authpolicies.kuadrant.io', namespace, name, lingering, since, seenAt });

test('a copy being removed is looked at again when its grace ends to the millisecond (not from `since`, cut to its second), and never with a delay of 0', () => {
  // First seen at .900 of a second: `since` says the second, the grace ends 900 ms after that second's grace would.
  const seenAt = NOW - 10_000 + 900;
  const since = new Date(seenAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const input: ClusterInput = { state: 'lingering', copies: [note('shop-auth', false, since, 'shop', seenAt)] };
  assert.equal(clusterVerdict(input, NOW).recheckAt, seenAt + LINGER_GRACE_MS);
  // Looked at when the grace ends (the copy, by the pipeline's own clock, still within it by a hair): a look again, soon.
  assert.equal(statusRecheckDelay({ now: seenAt + LINGER_GRACE_MS, clusters: { c1: input } }), 1);
});

test('a cluster with a copy reported for less than the grace is Pending, reason Removing, looked at again when the grace ends', () => {
  const since = new Date(NOW - 10_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const input: ClusterInput = { state: 'lingering', copies: [note('shop-auth', false, since)] };
  const verdict = clusterVerdict(input, NOW);
  assert.deepEqual(verdict.status, {
    state: 'Pending',
    applied: false,
    available: false,
    enforced: 'Unknown',
    reason: REMOVING,
    message: 'shop/shop-auth is still reported on the cluster; its ManifestWork is gone, and the copy should follow',
    upToDate: false,
    lingering: ['shop/shop-auth'],
  });
  assert.equal(verdict.recheckAt, NOW - 10_000 + LINGER_GRACE_MS);
  assert.equal(statusRecheckDelay({ now: NOW, clusters: { c1: input } }), LINGER_GRACE_MS - 10_000);
  const status = aggregatePolicyStatus({ now: NOW, clusters: { c1: input } });
  assert.deepEqual(status.summary, { clusters: 1, applied: 0, enforced: 0, overridden: 0, pending: 1, failed: 0 });
});

test('a cluster with a copy reported past the grace is Failed, reason Lingering, naming it and since when; counted in summary.lingering', () => {
  const input: ClusterInput = { state: 'lingering', copies: [note('shop-auth', true, '2026-01-01T00:08:00Z'), note('old', true, '2026-01-01T00:07:00Z')] };
  const status = one(input);
  assert.equal(status.state, 'Failed');
  assert.equal(status.reason, LINGERING);
  assert.equal(
    status.message,
    "shop/shop-auth, shop/old still runs on the cluster, though no ManifestWork of this hub places it (reported so since 2026-01-01T00:07:00Z): OCM's work agent left it behind; it is removed once the hub knows it is unwanted there",
  );
  assert.deepEqual(status.lingering, ['shop/shop-auth', 'shop/old']);
  assert.equal(status.upToDate, false);
  assert.equal(clusterVerdict(input, NOW).recheckAt, undefined);
  assert.deepEqual(aggregatePolicyStatus({ now: NOW, clusters: { c1: input, c2: work() } }).summary, { clusters: 2, applied: 1, enforced: 1, overridden: 0, pending: 0, failed: 1, lingering: 1 });
});

test('a cluster with one copy lingering and another being removed is Lingering, its message naming the lingering one, `lingering` both', () => {
  const status = one({ state: 'lingering', copies: [note('a', true, '2026-01-01T00:07:00Z'), note('b', false, '2026-01-01T00:09:50Z')] });
  assert.equal(status.reason, LINGERING);
  assert.match(status.message, /^shop\/a still runs on the cluster/);
  assert.deepEqual(status.lingering, ['shop/a', 'shop/b']);
});

// statusAggregateInput, from what the pipeline decides: a work per cluster and what the spokes say runs.
const GW = 'gateway.networking.k8s.io';

function policy(): KubeObject {
  return { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { name: 'shop-auth', namespace: 'shop', uid: 'u1', creationTimestamp: '2025-12-01T00:00:00Z' }, spec: { targetRef: { group: GW, kind: 'Gateway', name: 'shop' } } };
}

function desired(clusters: string[]) {
  return desiredWorksForPolicy({
    gvr: { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' },
    policy: policy(),
    gateways: () => ({ managed: true, downstreamNamespaceTemplate: '{namespace}', clusters, kindAllowed: true }),
    rawFeedback: false,
    statusFeedback: [],
    maxWorkBytes: 500 * 1024,
  });
}

/** The work as the agent reports it: applied, its copy Accepted. */
function live(w: ManifestWork): KubeObject {
  const applied = { type: 'Applied', status: 'True', reason: 'AppliedManifestWorkComplete', message: '', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z' };
  const values = [
    { name: 'ancestor0Status', fieldValue: { type: 'String', string: 'True' } },
    { name: 'ancestor0Reason', fieldValue: { type: 'String', string: 'Accepted' } },
  ];
  return { ...w, metadata: { ...w.metadata, generation: 1 }, status: { conditions: [applied], resourceStatus: { manifests: [{ resourceMeta: { ordinal: 0 }, statusFeedback: { values }, conditions: [] }] } } };
}

function truth(extra: Partial<SpokeTruth>): SpokeTruth {
  return { drifted: [], lingering: [], correct: true, ...extra };
}

test('statusAggregateInput: a drifted copy the spoke reports marks its cluster\'s work, correcting as the classes say', () => {
  const d = desired(['c1', 'c2']);
  const written = [...d.works.values()];
  const observed = written.map(live);
  const drift = [{ cluster: 'c1', kind: 'authpolicies.kuadrant.io', namespace: 'shop', name: 'shop-auth', drift: DRIFT }];
  for (const correct of [true, false]) {
    const input = statusAggregateInput({ desired: d, losses: [], observed, written, truth: truth({ drifted: drift, correct }) }, 500 * 1024, NOW);
    const c1 = input.clusters.c1;
    assert.ok(c1?.state === 'work');
    assert.deepEqual(c1.drift, { drift: DRIFT, correcting: correct });
    assert.ok(input.clusters.c2?.state === 'work' && input.clusters.c2.drift === undefined);
    const status = aggregatePolicyStatus(input);
    assert.deepEqual([status.clusters?.c1?.reason, status.clusters?.c2?.state], [DRIFTED, 'Enforced']);
    assert.equal(status.summary.drifted, 1);
    assert.match(status.clusters?.c1?.message ?? '', correct ? /being put back$/ : /left as it is \(drift: Report\)$/);
  }
});

test('statusAggregateInput: the pass that relabels a work to put its drift back still says Drifted (the live work is the same but for the label); a new revision written is Pending', () => {
  const d = desired(['c1']);
  const sent = d.works.get('c1')!;
  const drift = [{ cluster: 'c1', kind: 'authpolicies.kuadrant.io', namespace: 'shop', name: 'shop-auth', drift: DRIFT }];
  const relabelled = withReapplyLabel(sent, 'tok-1');
  const put = statusAggregateInput({ desired: d, losses: [], observed: [live(sent)], written: [relabelled], truth: truth({ drifted: drift }) }, 500 * 1024, NOW);
  assert.equal(aggregatePolicyStatus(put).clusters?.c1?.reason, DRIFTED);
  // Already carrying a token, relabelled with the next: the same.
  const again = statusAggregateInput({ desired: d, losses: [], observed: [live(relabelled)], written: [withReapplyLabel(sent, 'tok-2')], truth: truth({ drifted: drift }) }, 500 * 1024, NOW);
  assert.equal(aggregatePolicyStatus(again).clusters?.c1?.reason, DRIFTED);
  // A spec change as well as the label: a new revision on its way, Pending until its status comes.
  const changed = withReapplyLabel(rehashWork({ ...sent, metadata: { ...sent.metadata, annotations: { ...sent.metadata.annotations, 'x.example/changed': '1' } } }), 'tok-1');
  assert.deepEqual(statusAggregateInput({ desired: d, losses: [], observed: [live(sent)], written: [changed], truth: truth({ drifted: drift }) }, 500 * 1024, NOW).clusters.c1, { state: 'pending' });
});

test('statusAggregateInput: drift on a cluster whose work has no current status, or is conflicted, leaves the hub\'s own verdict', () => {
  const d = desired(['c1']);
  const written = [...d.works.values()];
  const drift = [{ cluster: 'c1', kind: 'authpolicies.kuadrant.io', namespace: 'shop', name: 'shop-auth', drift: DRIFT }];
  // No status yet: what it says of the copy is not known to be about this revision.
  assert.deepEqual(statusAggregateInput({ desired: d, losses: [], observed: [], written, truth: truth({ drifted: drift }) }, 500 * 1024, NOW).clusters.c1, { state: 'pending' });
  const conflicted = statusAggregateInput({ desired: d, losses: [{ cluster: 'c1', message: 'already synced from ns/older' }], observed: written.map(live), written, truth: truth({ drifted: drift }) }, 500 * 1024, NOW);
  assert.equal(conflicted.clusters.c1?.state, 'conflicted');
});

test('statusAggregateInput: a copy lingering where the policy has no say is that cluster\'s verdict, since in RFC 3339 seconds; where it has one, that one stays', () => {
  const d = desired(['c1']);
  const written = [...d.works.values()];
  // Seen so since 00:08:00.123, well past LINGER_GRACE_MS before NOW (00:10:00): said in whole seconds.
  const seenSince = Date.parse('2026-01-01T00:08:00.123Z');
  assert.ok(NOW - seenSince >= LINGER_GRACE_MS);
  const lingering = [
    { cluster: 'c9', kind: 'authpolicies.kuadrant.io', namespace: 'shop', name: 'shop-auth', seenSince, lingering: true },
    { cluster: 'c9', kind: 'authpolicies.kuadrant.io', namespace: 'old', name: 'shop-auth', seenSince: NOW, lingering: false },
    // c1 has the policy's work: an older copy left there does not hide what the work says.
    { cluster: 'c1', kind: 'authpolicies.kuadrant.io', namespace: 'shop', name: 'old-name', seenSince, lingering: true },
  ];
  const input = statusAggregateInput({ desired: d, losses: [], observed: written.map(live), written, truth: truth({ lingering }) }, 500 * 1024, NOW);
  assert.deepEqual(input.clusters.c9, {
    state: 'lingering',
    copies: [
      { kind: 'authpolicies.kuadrant.io', namespace: 'shop', name: 'shop-auth', lingering: true, since: '2026-01-01T00:08:00Z', seenAt: seenSince },
      { kind: 'authpolicies.kuadrant.io', namespace: 'old', name: 'shop-auth', lingering: false, since: '2026-01-01T00:10:00Z', seenAt: NOW },
    ],
  });
  assert.equal(input.clusters.c1?.state, 'work');
  const status = aggregatePolicyStatus(input);
  assert.deepEqual([status.clusters?.c9?.state, status.clusters?.c9?.reason, status.clusters?.c9?.lingering], ['Failed', LINGERING, ['shop/shop-auth', 'old/shop-auth']]);
  assert.equal(status.summary.lingering, 1);
});

test('the status annotation keeps `drift`, `lingering` and their counts through a write and a read', () => {
  const status = aggregatePolicyStatus({
    now: NOW,
    clusters: {
      c1: drifted({ ...DRIFT, more: 4 }, true),
      c2: drifted(REMOVAL, false),
      c3: { state: 'lingering', copies: [note('shop-auth', true, '2026-01-01T00:07:00Z')] },
      c4: { state: 'lingering', copies: [note('shop-auth', false, '2026-01-01T00:09:50Z')] },
      c5: work(),
    },
  });
  assert.deepEqual([status.summary.drifted, status.summary.lingering], [2, 1]);
  const read = readPolicyStatus(policyStatusAnnotation(status));
  assert.deepEqual(read, status);
  assert.deepEqual(read?.clusters?.c1?.drift, { ...DRIFT, more: 4 });
  assert.deepEqual(read?.clusters?.c4?.lingering, ['shop/shop-auth']);
});

test('statusAggregateInput: a copy lingering past its grace where a local policy overrides the hub\'s, or another hub policy won the Gateway, is said Lingering, the say beside it; in its grace the say stays', () => {
  const d = desired([]);
  const seenSince = Date.parse('2026-01-01T00:08:00Z');
  const copy = (cluster: string, lingering: boolean) => ({ cluster, kind: 'authpolicies.kuadrant.io', namespace: 'shop', name: 'shop-auth', seenSince: lingering ? seenSince : NOW, lingering });
  const local = { overridden: [{ cluster: 'c1', message: 'covered by local shop/local-auth', by: ['shop/local-auth'] }, { cluster: 'c2', message: 'covered by local shop/local-auth', by: ['shop/local-auth'] }], notes: new Map() };
  const losses = [{ cluster: 'c3', message: 'already synced from ns/older' }, { cluster: 'c4', message: 'already synced from ns/older' }];
  const lingering = [copy('c1', true), copy('c2', false), copy('c3', true), copy('c4', false)];
  const input = statusAggregateInput({ desired: d, losses, observed: [], written: [], local, truth: truth({ lingering }) }, 500 * 1024, NOW);
  const status = aggregatePolicyStatus(input);
  const c = (name: string) => status.clusters?.[name];
  assert.deepEqual([c('c1')?.state, c('c1')?.reason, c('c1')?.lingering, c('c1')?.overriddenBy], ['Failed', LINGERING, ['shop/shop-auth'], ['shop/local-auth']]);
  assert.match(c('c1')?.message ?? '', /^shop\/shop-auth still runs on the cluster, though no ManifestWork of this hub places it \(Overridden: covered by local shop\/local-auth\)/);
  assert.deepEqual([c('c3')?.reason, c('c3')?.lingering, c('c3')?.overriddenBy], [LINGERING, ['shop/shop-auth'], undefined]);
  assert.match(c('c3')?.message ?? '', /\(Conflicted: already synced from ns\/older\)/);
  // Only being removed: what the hub decided stays the verdict (the copy is on its way out, as it should be).
  assert.deepEqual([c('c2')?.state, c('c2')?.reason], ['Overridden', 'Overridden']);
  assert.deepEqual([c('c4')?.state, c('c4')?.reason], ['Failed', 'Conflicted']);
  assert.equal(status.summary.lingering, 2);
});
