// planRollout against a simulated fleet: the hub writes what a plan says (as the applier does: a work whose
// spec-hash is unchanged is not written again), each cluster's OCM work agent applies its work and feeds the
// spoke copy's status back (statusFeedback values, as the default feedback rules read them), and the spoke
// controller judges the copy's generation. The works the next plan reads are those, as the work cache keeps
// them (works/cacheview.ts). The fleet is testkit/rolloutfleet.ts, shared with the planner's property test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson } from '../k8s/canonical.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { PREVIOUS_COPY_ANNOTATION, ROLLOUT_HOLD_ANNOTATION } from '../metadatakeys.ts';
import { readClusterFeedback } from '../works/feedback.ts';
import { readSpecHash, rehashWork, workSizeBytes } from '../works/manifestwork.ts';
import type { PolicyStatus } from '../status/policystatus.ts';
import { rolloutEvent } from '../status/transitions.ts';
import { judgedRevision, planRollout, type RolloutInput, type RolloutPlan } from './plan.ts';
import type { ClusterPhase } from '../status/rolloutstatus.ts';
import { copyRevision, previousCopy, rolloutHold, workCopy, workRevision } from '../works/revision.ts';
import { ALL } from '../params/strategy.ts';
import {
  EG_ACCEPTED,
  EG_INVALID,
  ENFORCED,
  ENFORCING,
  GW,
  MAX_WORK_BYTES,
  MIN,
  MISSING_RESOURCE,
  OVERRIDDEN,
  RULES_1,
  RULES_2,
  RULES_3,
  SEC,
  T0,
  TARGET_NOT_FOUND,
  World as FleetWorld,
  hubPolicy,
  progressive,
  type WorldOptions,
} from '../../../testkit/rolloutfleet.ts';

/** The simulated fleet (testkit/rolloutfleet.ts), every plan checked against what holds of all plans. */
class World extends FleetWorld {
  constructor(options: WorldOptions) {
    super(options);
    this.check = checkPlan;
  }
}
/** What holds of every plan, whatever the scenario. */
function checkPlan(input: RolloutInput, plan: RolloutPlan): void {
  const R = input.revision;
  assert.equal(plan.status.revision, R);
  assert.deepEqual(plan.waiting, [...plan.waiting].sort(), 'waiting is sorted');
  for (const c of input.clusters) {
    const where = [plan.write.has(c.cluster), plan.keep.has(c.cluster), plan.waiting.includes(c.cluster)].filter(Boolean).length;
    assert.equal(where, 1, `${c.cluster} is written, kept or waiting: exactly one`);
    if (plan.keep.has(c.cluster)) assert.ok(c.observed, `${c.cluster}: only a work in place is kept`);
    if (plan.waiting.includes(c.cluster)) assert.equal(c.observed, undefined, `${c.cluster}: a cluster with a work is never left without one`);
    assert.ok(plan.clusters[c.cluster], `${c.cluster} has a phase`);
    const work = plan.write.get(c.cluster);
    if (!work) continue;
    assert.equal(readSpecHash(work), readSpecHash(rehashWork(work)), `${c.cluster}: the written work's spec-hash is its own`);
    assert.equal(work.metadata.name, c.desired.metadata.name);
    assert.equal(work.metadata.namespace, c.cluster);
    assert.deepEqual(work.spec.manifestConfigs, c.desired.spec.manifestConfigs, 'feedback rules and identity are the desired work\'s');
    assert.ok(workSizeBytes(work) <= Math.max(input.maxWorkBytes, workSizeBytes(c.desired)) + 1024, `${c.cluster}: fits`);
    const revision = workRevision(work);
    const hold = rolloutHold(work);
    if (revision !== R) assert.ok(hold && hold.revision === R, `${c.cluster}: a copy of revision ${revision} is written only held for revision ${R}`);
    else assert.equal(hold, undefined, `${c.cluster}: a copy of the revision is never held`);
  }
  assert.deepEqual(Object.keys(plan.clusters).sort(), input.clusters.map((c) => c.cluster).sort());
  if (plan.recheckAt !== undefined) assert.ok(plan.recheckAt > input.now, 'a recheck is in the future');
  if (input.strategy.type === 'All') {
    assert.equal(plan.keep.size + plan.waiting.length, 0);
    for (const c of input.clusters) assert.equal(plan.write.get(c.cluster), c.desired, 'All writes the desired works as they are');
  }
}

const phases = (plan: RolloutPlan): Record<string, ClusterPhase> => Object.fromEntries(Object.entries(plan.clusters).map(([c, r]) => [c, r.phase]));
const sorted = (names: Iterable<string>): string[] => [...names].sort();

/** Four clusters, one of them the canary. */
const FOUR = { c1: { env: 'prod' }, c2: { env: 'prod' }, c3: { env: 'prod' }, canary: { env: 'canary' } };
const CANARY = { matchLabels: { env: 'canary' } };

/** A world where revision 1 of the policy runs and is enforced everywhere (placed as All). */
function settledAt1(options: WorldOptions = { clusters: FOUR }): { world: World; v1: KubeObject } {
  const world = new World(options);
  const v1 = hubPolicy(1, RULES_1);
  world.step(v1, ALL, T0);
  world.roll(Object.keys(options.clusters), ENFORCED, T0 + 5 * SEC);
  return { world, v1 };
}

// ---------------------------------------------------------------------------------------------------------
// All

test('All: every cluster gets the desired work at once; complete when every work places the revision', () => {
  const world = new World({ clusters: FOUR });
  const v1 = hubPolicy(1, RULES_1);
  const first = world.step(v1, ALL, T0);
  assert.deepEqual(sorted(first.write.keys()), ['c1', 'c2', 'c3', 'canary']);
  assert.deepEqual(first.status, { strategy: 'All', revision: 1, state: 'Progressing', message: 'revision 1 being placed on c1, c2, c3, canary' });
  assert.deepEqual(phases(first), { c1: 'Progressing', c2: 'Progressing', c3: 'Progressing', canary: 'Progressing' });
  assert.equal(first.recheckAt, undefined);
  assert.equal(first.soak.size, 0);
  const placed = world.plan(v1, ALL, T0 + SEC);
  assert.deepEqual(placed.status, { strategy: 'All', revision: 1, state: 'Complete', message: 'revision 1 placed on every cluster' });
  assert.deepEqual(phases(placed), { c1: 'Succeeded', c2: 'Succeeded', c3: 'Succeeded', canary: 'Succeeded' });
  // An edit: everything written again at once, whatever the controllers say.
  world.roll(['c1'], TARGET_NOT_FOUND, T0 + 2 * SEC);
  const v2 = hubPolicy(2, RULES_2);
  const edit = world.step(v2, ALL, T0 + 3 * SEC);
  assert.equal(edit.write.size, 4);
  assert.deepEqual(world.revisions(), { c1: 2, c2: 2, c3: 2, canary: 2 });
  for (const w of edit.write.values()) {
    assert.equal(w.metadata.annotations[PREVIOUS_COPY_ANNOTATION], undefined, 'All keeps no record');
    assert.equal(w.metadata.annotations[ROLLOUT_HOLD_ANNOTATION], undefined);
  }
  const behind = world.plan(v2, ALL, T0 + 4 * SEC);
  assert.equal(behind.status.state, 'Complete');
});

test('All after a Progressive rollout: the desired works as they are, dropping the rollout\'s records', () => {
  const { world } = settledAt1();
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, progressive({ canary: CANARY, maxConcurrency: { count: 1 } }), T0 + MIN);
  assert.ok(world.fleet.spoke('canary').work.metadata.annotations[PREVIOUS_COPY_ANNOTATION]);
  const all = world.step(v2, ALL, T0 + 2 * MIN);
  assert.equal(all.write.size, 4);
  assert.equal(world.fleet.spoke('canary').work.metadata.annotations[PREVIOUS_COPY_ANNOTATION], undefined);
  assert.deepEqual(world.revisions(), { c1: 2, c2: 2, c3: 2, canary: 2 });
});

// ---------------------------------------------------------------------------------------------------------
// Progressive: the first rollout of a new policy

