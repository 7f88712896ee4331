// The benchmark's result: its JSON shape, statistics and the one table it prints.
import type { ProfileSummary } from './cpuprofile.ts';

export interface Stats {
  n: number;
  median: number;
  p99: number;
  max: number;
}

/** The median of `xs` (NaN if empty), unrounded. */
export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return NaN;
  return n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
}

/** Median and nearest-rank p99 of `xs` (ms, rounded to 0.1). */
export function stats(xs: readonly number[]): Stats {
  const sorted = [...xs].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return { n, median: NaN, p99: NaN, max: NaN };
  const p99 = sorted[Math.max(0, Math.ceil(0.99 * n) - 1)]!;
  const r = (x: number): number => Math.round(x * 10) / 10;
  return { n, median: r(median(sorted)), p99: r(p99), max: r(sorted[n - 1]!) };
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

/** One round of bare creates, then policy-sync, back to back. */
export interface BareRound {
  bareCreateMs: number;
  policySyncMs: number;
  /** policySyncMs / bareCreateMs. */
  ratio: number;
  /** The hub apiserver's CPU seconds in each window: what the writer cost it, as far as the noise lets it show. */
  apiserverCpuSeconds: { bareCreate: number; policySync: number };
  /**
   * What the machine spent outside the bench's processes in each window (CpuWindow's `outside`): a round with
   * seconds there ran beside other work, and its ratio says more about that than about the writer.
   */
  outsideCpuSeconds?: { bareCreate: number; policySync: number };
}

/** One round of the compared fan-outs: OCM, the bare client's creates, then policy-sync, back to back. */
export interface FanoutRound extends BareRound {
  ocmMs: number;
  /** policySyncMs / ocmMs. */
  ratioOcm: number;
}

export interface BenchResult {
  /**
   * 3: the ratios to bare creates and to OCM are medians over rounds of OCM, bare creates and policy-sync
   * (fanout.rounds); 2 had each fan-out once, minutes apart; 1 had the headline against SSA (ratioBare).
   */
  version: 3;
  mode: 'default';
  startedAt: string;
  finishedAt?: string;
  command: string;
  machine: { nproc: number; loadAverage: number[]; memoryGiB: number; cpu: string; node: string; kubernetes?: string; ocm?: string };
  params: {
    policies: number;
    clusters: number;
    feedbackChanges: number;
    /** Rounds of the headline pair (1 with --skip-baselines). */
    rounds: number;
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
    /** The bare client's plain POST creates (the last round's): the apiserver's floor, which the headline ratio is against. */
    bareCreate?: FanoutResult & { requestsMs: number };
    /** Each round: OCM, bare creates, then policy-sync (the last round's of each are `ocm`, `bareCreate`, `policySync`). */
    rounds?: FanoutRound[];
    /** The bare client again with server-side apply instead: for the reading, not a target. */
    bare?: FanoutResult & { requestsMs: number };
    /** OCM's ManifestWorkReplicaSet controller (the last round's). */
    ocm?: FanoutResult & { fromPlacementMs: number; decisionMs: number; writes: WriteReport };
    /** policy-sync / bare creates, the median of the rounds' ratios (target ≤ 1.15). */
    ratioBareCreate?: number;
    /** policy-sync's median round / bare SSA, measured once (no target). */
    ratioBareSsa?: number;
    /** policy-sync / OCM, the median of the rounds' ratios (target ≤ 0.8). */
    ratioOcm?: number;
  };
  writes: { fanout: WriteReport; change: WriteReport & { ms: number }; restart: WriteReport; bare?: WriteReport; bareCreate?: WriteReport };
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
  /** Workload 5: a Progressive rollout of one edit against the waits it asks for, and the same edit under All. */
  rollout: RolloutResult;
  /** Workload 6: the fan-out with a PolicyVariant per policy giving every copy a value of its cluster's, and variant and label changes; absent with --skip-variants. */
  variants?: VariantsResult;
  /** Workload 7: the fan-out with every cluster's spoke report gating first copies, against the no-agent mode. */
  evidence?: EvidenceResult;
  /** With --cpu-prof: the controller of the fan-out (its whole life: start, fan-out, one change) and the restarted one (start-up pass). */
  profile?: { fanout?: ProfileSummary; restart?: ProfileSummary };
}

/** Workload 7 (workloads/evidence.ts): the evidence gate's cost, one pair of fan-outs back to back. */
export interface EvidenceResult {
  /** The fan-out with `--spoke-config=none` (no report asked for). */
  ungatedMs: number;
  /** The same with every cluster's fresh report read before the clock: each first copy waits for its cluster's. */
  gatedMs: number;
  /** gated / ungated. */
  ratio: number;
  works: number;
  clusters: number;
}

/** Workload 6 (workloads/variants.ts): per-cluster copies. */
export interface VariantsResult {
  /** The cluster label every policy's variant reads, and the copy's field it sets. */
  label: string;
  field: string;
  /** The cluster of the variant edit and of the label change. */
  editedCluster: string;
  /** As workload 1's, with the variants: the last round's. */
  policySync: BenchResult['fanout']['policySync'];
  bareCreate?: FanoutResult & { requestsMs: number };
  rounds: BareRound[];
  /** policy-sync / bare creates of the same rendered works, the median of the rounds' (target ≤ 1.15). */
  ratioBareCreate?: number;
  /** The last round's controller, with the P×C rendered works cached. */
  memory: { peakRssMiB: number; rssMiB: number; works: number };
  writes: {
    fanout: WriteReport;
    /** One variant edit changing one cluster's copy: one work write. */
    edit: WriteReport & { ms: number; changed: string[] };
    /** One cluster's label, read by every policy's variant, changed: P work writes, all on that cluster. */
    label: WriteReport & { ms: number; changed: string[] };
  };
}

/** One wave of a Progressive rollout, in ms since the edit (times of the harness's watch and its agent's writes). */
export interface RolloutWave {
  clusters: string[];
  /** The wave's works seen at the new revision (the last of them). */
  writtenMs: number;
  /** Their status written by the bench's work agent, Enforced at that revision (the last of them). */
  statusMs: number;
  /** The next wave's first work seen at the new revision; for the last wave, the status annotation saying Complete. */
  nextMs: number;
  /** nextMs − statusMs − minSuccessTime: what the controller took beyond the soak to go on. */
  advanceMs: number;
}

/** One edit of the Progressive policy, from the edit (a new revision) to its status saying Complete at it. */
export interface RolloutEdit {
  revision: number;
  /** As the status annotation says. */
  waves: number;
  totalMs: number;
  /** The waits the strategy asks for: waves × minSuccessTime. */
  waitsMs: number;
  /** totalMs − waitsMs, and per wave. */
  overheadMs: number;
  overheadPerWaveMs: number;
  /** The edit → the first wave's works seen at the new revision. */
  firstWrittenMs: number;
  perWave: RolloutWave[];
  /** The clusters were reached in the order of the waves (by name, maxConcurrency at a time). */
  inOrder: boolean;
  /** ManifestWork creates and applies in the window: one a cluster. */
  workWrites: number;
  /** Per cluster, the writes of its work the harness's watch saw (a new generation, labels or annotations): 1 each. */
  writesPerCluster: Record<string, number>;
  /** The window's writes; `ok` when there were C work writes, one a cluster. */
  writes: WriteReport;
}

export interface RolloutResult {
  clusters: number;
  strategy: { maxConcurrency: string; minSuccessTime: string; successWhen: 'Enforced' };
  minSuccessTimeMs: number;
  /** ceil(clusters / maxConcurrency). */
  expectedWaves: number;
  progressive: RolloutEdit;
  /** The same edit of a policy under All (the default), ms since the edit. */
  all: {
    revision: number;
    /** Every work seen at the new revision. */
    worksMs: number;
    /** The status annotation showing every cluster at it. */
    statusMs: number;
    /** … and every cluster Enforced there, on the agent's verdict about it. */
    enforcedMs: number;
    workWrites: number;
    writesPerCluster: Record<string, number>;
    writes: WriteReport;
  };
  /** Workload 2b's one policy changed (its works rewritten), earlier in the run, for the reading. */
  changeMs?: number;
  /** progressive.totalMs / progressive.waitsMs. */
  ratioToWaits: number;
  /** progressive.overheadPerWaveMs / all.enforcedMs: what a wave adds beyond its soak, against a whole edit under All. */
  overheadPerWaveToAll: number;
}

/** One point of the scale run's cost curve: the moment the k-th work was seen with its spec-hash. */
export interface ScalePoint {
  works: number;
  /** Since the fan-out started (the Gateway created). */
  elapsedMs: number;
  /** Works per second since the previous point (or the start). */
  segmentWorksPerSecond: number;
  /** The controller's resident set then (VmRSS). */
  controllerRssMiB: number;
  /** CPU seconds since the fan-out started, per process. */
  cpuSeconds: Record<string, number>;
  /** The hub apiserver's resident set then: its watch cache holds every work. */
  apiserverRssMiB: number;
  /** etcd's backend database size then, allocated and in use (absent if etcd did not answer). */
  etcdDbMiB?: number;
  etcdDbInUseMiB?: number;
}

/** `npm run bench -- --only variants`: workload 6 alone, on a world of its own (the P policies, no fan-out before it). */
export interface VariantsOnlyResult {
  version: 3;
  mode: 'variants';
  startedAt: string;
  finishedAt?: string;
  command: string;
  machine: BenchResult['machine'];
  params: BenchResult['params'];
  variants: VariantsResult;
  profile?: { fanout?: ProfileSummary };
}

/** `npm run bench -- --scale`: policy-sync alone, its cost curve to P×C works, memory and restart there. */
export interface ScaleResult {
  version: 2;
  mode: 'scale';
  startedAt: string;
  finishedAt?: string;
  command: string;
  machine: BenchResult['machine'];
  params: { policies: number; clusters: number; concurrency: number; qps: number; burst: number; runId: string };
  fanout: FanoutResult & {
    annotatedMs: number;
    reconciles: number;
    coldStartMs: { serving: number; cachesSynced: number; pass: number };
    curve: ScalePoint[];
  };
  writes: { fanout: WriteReport; restart: WriteReport };
  memory: BenchResult['memory'];
  startup: BenchResult['startup'];
  /** The restart again: with paged lists (`--no-watch-list`), then both ways on a quiet hub (see main.ts). */
  restarts?: (BenchResult['startup'] & { label: string; args: string[]; peakRssMiB: number })[];
  /** What the works cost the plane: the hub apiserver's peak RSS over the run and etcd's database against its quota. */
  plane: { apiserverPeakRssMiB: number; apiserverPeakSinceFanout: boolean; etcdDbMiB?: number; etcdDbInUseMiB?: number; etcdQuotaMiB: number };
}

/** `npm run bench -- --fleet`: policy-sync writing bundles at a fleet's size, against today's shape's floor (workloads/fleet.ts). */
export interface FleetResult {
  version: 1;
  mode: 'fleet';
  startedAt: string;
  finishedAt?: string;
  command: string;
  machine: BenchResult['machine'];
  params: { policies: number; clusters: number; concurrency: number; bareInFlight: number; qps: number; runId: string };
  /** Today's shape (one work per placement) written by a bare client: every placement created; one policy's C works edited. */
  floor: { createMs: number; createApiserverCpuSeconds: number; editMs: number; editBytes: number; editApiserverCpuSeconds?: number };
  fanout: { ms: number; placements: number; bundles: number; annotatedMs: number; cpuSeconds: Record<string, number>; curve: ScalePoint[]; writes: WriteReport };
  restart: BenchResult['startup'] & { peakRssMiB: number; writes: WriteReport };
  /** One policy edited until every cluster's copy has it: the bundles rewritten and their bytes. */
  edit: { ms: number; bundles: number; bytes: number; cpuSeconds?: Record<string, number>; reconciles?: number };
  memory: { fanoutPeakRssMiB: number; restartPeakRssMiB: number };
  /** etcd in use per placement (compacted before and after the fan-out), and in all. */
  etcd: { bytesPerPlacement: number; inUseMiB: number; quotaMiB: number };
  cli: { statusMs: number; explainMs: number };
  /** K status changes of one fleet policy's copy on the bench's spoke, back to that policy's annotation (absent in runs before it was measured). */
  feedback?: BenchResult['feedback'];
  annotation: { bytes: number; budgetBytes: number; summary?: unknown };
  /** With --cpu-prof: the restarted controller's profile. */
  profile?: { restart?: ProfileSummary };
}

/** The fleet mode's goals (issue 32). */
export const FLEET_TARGET = { fanoutOverBareCreates: 0.5, restartMs: 10_000, editOverBareWrites: 1, rssMiB: 300, etcdBytesPerPlacement: 1536, cliMs: 2_000, feedbackOursP99Ms: 100 } as const;

const r1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
const secs = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

/** Ratio targets (docs/benchmarks.md#targets) (policy-sync's fan-out time over the baseline's). */
export const RATIO_TARGET = { bareCreate: 1.15, ocm: 0.8 } as const;
/** Restart at 100k works (docs/benchmarks.md#targets): caches synced within this. */
export const SCALE_CACHES_SYNCED_MS = 30_000;

/** The variants fan-out's peak RSS target (docs/benchmarks.md#targets), given at 10k works only. */
export function variantsRssTargetMiB(works: number): number | undefined {
  return works === 10_000 ? 160 : undefined;
}

/** The peak RSS targets (docs/benchmarks.md#targets), given at 10k and 100k works only. */
export function rssTargetMiB(works: number): number | undefined {
  return works === 10_000 ? 150 : works === 100_000 ? 400 : undefined;
}

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

type Row = [string, string, string, string, string];

const cpuList = (cpu: Record<string, number>): string => Object.entries(cpu).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ');
/** A round's CPU outside the bench, policy-sync's window / the bare creates'; nothing when not measured. */
const outside = (round: BareRound): string => (round.outsideCpuSeconds ? `; outside the bench ${r1(round.outsideCpuSeconds.policySync)} / ${r1(round.outsideCpuSeconds.bareCreate)}` : '');
const cpu = (x: FanoutResult): string => `${secs(x.ms)} (CPU s: ${cpuList(x.cpuSeconds)})`;

function memoryRows(m: BenchResult['memory']): Row[] {
  const target = rssTargetMiB(m.works);
  const t = target === undefined ? '' : `≤ ${target} MiB`;
  const ok = (x: number): string => (target === undefined ? '' : verdict(x <= target));
  return [
    ['3 memory', `peak RSS, fan-out (${m.works} works cached)`, `${r1(m.fanoutPeakRssMiB)} MiB`, t, ok(m.fanoutPeakRssMiB)],
    ['', `peak RSS, restart (${m.works} works listed)`, `${r1(m.restartPeakRssMiB)} MiB`, t, ok(m.restartPeakRssMiB)],
    ['', 'RSS at rest after restart', `${r1(m.restartRssMiB)} MiB`, '', ''],
  ];
}

function startupRows(s: BenchResult['startup'], cachesSyncedTargetMs?: number): Row[] {
  const synced: Row = ['', 'start → caches synced (works etc. listed)', secs(s.cachesSyncedMs), '', ''];
  if (cachesSyncedTargetMs !== undefined) [synced[3], synced[4]] = [`≤ ${cachesSyncedTargetMs / 1000} s`, verdict(s.cachesSyncedMs <= cachesSyncedTargetMs)];
  return [
    ['  start-up', 'start → serving probes (modules loaded)', secs(s.servingMs), '', ''],
    synced,
    ['', `start → no-op pass done (${s.reconciles} reconciles)`, secs(s.passMs), '', ''],
  ];
}

function table(rows: Row[]): string {
  const header: Row = ['workload', 'measure', 'result', 'target', 'met'];
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  const line = (row: string[]): string => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** The one table: workload, measure, result, target, verdict. */
export function formatTable(r: BenchResult): string {
  const { policies: P, clusters: C } = r.params;
  const rows: Row[] = [];
  const f = r.fanout;
  const lastRound = (f.rounds?.length ?? 0) > 1 ? ', last round' : '';
  rows.push(['1 fan-out', `policy-sync, ${P}×${C} works (concurrency ${r.params.concurrency}${lastRound})`, cpu(f.policySync), '', '']);
  rows.push(['', `  … and all P annotated (${f.policySync.reconciles} policy reconciles)`, secs(f.policySync.annotatedMs), '', '']);
  if (f.bareCreate) rows.push(['', `bare client, POST creates, ${r.params.bareInFlight} in flight${lastRound}`, cpu(f.bareCreate), '', '']);
  if (f.bare) rows.push(['', `  (bare client, SSA instead)`, cpu(f.bare), '', '']);
  if (f.ocm) rows.push(['', `OCM ManifestWorkReplicaSet (from decision)`, cpu(f.ocm), '', '']);
  if (f.ocm) rows.push(['', `  … from Placement created (decision ${secs(f.ocm.decisionMs)})`, secs(f.ocm.fromPlacementMs), '', '']);
  const rounds = f.rounds ?? [];
  rounds.forEach((round, i) => {
    const cpuS = round.apiserverCpuSeconds;
    const result = `${round.ratio.toFixed(2)} (${secs(round.policySyncMs)} / ${secs(round.bareCreateMs)}; apiserver CPU s ${r1(cpuS.policySync)} / ${r1(cpuS.bareCreate)}${outside(round)}); ${round.ratioOcm.toFixed(2)} (/ ${secs(round.ocmMs)})`;
    rows.push(['', `  round ${i + 1}: policy-sync / bare creates; / OCM`, result, '', '']);
  });
  const ofRounds = rounds.length > 1 ? ` (median of ${rounds.length} rounds)` : '';
  if (f.ratioBareCreate !== undefined) {
    rows.push(['', `policy-sync / bare creates${ofRounds}`, f.ratioBareCreate.toFixed(2), `≤ ${RATIO_TARGET.bareCreate}`, verdict(f.ratioBareCreate <= RATIO_TARGET.bareCreate)]);
  }
  if (f.ratioBareSsa !== undefined) rows.push(['', `policy-sync${rounds.length > 1 ? ' (median round)' : ''} / bare SSA`, f.ratioBareSsa.toFixed(2), '', '']);
  if (f.ratioOcm !== undefined) rows.push(['', `policy-sync / OCM${ofRounds}`, f.ratioOcm.toFixed(2), `≤ ${RATIO_TARGET.ocm}`, verdict(f.ratioOcm <= RATIO_TARGET.ocm)]);
  const w = r.writes;
  rows.push(['2 writes', 'fan-out', writeLine(w.fanout), w.fanout.target ?? '', verdict(w.fanout.ok)]);
  rows.push(['', 'one policy changed', writeLine(w.change), w.change.target ?? '', verdict(w.change.ok)]);
  rows.push(['', 'controller restart, unchanged world', writeLine(w.restart), w.restart.target ?? '', verdict(w.restart.ok)]);
  if (w.bareCreate) rows.push(['', 'bare client fan-out, creates (sanity)', writeLine(w.bareCreate), '', '']);
  if (w.bare) rows.push(['', 'bare client fan-out, SSA (sanity)', writeLine(w.bare), '', '']);
  if (f.ocm) rows.push(['', 'OCM fan-out (for comparison)', writeLine(f.ocm.writes), '', '']);
  rows.push(...memoryRows(r.memory));
  rows.push(...startupRows(r.startup));
  const fb = r.feedback;
  rows.push(['4 feedback', `spoke change → hub annotation (K=${fb.changes})`, `median ${r1(fb.totalMs.median)} ms, p99 ${r1(fb.totalMs.p99)} ms`, '', '']);
  rows.push(['', '  OCM: spoke change → work status', `median ${r1(fb.ocmMs.median)} ms, p99 ${r1(fb.ocmMs.p99)} ms`, '', '']);
  rows.push(['', '  ours: work status event → annotation', `median ${r1(fb.oursMs.median)} ms, p99 ${r1(fb.oursMs.p99)} ms`, '≤ 100 ms p99', verdict(fb.oursMs.p99 <= 100)]);
  rows.push(['', 'hub annotation writes', `${fb.annotationWrites} for ${fb.changes} changes`, `= ${fb.changes}`, verdict(fb.annotationWrites === fb.changes)]);
  rows.push(...rolloutRows(r.rollout));
  if (r.variants) rows.push(...variantsRows(r.variants, P, C));
  if (r.evidence) {
    const e = r.evidence;
    rows.push(['7 evidence', `fan-out of ${e.works} works, every cluster's report gating first copies / no agents`, `${e.ratio.toFixed(2)} (${secs(e.gatedMs)} / ${secs(e.ungatedMs)})`, '', '']);
  }
  return table(rows);
}

/** Workload 6's rows. */
function variantsRows(v: VariantsResult, P: number, C: number): Row[] {
  const rows: Row[] = [];
  const lastRound = v.rounds.length > 1 ? ', last round' : '';
  rows.push(['6 variants', `policy-sync, ${P}×${C} works, each copy its cluster's ${v.label} in ${v.field}${lastRound}`, cpu(v.policySync), '', '']);
  if (v.bareCreate) rows.push(['', `bare client, POST creates of the same works${lastRound}`, cpu(v.bareCreate), '', '']);
  v.rounds.forEach((round, i) => {
    const cpuS = round.apiserverCpuSeconds;
    rows.push(['', `  round ${i + 1}: policy-sync / bare creates`, `${round.ratio.toFixed(2)} (${secs(round.policySyncMs)} / ${secs(round.bareCreateMs)}; apiserver CPU s ${r1(cpuS.policySync)} / ${r1(cpuS.bareCreate)}${outside(round)})`, '', '']);
  });
  if (v.ratioBareCreate !== undefined) {
    const ofRounds = v.rounds.length > 1 ? ` (median of ${v.rounds.length} rounds)` : '';
    rows.push(['', `policy-sync / bare creates${ofRounds}`, v.ratioBareCreate.toFixed(2), `≤ ${RATIO_TARGET.bareCreate}`, verdict(v.ratioBareCreate <= RATIO_TARGET.bareCreate)]);
  }
  const target = variantsRssTargetMiB(v.memory.works);
  rows.push(['', `peak RSS, fan-out (${v.memory.works} works cached)`, `${r1(v.memory.peakRssMiB)} MiB`, target === undefined ? '' : `≤ ${target} MiB`, target === undefined ? '' : verdict(v.memory.peakRssMiB <= target)]);
  const w = v.writes;
  rows.push(['', 'writes, fan-out', writeLine(w.fanout), w.fanout.target ?? '', verdict(w.fanout.ok)]);
  rows.push(['', `writes, one variant edit for ${v.editedCluster} (${(w.edit.ms).toFixed(0)} ms)`, writeLine(w.edit), w.edit.target ?? '', verdict(w.edit.ok)]);
  rows.push(['', `writes, ${v.editedCluster}'s label changed (${(w.label.ms).toFixed(0)} ms; ${w.label.changed.length} works changed)`, writeLine(w.label), w.label.target ?? '', verdict(w.label.ok)]);
  return rows;
}

/** Workload 5's rows. */
function rolloutRows(ro: BenchResult['rollout']): Row[] {
  const p = ro.progressive;
  const ms = (x: number): string => `${x.toFixed(0)} ms`;
  const waits = `${p.waves} × ${ro.strategy.minSuccessTime}`;
  const rows: Row[] = [];
  rows.push([
    '5 rollout',
    `Progressive (maxConcurrency ${ro.strategy.maxConcurrency}, minSuccessTime ${ro.strategy.minSuccessTime}) over ${ro.clusters} clusters: edit → Complete`,
    `${secs(p.totalMs)} = waits ${secs(p.waitsMs)} (${waits}) + ${ms(p.overheadMs)}`,
    '',
    '',
  ]);
  rows.push(['', `  overhead a wave (${p.waves} waves${p.waves === ro.expectedWaves ? '' : `, ${ro.expectedWaves} expected`}${p.inOrder ? '' : ', OUT OF ORDER'})`, ms(p.overheadPerWaveMs), '', '']);
  rows.push(['', '  edit → wave 1 written', ms(p.firstWrittenMs), '', '']);
  p.perWave.forEach((w, i) => {
    const next = i + 1 < p.perWave.length ? `wave ${i + 2} written` : 'Complete';
    rows.push(['', `  wave ${i + 1} (${w.clusters.join(', ')}): written → agent's status; → ${next}, less the soak`, `${ms(w.statusMs - w.writtenMs)}; ${ms(w.advanceMs)}`, '', '']);
  });
  rows.push(['', 'Progressive / its waits', ro.ratioToWaits.toFixed(2), '', '']);
  rows.push(['', 'overhead a wave / the All edit (→ enforced)', ro.overheadPerWaveToAll.toFixed(2), '≤ 1', verdict(ro.overheadPerWaveToAll <= 1)]);
  rows.push(['', 'Progressive: writes', writeLine(p.writes), `${ro.clusters} work writes, one a cluster`, verdict(p.writes.ok)]);
  const a = ro.all;
  const change = ro.changeMs === undefined ? '' : ` (2b, one policy changed: ${ms(ro.changeMs)})`;
  rows.push(['', `All, the same edit: → every work at the revision${change}`, ms(a.worksMs), '', '']);
  rows.push(['', '  … status shows it; … Enforced there', `${ms(a.statusMs)}; ${ms(a.enforcedMs)}`, '', '']);
  rows.push(['', 'All: writes', writeLine(a.writes), `${ro.clusters} work writes, one a cluster`, verdict(a.writes.ok)]);
  return rows;
}

/** `--only variants`: workload 6's rows alone. */
export function formatVariantsTable(r: VariantsOnlyResult): string {
  return table(variantsRows(r.variants, r.params.policies, r.params.clusters));
}

/** The scale run's table: the same columns, the cost curve in place of the baselines. */
export function formatScaleTable(r: ScaleResult): string {
  const { policies: P, clusters: C } = r.params;
  const f = r.fanout;
  const rows: Row[] = [];
  rows.push(['1 fan-out', `policy-sync, ${P}×${C} works (concurrency ${r.params.concurrency})`, cpu(f), '', '']);
  rows.push(['', `  … and all P annotated (${f.reconciles} policy reconciles)`, secs(f.annotatedMs), '', '']);
  for (const p of f.curve) {
    const measured = ['apiserver', 'etcd', 'controller'].reduce((n, k) => n + (p.cpuSeconds[k] ?? 0), 0);
    const db = p.etcdDbMiB === undefined ? '' : `, etcd db ${r1(p.etcdDbInUseMiB ?? NaN)}/${r1(p.etcdDbMiB)} MiB`;
    rows.push(['', `  at ${p.works} works (${Math.round((100 * p.works) / f.works)} %)`, `${secs(p.elapsedMs)}, ${p.segmentWorksPerSecond.toFixed(0)} works/s since the last point; controller RSS ${r1(p.controllerRssMiB)} MiB`, '', '']);
    rows.push(['', '    CPU s so far, plane then', `apiserver+etcd+controller ${measured.toFixed(1)} (${cpuList(p.cpuSeconds)}); apiserver RSS ${r1(p.apiserverRssMiB)} MiB${db}`, '', '']);
  }
  rows.push(['2 writes', 'fan-out', writeLine(r.writes.fanout), r.writes.fanout.target ?? '', verdict(r.writes.fanout.ok)]);
  rows.push(['', 'controller restart, unchanged world', writeLine(r.writes.restart), r.writes.restart.target ?? '', verdict(r.writes.restart.ok)]);
  rows.push(...memoryRows(r.memory));
  rows.push(...startupRows(r.startup, SCALE_CACHES_SYNCED_MS));
  for (const again of r.restarts ?? []) {
    // The target holds for the controller as deployed (default flags), on a quiet hub too.
    const target = again.args.length === 0 ? ([`≤ ${SCALE_CACHES_SYNCED_MS / 1000} s`, verdict(again.cachesSyncedMs <= SCALE_CACHES_SYNCED_MS)] as const) : (['', ''] as const);
    rows.push(['', `  again, ${again.label}${again.args.length ? ` (${again.args.join(' ')})` : ''}: caches synced`, `${secs(again.cachesSyncedMs)}; pass done ${secs(again.passMs)}, peak RSS ${r1(again.peakRssMiB)} MiB`, ...target]);
  }
  const pl = r.plane;
  rows.push(['  plane', `hub apiserver peak RSS (${pl.apiserverPeakSinceFanout ? 'since the fan-out started' : 'over its life'})`, `${r1(pl.apiserverPeakRssMiB)} MiB`, '', '']);
  const db = pl.etcdDbMiB === undefined ? 'n/a' : `${r1(pl.etcdDbInUseMiB ?? NaN)} MiB in use, ${r1(pl.etcdDbMiB)} MiB allocated`;
  rows.push(['', `etcd database (quota ${r1(pl.etcdQuotaMiB)} MiB)`, db, '', '']);
  return table(rows);
}

export function formatFleetTable(r: FleetResult): string {
  const T = FLEET_TARGET;
  const { policies: P, clusters: C } = r.params;
  const fanoutRatio = r.fanout.ms / r.floor.createMs;
  const editRatio = r.edit.ms / r.floor.editMs;
  const rss = Math.max(r.memory.fanoutPeakRssMiB, r.memory.restartPeakRssMiB);
  const kib = (b: number): string => `${(b / 1024).toFixed(0)} KiB`;
  const rows: Row[] = [
    ['fan-out', `policy-sync in ${r.fanout.bundles} bundles (${(r.fanout.placements / Math.max(1, r.fanout.bundles)).toFixed(1)} copies each)`, secs(r.fanout.ms), '', ''],
    ['', `bare client, POST one work per placement, ${r.params.bareInFlight} in flight`, secs(r.floor.createMs), '', ''],
    ['', 'ratio policy-sync / bare creates', fanoutRatio.toFixed(2), `≤ ${T.fanoutOverBareCreates}`, verdict(fanoutRatio <= T.fanoutOverBareCreates)],
    ['', '  … and all P annotated', secs(r.fanout.annotatedMs), '', ''],
    ['restart', 'start → caches synced', secs(r.restart.cachesSyncedMs), '', ''],
    ['', `start → no-op pass done (${r.restart.reconciles} reconciles)`, secs(r.restart.passMs), `≤ ${T.restartMs / 1000} s`, verdict(r.restart.passMs <= T.restartMs)],
    ['', 'writes', String(r.restart.writes.total), '= 0', verdict(r.restart.writes.total === 0)],
    ['edit', `one policy on ${C} clusters (${r.edit.bundles} bundles, ${kib(r.edit.bytes)} sent)`, secs(r.edit.ms), '', ''],
    ['', `bare client, ${C} works of one copy applied (${kib(r.floor.editBytes)} sent)`, secs(r.floor.editMs), '', ''],
    ['', 'ratio policy-sync / bare writes', editRatio.toFixed(2), `≤ ${T.editOverBareWrites}`, verdict(editRatio <= T.editOverBareWrites)],
    ...(r.edit.cpuSeconds && r.floor.editApiserverCpuSeconds !== undefined
      ? ([['', '  apiserver CPU: policy-sync / bare (controller)', `${r1(r.edit.cpuSeconds.apiserver ?? NaN)} / ${r1(r.floor.editApiserverCpuSeconds)} s (${r1(r.edit.cpuSeconds.controller ?? NaN)} s)`, '', '']] as Row[])
      : []),
    ['memory', 'controller peak RSS (fan-out, restart)', `${r1(r.memory.fanoutPeakRssMiB)}, ${r1(r.memory.restartPeakRssMiB)} MiB`, `≤ ${T.rssMiB} MiB`, verdict(rss <= T.rssMiB)],
    ['etcd', `in use per placement (${r1(r.etcd.inUseMiB)} of ${r1(r.etcd.quotaMiB)} MiB in all)`, `${r.etcd.bytesPerPlacement.toFixed(0)} B`, `≤ ${T.etcdBytesPerPlacement} B`, verdict(r.etcd.bytesPerPlacement <= T.etcdBytesPerPlacement)],
    ['CLI', 'policy-sync status on one policy', secs(r.cli.statusMs), `≤ ${T.cliMs / 1000} s`, verdict(r.cli.statusMs <= T.cliMs)],
    ['', 'policy-sync explain on one policy', secs(r.cli.explainMs), `≤ ${T.cliMs / 1000} s`, verdict(r.cli.explainMs <= T.cliMs)],
    ['', 'its status annotation', `${r.annotation.bytes} B`, `≤ ${r.annotation.budgetBytes} B`, verdict(r.annotation.bytes <= r.annotation.budgetBytes)],
  ];
  const fb = r.feedback;
  if (fb) {
    rows.push(['feedback', `one spoke status change back, ours (K=${fb.changes}; median ${r1(fb.oursMs.median)} ms)`, `p99 ${r1(fb.oursMs.p99)} ms`, `≤ ${T.feedbackOursP99Ms} ms`, verdict(fb.oursMs.p99 <= T.feedbackOursP99Ms)]);
    rows.push(['', `  … OCM's part (spoke → work feedback), ${fb.annotationWrites} annotation writes`, `median ${r1(fb.ocmMs.median)} ms, p99 ${r1(fb.ocmMs.p99)} ms`, '', '']);
  } else rows.push(['feedback', 'one spoke status change back (p99, ours)', 'not measured in this run', `≤ ${T.feedbackOursP99Ms} ms`, '']);
  for (const p of r.fanout.curve) {
    rows.push([
      p === r.fanout.curve[0] ? 'scale curve' : '',
      `${p.works} placements: ${p.segmentWorksPerSecond.toFixed(0)}/s since the last point, controller ${r1(p.controllerRssMiB)} MiB, apiserver CPU ${r1(p.cpuSeconds.apiserver ?? NaN)} s, etcd ${p.etcdDbInUseMiB === undefined ? 'n/a' : `${r1(p.etcdDbInUseMiB)} MiB`}`,
      secs(p.elapsedMs),
      '',
      '',
    ]);
  }
  return [`policy-sync fleet: P=${P} policies × C=${C} clusters = ${r.fanout.placements} placements`, table(rows)].join('\n');
}
