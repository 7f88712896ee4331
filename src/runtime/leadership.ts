// Whether this replica may write now: every write path asks (KubeHttp's write guard), so that a leader
// that lost — or can no longer renew — its lease stops writing at once, before a standby can acquire.
// Without leader election every write is allowed; with it, none until a lease is held and renewed.
//
// A write let through is fenced in time too: the guard hands KubeHttp how long it may stay in flight (the
// elector's `inFlightMs`, asked again when it runs out, since a renewal moves it on), and KubeHttp aborts it
// then, resetting its connection — so none is still on its way once a standby could hold the lease. What an
// apiserver already holds in its socket buffers (a frozen one) it still handles: docs/reliability.md, e.
/** A write refused on this side because this replica does not hold a valid leader lease. */
export class NotLeaderError extends Error {
  constructor(method: string, path: string) {
    super(`${method} ${path}: not sent: this replica does not hold the leader lease`);
    this.name = 'NotLeaderError';
  }
}

/**
 * How long (ms from now) a write may still be in flight; asked when the request is sent and again whenever
 * the time it gave runs out (it may have moved on). At most 0: the write is aborted.
 */
export type WriteFence = () => number;


export interface Elector {
  /** Leading, with a renewal sent within the renew deadline. */
  readonly isLeader: boolean;
  /** Ms from now that a write may still be in flight; at most 0 once none may. */
  inFlightMs(): number;
}

export class Leadership {
  private elector: Elector | undefined;

  constructor(private readonly elected: boolean) {}

  /** The elector whose time-bounded `isLeader` decides from now on. */
  follow(elector: Elector): void {
    this.elector = elector;
  }

  get canWrite(): boolean {
    if (!this.elected) return true;
    return this.elector?.isLeader ?? false;
  }

  /** A KubeHttp write guard: throws when the write may not be sent; else the fence it is held to, if any. */
  readonly guard = (method: string, path: string): WriteFence | undefined => {
    if (!this.canWrite) throw new NotLeaderError(method, path);
    const elector = this.elector;
    return this.elected && elector ? () => elector.inFlightMs() : undefined;
  };
}
