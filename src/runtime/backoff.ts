// Jittered exponential backoff for reconnect loops (watch restarts), after
// client-go's reflector backoff manager: 800 ms ×2 up to 30 s, reset once the
// connection has been healthy for 2 min. Holds no timers; callers sleep.
import { systemClock } from './clock.ts';
import type { Clock } from './clock.ts';

export interface BackoffOptions {
  /** First delay. Default 800 ms. */
  initialMs?: number;
  /** Cap on the un-jittered delay. Default 30 s. */
  maxMs?: number;
  /** Growth per failure. Default 2. */
  factor?: number;
  /**
   * Extra random fraction added on top: a delay d becomes d × (1 + jitter × random()),
   * i.e. in [d, d × (1 + jitter)). Default 0.1. (client-go uses 1.0; 0 disables.)
   */
  jitter?: number;
  /** A healthy stretch at least this long resets the backoff. Default 2 min. */
  resetAfterMs?: number;
  /** Uniform [0, 1). Default Math.random. */
  random?: () => number;
  clock?: Pick<Clock, 'now'>;
}

export class Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly factor: number;
  readonly jitter: number;
  readonly resetAfterMs: number;
  readonly #random: () => number;
  readonly #clock: Pick<Clock, 'now'>;
  #nextBaseMs: number;
  #attempts = 0;
  #healthySince: number | undefined;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 800;
    this.maxMs = opts.maxMs ?? 30_000;
    this.factor = opts.factor ?? 2;
    this.jitter = opts.jitter ?? 0.1;
    this.resetAfterMs = opts.resetAfterMs ?? 120_000;
    this.#random = opts.random ?? Math.random;
    this.#clock = opts.clock ?? systemClock;
    if (!(this.initialMs >= 0 && this.maxMs >= this.initialMs)) throw new RangeError('need 0 <= initialMs <= maxMs');
    if (!(this.factor >= 1)) throw new RangeError('factor must be >= 1');
    if (!(this.jitter >= 0)) throw new RangeError('jitter must be >= 0');
    this.#nextBaseMs = this.initialMs;
  }

  /** Failures counted since the last reset. */
  get attempts(): number {
    return this.#attempts;
  }

  /**
   * Records a failure and returns how long to wait before retrying. A failure
   * ends any healthy stretch; if that stretch lasted resetAfterMs, the backoff
   * starts over from initialMs first.
   */
  next(): number {
    if (this.#healthySince !== undefined && this.#clock.now() - this.#healthySince >= this.resetAfterMs) this.reset();
    this.#healthySince = undefined;
    const base = this.#nextBaseMs;
    this.#nextBaseMs = Math.min(base * this.factor, this.maxMs);
    this.#attempts++;
    // Jitter goes on top of the capped value so peers stay spread out even at the cap.
    return base * (1 + this.jitter * this.#random());
  }

  /**
   * Call when the connection is (still) working, e.g. after a successful
   * (re)connect or on each received event. Only the first call of a healthy
   * stretch counts, so calling it often is cheap and keeps the stretch's start.
   */
  markHealthy(): void {
    this.#healthySince ??= this.#clock.now();
  }

  /** Starts over from initialMs immediately. */
  reset(): void {
    this.#nextBaseMs = this.initialMs;
    this.#attempts = 0;
    this.#healthySince = undefined;
  }
}
