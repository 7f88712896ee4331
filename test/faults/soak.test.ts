// The seeded soak's pure parts (issue 29; docs/reliability.md#seeded-soak): the model (testkit/soak/model.ts)
// against a worked example, and the generator's determinism. The run on the real plane is `npm run soak`
// (hack/soak/main.ts) for hours and many seeds (docs/reliability.md says what has run), and soak-run.test.ts in
// the suite: one fixed seed, one round per fault kind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { LINGER_BOUND_MS, checkDeletions, checkJoins, checkLingering, checkTakeovers, judgeDrift, policyWrites, sightUnwanted, unavailableAt, unwantedCopies, type UnwantedSighting } from '../../testkit/soak/checks.ts';
import { copyFingerprint, driftEventWitness, driftStatusWitness, type DriftRecord, type TruthSighting } from '../../testkit/soak/drift.ts';
import { availabilityOf, type SpokeObject } from '../../testkit/soak/evidence.ts';
import { generate } from '../../testkit/soak/generator.ts';
import { DRIFT_FIELD_MANAGER, FAULT_KINDS, driftValue, type Op } from '../../testkit/soak/ops.ts';
import { applyOp, copyId, expected, initialState, removalReason, type ModelState } from '../../testkit/soak/model.ts';
import { SOAK_USER_AGENT, SoakNames, policyObject } from '../../testkit/soak/world.ts';

const SEED = 29;

test('the model: a copy is withheld where the name is held or local policies cover its every target, and removed only for a reason the hub can know', () => {
  let s = initialState();
  s = applyOp(s, { op: 'policy-apply', kind: 'soak', tenant: 't1', name: 'soak-1', targets: [{ gateway: 'gw1' }, { gateway: 'gw2', sectionName: 'api' }], marker: 1, labels: {} });
  assert.deepEqual([...expected(s).copies.keys()].sort(), ['spoke-1/soak/t1/soak-1', 'spoke-2/soak/t1/soak-1']);
  // A local policy on one listener of gw1 covers neither the whole gw1 nor gw2's api listener.
  s = applyOp(s, { op: 'local-create', spoke: 'spoke-1', kind: 'soak', tenant: 't1', name: 'own-1', targets: [{ gateway: 'gw1', sectionName: 'http' }] });
  assert.ok(expected(s).copies.has('spoke-1/soak/t1/soak-1'));
  // One on the whole gw2 covers its api listener; with one on the whole gw1, every target is covered.
  s = applyOp(s, { op: 'local-create', spoke: 'spoke-1', kind: 'soak', tenant: 't1', name: 'own-2', targets: [{ gateway: 'gw2' }] });
  s = applyOp(s, { op: 'local-create', spoke: 'spoke-1', kind: 'soak', tenant: 't1', name: 'own-3', targets: [{ gateway: 'gw1' }] });
  assert.deepEqual(expected(s).withheld.get('spoke-1/soak/t1/soak-1'), { reason: 'overridden', by: ['t1/own-2', 't1/own-3'] });
  assert.equal(removalReason(s, { unavailable: new Set() }, 'spoke-1', 'soak', 't1', 'soak-1'), 'local policies cover it');
  // A same-named local policy holds the name: nothing is placed there.
  s = applyOp(s, { op: 'local-create', spoke: 'spoke-2', kind: 'soak', tenant: 't1', name: 'soak-1', targets: [{ gateway: 'gw1' }] });
  assert.deepEqual(expected(s).withheld.get('spoke-2/soak/t1/soak-1'), { reason: 'name-held' });
  // Deselected: removed while available, kept while unavailable or while the Placement is being replaced.
  s = applyOp(s, { op: 'local-delete', spoke: 'spoke-2', kind: 'soak', tenant: 't1', name: 'soak-1' });
  s = applyOp(s, { op: 'cluster-member', spoke: 'spoke-2', member: false });
  assert.match(removalReason(s, { unavailable: new Set() }, 'spoke-2', 'soak', 't1', 'soak-1') ?? '', /deselected/);
  assert.equal(removalReason(s, { unavailable: new Set(['spoke-2']) }, 'spoke-2', 'soak', 't1', 'soak-1'), undefined);
  // A class replaced or its params invalid: nothing of its Gateways' policies is unwanted.
  const replacing = applyOp(s, { op: 'class-replace', className: 'a', holdMs: 1 }, 'begin');
  assert.equal(removalReason(replacing, { unavailable: new Set() }, 'spoke-2', 'soak', 't1', 'soak-1'), undefined);
  // A kind removed from valid params: unwanted.
  s = applyOp(s, { op: 'params-set', className: 'a', kinds: ['auth'] });
  assert.match(removalReason(s, { unavailable: new Set() }, 'spoke-1', 'soak', 't1', 'soak-1') ?? '', /no synced target/);
});

