// A PolicyVariant change rolled out like an edit (docs/design/variants.md#the-revision-a-cluster-runs), on the
// simulated fleet of testkit/rolloutfleet.ts: at the same policy generation, only the clusters whose copy the
// variant changes are written, in their wave, gated on their controller's verdict about that copy; a refusal halts
// and rolls back as for an edit; removing the variant is itself a change, which ends the halt.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../k8s/objects.ts';
import { REVISION_ANNOTATION, VARIANTS_ANNOTATION } from '../metadatakeys.ts';
import { parseVariant } from '../variants/policyvariant.ts';
import { applyMergePatch } from '../variants/mergepatch.ts';
import { renderCopy } from '../variants/render.ts';
import { ENFORCED, MIN, RULES_1, RULES_2, SEC, T0, TARGET_NOT_FOUND, World, hubPolicy, progressive } from '../../../testkit/rolloutfleet.ts';
import { copyRevision, copyRevisionTag, rolloutHold, workCopy } from '../works/revision.ts';
import { ALL, type RolloutStrategy } from '../params/strategy.ts';
import type { RolloutPlan } from './plan.ts';

const FOUR = { c1: { env: 'prod' }, c2: { env: 'prod' }, c3: { env: 'prod' }, canary: { env: 'canary' } };
const STRATEGY = progressive({ canary: { matchLabels: { env: 'canary' } }, maxConcurrency: { count: 1 }, onFailure: 'Rollback' });

/** The renderer of one variant that gives `clusters` the rules `rules`. */
function variantGiving(clusters: string[], rules: unknown, generation = 1): (cluster: string, copy: KubeObject) => ReturnType<typeof renderCopy> {
  const parsed = parseVariant({
    apiVersion: 'policysync.kuadrant.io/v1alpha1',
    kind: 'PolicyVariant',
    metadata: { namespace: 'shop', name: 'rules', generation },
    spec: { targetRef: { group: 'kuadrant.io', kind: 'AuthPolicy', name: 'p' }, entries: [{ clusters: { names: clusters }, patch: { spec: { rules } } }] },
  });
  assert.ok(parsed.ok);
  const schema = { ok: true as const, schema: { type: 'object' }, check: () => [] };
  return (cluster, copy) => renderCopy({ copy, cluster: { name: cluster, labels: FOUR[cluster as keyof typeof FOUR] ?? {}, claims: {} }, variants: [parsed.variant], schema });
}

/** The rules a copy carries once the variant's patch (RULES_2) is merged into the policy's (RULES_1). */
const MERGED = applyMergePatch(RULES_1, RULES_2);
const rulesOn = (world: World, cluster: string): unknown => (workCopy(world.fleet.spoke(cluster).work)?.spec as { rules?: unknown } | undefined)?.rules;

