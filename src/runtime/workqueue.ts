// Work queue of string keys with client-go semantics (workqueue.Typed +
// delaying + rate-limiting queue in one, since this is the only one we need):
//  - a key waiting to be processed is queued once, however often it is added;
//  - a key is never handed out again while it is being processed;
//  - a key added while being processed is handed out again after done(key).
import { systemClock } from './clock.ts';
import type { CancelTimer, Clock } from './clock.ts';
import { defaultControllerRateLimiter } from './ratelimiter.ts';
import type { RateLimiter } from './ratelimiter.ts';

/**
 * Hooks for metrics (workqueue_* in client-go naming). Called synchronously
 * after the queue's state is updated; they must not throw.
 */
export interface WorkQueueObserver {
  /** A key became waiting (not a collapsed duplicate): workqueue_adds_total. */
  onAdd?(key: string): void;
  /** Keys waiting to be processed changed: workqueue_depth. */
  onDepth?(depth: number): void;
  /** A key was handed out after waiting `queuedMs`: workqueue_queue_duration_seconds. */
  onGet?(key: string, queuedMs: number): void;
  /** A key's processing took `workMs`: workqueue_work_duration_seconds. */
  onDone?(key: string, workMs: number): void;
  /** addRateLimited(key) was called: workqueue_retries_total. */
  onRetry?(key: string): void;
}

export interface WorkQueueOptions {
  /** For metric labels and logs. */
  name?: string;
  /** Used by addRateLimited/forget/numRequeues. Default: defaultControllerRateLimiter(). */
  rateLimiter?: RateLimiter;
  clock?: Clock;
  observer?: WorkQueueObserver;
}

type Waiter = (key: string | undefined) => void;

export class WorkQueue {
  readonly name: string;
  readonly #clock: Clock;
  readonly #limiter: RateLimiter;
  readonly #observer: WorkQueueObserver;

  // FIFO of ready keys; a head index instead of shift() keeps get() O(1) at 10k keys.
  #queue: string[] = [];
  #head = 0;
  /** Keys waiting to be processed: queued ones plus ones re-added while processing. */
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  /** Pending addAfter() keys, by key, so an earlier request replaces a later one. */
  readonly #delayed = new Map<string, { readyAt: number; cancel: CancelTimer; retry: boolean }>();
  readonly #addedAt = new Map<string, number>();
  readonly #startedAt = new Map<string, number>();
  #waiters: Waiter[] = [];

  #shuttingDown = false;
  #drained: (() => void) | undefined;
  #drainedPromise: Promise<void> | undefined;

  constructor(opts: WorkQueueOptions = {}) {
    this.name = opts.name ?? '';
    this.#clock = opts.clock ?? systemClock;
    this.#limiter = opts.rateLimiter ?? defaultControllerRateLimiter({ clock: this.#clock });
    this.#observer = opts.observer ?? {};
  }