test('the generator is pure: one seed, one plan', () => {
  assert.deepEqual(generate({ seed: SEED, ops: 40 }), generate({ seed: SEED, ops: 40 }));
  assert.notDeepEqual(generate({ seed: SEED, ops: 40 }), generate({ seed: SEED + 1, ops: 40 }));
});

test('the generator can take the fault kinds in turn: a short run meets each kind once', () => {
  const plan = generate({ seed: SEED, ops: 80, faultOrder: 'in-turn' });
  assert.deepEqual(
    plan.rounds.slice(0, FAULT_KINDS.length).map((r) => r.fault.kind),
    FAULT_KINDS,
  );
  assert.equal(plan.rounds[FAULT_KINDS.length]?.fault.kind, FAULT_KINDS[0], 'then the turn starts again');
  assert.deepEqual(generate({ seed: SEED, ops: 80, faultOrder: 'in-turn', faults: ['hub-kill'] }).rounds.map((r) => r.fault.kind), plan.rounds.map(() => 'hub-kill'));
});

test('the deletion check: a deselection justifies a deletion once OCM has vouched for the cluster again for the hub\'s grace when the hub deletes, whenever the deselection came', () => {
  const placedState = applyOp(initialState(), { op: 'policy-apply', kind: 'soak', tenant: 't1', name: 'soak-1', targets: [{ gateway: 'gw1' }], marker: 1, labels: {} });
  const deselected = applyOp(placedState, { op: 'cluster-member', spoke: 'spoke-2', member: false });
  const back = Date.parse('2026-11-28T06:00:00Z'); // spoke-2's Available condition True again (its lastTransitionTime)
  // As the watch saw spoke-2's ManagedCluster: available, then not (its agent stopped, or its apiserver down), then
  // available again since `back`, seen 400 ms later.
  const availability = [
    availabilityOf('spoke-2', managedCluster('True', back - 600_000), back - 600_000),
    availabilityOf('spoke-2', managedCluster('Unknown', back - 40_000, true), back - 39_000),
    availabilityOf('spoke-2', managedCluster('True', back), back + 400),
  ];
  assert.deepEqual(availability.map((c) => c.available), [true, false, true]);
  // The label removed 28 s after the cluster was back; the hub holds its copies until its own grace ends.
  const timeline = [
    { at: back - 100_000, state: placedState, label: 'policy-apply' },
    { at: back + 28_000, state: deselected, label: 'cluster-member' },
  ];
  const deletion = (at: number) => ({
    w: { verb: 'delete', user: 'sandbox-admin', userAgent: 'work-agent', resource: 'soakpolicies', namespace: 'ns-t1', name: 'soak-1', code: 200, at: new Date(at).toISOString() },
    spoke: 'spoke-2' as const,
    kind: 'soak' as const,
    tenant: 't1' as const,
    at,
  });
  assert.deepEqual(checkDeletions([deletion(back + 31_000)], timeline, availability).violations, [], 'out of doubt when deleted: justified by the deselection');
  const early = checkDeletions([deletion(back + 29_000)], timeline, availability);
  assert.equal(early.violations.length, 1, 'still in the grace when deleted: unjustified');
  assert.match(early.violations[0]!.message, /unjustified/);
  assert.equal(checkDeletions([deletion(back - 50_000)], timeline, availability).violations.length, 1, 'wanted and placed: no state justifies it');
  // While OCM does not vouch for it, a deselection justifies nothing; the moment the watch saw it, it may.
  const whileDown = [{ at: back - 100_000, state: deselected, label: 'cluster-member' }];
  assert.equal(checkDeletions([deletion(back - 20_000)], whileDown, availability).violations.length, 1, 'unavailable when deleted');
  assert.deepEqual(checkDeletions([deletion(back - 38_500)], whileDown, availability).violations, [], 'decided before the hub could see it');
  // The work agent's DELETE landing while the cluster is in doubt (its apiserver was down when the hub deleted the
  // work): judged where the hub decided, its last write of the work, too — justified when it was out of doubt then.
  assert.deepEqual(checkDeletions([deletion(back - 20_000)], whileDown, availability, () => back - 38_500).violations, [], 'decided by the hub before the doubt');
  assert.equal(checkDeletions([deletion(back - 20_000)], whileDown, availability, () => back - 25_000).violations.length, 1, 'decided in doubt: unjustified');
  assert.equal(checkDeletions([deletion(back - 20_000)], whileDown, availability, () => back - 10_000).violations.length, 1, 'a hub write after the DELETE decided nothing of it');
  assert.deepEqual([...unavailableAt(availability, back - 20_000)], ['spoke-2']);
  assert.deepEqual([...unavailableAt(availability, back + 30_000)], []);
});

