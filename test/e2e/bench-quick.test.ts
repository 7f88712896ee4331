// Keeps the benchmark working: `npm run bench -- --quick` (P=20, C=3, K=3), and workload 6 alone (`--only variants`),
// as child processes, each on a sandbox of its own that it stops and deletes afterwards. Timings are not asserted — machines are shared
// and noisy — only that every workload ran and reported numbers, and that a progressive rollout took at least
// the waits it asks for (its table is shown as diagnostics).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import type { BenchResult, VariantsOnlyResult, VariantsResult } from '../../hack/bench/report.ts';

const root = join(repoRoot, '.local', 'bench-quick-sandbox');
const json = join(root, 'result.json');

function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

function isNumber(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}

async function bench(t: TestContext, args: string[]): Promise<unknown> {
  if (existsSync(json)) rmSync(json);
  const started = Date.now();
  const { code, stdout, stderr } = await run('npm', ['run', 'bench', '--', ...args, '--root', root, '--json', json, '--down', '--purge']);
  const tail = `stdout:\n${stdout.split('\n').slice(-40).join('\n')}\nstderr:\n${stderr.split('\n').slice(-40).join('\n')}`;
  assert.equal(code, 0, tail);
  t.diagnostic(`quick run (${args.join(' ')}): ${((Date.now() - started) / 1000).toFixed(0)} s (sandbox start and stop included)`);
  for (const line of stdout.split('\n').filter((l) => l.startsWith('|'))) t.diagnostic(line);
  return JSON.parse(readFileSync(json, 'utf8'));
}

/**
 * Workload 6: its fan-out in `rounds` rounds against bare creates of the same rendered works; one variant edit
 * rewrites the one work whose copy it changes, one cluster label read by every variant the P works there.
 */
function checkVariants(v: VariantsResult, policies: number, clusters: number, rounds: number): void {
  assert.equal(v.rounds.length, rounds, `variants rounds: ${JSON.stringify(v.rounds)}`);
  assert.ok(isNumber(v.ratioBareCreate) && v.memory.works === policies * clusters, `variants: ${JSON.stringify({ ratio: v.ratioBareCreate, memory: v.memory })}`);
  assert.deepEqual(v.writes.edit.changed.map((key) => key.split('/')[0]), [v.editedCluster], `the variant edit: ${JSON.stringify(v.writes.edit)}`);
  assert.equal(v.writes.label.changed.length, policies, `the label change: ${JSON.stringify(v.writes.label)}`);
  assert.ok(v.writes.label.changed.every((key) => key.split('/')[0] === v.editedCluster), `the label change, on ${v.editedCluster} only: ${JSON.stringify(v.writes.label.changed)}`);
}

