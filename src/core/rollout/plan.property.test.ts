// Properties of the rollout planner (plan.ts) over generated fleets, strategies and histories, played on the
// simulated fleet of testkit/rolloutfleet.ts (the hub writes what each plan says, the work agents apply it,
// the spoke controllers judge it; edits, edits back, relabels, clusters joining and leaving, failures, apply
// errors, resumes, restarts that lose the soak clocks, time passing): whatever happens, a plan
//   - never deletes: a cluster with a work is written or kept;
//   - never gives a cluster the new revision beyond the current wave: every cluster of an earlier wave already
//     runs it and is done with it (succeeded or failed), unless the cluster gets a spec it runs or ran already,
//     or the rollout is proven (completed);
//   - during a halt, writes nothing new: a cluster keeps the revision it runs, or returns to its previous copy
//     (a rollback), and one with no copy gets no copy of the halted revision.
// The waves are computed here from the strategy, independently of the planner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkProperty } from '../../../testkit/arbitraries.ts';
import {
  ENFORCED,
  ENFORCING,
  MISSING_RESOURCE,
  OVERRIDDEN,
  RULES_1,
  RULES_2,
  RULES_3,
  SEC,
  T0,
  TARGET_NOT_FOUND,
  World,
  hubPolicy,
  type Kind,
  type Verdict,
} from '../../../testkit/rolloutfleet.ts';
import { selectorMatches } from '../k8s/labelselector.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { ROLLOUT_RESUME_ANNOTATION } from '../metadatakeys.ts';
import type { RolloutInput, RolloutPlan } from './plan.ts';
import { copyRevision, previousCopy, rolloutHold, sameSpec, workCopy } from '../works/revision.ts';
import { ALL, PROGRESSIVE_DEFAULTS, resolveCount, type ClusterCount, type RolloutStrategy } from '../params/strategy.ts';

const CLUSTERS = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'] as const;
const RULES = [RULES_1, RULES_2, RULES_3];
const VERDICTS: (Verdict | undefined)[] = [ENFORCED, ENFORCED, TARGET_NOT_FOUND, MISSING_RESOURCE, OVERRIDDEN, ENFORCING, undefined];
const MIN = 60 * SEC;

const count: fc.Arbitrary<ClusterCount> = fc.oneof(fc.integer({ min: 0, max: 3 }).map((n) => ({ count: n })), fc.constantFrom(10, 25, 50, 100).map((p) => ({ percent: p })));
const progressive: fc.Arbitrary<RolloutStrategy> = fc
  .record({
    maxConcurrency: count,
    minSuccessTimeMs: fc.constantFrom(0, 30 * SEC),
    progressDeadlineMs: fc.constantFrom(undefined, 2 * MIN, 10 * MIN),
    maxFailures: count,
    successWhen: fc.constantFrom('Enforced' as const, 'Accepted' as const),
    onFailure: fc.constantFrom('Hold' as const, 'Rollback' as const),
    canary: fc.boolean(),
  })
  .map(({ canary, progressDeadlineMs, ...s }): RolloutStrategy => ({
    type: 'Progressive',
    ...PROGRESSIVE_DEFAULTS,
    ...s,
    ...(progressDeadlineMs === undefined ? { progressDeadlineMs: undefined } : { progressDeadlineMs }),
    ...(canary ? { canary: { matchLabels: { env: 'canary' } } } : {}),
  }));
const strategy = fc.oneof({ weight: 5, arbitrary: progressive }, { weight: 1, arbitrary: fc.constant(ALL) });

/** What users, the fleet and the hub do, one step at a time. */
type Op =
  | { op: 'edit'; rules: number }
  | { op: 'relabel' }
  | { op: 'step'; after: number }
  | { op: 'roll'; clusters: string[]; verdict: number; after: number }
  | { op: 'applyError'; cluster: string }
  | { op: 'resume' }
  | { op: 'restart' }
  | { op: 'join'; cluster: string; gateway: number }
  | { op: 'leave'; cluster: string }
  | { op: 'strategy'; strategy: RolloutStrategy };