test('a variant change for two clusters at the same generation: the canary first, the other in its wave, the rest never written', () => {
  const world = new World({ clusters: FOUR });
  const v1 = hubPolicy(1, RULES_1);
  world.step(v1, ALL, T0);
  world.roll(Object.keys(FOUR), ENFORCED, T0 + 5 * SEC);
  const versions = (): Record<string, string | undefined> => Object.fromEntries(Object.keys(FOUR).map((c) => [c, world.fleet.spoke(c).work.metadata.resourceVersion]));
  const before = versions();

  world.render = variantGiving(['canary', 'c2'], RULES_2);
  const wave1 = world.step(v1, STRATEGY, T0 + MIN);
  assert.equal(wave1.status.revision, 1, 'the same revision');
  assert.ok(wave1.status.variants, 'its rollout names what the copies carry');
  assert.deepEqual(rulesOn(world, 'canary'), MERGED);
  assert.equal(workCopy(world.fleet.spoke('canary').work)?.metadata.annotations?.[VARIANTS_ANNOTATION], 'rules@1');
  assert.deepEqual(rulesOn(world, 'c2'), RULES_1, 'c2 waits for its wave');
  for (const c of ['c1', 'c3', 'c2']) assert.equal(world.fleet.spoke(c).work.metadata.resourceVersion, before[c], `${c} not written`);

  // The canary's controller enforces it and it soaks: c2 (its wave) gets it; c1 and c3, whose copy did not change, never written.
  world.roll(['canary'], ENFORCED, T0 + MIN + SEC);
  world.step(v1, STRATEGY, T0 + 2 * MIN);
  let plan = world.step(v1, STRATEGY, T0 + 10 * MIN);
  for (let i = 0; i < 6 && JSON.stringify(rulesOn(world, 'c2')) !== JSON.stringify(MERGED); i++) {
    world.roll(['c2'], ENFORCED, T0 + (11 + i) * MIN);
    plan = world.step(v1, STRATEGY, T0 + (20 + 10 * i) * MIN);
  }
  assert.deepEqual(rulesOn(world, 'c2'), MERGED);
  world.roll(['c2'], ENFORCED, T0 + 90 * MIN);
  for (let i = 0; i < 8 && plan.status.state !== 'Complete'; i++) plan = world.step(v1, STRATEGY, T0 + (100 + 10 * i) * MIN);
  assert.equal(plan.status.state, 'Complete');
  for (const c of ['c1', 'c3']) assert.equal(world.fleet.spoke(c).work.metadata.resourceVersion, before[c], `${c} never written`);
});

test('a variant change the canary\'s controller refuses halts the rollout and rolls the canary back; removing the variant ends the halt', () => {
  const world = new World({ clusters: FOUR });
  const v1 = hubPolicy(1, RULES_1);
  world.step(v1, ALL, T0);
  world.roll(Object.keys(FOUR), ENFORCED, T0 + 5 * SEC);

  world.render = variantGiving(['canary', 'c1'], RULES_2);
  world.step(v1, STRATEGY, T0 + MIN);
  assert.deepEqual(rulesOn(world, 'canary'), MERGED);
  world.roll(['canary'], TARGET_NOT_FOUND, T0 + MIN + SEC);
  const halted = world.step(v1, STRATEGY, T0 + 2 * MIN);
  assert.equal(halted.status.state, 'Halted');
  assert.equal(halted.status.halted?.cluster, 'canary');
  assert.equal(halted.status.halted?.rolledBack, true);
  assert.deepEqual(rulesOn(world, 'canary'), RULES_1, 'back to the copy it ran');
  const hold = rolloutHold(world.fleet.spoke('canary').work);
  assert.deepEqual([hold?.revision, hold?.cause, hold?.variants], [1, 'RolledBack', halted.status.variants]);
  assert.deepEqual(rulesOn(world, 'c1'), RULES_1, 'c1 never reached');
  world.recorded = halted.status;
  assert.equal(world.step(v1, STRATEGY, T0 + 3 * MIN).status.state, 'Halted', 'the halt stands');

  // The variant deleted: a change of its own (the copies go back to the policy's), and no halt of the variant's holds it.
  world.render = undefined;
  const after = world.step(v1, STRATEGY, T0 + 4 * MIN);
  assert.equal(after.status.variants, undefined);
  assert.notEqual(after.status.state, 'Halted');
  assert.equal(rolloutHold(world.fleet.spoke('canary').work), undefined, 'the hold is dropped');
  assert.deepEqual(rulesOn(world, 'canary'), RULES_1);
});

// The work agent acknowledges a work generation (Applied observes it) before its status feedback sync refreshed the
// values (World.fleet.acknowledge): in between they describe the copy before. A variant change keeps the revision, so
// only the copy's revision tag (`<generation>/<tag>`, core/revisionannotation.ts) tells a verdict on the new copy
// from one on the copy before. Found by the e2e rollout test against Envoy Gateway (recorded Complete before the
// refusal arrived; deleting the refused variant then halted the base copy's rollout for good).

