// What this controller has written but its cache may not show yet. A reconcile triggered before the
// watch event of our own write arrives (our annotation patch on the policy, say, racing the work's
// event) would otherwise see the old work and write it again. Entries end when the cache catches up, or
// expire after a while in case someone else changed the object since — and an expired entry hands its
// owner back (`expired()`), so a write the cache never confirmed is looked at again rather than waiting
// for an unrelated event.
const EXPIRY_MS = 30_000;

interface Expectation {
  /** The spec-hash written, or undefined for a deletion. */
  specHash: string | undefined;
  at: number;
  /** Whose reconcile wrote it (a work-queue key), to requeue on expiry. */
  owner?: string;
}

export class WriteExpectations {
  private readonly pending = new Map<string, Expectation>();

  constructor(
    private readonly now: () => number = () => Date.now(),
    readonly expiryMs = EXPIRY_MS,
  ) {}

  applied(key: string, specHash: string | undefined, owner?: string): void {
    this.pending.set(key, { specHash, at: this.now(), owner });
  }

  deleted(key: string, owner?: string): void {
    this.pending.set(key, { specHash: undefined, at: this.now(), owner });
  }

  /**
   * The state to diff against for one work: the cache's, unless a write of ours is still in flight.
   * `cached` is the spec-hash in the cache, or null when the cache has no such work.
   */
  observe(key: string, cached: string | undefined | null): { present: boolean; specHash?: string } {
    const e = this.pending.get(key);
    const fromCache = cached === null ? { present: false } : { present: true, specHash: cached };
    if (!e) return fromCache;
    const caughtUp = e.specHash === undefined ? cached === null : cached === e.specHash;
    if (caughtUp || this.now() - e.at > this.expiryMs) {
      this.pending.delete(key);
      return fromCache;
    }
    return e.specHash === undefined ? { present: false } : { present: true, specHash: e.specHash };
  }

  /** Removes the expectations older than the expiry and returns their owners (deduplicated). */
  expired(): string[] {
    const owners = new Set<string>();
    const limit = this.now() - this.expiryMs;
    for (const [key, e] of this.pending) {
      if (e.at > limit) continue;
      this.pending.delete(key);
      if (e.owner !== undefined) owners.add(e.owner);
    }
    return [...owners];
  }

  get size(): number {
    return this.pending.size;
  }
}
