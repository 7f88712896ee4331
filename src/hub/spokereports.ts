// The spoke agents' reports of local policies as the hub last read them, one per cluster, from the feedback
// of the spoke-configuration works (core/spokereport.ts). Only a fresh report counts: one older than the
// stale limit says nothing, so a stopped agent withdraws nothing. Tells its owner which kinds to look at
// again when what counts changes — a report's content, or its freshness (a timer marks the moment it goes
// stale, when no event does).
import type { Logger } from 'pino';
import type { KubeObject } from '../core/objects.ts';
import { readSpokeReport } from '../core/spokeconfig.ts';
import { changedKinds, reportContent, reportFreshUntil, type SpokeReport } from '../core/spokereport.ts';
import { systemClock, type CancelTimer, type Clock } from '../runtime/clock.ts';

export interface SpokeReportsOptions {
  staleAfterMs: number;
  /** What counts of `cluster`'s report changed for these kinds (`resource.group`): look at their policies again. */
  onChange: (cluster: string, kinds: readonly string[]) => void;
  logger: Logger;
  /** Wall-clock milliseconds (heartbeats are wall-clock times). */
  now?: () => number;
  clock?: Pick<Clock, 'setTimer'>;
}

interface Entry {
  report: SpokeReport;
  content: string;
  freshUntil: number;
  cancel?: CancelTimer;
}

export class SpokeReports {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly clock: Pick<Clock, 'setTimer'>;

  constructor(private readonly o: SpokeReportsOptions) {
    this.now = o.now ?? Date.now;
    this.clock = o.clock ?? systemClock;
  }

  /** The report of `cluster` if it is fresh now; undefined otherwise (unknown: conclude nothing). */
  fresh(cluster: string): SpokeReport | undefined {
    const entry = this.entries.get(cluster);
    return entry && this.now() < entry.freshUntil ? entry.report : undefined;
  }

  /** The spoke-configuration work of `cluster` as now cached (undefined: gone). */
  observe(cluster: string, work: KubeObject | undefined): void {
    const before = this.fresh(cluster);
    const previous = this.entries.get(cluster);
    const report = work ? readSpokeReport(work) : undefined;
    if (report === undefined) {
      previous?.cancel?.();
      this.entries.delete(cluster);
    } else {
      const freshUntil = reportFreshUntil(report, this.o.staleAfterMs);
      const content = reportContent(report);
      // Most updates are heartbeats: the same content, a later limit. The timer follows the limit.
      if (previous?.freshUntil !== freshUntil) previous?.cancel?.();
      const entry: Entry = { report, content, freshUntil, ...(previous?.freshUntil === freshUntil && previous.cancel ? { cancel: previous.cancel } : {}) };
      const now = this.now();
      if (freshUntil <= now) {
        if (previous === undefined || previous.freshUntil !== freshUntil) {
          this.o.logger.warn({ cluster, heartbeat: report.heartbeat, staleAfterMs: this.o.staleAfterMs }, 'spoke agent report is stale on arrival (agent lagging, or clocks apart): it is not acted on');
        }
      } else if (entry.cancel === undefined) {
        entry.cancel = this.clock.setTimer(() => this.expire(cluster, freshUntil), freshUntil - now);
      }
      this.entries.set(cluster, entry);
    }
    const kinds = changedKinds(before, this.fresh(cluster));
    if (kinds.length > 0) this.o.onChange(cluster, kinds);
  }

  stop(): void {
    for (const entry of this.entries.values()) entry.cancel?.();
    this.entries.clear();
  }

  private expire(cluster: string, freshUntil: number): void {
    const entry = this.entries.get(cluster);
    if (!entry || entry.freshUntil !== freshUntil) return;
    const left = freshUntil - this.now();
    if (left > 0) {
      // A timer on the monotonic clock may fire a hair before the wall clock gets there.
      entry.cancel = this.clock.setTimer(() => this.expire(cluster, freshUntil), left);
      return;
    }
    delete entry.cancel;
    this.o.logger.warn({ cluster, heartbeat: entry.report.heartbeat }, 'spoke agent report went stale: local policies there are no longer acted on');
    const kinds = changedKinds(entry.report, undefined);
    if (kinds.length > 0) this.o.onChange(cluster, kinds);
  }
}
