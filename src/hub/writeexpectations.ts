// What this controller has written but its cache may not show yet. A reconcile triggered before the
// watch event of our own write arrives (our annotation patch on the policy, say, racing the work's
// event) would otherwise see the old work and write it again. Entries end when the cache catches up,
// or after a while in case someone else changed the object since.
const EXPIRY_MS = 30_000;

interface Expectation {
  /** The spec-hash written, or undefined for a deletion. */
  specHash: string | undefined;
  at: number;
}

export class WriteExpectations {
  private readonly pending = new Map<string, Expectation>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  applied(key: string, specHash: string | undefined): void {
    this.pending.set(key, { specHash, at: this.now() });
  }

  deleted(key: string): void {
    this.pending.set(key, { specHash: undefined, at: this.now() });
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
    if (caughtUp || this.now() - e.at > EXPIRY_MS) {
      this.pending.delete(key);
      return fromCache;
    }
    return e.specHash === undefined ? { present: false } : { present: true, specHash: e.specHash };
  }
}