test('npm run bench -- --quick runs all seven workloads and writes their numbers', { timeout: 900_000 }, async (t) => {
  const r = (await bench(t, ['--quick'])) as BenchResult;
  const { policies, clusters, feedbackChanges } = r.params;
  assert.deepEqual([r.version, r.mode, policies, clusters, feedbackChanges, r.params.rounds, r.params.quick], [3, 'default', 20, 3, 3, 2, true]);
  // 1. fan-out, against both baselines
  const { policySync, bareCreate, bare, ocm } = r.fanout;
  for (const [what, x] of Object.entries({ policySync, bareCreate, bare, ocm })) {
    assert.ok(x && isNumber(x.ms) && x.ms > 0, `fan-out ${what}: ${JSON.stringify(x)}`);
    assert.equal(x.works, policies * clusters, `fan-out ${what} counted every work`);
  }
  const { ratioBareCreate, ratioBareSsa, ratioOcm, rounds } = r.fanout;
  assert.ok(isNumber(ratioBareCreate) && isNumber(ratioBareSsa) && isNumber(ratioOcm), `ratios: ${JSON.stringify(r.fanout)}`);
  // Two rounds of OCM, bare creates and policy-sync, each timed in full (the second after the resets between them).
  assert.equal(rounds?.length, 2, `rounds: ${JSON.stringify(rounds)}`);
  for (const round of rounds ?? []) {
    assert.ok(round.ocmMs > 0 && round.bareCreateMs > 0 && round.policySyncMs > 0 && isNumber(round.ratio) && isNumber(round.ratioOcm), `round: ${JSON.stringify(round)}`);
  }
  assert.equal(ratioBareCreate, (rounds[0]!.ratio + rounds[1]!.ratio) / 2, 'the headline ratio is the median of the rounds');
  assert.equal(ratioOcm, (rounds[0]!.ratioOcm + rounds[1]!.ratioOcm) / 2, 'the ratio to OCM is the median of the rounds');
  // 2. writes
  for (const [what, w] of Object.entries(r.writes)) {
    assert.ok(isNumber(w.total) && isNumber(w.minimum), `writes ${what}: ${JSON.stringify(w)}`);
  }
  assert.ok(r.writes.fanout.total >= policies * clusters, `the counters saw the fan-out's writes: ${JSON.stringify(r.writes.fanout)}`);
  // 3. memory and start-up
  for (const x of [r.memory.fanoutPeakRssMiB, r.memory.restartPeakRssMiB, r.startup.cachesSyncedMs, r.startup.passMs]) {
    assert.ok(isNumber(x) && x > 0, `memory and start-up: ${JSON.stringify({ memory: r.memory, startup: r.startup })}`);
  }
  // 4. feedback latency
  assert.equal(r.feedback.changes, feedbackChanges);
  assert.equal(r.feedback.samples.length, feedbackChanges);
  for (const s of [r.feedback.totalMs, r.feedback.ocmMs, r.feedback.oursMs]) {
    assert.ok(isNumber(s.median) && isNumber(s.p99), `feedback: ${JSON.stringify(r.feedback)}`);
  }
  // 5. a progressive rollout (maxConcurrency 1: a wave a cluster) against its waits, and the same edit under All
  const ro = r.rollout;
  assert.equal(ro.clusters, clusters);
  assert.equal(ro.progressive.waves, clusters, `rollout: ${JSON.stringify(ro)}`);
  assert.equal(ro.progressive.perWave.length, clusters);
  assert.ok(ro.progressive.totalMs >= ro.progressive.waitsMs && isNumber(ro.ratioToWaits) && isNumber(ro.overheadPerWaveToAll), `rollout: ${JSON.stringify(ro)}`);
  assert.ok(isNumber(ro.all.worksMs) && isNumber(ro.all.enforcedMs), `rollout under All: ${JSON.stringify(ro.all)}`);

  // 6. per-cluster copies: their fan-out in rounds against bare creates of the same rendered works; one variant edit
  // rewrites the one work whose copy it changes, one cluster label read by every variant the P works there.
  assert.ok(r.variants, 'workload 6 ran');
  checkVariants(r.variants, policies, clusters, 2);

  // 7. the evidence gate: the same P×C works placed with every cluster's report read first, and without agents.
  const e = r.evidence;
  assert.ok(e, 'workload 7 ran');
  assert.equal(e.works, policies * clusters);
  assert.equal(e.clusters, clusters);
  assert.ok(isNumber(e.ratio) && e.gatedMs > 0 && e.ungatedMs > 0, `evidence: ${JSON.stringify(e)}`);
});

test('npm run bench -- --only variants runs workload 6 alone, on a world of its own, and profiles its last fan-out', { timeout: 600_000 }, async (t) => {
  const r = (await bench(t, ['--quick', '--only', 'variants', '--rounds', '1', '--cpu-prof'])) as VariantsOnlyResult;
  assert.deepEqual([r.version, r.mode, r.params.policies, r.params.clusters, r.params.rounds], [3, 'variants', 20, 3, 1]);
  checkVariants(r.variants, 20, 3, 1);
  assert.ok(r.profile?.fanout && r.profile.fanout.totalMs > 0, `the variants fan-out's controller was profiled: ${JSON.stringify(r.profile)}`);
});
