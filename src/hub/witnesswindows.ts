// How long a cluster keeps its spoke configuration as a witness after its last work of ours left: the report that
// comes back after that is what sees a copy the work agent left behind (core/spoke/spoketruth.ts), so the window
// closes only once such a report has been seen. No evidence is not evidence of absence:
//  - it lasts WITNESS_AFTER_WORKS_MS after the last work, and then until the cluster's report has been fresh for
//    WITNESS_FRESH_MS (soak seed 4612: the agent stopped while two works were created and deleted, the window ran out
//    with no report, the configuration was withdrawn and the copies the race left had no witness at all);
//  - a cluster this process first finds configured with no work of ours (after a restart, or on a new leader) left
//    its last work at a time it does not know: the window runs from that first look (soak seed 4611: a leader
//    withdrew spoke-2's configuration 0.1 s after taking over, 23 s after the last work left).
// This process's memory; once closed, a window stays closed until the configuration is withdrawn (or a work comes).

/** How long a cluster's report must have been fresh before its witness window may close. */
export const WITNESS_FRESH_MS = 10_000;

export class WitnessWindows {
  /** When (monotonic) each cluster was last seen with a work of ours, or first looked at without one. */
  private readonly lastWorkAt = new Map<string, number>();
  /** Since when each open window's cluster has been seen with a fresh report (reset by a stale look). */
  private readonly freshSince = new Map<string, number>();
  /** Clusters this process has looked at since their configuration was placed (looked at, no lastWorkAt: closed). */
  private readonly looked = new Set<string>();

  constructor(private readonly windowMs: number) {}

  /** A work of ours is on the cluster now. */
  worked(cluster: string, now: number): void {
    this.lastWorkAt.set(cluster, now);
    this.looked.add(cluster);
  }

  /** A cluster configured with no work of ours, its report fresh or not: whether its configuration is still a witness at `now`. */
  witnessing(cluster: string, now: number, fresh: boolean): boolean {
    if (!this.looked.has(cluster)) this.worked(cluster, now);
    // Closed: looked at, and its window ended (it stays closed until a work comes or the configuration goes).
    if (!this.lastWorkAt.has(cluster)) return false;
    if (!fresh) {
      this.freshSince.delete(cluster);
      return true;
    }
    const since = this.freshSince.get(cluster) ?? now;
    this.freshSince.set(cluster, since);
    if (now - this.lastWorkAt.get(cluster)! < this.windowMs || now - since < WITNESS_FRESH_MS) return true;
    this.lastWorkAt.delete(cluster);
    this.freshSince.delete(cluster);
    return false;
  }

  /** Clusters no longer configured are forgotten once not witnessing: a configuration placed again looks afresh. */
  retain(configured: ReadonlySet<string>): void {
    for (const cluster of this.looked) {
      if (configured.has(cluster) || this.lastWorkAt.has(cluster)) continue;
      this.looked.delete(cluster);
      this.freshSince.delete(cluster);
    }
  }

  /**
   * Ms until an open window may close, at `now`: its time since the last work, or its report's fresh time, runs out;
   * `staleLookMs` for a window waiting on a report (a report coming back fresh is not always an event). Undefined when
   * no window is open.
   */
  endsIn(now: number, staleLookMs: number): number | undefined {
    const waits: number[] = [];
    for (const [cluster, at] of this.lastWorkAt) {
      const since = this.freshSince.get(cluster);
      waits.push(since === undefined ? Math.max(at + this.windowMs - now, staleLookMs) : Math.max(at + this.windowMs - now, since + WITNESS_FRESH_MS - now));
    }
    const left = waits.filter((ms) => ms > 0);
    return left.length > 0 ? Math.min(...left) : undefined;
  }
}
