// The bench's parameters from its command line (see main.ts), the names of one run's objects, and what every
// workload shares: the sandbox, its clients, the compiled CLI and the run's log.
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { hubRequestsInFlight } from '../../src/hub/assembly.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { BenchResult } from './report.ts';

export const PS_COMPONENT = 'bench/policy-sync';
export const MANAGER_COMPONENT = 'bench/work-manager';
export const SPOKE = 'spoke-1';
export const SPOKE_CLUSTER_SET = 'policy-sync-bench-spoke';
/** Client-side write limits of the measured controller: lifted, so that it is bound by the apiserver alone. */
export const LIFTED_QPS = 100_000;
/** The controller's status annotation coalescing window (its default); feedback changes are spaced past it. */
export const STATUS_COALESCE_MS = 200;
/** A scale fan-out whose works stop appearing for this long has stalled (etcd out of space, say): fail then. */
export const STALL_MS = 5 * 60_000;
/** Deadline of the harness's deletecollection calls, which the apiserver may take its full 60 s over. */
export const CLEANUP_REQUEST_TIMEOUT_MS = 120_000;

export interface BenchConfig {
  quick: boolean;
  SCALE: boolean;
  /** --fleet: workloads/fleet.ts (bundles at a fleet's size, against today's shape's floor). */
  FLEET: boolean;
  P: number;
  C: number;
  K: number;
  CONCURRENCY: number;
  /**
   * The bare client's requests under way: as many as the controller's work writes may have — its request slots
   * (src/hub/assembly.ts hubRequestsInFlight), or all its workers' writes when those are fewer.
   */
  BARE_IN_FLIGHT: number;
  ROUNDS: number;
  /**
   * How long a fan-out may take before the run fails: a quick run that stalls says so in minutes, not half an
   * hour; 100k works at the ~200 works/s of the default run take ~10 min, and the rate may fall as they grow.
   */
  FANOUT_TIMEOUT_MS: number;
  /** Start-up pass and quiet waits: a restart lists all P×C works, and waits on 100k works take longer. */
  PASS_TIMEOUT_MS: number;
  QUIET_TIMEOUT_MS: number;
  root: string;
  json: string | undefined;
  cpuProf: boolean;
  skipBaselines: boolean;
  /** Workload 6 (per-cluster copies) left out: its three fan-outs of rendered works add minutes to a run. */
  skipVariants: boolean;
  /**
   * `--only variants`: workload 6 alone on a world of its own (a quarter of a full run), for its three runs on a
   * quiet machine; with --cpu-prof, its last policy-sync fan-out is profiled.
   */
  onlyVariants: boolean;
  down: boolean;
  keepWorld: boolean;
  purge: boolean;
  runId: string;
  /** The run's namespace (its policies, Placement and Gateway), and the feedback workload's. */
  ns: string;
  fbNs: string;
  controllerName: string;
  bareName: string;
  className: string;
  /** The class of workload 5's Progressive policy (its params set a rolloutStrategy). */
  rolloutClassName: string;
  /** Workload 5's strategy: minSuccessTime (a Go duration) and maxConcurrency (a count). */
  ROLLOUT_MIN_SUCCESS: string;
  ROLLOUT_MAX_CONCURRENCY: number;
}

