// `npm run bench` — policy-sync's benchmark on the real local plane (DESIGN §10), printed as one table and
// written as JSON (.local/bench/result-<timestamp>.json, and --json <path>). In one run, on one sandbox:
//   1. fan-out of P policies × C clusters, against (a) a bare client writing the same P×C ManifestWorks
//      with as many requests in flight as the controller may have (concurrency × C): server-side applied
//      (for the reading), then POSTed — plain creates, the apiserver's floor — and (b) OCM's own
//      ManifestWorkReplicaSet controller (`work manager`, same OCM module, feature gate on) producing the
//      same works from P ManifestWorkReplicaSets over a real C-cluster Placement; OCM, bare creates and
//      policy-sync in --rounds rounds (default 3), each ratio being the median of the rounds';
//   2. writes, from the hub apiserver's apiserver_request_total: during the fan-out, after one policy
//      changed, and over a controller restart on the unchanged world;
//   3. peak RSS of the controller process with the P×C works cached, and its start-up to caches synced and
//      the no-op pass done;
//   4. feedback latency on a real spoke and work agent: a status change on the spoke copy until the hub
//      annotation shows it, split into OCM's part (→ ManifestWork status) and ours (→ annotation).
// With --scale (P=5000 × C=20 = 100k works), policy-sync alone (no baselines, no feedback): the fan-out
// with its cost curve at 10 %, 50 % and 100 % of the works (elapsed, works/s, RSS, CPU), peak RSS, and a
// restart on all the works (caches synced, no-op pass, writes); JSON in .local/bench/scale-<timestamp>.json.
// The controller runs as its own process (the compiled CLI, as the container image runs it), so that its
// RSS and CPU profile are its own. The bench clusters bench-c1 … bench-cC are hub namespaces with
// ManagedClusters; no agent serves them (their works only have to exist); spoke-1 serves workload 4.
//
//   npm run bench                                   P=1000, C=10, K=100
//   npm run bench -- --quick                        P=20, C=3, K=3 (the test suite runs this)
//   npm run bench -- --scale                        P=5000, C=20: 100k works (half an hour or more on 2 vCPUs)
//   npm run bench -- -P 2000 -C 5 -K 50 --concurrency 8 --rounds 5
//   options: --root DIR (sandbox, default .local/bench-sandbox), --json PATH, --cpu-prof (profile the
//   controller of the fan-out and the restarted one; timings then carry the profiler's cost; not with
//   --scale), --skip-baselines, --keep-world (leave the run's objects for a look; the next run deletes
//   them), --down [--purge] (stop the sandbox afterwards, and delete its data)
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { binDir, repoRoot } from '../../testkit/sandbox/layout.ts';
import { freePort } from '../../testkit/sandbox/ports.ts';
import { PLACEMENT_NAMESPACE, Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { Condition } from '../../src/core/k8s/conditions.ts';
import { controllerLabelValue, readSpecHash, sourceHash, type ManifestWork } from '../../src/core/works/manifestwork.ts';
import { CONTROLLER_LABEL, POLICIES_SYNCED_ANNOTATION, SOURCE_LABEL, STATUS_ANNOTATION } from '../../src/core/metadatakeys.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { PLACEMENT_LABEL, clustersFromDecisions } from '../../src/core/fleet/placement.ts';
import { policiesSyncedAnnotation } from '../../src/core/status/policiessynced.ts';
import { readCrd } from '../../src/kube/discovery.ts';
import { KubeHttp, isGone } from '../../src/kube/http.ts';
import { RESOURCES, collectionPath } from '../../src/kube/resource.ts';
import { mergePatch, serverSideApply } from '../../src/kube/writes.ts';
import { AUTH_POLICIES, apply, authPolicy, gateway, gatewayClass, get, paramsConfigMap } from '../../testkit/fixtures.ts';
import { samples } from '../../testkit/metrics.ts';
import { delta, total, waitQuiet, withoutOwn, type Delta } from '../../testkit/counters.ts';
import { formatProfile, summariseProfile, type ProfileSummary } from './cpuprofile.ts';
import { formatScaleTable, formatTable, median, stats, type BenchResult, type FanoutResult, type FanoutRound, type ScalePoint, type ScaleResult, type WriteReport } from './report.ts';
import { imageNodeFlags } from './image.ts';
import { Tracker } from './tracker.ts';
import {
  BENCH_LABEL,
  BENCH_TOLERATIONS,
  CLUSTER_SET,
  CLUSTER_SETS,
  CLUSTER_SET_LABEL,
  FIELD_MANAGER,
  MANAGED_CLUSTERS,
  MWRS_PLACEMENT_LABEL,
  PLACEMENTS,
  REPLICA_SETS,
  applyObject,
  deleteCollection,
  deleteIfPresent,
  ensureClusters,
  ensureNamespace,
  hashes,
  listAll,
  placement,
  poll,
  pool,
  removeReplicaSets,
  waitForDecisions,
  worksFor,
} from '../../testkit/world.ts';

const PS_COMPONENT = 'bench/policy-sync';
const MANAGER_COMPONENT = 'bench/work-manager';
const SPOKE = 'spoke-1';
const SPOKE_CLUSTER_SET = 'policy-sync-bench-spoke';
/** Client-side write limits of the measured controller: lifted, so that it is bound by the apiserver alone. */
const LIFTED_QPS = 100_000;
/** The controller's status annotation coalescing window (its default); feedback changes are spaced past it. */
const STATUS_COALESCE_MS = 200;

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    scale: { type: 'boolean', default: false },
    policies: { type: 'string', short: 'P' },
    clusters: { type: 'string', short: 'C' },
    changes: { type: 'string', short: 'K' },
    concurrency: { type: 'string', default: '4' },
    rounds: { type: 'string' },
    root: { type: 'string' },
    json: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'skip-baselines': { type: 'boolean', default: false },
    down: { type: 'boolean', default: false },
    'keep-world': { type: 'boolean', default: false },
    purge: { type: 'boolean', default: false },
  },
});

function count(name: string, value: string | undefined, fallback: number): number {
  const n = value === undefined ? fallback : Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${value}`);
  return n;
}

if (flags.quick && flags.scale) throw new Error('--quick and --scale exclude each other');
// A profile of a 100k-work fan-out would be hundreds of MB, and the profiler's cost would bend the curve.
if (flags.scale && flags['cpu-prof']) throw new Error('--cpu-prof is not supported with --scale');
const SCALE = flags.scale;
const P = count('policies', flags.policies, flags.quick ? 20 : SCALE ? 5000 : 1000);
const C = count('clusters', flags.clusters, flags.quick ? 3 : SCALE ? 20 : 10);
const K = count('changes', flags.changes, flags.quick ? 3 : 100);
/**
 * How long a fan-out may take before the run fails: a quick run that stalls says so in minutes, not half an
 * hour; 100k works at the ~200 works/s of the default run take ~10 min, and the rate may fall as they grow.
 */
const FANOUT_TIMEOUT_MS = flags.quick ? 180_000 : SCALE ? 60 * 60_000 : 30 * 60_000;
/** A scale fan-out whose works stop appearing for this long has stalled (etcd out of space, say): fail then. */
const STALL_MS = 5 * 60_000;
/** Start-up pass and quiet waits: a restart lists all P×C works, and waits on 100k works take longer. */
const PASS_TIMEOUT_MS = SCALE ? 15 * 60_000 : 300_000;
const QUIET_TIMEOUT_MS = SCALE ? 600_000 : 120_000;
/** Deadline of the harness's deletecollection calls, which the apiserver may take its full 60 s over. */
const CLEANUP_REQUEST_TIMEOUT_MS = 120_000;
const CONCURRENCY = count('concurrency', flags.concurrency, 4);
if (flags.scale && flags.rounds !== undefined) throw new Error('--rounds is not supported with --scale (policy-sync alone, one fan-out)');
/**
 * Rounds of the compared fan-outs — OCM, the bare client's creates, then policy-sync — back to back: the
 * machine's speed drifts by ±20 % over minutes (shared vCPUs, steal), so fan-outs measured once, minutes
 * apart, compare the moments more than the writers. Each ratio is the median of the rounds'. The quick run
 * makes two, so that the test suite goes through the reset between rounds.
 */
const ROUNDS = count('rounds', flags.rounds, flags.quick ? 2 : 3);
const root = resolve(flags.root ?? join(repoRoot, '.local', 'bench-sandbox'));
const runId = `${new Date().toISOString().slice(11, 19).replace(/:/g, '')}${randomBytes(2).toString('hex')}`;
const ns = `bench-${runId}`;
const fbNs = `${ns}-fb`;
const controllerName = `bench.policy-sync.io/${runId}`;
const bareName = `bench.policy-sync.io/${runId}-bare`;
const className = `bench-${runId}`;
const t0 = performance.now();

function log(message: string): void {
  process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${message}\n`);
}