const cluster = fc.constantFrom(...CLUSTERS);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ op: fc.constant('edit' as const), rules: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'relabel' as const }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('step' as const), after: fc.constantFrom(0, SEC, 40 * SEC, 3 * MIN) }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('roll' as const), clusters: fc.subarray([...CLUSTERS], { minLength: 1 }), verdict: fc.nat(VERDICTS.length - 1), after: fc.constantFrom(SEC, 40 * SEC) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('applyError' as const), cluster }) },
  { weight: 1, arbitrary: fc.constant({ op: 'resume' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'restart' as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('join' as const), cluster, gateway: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('leave' as const), cluster }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('strategy' as const), strategy }) },
);

const fleet = fc.record({
  kind: fc.constantFrom<Kind>('AuthPolicy', 'BackendTrafficPolicy'),
  /** Clusters placed at first, and which of them are canaries. */
  clusters: fc.subarray([...CLUSTERS], { minLength: 1 }),
  canaries: fc.subarray([...CLUSTERS]),
  strategy,
  history: fc.array(op, { minLength: 1, maxLength: 30 }),
});

/** The waves of a Progressive rollout, from the strategy alone: canaries first, then the rest, by name, cut by maxConcurrency. */
function expectedWaves(input: RolloutInput, s: Extract<RolloutStrategy, { type: 'Progressive' }>): string[][] {
  const R = input.revision;
  const members = input.clusters.filter((c) => !(rolloutHold(c.observed)?.revision === R && rolloutHold(c.observed)?.cause === 'Joined'));
  const byName = members.map((c) => c.cluster).sort();
  const labels = new Map(input.clusters.map((c) => [c.cluster, c.labels]));
  const first = s.canary ? byName.filter((c) => selectorMatches(s.canary, labels.get(c)!)) : [];
  const rest = byName.filter((c) => !first.includes(c));
  const size = resolveCount(s.maxConcurrency, members.length, 1);
  const cut = (list: string[]) => Array.from({ length: Math.ceil(list.length / size) }, (_, i) => list.slice(i * size, (i + 1) * size));
  return [...cut(first), ...cut(rest)];
}

