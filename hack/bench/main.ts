// `npm run bench` — policy-sync's benchmark on the real local plane (docs/benchmarks.md#targets), printed as one table and
// written as JSON (.local/bench/result-<timestamp>.json, and --json <path>). In one run, on one sandbox:
//   1. fan-out of P policies × C clusters, against (a) a bare client writing the same P×C ManifestWorks
//      with as many requests in flight as the controller's writes may have (config.ts BARE_IN_FLIGHT): server-side applied
//      (for the reading), then POSTed — plain creates, the apiserver's floor — and (b) OCM's own
//      ManifestWorkReplicaSet controller (`work manager`, same OCM module, feature gate on) producing the
//      same works from P ManifestWorkReplicaSets over a real C-cluster Placement; OCM, bare creates and
//      policy-sync in --rounds rounds (default 3), each ratio being the median of the rounds';
//   2. writes, from the hub apiserver's apiserver_request_total: during the fan-out, after one policy
//      changed, and over a controller restart on the unchanged world;
//   3. peak RSS of the controller process with the P×C works cached, and its start-up to caches synced and
//      the no-op pass done;
//   4. feedback latency on a real spoke and work agent: a status change on the spoke copy until the hub
//      annotation shows it, split into OCM's part (→ ManifestWork status) and ours (→ annotation);
//   5. a progressive rollout: one policy under a class rolling out Progressive (maxConcurrency 1, minSuccessTime
//      2 s; 1 s with --quick) edited once, from the edit to its status saying Complete, against the waits it asks
//      for (waves × minSuccessTime), wave by wave, with its work writes; and the same edit under All. The harness
//      plays the work agent of the bench clusters for these two policies' works (their status, as OCM's would be).
//   6. per-cluster copies: the fan-out again with a PolicyVariant per policy setting a field of its copy from a
//      label each bench cluster has its own value of, against bare creates of the same rendered works; one
//      variant edit (one work written) and one cluster's label changed (P works written, all on that cluster).
//      Run after 3, on the same policies: the controller then holds these works through 4 and 5.
//   7. the evidence gate: the fan-out with the spoke configuration placed and every cluster's report (as a
//      work agent would feed it back) read before the clock, against the no-agent mode's, back to back; run
//      between 3 and 6.
// With --fleet (P=30 × C=1000 by default; -C 3500 for the telco hub's fleet): policy-sync writing bundles
// (--work-shape bundled) against the bare creates of today's one-work-per-placement shape, a restart, one policy's
// edit on every cluster, memory, etcd per placement, the CLI on one policy, and the scale curve (workloads/fleet.ts).
// With --scale (P=5000 × C=20 = 100k works), policy-sync alone (no baselines, no feedback): the fan-out
// with its cost curve at 10 %, 50 % and 100 % of the works (elapsed, works/s, RSS, CPU), peak RSS, and a
// restart on all the works (caches synced, no-op pass, writes); JSON in .local/bench/scale-<timestamp>.json.
// The controller runs as its own process (the compiled CLI, as the container image runs it), so that its
// RSS and CPU profile are its own (controller.ts). The bench clusters bench-c1 … bench-cC are hub namespaces with
// ManagedClusters; no agent serves them (their works only have to exist, but for workload 5, which writes their
// status itself); spoke-1 serves workload 4.
//
//   npm run bench                                   P=1000, C=10, K=100
//   npm run bench -- --quick                        P=20, C=3, K=3 (the test suite runs this)
//   npm run bench -- --scale                        P=5000, C=20: 100k works (half an hour or more on 2 vCPUs)
//   npm run bench -- --fleet [-C 3500]              P=30, C=1000: 30k placements in bundles
//   npm run bench -- -P 2000 -C 5 -K 50 --concurrency 8 --rounds 5
//   options: --root DIR (sandbox, default .local/bench-sandbox), --json PATH, --cpu-prof (profile the
//   controller of the fan-out and the restarted one; timings then carry the profiler's cost; not with
//   --scale), --skip-baselines, --skip-variants (not workload 6), --only variants (workload 6 alone, on a world
//   of its own; with --cpu-prof its last policy-sync fan-out is profiled), --keep-world (leave the run's objects for a
//   look; the next run deletes them), --down [--purge] (stop the sandbox afterwards, and delete its data)
//
// This file parses the flags and runs the chosen workloads, one module each under workloads/: fanout.ts (1,
// with ocm.ts, its OCM baseline), change.ts (2b), restart.ts (3), feedback.ts (4), rollout.ts (5), variants.ts (6), evidence.ts (7),
// scale.ts (--scale).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { KubeHttp } from '../../src/kube/http.ts';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { setUpWorld } from '../../testkit/world.ts';
import { CLEANUP_REQUEST_TIMEOUT_MS, LIFTED_QPS, MANAGER_COMPONENT, PS_COMPONENT, SPOKE, log, parseConfig, type Bench, type BenchConfig, type ResultDraft } from './config.ts';
import { buildCli, profileOf } from './controller.ts';
import { formatProfile } from './cpuprofile.ts';
import { cleanLeftovers, cleanRun, machineInfo } from './harness.ts';
import { formatFleetTable, formatScaleTable, formatTable, formatVariantsTable, type BenchResult, type VariantsOnlyResult } from './report.ts';
import { changeOnePolicy } from './workloads/change.ts';
import { fanout, policySyncTrackers, profileDir, ratios } from './workloads/fanout.ts';
import { feedback } from './workloads/feedback.ts';
import { restartUnchanged } from './workloads/restart.ts';
import { rollout } from './workloads/rollout.ts';
import { scale } from './workloads/scale.ts';
import { fleet } from './workloads/fleet.ts';
import { variants } from './workloads/variants.ts';
import { evidence } from './workloads/evidence.ts';