test('Progressive, a new policy: the first wave gets it, the others wait with no work (and report RolloutWaiting)', () => {
  const world = new World({ clusters: FOUR });
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 2 } });
  const v1 = hubPolicy(1, RULES_1);
  const plan = world.step(v1, strategy, T0);
  assert.deepEqual(sorted(plan.write.keys()), ['canary']);
  assert.deepEqual(plan.waiting, ['c1', 'c2', 'c3']);
  assert.equal(plan.keep.size, 0);
  assert.deepEqual(plan.status, { strategy: 'Progressive', revision: 1, state: 'Progressing', wave: 1, waves: 3, message: 'wave 1 of 3: canary' });
  assert.deepEqual(plan.clusters.c1, { phase: 'Waiting', wave: 2, message: 'no copy until its wave' });
  assert.deepEqual(plan.clusters.c3, { phase: 'Waiting', wave: 3, message: 'no copy until its wave' });
  assert.equal(plan.clusters.canary!.wave, 1);
  const canary = plan.write.get('canary')!;
  assert.equal(workRevision(canary), 1);
  assert.equal(canary.metadata.annotations[PREVIOUS_COPY_ANNOTATION], undefined, 'nothing ran before');
  assert.equal(canary.metadata.annotations[ROLLOUT_HOLD_ANNOTATION], undefined);
  assert.equal(readSpecHash(canary), readSpecHash(world.desired(v1).get('canary')!), 'a first copy is the desired work as it is');

  // The canary is enforced: wave 2 (c1, c2) gets it, c3 still waits.
  world.roll(['canary'], ENFORCED, T0 + 10 * SEC);
  const wave2 = world.step(v1, strategy, T0 + 11 * SEC);
  assert.deepEqual(sorted(wave2.write.keys()), ['c1', 'c2', 'canary']);
  assert.deepEqual(wave2.waiting, ['c3']);
  assert.equal(wave2.status.wave, 2);
  assert.equal(wave2.clusters.canary!.phase, 'Succeeded');
  world.roll(['c1', 'c2'], ENFORCED, T0 + 20 * SEC);
  const wave3 = world.step(v1, strategy, T0 + 21 * SEC);
  assert.deepEqual(wave3.waiting, []);
  assert.equal(wave3.status.wave, 3);
  world.roll(['c3'], ENFORCED, T0 + 30 * SEC);
  const done = world.step(v1, strategy, T0 + 31 * SEC);
  assert.deepEqual(done.status, { strategy: 'Progressive', revision: 1, state: 'Complete', wave: 3, waves: 3, message: 'revision 1 on every cluster' });
  assert.deepEqual(phases(done), { c1: 'Succeeded', c2: 'Succeeded', c3: 'Succeeded', canary: 'Succeeded' });
  assert.equal(done.recheckAt, undefined);
});

// ---------------------------------------------------------------------------------------------------------
// Progressive: a spec edit

test('a spec edit reaches the canary wave only; the other works stay exactly as they are (kept, not written)', () => {
  const { world } = settledAt1();
  const before = Object.fromEntries(['c1', 'c2', 'c3'].map((c) => [c, readSpecHash(world.fleet.spoke(c).work)]));
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 } });
  const v2 = hubPolicy(2, RULES_2);
  const plan = world.step(v2, strategy, T0 + MIN);
  assert.deepEqual(sorted(plan.write.keys()), ['canary']);
  assert.deepEqual(sorted(plan.keep), ['c1', 'c2', 'c3']);
  assert.deepEqual(plan.waiting, []);
  assert.deepEqual(plan.clusters.c2, { phase: 'Waiting', wave: 3, message: 'runs revision 1 until its wave' });
  assert.deepEqual(plan.status, { strategy: 'Progressive', revision: 2, state: 'Progressing', wave: 1, waves: 4, message: 'wave 1 of 4: canary' });
  assert.deepEqual(world.revisions(), { c1: 1, c2: 1, c3: 1, canary: 2 });
  for (const c of ['c1', 'c2', 'c3']) assert.equal(readSpecHash(world.fleet.spoke(c).work), before[c]);
  // The canary's work records what it ran before: the copy of revision 1.
  const canary = world.fleet.spoke('canary').work;
  assert.deepEqual(previousCopy(canary), workCopy(world.desired(hubPolicy(1, RULES_1)).get('canary')));
  assert.equal(copyRevision(previousCopy(canary)), 1);
});

test('the wave advances only on a verdict about the new revision: stale work status, a revision-1 report or an old observedGeneration do not count', () => {
  const { world } = settledAt1();
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 }, progressDeadlineMs: 10 * MIN });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);

  // Just written: the cached work's status is the agent's report on the previous work generation (revision 1, enforced).
  const stale = world.plan(v2, strategy, T0 + MIN + SEC);
  assert.deepEqual(sorted(stale.write.keys()), ['canary'], 'still only the canary');
  assert.equal(stale.clusters.canary!.phase, 'Progressing');
  assert.equal(stale.clusters.canary!.reason, 'AwaitingVerdict');
  assert.equal(stale.clusters.canary!.message, 'its controller has not reported on revision 2 yet');
  assert.equal(stale.recheckAt, T0 + MIN + 10 * MIN, 'looked at again when the progress deadline ends');

  // The agent applied it, the controller has not reconciled the new generation: its Enforced=True is about the old spec.
  world.fleet.agent('canary', T0 + MIN + 2 * SEC);
  const applied = world.plan(v2, strategy, T0 + MIN + 3 * SEC);
  assert.equal(applied.clusters.canary!.phase, 'Progressing');
  assert.equal(applied.clusters.canary!.reason, 'AwaitingVerdict');
  assert.deepEqual(sorted(applied.keep), ['c1', 'c2', 'c3']);

  // Each of the three conditions of a verdict about revision 2, taken away from a real one, holds the wave.
  world.fleet.judge('canary', ENFORCED, T0 + MIN + 4 * SEC);
  const good = world.fleet.observed('canary')!;
  const feedback = readClusterFeedback(good);
  assert.equal(judgedRevision(feedback, 2, undefined), true);
  assert.equal(judgedRevision(feedback, 1, undefined), false, 'a verdict on revision 2 is none on revision 1');
  assert.equal(judgedRevision({ ...feedback, revision: 1 }, 2, undefined), false, 'the copy the controller judged carried revision 1');
  assert.equal(judgedRevision({ ...feedback, appliedObservedCurrent: false }, 2, undefined), false, 'the agent had not applied this work generation');
  assert.equal(judgedRevision({ ...feedback, applied: false }, 2, undefined), false);
  assert.equal(judgedRevision({ ...feedback, enforcedGeneration: feedback.generation! - 1 }, 2, undefined), false, 'the controller observed an older copy generation');
  assert.equal(judgedRevision({ ...feedback, generation: undefined }, 2, undefined), false);
  const { revision: _r, ...noRevision } = feedback;
  assert.equal(judgedRevision(noRevision, 2, undefined), false, 'a copy without a revision (an agent without the rule) never counts');
  // A copy rendered with variants carries `<generation>/<tag>`: the verdict counts for the copy with that tag only.
  assert.equal(judgedRevision({ ...feedback, revisionTag: '0123456789' }, 2, undefined), false, 'a verdict on a variant copy is none on the base copy');
  assert.equal(judgedRevision(feedback, 2, '0123456789'), false, 'a verdict on the base copy is none on a variant copy');
  assert.equal(judgedRevision({ ...feedback, revisionTag: 'abcdef0123' }, 2, '0123456789'), false, 'nor on a copy of other variants or labels');
  assert.equal(judgedRevision({ ...feedback, revisionTag: '0123456789' }, 2, '0123456789'), true);

  const staleRevision = world.fleet.spoke('canary');
  const realCopy = staleRevision.copy!;
  staleRevision.copy = { ...realCopy, revision: '1' };
  assert.equal(world.plan(v2, strategy, T0 + MIN + 5 * SEC).clusters.canary!.phase, 'Progressing');
  staleRevision.copy = realCopy;
  staleRevision.verdict = { ...staleRevision.verdict!, generation: realCopy.generation - 1 };
  assert.equal(world.plan(v2, strategy, T0 + MIN + 5 * SEC).clusters.canary!.phase, 'Progressing');
  staleRevision.verdict = { ...staleRevision.verdict, generation: realCopy.generation };
  const appliedGeneration = staleRevision.applied!;
  staleRevision.applied = { ...appliedGeneration, generation: staleRevision.generation - 1 };
  assert.equal(world.plan(v2, strategy, T0 + MIN + 5 * SEC).clusters.canary!.phase, 'Progressing');
  staleRevision.applied = appliedGeneration;

  // The verdict about revision 2: the canary succeeded, wave 2 (c1) gets revision 2.
  const next = world.step(v2, strategy, T0 + MIN + 6 * SEC);
  assert.equal(next.clusters.canary!.phase, 'Succeeded');
  assert.deepEqual(sorted(next.write.keys()), ['c1', 'canary']);
  assert.deepEqual(sorted(next.keep), ['c2', 'c3']);
  assert.deepEqual(next.status, { strategy: 'Progressive', revision: 2, state: 'Progressing', wave: 2, waves: 4, message: 'wave 2 of 4: c1' });
  assert.deepEqual(world.revisions(), { c1: 2, c2: 1, c3: 1, canary: 2 });
});

test('a whole Progressive rollout, wave by wave, each written once; restarts (no soak map) never rewrite nor skip', () => {
  const { world } = settledAt1();
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 } });
  const v2 = hubPolicy(2, RULES_2);
  const order = ['canary', 'c1', 'c2', 'c3'];
  let now = T0 + MIN;
  world.fleet.writes.length = 0;
  for (const [i, cluster] of order.entries()) {
    const plan = world.step(v2, strategy, now);
    assert.equal(plan.status.state, 'Progressing');
    assert.equal(plan.status.wave, i + 1);
    assert.deepEqual(world.fleet.writes, order.slice(0, i + 1), `wave ${i + 1}: ${cluster} written, and only it`);
    // A restart: the same works, no soak map. Nothing rewritten, no wave skipped.
    const restarted = world.plan(v2, strategy, now + SEC, { soak: new Map() });
    for (const [c, w] of restarted.write) assert.equal(readSpecHash(w), readSpecHash(world.fleet.spoke(c).work), `${c} is not written again`);
    assert.equal(restarted.status.wave, i + 1);
    world.roll([cluster], ENFORCED, now + 2 * SEC);
    now += MIN;
  }
  const done = world.step(v2, strategy, now);
  assert.equal(done.status.state, 'Complete');
  assert.deepEqual(world.fleet.writes, order, 'every work written exactly once');
  assert.deepEqual(world.revisions(), { c1: 2, c2: 2, c3: 2, canary: 2 });
  // Complete, planned again and again: nothing written.
  world.fleet.writes.length = 0;
  world.step(v2, strategy, now + MIN);
  world.step(v2, strategy, now + 2 * MIN);
  assert.deepEqual(world.fleet.writes, []);
});

