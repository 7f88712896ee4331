// The spoke agents' reports as the hub last read them, one per cluster, from the feedback of the
// spoke-configuration works (core/spokereport.ts). A report is evidence, not orders (docs/architecture.md#reports-are-evidence-not-orders):
// - it counts only while fresh, on the hub's own clock: until staleAfterMs after the hub last saw it
//   change (a new heartbeat or new content). The spoke's clock is never compared with the hub's — the
//   heartbeat only tells one report from the next — so a spoke clock hours off changes nothing, and a
//   stopped agent (its last report unchanged) stops counting staleAfterMs later. At start-up every
//   report is seen for the first time: it counts from then.
// - one that breaks the schema or a cap is refused whole: it counts as no report (withdraws nothing), an
//   error names the cluster and the field, and refused() says why for the hub's status.
// Tells its owner which (kind, namespace) pairs to look at again when what counts changes — a report's
// content, or its freshness (a timer marks the moment it goes stale, when no event does).
import type { Logger } from 'pino';
import type { KubeObject } from '../core/k8s/objects.ts';
import { spokeReportText } from '../core/spoke/spokeconfig.ts';
import { changedScopes, parseSpokeReport, type ReportScope, type SpokeReport } from '../core/spoke/spokereport.ts';
import { systemClock, type CancelTimer, type Clock } from '../runtime/clock.ts';

export interface SpokeReportsOptions {
  staleAfterMs: number;
  /** What counts of `cluster`'s report changed for these (kind, namespace) pairs: look at their policies again. */
  onChange: (cluster: string, scopes: readonly ReportScope[]) => void;
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
  /** When (hub clock) it was last seen to change. */
  seenAt: number;
  /** Until when (hub clock) it counts: staleAfterMs after it was last seen to change. */
  freshUntil: number;
  cancel?: CancelTimer;
}

/** evidence(): a fresh report, or the evidence missing — none seen, stale since (hub wall time, ISO), refused and why. */
export type ReportEvidence =
  | { state: 'fresh'; report: SpokeReport }
  | { state: 'absent' }
  | { state: 'stale'; since: string }
  | { state: 'refused'; why: string };

export class SpokeReports {
  private readonly entries = new Map<string, Entry>();
  private readonly clock: Clock;
  /** evidence(): when each stale report went stale (hub wall time), by entry and the freshUntil it passed. */
  private readonly staleSince = new WeakMap<Entry, { freshUntil: number; since: string }>();

  constructor(private readonly o: SpokeReportsOptions) {
    this.clock = o.clock ?? systemClock;
  }

  /** The report of `cluster` if it is fresh and was not refused; undefined otherwise (unknown: conclude nothing). */
  fresh(cluster: string): SpokeReport | undefined {
    const entry = this.entries.get(cluster);
    return entry?.report && this.clock.now() < entry.freshUntil ? entry.report : undefined;
  }

  /** Why the last report of `cluster` was refused (`<field>: <what is wrong>`); undefined when it was not. */
  refused(cluster: string): string | undefined {
    return this.entries.get(cluster)?.refused;
  }

  /**
   * What the hub holds from `cluster`'s agent, and when it is not a fresh report, which evidence is missing
   * (spokeevidence.ts names it on the policies it holds back). A stale report's `since` is the hub's wall
   * time when it went stale, worked out once per report (a status that names it stays the same).
   */
  evidence(cluster: string): ReportEvidence {
    const entry = this.entries.get(cluster);
    if (!entry) return { state: 'absent' };
    if (entry.refused !== undefined) return { state: 'refused', why: entry.refused };
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
   * Seconds since each cluster's report was last seen to change (a new heartbeat or new content), refused
   * ones included, by cluster; a cluster without a report (its work gone, or none written yet) is absent.
   * The policysync_spoke_report_age_seconds gauge: it grows while an agent or the feedback path is stopped.
   */
  ages(): Map<string, number> {
    const now = this.clock.now();
    return new Map([...this.entries].map(([cluster, entry]) => [cluster, Math.max(0, now - entry.seenAt) / 1000]));
  }

  /** The spoke-configuration work of `cluster` as now cached (undefined: gone). */
  observe(cluster: string, work: KubeObject | undefined): void {
    const previous = this.entries.get(cluster);
    const text = work ? spokeReportText(work) : undefined;
    // The same text again (a status update of another field, a relist): nothing new was seen.
    if (text !== undefined && previous?.text === text) return;
    const before = this.fresh(cluster);
    previous?.cancel?.();
    if (text === undefined) {
      this.entries.delete(cluster);
    } else {
      const parsed = parseSpokeReport(text, previous?.report && { text: previous.text, report: previous.report });
      const seenAt = this.clock.now();
      const entry: Entry = { text, seenAt, freshUntil: seenAt + this.o.staleAfterMs };
      if (parsed.ok) {
        entry.report = parsed.report;
        entry.cancel = this.clock.setTimer(() => this.expire(cluster, entry), this.o.staleAfterMs);
        if (previous?.refused !== undefined) this.o.logger.info({ cluster }, 'spoke agent report readable again');
      } else {
        entry.refused = `${parsed.field}: ${parsed.message}`;
        // Once per distinct refusal, not at every heartbeat.
        if (previous?.refused !== entry.refused) {
          this.o.logger.error({ cluster, field: parsed.field, problem: parsed.message }, 'spoke agent report refused: it breaks the schema or a cap, and counts as no report (nothing is withdrawn for it)');
        }
      }
      this.entries.set(cluster, entry);
    }
    this.notify(cluster, before, this.fresh(cluster));
  }

  stop(): void {
    for (const entry of this.entries.values()) entry.cancel?.();
    this.entries.clear();
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
    this.o.logger.warn({ cluster, heartbeat: entry.report.heartbeat, staleAfterMs: this.o.staleAfterMs }, 'spoke agent report went stale (unchanged for the stale limit): what it says is no longer acted on');
    this.notify(cluster, entry.report, undefined);
  }

  private notify(cluster: string, before: SpokeReport | undefined, after: SpokeReport | undefined): void {
    if (before === after) return;
    const scopes = changedScopes(before, after);
    if (scopes.length > 0) this.o.onChange(cluster, scopes);
  }
}