async function main(cfg: BenchConfig): Promise<number> {
  const { P, C, K, SCALE, FLEET, CONCURRENCY, root, runId, ns } = cfg;
  const startedAt = new Date();
  log(`P=${P} policies × C=${C} clusters${SCALE ? ' (scale: policy-sync alone)' : FLEET ? ' (fleet: bundles)' : `, K=${K} feedback changes`}, concurrency ${CONCURRENCY}; sandbox ${root}; run ${runId}`);
  // Built before any connection opens: tsc blocks this process for minutes on a loaded machine, long past the
  // apiserver's idle timeout, and a kept-alive socket closed meanwhile fails the next request (EPIPE).
  log('building the CLI (tsc, as the container image runs it)');
  const cli = buildCli(root);
  const sandbox = await Sandbox.up({ root, spokes: 1, log: (m) => log(`sandbox: ${m}`) });
  // Leftovers of an interrupted run: its processes, works, replica sets and namespaces.
  await sandbox.remove(PS_COMPONENT);
  await sandbox.remove(MANAGER_COMPONENT);
  const kubeConfig = sandbox.kubeConfig('hub');
  const http = new KubeHttp(kubeConfig, { maxInFlight: 32 });
  const spokeHttp = new KubeHttp(sandbox.kubeConfig(SPOKE));
  // Deleting thousands of works in one deletecollection outlasts the client's default 30 s deadline.
  const cleanupHttp = new KubeHttp(kubeConfig, { maxInFlight: 8, requestTimeoutMs: CLEANUP_REQUEST_TIMEOUT_MS });
  let failed = false;
  try {
    await cleanLeftovers({ cfg, http, cleanupHttp, spokeHttp });
    const bench: Bench = { cfg, sandbox, kubeConfig, http, cleanupHttp, spokeHttp, cli };
    const result = SCALE ? await scale(bench, startedAt) : FLEET ? await fleet(bench, startedAt) : cfg.onlyVariants ? await runVariantsOnly(bench, startedAt) : await runDefault(bench, startedAt);
    result.finishedAt = new Date().toISOString();
    const stamp = startedAt.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
    const out = join(repoRoot, '.local', 'bench', `${SCALE ? 'scale' : FLEET ? 'fleet' : 'result'}-${stamp}.json`);
    mkdirSync(join(repoRoot, '.local', 'bench'), { recursive: true });
    const json = `${JSON.stringify(result, null, 2)}\n`;
    writeFileSync(out, json);
    if (cfg.json) writeFileSync(resolve(cfg.json), json);
    if (result.mode === 'scale') {
      console.log(formatScaleTable(result));
    } else if (result.mode === 'fleet') {
      console.log(formatFleetTable(result));
      if (result.profile?.restart) console.log(`\nCPU profile, restarted controller (start-up, edit, CLI reads): ${formatProfile(result.profile.restart)}`);
    } else if (result.mode === 'variants') {
      console.log(formatVariantsTable(result));
      if (result.profile?.fanout) console.log(`\nCPU profile, variants fan-out: ${formatProfile(result.profile.fanout)}`);
    } else {
      console.log(formatTable(result));
      for (const phase of ['fanout', 'restart'] as const) {
        const profile = result.profile?.[phase];
        if (profile) console.log(`\nCPU profile, ${phase}: ${formatProfile(profile)}`);
      }
    }
    console.log(`\nJSON: ${out}${cfg.json ? ` and ${resolve(cfg.json)}` : ''}`);
    return 0;
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    await sandbox.remove(PS_COMPONENT).catch(() => undefined);
    await sandbox.remove(MANAGER_COMPONENT).catch(() => undefined);
    if (cfg.down) {
      log(`stopping the sandbox${cfg.purge ? ' and deleting its data' : ''}`);
      await sandbox.down({ purge: cfg.purge });
    } else if (cfg.keepWorld) {
      log(`keeping the run's objects (namespace ${ns}); the next run deletes them`);
    } else {
      log('cleaning up the run');
      const cleanupStart = performance.now();
      await cleanRun({ cfg, http, cleanupHttp, spokeHttp }, !failed).then(
        () => log(`cleaned up in ${((performance.now() - cleanupStart) / 1000).toFixed(1)} s`),
        (err: unknown) => log(`cleanup: ${String(err)}`),
      );
    }
    http.destroy();
    spokeHttp.destroy();
    cleanupHttp.destroy();
  }
}

