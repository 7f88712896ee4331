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

  /**
   * Records a write, best before it is sent (the watch may show it before its answer comes); returns the
   * undo for a write that failed, which puts back what was expected before.
   */
  applied(key: string, specHash: string | undefined, owner?: string): () => void {
    const before = this.pending.get(key);
    const entry = { specHash, at: this.now(), owner };
    this.pending.set(key, entry);
    return () => {
      if (this.pending.get(key) !== entry) return;
      if (before) this.pending.set(key, before);
      else this.pending.delete(key);
    };
  }

  deleted(key: string, owner?: string): () => void {
    return this.applied(key, undefined, owner);
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

  /** A write of `key` is still expected (the cache has not shown it yet). */
  has(key: string): boolean {
    return this.pending.has(key);
  }

  /**
   * The cache now shows `key` with `specHash`: true, and the expectation ends, when that is exactly the
   * write still expected (the same end observe gives it, without a reconcile to call observe).
   */
  confirm(key: string, specHash: string | undefined): boolean {
    const e = this.pending.get(key);
    if (!e || e.specHash === undefined || e.specHash !== specHash) return false;
    this.pending.delete(key);
    return true;
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
