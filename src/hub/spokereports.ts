// The spoke agents' reports as the hub last read them, one per cluster, from the feedback of the
// spoke-configuration works (core/spokereport.ts), and their heartbeats, from the feedback of the heartbeat
// works (core/spokeheartbeat.ts). A report is evidence, not orders (docs/design/tenancy.md#reports-are-evidence-not-orders):
// - it counts only while fresh, on the hub's own clock: until staleAfterMs after the hub last saw a
//   heartbeat vouching for it — one that names the digest of the very report text the hub holds (a
//   heartbeat naming another digest says the hub's copy is behind the spoke: not fresh until the report
//   catches up). A version 2 report (an older agent) carries its heartbeat inside: it counts until
//   staleAfterMs after the hub last saw its text change. The spoke's clock is never compared with the
//   hub's — a heartbeat only tells one from the next — so a spoke clock hours off changes nothing, and a
//   stopped agent stops counting staleAfterMs later. At start-up every report and heartbeat is seen for
//   the first time: it counts from then.
// - one that breaks the schema or a cap is refused whole: it counts as no report (withdraws nothing), an
//   error names the cluster and the field, and refused() says why for the hub's status.
// Tells its owner which (kind, namespace) pairs to look at again when what counts changes — a report's
// content, or its freshness (a timer marks the moment it goes stale, when no event does).
import type { Logger } from 'pino';
import type { KubeObject } from '../core/k8s/objects.ts';
import type { ReportEvidence } from '../core/spoke/firstcopy.ts';
import { isSpokeHeartbeatWork, spokeHeartbeatText, spokeReportText, type SpokeConfigRef } from '../core/spoke/spokeconfig.ts';
import { parseSpokeHeartbeat, reportDigest, type SpokeHeartbeat } from '../core/spoke/spokeheartbeat.ts';
import { changedScopes, copiesBySource } from '../core/spoke/reportquery.ts';
import { WHOLE_KIND } from '../core/spoke/spokereport.ts';
import type { ReportedCopyOn } from '../core/spoke/spoketruth.ts';
import { parseSpokeReport } from '../core/spoke/reportwire.ts';
import { type ReportScope, type SpokeReport } from '../core/spoke/spokereport.ts';
import { systemClock, type CancelTimer, type Clock } from '../runtime/clock.ts';

export interface SpokeReportsOptions {
  staleAfterMs: number;
  /**
   * The hub's spoke configuration: only the report and heartbeat of its ConfigMap count. A work of the same name
   * that still places another (this hub's flag changed, a former installation's) carries another agent's words.
   */
  config?: SpokeConfigRef;
  /**
   * What counts of `cluster`'s report changed for these (kind, namespace) pairs: look at their policies again —
   * and at the hub policies whose copies either report lists there (`copiesOf`: a deleted policy's lingering copy
   * has no policy in the namespace to route to).
   */
  onChange: (cluster: string, scopes: readonly ReportScope[], copiesOf: readonly { kind: string; source: string }[]) => void;
  logger: Logger;
  /** The hub's clock: freshness and its timers (monotonic). */
  clock?: Clock;
}

interface Entry {
  /** The feedback text last seen (the cached work's own string: not a second copy). */
  text: string;
  /** Parsed, unless refused. */
  report?: SpokeReport;
  /** `<field>: <what is wrong>`, when refused. */
  refused?: string;
  /** Version 3: the digest of `text`, which a heartbeat must name for it to count. */
  digest?: string;
  /** When (hub clock) it was last seen to change, or (version 3) last vouched for by a new heartbeat. */
  seenAt: number;
  /** Until when (hub clock) it counts: staleAfterMs after that. */
  freshUntil: number;
  cancel?: CancelTimer;
}

/** A cluster's heartbeat as last seen. */
interface HeartbeatSeen {
  /** The feedback text last seen. */
  text: string;
  /** When (hub clock) it was seen to change. */
  seenAt: number;
  heartbeat?: SpokeHeartbeat;
  /** What is wrong with it, when it is unreadable. */
  refused?: string;
}