test('restart mid-wave: the works written by an earlier plan give the same spec-hash, records included', () => {
  const { world } = settledAt1();
  const strategy = progressive({ maxConcurrency: { count: 2 } });
  const v2 = hubPolicy(2, RULES_2);
  const first = world.step(v2, strategy, T0 + MIN);
  assert.deepEqual(sorted(first.write.keys()), ['c1', 'c2'], 'no canary selector: by name');
  for (const c of ['c1', 'c2']) {
    const w = world.fleet.spoke(c).work;
    assert.equal(copyRevision(previousCopy(w)), 1);
  }
  world.roll(['c1'], ENFORCED, T0 + MIN + 5 * SEC);
  const again = world.plan(v2, strategy, T0 + MIN + 10 * SEC, { soak: new Map() });
  for (const c of ['c1', 'c2']) assert.equal(readSpecHash(again.write.get(c)!), readSpecHash(world.fleet.spoke(c).work));
  assert.deepEqual(sorted(again.keep), ['c3', 'canary'], 'wave 2 not reached: c2 has not succeeded');
  assert.deepEqual(phases(again), { c1: 'Succeeded', c2: 'Progressing', c3: 'Waiting', canary: 'Waiting' });
});

// ---------------------------------------------------------------------------------------------------------
// minSuccessTime, progressDeadline

test('minSuccessTime: a wave passes once its clusters have succeeded that long; the soak clock comes back; a lost one only delays', () => {
  const { world } = settledAt1();
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 3 }, minSuccessTimeMs: 5 * MIN });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['canary'], ENFORCED, T0 + MIN + 10 * SEC);

  const seen = T0 + 2 * MIN;
  const soaking = world.step(v2, strategy, seen);
  assert.deepEqual(soaking.clusters.canary, { phase: 'Progressing', wave: 1, reason: 'Soaking', message: 'Enforced; successful for 0s of 300s' });
  assert.deepEqual([...soaking.soak], [['canary', seen]]);
  assert.equal(soaking.recheckAt, seen + 5 * MIN);
  assert.deepEqual(sorted(soaking.keep), ['c1', 'c2', 'c3']);

  const later = world.step(v2, strategy, seen + 2 * MIN);
  assert.equal(later.clusters.canary!.message, 'Enforced; successful for 120s of 300s');
  assert.deepEqual([...later.soak], [['canary', seen]], 'the clock runs from when it was first seen');
  assert.equal(later.recheckAt, seen + 5 * MIN);

  // The hub restarted: the soak starts again from now — later, never sooner.
  const restarted = world.plan(v2, strategy, seen + 4 * MIN, { soak: new Map() });
  assert.deepEqual([...restarted.soak], [['canary', seen + 4 * MIN]]);
  assert.equal(restarted.recheckAt, seen + 9 * MIN);
  assert.equal(world.plan(v2, strategy, seen + 6 * MIN).clusters.canary!.phase, 'Progressing', 'still soaking by the restarted clock');

  const passed = world.step(v2, strategy, seen + 9 * MIN);
  assert.equal(passed.clusters.canary!.phase, 'Succeeded');
  assert.deepEqual(sorted(passed.write.keys()), ['c1', 'c2', 'c3', 'canary']);
  assert.equal(passed.status.wave, 2);
});

test('minSuccessTime: a success that lapses (Enforced no more) loses its soak clock', () => {
  const { world } = settledAt1();
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 3 }, minSuccessTimeMs: 5 * MIN, progressDeadlineMs: undefined });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['canary'], ENFORCED, T0 + MIN + 10 * SEC);
  world.step(v2, strategy, T0 + 2 * MIN);
  world.fleet.judge('canary', ENFORCING, T0 + 3 * MIN);
  const lapsed = world.step(v2, strategy, T0 + 4 * MIN);
  assert.equal(lapsed.clusters.canary!.phase, 'Progressing');
  assert.equal(lapsed.clusters.canary!.reason, 'Pending');
  assert.equal(lapsed.soak.size, 0);
  world.fleet.judge('canary', ENFORCED, T0 + 5 * MIN);
  const again = world.step(v2, strategy, T0 + 6 * MIN);
  assert.deepEqual([...again.soak], [['canary', T0 + 6 * MIN]]);
});

test('progressDeadline: a silent controller fails the cluster and halts the rollout, never succeeds', () => {
  const { world } = settledAt1();
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 }, progressDeadlineMs: 10 * MIN });
  const v2 = hubPolicy(2, RULES_2);
  const writtenAt = T0 + MIN;
  world.step(v2, strategy, writtenAt);
  world.fleet.agent('canary', writtenAt + 5 * SEC); // applied; the controller never reconciles the new generation
  const waiting = world.step(v2, strategy, writtenAt + 10 * MIN - SEC);
  assert.equal(waiting.clusters.canary!.phase, 'Progressing');
  // Applied stays True across the spec change: the deadline runs from the hub's write of the work.
  assert.equal(waiting.recheckAt, writtenAt + 10 * MIN, 'the deadline runs from the work\'s last write');
  const late = world.step(v2, strategy, writtenAt + 10 * MIN);
  assert.deepEqual(late.clusters.canary, {
    phase: 'Failed',
    wave: 1,
    reason: 'ProgressDeadlineExceeded',
    message: 'no Enforced verdict on revision 2 within 600s: its controller has not reported on revision 2 yet',
  });
  assert.equal(late.status.state, 'Halted');
  assert.deepEqual(late.status.halted, { cluster: 'canary', reason: 'ProgressDeadlineExceeded', message: late.clusters.canary?.message, rolledBack: false });
  assert.deepEqual(sorted(late.keep), ['c1', 'c2', 'c3']);
  assert.deepEqual(world.revisions(), { c1: 1, c2: 1, c3: 1, canary: 2 });
  assert.equal(late.recheckAt, undefined);
  // Much later, still silent: never Succeeded.
  assert.equal(world.plan(v2, strategy, writtenAt + 24 * 60 * MIN).clusters.canary!.phase, 'Failed');
});

test('progressDeadline: the controller\'s own words when it judged the revision but never succeeded; None waits for ever', () => {
  const { world } = settledAt1();
  const v2 = hubPolicy(2, RULES_2);
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 }, progressDeadlineMs: 2 * MIN });
  world.step(v2, strategy, T0 + MIN);
  world.roll(['canary'], ENFORCING, T0 + MIN + 5 * SEC);
  const late = world.plan(v2, strategy, T0 + 10 * MIN);
  assert.equal(late.clusters.canary!.reason, 'ProgressDeadlineExceeded');
  assert.equal(late.clusters.canary!.message, 'no Enforced verdict on revision 2 within 120s: its controller says Pending: AuthPolicy is being enforced');
  const forever = world.plan(v2, progressive({ canary: CANARY, maxConcurrency: { count: 1 }, progressDeadlineMs: undefined }), T0 + 1000 * MIN);
  assert.deepEqual(forever.clusters.canary, { phase: 'Progressing', wave: 1, reason: 'Pending', message: 'its controller says Pending: AuthPolicy is being enforced' });
  assert.equal(forever.status.state, 'Progressing');
  assert.equal(forever.recheckAt, undefined);
});

// ---------------------------------------------------------------------------------------------------------
// Failures and halts

test('a rejection (Kuadrant: Accepted=False TargetNotFound, no Enforced condition) fails the cluster at once and halts the rollout', () => {
  const { world } = settledAt1();
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 } });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['canary'], TARGET_NOT_FOUND, T0 + MIN + 5 * SEC);
  const halted = world.step(v2, strategy, T0 + MIN + 6 * SEC);
  assert.deepEqual(halted.clusters.canary, { phase: 'Failed', wave: 1, reason: 'TargetNotFound', message: 'AuthPolicy target shop was not found' });
  assert.equal(halted.status.state, 'Halted');
  assert.deepEqual(halted.status.halted, { cluster: 'canary', reason: 'TargetNotFound', message: 'AuthPolicy target shop was not found', rolledBack: false });
  assert.equal(
    halted.status.message,
    'halted at revision 2: canary: TargetNotFound: AuthPolicy target shop was not found; the clusters reached keep it, the others their previous revision ' +
      '(edit the policy back to roll back, or annotate it policysync.kuadrant.io/rollout-resume: "2" to resume)',
  );
  assert.equal(halted.status.wave, 1);
  assert.deepEqual(sorted(halted.keep), ['c1', 'c2', 'c3']);
  assert.deepEqual(world.revisions(), { c1: 1, c2: 1, c3: 1, canary: 2 });
  // A rejection of revision 1 (before the edit) is no failure of revision 2.
  const other = settledAt1().world;
  other.step(v2, strategy, T0 + MIN);
  other.fleet.judge('canary', TARGET_NOT_FOUND, T0 + MIN + SEC); // about the old copy generation
  const notYet = other.plan(v2, strategy, T0 + MIN + 2 * SEC);
  assert.equal(notYet.clusters.canary!.phase, 'Progressing');
  assert.equal(notYet.status.state, 'Progressing');
});