/** `--only variants`: workload 6 on a world of its own; its fan-out's reset finds no controller and no works. */
async function runVariantsOnly(bench: Bench, startedAt: Date): Promise<VariantsOnlyResult> {
  const { http, cfg } = bench;
  const world = await benchWorld(bench);
  const draft: ResultDraft = { fanout: {}, writes: {} };
  const machine = await machineInfo(http);
  await variants(bench, world, draft);
  // The last fan-out's controller writes its profile when it exits.
  const dir = profileDir(bench, 'fanout');
  if (dir) await bench.sandbox.remove(PS_COMPONENT, 15_000);
  const profile = dir ? profileOf(dir) : undefined;
  return {
    version: 3,
    mode: 'variants',
    startedAt: startedAt.toISOString(),
    command: commandLine(),
    machine,
    params: runParams(cfg),
    variants: draft.variants!,
    ...(profile ? { profile: { fanout: profile } } : {}),
  };
}

/** The default mode: workloads 1 to 6 on one world, the fan-out's last controller and works going on to the next. */
async function runDefault(bench: Bench, startedAt: Date): Promise<BenchResult> {
  const { http, cfg } = bench;
  const world = await benchWorld(bench);
  const machine = await machineInfo(http);
  const result: ResultDraft = {
    version: 3,
    mode: 'default',
    startedAt: startedAt.toISOString(),
    command: commandLine(),
    machine,
    params: runParams(cfg),
    fanout: {},
    writes: {},
  };
  const trackers = await policySyncTrackers(bench, world);
  let rounds;
  try {
    // 1. fan-out; 2b. one policy changed; 3. restart on the unchanged world.
    const fan = await fanout(bench, world, trackers, result);
    rounds = fan.rounds;
    await changeOnePolicy(bench, world, trackers, fan.after, result);
    await restartUnchanged(bench, fan.rss, result);
  } finally {
    await trackers.stop();
  }
  // 7. the evidence gate: the fan-out again, with and without the spoke reports.
  await evidence(bench, world, result);
  // 6. per-cluster copies, on the same policies; its controller and works go on to 4 and 5.
  if (!bench.cfg.skipVariants) await variants(bench, world, result);
  // 4. feedback on a real spoke, with the world above still in the controller's cache.
  result.feedback = await feedback(bench);
  // 5. a progressive rollout of one edit, and the same edit under All.
  result.rollout = await rollout(bench, world.clusters, result.writes.change?.ms);
  ratios(result, rounds);
  return result as BenchResult;
}

/** The run's P policies on one Gateway's Placement of C clusters. */
function benchWorld({ http, cfg }: Bench): ReturnType<typeof setUpWorld> {
  return setUpWorld(http, { clusters: cfg.C, policies: cfg.P, namespace: cfg.ns, className: cfg.className, controllerName: cfg.controllerName, log, judged: !cfg.quick });
}

function commandLine(): string {
  return process.argv.length > 2 ? `npm run bench -- ${process.argv.slice(2).join(' ')}` : 'npm run bench';
}

function runParams(cfg: BenchConfig): BenchResult['params'] {
  const { P, C, K, ROUNDS, CONCURRENCY, runId } = cfg;
  return { policies: P, clusters: C, feedbackChanges: K, rounds: cfg.skipBaselines ? 1 : ROUNDS, concurrency: CONCURRENCY, qps: LIFTED_QPS, burst: LIFTED_QPS, bareInFlight: cfg.BARE_IN_FLIGHT, quick: cfg.quick, profiled: cfg.cpuProf, runId };
}

main(parseConfig(process.argv.slice(2))).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
