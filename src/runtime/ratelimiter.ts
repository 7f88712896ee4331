// Rate limiters with client-go (k8s.io/client-go/util/workqueue) semantics, plus
// a standalone token bucket for client-side write QPS/burst limiting.
import { sleep, systemClock } from './clock.ts';
import type { Clock } from './clock.ts';

/** Decides how long an item waits before it is retried. */
export interface RateLimiter<K = string> {
  /** Delay in ms before `item` may be retried; counts as one more failure of `item`. */
  when(item: K): number;
  /** Stops tracking `item` (called on success), resetting its backoff. */
  forget(item: K): void;
  /** How many times `item` has been through when() since the last forget(). */
  numRequeues(item: K): number;
}

export interface ItemExponentialOptions {
  /** Delay after the first failure. Default 5 ms. */
  baseMs?: number;
  /** Upper bound. Default 1000 s. */
  maxMs?: number;
}

/** Per-item exponential backoff: base × 2^failures, capped (client-go ItemExponentialFailureRateLimiter). */
export class ItemExponentialRateLimiter<K = string> implements RateLimiter<K> {
  readonly baseMs: number;
  readonly maxMs: number;
  readonly #failures = new Map<K, number>();

  constructor(opts: ItemExponentialOptions = {}) {
    this.baseMs = opts.baseMs ?? 5;
    this.maxMs = opts.maxMs ?? 1_000_000;
    if (!(this.baseMs >= 0) || !(this.maxMs >= 0)) throw new RangeError('baseMs and maxMs must be >= 0');
  }

  when(item: K): number {
    const exp = this.#failures.get(item) ?? 0;
    this.#failures.set(item, exp + 1);
    // 2 ** exp overflows to Infinity after ~1024 failures; min() still caps it.
    return Math.min(this.baseMs * 2 ** exp, this.maxMs);
  }

  forget(item: K): void {
    this.#failures.delete(item);
  }

  numRequeues(item: K): number {
    return this.#failures.get(item) ?? 0;
  }
}

export interface TokenBucketOptions {
  /** Sustained rate in tokens per second. Infinity disables limiting. */
  qps: number;
  /** Bucket size: how many tokens can be taken at once after idling. */
  burst: number;
  clock?: Clock;
}

/**
 * Token bucket in the style of golang.org/x/time/rate: starts full, refills at
 * `qps`, and lets callers reserve a token ahead of time (tokens go negative),
 * so concurrent callers are spaced 1/qps apart instead of stampeding.
 */
export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;

  constructor(opts: TokenBucketOptions) {
    if (!(opts.qps > 0)) throw new RangeError('qps must be > 0');
    if (!(opts.burst >= 1)) throw new RangeError('burst must be >= 1');
    this.qps = opts.qps;
    this.burst = opts.burst;
    this.#clock = opts.clock ?? systemClock;
    this.#tokens = opts.burst;
    this.#last = this.#clock.now();
  }

  /** Tokens available now (negative while reservations are outstanding). */
  tokens(): number {
    this.#refill();
    return this.#tokens;
  }

  /** Reserves one token; returns the ms to wait before using it (0 = now). */
  reserve(): number {
    if (this.qps === Infinity) return 0;
    this.#refill();
    this.#tokens -= 1;
    if (this.#tokens >= 0) return 0;
    // The epsilon absorbs float drift (e.g. qps 3) so exact waits do not round up a ms.
    return Math.ceil((-this.#tokens * 1000) / this.qps - 1e-9);
  }

  /** Takes a token only if one is available right now. */
  tryTake(): boolean {
    if (this.qps === Infinity) return true;
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /**
   * Waits until a token is available and takes it. If `signal` aborts while
   * waiting, the reserved token is returned to the bucket and this rejects.
   */
  async take(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const delay = this.reserve();
    if (delay === 0) return;
    try {
      await sleep(this.#clock, delay, signal);
    } catch (err) {
      this.#refill();
      this.#tokens = Math.min(this.burst, this.#tokens + 1);
      throw err;
    }
  }

  #refill(): void {
    if (this.qps === Infinity) {
      this.#tokens = this.burst;
      return;
    }
    const now = this.#clock.now();
    const elapsed = Math.max(0, now - this.#last);
    this.#last = Math.max(this.#last, now);
    this.#tokens = Math.min(this.burst, this.#tokens + (elapsed * this.qps) / 1000);
  }
}

/** Overall (not per-item) limit: every when() reserves a token from one bucket (client-go BucketRateLimiter). */
export class BucketRateLimiter<K = string> implements RateLimiter<K> {
  readonly bucket: TokenBucket;

  constructor(opts: Partial<TokenBucketOptions> = {}) {
    this.bucket = new TokenBucket({ qps: opts.qps ?? 10, burst: opts.burst ?? 100, clock: opts.clock });
  }

  when(_item: K): number {
    return this.bucket.reserve();
  }

  forget(_item: K): void {}

  numRequeues(_item: K): number {
    return 0;
  }
}

/** The worst (longest) delay of several limiters; all of them see every call. */
export class MaxOfRateLimiter<K = string> implements RateLimiter<K> {
  readonly limiters: readonly RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    if (limiters.length === 0) throw new RangeError('MaxOfRateLimiter needs at least one limiter');
    this.limiters = limiters;
  }

  when(item: K): number {
    let max = 0;
    // Every limiter must be called so each records the failure / reserves its token.
    for (const l of this.limiters) max = Math.max(max, l.when(item));
    return max;
  }

  forget(item: K): void {
    for (const l of this.limiters) l.forget(item);
  }

  numRequeues(item: K): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(item));
    return max;
  }
}

/** client-go DefaultControllerRateLimiter: max(per-item 5 ms → 1000 s, overall 10 qps burst 100). */
export function defaultControllerRateLimiter<K = string>(opts: { clock?: Clock } = {}): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ItemExponentialRateLimiter<K>({ baseMs: 5, maxMs: 1_000_000 }),
    new BucketRateLimiter<K>({ qps: 10, burst: 100, clock: opts.clock }),
  );
}
