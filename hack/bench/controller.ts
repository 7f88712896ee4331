// The measured controller as its own process (the compiled CLI, as the container image runs it), so that its
// RSS and CPU profile are its own: started, scraped, timed to its start-up pass; and the CPU and memory of
// the processes a workload measures, from /proc.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { samples } from '../../testkit/metrics.ts';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import { freePort } from '../../testkit/sandbox/ports.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { PS_COMPONENT, LIFTED_QPS, STATUS_COALESCE_MS, log, type Bench } from './config.ts';
import { summariseProfile, type ProfileSummary } from './cpuprofile.ts';
import { imageNodeFlags } from './image.ts';
import type { BenchResult } from './report.ts';

export interface Controller {
  pid: number;
  port: number;
  /** performance.now() and Date.now() just before the process was spawned. */
  startedAt: number;
  startedAtEpoch: number;
  log: string;
  profileDir?: string;
}

/** The CLI compiled as the container image runs it (no TypeScript loader in the measured process). */
export function buildCli(root: string): string {
  const dist = join(repoRoot, '.local', 'bench', `dist-${createHash('sha256').update(root).digest('hex').slice(0, 8)}`);
  rmSync(dist, { recursive: true, force: true });
  execFileSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(repoRoot, 'tsconfig.build.json'), '--outDir', dist], {
    cwd: repoRoot,
    stdio: ['ignore', 2, 2],
  });
  return join(dist, 'cli', 'main.js');
}

export async function startController(bench: Bench, profileDir?: string, extraArgs: string[] = []): Promise<Controller> {
  const { sandbox, cli, cfg } = bench;
  const port = await freePort();
  const args = [
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ...imageNodeFlags(),
    cli,
    'hub',
    `--kubeconfig=${sandbox.hub.kubeconfig}`,
    `--controller-name=${cfg.controllerName}`,
    `--concurrency=${cfg.CONCURRENCY}`,
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
  const proc = await sandbox.run({ name: PS_COMPONENT, command: process.execPath, args, log }, { url: `http://127.0.0.1:${port}/healthz` }, undefined, { once: true });
  return { pid: proc.pid, port, startedAt, startedAtEpoch, log, profileDir };
}

export async function controllerMetrics(c: Controller): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${c.port}/metrics`);
  return res.text();
}

export async function controllerReady(c: Controller): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${c.port}/readyz`);
  return res.ok;
}

export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text, name)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** The time (epoch ms) of the controller's own log line `msg` (its first word: `caches synced`, `serving …`). */
export function loggedAt(c: Controller, msg: string): number | undefined {
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
export async function startupPass(c: Controller, P: number, timeoutMs: number): Promise<BenchResult['startup']> {
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
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    // After the command: state is field 3, utime 14 and stime 15 (1-based, man proc).
    return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond();
  } catch {
    return 0;
  }
}
let clockTicks: number | undefined;
/** The kernel's clock ticks per second (getconf CLK_TCK), read once, on first use. */
function clockTicksPerSecond(): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return clockTicks;
}

/** CPU used by the hub's apiserver, etcd and the process doing the fan-out, over a window. */
/**
 * CPU seconds per process over a window and, given every process the bench runs (`ours`), what the rest of the
 * machine spent meanwhile (`outside`): every core's busy time (/proc/stat) less theirs. A round beside a type-check
 * or a test run shows it there, not only as a worse ratio (issue 32: a first round at 1.84 × the bare creates).
 */
export class CpuWindow {
  private readonly start: Record<string, number>;
  /** Every process of ours, and its CPU seconds when the window opened. */
  private readonly ours: ReadonlyMap<number, number>;
  private readonly machineStart: number;
  constructor(private readonly pids: Record<string, number>, ours?: readonly number[]) {
    this.start = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
    this.ours = new Map(ours === undefined ? [] : [...new Set([...ours, ...Object.values(pids)])].map((pid) => [pid, cpuSeconds(pid)]));
    this.machineStart = machineCpuSeconds();
  }

  /** CPU seconds per process since the window opened; with `ours`, also `outside`. */
  end(): Record<string, number> {
    const perProcess = Object.fromEntries(Object.entries(this.pids).map(([k, pid]) => [k, round1(cpuSeconds(pid) - this.start[k]!)]));
    if (this.ours.size === 0) return perProcess;
    // A process of ours that ended in the window reads 0: its seconds in the window count as outside.
    let oursSpent = 0;
    for (const [pid, before] of this.ours) oursSpent += Math.max(0, cpuSeconds(pid) - before);
    return { ...perProcess, outside: round1(Math.max(0, machineCpuSeconds() - this.machineStart - oursSpent)) };
  }
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** CPU seconds every core of the machine has been busy so far (/proc/stat: user, nice, system, irq, softirq). */
export function machineCpuSeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = fields;
  return (user + nice + system + irq + softirq) / clockTicksPerSecond();
}

/** Peak (VmHWM) and current (VmRSS) resident set of a process, MiB. */
export function rssOf(pid: number): { peakMiB: number; rssMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { peakMiB: kb('VmHWM') / 1024, rssMiB: kb('VmRSS') / 1024 };
}

/** Resets a process's VmHWM to its current RSS; false if that was refused. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}


export function profileOf(dir: string): ProfileSummary | undefined {
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
export function planePids(sandbox: Sandbox): Record<string, number> {
  return { apiserver: sandbox.process('kube-apiserver/hub').pid, etcd: sandbox.process('etcd').pid };
}
