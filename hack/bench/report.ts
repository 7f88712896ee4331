// The benchmark's result: its JSON shape, statistics and the one table it prints.
import type { ProfileSummary } from './cpuprofile.ts';

export interface Stats {
  n: number;
  median: number;
  p99: number;
  max: number;
}

/** Median and nearest-rank p99 of `xs` (ms, rounded to 0.1). */
export function stats(xs: readonly number[]): Stats {
  const sorted = [...xs].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return { n, median: NaN, p99: NaN, max: NaN };
  const median = n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  const p99 = sorted[Math.max(0, Math.ceil(0.99 * n) - 1)]!;
  const r = (x: number): number => Math.round(x * 10) / 10;
  return { n, median: r(median), p99: r(p99), max: r(sorted[n - 1]!) };
}

export interface WriteReport {
  /** Writes counted in the window, by `VERB group/resource`, the benchmark's own taken out. */
  byRequest: Record<string, number>;
  total: number;
  minimum: number;
  /** Reported apart: create-only reviews, the apiserver's own heartbeat, other components' Events. */
  reviews: Record<string, number>;
  background: Record<string, number>;
  others: Record<string, number>;
  /** What the benchmark itself wrote in the window (subtracted above). */
  own: Record<string, number>;
  /** False when the counters still moved at the end of the window's wait. */
  quiet: boolean;
  /** The target, in words, and whether it was met (absent for the baselines). */
  target?: string;
  ok?: boolean;
}

export interface FanoutResult {
  /** Trigger → all P×C works seen with the right spec-hash (the same watch times all three). */
  ms: number;
  works: number;
  /** CPU seconds spent in the window by the hub apiserver, etcd, the writer and the benchmark itself. */
  cpuSeconds: Record<string, number>;
}

export interface BenchResult {
  version: 1;
  startedAt: string;
  finishedAt?: string;
  command: string;
  machine: { nproc: number; loadAverage: number[]; memoryGiB: number; cpu: string; node: string; kubernetes?: string; ocm?: string };
  params: {
    policies: number;
    clusters: number;
    feedbackChanges: number;
    concurrency: number;
    qps: number;
    burst: number;
    bareInFlight: number;
    quick: boolean;
    profiled: boolean;
    runId: string;
  };
  fanout: {
    policySync: FanoutResult & {
      annotatedMs: number;
      /** Policy reconciles from the trigger until the writes stopped. */
      reconciles: number;
      /** The first start, on no works (P inert policies). */
      coldStartMs: { serving: number; cachesSynced: number; pass: number };
    };
    bare?: FanoutResult & { requestsMs: number };
    /** The bare client again with plain POST creates instead of server-side apply: for the reading, not a target. */
    bareCreate?: FanoutResult & { requestsMs: number };
    ocm?: FanoutResult & { fromPlacementMs: number; decisionMs: number; writes: WriteReport };
    ratioBare?: number;
    ratioOcm?: number;
  };
  writes: { fanout: WriteReport; change: WriteReport & { ms: number }; restart: WriteReport; bare?: WriteReport };
  memory: { fanoutPeakRssMiB: number; fanoutRssMiB: number; restartPeakRssMiB: number; restartRssMiB: number; works: number };
  /** The restart on the P×C works: to serving its probes (modules loaded), caches synced, the no-op pass done. */
  startup: { servingMs: number; cachesSyncedMs: number; passMs: number; reconciles: number };
  feedback: {
    changes: number;
    totalMs: Stats;
    ocmMs: Stats;
    oursMs: Stats;
    annotationWrites: number;
    samples: { totalMs: number; ocmMs: number; oursMs: number }[];
  };
  /** With --cpu-prof: the controller of the fan-out (its whole life: start, fan-out, one change) and the restarted one (start-up pass). */
  profile?: { fanout?: ProfileSummary; restart?: ProfileSummary };
}

const r1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
const secs = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

function verdict(ok: boolean | undefined): string {
  return ok === undefined ? '' : ok ? 'ok' : 'MISSED';
}

/** `APPLY work.open-cluster-management.io/manifestworks` → `APPLY manifestworks`. */
function shortKey(key: string): string {
  const [verb, resource] = key.split(' ');
  return `${verb} ${(resource ?? '').split('/').slice(1).join('/')}`;
}

function breakdown(byRequest: Record<string, number>, max = 4): string {
  const entries = Object.entries(byRequest).sort((a, b) => b[1] - a[1]);
  const shown = entries.slice(0, max).map(([k, v]) => `${shortKey(k)} ${v}`);
  if (entries.length > max) shown.push(`other ${entries.slice(max).reduce((n, [, v]) => n + v, 0)}`);
  return shown.join(', ');
}