/** A step whose status is recorded, as the hub records it on the policy (the planner's next input). */
function recordedStep(world: World, policy: KubeObject, strategy: RolloutStrategy, now: number): RolloutPlan {
  const plan = world.step(policy, strategy, now);
  world.recorded = plan.status.strategy === 'Progressive' ? plan.status : undefined;
  return plan;
}

const HOLD = progressive({ canary: { matchLabels: { env: 'canary' } }, maxConcurrency: { count: 1 } });
const copyOn = (world: World, cluster: string): KubeObject => workCopy(world.fleet.spoke(cluster).work)!;

test('a variant change is not judged by the previous copy\'s verdict while the status feedback still describes that copy', () => {
  const world = new World({ clusters: FOUR });
  const v1 = hubPolicy(1, RULES_1);
  recordedStep(world, v1, ALL, T0);
  world.roll(Object.keys(FOUR), ENFORCED, T0 + 5 * SEC);
  assert.equal(copyOn(world, 'canary').metadata.annotations?.[REVISION_ANNOTATION], '1', 'a copy no variant changes: the generation alone');

  world.render = variantGiving(['canary', 'c1'], RULES_2);
  recordedStep(world, v1, HOLD, T0 + MIN);
  const tagged = copyOn(world, 'canary');
  assert.match(tagged.metadata.annotations?.[REVISION_ANNOTATION] ?? '', /^1\/[0-9a-f]{10}$/, 'a copy rendered with variants: the generation and its tag');
  assert.equal(copyRevision(tagged), 1);
  // The agent acknowledges the new work generation; its status feedback still describes the previous copy
  // (revision 1 with no tag, its generation, its Enforced verdict).
  world.fleet.acknowledge('canary');
  const plan = recordedStep(world, v1, HOLD, T0 + MIN + SEC);
  assert.notEqual(plan.clusters.canary?.phase, 'Succeeded', `the canary judged by its previous copy's verdict: ${JSON.stringify(plan.clusters.canary)}`);
  assert.equal(plan.clusters.canary?.reason, 'AwaitingVerdict');
  assert.notEqual(plan.status.state, 'Complete', `the variant change recorded complete before any verdict on it: ${JSON.stringify(plan.status)}`);
  assert.deepEqual(rulesOn(world, 'c1'), RULES_1, 'c1 waits for the canary\'s verdict');

  // The feedback catches up with the refusal: the rollout halts on it.
  world.roll(['canary'], TARGET_NOT_FOUND, T0 + 2 * MIN);
  const halted = recordedStep(world, v1, HOLD, T0 + 2 * MIN + SEC);
  assert.equal(halted.status.state, 'Halted');
  assert.equal(halted.status.halted?.cluster, 'canary');
  assert.equal(halted.status.halted?.reason, 'TargetNotFound');
});

test('the way back from a refused variant change (the variant deleted) is not halted for good by the refused copy\'s stale verdict', () => {
  const world = new World({ clusters: FOUR });
  const v1 = hubPolicy(1, RULES_1);
  recordedStep(world, v1, ALL, T0);
  world.roll(Object.keys(FOUR), ENFORCED, T0 + 5 * SEC);
  world.render = variantGiving(['canary', 'c1'], RULES_2);
  recordedStep(world, v1, HOLD, T0 + MIN);
  world.roll(['canary'], TARGET_NOT_FOUND, T0 + MIN + SEC);
  assert.equal(recordedStep(world, v1, HOLD, T0 + 2 * MIN).status.state, 'Halted', 'the variant change halts');

  // The variant deleted: the canary's base copy is written (its revision `1` replaces `1/<tag>`); the agent
  // acknowledges it before its feedback sync, whose values still carry the refused copy's revision, generation and
  // TargetNotFound.
  world.render = undefined;
  recordedStep(world, v1, HOLD, T0 + 3 * MIN);
  assert.equal(copyOn(world, 'canary').metadata.annotations?.[REVISION_ANNOTATION], '1');
  world.fleet.acknowledge('canary');
  const stale = recordedStep(world, v1, HOLD, T0 + 3 * MIN + SEC);
  assert.notEqual(stale.status.state, 'Halted', `the base copy halted on the refused copy's verdict: ${JSON.stringify(stale.status.halted)}`);
  // Then the feedback catches up: the controller enforces the base copy.
  world.roll(['canary'], ENFORCED, T0 + 4 * MIN);
  let plan = recordedStep(world, v1, HOLD, T0 + 5 * MIN);
  for (let i = 0; i < 4 && plan.status.state !== 'Complete'; i++) plan = recordedStep(world, v1, HOLD, T0 + (6 + i) * MIN);
  assert.equal(plan.status.state, 'Complete', `still ${plan.status.state} once the base copy is enforced (after a stale plan said ${stale.status.state}: ${JSON.stringify(stale.status.halted)})`);
});