test('a GEP-713 rejection (an ancestor entry Accepted=False) fails the cluster; Accepted=True succeeds', () => {
  const clusters = { a: {}, b: {} };
  const world = new World({ clusters, kind: 'BackendTrafficPolicy' });
  const v1 = hubPolicy(1, { timeout: { http: { requestTimeout: '5s' } } }, { kind: 'BackendTrafficPolicy' });
  world.step(v1, ALL, T0);
  world.roll(['a', 'b'], EG_ACCEPTED, T0 + SEC);
  const strategy = progressive({ maxConcurrency: { count: 1 } });
  const v2 = hubPolicy(2, { timeout: { http: { requestTimeout: '-1s' } } }, { kind: 'BackendTrafficPolicy' });
  world.step(v2, strategy, T0 + MIN);
  world.roll(['a'], EG_INVALID, T0 + MIN + SEC);
  const halted = world.step(v2, strategy, T0 + MIN + 2 * SEC);
  assert.deepEqual(halted.clusters.a, { phase: 'Failed', wave: 1, reason: 'Invalid', message: 'Timeout: requestTimeout must be positive' });
  assert.equal(halted.status.state, 'Halted');
  world.fleet.judge('a', EG_ACCEPTED, T0 + MIN + 3 * SEC);
  const ok = world.step(v2, strategy, T0 + MIN + 4 * SEC);
  assert.equal(ok.clusters.a!.phase, 'Succeeded');
  assert.equal(ok.status.state, 'Progressing', 'the failure gone, the rollout goes on (Hold)');
  assert.deepEqual(sorted(ok.write.keys()), ['a', 'b']);
});

test('an apply error of the revision fails the cluster', () => {
  const { world } = settledAt1();
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 } });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.fleet.agent('canary', T0 + MIN + SEC, 'admission webhook "authpolicy.kuadrant.io" denied the request: spec.rules: Invalid value');
  const plan = world.step(v2, strategy, T0 + MIN + 2 * SEC);
  assert.deepEqual(plan.clusters.canary, {
    phase: 'Failed',
    wave: 1,
    reason: 'ApplyFailed',
    message: 'admission webhook "authpolicy.kuadrant.io" denied the request: spec.rules: Invalid value',
  });
  assert.equal(plan.status.state, 'Halted');
  assert.equal(plan.status.halted?.reason, 'ApplyFailed');
});

test('an apply error the agent reported for the previous work generation is no failure of the revision', () => {
  const { world } = settledAt1();
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 }, onFailure: 'Rollback' });
  // Revision 1 could not be applied on the canary (say, a webhook refused it)...
  world.fleet.agent('canary', T0 + 10 * SEC, 'admission webhook "authpolicy.kuadrant.io" denied the request');
  // ...revision 2 is written there: the cached work has the new generation and the agent's report on the old one.
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  const stale = world.plan(v2, strategy, T0 + MIN + SEC);
  assert.equal(stale.clusters.canary!.phase, 'Progressing', 'the error is about the work before this one');
  assert.equal(stale.status.state, 'Progressing');
  assert.equal(workRevision(stale.write.get('canary')), 2, 'not rolled back');
  world.roll(['canary'], ENFORCED, T0 + MIN + 2 * SEC);
  assert.equal(world.plan(v2, strategy, T0 + MIN + 3 * SEC).clusters.canary!.phase, 'Succeeded');
});

test('maxFailures as a count: failures up to it are tolerated (a failed cluster has passed its wave), one more halts', () => {
  const clusters = { c1: {}, c2: {}, c3: {}, c4: {}, c5: {} };
  const { world } = settledAt1({ clusters });
  const strategy = progressive({ maxConcurrency: { count: 2 }, maxFailures: { count: 1 } });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['c1'], ENFORCED, T0 + MIN + SEC);
  world.roll(['c2'], TARGET_NOT_FOUND, T0 + MIN + SEC);
  const tolerated = world.step(v2, strategy, T0 + MIN + 2 * SEC);
  assert.equal(tolerated.clusters.c2!.phase, 'Failed');
  assert.equal(tolerated.status.state, 'Progressing');
  assert.equal(tolerated.status.wave, 2);
  assert.deepEqual(sorted(tolerated.write.keys()), ['c1', 'c2', 'c3', 'c4']);
  world.roll(['c3'], ENFORCED, T0 + MIN + 3 * SEC);
  world.roll(['c4'], MISSING_RESOURCE, T0 + MIN + 3 * SEC);
  const halted = world.step(v2, strategy, T0 + MIN + 4 * SEC);
  assert.equal(halted.status.state, 'Halted');
  assert.equal(halted.status.halted?.cluster, 'c2', 'the first failed cluster');
  assert.deepEqual(sorted(halted.keep), ['c5']);
  assert.deepEqual(world.revisions(), { c1: 2, c2: 2, c3: 2, c4: 2, c5: 1 });
});

test('maxFailures as a percentage of the rollout\'s clusters, rounded down', () => {
  const clusters = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`c${String(i).padStart(2, '0')}`, {}]));
  const { world } = settledAt1({ clusters });
  const v2 = hubPolicy(2, RULES_2);
  const strategy = progressive({ maxConcurrency: { percent: 50 }, maxFailures: { percent: 25 } }); // 5 a wave, 2 failures tolerated
  const first = world.step(v2, strategy, T0 + MIN);
  assert.deepEqual(sorted(first.write.keys()), ['c00', 'c01', 'c02', 'c03', 'c04']);
  assert.equal(first.status.waves, 2);
  world.roll(['c00', 'c01'], TARGET_NOT_FOUND, T0 + MIN + SEC);
  world.roll(['c02', 'c03', 'c04'], ENFORCED, T0 + MIN + SEC);
  const two = world.step(v2, strategy, T0 + MIN + 2 * SEC);
  assert.equal(two.status.state, 'Progressing');
  assert.equal(two.write.size, 10);
  world.roll(['c05'], MISSING_RESOURCE, T0 + MIN + 3 * SEC);
  const three = world.step(v2, strategy, T0 + MIN + 4 * SEC);
  assert.equal(three.status.state, 'Halted');
  assert.equal(three.status.halted?.cluster, 'c00');
});

test('onFailure Hold: reached clusters keep the revision, the others theirs; nothing more is written', () => {
  const { world } = settledAt1();
  const strategy = progressive({ maxConcurrency: { count: 2 } });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['c1'], ENFORCED, T0 + MIN + SEC);
  world.roll(['c2'], TARGET_NOT_FOUND, T0 + MIN + SEC);
  world.fleet.writes.length = 0;
  for (const at of [T0 + 2 * MIN, T0 + 3 * MIN, T0 + 60 * MIN]) {
    const plan = world.step(v2, strategy, at);
    assert.equal(plan.status.state, 'Halted');
    assert.deepEqual(sorted(plan.write.keys()), ['c1', 'c2'], 'reached: written as they are (same revision)');
    assert.deepEqual(sorted(plan.keep), ['c3', 'canary']);
    assert.deepEqual(phases(plan), { c1: 'Succeeded', c2: 'Failed', c3: 'Waiting', canary: 'Waiting' });
  }
  assert.deepEqual(world.fleet.writes, [], 'nothing sent');
  assert.deepEqual(world.revisions(), { c1: 2, c2: 2, c3: 1, canary: 1 });
});

test('a halt on a new policy leaves the clusters not reached without a copy', () => {
  const world = new World({ clusters: FOUR });
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 } });
  const v1 = hubPolicy(1, RULES_1);
  world.step(v1, strategy, T0);
  world.roll(['canary'], TARGET_NOT_FOUND, T0 + SEC);
  const plan = world.step(v1, strategy, T0 + 2 * SEC);
  assert.equal(plan.status.state, 'Halted');
  assert.deepEqual(plan.waiting, ['c1', 'c2', 'c3']);
  assert.deepEqual(plan.clusters.c1, { phase: 'Waiting', wave: 2, message: 'no copy: the rollout is halted' });
});