function count(name: string, value: string | undefined, fallback: number): number {
  const n = value === undefined ? fallback : Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${value}`);
  return n;
}

export function parseConfig(args: string[]): BenchConfig {
  const { values: flags } = parseArgs({
    args,
    options: {
      quick: { type: 'boolean', default: false },
      scale: { type: 'boolean', default: false },
      fleet: { type: 'boolean', default: false },
      policies: { type: 'string', short: 'P' },
      clusters: { type: 'string', short: 'C' },
      changes: { type: 'string', short: 'K' },
      concurrency: { type: 'string', default: '4' },
      rounds: { type: 'string' },
      root: { type: 'string' },
      json: { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
      'skip-baselines': { type: 'boolean', default: false },
      'skip-variants': { type: 'boolean', default: false },
      only: { type: 'string' },
      down: { type: 'boolean', default: false },
      'keep-world': { type: 'boolean', default: false },
      purge: { type: 'boolean', default: false },
    },
  });
  if (flags.quick && flags.scale) throw new Error('--quick and --scale exclude each other');
  if (flags.fleet && (flags.quick || flags.scale || flags.only !== undefined || flags.rounds !== undefined)) {
    throw new Error('--fleet excludes --quick, --scale, --only and --rounds');
  }
  const FLEET = flags.fleet;
  if (flags.only !== undefined && flags.only !== 'variants') throw new Error(`--only takes one workload, \`variants\`; got ${flags.only}`);
  if (flags.only !== undefined && (flags.scale || flags['skip-variants'])) throw new Error('--only variants excludes --scale and --skip-variants');
  // A profile of a 100k-work fan-out would be hundreds of MB, and the profiler's cost would bend the curve.
  if (flags.scale && flags['cpu-prof']) throw new Error('--cpu-prof is not supported with --scale');
  const SCALE = flags.scale;
  const P = count('policies', flags.policies, flags.quick ? 20 : SCALE ? 5000 : FLEET ? 30 : 1000);
  const C = count('clusters', flags.clusters, flags.quick ? 3 : SCALE ? 20 : FLEET ? 1000 : 10);
  const LARGE = SCALE || FLEET;
  const K = count('changes', flags.changes, flags.quick ? 3 : 100);
  const CONCURRENCY = count('concurrency', flags.concurrency, 4);
  if (flags.scale && flags.rounds !== undefined) throw new Error('--rounds is not supported with --scale (policy-sync alone, one fan-out)');
  /**
   * Rounds of the compared fan-outs — OCM, the bare client's creates, then policy-sync — back to back: the
   * machine's speed drifts by ±20 % over minutes (shared vCPUs, steal), so fan-outs measured once, minutes
   * apart, compare the moments more than the writers. Each ratio is the median of the rounds'. The quick run
   * makes two, so that the test suite goes through the reset between rounds.
   */
  const ROUNDS = count('rounds', flags.rounds, flags.quick ? 2 : 3);
  const runId = `${new Date().toISOString().slice(11, 19).replace(/:/g, '')}${randomBytes(2).toString('hex')}`;
  const ns = `bench-${runId}`;
  return {
    quick: flags.quick,
    SCALE,
    FLEET,
    P,
    C,
    K,
    CONCURRENCY,
    BARE_IN_FLIGHT: Math.min(hubRequestsInFlight(CONCURRENCY), CONCURRENCY * C),
    ROUNDS,
    FANOUT_TIMEOUT_MS: flags.quick ? 180_000 : LARGE ? 60 * 60_000 : 30 * 60_000,
    PASS_TIMEOUT_MS: LARGE ? 15 * 60_000 : 300_000,
    QUIET_TIMEOUT_MS: LARGE ? 600_000 : 120_000,
    root: resolve(flags.root ?? join(repoRoot, '.local', 'bench-sandbox')),
    json: flags.json,
    cpuProf: flags['cpu-prof'],
    skipBaselines: flags['skip-baselines'],
    skipVariants: flags['skip-variants'],
    onlyVariants: flags.only === 'variants',
    down: flags.down,
    keepWorld: flags['keep-world'],
    purge: flags.purge,
    runId,
    ns,
    fbNs: `${ns}-fb`,
    controllerName: `bench.policy-sync.io/${runId}`,
    bareName: `bench.policy-sync.io/${runId}-bare`,
    className: `bench-${runId}`,
    rolloutClassName: `bench-${runId}-rollout`,
    ROLLOUT_MIN_SUCCESS: flags.quick ? '1s' : '2s',
    ROLLOUT_MAX_CONCURRENCY: 1,
  };
}

/** What every workload of one run works with. */
export interface Bench {
  cfg: BenchConfig;
  sandbox: Sandbox;
  kubeConfig: KubeConfig;
  http: KubeHttp;
  /** For the harness's deletecollection calls, with their longer deadline. */
  cleanupHttp: KubeHttp;
  spokeHttp: KubeHttp;
  /** The compiled CLI the controller runs as. */
  cli: string;
}

const t0 = performance.now();

export function log(message: string): void {
  process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${message}\n`);
}

/** The default mode's result as its workloads fill it in, in the order they run (the JSON's key order). */
export type ResultDraft = Omit<Partial<BenchResult>, 'fanout' | 'writes'> & { fanout: Partial<BenchResult['fanout']>; writes: Partial<BenchResult['writes']> };