/** What every plan must hold, whatever the history; `completed`: the revisions whose rollout completed so far. */
function checkPlan(input: RolloutInput, plan: RolloutPlan, completed: ReadonlySet<number>): void {
  const R = input.revision;
  for (const c of input.clusters) {
    if (c.observed) assert.ok(plan.write.has(c.cluster) || plan.keep.has(c.cluster), `${c.cluster}: a cluster with a work is never left without one (no deletion)`);
  }
  if (input.strategy.type !== 'Progressive') return;
  const s = input.strategy;
  const observed = new Map(input.clusters.map((c) => [c.cluster, c.observed]));
  const runsR = (name: string) => {
    const work = observed.get(name);
    const hold = rolloutHold(work);
    return copyRevision(workCopy(work)) === R && !(hold?.revision === R);
  };
  const waves = expectedWaves(input, s);
  const halted = plan.status.state === 'Halted' || (input.halted !== undefined && !input.resume && input.completed !== true);

  for (const [name, written] of plan.write) {
    const work = observed.get(name);
    const copy = workCopy(written);
    const current = workCopy(work);
    const previous = previousCopy(work);
    const runsOrRan = sameSpec(copy, current) || sameSpec(copy, previous);

    // Beyond the current wave: the new revision reaches a cluster only once every earlier wave runs it and is done.
    if (copyRevision(copy) === R && !runsR(name) && !runsOrRan && input.completed !== true) {
      const wave = waves.findIndex((w) => w.includes(name));
      // A cluster held Joined is in no wave: it gets the revision once every wave is done.
      const before = wave < 0 ? waves.flat() : waves.slice(0, wave).flat();
      for (const earlier of before) {
        assert.ok(runsR(earlier), `${name} (wave ${wave + 1}) gets revision ${R} while ${earlier} of an earlier wave does not run it`);
        assert.ok(['Succeeded', 'Failed'].includes(plan.clusters[earlier]!.phase), `${name} (wave ${wave + 1}) gets revision ${R} while ${earlier} of an earlier wave is ${plan.clusters[earlier]!.phase}`);
      }
    }

    // A cluster with no copy that joined during the rollout gets the last completed revision, held: never one
    // whose own rollout did not complete (that would reach it outside any wave).
    const hold = rolloutHold(written);
    if (!work && hold?.cause === 'Joined') {
      assert.ok(completed.has(copyRevision(copy)!), `${name} (no copy) is given revision ${copyRevision(copy)}, whose rollout never completed (completed: ${[...completed].join(', ') || 'none'})`);
    }

    // Halted: nothing new, only a rollback to the cluster's previous copy.
    if (halted) {
      if (!work) assert.notEqual(copyRevision(copy), R, `${name}: no copy of the halted revision ${R} for a cluster that had none`);
      else {
        const keepsItsRevision = copyRevision(copy) === copyRevision(current);
        assert.ok(keepsItsRevision || runsOrRan, `${name}: written during the halt with revision ${copyRevision(copy)}, while it runs ${copyRevision(current)} and ran ${copyRevision(previous)}`);
        if (!keepsItsRevision && sameSpec(copy, previous) && !sameSpec(copy, current) && copyRevision(copy) !== R) {
          assert.equal(rolloutHold(written)?.cause, 'RolledBack', `${name}: a return to the previous copy is a rollback, held`);
        }
      }
    }
  }
}

test('property: over generated fleets and histories, a plan never deletes, never writes past the current wave, and during a halt only rolls back', (t) => {
  let plans = 0;
  checkProperty(t, 120, [fleet], ({ kind, clusters, canaries, strategy: initial, history }) => {
    const labels = Object.fromEntries(CLUSTERS.map((c) => [c, { env: canaries.includes(c) ? 'canary' : 'prod' }]));
    const placement: Record<string, string[]> = kind === 'AuthPolicy' ? { shop: [...clusters] } : { shop: [...clusters], gw2: clusters.slice(0, 1) };
    const world = new World({ clusters: labels, kind, placement });
    // Revisions whose rollout completed: placed on every cluster (All), or recorded Complete (Progressive).
    const completed = new Set<number>();
    world.check = (input, plan) => {
      plans += 1;
      checkPlan(input, plan, completed);
    };
    const gateways = kind === 'AuthPolicy' ? ['shop'] : ['shop', 'gw2'];
    let strategy = initial;
    let generation = 1;
    let rules = 0;
    let relabels = 0;
    let resume = false;
    let now = T0;
    const policy = (): KubeObject =>
      hubPolicy(generation, RULES[rules]!, {
        kind,
        gateways,
        labels: { relabel: String(relabels) },
        ...(resume ? { annotations: { [ROLLOUT_RESUME_ANNOTATION]: String(generation) } } : {}),
      });
    const step = () => {
      const plan = world.step(policy(), strategy, now);
      // The hub records the rollout on the policy's status (report.ts: a Progressive one only).
      world.recorded = plan.status.strategy === 'Progressive' ? plan.status : undefined;
      // All places every cluster at once, nothing gating it: that revision is as complete as it gets.
      if (plan.status.state === 'Complete' || plan.status.strategy === 'All') completed.add(generation);
    };
    step();
    for (const o of history) {
      switch (o.op) {
        case 'edit':
          generation += 1;
          rules = o.rules;
          resume = false;
          break;
        case 'relabel':
          relabels += 1;
          break;
        case 'step':
          now += o.after;
          step();
          break;
        case 'roll':
          now += o.after;
          world.roll(o.clusters.filter((c) => world.fleet.spokes.has(c)), VERDICTS[o.verdict], now);
          break;
        case 'applyError':
          if (world.fleet.spokes.has(o.cluster)) world.fleet.agent(o.cluster, now, 'namespaces "shop" not found');
          break;
        case 'resume':
          resume = true;
          break;
        case 'restart':
          // A new leader: the soak clocks are lost (the records in the works and the policy's status are not).
          world.soak = new Map();
          break;
        case 'join': {
          const gateway = gateways[o.gateway % gateways.length]!;
          if (!world.placement[gateway]!.includes(o.cluster)) world.placement[gateway] = [...world.placement[gateway]!, o.cluster];
          break;
        }
        case 'leave':
          for (const g of gateways) world.placement[g] = world.placement[g]!.filter((c) => c !== o.cluster);
          break;
        case 'strategy':
          strategy = o.strategy;
          break;
      }
    }
  });
  t.diagnostic(`${plans} plans checked`);
});