test('onFailure Rollback: the reached clusters get their previous copy back, held RolledBack; the rollout stays halted', () => {
  const { world, v1 } = settledAt1();
  const strategy = progressive({ maxConcurrency: { count: 2 }, onFailure: 'Rollback' });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['c1'], ENFORCED, T0 + MIN + SEC);
  world.roll(['c2'], TARGET_NOT_FOUND, T0 + MIN + SEC);
  const halted = world.step(v2, strategy, T0 + MIN + 2 * SEC);
  const halt = { cluster: 'c2', reason: 'TargetNotFound', message: 'AuthPolicy target shop was not found' };
  assert.equal(halted.status.state, 'Halted');
  assert.deepEqual(halted.status.halted, { ...halt, rolledBack: true });
  assert.match(halted.status.message, /the clusters reached return to their previous revision/);
  assert.deepEqual(sorted(halted.write.keys()), ['c1', 'c2']);
  assert.deepEqual(sorted(halted.keep), ['c3', 'canary']);
  assert.deepEqual(phases(halted), { c1: 'RolledBack', c2: 'RolledBack', c3: 'Waiting', canary: 'Waiting' });
  assert.equal(halted.clusters.c2!.message, 'returned to revision 1 by the halt');
  assert.equal(halted.clusters.c2!.reason, 'TargetNotFound');
  assert.deepEqual(world.revisions(), { c1: 1, c2: 1, c3: 1, canary: 1 });
  for (const c of ['c1', 'c2']) {
    const work = world.fleet.spoke(c).work;
    assert.deepEqual(rolloutHold(work), { revision: 2, cause: 'RolledBack', halt });
    assert.equal(work.metadata.annotations[PREVIOUS_COPY_ANNOTATION], undefined);
    // Revision 1 as it ran there: the spec of revision 1, the metadata of the desired copy but for its revision.
    assert.deepEqual(workCopy(work)!.spec, workCopy(world.desired(v1).get(c))!.spec);
  }

  // The agents apply the rollback; the controller is happy again with revision 1. The halt stays: the works say so.
  world.roll(['c1', 'c2'], ENFORCED, T0 + MIN + 3 * SEC);
  world.fleet.writes.length = 0;
  for (const soak of [undefined, new Map<string, number>()]) {
    const after = world.plan(v2, strategy, T0 + 5 * MIN, soak ? { soak } : {});
    world.fleet.apply(after, T0 + 5 * MIN);
    assert.equal(after.status.state, 'Halted');
    assert.deepEqual(after.status.halted, { ...halt, rolledBack: true });
    assert.deepEqual(phases(after), { c1: 'RolledBack', c2: 'RolledBack', c3: 'Waiting', canary: 'Waiting' });
    assert.deepEqual(sorted(after.keep), ['c1', 'c2', 'c3', 'canary']);
  }
  assert.deepEqual(world.fleet.writes, []);
});

test('onFailure Rollback: a cluster whose previous copy was not recorded keeps the revision', () => {
  const world = new World({ clusters: FOUR });
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 }, onFailure: 'Rollback' });
  const v1 = hubPolicy(1, RULES_1);
  world.step(v1, strategy, T0);
  world.roll(['canary'], TARGET_NOT_FOUND, T0 + SEC);
  const plan = world.step(v1, strategy, T0 + 2 * SEC);
  assert.equal(plan.status.state, 'Halted');
  assert.equal(plan.status.halted?.rolledBack, true);
  assert.equal(plan.clusters.canary!.phase, 'Failed', 'nothing to return to');
  assert.equal(workRevision(plan.write.get('canary')), 1);
});

test('editing the policy back is written at once to the clusters reached, even halted, and that rollout completes', () => {
  for (const onFailure of ['Hold', 'Rollback'] as const) {
    const { world, v1 } = settledAt1();
    const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 }, onFailure });
    const v2 = hubPolicy(2, RULES_2);
    world.step(v2, strategy, T0 + MIN);
    world.roll(['canary'], TARGET_NOT_FOUND, T0 + MIN + SEC);
    const halted = world.step(v2, strategy, T0 + MIN + 2 * SEC);
    assert.equal(halted.status.state, 'Halted', onFailure);
    world.roll(['canary'], ENFORCED, T0 + MIN + 3 * SEC); // Rollback: revision 1 is fine again; Hold: (no change written)
    if (onFailure === 'Hold') world.fleet.judge('canary', TARGET_NOT_FOUND, T0 + MIN + 3 * SEC);

    // The user edits the spec back: revision 3 has revision 1's spec. Every cluster gets it at once.
    const v3 = hubPolicy(3, RULES_1);
    const back = world.step(v3, strategy, T0 + 2 * MIN);
    assert.deepEqual(sorted(back.write.keys()), ['c1', 'c2', 'c3', 'canary'], onFailure);
    assert.deepEqual(back.keep, new Set(), onFailure);
    assert.equal(back.status.state, 'Progressing', onFailure);
    for (const c of ['c1', 'c2', 'c3', 'canary']) {
      assert.deepEqual(back.clusters[c], { phase: 'Progressing', wave: back.clusters[c]!.wave, reason: 'Placing', message: 'revision 3 being placed at once: the spec it runs, or ran before' }, `${onFailure} ${c}`);
    }
    assert.deepEqual(world.revisions(), { c1: 3, c2: 3, c3: 3, canary: 3 });
    for (const c of ['c1', 'c2', 'c3']) {
      assert.deepEqual(workCopy(world.fleet.spoke(c).work)!.spec, workCopy(world.desired(v1).get(c))!.spec);
      assert.equal(rolloutHold(world.fleet.spoke(c).work), undefined);
    }
    const canaryWork = world.fleet.spoke('canary').work;
    assert.equal(rolloutHold(canaryWork), undefined);
    // An edit back records no copy to roll back to: undoing it would bring back the revision rolled back from.
    assert.equal(previousCopy(canaryWork), undefined);
    for (const c of ['c1', 'c2', 'c3']) assert.equal(previousCopy(world.fleet.spoke(c).work), undefined, `${c}: a relabel has nothing to undo`);

    world.roll(['c1', 'c2', 'c3', 'canary'], ENFORCED, T0 + 2 * MIN + SEC);
    const done = world.step(v3, strategy, T0 + 2 * MIN + 2 * SEC);
    assert.equal(done.status.state, 'Complete', onFailure);
    assert.deepEqual(phases(done), { c1: 'Succeeded', c2: 'Succeeded', c3: 'Succeeded', canary: 'Succeeded' });
  }
});

test('a relabel (metadata only, or a revision whose spec is the same on a cluster) is written at once everywhere', () => {
  const { world } = settledAt1();
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 } });
  // Same generation, new label: a same-revision change, written everywhere, records kept.
  const relabelled = hubPolicy(1, RULES_1, { labels: { team: 'shop' } });
  const plan = world.step(relabelled, strategy, T0 + MIN);
  assert.equal(plan.write.size, 4);
  assert.deepEqual(plan.keep, new Set());
  for (const s of world.fleet.spokes.values()) assert.deepEqual(workCopy(s.work)!.metadata.labels, { team: 'shop' });
  assert.equal(plan.status.state, 'Complete');
});

test('resume: failures no longer halt the revision and the waves go on; a RolledBack hold is void', () => {
  const { world } = settledAt1();
  const strategy = progressive({ maxConcurrency: { count: 2 }, onFailure: 'Rollback' });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['c1'], ENFORCED, T0 + MIN + SEC);
  world.roll(['c2'], MISSING_RESOURCE, T0 + MIN + SEC);
  const halted = world.step(v2, strategy, T0 + MIN + 2 * SEC);
  assert.equal(halted.status.state, 'Halted');
  assert.deepEqual(world.revisions(), { c1: 1, c2: 1, c3: 1, canary: 1 });
  world.roll(['c1', 'c2'], ENFORCED, T0 + MIN + 3 * SEC);

  // A resume for another revision changes nothing.
  const wrong = hubPolicy(2, RULES_2, { annotations: { 'policysync.kuadrant.io/rollout-resume': '1' } });
  assert.equal(world.plan(wrong, strategy, T0 + 2 * MIN).status.state, 'Halted');

  const resumed = hubPolicy(2, RULES_2, { annotations: { 'policysync.kuadrant.io/rollout-resume': '2' } });
  const again = world.step(resumed, strategy, T0 + 2 * MIN);
  assert.equal(again.status.state, 'Progressing');
  assert.equal(again.status.halted, undefined);
  assert.equal(again.status.wave, 1);
  assert.deepEqual(sorted(again.write.keys()), ['c1', 'c2'], 'the rolled-back clusters get the revision again in their wave');
  assert.deepEqual(sorted(again.keep), ['c3', 'canary']);
  assert.deepEqual(world.revisions(), { c1: 2, c2: 2, c3: 1, canary: 1 });
  for (const c of ['c1', 'c2']) {
    const work = world.fleet.spoke(c).work;
    assert.equal(rolloutHold(work), undefined, 'the hold is gone');
    assert.equal(copyRevision(previousCopy(work)), 1);
  }
  // c2 fails again: resumed, it only counts as done with its wave.
  world.roll(['c1'], ENFORCED, T0 + 2 * MIN + SEC);
  world.roll(['c2'], MISSING_RESOURCE, T0 + 2 * MIN + SEC);
  const past = world.step(resumed, strategy, T0 + 2 * MIN + 2 * SEC);
  assert.equal(past.status.state, 'Progressing');
  assert.equal(past.clusters.c2!.phase, 'Failed');
  assert.equal(past.status.wave, 2);
  assert.deepEqual(world.revisions(), { c1: 2, c2: 2, c3: 2, canary: 2 });
  world.roll(['c3', 'canary'], ENFORCED, T0 + 3 * MIN);
  const done = world.step(resumed, strategy, T0 + 3 * MIN + SEC);
  assert.equal(done.status.state, 'Complete');
  assert.deepEqual(phases(done), { c1: 'Succeeded', c2: 'Failed', c3: 'Succeeded', canary: 'Succeeded' });
});

// ---------------------------------------------------------------------------------------------------------
// Joining clusters