function writeLine(w: WriteReport): string {
  const extra = breakdown(w.byRequest);
  return `${w.total}${extra ? ` (${extra})` : ''}${w.quiet ? '' : ' NOT QUIET'}`;
}

/** The one table: workload, measure, result, target, verdict. */
export function formatTable(r: BenchResult): string {
  const { policies: P, clusters: C } = r.params;
  const rows: [string, string, string, string, string][] = [];
  const f = r.fanout;
  const cpu = (x: FanoutResult): string => `${secs(x.ms)} (CPU s: ${Object.entries(x.cpuSeconds).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')})`;
  rows.push(['1 fan-out', `policy-sync, ${P}×${C} works (concurrency ${r.params.concurrency})`, cpu(f.policySync), '', '']);
  rows.push(['', `  … and all P annotated (${f.policySync.reconciles} policy reconciles)`, secs(f.policySync.annotatedMs), '', '']);
  if (f.bare) rows.push(['', `bare client, SSA, ${r.params.bareInFlight} in flight`, cpu(f.bare), '', '']);
  if (f.bareCreate) rows.push(['', `  (bare client, POST creates instead)`, cpu(f.bareCreate), '', '']);
  if (f.ocm) rows.push(['', `OCM ManifestWorkReplicaSet (from decision)`, cpu(f.ocm), '', '']);
  if (f.ocm) rows.push(['', `  … from Placement created (decision ${secs(f.ocm.decisionMs)})`, secs(f.ocm.fromPlacementMs), '', '']);
  if (f.ratioBare !== undefined) rows.push(['', 'policy-sync / bare', f.ratioBare.toFixed(2), '≤ 1.3', verdict(f.ratioBare <= 1.3)]);
  if (f.ratioOcm !== undefined) rows.push(['', 'policy-sync / OCM', f.ratioOcm.toFixed(2), '< 1', verdict(f.ratioOcm < 1)]);
  const w = r.writes;
  rows.push(['2 writes', 'fan-out', writeLine(w.fanout), w.fanout.target ?? '', verdict(w.fanout.ok)]);
  rows.push(['', 'one policy changed', writeLine(w.change), w.change.target ?? '', verdict(w.change.ok)]);
  rows.push(['', 'controller restart, unchanged world', writeLine(w.restart), w.restart.target ?? '', verdict(w.restart.ok)]);
  if (w.bare) rows.push(['', 'bare client fan-out (sanity)', writeLine(w.bare), '', '']);
  if (f.ocm) rows.push(['', 'OCM fan-out (for comparison)', writeLine(f.ocm.writes), '', '']);
  const m = r.memory;
  const peak = Math.max(m.fanoutPeakRssMiB, m.restartPeakRssMiB);
  rows.push(['3 memory', `peak RSS, fan-out (${m.works} works cached)`, `${r1(m.fanoutPeakRssMiB)} MiB`, '', '']);
  rows.push(['', `peak RSS, restart (${m.works} works listed)`, `${r1(m.restartPeakRssMiB)} MiB`, '≤ 250 MB (both)', verdict(peak * 1.048576 <= 250)]);
  rows.push(['', 'RSS at rest after restart', `${r1(m.restartRssMiB)} MiB`, '', '']);
  rows.push(['  start-up', 'start → serving probes (modules loaded)', secs(r.startup.servingMs), '', '']);
  rows.push(['', 'start → caches synced (works etc. listed)', secs(r.startup.cachesSyncedMs), '', '']);
  rows.push(['', `start → no-op pass done (${r.startup.reconciles} reconciles)`, secs(r.startup.passMs), '', '']);
  const fb = r.feedback;
  rows.push(['4 feedback', `spoke change → hub annotation (K=${fb.changes})`, `median ${r1(fb.totalMs.median)} ms, p99 ${r1(fb.totalMs.p99)} ms`, '', '']);
  rows.push(['', '  OCM: spoke change → work status', `median ${r1(fb.ocmMs.median)} ms, p99 ${r1(fb.ocmMs.p99)} ms`, '', '']);
  rows.push(['', '  ours: work status event → annotation', `median ${r1(fb.oursMs.median)} ms, p99 ${r1(fb.oursMs.p99)} ms`, '≤ 100 ms p99', verdict(fb.oursMs.p99 <= 100)]);
  rows.push(['', 'hub annotation writes', `${fb.annotationWrites} for ${fb.changes} changes`, `= ${fb.changes}`, verdict(fb.annotationWrites === fb.changes)]);

  const header: [string, string, string, string, string] = ['workload', 'measure', 'result', 'target', 'met'];
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  const line = (row: string[]): string => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}