function managedCluster(available: string, lastTransitionTime: number, tainted = false): KubeObject {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name: 'spoke-2' },
    spec: tainted ? { taints: [{ key: 'cluster.open-cluster-management.io/unreachable', effect: 'NoSelect' }] } : {},
    status: { conditions: [{ type: 'ManagedClusterConditionAvailable', status: available, lastTransitionTime: new Date(lastTransitionTime).toISOString().replace(/\.\d+Z$/, 'Z') }] },
  };
}

// Drift (issue 42): a copy edited on its spoke by another hand, reported Drifted by the hub and put back.

const names = new SoakNames('soak-test');
const T0 = Date.parse('2026-12-02T05:00:00.400Z');
const placedSoak = applyOp(initialState(), { op: 'policy-apply', kind: 'soak', tenant: 't1', name: 'soak-1', targets: [{ gateway: 'gw1' }], marker: 3, labels: {} });
const driftOp: Extract<Op, { op: 'copy-drift' }> = { op: 'copy-drift', spoke: 'spoke-1', kind: 'soak', tenant: 't1', name: 'soak-1', drift: 1, edited: true };

function copyOf(marker: number, labels: Record<string, string> = {}): KubeObject {
  const o = policyObject('soak', names.namespace('t1'), 'soak-1', [{ gateway: 'gw1' }], marker, labels);
  return { ...o, metadata: { ...o.metadata, uid: 'copy-uid', annotations: { 'kuadrant.io/policy-synced': `${names.namespace('t1')}/soak-1` } } };
}

function drift(over: Partial<DriftRecord> = {}): DriftRecord {
  return { drift: 1, round: 4, spoke: 'spoke-1', kind: 'soak', tenant: 't1', name: 'soak-1', editedAt: T0, uid: 'copy-uid', sentBefore: copyFingerprint('soak', copyOf(3)), tokenBefore: 'aaaa', ...over };
}

function timelineOf(...states: [number, ModelState][]): { at: number; state: ModelState; label: string }[] {
  return states.map(([at, state], i) => ({ at, state, label: `step ${i}` }));
}

const steady = timelineOf([T0 - 60_000, placedSoak], [T0, applyOp(placedSoak, driftOp)]);

test('a drift edit changes nothing the model expects; the model remembers it', () => {
  const after = applyOp(placedSoak, driftOp);
  assert.deepEqual(expected(after), expected(placedSoak));
  assert.equal(after.drifted['spoke-1/soak/t1/soak-1'], 1);
  assert.deepEqual(applyOp(placedSoak, { ...driftOp, edited: false }).drifted, {}, 'an edit that found no copy is not one');
});