test('a cluster joining mid-rollout gets the last completed revision, held Joined, and the new one once it completes', () => {
  // Two Gateways: a on c1..c3 and the joiner, b on c2 too. The joiner runs only a.
  const placement = { a: ['c1', 'c2', 'c3'], b: ['c2'] };
  const clusters = { c1: {}, c2: {}, c3: {}, zz: {} };
  const world = new World({ clusters, kind: 'BackendTrafficPolicy', placement });
  const v1 = hubPolicy(1, { timeout: { http: { requestTimeout: '5s' } } }, { kind: 'BackendTrafficPolicy', gateways: ['a', 'b'] });
  world.step(v1, ALL, T0);
  world.roll(['c1', 'c2', 'c3'], EG_ACCEPTED, T0 + SEC);
  const strategy = progressive({ maxConcurrency: { count: 1 } });
  const v2 = hubPolicy(2, { timeout: { http: { requestTimeout: '9s' } } }, { kind: 'BackendTrafficPolicy', gateways: ['a', 'b'] });
  world.step(v2, strategy, T0 + MIN);
  world.roll(['c1'], EG_ACCEPTED, T0 + MIN + SEC);
  world.step(v2, strategy, T0 + MIN + 2 * SEC); // wave 2: c2

  // zz joins Gateway a's placement; its name sorts last, into the last wave.
  world.placement = { a: ['c1', 'c2', 'c3', 'zz'], b: ['c2'] };
  const joined = world.step(v2, strategy, T0 + MIN + 3 * SEC);
  assert.deepEqual(joined.clusters.zz, { phase: 'Held', message: 'joined during the rollout: gets revision 1, the last completed, until revision 2 completes' });
  const zz = world.fleet.spoke('zz').work;
  assert.deepEqual(rolloutHold(zz), { revision: 2, cause: 'Joined' });
  const copy = workCopy(zz)!;
  assert.equal(copyRevision(copy), 1);
  // The last not-reached cluster's copy (c3, which has Gateway a only, as zz has).
  assert.deepEqual(copy, workCopy(world.fleet.spoke('c3').work));
  assert.deepEqual(copy.spec, { targetRefs: [{ group: GW, kind: 'Gateway', name: 'a' }], timeout: { http: { requestTimeout: '5s' } } });
  assert.equal(joined.status.waves, 4, 'counted in this plan\'s waves');

  // Held, it is out of the waves, kept as it is.
  world.roll(['zz'], EG_ACCEPTED, T0 + MIN + 4 * SEC);
  world.roll(['c2'], EG_ACCEPTED, T0 + MIN + 4 * SEC);
  const held = world.step(v2, strategy, T0 + MIN + 5 * SEC);
  assert.equal(held.status.waves, 3);
  assert.ok(held.keep.has('zz'));
  assert.deepEqual(held.clusters.zz, { phase: 'Held', message: 'joined during the rollout: runs revision 1, the last completed, until revision 2 completes' });
  world.roll(['c3'], EG_ACCEPTED, T0 + MIN + 6 * SEC);

  // Every wave passed: the joiner gets revision 2 now; complete once it is judged too.
  const completing = world.step(v2, strategy, T0 + MIN + 7 * SEC);
  assert.equal(completing.status.state, 'Progressing');
  assert.deepEqual(completing.clusters.zz, { phase: 'Progressing', message: 'joined during the rollout: gets revision 2 now that it completed' });
  const zz2 = world.fleet.spoke('zz').work;
  assert.equal(workRevision(zz2), 2);
  assert.equal(rolloutHold(zz2), undefined);
  assert.equal(copyRevision(previousCopy(zz2)), 1);
  world.roll(['zz'], EG_ACCEPTED, T0 + MIN + 8 * SEC);
  const done = world.step(v2, strategy, T0 + MIN + 9 * SEC);
  assert.equal(done.status.state, 'Complete');
  assert.deepEqual(world.revisions(), { c1: 2, c2: 2, c3: 2, zz: 2 });
});

test('a cluster joining a complete rollout gets the revision in its wave like any other', () => {
  const { world } = settledAt1({ clusters: { c1: {}, c2: {} } });
  const strategy = progressive({ maxConcurrency: { count: 1 } });
  world.labels = { c1: {}, c2: {}, c3: {} };
  world.placement = { shop: ['c1', 'c2', 'c3'] };
  const v1 = hubPolicy(1, RULES_1);
  const plan = world.step(v1, strategy, T0 + MIN);
  assert.equal(workRevision(plan.write.get('c3')), 1);
  assert.equal(rolloutHold(plan.write.get('c3')), undefined);
});

// ---------------------------------------------------------------------------------------------------------
// Waves: canary, maxConcurrency

test('waves: canary clusters first (by name), then the rest (by name), each cut by maxConcurrency (a percentage of all, at least 1)', () => {
  const clusters = {
    'east-1': { env: 'prod' },
    'east-2': { env: 'prod' },
    'west-1': { env: 'prod' },
    'west-2': { env: 'prod' },
    'can-b': { env: 'canary' },
    'can-a': { env: 'canary' },
  };
  const world = new World({ clusters });
  const v1 = hubPolicy(1, RULES_1);
  const half = world.plan(v1, progressive({ canary: CANARY, maxConcurrency: { percent: 50 } }), T0);
  const waveOf = (plan: RolloutPlan) => Object.fromEntries(Object.entries(plan.clusters).map(([c, r]) => [c, r.wave]));
  // 50% of 6 is 3: the two canaries, then three, then one.
  assert.deepEqual(waveOf(half), { 'can-a': 1, 'can-b': 1, 'east-1': 2, 'east-2': 2, 'west-1': 2, 'west-2': 3 });
  assert.deepEqual(sorted(half.write.keys()), ['can-a', 'can-b']);
  const one = world.plan(v1, progressive({ canary: CANARY, maxConcurrency: { count: 1 } }), T0);
  assert.deepEqual(waveOf(one), { 'can-a': 1, 'can-b': 2, 'east-1': 3, 'east-2': 4, 'west-1': 5, 'west-2': 6 });
  const tiny = world.plan(v1, progressive({ maxConcurrency: { percent: 10 } }), T0);
  assert.equal(tiny.status.waves, 6, '10% of 6 rounds down to 0: at least 1');
  const expressions = world.plan(v1, progressive({ canary: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] }, maxConcurrency: { count: 10 } }), T0);
  assert.deepEqual(waveOf(expressions), { 'can-a': 1, 'can-b': 1, 'east-1': 2, 'east-2': 2, 'west-1': 2, 'west-2': 2 });
  const noCanary = world.plan(v1, progressive({ canary: { matchLabels: { env: 'nowhere' } }, maxConcurrency: { count: 4 } }), T0);
  assert.deepEqual(waveOf(noCanary), { 'can-a': 1, 'can-b': 1, 'east-1': 1, 'east-2': 1, 'west-1': 2, 'west-2': 2 });
  const everything = world.plan(v1, progressive({ maxConcurrency: { percent: 100 } }), T0);
  assert.equal(everything.status.waves, 1);
  assert.equal(everything.write.size, 6);
});

test('maxConcurrency "50%": the second half waits for the whole first half', () => {
  const { world } = settledAt1();
  const strategy = progressive({ maxConcurrency: { percent: 50 } });
  const v2 = hubPolicy(2, RULES_2);
  const first = world.step(v2, strategy, T0 + MIN);
  assert.deepEqual(sorted(first.write.keys()), ['c1', 'c2']);
  world.roll(['c1'], ENFORCED, T0 + MIN + SEC);
  const half = world.step(v2, strategy, T0 + MIN + 2 * SEC);
  assert.deepEqual(sorted(half.keep), ['c3', 'canary']);
  assert.equal(half.status.message, 'wave 1 of 2: c1, c2');
  world.roll(['c2'], ENFORCED, T0 + MIN + 3 * SEC);
  const second = world.step(v2, strategy, T0 + MIN + 4 * SEC);
  assert.deepEqual(sorted(second.write.keys()), ['c1', 'c2', 'c3', 'canary']);
  assert.equal(second.status.message, 'wave 2 of 2: c3, canary');
});

// ---------------------------------------------------------------------------------------------------------
// What counts as success

test('successWhen: Kuadrant\'s Enforced=False MissingResource with Accepted=True succeeds with Accepted only', () => {
  for (const successWhen of ['Enforced', 'Accepted'] as const) {
    const { world } = settledAt1();
    const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 }, successWhen });
    const v2 = hubPolicy(2, RULES_2);
    world.step(v2, strategy, T0 + MIN);
    world.roll(['canary'], MISSING_RESOURCE, T0 + MIN + SEC);
    const plan = world.step(v2, strategy, T0 + MIN + 2 * SEC);
    if (successWhen === 'Accepted') {
      assert.deepEqual(plan.clusters.canary, { phase: 'Succeeded', wave: 1, reason: 'MissingResource', message: 'AuthPolicy waiting for the following components to sync: [AuthConfig]' });
      assert.equal(plan.status.state, 'Progressing');
      assert.equal(plan.status.wave, 2);
    } else {
      assert.deepEqual(plan.clusters.canary, { phase: 'Failed', wave: 1, reason: 'MissingResource', message: 'AuthPolicy waiting for the following components to sync: [AuthConfig]' });
      assert.equal(plan.status.state, 'Halted');
    }
  }
});

test('successWhen Accepted: Accepted=Unknown is not yet a success, Accepted=False is a failure', () => {
  const { world } = settledAt1();
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 }, successWhen: 'Accepted' });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['canary'], { accepted: ['Unknown', 'Pending', 'not yet'] }, T0 + MIN + SEC);
  assert.equal(world.plan(v2, strategy, T0 + MIN + 2 * SEC).clusters.canary!.phase, 'Progressing');
  world.fleet.judge('canary', TARGET_NOT_FOUND, T0 + MIN + 3 * SEC);
  assert.equal(world.plan(v2, strategy, T0 + MIN + 4 * SEC).clusters.canary!.phase, 'Failed');
});