// ---- the controller process ----

interface Controller {
  pid: number;
  port: number;
  /** performance.now() and Date.now() just before the process was spawned. */
  startedAt: number;
  startedAtEpoch: number;
  log: string;
  profileDir?: string;
}

/** The CLI compiled as the container image runs it (no TypeScript loader in the measured process). */
function buildCli(): string {
  const dist = join(repoRoot, '.local', 'bench', `dist-${createHash('sha256').update(root).digest('hex').slice(0, 8)}`);
  rmSync(dist, { recursive: true, force: true });
  execFileSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(repoRoot, 'tsconfig.build.json'), '--outDir', dist], {
    cwd: repoRoot,
    stdio: ['ignore', 2, 2],
  });
  return join(dist, 'cli', 'main.js');
}

async function startController(sandbox: Sandbox, cli: string, profileDir?: string, extraArgs: string[] = []): Promise<Controller> {
  const port = await freePort();
  const args = [
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ...imageNodeFlags(),
    cli,
    'hub',
    `--kubeconfig=${sandbox.hub.kubeconfig}`,
    `--controller-name=${controllerName}`,
    `--concurrency=${CONCURRENCY}`,
    `--qps=${LIFTED_QPS}`,
    `--burst=${LIFTED_QPS}`,
    `--status-coalesce=${STATUS_COALESCE_MS}`,
    '--spoke-config=none',
    `--health-probe-bind-address=127.0.0.1:${port}`,
    `--metrics-bind-address=127.0.0.1:${port}`,
    ...extraArgs,
  ];
  const log = join(sandbox.layout.logs, 'bench-policy-sync.log');
  const [startedAt, startedAtEpoch] = [performance.now(), Date.now()];
  const proc = await sandbox.run({ name: PS_COMPONENT, command: process.execPath, args, log }, { url: `http://127.0.0.1:${port}/healthz` });
  return { pid: proc.pid, port, startedAt, startedAtEpoch, log, profileDir };
}

async function controllerMetrics(c: Controller): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${c.port}/metrics`);
  return res.text();
}

async function controllerReady(c: Controller): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${c.port}/readyz`);
  return res.ok;
}

function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text, name)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** The time (epoch ms) of the controller's own log line `msg` (its first word: `caches synced`, `serving …`). */
function loggedAt(c: Controller, msg: string): number | undefined {
  for (const line of readFileSync(c.log, 'utf8').split('\n').reverse()) {
    if (!line.includes(`"msg":"${msg}`)) continue;
    try {
      const entry = JSON.parse(line) as { pid?: number; time?: number; msg?: string };
      if (entry.pid === c.pid && entry.msg?.startsWith(msg)) return entry.time;
    } catch {
      // not a log line of ours
    }
  }
  return undefined;
}

/**
 * From process start: caches synced — ManifestWorks, Gateways, PlacementDecisions and GatewayClasses
 * listed, from the controller's own log line (a scrape would answer late while the pass keeps its event
 * loop busy) — and the no-op pass done: the policy kind watched and listed (/readyz), then the policy
 * queue empty with no reconcile in flight and every policy reconciled at least once (from /metrics).
 */
async function startupPass(c: Controller, timeoutMs = PASS_TIMEOUT_MS): Promise<BenchResult['startup']> {
  const deadline = Date.now() + timeoutMs;
  let ready: number | undefined;
  for (;;) {
    const text = await controllerMetrics(c).catch(() => undefined);
    if (text !== undefined) {
      if (ready === undefined) {
        if (metricValue(text, 'policysync_watched_kinds') === 1 && (await controllerReady(c).catch(() => false))) ready = performance.now();
      } else {
        const depth = metricValue(text, 'workqueue_depth', { name: 'policy' });
        const active = metricValue(text, 'controller_runtime_active_workers', { controller: 'policy' });
        const reconciles = metricValue(text, 'controller_runtime_reconcile_total', { controller: 'policy' });
        if (depth === 0 && active === 0 && reconciles >= P) {
          const passMs = performance.now() - c.startedAt;
          const synced = loggedAt(c, 'caches synced');
          const serving = loggedAt(c, 'serving');
          return {
            servingMs: serving === undefined ? NaN : serving - c.startedAtEpoch,
            cachesSyncedMs: synced === undefined ? ready - c.startedAt : synced - c.startedAtEpoch,
            passMs,
            reconciles,
          };
        }
      }
    }
    if (Date.now() > deadline) throw new Error(`the controller did not finish its start-up pass within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** CPU seconds (user + system) a process has used so far; 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    // After the command: state is field 3, utime 14 and stime 15 (1-based, man proc).
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU used by the hub's apiserver, etcd and the process doing the fan-out, over a window. */
class CpuWindow {
  private readonly start: Record<string, number>;
  constructor(private readonly pids: Record<string, number>) {
    this.start = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
  }

  /** CPU seconds per process since the window opened. */
  end(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.pids).map(([k, pid]) => [k, Math.round((cpuSeconds(pid) - this.start[k]!) * 10) / 10]));
  }
}

/** Peak (VmHWM) and current (VmRSS) resident set of a process, MiB. */
function rssOf(pid: number): { peakMiB: number; rssMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { peakMiB: kb('VmHWM') / 1024, rssMiB: kb('VmRSS') / 1024 };
}

/** Resets a process's VmHWM to its current RSS; false if that was refused. */
function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

// ---- writes ----

function report(d: Delta, own: Record<string, number>, minimum: number, quiet: boolean, target?: { text: string; ok: (w: WriteReport) => boolean }): WriteReport {
  const writes = withoutOwn(d.writes, own);
  const w: WriteReport = {
    byRequest: Object.fromEntries(writes),
    total: total(writes),
    minimum,
    reviews: Object.fromEntries(d.reviews),
    background: Object.fromEntries(d.background),
    others: Object.fromEntries(d.others),
    own,
    quiet,
  };
  if (target) {
    w.target = target.text;
    w.ok = quiet && target.ok(w);
  }
  return w;
}

const WORKS_KEY = (verb: string): string => `${verb} work.open-cluster-management.io/manifestworks`;
/** The controller creates an absent work with POST and server-side applies only a change: both are work writes. */
const WORK_WRITE_VERBS = ['POST', 'APPLY'];
const POLICY_PATCH = 'PATCH kuadrant.io/authpolicies';

function workWrites(w: WriteReport): number {
  return WORK_WRITE_VERBS.reduce((n, verb) => n + (w.byRequest[WORKS_KEY(verb)] ?? 0), 0);
}

/** Writes to the policies themselves (the policies-synced and status annotations), whatever the verb. */
function policyWrites(w: WriteReport): number {
  return Object.entries(w.byRequest).reduce((n, [k, v]) => n + (k.endsWith(' kuadrant.io/authpolicies') ? v : 0), 0);
}

/** The fan-out's writes: P×C work writes (creates, or applies) + ≤ P annotation writes, and nothing else. */
function fanoutWrites(d: Delta, quiet: boolean, N: number): WriteReport {
  return report(d, { 'APPLY gateway.networking.k8s.io/gateways': 1 }, N + P, quiet, {
    text: `${N} work writes + ≤ ${P} patches`,
    ok: (w) => workWrites(w) === N && policyWrites(w) <= P && w.total === workWrites(w) + policyWrites(w),
  });
}

// ---- the run ----

async function main(): Promise<number> {
  const startedAt = new Date();
  log(`P=${P} policies × C=${C} clusters${SCALE ? ' (scale: policy-sync alone)' : `, K=${K} feedback changes`}, concurrency ${CONCURRENCY}; sandbox ${root}; run ${runId}`);
  const sandbox = await Sandbox.up({ root, spokes: 1, log: (m) => log(`sandbox: ${m}`) });
  // Leftovers of an interrupted run: its processes, works, replica sets and namespaces.
  await sandbox.remove(PS_COMPONENT);
  await sandbox.remove(MANAGER_COMPONENT);
  const kubeConfig = sandbox.kubeConfig('hub');
  const http = new KubeHttp(kubeConfig, { maxSockets: 32 });
  const spokeHttp = new KubeHttp(sandbox.kubeConfig(SPOKE));
  // Deleting thousands of works in one deletecollection outlasts the client's default 30 s deadline.
  const cleanupHttp = new KubeHttp(kubeConfig, { maxSockets: 8, requestTimeoutMs: CLEANUP_REQUEST_TIMEOUT_MS });
  let failed = false;
  try {
    await cleanLeftovers(http, cleanupHttp, spokeHttp);
    log('building the CLI (tsc, as the container image runs it)');
    const cli = buildCli();
    const result = SCALE ? await runScale(sandbox, kubeConfig, http, cli, startedAt) : await run(sandbox, kubeConfig, http, cleanupHttp, spokeHttp, cli, startedAt);
    result.finishedAt = new Date().toISOString();
    const stamp = startedAt.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
    const out = join(repoRoot, '.local', 'bench', `${SCALE ? 'scale' : 'result'}-${stamp}.json`);
    mkdirSync(join(repoRoot, '.local', 'bench'), { recursive: true });
    const json = `${JSON.stringify(result, null, 2)}\n`;
    writeFileSync(out, json);
    if (flags.json) writeFileSync(resolve(flags.json), json);
    if (result.mode === 'scale') {
      console.log(formatScaleTable(result));
    } else {
      console.log(formatTable(result));
      for (const phase of ['fanout', 'restart'] as const) {
        const profile = result.profile?.[phase];
        if (profile) console.log(`\nCPU profile, ${phase}: ${formatProfile(profile)}`);
      }
    }
    console.log(`\nJSON: ${out}${flags.json ? ` and ${resolve(flags.json)}` : ''}`);
    return 0;
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    await sandbox.remove(PS_COMPONENT).catch(() => undefined);
    await sandbox.remove(MANAGER_COMPONENT).catch(() => undefined);
    if (flags.down) {
      log(`stopping the sandbox${flags.purge ? ' and deleting its data' : ''}`);
      await sandbox.down({ purge: flags.purge });
    } else if (flags['keep-world']) {
      log(`keeping the run's objects (namespace ${ns}); the next run deletes them`);
    } else {
      log('cleaning up the run');
      const cleanupStart = performance.now();
      await cleanRun(http, cleanupHttp, spokeHttp, !failed).then(
        () => log(`cleaned up in ${((performance.now() - cleanupStart) / 1000).toFixed(1)} s`),
        (err: unknown) => log(`cleanup: ${String(err)}`),
      );
    }
    http.destroy();
    spokeHttp.destroy();
    cleanupHttp.destroy();
  }
}