  /** Marks `key` as needing processing. Ignored after shutdown. */
  add(key: string): void {
    if (this.#shuttingDown) return;
    if (this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (!this.#addedAt.has(key)) this.#addedAt.set(key, this.#clock.now());
    this.#observer.onAdd?.(key);
    this.#observer.onDepth?.(this.#dirty.size);
    // A key being processed is queued by done(), so it cannot run twice at once.
    if (this.#processing.has(key)) return;
    this.#push(key);
  }

  /** Adds each key (see add). */
  addAll(keys: Iterable<string>): void {
    for (const key of keys) this.add(key);
  }

  /**
   * Adds `key` after `delayMs`. If the key is already scheduled, the earlier
   * time wins. A delay <= 0 adds it now.
   */
  addAfter(key: string, delayMs: number): void {
    this.#schedule(key, delayMs, false);
  }

  #schedule(key: string, delayMs: number, retry: boolean): void {
    if (this.#shuttingDown) return;
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    const readyAt = this.#clock.now() + delayMs;
    const existing = this.#delayed.get(key);
    if (existing) {
      if (existing.readyAt <= readyAt) {
        // A retry folded into an earlier look is still a retry until that look comes.
        existing.retry ||= retry;
        return;
      }
      existing.cancel();
    }
    const cancel = this.#clock.setTimer(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.#delayed.set(key, { readyAt, cancel, retry });
  }

  /** Adds `key` after the rate limiter's delay for it (counts as a retry). */
  addRateLimited(key: string): void {
    if (this.#shuttingDown) return;
    this.#observer.onRetry?.(key);
    this.#schedule(key, this.#limiter.when(key), true);
  }

  /** Resets the rate limiter's backoff for `key` (call after a success). */
  forget(key: string): void {
    this.#limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.#limiter.numRequeues(key);
  }

  /**
   * Waits for the next key and marks it as being processed; the caller must
   * call done(key) afterwards. Resolves undefined once the queue is shut down
   * (immediately after shutDown(); after the remaining keys were handed out
   * after shutDownWithDrain()).
   */
  get(): Promise<string | undefined> {
    if (this.#head < this.#queue.length) return Promise.resolve(this.#take());
    if (this.#exhausted()) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks `key` as processed; if it was added meanwhile, queues it again. */
  done(key: string): void {
    if (!this.#processing.delete(key)) return;
    const started = this.#startedAt.get(key);
    this.#startedAt.delete(key);
    if (started !== undefined) this.#observer.onDone?.(key, this.#clock.now() - started);
    if (this.#dirty.has(key)) this.#push(key);
    this.#checkShutdownProgress();
  }

  /** Keys ready to be handed out (excludes keys re-added while processing). */
  len(): number {
    return this.#queue.length - this.#head;
  }

  /** Keys currently handed out and not yet done. */
  /** Keys waiting for their retry after a failure (addRateLimited), not yet due. */
  retryingCount(): number {
    let n = 0;
    for (const entry of this.#delayed.values()) if (entry.retry) n++;
    return n;
  }

  processingCount(): number {
    return this.#processing.size;
  }

  isShuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Stops intake and drops everything waiting: get() resolves undefined from
   * now on (pending calls included). Keys already handed out may still call done().
   */
  shutDown(): void {
    this.#stopIntake();
    this.#queue = [];
    this.#head = 0;
    this.#dirty.clear();
    this.#addedAt.clear();
    this.#observer.onDepth?.(0);
    this.#checkShutdownProgress();
  }

  /**
   * Stops intake (new adds and pending addAfter are dropped) but keeps handing
   * out keys already waiting, including ones re-added while processing; get()
   * resolves undefined once none are left. Resolves when every handed-out key
   * has been done(). Calling shutDown() afterwards drops what is left.
   */
  shutDownWithDrain(): Promise<void> {
    this.#stopIntake();
    this.#drainedPromise ??= new Promise<void>((resolve) => {
      this.#drained = resolve;
    });
    this.#checkShutdownProgress();
    return this.#drainedPromise;
  }

  #stopIntake(): void {
    this.#shuttingDown = true;
    for (const { cancel } of this.#delayed.values()) cancel();
    this.#delayed.clear();
  }

  /** Shut down and nothing left to hand out (now or after an in-flight done()). */
  #exhausted(): boolean {
    return this.#shuttingDown && this.#dirty.size === 0;
  }

  #checkShutdownProgress(): void {
    if (!this.#exhausted()) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w(undefined);
    if (this.#processing.size === 0 && this.#drained) {
      this.#drained();
      this.#drained = undefined;
    }
  }

  #push(key: string): void {
    this.#queue.push(key);
    const waiter = this.#waiters.shift();
    if (waiter) waiter(this.#take());
  }

  #take(): string {
    const key = this.#queue[this.#head++] as string;
    // Drop the consumed prefix once it dominates, so memory stays bounded.
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    this.#dirty.delete(key);
    this.#processing.add(key);
    const now = this.#clock.now();
    this.#startedAt.set(key, now);
    const added = this.#addedAt.get(key);
    this.#addedAt.delete(key);
    this.#observer.onGet?.(key, added === undefined ? 0 : now - added);
    this.#observer.onDepth?.(this.#dirty.size);
    return key;
  }
}