test('a drift reported Drifted and put back passes', () => {
  const d = drift({ reportedAt: T0 + 300, reportedBy: 'status', putBackAt: T0 + 500, sentAfter: copyFingerprint('soak', copyOf(3)), tokenAfter: 'bbbb' });
  const j = judgeDrift(d, steady, T0 + 5_000);
  assert.deepEqual(j.violations, []);
  assert.equal(j.reported, true);
  assert.equal(j.putBack, true);
  assert.equal(j.excused, undefined);
});

test('a drift never reported is a violation, and so is one never put back', () => {
  const unreported = judgeDrift(drift(), steady, T0 + 120_000);
  assert.deepEqual(unreported.violations.map((v) => v.kind), ['drift', 'drift']);
  assert.match(unreported.violations[0]!.message, /drift 1 of soak t1\/soak-1 on spoke-1 .*still carries the edit 120\.0 s later.*not put back/);
  assert.match(unreported.violations[1]!.message, /never reported Drifted/);
  const notPutBack = judgeDrift(drift({ reportedAt: T0 + 300, reportedBy: 'status' }), steady, T0 + 120_000);
  assert.equal(notPutBack.violations.length, 1);
  assert.match(notPutBack.violations[0]!.message, /not put back/);
  // Put back by the hub (its work relabelled: it decided so from the drift), and nothing said so.
  const silent = judgeDrift(drift({ putBackAt: T0 + 400, sentAfter: copyFingerprint('soak', copyOf(3)), tokenAfter: 'bbbb' }), steady, T0 + 5_000);
  assert.equal(silent.violations.length, 1);
  assert.match(silent.violations[0]!.message, /put back by the hub \(its work's reapply label aaaa → bbbb\) but never reported Drifted/);
});

test('a drift owes no report when the edit went before the hub could see it', () => {
  // The hub's own edit of the policy (a new marker) wrote the copy whole a moment after the other hand's edit.
  const edited = applyOp(placedSoak, { op: 'policy-apply', kind: 'soak', tenant: 't1', name: 'soak-1', targets: [{ gateway: 'gw1' }], marker: 4, labels: {} });
  const overwritten = judgeDrift(drift({ putBackAt: T0 + 700, sentAfter: copyFingerprint('soak', copyOf(4)) }), [...steady, { at: T0 + 200, state: edited, label: 'policy-apply' }], T0 + 5_000);
  assert.deepEqual(overwritten.violations, []);
  assert.match(overwritten.excused ?? '', /overwritten by the hub's own change/);
  // The same seen on the copy alone: the policy's edit was sent before the drift, its work written after.
  const cameBackOther = judgeDrift(drift({ putBackAt: T0 + 700, sentAfter: copyFingerprint('soak', copyOf(3, { team: 'red' })) }), steady, T0 + 5_000);
  assert.match(cameBackOther.excused ?? '', /overwritten/);
  // Put back as it was, the work's reapply label unchanged: not the hub's doing (the agent's own resync).
  const resync = judgeDrift(drift({ putBackAt: T0 + 700, sentAfter: copyFingerprint('soak', copyOf(3)), tokenAfter: 'aaaa' }), steady, T0 + 5_000);
  assert.deepEqual(resync.violations, []);
  assert.match(resync.excused ?? '', /not by the hub/);
  // The copy went (its policy deleted) before any report.
  const gone = judgeDrift(drift({ goneAt: T0 + 900 }), [...steady, { at: T0 + 100, state: applyOp(placedSoak, { op: 'policy-delete', kind: 'soak', tenant: 't1', name: 'soak-1' }), label: 'policy-delete' }], T0 + 5_000);
  assert.deepEqual(gone.violations, []);
});

test("the witnesses of Drifted: a status write or an Event naming the soak's hand, written at or after the edit's second", () => {
  const d = drift();
  const sighting = (at: number, time: string, manager = DRIFT_FIELD_MANAGER): TruthSighting => ({ at, policy: 'soak/t1/soak-1', cluster: 'spoke-1', reason: 'Drifted', managers: [{ manager, time }] });
  assert.equal(driftStatusWitness(d, [sighting(T0 + 250, '2026-12-02T05:00:00Z')]), T0 + 250);
  assert.equal(driftStatusWitness(d, [sighting(T0 + 250, '2026-12-02T04:59:40Z')]), undefined, "an earlier drift's status");
  assert.equal(driftStatusWitness(d, [sighting(T0 + 250, '2026-12-02T05:00:00Z', 'kubectl-edit')]), undefined, 'another hand');
  assert.equal(driftStatusWitness(d, [{ ...sighting(T0 + 250, '2026-12-02T05:00:00Z'), cluster: 'spoke-2' }]), undefined, 'another cluster');
  const event = (message: string, firstTimestamp = '2026-12-02T05:00:01Z'): KubeObject =>
    ({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, reason: 'Drifted', message, firstTimestamp, involvedObject: { kind: 'SoakPolicy', namespace: names.namespace('t1'), name: 'soak-1' } });
  const said = `cluster spoke-1: Drifted: the copy on the cluster is not what the hub sent: spec.rules.marker changed by ${DRIFT_FIELD_MANAGER} (Update, 2026-12-02T05:00:00Z); being put back`;
  assert.equal(driftEventWitness(d, [event(said)], names), Date.parse('2026-12-02T05:00:01Z'));
  assert.equal(driftEventWitness(d, [event(said.replace('spoke-1', 'spoke-2'))], names), undefined);
  assert.equal(driftEventWitness(d, [event(said.replace('05:00:00Z', '04:58:00Z'))], names), undefined);
});

test("the soak's drift edit is its own write, and the work agent's put-back is expected: no check counts either", () => {
  const at = T0 + 100;
  const audited = [
    { verb: 'patch', user: 'sandbox-admin', userAgent: SOAK_USER_AGENT, resource: 'soakpolicies', namespace: names.namespace('t1'), name: 'soak-1', code: 200, at: new Date(T0).toISOString() },
    { verb: 'update', user: 'work-agent', userAgent: 'work/v0.0.0', resource: 'soakpolicies', namespace: names.namespace('t1'), name: 'soak-1', code: 200, at: new Date(at).toISOString() },
  ];
  const writes = policyWrites('spoke-1', audited, names);
  assert.deepEqual(writes.map((w) => w.w.user), ['work-agent'], "the soak's own write is not judged");
  assert.deepEqual(checkDeletions(writes, steady, []).violations, []);
  assert.deepEqual(checkTakeovers(writes, [], steady).violations, []);
  assert.deepEqual(checkJoins(writes, [], steady), []);
});

test('the join check: a copy landing where reported local policies cover it is a join, unless the hub placed its work before any report showed them', () => {
  const reported = T0 + 60_000;
  const local = { spoke: 'spoke-1' as const, kind: 'soak' as const, tenant: 't1' as const, name: 'own-1', targets: [{ gateway: 'gw1' as const }] };
  const covered = applyOp(placedSoak, { op: 'local-create', ...local });
  assert.deepEqual(expected(covered).withheld.get('spoke-1/soak/t1/soak-1'), { reason: 'overridden', by: ['t1/own-1'] });
  const timeline = [
    { at: T0, state: placedSoak, label: 'policy-apply' },
    { at: T0 + 50_000, state: covered, label: 'local-create' },
  ];
  const lives = [{ local, createdAt: T0 + 50_000, uid: 'u1', resourceVersion: '7', reportedAt: reported }];
  // The work agent creates the copy 30 s after the hub held the report of the local policy.
  const landed = reported + 30_000;
  const writes = policyWrites('spoke-1', [{ verb: 'create', user: 'work-agent', userAgent: 'work-agent/v1.2.1', resource: 'soakpolicies', namespace: names.namespace('t1'), name: 'soak-1', code: 201, at: new Date(landed).toISOString() }], names);
  assert.equal(checkJoins(writes, lives, timeline).length, 1, 'judged where it landed alone: a join');
  // The hub placed the work 20 s before the local policy was created (the agent took it up 100 s late): no join.
  assert.deepEqual(checkJoins(writes, lives, timeline, () => T0 + 30_000), [], 'placed before the local policy existed');
  // Placed 2 s after the report: the agent's lag does not excuse a hub that already knew.
  const late = checkJoins(writes, lives, timeline, () => reported + 2_000);
  assert.equal(late.length, 0, 'within SLACK_MS of the report the hub may not have seen it yet');
  const knew = checkJoins(writes, lives, timeline, () => reported + 10_000);
  assert.equal(knew.length, 1, 'placed 10 s after the hub held the report: a join');
  assert.match(knew[0]!.message, /the hub placed its work at/);
});

test('the generator injects drift edits of copies the model wants, one per copy a round', () => {
  const plan = generate({ seed: SEED, ops: 400 });
  let state = initialState();
  let count = 0;
  for (const round of plan.rounds) {
    const seen = new Set<string>();
    for (const op of round.ops) {
      if (op.op === 'copy-drift') {
        count += 1;
        const id = copyId(op.spoke, op.kind, op.tenant, op.name);
        assert.ok(expected(state).copies.has(id), `drift ${op.drift} edits ${id}, a copy the model wants`);
        assert.ok(!seen.has(id), `one drift of ${id} in a round`);
        seen.add(id);
        assert.ok(driftValue(op.drift) > 400, 'a value no marker reaches');
      }
      state = applyOp(state, op);
    }
  }
  assert.ok(count >= 10, `drift edits in the mix (${count})`);
});

// The lingering bound (issue 42): a copy that runs where the model wants none, after the faults stopped.

test('the lingering bound: a copy running where the model wants none past it is a violation, one gone within it is not', () => {
  const stopped = T0;
  // spoke-2 left the set: the model wants the copy on spoke-1 only; both run.
  const state = applyOp(placedSoak, { op: 'cluster-member', spoke: 'spoke-2', member: false });
  const on = (spoke: 'spoke-1' | 'spoke-2'): SpokeObject => ({ spoke, kind: 'soak', object: copyOf(3) });
  const unwanted = unwantedCopies(state, [on('spoke-1'), on('spoke-2'), { spoke: 'spoke-2', kind: 'soak', object: policyObject('soak', names.namespace('t1'), 'own-1', [{ gateway: 'gw1' }], 0) }], names);
  assert.deepEqual(unwanted.map((u) => u.id), ['spoke-2/soak/t1/soak-1'], 'the copy spoke-2 should not run (a local policy is no copy)');
  const sightings = new Map<string, UnwantedSighting>();
  // Seen each second until 45 s after the faults stopped (the hub said Lingering at 30 s, then mended it), then gone.
  for (let t = 0; t <= 45_000; t += 1_000) sightUnwanted(sightings, stopped + t, unwanted);
  sightUnwanted(sightings, stopped + 46_000, []);
  const within = checkLingering([...sightings.values()], 7, stopped, stopped + 48_000);
  assert.deepEqual(within.violations, []);
  assert.deepEqual(within.figures.map((f) => [f.id, f.ranMs, f.stillRunning]), [['spoke-2/soak/t1/soak-1', 45_000, false]]);
  // Never mended: still running at the end of the convergence wait, 180 s on.
  const left = new Map<string, UnwantedSighting>();
  for (let t = 0; t <= 179_000; t += 1_000) sightUnwanted(left, stopped + t, unwanted);
  const past = checkLingering([...left.values()], 7, stopped, stopped + 180_000);
  assert.equal(past.violations.length, 1);
  assert.equal(past.violations[0]!.kind, 'lingering');
  assert.match(past.violations[0]!.message, /round 7: copy soak t1\/soak-1 ran on spoke-2 180\.0 s after the faults stopped, where the model wants none \(bound 120 s\); still running/);
  // Gone just past the bound is past it too; the bound is LINGER_GRACE_MS and a minute and a half.
  const late = new Map<string, UnwantedSighting>();
  for (let t = 0; t <= LINGER_BOUND_MS + 1_000; t += 1_000) sightUnwanted(late, stopped + t, unwanted);
  sightUnwanted(late, stopped + LINGER_BOUND_MS + 2_000, []);
  assert.equal(checkLingering([...late.values()], 7, stopped, stopped + 150_000).violations.length, 1);
  assert.equal(LINGER_BOUND_MS, 120_000);
});
