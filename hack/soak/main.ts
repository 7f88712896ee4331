// `npm run soak` — issue 29's seeded random soak on the real plane (docs/reliability.md#seeded-soak): a
// generator of user and fleet operations interleaved with faults (testkit/soak/generator.ts), a pure model of
// what each spoke should run (testkit/soak/model.ts), and checks from the spokes' audit logs and objects
// (testkit/soak/checks.ts).
//
//   npm run soak -- --seed 7 --ops 60                  60 operations (rounds of 3–7, one fault each)
//   npm run soak -- --seed 7 --ops 500 --duration 10m  stop starting rounds after 10 minutes
//   npm run soak -- --replay .local/soak/seed-7-…/executed.json   the same rounds again
//   options: --root DIR (sandbox, default $POLICY_SYNC_SANDBOX_ROOT or .local/soak-sandbox; started if down),
//   --faults a,b (only these fault kinds), --bound 3m (convergence bound), --keep (leave the run's objects)
// Exit 1 when any check failed; the summary then holds the operation log and the command to replay it.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { duration } from '../../src/cli/duration.ts';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { generate } from '../../testkit/soak/generator.ts';
import { FAULT_KINDS, type FaultKind, type SoakPlan } from '../../testkit/soak/ops.ts';
import { runSoak } from '../../testkit/soak/runner.ts';
import { summarize } from '../../testkit/soak/summary.ts';

function int(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`expected a whole number, got "${value}"`);
  return n;
}

function faultList(value: string): FaultKind[] {
  const kinds = value.split(',').map((s) => s.trim()).filter(Boolean);
  for (const k of kinds) if (!FAULT_KINDS.includes(k as FaultKind)) throw new InvalidArgumentError(`unknown fault ${k} (known: ${FAULT_KINDS.join(', ')})`);
  return kinds as FaultKind[];
}

const program = new Command('soak')
  .option('--seed <n>', 'the seed (default: random)', int)
  .option('--ops <n>', 'operations in all', int, 60)
  .option('--duration <d>', 'start no round after this long (e.g. 10m)', duration)
  .option('--replay <file>', 'run the rounds of an executed.json again')
  .option('--faults <kinds>', `only these fault kinds (${FAULT_KINDS.join(', ')})`, faultList)
  .option('--bound <d>', 'convergence bound after the faults of a round stop', duration, 180_000)
  .option('--root <dir>', 'sandbox root', process.env.POLICY_SYNC_SANDBOX_ROOT ?? join(repoRoot, '.local', 'soak-sandbox'))
  .option('--keep', "leave the run's objects in place", false)
  .parse();

const flags = program.opts<{ seed?: number; ops: number; duration?: number; replay?: string; faults?: FaultKind[]; bound: number; root: string; keep: boolean }>();
const plan: SoakPlan = flags.replay
  ? (JSON.parse(readFileSync(flags.replay, 'utf8')) as SoakPlan)
  : generate({ seed: flags.seed ?? Math.floor(Math.random() * 2 ** 31), ops: flags.ops, ...(flags.faults ? { faults: flags.faults } : {}) });
const sandbox = await Sandbox.up({ root: resolve(flags.root) });
if (!sandbox.runsRegistration) throw new Error(`the sandbox under ${flags.root} runs without OCM registration: the soak needs it (start one without --without-registration)`);
const result = await runSoak({
  sandbox,
  plan,
  ...(flags.duration === undefined ? {} : { durationMs: flags.duration }),
  convergeBoundMs: flags.bound,
  artifactsDir: join(repoRoot, '.local', 'soak'),
  keep: flags.keep,
});
console.log(summarize(result));
process.exit(result.violations.length === 0 ? 0 : 1);
