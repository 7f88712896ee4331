// The short seeded soak on the real plane (issue 29; docs/reliability.md#seeded-soak): the suite's fixed-seed
// run of `npm run soak`, one round per fault kind, each kind in turn — the two hub replicas as processes, the
// spoke agents, OCM's registration, placement and work agents of the shared sandbox. The long runs (hours, many
// seeds) are `npm run soak` on a machine of its own; this one keeps every fault kind exercised on every change.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import { generate } from '../../testkit/soak/generator.ts';
import { FAULT_KINDS } from '../../testkit/soak/ops.ts';
import { runSoak } from '../../testkit/soak/runner.ts';
import { summarize } from '../../testkit/soak/summary.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

const SEED = 2029;

test('a short seeded soak on the real plane: every fault kind once, no unjustified spoke deletion, no takeover, no copy joining a local policy, no crossing, every drift edit reported and put back, no copy lingering past the bound, and every round converges to the model', async () => {
  const sandbox = await testSandbox();
  const drawn = generate({ seed: SEED, ops: FAULT_KINDS.length * 5, opsPerRound: [3, 5], faultOrder: 'in-turn' });
  const plan = { ...drawn, rounds: drawn.rounds.slice(0, FAULT_KINDS.length) };
  assert.equal(plan.rounds.length, FAULT_KINDS.length, 'the plan has one round per fault kind');
  const result = await runSoak({
    sandbox,
    plan,
    // Past the lingering bound (checks.ts LINGER_BOUND_MS, 120 s): a copy OCM's agent left behind is mended within it.
    convergeBoundMs: 150_000,
    artifactsDir: join(repoRoot, '.local', 'soak-test'),
    log: () => undefined,
  });
  const summary = summarize(result);
  assert.deepEqual(result.violations, [], summary);
  assert.equal(result.rounds, FAULT_KINDS.length, summary);
  assert.deepEqual(Object.keys(result.faultsByKind).sort(), [...FAULT_KINDS].sort(), `every fault kind injected once\n${summary}`);
  assert.ok(result.writesChecked > 0, `the spokes' audit logs held writes of synced kinds to judge\n${summary}`);
});
