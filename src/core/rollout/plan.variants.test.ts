// A PolicyVariant change rolled out like an edit (docs/design/variants.md#the-revision-a-cluster-runs), on the
// simulated fleet of testkit/rolloutfleet.ts: at the same policy generation, only the clusters whose copy the
// variant changes are written, in their wave, gated on their controller's verdict about that copy; a refusal halts
// and rolls back as for an edit; removing the variant is itself a change, which ends the halt.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../k8s/objects.ts';
import { VARIANTS_ANNOTATION } from '../metadatakeys.ts';
import { parseVariant } from '../variants/policyvariant.ts';
import { applyMergePatch } from '../variants/mergepatch.ts';
import { renderCopy } from '../variants/render.ts';
import { ENFORCED, MIN, RULES_1, RULES_2, SEC, T0, TARGET_NOT_FOUND, World, hubPolicy, progressive } from '../../../testkit/rolloutfleet.ts';
import { rolloutHold, workCopy } from './revision.ts';
import { ALL } from './strategy.ts';

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
