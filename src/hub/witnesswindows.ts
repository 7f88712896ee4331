// How long a cluster keeps its spoke configuration as a witness after its last work of ours left (the report that
// comes back after that is what sees a copy the work agent left behind: core/spoke/spoketruth.ts). This process's
// memory. A cluster it first finds configured with no work of ours — after a restart, or on a new leader — left its
// last work at a time it does not know: that is doubt, not absence, so the window runs from that first look. A
// failover never shortens it (soak seed 4611: a leader withdrew spoke-2's configuration 0.1 s after taking over,
// 23 s after the last work left, and the report it placed again came back behind the spoke's for three minutes).

export class WitnessWindows {
  /** When (monotonic) each cluster was last seen with a work of ours, or first looked at without one. */
  private readonly lastWorkAt = new Map<string, number>();
  /** Clusters this process has looked at since their configuration was placed. */
  private readonly looked = new Set<string>();

  constructor(private readonly windowMs: number) {}

  /** A work of ours is on the cluster now. */
  worked(cluster: string, now: number): void {
    this.lastWorkAt.set(cluster, now);
    this.looked.add(cluster);
  }

  /** A cluster configured with no work of ours: whether its configuration is still a witness at `now`. */
  witnessing(cluster: string, now: number): boolean {
    if (!this.looked.has(cluster)) this.worked(cluster, now);
    const last = this.lastWorkAt.get(cluster);
    if (last !== undefined && now - last < this.windowMs) return true;
    this.lastWorkAt.delete(cluster);
    return false;
  }

  /** Clusters neither configured nor witnessing are forgotten: a configuration placed again looks afresh. */
  retain(configured: ReadonlySet<string>): void {
    for (const cluster of this.looked) if (!configured.has(cluster) && !this.lastWorkAt.has(cluster)) this.looked.delete(cluster);
  }

  /** Ms until the first window open at `now` closes; undefined when none is open. */
  endsIn(now: number): number | undefined {
    const left = [...this.lastWorkAt.values()].map((at) => at + this.windowMs - now).filter((ms) => ms > 0);
    return left.length > 0 ? Math.min(...left) : undefined;
  }
}