/** evidence(): a fresh report, or the evidence missing — none seen, stale since (hub wall time, ISO), refused and why. */
export type { ReportEvidence } from '../core/spoke/firstcopy.ts';

/** The (kind, hub policy) of every copy the reports list in the scopes (WHOLE_KIND: every namespace of the kind). */
function sourcesIn(scopes: readonly ReportScope[], reports: readonly (SpokeReport | undefined)[]): { kind: string; source: string }[] {
  const seen = new Set<string>();
  const out: { kind: string; source: string }[] = [];
  for (const report of reports) {
    if (!report) continue;
    for (const [source, copies] of copiesBySource(report)) {
      for (const c of copies) {
        if (!scopes.some((s) => s.kind === c.kind && (s.namespace === WHOLE_KIND || s.namespace === c.namespace))) continue;
        const key = `${c.kind}|${source}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ kind: c.kind, source });
      }
    }
  }
  return out;
}

export class SpokeReports {
  private readonly entries = new Map<string, Entry>();
  private readonly heartbeats = new Map<string, HeartbeatSeen>();
  private readonly clock: Clock;
  /** The clusters whose last readable report lists a copy of each hub policy, by its `namespace/name` (reportedCopies). */
  private readonly bySource = new Map<string, Set<string>>();
  /** The sources each cluster's indexed report lists, to take it out of bySource again. */
  private readonly sourcesOf = new Map<string, readonly string[]>();
  /** evidence(): when each stale report went stale (hub wall time), by entry and the freshUntil it passed. */
  private readonly staleSince = new WeakMap<Entry, { freshUntil: number; since: string }>();

  constructor(private readonly options: SpokeReportsOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** The report of `cluster` if it is fresh and was not refused; undefined otherwise (unknown: conclude nothing). */
  fresh(cluster: string): SpokeReport | undefined {
    const entry = this.entries.get(cluster);
    return entry?.report && this.clock.now() < entry.freshUntil ? entry.report : undefined;
  }

  /**
   * Why the last report of `cluster` was refused (`<field>: <what is wrong>`), or, for a version 3 report,
   * its heartbeat (`heartbeat: <what is wrong>`); undefined when neither was.
   */
  refused(cluster: string): string | undefined {
    const entry = this.entries.get(cluster);
    if (entry?.refused !== undefined) return entry.refused;
    const heartbeat = entry?.digest !== undefined ? this.heartbeats.get(cluster)?.refused : undefined;
    return heartbeat === undefined ? undefined : `heartbeat: ${heartbeat}`;
  }

  /**
   * What the hub holds from `cluster`'s agent, and when it is not a fresh report, which evidence is missing
   * (the decision pipeline, core/pipeline/policypipeline.ts, names it on the policies it holds back). A stale
   * report's `since` is the hub's wall time when it went stale, worked out once per report (a status that names
   * it stays the same).
   */
  evidence(cluster: string): ReportEvidence {
    const entry = this.entries.get(cluster);
    if (!entry) return { state: 'absent' };
    const why = this.refused(cluster);
    if (why !== undefined) return { state: 'refused', why };
    const report = this.fresh(cluster);
    if (report) return { state: 'fresh', report };
    let stale = this.staleSince.get(entry);
    if (stale?.freshUntil !== entry.freshUntil) {
      const since = new Date(Date.now() - Math.max(0, this.clock.now() - entry.freshUntil)).toISOString().replace(/\.\d{3}Z$/, 'Z');
      stale = { freshUntil: entry.freshUntil, since };
      this.staleSince.set(entry, stale);
    }
    return { state: 'stale', since: stale.since };
  }

  /**
   * Every copy of hub policy `source` of `kind` that the fresh reports list, by cluster (core/spoke/spoketruth.ts).
   * Looks only at the clusters whose report lists a copy of it: O(those), not O(clusters).
   */
  reportedCopies(kind: string, source: string): ReportedCopyOn[] {
    const out: ReportedCopyOn[] = [];
    for (const cluster of this.bySource.get(source) ?? []) {
      const report = this.fresh(cluster);
      if (!report) continue;
      for (const c of copiesBySource(report).get(source) ?? []) if (c.kind === kind) out.push({ cluster, ...c });
    }
    return out;
  }

  /**
   * Every report the hub holds is fresh (none stale, refused or waiting for its heartbeat): what none of them lists
   * runs on none of those clusters. O(clusters): for the rare question of a withdrawn policy (core/pipeline/withdrawal.ts).
   */
  allFresh(): boolean {
    for (const cluster of this.entries.keys()) if (!this.fresh(cluster)) return false;
    return true;
  }

  /**
   * Seconds since each cluster's report was last seen to change (a new heartbeat or new content), refused
   * ones included, by cluster; a cluster without a report (its work gone, or none written yet) is absent.
   * The policysync_spoke_report_age_seconds gauge: it grows while an agent or the feedback path is stopped.
   */
  ages(): Map<string, number> {
    const now = this.clock.now();
    return new Map([...this.entries].map(([cluster, entry]) => [cluster, Math.max(0, now - entry.seenAt) / 1000]));
  }

  /** The spoke-configuration work of `cluster` as now cached (undefined: gone); its heartbeat work goes to observeHeartbeat. */
  observe(cluster: string, work: KubeObject | undefined): void {
    if (work && isSpokeHeartbeatWork(work)) {
      this.observeHeartbeat(cluster, work);
      return;
    }
    const previous = this.entries.get(cluster);
    const text = work ? spokeReportText(work, this.options.config) : undefined;
    // The same text again (a status update of another field, a relist): nothing new was seen.
    if (text !== undefined && previous?.text === text) return;
    const before = this.fresh(cluster);
    previous?.cancel?.();
    if (text === undefined) {
      this.entries.delete(cluster);
    } else {
      const parsed = parseSpokeReport(text, previous?.report && { text: previous.text, report: previous.report });
      const seenAt = this.clock.now();
      const entry: Entry = { text, seenAt, freshUntil: seenAt + this.options.staleAfterMs };
      if (parsed.ok) {
        entry.report = parsed.report;
        if (parsed.report.version >= 3) {
          entry.digest = reportDigest(text);
          this.settle(cluster, entry);
          this.options.logger.debug({ cluster, digest: entry.digest, freshForMs: Math.max(0, entry.freshUntil - seenAt) }, 'spoke agent report seen');
        } else entry.cancel = this.clock.setTimer(() => this.expire(cluster, entry), this.options.staleAfterMs);
        if (previous?.refused !== undefined) this.options.logger.info({ cluster }, 'spoke agent report readable again');
      } else {
        entry.refused = `${parsed.field}: ${parsed.message}`;
        // Once per distinct refusal, not at every heartbeat.
        if (previous?.refused !== entry.refused) {
          this.options.logger.error({ cluster, field: parsed.field, problem: parsed.message }, 'spoke agent report refused: it breaks the schema or a cap, and counts as no report (nothing is withdrawn for it)');
        }
      }
      this.entries.set(cluster, entry);
    }
    this.index(cluster, this.entries.get(cluster)?.report);
    this.notify(cluster, before, this.fresh(cluster));
  }

  /** bySource for `cluster`'s report now (undefined: none readable). */
  private index(cluster: string, report: SpokeReport | undefined): void {
    for (const source of this.sourcesOf.get(cluster) ?? []) {
      const clusters = this.bySource.get(source);
      clusters?.delete(cluster);
      if (clusters?.size === 0) this.bySource.delete(source);
    }
    const sources = report ? [...copiesBySource(report).keys()] : [];
    if (sources.length === 0) this.sourcesOf.delete(cluster);
    else this.sourcesOf.set(cluster, sources);
    for (const source of sources) {
      const clusters = this.bySource.get(source);
      if (clusters) clusters.add(cluster);
      else this.bySource.set(source, new Set([cluster]));
    }
  }

  /**
   * The heartbeat work of `cluster` as now cached (undefined: gone). A new heartbeat is a sign of life for
   * the version 3 report whose digest it names; the same text again (a relist) is none.
   */
  observeHeartbeat(cluster: string, work: KubeObject | undefined): void {
    const text = work ? spokeHeartbeatText(work, this.options.config) : undefined;
    const previous = this.heartbeats.get(cluster);
    if (text !== undefined && previous?.text === text) return;
    const before = this.fresh(cluster);
    if (text === undefined) this.heartbeats.delete(cluster);
    else {
      const parsed = parseSpokeHeartbeat(text);
      const seen: HeartbeatSeen = { text, seenAt: this.clock.now() };
      if (parsed.ok) seen.heartbeat = parsed.heartbeat;
      else {
        seen.refused = parsed.message;
        if (previous?.refused !== seen.refused) this.options.logger.error({ cluster, problem: parsed.message }, 'spoke agent heartbeat refused: the report it would vouch for does not count (nothing is withdrawn for it)');
      }
      this.heartbeats.set(cluster, seen);
    }
    const entry = this.entries.get(cluster);
    if (entry?.digest !== undefined) this.settle(cluster, entry);
    this.options.logger.debug({ cluster, names: this.heartbeats.get(cluster)?.heartbeat?.report, holds: entry?.digest, freshForMs: entry ? Math.max(0, entry.freshUntil - this.clock.now()) : undefined }, 'spoke agent heartbeat seen');
    this.notify(cluster, before, this.fresh(cluster));
  }

  stop(): void {
    for (const entry of this.entries.values()) entry.cancel?.();
    this.entries.clear();
    this.heartbeats.clear();
    this.bySource.clear();
    this.sourcesOf.clear();
  }

  /**
   * A version 3 report counts from the heartbeat that names its digest, for staleAfterMs; without one (none
   * seen, unreadable, or naming another report: the hub's copy is behind), it stops counting now.
   */
  private settle(cluster: string, entry: Entry): void {
    const heartbeat = this.heartbeats.get(cluster);
    const now = this.clock.now();
    if (heartbeat?.heartbeat !== undefined && entry.digest !== undefined && heartbeat.heartbeat.report === entry.digest) {
      entry.seenAt = Math.max(entry.seenAt, heartbeat.seenAt);
      entry.freshUntil = heartbeat.seenAt + this.options.staleAfterMs;
      if (!entry.cancel && entry.freshUntil > now) entry.cancel = this.clock.setTimer(() => this.expire(cluster, entry), entry.freshUntil - now);
    } else {
      entry.freshUntil = Math.min(entry.freshUntil, now);
      entry.cancel?.();
      delete entry.cancel;
    }
  }

  private expire(cluster: string, entry: Entry): void {
    if (this.entries.get(cluster) !== entry || !entry.report) return;
    const left = entry.freshUntil - this.clock.now();
    if (left > 0) {
      // setTimeout's clock (the event loop's, whole milliseconds) may fire a hair before performance.now() gets there.
      entry.cancel = this.clock.setTimer(() => this.expire(cluster, entry), left);
      return;
    }
    delete entry.cancel;
    this.options.logger.warn({ cluster, heartbeat: entry.report.heartbeat, staleAfterMs: this.options.staleAfterMs }, 'spoke agent report went stale (no new heartbeat for the stale limit): what it says is no longer acted on');
    this.notify(cluster, entry.report, undefined);
  }

  private notify(cluster: string, before: SpokeReport | undefined, after: SpokeReport | undefined): void {
    if (before === after) return;
    const scopes = changedScopes(before, after);
    if (scopes.length > 0) this.options.onChange(cluster, scopes, sourcesIn(scopes, [before, after]));
  }
}