// Found by the property above: a new policy rolling out Progressive (c1 reached, c2 waiting with no copy), edited
// before its rollout completed. c2 has no work, so the planner took it for a cluster that joined, and gave it the
// copy c1 runs — revision 1, whose rollout never completed — at once, outside any wave. The policy's status now
// records the last revision whose rollout completed, and a joiner gets a copy of that revision only.
test('regression: a cluster never reached by an unfinished rollout gets no copy of it when the policy is edited; it waits for its wave', () => {
  const world = new World({ clusters: { c1: { env: 'prod' }, c2: { env: 'prod' } }, kind: 'AuthPolicy' });
  const strategy: RolloutStrategy = { type: 'Progressive', ...PROGRESSIVE_DEFAULTS, maxConcurrency: { count: 1 } };
  const first = world.step(hubPolicy(1, RULES_1), strategy, T0);
  assert.deepEqual([...first.write.keys()], ['c1']);
  assert.deepEqual(first.waiting, ['c2']);
  world.recorded = first.status;
  const edited = world.step(hubPolicy(2, RULES_2), strategy, T0 + SEC);
  assert.deepEqual([...edited.write.keys()], ['c1'], 'c2 gets neither revision 1 (never completed) nor 2 (not its wave)');
  assert.deepEqual(edited.waiting, ['c2']);
  assert.equal(edited.status.lastCompleted, undefined);
});

test('regression: a cluster joining after a completed rollout still gets that revision, held, while the next one rolls out', () => {
  const world = new World({ clusters: { c1: { env: 'prod' }, c2: { env: 'prod' }, c3: { env: 'prod' } }, kind: 'AuthPolicy', placement: { shop: ['c1', 'c2'] } });
  const strategy: RolloutStrategy = { type: 'Progressive', ...PROGRESSIVE_DEFAULTS, maxConcurrency: { count: 1 } };
  const v1 = hubPolicy(1, RULES_1);
  world.recorded = world.step(v1, strategy, T0).status;
  world.roll(['c1'], ENFORCED, T0 + SEC);
  world.recorded = world.step(v1, strategy, T0 + 2 * SEC).status;
  world.roll(['c2'], ENFORCED, T0 + 3 * SEC);
  const done = world.step(v1, strategy, T0 + 4 * SEC);
  assert.equal(done.status.state, 'Complete');
  world.recorded = done.status;
  world.placement.shop = ['c1', 'c2', 'c3'];
  const edited = world.step(hubPolicy(2, RULES_2), strategy, T0 + 5 * SEC);
  assert.equal(copyRevision(workCopy(edited.write.get('c3'))), 1, 'the joiner gets the completed revision');
  assert.equal(rolloutHold(edited.write.get('c3'))?.cause, 'Joined');
  assert.equal(edited.status.lastCompleted, 1, 'carried while revision 2 rolls out');
});