test('a spoke controller\'s Overridden verdict (local policies take the Gateway) counts as done', () => {
  const { world } = settledAt1();
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 } });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['canary'], OVERRIDDEN, T0 + MIN + SEC);
  const plan = world.step(v2, strategy, T0 + MIN + 2 * SEC);
  assert.deepEqual(plan.clusters.canary, { phase: 'Succeeded', wave: 1, reason: 'Overridden', message: 'AuthPolicy is overridden by [shop/local-auth]' });
  assert.equal(plan.status.wave, 2);
});

// ---------------------------------------------------------------------------------------------------------
// --max-work-bytes

test('the previous copy is not recorded when the work would exceed maxWorkBytes: that cluster cannot be rolled back', () => {
  const { world } = settledAt1();
  const v2 = hubPolicy(2, RULES_2);
  const desired = world.desired(v2).get('c1')!;
  const previous = workCopy(world.fleet.spoke('c1').work)!;
  // Room for the work, not for the work and the copy it replaced.
  world.maxWorkBytes = workSizeBytes(desired) + Math.floor(canonicalJson(previous).length / 2);
  const strategy = progressive({ maxConcurrency: { count: 1 }, onFailure: 'Rollback' });
  const plan = world.step(v2, strategy, T0 + MIN);
  const work = plan.write.get('c1')!;
  assert.equal(workRevision(work), 2);
  assert.equal(work.metadata.annotations[PREVIOUS_COPY_ANNOTATION], undefined);
  assert.ok(workSizeBytes(work) <= world.maxWorkBytes);
  world.roll(['c1'], TARGET_NOT_FOUND, T0 + MIN + SEC);
  const halted = world.step(v2, strategy, T0 + MIN + 2 * SEC);
  assert.equal(halted.status.state, 'Halted');
  assert.equal(halted.clusters.c1!.phase, 'Failed', 'held at the revision: nothing to roll back to');
  assert.equal(workRevision(world.fleet.spoke('c1').work), 2);
  // With room enough, the record is there.
  const roomy = settledAt1().world;
  const recorded = roomy.step(v2, strategy, T0 + MIN).write.get('c1')!;
  assert.equal(recorded.metadata.annotations[PREVIOUS_COPY_ANNOTATION], canonicalJson(previous));
});

// ---------------------------------------------------------------------------------------------------------
// More of the same: what stands still, what is written at once, when to look again

test('a halt stands still from plan to plan (Hold and Rollback): the same status, at the wave reached, one RolloutHalted Event', () => {
  for (const onFailure of ['Hold', 'Rollback'] as const) {
    const { world } = settledAt1();
    const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 }, onFailure });
    const v2 = hubPolicy(2, RULES_2);
    const started = world.step(v2, strategy, T0 + MIN);
    world.roll(['canary'], TARGET_NOT_FOUND, T0 + MIN + SEC);
    const halting = world.step(v2, strategy, T0 + MIN + 2 * SEC);
    // The agent applies what the halt wrote (Rollback: revision 1 again, which the controller accepts).
    world.roll(['canary'], onFailure === 'Rollback' ? ENFORCED : TARGET_NOT_FOUND, T0 + MIN + 3 * SEC);
    const halted = world.step(v2, strategy, T0 + MIN + 4 * SEC);
    const later = world.step(v2, strategy, T0 + 30 * MIN);
    assert.equal(halting.status.wave, 1, `${onFailure}: wave 2 was never reached`);
    assert.deepEqual(halted.status, halting.status, onFailure);
    assert.deepEqual(later.status, halting.status, onFailure);
    const policyStatus = (plan: RolloutPlan): PolicyStatus => ({ summary: { clusters: 4, applied: 4, enforced: 3, overridden: 0, pending: 0, failed: 1 }, rollout: plan.status });
    assert.equal(rolloutEvent(policyStatus(started), policyStatus(halting))?.reason, 'RolloutHalted');
    assert.equal(rolloutEvent(policyStatus(halting), policyStatus(halted)), undefined, onFailure);
    assert.equal(rolloutEvent(policyStatus(halted), policyStatus(later)), undefined, onFailure);
  }
});

test('a revision whose spec is the same on a cluster (the edit is about a Gateway not placed there) is written there at once', () => {
  const placement = { a: ['c1', 'c2', 'c3'], b: ['c2'] };
  const world = new World({ clusters: { c1: {}, c2: {}, c3: {} }, kind: 'BackendTrafficPolicy', placement });
  const rules = { timeout: { http: { requestTimeout: '5s' } } };
  const v1 = hubPolicy(1, rules, { kind: 'BackendTrafficPolicy', gateways: ['a'] });
  world.step(v1, ALL, T0);
  world.roll(['c1', 'c2', 'c3'], EG_ACCEPTED, T0 + SEC);
  // Revision 2 targets Gateway b too: only c2's copy changes.
  const v2 = hubPolicy(2, rules, { kind: 'BackendTrafficPolicy', gateways: ['a', 'b'] });
  const strategy = progressive({ maxConcurrency: { count: 1 } });
  world.fleet.writes.length = 0;
  const plan = world.step(v2, strategy, T0 + MIN);
  assert.deepEqual(sorted(plan.write.keys()), ['c1', 'c3']);
  assert.deepEqual(sorted(plan.keep), ['c2']);
  assert.deepEqual(world.revisions(), { c1: 2, c2: 1, c3: 2 });
  assert.equal(plan.clusters.c3!.reason, 'Placing');
  assert.equal(world.fleet.spoke('c3').work.metadata.annotations[PREVIOUS_COPY_ANNOTATION], undefined, 'it ran the same spec: nothing else to return to');
  // The agent applies the new annotation; the copy's generation does not move, and the controller's verdict stands for revision 2.
  world.roll(['c1', 'c3'], undefined, T0 + MIN + SEC);
  assert.equal(world.fleet.spoke('c3').copy!.generation, 1);
  const next = world.step(v2, strategy, T0 + MIN + 2 * SEC);
  assert.deepEqual(phases(next), { c1: 'Succeeded', c2: 'Progressing', c3: 'Succeeded' });
  assert.equal(workRevision(world.fleet.spoke('c2').work), 2);
  assert.deepEqual(world.fleet.writes, ['c1', 'c3', 'c2']);
});

test('recheckAt: the earliest of the soaks ending and the progress deadlines', () => {
  const { world } = settledAt1();
  const strategy = progressive({ maxConcurrency: { count: 2 }, minSuccessTimeMs: 5 * MIN, progressDeadlineMs: 3 * MIN });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['c1'], ENFORCED, T0 + MIN + SEC);
  const plan = world.plan(v2, strategy, T0 + 2 * MIN);
  assert.equal(plan.clusters.c1!.reason, 'Soaking');
  assert.equal(plan.clusters.c2!.reason, 'AwaitingVerdict');
  assert.equal(plan.recheckAt, T0 + MIN + 3 * MIN, 'c2\'s deadline (written at T0+1m) before c1\'s soak (seen at T0+2m)');
  const soaking = world.plan(v2, progressive({ maxConcurrency: { count: 2 }, minSuccessTimeMs: MIN, progressDeadlineMs: 3 * MIN }), T0 + 2 * MIN);
  assert.equal(soaking.recheckAt, T0 + 2 * MIN + MIN);
});

test('a Joined hold for an earlier revision holds nothing: with a new edit, that cluster is in the waves again', () => {
  const placement = { shop: ['c1', 'c2', 'c3'] };
  const { world } = settledAt1({ clusters: { c1: {}, c2: {}, c3: {} }, placement });
  const strategy = progressive({ maxConcurrency: { count: 1 } });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.labels = { ...world.labels, zz: {} };
  world.placement = { shop: ['c1', 'c2', 'c3', 'zz'] };
  world.step(v2, strategy, T0 + MIN + SEC);
  assert.deepEqual(rolloutHold(world.fleet.spoke('zz').work), { revision: 2, cause: 'Joined' });
  world.roll(['zz'], ENFORCED, T0 + MIN + 2 * SEC);
  const v3 = hubPolicy(3, RULES_3);
  const plan = world.step(v3, strategy, T0 + 2 * MIN);
  assert.equal(plan.status.waves, 4);
  assert.deepEqual(plan.clusters.zz, { phase: 'Waiting', wave: 4, message: 'runs revision 1 until its wave' });
  assert.ok(plan.keep.has('zz'));
});

test('Progressive, the first wave being placed shows Progressing (Placing); All is unaffected by Progressive records', () => {
  const world = new World({ clusters: { c1: {}, c2: {} } });
  const v1 = hubPolicy(1, RULES_1);
  const plan = world.step(v1, progressive({ maxConcurrency: { count: 1 } }), T0);
  assert.deepEqual(plan.clusters.c1, { phase: 'Progressing', wave: 1, reason: 'Placing', message: 'revision 1 being placed' });
  // Planned again before the agent reported: the work is there, no verdict yet.
  const again = world.plan(v1, progressive({ maxConcurrency: { count: 1 } }), T0 + SEC);
  assert.deepEqual(again.clusters.c1, { phase: 'Progressing', wave: 1, reason: 'AwaitingVerdict', message: 'its controller has not reported on revision 1 yet' });
});