/**
 * The world both modes start from: the C bench clusters decided by Placement `bench` in the run namespace,
 * the run's GatewayClass and params, and P AuthPolicies targeting Gateway `gw`, which does not exist yet:
 * until it does, they are nobody's.
 */
async function setupWorld(http: KubeHttp): Promise<{ clusters: string[]; policies: KubeObject[] }> {
  const clusters = await ensureClusters(http, C);
  await ensureNamespace(http, ns, 'run');
  await placement(http, ns, 'bench');
  await waitForDecisions(http, ns, 'bench', clusters);
  log(`${C} clusters decided by Placement ${ns}/bench`);
  await apply(http, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  const cls = gatewayClass(className, { namespace: ns, name: 'params' }, controllerName);
  cls.metadata.labels = { [BENCH_LABEL]: 'run' };
  await apply(http, cls);
  const names = Array.from({ length: P }, (_, i) => `p-${String(i + 1).padStart(5, '0')}`);
  await pool(names, 16, (name) => apply(http, authPolicy(ns, name, 'gw')));
  const policies = (await listAll(http, AUTH_POLICIES, ns)).map((p) => ({ ...p, apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy' }));
  if (policies.length !== P) throw new Error(`expected ${P} policies in ${ns}, found ${policies.length}`);
  log(`${P} AuthPolicies created in ${ns}`);
  return { clusters, policies };
}

async function run(sandbox: Sandbox, kubeConfig: KubeConfig, http: KubeHttp, cleanupHttp: KubeHttp, spokeHttp: KubeHttp, cli: string, startedAt: Date): Promise<BenchResult> {
  const { clusters, policies } = await setupWorld(http);
  const N = P * C;

  const [machine, bareInFlight] = [await machineInfo(http), CONCURRENCY * C];
  const result: Omit<Partial<BenchResult>, 'fanout' | 'writes'> & { fanout: Partial<BenchResult['fanout']>; writes: Partial<BenchResult['writes']> } = {
    version: 3,
    mode: 'default',
    startedAt: startedAt.toISOString(),
    command: process.argv.length > 2 ? `npm run bench -- ${process.argv.slice(2).join(' ')}` : 'npm run bench',
    machine,
    params: { policies: P, clusters: C, feedbackChanges: K, rounds: flags['skip-baselines'] ? 1 : ROUNDS, concurrency: CONCURRENCY, qps: LIFTED_QPS, burst: LIFTED_QPS, bareInFlight, quick: flags.quick, profiled: flags['cpu-prof'], runId },
    fanout: {},
    writes: {},
  };

  // ---- 1. fan-out: the bare client's server-side applies (for the reading), OCM, then ROUNDS alternating
  // rounds of the bare client's plain creates and policy-sync: the headline ratio is their median ----
  const skipBaselines = flags['skip-baselines'];
  const bareSelector = `${CONTROLLER_LABEL}=${controllerLabelValue(bareName)}`;
  const bareWorks = worksFor(policies, ns, clusters, bareName);
  const bareTracker = skipBaselines ? undefined : await new Tracker(http, RESOURCES.manifestWorks, { labelSelector: bareSelector }, readSpecHash).start();
  const bare = new KubeHttp(kubeConfig, { maxSockets: bareInFlight });
  /** The same works as policy-sync's, concurrency × C in flight; then deleted and gone. */
  const bareFanout = async (mode: 'apply' | 'create', label: string): Promise<{ fanout: FanoutResult & { requestsMs: number }; writes: WriteReport }> => {
    const write = mode === 'apply'
      ? (w: ManifestWork) => serverSideApply(bare, RESOURCES.manifestWorks, w)
      : (w: ManifestWork) => bare.request('POST', collectionPath(RESOURCES.manifestWorks, w.metadata.namespace), { query: { fieldManager: FIELD_MANAGER }, body: w });
    const before = (await waitQuiet(kubeConfig)).snapshot;
    log(`${label}: ${N} works, ${bareInFlight} in flight`);
    const cpu = new CpuWindow({ ...planePids(sandbox), harness: process.pid });
    const start = performance.now();
    const seen = bareTracker!.expect(hashes(bareWorks), `${N} bare works`, FANOUT_TIMEOUT_MS);
    await pool(bareWorks, bareInFlight, write);
    const requestsMs = performance.now() - start;
    const ms = (await seen) - start;
    const cpuSeconds = cpu.end();
    const after = await waitQuiet(kubeConfig);
    log(`${label}: ${(ms / 1000).toFixed(2)} s`);
    await deleteWorks(cleanupHttp, clusters, bareSelector);
    await bareTracker!.until(() => bareTracker!.seen.size === 0, 'the bare works to go', 300_000);
    return { fanout: { ms, works: N, requestsMs, cpuSeconds }, writes: report(delta(before, after.snapshot), {}, N, after.quiet) };
  };

  const psSelector = `${CONTROLLER_LABEL}=${controllerLabelValue(controllerName)}`;
  const crdUid = (await readCrd(http, AUTH_POLICIES))?.uid;
  const expected = hashes(worksFor(policies, ns, clusters, controllerName, crdUid));
  const synced = new Map(policies.map((p) => [`${ns}/${p.metadata.name}`, policiesSyncedAnnotation(clusters.map((cluster) => ({ cluster, name: p.metadata.name, namespace: ns }))) ?? '']));
  const profileDir = (phase: string): string | undefined => {
    if (!flags['cpu-prof']) return undefined;
    const dir = join(repoRoot, '.local', 'bench', `cpuprofile-${runId}`, phase);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const fanoutProfile = profileDir('fanout');
  const restartProfile = profileDir('restart');
  const works = await new Tracker(http, RESOURCES.manifestWorks, { labelSelector: psSelector }, readSpecHash).start();
  const annotations = await new Tracker(http, AUTH_POLICIES, { namespace: ns }, (p) => p.metadata.annotations?.[POLICIES_SYNCED_ANNOTATION]).start();

  /**
   * policy-sync's fan-out: the controller started on the P inert policies and its first pass done, then
   * Gateway `gw` created; timed to all P×C works with their spec-hash (and all P annotated).
   */
  const policySyncFanout = async (label: string, profile: string | undefined) => {
    log(`${label}: starting the controller${profile ? ' (with --cpu-prof)' : ''}`);
    const controller = await startController(sandbox, cli, profile);
    const cold = await startupPass(controller);
    const before = (await waitQuiet(kubeConfig)).snapshot;
    const reconcilesBefore = metricValue(await controllerMetrics(controller), 'controller_runtime_reconcile_total', { controller: 'policy' });
    log(`${label}: ${P} inert policies reconciled; creating Gateway ${ns}/gw`);
    const cpu = new CpuWindow({ ...planePids(sandbox), controller: controller.pid, harness: process.pid });
    const start = performance.now();
    const allWorks = works.expect(expected, `${N} works with the expected spec-hash`, FANOUT_TIMEOUT_MS);
    const allAnnotated = annotations.expect(synced, `${P} policies annotated`, FANOUT_TIMEOUT_MS);
    await apply(http, gateway(ns, 'gw', className, 'bench'));
    const ms = (await allWorks) - start;
    const annotatedMs = (await allAnnotated) - start;
    const cpuSeconds = cpu.end();
    log(`${label}: ${N} works in ${(ms / 1000).toFixed(2)} s, ${P} policies annotated in ${(annotatedMs / 1000).toFixed(2)} s`);
    const after = await waitQuiet(kubeConfig);
    const reconciles = metricValue(await controllerMetrics(controller), 'controller_runtime_reconcile_total', { controller: 'policy' }) - reconcilesBefore;
    const fanout: BenchResult['fanout']['policySync'] = { ms, works: N, annotatedMs, coldStartMs: { serving: cold.servingMs, cachesSynced: cold.cachesSyncedMs, pass: cold.passMs }, cpuSeconds, reconciles };
    return { controller, fanout, rss: rssOf(controller.pid), writes: fanoutWrites(delta(before, after.snapshot), after.quiet, N), after };
  };

  /**
   * Back to the state a round starts from, with the controller stopped (so that it writes nothing
   * meanwhile): no Gateway `gw`, no works, and the policies without the annotations it wrote.
   */
  const resetPolicySync = async (): Promise<void> => {
    await sandbox.remove(PS_COMPONENT, 15_000);
    await deleteIfPresent(http, RESOURCES.gateways, ns, 'gw');
    await deleteWorks(cleanupHttp, clusters, psSelector);
    const unannotated = { metadata: { annotations: { [POLICIES_SYNCED_ANNOTATION]: null, [STATUS_ANNOTATION]: null } } };
    await pool(policies, 16, (p) => mergePatch(http, AUTH_POLICIES, ns, p.metadata.name, unannotated, { fieldManager: FIELD_MANAGER }));
    await works.until(() => works.seen.size === 0, 'the works of the round to go', 300_000);
  };

  const rounds: FanoutRound[] = [];
  try {
    if (!skipBaselines) {
      const ssa = await bareFanout('apply', 'bare client (apply)');
      [result.fanout.bare, result.writes.bare] = [ssa.fanout, ssa.writes];
    }
    const roundCount = skipBaselines ? 1 : ROUNDS;
    let ps: Awaited<ReturnType<typeof policySyncFanout>> | undefined;
    for (let round = 1; round <= roundCount; round++) {
      const last = round === roundCount;
      const label = (what: string): string => (roundCount > 1 ? `${what}, round ${round}/${roundCount}` : what);
      if (!skipBaselines) {
        result.fanout.ocm = await ocmBaseline(sandbox, kubeConfig, http, policies, clusters, label('OCM'));
        const bareCreates = await bareFanout('create', label('bare client (create)'));
        [result.fanout.bareCreate, result.writes.bareCreate] = [bareCreates.fanout, bareCreates.writes];
      }
      // The last round's world (its controller, its works) goes on to the change, the restart and the feedback.
      ps = await policySyncFanout(label('policy-sync'), last ? fanoutProfile : undefined);
      const [creates, ocm] = [result.fanout.bareCreate, result.fanout.ocm];
      if (creates && ocm) {
        const apiserverCpuSeconds = { bareCreate: creates.cpuSeconds.apiserver ?? NaN, policySync: ps.fanout.cpuSeconds.apiserver ?? NaN };
        const policySyncMs = ps.fanout.ms;
        rounds.push({ bareCreateMs: creates.ms, ocmMs: ocm.ms, policySyncMs, ratio: policySyncMs / creates.ms, ratioOcm: policySyncMs / ocm.ms, apiserverCpuSeconds });
      }
      if (!last) await resetPolicySync();
    }
    let controller = ps!.controller;
    const fanoutRss = ps!.rss;
    const afterFanout = ps!.after;
    result.fanout.policySync = ps!.fanout;
    result.writes.fanout = ps!.writes;

    // ---- 2b. one policy changed ----
    const changed = authPolicy(ns, policies[0]!.metadata.name, 'gw', { rules: { authorization: { deny: { opa: { rego: `allow = input.bench == "${runId}"` } } } } });
    const beforeChange = afterFanout.snapshot;
    const changeStart = performance.now();
    await apply(http, changed);
    const stored = (await get(http, AUTH_POLICIES, ns, changed.metadata.name))!;
    const next = new Map(expected);
    for (const [k, v] of hashes(worksFor([{ ...stored, apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy' }], ns, clusters, controllerName, crdUid))) next.set(k, v);
    const changeMs = (await works.expect(next, `the ${C} works of the changed policy`, 120_000)) - changeStart;
    const afterChange = await waitQuiet(kubeConfig);
    result.writes.change = {
      ...report(delta(beforeChange, afterChange.snapshot), { 'APPLY kuadrant.io/authpolicies': 1 }, C, afterChange.quiet, {
        text: `${C} work updates + ≤ 1 patch`,
        ok: (w) => workWrites(w) === C && w.total <= C + 1,
      }),
      ms: changeMs,
    };
    log(`one policy changed: its ${C} works rewritten in ${changeMs.toFixed(0)} ms`);

    // ---- 3. restart on the unchanged world ----
    await sandbox.remove(PS_COMPONENT, 15_000);
    const beforeRestart = (await waitQuiet(kubeConfig)).snapshot;
    log(`restart: starting the controller on ${N} works`);
    controller = await startController(sandbox, cli, restartProfile);
    const pass = await startupPass(controller);
    const afterRestart = await waitQuiet(kubeConfig);
    const restartRss = rssOf(controller.pid);
    result.startup = pass;
    result.writes.restart = report(delta(beforeRestart, afterRestart.snapshot), {}, 0, afterRestart.quiet, { text: '= 0', ok: (w) => w.total === 0 });
    result.memory = {
      fanoutPeakRssMiB: fanoutRss.peakMiB,
      fanoutRssMiB: fanoutRss.rssMiB,
      restartPeakRssMiB: restartRss.peakMiB,
      restartRssMiB: restartRss.rssMiB,
      works: N,
    };
    log(`restart: caches synced ${pass.cachesSyncedMs.toFixed(0)} ms, pass done ${pass.passMs.toFixed(0)} ms; peak RSS ${restartRss.peakMiB.toFixed(1)} MiB`);
    if (fanoutProfile && restartProfile) {
      // The restarted controller's profile covers its start-up; it is written when it exits.
      await sandbox.remove(PS_COMPONENT, 15_000);
      result.profile = { fanout: profileOf(fanoutProfile), restart: profileOf(restartProfile) };
      controller = await startController(sandbox, cli);
      await startupPass(controller);
    }
  } finally {
    await works.stop();
    await annotations.stop();
    await bareTracker?.stop();
    bare.destroy();
  }

  // ---- 4. feedback on a real spoke, with the world above still in the controller's cache ----
  result.feedback = await feedback(kubeConfig, http, spokeHttp);

  const f = result.fanout;
  if (rounds.length > 0) {
    f.rounds = rounds;
    f.ratioBareCreate = median(rounds.map((r) => r.ratio));
    f.ratioOcm = median(rounds.map((r) => r.ratioOcm));
    // Against SSA, measured once (for the reading): policy-sync's median round.
    if (f.bare) f.ratioBareSsa = median(rounds.map((r) => r.policySyncMs)) / f.bare.ms;
  }
  return result as BenchResult;
}

// ---- etcd, whose database 100k works fill ----

/** etcd's default backend quota: the sandbox sets no --quota-backend-bytes. */
const ETCD_DEFAULT_QUOTA_BYTES = 2 * 2 ** 30;

/**
 * How long a quiet hub is waited for. The apiserver compacts etcd every 5 min, each time to the revision
 * it read at the previous tick: a revision is compacted 5 to 10 min after it was written (444 s in one
 * run, over 480 s in the next).
 */
const COMPACTION_TIMEOUT_MS = 12 * 60_000;

/**
 * Waits until the revision the works are at now is compacted (an exact-revision list of it answers 410
 * Gone): from then on the watch cache holds no snapshot to serve a paged list's continuations from. Returns
 * the time waited.
 */
async function waitCompacted(http: KubeHttp, timeoutMs: number): Promise<number> {
  const path = collectionPath(RESOURCES.manifestWorks);
  const now = await http.request<{ metadata: { resourceVersion: string } }>('GET', path, { query: { limit: 1 } });
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    try {
      await http.request('GET', path, { query: { limit: 1, resourceVersion: now.metadata.resourceVersion, resourceVersionMatch: 'Exact' } });
    } catch (err) {
      if (isGone(err)) return performance.now() - start;
      throw err;
    }
    await sleep(10_000);
  }
  throw new Error(`revision ${now.metadata.resourceVersion} not compacted within ${timeoutMs / 1000} s`);
}

/** The sandbox's etcd client URL and backend quota, from its command line. */
function etcdOf(sandbox: Sandbox): { url: string; quotaBytes: number } {
  const args = readFileSync(`/proc/${sandbox.process('etcd').pid}/cmdline`, 'utf8').split('\0');
  const flag = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const url = flag('advertise-client-urls')?.split(',')[0];
  if (!url) throw new Error(`no --advertise-client-urls on the sandbox's etcd: ${args.join(' ')}`);
  const quota = Number(flag('quota-backend-bytes') ?? 0);
  return { url, quotaBytes: quota > 0 ? quota : ETCD_DEFAULT_QUOTA_BYTES };
}

/** etcd's database size, allocated and in use (its gRPC gateway's maintenance status), MiB. */
async function etcdDb(url: string): Promise<{ dbMiB: number; inUseMiB: number } | undefined> {
  try {
    const res = await fetch(`${url}/v3/maintenance/status`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(5_000) });
    const body = (await res.json()) as { dbSize?: string; dbSizeInUse?: string };
    return { dbMiB: Number(body.dbSize) / 2 ** 20, inUseMiB: Number(body.dbSizeInUse) / 2 ** 20 };
  } catch {
    return undefined;
  }
}

/** etcd's raised alarms (NOSPACE once the database reached its quota: every write is refused then). */
async function etcdAlarms(url: string): Promise<string[]> {
  try {
    const res = await fetch(`${url}/v3/maintenance/alarm`, { method: 'POST', body: JSON.stringify({ action: 'GET' }), signal: AbortSignal.timeout(5_000) });
    const body = (await res.json()) as { alarms?: { alarm?: string }[] };
    return (body.alarms ?? []).map((a) => a.alarm ?? 'unknown');
  } catch {
    return [];
  }
}

// ---- --scale: policy-sync alone, to P×C works ----

async function runScale(sandbox: Sandbox, kubeConfig: KubeConfig, http: KubeHttp, cli: string, startedAt: Date): Promise<ScaleResult> {
  const N = P * C;
  const etcd = etcdOf(sandbox);
  const alarms = await etcdAlarms(etcd.url);
  if (alarms.length > 0) {
    throw new Error(`etcd has alarms raised (${alarms.join(', ')}): every write would be refused; start the sandbox afresh (npx tsx hack/sandbox/cli.ts down --root ${root} --purge)`);
  }
  const dbAtStart = await etcdDb(etcd.url);
  log(`etcd: database ${dbAtStart ? `${dbAtStart.inUseMiB.toFixed(0)} MiB in use of ${dbAtStart.dbMiB.toFixed(0)} MiB` : 'size unknown'}, quota ${(etcd.quotaBytes / 2 ** 20).toFixed(0)} MiB`);
  const { clusters, policies } = await setupWorld(http);
  const machine = await machineInfo(http);
  const apiserverPid = sandbox.process('kube-apiserver/hub').pid;

  const crdUid = (await readCrd(http, AUTH_POLICIES))?.uid;
  // Per policy, so that the harness never holds the P×C works themselves, only their hashes.
  const expected = new Map<string, string>();
  for (const p of policies) for (const [k, v] of hashes(worksFor([p], ns, clusters, controllerName, crdUid))) expected.set(k, v);
  const works = await new Tracker(http, RESOURCES.manifestWorks, { labelSelector: `${CONTROLLER_LABEL}=${controllerLabelValue(controllerName)}` }, readSpecHash).start();
  const annotations = await new Tracker(http, AUTH_POLICIES, { namespace: ns }, (p) => p.metadata.annotations?.[POLICIES_SYNCED_ANNOTATION]).start();
  const synced = new Map(policies.map((p) => [`${ns}/${p.metadata.name}`, policiesSyncedAnnotation(clusters.map((cluster) => ({ cluster, name: p.metadata.name, namespace: ns }))) ?? '']));
  // 10k / 50k / 100k of the full run; the same fractions of a smaller world.
  const checkpoints = [...new Set([Math.round(N / 10), Math.round(N / 2), N])].filter((k) => k > 0);
  let stallTimer: NodeJS.Timeout | undefined;
  try {
    log('policy-sync: starting the controller');
    let controller = await startController(sandbox, cli);
    const cold = await startupPass(controller);
    const beforeFanout = (await waitQuiet(kubeConfig, 2_000, QUIET_TIMEOUT_MS)).snapshot;
    const reconcilesBefore = metricValue(await controllerMetrics(controller), 'controller_runtime_reconcile_total', { controller: 'policy' });
    log(`policy-sync: ${P} inert policies reconciled; creating Gateway ${ns}/gw (checkpoints at ${checkpoints.join(', ')} works)`);
    // The hub's garbage collector (kube-controller-manager) watches every resource, the works too.
    const cpu = new CpuWindow({ ...planePids(sandbox), controller: controller.pid, harness: process.pid, 'controller-manager': sandbox.process('kube-controller-manager/hub').pid });
    // The apiserver's peak from here on, not over the sandbox's life (writing 5 to clear_refs resets VmHWM).
    const apiserverPeakSinceFanout = resetPeakRss(apiserverPid);
    let apiserverPeakMiB = 0;
    const start = performance.now();
    const allWorks = works.expect(expected, `${N} works with the expected spec-hash`, FANOUT_TIMEOUT_MS);
    const allAnnotated = annotations.expect(synced, `${P} policies annotated`, FANOUT_TIMEOUT_MS);
    // Read on the watch event that reaches the checkpoint: /proc at once, etcd's status over HTTP just after.
    const points = checkpoints.map((k) =>
      works.until(() => works.matched >= k, `${k} works`, FANOUT_TIMEOUT_MS).then(async (at) => {
        const apiserver = rssOf(apiserverPid);
        apiserverPeakMiB = Math.max(apiserverPeakMiB, apiserver.peakMiB);
        const point = { works: k, elapsedMs: at - start, controllerRssMiB: rssOf(controller.pid).rssMiB, cpuSeconds: cpu.end(), apiserverRssMiB: apiserver.rssMiB };
        const db = await etcdDb(etcd.url);
        log(`policy-sync: ${k} works at ${(point.elapsedMs / 1000).toFixed(1)} s, controller RSS ${point.controllerRssMiB.toFixed(0)} MiB, apiserver RSS ${point.apiserverRssMiB.toFixed(0)} MiB`);
        return { ...point, ...(db ? { etcdDbMiB: db.dbMiB, etcdDbInUseMiB: db.inUseMiB } : {}) };
      }),
    );
    // A fan-out whose works stop appearing fails in minutes rather than at the hour's timeout.
    const stalled = new Promise<never>((_, reject) => {
      let [last, since] = [-1, Date.now()];
      stallTimer = setInterval(() => {
        if (works.matched !== last) [last, since] = [works.matched, Date.now()];
        else if (Date.now() - since > STALL_MS) {
          clearInterval(stallTimer);
          void etcdAlarms(etcd.url).then((a) =>
            reject(new Error(`the fan-out stalled: ${works.matched} of ${N} works as expected (${works.seen.size} seen) for ${STALL_MS / 60_000} min${a.length ? `; etcd alarms: ${a.join(', ')}` : ''} (see ${controller.log})`)),
          );
        }
      }, 10_000);
    });
    void stalled.catch(() => undefined);
    await apply(http, gateway(ns, 'gw', className, 'bench'));
    const ms = (await Promise.race([allWorks, stalled])) - start;
    clearInterval(stallTimer);
    const annotatedMs = (await allAnnotated) - start;
    const cpuSeconds = cpu.end();
    const reached = await Promise.all(points);
    const curve: ScalePoint[] = reached.map((p, i) => {
      const prev = i === 0 ? { works: 0, elapsedMs: 0 } : reached[i - 1]!;
      return { ...p, segmentWorksPerSecond: (p.works - prev.works) / Math.max(0.001, (p.elapsedMs - prev.elapsedMs) / 1000) };
    });
    log(`policy-sync: ${N} works in ${(ms / 1000).toFixed(2)} s, ${P} policies annotated in ${(annotatedMs / 1000).toFixed(2)} s`);
    const afterFanout = await waitQuiet(kubeConfig, 2_000, QUIET_TIMEOUT_MS);
    const reconciles = metricValue(await controllerMetrics(controller), 'controller_runtime_reconcile_total', { controller: 'policy' }) - reconcilesBefore;
    const fanoutRss = rssOf(controller.pid);
    const fanoutWritesReport = fanoutWrites(delta(beforeFanout, afterFanout.snapshot), afterFanout.quiet, N);

    // ---- restart on the P×C works ----
    await sandbox.remove(PS_COMPONENT, 15_000);
    const beforeRestart = (await waitQuiet(kubeConfig, 2_000, QUIET_TIMEOUT_MS)).snapshot;
    log(`restart: starting the controller on ${N} works`);
    controller = await startController(sandbox, cli);
    const pass = await startupPass(controller);
    const afterRestart = await waitQuiet(kubeConfig, 2_000, QUIET_TIMEOUT_MS);
    const restartRss = rssOf(controller.pid);
    apiserverPeakMiB = Math.max(apiserverPeakMiB, rssOf(apiserverPid).peakMiB);
    const db = await etcdDb(etcd.url);
    log(`restart: caches synced ${pass.cachesSyncedMs.toFixed(0)} ms, pass done ${pass.passMs.toFixed(0)} ms; peak RSS ${restartRss.peakMiB.toFixed(1)} MiB`);

    // ---- the same restart with paged lists, then both again on a quiet hub, for the reading ----
    // Right after the fan-out the apiserver's watch cache still holds snapshots of recent revisions, and
    // serves a paged list's continuations from them. On a quiet hub — no work written since the last etcd
    // compaction (every 5 min), as before most real restarts — it has none, and sends them to etcd.
    const restarts: NonNullable<ScaleResult['restarts']> = [];
    const restartAgain = async (label: string, args: string[]): Promise<void> => {
      await sandbox.remove(PS_COMPONENT, 15_000);
      await waitQuiet(kubeConfig, 2_000, QUIET_TIMEOUT_MS);
      log(`restart (${label}): starting the controller on ${N} works`);
      controller = await startController(sandbox, cli, undefined, args);
      const again = await startupPass(controller);
      const rss = rssOf(controller.pid);
      restarts.push({ label, args, ...again, peakRssMiB: rss.peakMiB });
      log(`restart (${label}): caches synced ${again.cachesSyncedMs.toFixed(0)} ms, pass done ${again.passMs.toFixed(0)} ms; peak RSS ${rss.peakMiB.toFixed(1)} MiB`);
    };
    await restartAgain('paged lists', ['--no-watch-list']);
    await sandbox.remove(PS_COMPONENT, 15_000);
    // Measured in the reading only: a hub that does not become quiet in time loses these two, not the run.
    const compactedMs = await waitCompacted(http, COMPACTION_TIMEOUT_MS).catch((err: unknown) => {
      log(`quiet hub: ${String(err)}; its two restarts are not made`);
      return undefined;
    });
    if (compactedMs !== undefined) {
      log(`quiet hub: the works' last revision compacted after ${(compactedMs / 1000).toFixed(0)} s`);
      await restartAgain('quiet hub', []);
      await restartAgain('quiet hub, paged lists', ['--no-watch-list']);
    }
    return {
      version: 2,
      mode: 'scale',
      startedAt: startedAt.toISOString(),
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`,
      machine,
      params: { policies: P, clusters: C, concurrency: CONCURRENCY, qps: LIFTED_QPS, burst: LIFTED_QPS, runId },
      fanout: { ms, works: N, annotatedMs, reconciles, cpuSeconds, coldStartMs: { serving: cold.servingMs, cachesSynced: cold.cachesSyncedMs, pass: cold.passMs }, curve },
      writes: {
        fanout: fanoutWritesReport,
        restart: report(delta(beforeRestart, afterRestart.snapshot), {}, 0, afterRestart.quiet, { text: '= 0', ok: (w) => w.total === 0 }),
      },
      memory: { fanoutPeakRssMiB: fanoutRss.peakMiB, fanoutRssMiB: fanoutRss.rssMiB, restartPeakRssMiB: restartRss.peakMiB, restartRssMiB: restartRss.rssMiB, works: N },
      startup: pass,
      restarts,
      plane: { apiserverPeakRssMiB: apiserverPeakMiB, apiserverPeakSinceFanout, ...(db ? { etcdDbMiB: db.dbMiB, etcdDbInUseMiB: db.inUseMiB } : {}), etcdQuotaMiB: etcd.quotaBytes / 2 ** 20 },
    };
  } finally {
    clearInterval(stallTimer);
    await works.stop();
    await annotations.stop();
  }
}

async function ocmBaseline(sandbox: Sandbox, kubeConfig: KubeConfig, http: KubeHttp, policies: KubeObject[], clusters: string[], label: string): Promise<NonNullable<BenchResult['fanout']['ocm']>> {
  const N = P * C;
  const port = await freePort();
  log(`${label}: starting \`work manager --feature-gates=ManifestWorkReplicaSet=true\``);
  const manager = await sandbox.run(
    {
      name: MANAGER_COMPONENT,
      command: join(binDir, 'work'),
      args: [
        'manager',
        `--kubeconfig=${sandbox.hub.kubeconfig}`,
        `--namespace=${PLACEMENT_NAMESPACE}`,
        '--disable-leader-election',
        `--listen=127.0.0.1:${port}`,
        '--feature-gates=ManifestWorkReplicaSet=true',
        // Lifted like the controller's: both bound by the apiserver, not by a client-side limiter.
        `--kube-api-qps=${LIFTED_QPS}`,
        `--kube-api-burst=${LIFTED_QPS}`,
      ],
      log: join(sandbox.layout.logs, 'bench-work-manager.log'),
    },
    { url: `https://127.0.0.1:${port}/healthz` },
  );
  const works = await new Tracker(http, RESOURCES.manifestWorks, { labelSelector: `${MWRS_PLACEMENT_LABEL}=bench-ocm` }, () => 'x').start();
  const decisions = await new Tracker(http, RESOURCES.placementDecisions, { namespace: ns, labelSelector: `${PLACEMENT_LABEL}=bench-ocm` }, (d) => clustersFromDecisions([d]).join(',')).start();
  try {
    // Each policy's work spec (the same on every cluster) as the template, over Placement bench-ocm,
    // which does not exist yet.
    await pool(policies, 16, (p) =>
      applyObject(http, REPLICA_SETS, {
        apiVersion: 'work.open-cluster-management.io/v1alpha1',
        kind: 'ManifestWorkReplicaSet',
        metadata: { name: p.metadata.name, namespace: ns, labels: { [BENCH_LABEL]: 'run' } },
        spec: {
          manifestWorkTemplate: worksFor([p], ns, clusters.slice(0, 1), controllerName)[0]!.spec,
          placementRefs: [{ name: 'bench-ocm', rolloutStrategy: { type: 'All' } }],
        },
      }),
    );
    const before = (await waitQuiet(kubeConfig, 2_000, 120_000)).snapshot;
    log(`${label}: ${P} ManifestWorkReplicaSets created; creating Placement ${ns}/bench-ocm`);
    const cpu = new CpuWindow({ ...planePids(sandbox), 'work manager': manager.pid, harness: process.pid });
    const start = performance.now();
    const decided = decisions.until(() => [...decisions.seen.values()].reduce((n, v) => n + (v ? v.split(',').length : 0), 0) === C, `Placement bench-ocm to decide ${C} clusters`, 120_000);
    const all = works.until(() => works.seen.size === N, `${N} works from the replica sets`, FANOUT_TIMEOUT_MS);
    await applyObject(http, PLACEMENTS, {
      apiVersion: 'cluster.open-cluster-management.io/v1beta1',
      kind: 'Placement',
      metadata: { name: 'bench-ocm', namespace: ns },
      spec: { clusterSets: [CLUSTER_SET], tolerations: BENCH_TOLERATIONS },
    });
    const decidedAt = await decided;
    const doneAt = await all;
    const cpuSeconds = cpu.end();
    log(`${label}: ${N} works in ${((doneAt - decidedAt) / 1000).toFixed(2)} s after the decision (${((doneAt - start) / 1000).toFixed(2)} s after the Placement)`);
    // Its replica sets keep reporting rollout progress for a while: their status writes are counted too.
    const after = await waitQuiet(kubeConfig, 2_000, 120_000);
    const writes = report(delta(before, after.snapshot), { 'APPLY cluster.open-cluster-management.io/placements': 1 }, N, after.quiet);
    log(`${label}: deleting the replica sets (its controller deletes their works)`);
    await deleteCollection(http, REPLICA_SETS, ns);
    await works.until(() => works.seen.size === 0, 'the replica sets\' works to go', 600_000);
    await poll('the replica sets to go', async () => (await listAll(http, REPLICA_SETS, ns)).length === 0, 120_000);
    return { ms: doneAt - decidedAt, works: N, fromPlacementMs: doneAt - start, decisionMs: decidedAt - start, writes, cpuSeconds };
  } finally {
    await sandbox.remove(MANAGER_COMPONENT);
    await works.stop();
    await decisions.stop();
    await removeReplicaSets(http, ns);
    await deleteIfPresent(http, PLACEMENTS, ns, 'bench-ocm');
    // Gone with its decisions before the next round: a decision left over would start its clock early.
    await poll('Placement bench-ocm and its decisions to go', async () => {
      const left = [...(await listAll(http, PLACEMENTS, ns)), ...(await listAll(http, RESOURCES.placementDecisions, ns))];
      return !left.some((o) => o.metadata.name === 'bench-ocm' || o.metadata.labels?.[PLACEMENT_LABEL] === 'bench-ocm');
    }, 120_000);
  }
}

/** Workload 4: K isolated status changes on the spoke copy of one policy, timed by watches on the hub. */
async function feedback(kubeConfig: KubeConfig, http: KubeHttp, spokeHttp: KubeHttp): Promise<BenchResult['feedback']> {
  await ensureNamespace(spokeHttp, fbNs, 'run');
  await ensureNamespace(http, fbNs, 'run');
  await applyObject(http, CLUSTER_SETS, {
    apiVersion: 'cluster.open-cluster-management.io/v1beta2',
    kind: 'ManagedClusterSet',
    metadata: { name: SPOKE_CLUSTER_SET, labels: { [BENCH_LABEL]: 'cluster' } },
    spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } },
  });
  await mergePatch(http, MANAGED_CLUSTERS, undefined, SPOKE, { metadata: { labels: { [CLUSTER_SET_LABEL]: SPOKE_CLUSTER_SET } } }, { fieldManager: FIELD_MANAGER });
  await placement(http, fbNs, 'spoke', SPOKE_CLUSTER_SET);
  await waitForDecisions(http, fbNs, 'spoke', [SPOKE]);
  await apply(http, gateway(fbNs, 'gw', className, 'spoke'));
  const name = 'fb';
  const enforcedMessage = (w: KubeObject): string | undefined => {
    const values = (w.status as { resourceStatus?: { manifests?: { statusFeedback?: { values?: { name: string; fieldValue: { string?: string } }[] } }[] } } | undefined)?.resourceStatus
      ?.manifests?.[0]?.statusFeedback?.values;
    return values?.find((v) => v.name === 'enforcedMessage')?.fieldValue.string;
  };
  const hubMessage = (p: KubeObject): string | undefined => {
    const text = p.metadata.annotations?.[STATUS_ANNOTATION];
    if (text === undefined) return undefined;
    return (JSON.parse(text) as { clusters?: Record<string, { message?: string; applied?: boolean }> }).clusters?.[SPOKE]?.message;
  };
  const work = await new Tracker(http, RESOURCES.manifestWorks, { namespace: SPOKE, labelSelector: `${SOURCE_LABEL}=${sourceHash(AUTH_POLICIES, fbNs, name)}` }, enforcedMessage).start();
  const policy = await new Tracker(http, AUTH_POLICIES, { namespace: fbNs, fieldSelector: `metadata.name=${name}` }, hubMessage).start();
  const key = `${fbNs}/${name}`;
  try {
    await apply(http, authPolicy(fbNs, name, 'gw'));
    await poll(`the copy of ${key} on ${SPOKE}`, () => get(spokeHttp, AUTH_POLICIES, fbNs, name), 120_000);
    await poll(`${key} to show ${SPOKE} applied`, async () => {
      const text = (await get(http, AUTH_POLICIES, fbNs, name))?.metadata.annotations?.[STATUS_ANNOTATION];
      return text !== undefined && (JSON.parse(text) as { clusters?: Record<string, { applied?: boolean }> }).clusters?.[SPOKE]?.applied === true;
    }, 120_000);
    const before = (await waitQuiet(kubeConfig)).snapshot;
    log(`feedback: ${K} status changes on the copy of ${key} on ${SPOKE}`);
    const samplesMs: { totalMs: number; ocmMs: number; oursMs: number }[] = [];
    for (let i = 1; i <= K; i++) {
      // Isolated changes: past the coalescing window of the previous annotation write.
      await sleep(STATUS_COALESCE_MS + 100);
      const message = `AuthPolicy has been successfully enforced (bench change ${i})`;
      const atWork = work.until(() => [...work.seen.values()].includes(message), `change ${i} in the work's feedback`, 60_000);
      const atHub = policy.until(() => policy.seen.get(key) === message, `change ${i} on the hub annotation`, 60_000);
      const start = performance.now();
      await writeSpokeStatus(spokeHttp, name, message);
      const [w, h] = await Promise.all([atWork, atHub]);
      samplesMs.push({ totalMs: h - start, ocmMs: w - start, oursMs: h - w });
    }
    const after = await waitQuiet(kubeConfig);
    const writes = delta(before, after.snapshot).writes.get(POLICY_PATCH) ?? 0;
    const r = (x: number): number => Math.round(x * 10) / 10;
    const result = {
      changes: K,
      totalMs: stats(samplesMs.map((s) => s.totalMs)),
      ocmMs: stats(samplesMs.map((s) => s.ocmMs)),
      oursMs: stats(samplesMs.map((s) => s.oursMs)),
      annotationWrites: writes,
      samples: samplesMs.map((s) => ({ totalMs: r(s.totalMs), ocmMs: r(s.ocmMs), oursMs: r(s.oursMs) })),
    };
    log(`feedback: ours median ${result.oursMs.median} ms, p99 ${result.oursMs.p99} ms; OCM median ${result.ocmMs.median} ms`);
    return result;
  } finally {
    await work.stop();
    await policy.stop();
  }
}

/** Accepted and Enforced on the spoke copy, as the spoke's policy controller would write them. */
async function writeSpokeStatus(spoke: KubeHttp, name: string, message: string): Promise<void> {
  const copy = (await get(spoke, AUTH_POLICIES, fbNs, name))!;
  const generation = copy.metadata.generation;
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const conditions: Condition[] = [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'AuthPolicy has been accepted', observedGeneration: generation, lastTransitionTime: now },
    { type: 'Enforced', status: 'True', reason: 'Enforced', message, observedGeneration: generation, lastTransitionTime: now },
  ];
  await mergePatch(spoke, AUTH_POLICIES, fbNs, name, { status: { conditions } }, { subresource: 'status', fieldManager: 'kuadrant-policy-controller' });
}

function profileOf(dir: string): ProfileSummary | undefined {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) {
    log(`no .cpuprofile was written in ${dir}`);
    return undefined;
  }
  const summary = summariseProfile(join(dir, files[0]!), 25);
  log(`CPU profile: ${summary.file}`);
  return summary;
}

/** The hub's apiserver and etcd, whose CPU a fan-out spends. */
function planePids(sandbox: Sandbox): Record<string, number> {
  return { apiserver: sandbox.process('kube-apiserver/hub').pid, etcd: sandbox.process('etcd').pid };
}

/**
 * Deletes the works (all, or those matching `labelSelector`) in each namespace, one deletecollection per
 * namespace. The apiserver deletes a collection one object after another (--delete-collection-workers=1)
 * and gives up at its request timeout (60 s) with the rest still there: such a call is simply made again.
 */
async function deleteWorks(http: KubeHttp, namespaces: readonly string[], labelSelector?: string): Promise<void> {
  await pool(namespaces, 8, async (n) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await deleteCollection(http, RESOURCES.manifestWorks, n, labelSelector);
        return;
      } catch (err) {
        if (attempt >= 20) throw err;
        log(`deleting the works in ${n}: ${err instanceof Error ? err.message : String(err)}; again`);
      }
    }
  });
}

/** What an interrupted run may have left: replica sets (with finalizers), works on the bench clusters, run namespaces. */
async function cleanLeftovers(http: KubeHttp, cleanupHttp: KubeHttp, spokeHttp: KubeHttp): Promise<void> {
  await removeReplicaSets(http);
  const benchClusters = (await listAll(http, RESOURCES.namespaces, undefined, `${BENCH_LABEL}=cluster`)).map((n) => n.metadata.name);
  await deleteWorks(cleanupHttp, benchClusters);
  await cleanRun(http, cleanupHttp, spokeHttp, true, true);
}

/** Deletes the run's objects (all runs' with `everyRun`) and, when `wait`, waits for the namespaces to go. */
async function cleanRun(http: KubeHttp, cleanupHttp: KubeHttp, spokeHttp: KubeHttp, wait: boolean, everyRun = false): Promise<void> {
  // Works first: the bench clusters' have no agent (no finalizer); spoke-1's go through its agent.
  const mine = everyRun ? `${CONTROLLER_LABEL}` : `${CONTROLLER_LABEL} in (${controllerLabelValue(controllerName)},${controllerLabelValue(bareName)})`;
  const benchClusters = (await listAll(http, RESOURCES.namespaces, undefined, `${BENCH_LABEL}=cluster`)).map((n) => n.metadata.name);
  const start = performance.now();
  await deleteWorks(cleanupHttp, [...benchClusters, SPOKE], mine);
  log(`cleanup: works deleted in ${((performance.now() - start) / 1000).toFixed(1)} s`);
  await removeReplicaSets(http, everyRun ? undefined : ns);
  for (const c of await listAll(http, RESOURCES.gatewayClasses, undefined, `${BENCH_LABEL}=run`)) {
    if (everyRun || c.metadata.name === className) await deleteIfPresent(http, RESOURCES.gatewayClasses, undefined, c.metadata.name);
  }
  const runNamespaces = async (h: KubeHttp): Promise<string[]> =>
    (await listAll(h, RESOURCES.namespaces, undefined, `${BENCH_LABEL}=run`)).map((n) => n.metadata.name).filter((n) => everyRun || n === ns || n === fbNs);
  for (const h of [http, spokeHttp]) for (const n of await runNamespaces(h)) await deleteIfPresent(h, RESOURCES.namespaces, undefined, n);
  if (!wait) return;
  // The namespace controller empties them (P policies): its deletions would be counted against the next window.
  await poll('the run namespaces to go', async () => (await runNamespaces(http)).length === 0 && (await runNamespaces(spokeHttp)).length === 0, 900_000, 500);
}

async function machineInfo(http: KubeHttp): Promise<BenchResult['machine']> {
  const version = await http.request<{ gitVersion?: string }>('GET', '/version').catch(() => undefined);
  const pins = readFileSync(join(repoRoot, 'hack', 'versions.env'), 'utf8');
  return {
    nproc: cpus().length,
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    kubernetes: version?.gitVersion,
    ocm: /^OCM_VERSION=(.*)$/m.exec(pins)?.[1],
  };
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