test('a change of a cluster label a variant reads (the same variants, geo@1, a new value) is not judged by the previous copy\'s verdict', () => {
  const world = new World({ clusters: { canary: { env: 'canary', geo: 'eu' }, c1: { env: 'prod', geo: 'eu' } } });
  const parsed = parseVariant({
    apiVersion: 'policysync.kuadrant.io/v1alpha1',
    kind: 'PolicyVariant',
    metadata: { namespace: 'shop', name: 'geo', generation: 1 },
    spec: { targetRef: { group: 'kuadrant.io', kind: 'AuthPolicy', name: 'p' }, entries: [{ values: [{ path: 'spec.rules.geo', valueFrom: { clusterLabel: { key: 'geo' } } }] }] },
  });
  assert.ok(parsed.ok);
  const schema = { ok: true as const, schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, check: () => [] };
  world.render = (cluster, copy) => renderCopy({ copy, cluster: { name: cluster, labels: world.labels[cluster] ?? {}, claims: {} }, variants: [parsed.variant], schema });
  const v1 = hubPolicy(1, RULES_1);
  recordedStep(world, v1, ALL, T0);
  world.roll(['canary', 'c1'], ENFORCED, T0 + 5 * SEC);
  const before = copyOn(world, 'canary');
  assert.equal(recordedStep(world, v1, HOLD, T0 + MIN).status.state, 'Complete', 'every copy enforced');

  world.labels = { ...world.labels, canary: { env: 'canary', geo: 'us' } };
  const relabelled = recordedStep(world, v1, HOLD, T0 + 2 * MIN);
  assert.equal(relabelled.status.state, 'Progressing');
  const after = copyOn(world, 'canary');
  assert.equal((after.spec as { rules: { geo: string } }).rules.geo, 'us');
  assert.equal(after.metadata.annotations?.[VARIANTS_ANNOTATION], 'geo@1');
  assert.equal(before.metadata.annotations?.[VARIANTS_ANNOTATION], 'geo@1', 'the same variants as before');
  assert.equal(copyRevision(after), 1);
  assert.notEqual(copyRevisionTag(after), copyRevisionTag(before), 'only the tag tells the new copy from the one before');

  world.fleet.acknowledge('canary');
  const stale = recordedStep(world, v1, HOLD, T0 + 2 * MIN + SEC);
  assert.notEqual(stale.clusters.canary?.phase, 'Succeeded', `the canary judged by its previous copy's verdict: ${JSON.stringify(stale.clusters.canary)}`);
  assert.notEqual(stale.status.state, 'Complete', 'the label change recorded complete before any verdict on it');

  world.roll(['canary'], TARGET_NOT_FOUND, T0 + 3 * MIN);
  const halted = recordedStep(world, v1, HOLD, T0 + 3 * MIN + SEC);
  assert.equal(halted.status.state, 'Halted', 'the refusal of the relabelled copy halts the rollout');
  assert.equal(halted.status.halted?.cluster, 'canary');
});