test('a rollout that completed is proven: a later failure of a cluster neither halts nor rolls it back, and a joiner gets it at once', () => {
  const { world } = settledAt1({ clusters: { c1: {}, c2: {} } });
  const strategy = progressive({ maxConcurrency: { count: 1 }, onFailure: 'Rollback' });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['c1'], ENFORCED, T0 + MIN + SEC);
  world.step(v2, strategy, T0 + MIN + 2 * SEC);
  world.roll(['c2'], ENFORCED, T0 + MIN + 3 * SEC);
  assert.equal(world.step(v2, strategy, T0 + MIN + 4 * SEC).status.state, 'Complete');
  world.completedRevision = 2;
  // Later, c2's controller rejects revision 2 (its Gateway went): reported, but the rollout stands.
  world.roll(['c2'], TARGET_NOT_FOUND, T0 + 2 * MIN);
  const later = world.step(v2, strategy, T0 + 2 * MIN + SEC);
  assert.equal(later.status.state, 'Complete');
  assert.equal(later.status.halted, undefined);
  assert.equal(later.clusters.c2?.phase, 'Failed');
  assert.equal(later.write.size + later.keep.size, 2);
  assert.deepEqual(world.revisions(), { c1: 2, c2: 2 }, 'nothing rolled back');
  // Without the record, the same failure would halt it and roll every cluster back.
  world.completedRevision = undefined;
  assert.equal(world.plan(v2, strategy, T0 + 2 * MIN + 2 * SEC).status.state, 'Halted');
  // A joiner of a completed rollout gets the revision at once.
  world.completedRevision = 2;
  world.labels = { c1: {}, c2: {}, c3: {} };
  world.placement = { shop: ['c1', 'c2', 'c3'] };
  const joined = world.plan(v2, strategy, T0 + 3 * MIN);
  assert.equal(workRevision(joined.write.get('c3')), 2);
  assert.equal(rolloutHold(joined.write.get('c3')), undefined);
});

test('the halt names the first cluster that failed in the order the rollout reached them (canary before the rest)', () => {
  const { world } = settledAt1({ clusters: { a1: { env: 'prod' }, zz: { env: 'canary' } } });
  const strategy = progressive({ canary: CANARY, maxConcurrency: { count: 1 }, maxFailures: { count: 1 } });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['zz'], TARGET_NOT_FOUND, T0 + MIN + SEC);
  world.step(v2, strategy, T0 + MIN + 2 * SEC); // one failure tolerated: wave 2 goes on
  world.roll(['a1'], TARGET_NOT_FOUND, T0 + MIN + 3 * SEC);
  const halted = world.step(v2, strategy, T0 + MIN + 4 * SEC);
  assert.equal(halted.status.state, 'Halted');
  assert.equal(halted.status.halted?.cluster, 'zz', 'the canary failed first, though a1 sorts first by name');
});

test('a joiner no earlier copy fits (their Gateways are not all its own) waits for its wave with no copy', () => {
  // Gateway a on c1, c2; the policy targets a and b; the joiner zz has b only.
  const placement = { a: ['c1', 'c2'], b: [] as string[] };
  const world = new World({ clusters: { c1: {}, c2: {}, zz: {} }, kind: 'BackendTrafficPolicy', placement });
  const spec = (t: string) => ({ timeout: { http: { requestTimeout: t } } });
  const v1 = hubPolicy(1, spec('5s'), { kind: 'BackendTrafficPolicy', gateways: ['a', 'b'] });
  world.step(v1, ALL, T0);
  world.roll(['c1', 'c2'], EG_ACCEPTED, T0 + SEC);
  const strategy = progressive({ maxConcurrency: { count: 1 } });
  const v2 = hubPolicy(2, spec('9s'), { kind: 'BackendTrafficPolicy', gateways: ['a', 'b'] });
  world.step(v2, strategy, T0 + MIN);
  world.placement = { a: ['c1', 'c2'], b: ['zz'] };
  const plan = world.step(v2, strategy, T0 + MIN + SEC);
  assert.ok(plan.waiting.includes('zz'), JSON.stringify(plan.clusters.zz));
  assert.equal(plan.clusters.zz?.phase, 'Waiting');
  assert.equal(world.fleet.observed('zz'), undefined, 'no copy of Gateway a placed where only b is');
});

test('a halt stands (recorded in the policy\'s status) when the failed cluster succeeds later; a resume or a new edit ends it', () => {
  const { world } = settledAt1({ clusters: { c1: {}, c2: {} } });
  const strategy = progressive({ maxConcurrency: { count: 1 } });
  const v2 = hubPolicy(2, RULES_2);
  world.step(v2, strategy, T0 + MIN);
  world.roll(['c1'], TARGET_NOT_FOUND, T0 + MIN + SEC);
  const halted = world.step(v2, strategy, T0 + MIN + 2 * SEC);
  assert.equal(halted.status.state, 'Halted');
  const { cluster, reason, message } = halted.status.halted!;
  world.haltedRecord = { revision: 2, cause: { cluster, reason, message } };
  // c1's controller now accepts revision 2 (say its Gateway was created): the rollout stays halted, c2 untouched.
  world.roll(['c1'], ENFORCED, T0 + 2 * MIN);
  const still = world.step(v2, strategy, T0 + 2 * MIN + SEC);
  assert.equal(still.status.state, 'Halted');
  assert.deepEqual(still.status.halted, { cluster: 'c1', reason: 'TargetNotFound', message: 'AuthPolicy target shop was not found', rolledBack: false });
  assert.ok(still.keep.has('c2'));
  assert.deepEqual(world.revisions(), { c1: 2, c2: 1 });
  // Without the record it would go on by itself.
  const unlatched = { ...world.haltedRecord };
  world.haltedRecord = undefined;
  assert.equal(world.plan(v2, strategy, T0 + 2 * MIN + 2 * SEC).status.state, 'Progressing');
  // A resume for revision 2 goes on.
  world.haltedRecord = unlatched;
  const resumed = world.step(hubPolicy(2, RULES_2, { annotations: { 'policysync.kuadrant.io/rollout-resume': '2' } }), strategy, T0 + 3 * MIN);
  assert.equal(resumed.status.state, 'Progressing');
  assert.deepEqual(world.revisions(), { c1: 2, c2: 2 });
});

// ---------------------------------------------------------------------------------------------------------
// Clusters awaiting their spoke's report (core/spoke/firstcopy.ts): left out of the plan, never Complete

test('Progressive: a rollout with clusters awaiting their spoke report is not Complete, so they get waves when their reports come', () => {
  const input = (awaiting?: string[]): RolloutInput => ({
    strategy: progressive({ canary: CANARY, maxConcurrency: { count: 1 } }),
    revision: 1,
    resume: false,
    clusters: [],
    ...(awaiting ? { awaiting } : {}),
    soak: new Map(),
    now: T0,
    maxWorkBytes: MAX_WORK_BYTES,
  });
  assert.equal(planRollout(input()).status.state, 'Complete', 'no cluster and none awaiting: nothing to roll out');
  const held = planRollout(input(['c1', 'canary']));
  assert.equal(held.status.state, 'Progressing');
  assert.match(held.status.message, /waiting for the spoke reports of c1, canary/);
  assert.equal(held.write.size, 0);

  // Every placed cluster done, one still awaiting its report: Progressing, not Complete.
  const { world, v1 } = settledAt1();
  const done = world.plan(v1, progressive({ canary: CANARY }), T0 + MIN);
  assert.equal(done.status.state, 'Complete');
  const withAwaiting = planRollout({ ...world.last!.input, awaiting: ['late'] });
  assert.equal(withAwaiting.status.state, 'Progressing');
  assert.match(withAwaiting.status.message, /waiting for the spoke reports of late/);
});

// Clusters no copy of the revision can be sent to (too large, variants failing): they keep theirs, never Complete

test('Progressive: a rollout with clusters its copy cannot be sent to is not Complete while they keep their copy', () => {
  const { world, v1 } = settledAt1();
  const done = world.plan(v1, progressive({ canary: CANARY }), T0 + MIN);
  assert.equal(done.status.state, 'Complete');
  const unreached = planRollout({ ...world.last!.input, unreached: [{ cluster: 'c9', reason: 'TooLarge' }, { cluster: 'c8', reason: 'VariantValueMissing' }] });
  assert.equal(unreached.status.state, 'Progressing', 'the revision is not on every cluster the policy is placed on');
  assert.match(unreached.status.message, /not sent to c9 \(TooLarge\), c8 \(VariantValueMissing\), which keep the copy they run/);
  assert.equal(unreached.write.has('c9') || unreached.keep.has('c9'), false, 'the planner writes nothing for a cluster it was not given');
  // Once the cluster can be sent its copy again, the rollout completes as before.
  assert.equal(planRollout({ ...world.last!.input, unreached: [] }).status.state, 'Complete');
  // Both kinds of cluster left out are named.
  const both = planRollout({ ...world.last!.input, awaiting: ['late'], unreached: [{ cluster: 'c9', reason: 'TooLarge' }] });
  assert.match(both.status.message, /waiting for the spoke reports of late; not sent to c9 \(TooLarge\)/);
});
