// Fairness between lanes in front of one token bucket (docs/design/runtime.md#one-cluster-never-holds-back-another: one cluster's failing or flapping writes
// never delay another cluster's). Each write waits in its lane's FIFO; one dispatcher takes the bucket's tokens
// and hands them to the lanes in turn, so under contention every lane with writes waiting gets an equal share,
// and a lane that queued hundreds of writes (a burst for one cluster) cannot starve one that queued a few.
// Without contention a token goes to the only waiter at once.
import type { TokenBucket } from './ratelimiter.ts';

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class FairGate {
  private readonly lanes = new Map<string, Waiter[]>();
  /** Lanes with waiters, in the order they get their next token. */
  private readonly turn: string[] = [];
  private dispatching = false;

  constructor(private readonly bucket: Pick<TokenBucket, 'take'>) {}

  /** Resolves when a write of `lane` may go. */
  take(lane: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiters = this.lanes.get(lane);
      if (waiters) waiters.push({ resolve, reject });
      else {
        this.lanes.set(lane, [{ resolve, reject }]);
        this.turn.push(lane);
      }
      void this.dispatch();
    });
  }

  /** Writes waiting, over all lanes. */
  get waiting(): number {
    let n = 0;
    for (const w of this.lanes.values()) n += w.length;
    return n;
  }

  private async dispatch(): Promise<void> {
    if (this.dispatching) return;
    this.dispatching = true;
    try {
      while (this.turn.length > 0) {
        try {
          await this.bucket.take();
        } catch (err) {
          // The bucket failed (it never does unless aborted): every waiter hears of it.
          for (const waiters of this.lanes.values()) for (const w of waiters) w.reject(err);
          this.lanes.clear();
          this.turn.length = 0;
          return;
        }
        const lane = this.turn.shift()!;
        const waiters = this.lanes.get(lane)!;
        waiters.shift()!.resolve();
        if (waiters.length > 0) this.turn.push(lane);
        else this.lanes.delete(lane);
      }
    } finally {
      this.dispatching = false;
    }
  }
}
