// Controller runner: `concurrency` workers pull keys from a WorkQueue and
// reconcile them, with controller-runtime's result handling (error → rate-
// limited retry; success → forget, optionally requeue after a delay) and a
// graceful stop that drains in-flight reconciles, aborting them after a timeout.
import { systemClock } from './clock.ts';
import type { CancelTimer, Clock } from './clock.ts';
import type { WorkQueue } from './workqueue.ts';

/**
 * What a reconcile asks for next. `requeueAfterMs > 0` schedules the key again
 * with its backoff reset (periodic re-check); `requeue: true` retries it with
 * rate-limited backoff without treating the attempt as an error.
 */
export type ReconcileResult = { requeueAfterMs?: number; requeue?: boolean } | undefined | void;

/** Reconciles one key. `signal` aborts when stop()'s drain timeout expires. */
export type Reconcile = (key: string, signal: AbortSignal) => Promise<ReconcileResult>;

/** Values of controller_runtime_reconcile_total's `result` label. */
export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after';

export interface ReconcileEvent {
  controller: string;
  key: string;
  result: ReconcileOutcome;
  durationMs: number;
  /** Set when result is 'error'. */
  error?: unknown;
}

/**
 * Hooks for metrics: onReconcile feeds controller_runtime_reconcile_total{result},
 * ..._reconcile_errors_total (result 'error') and ..._reconcile_time_seconds;
 * onActiveWorkers feeds controller_runtime_active_workers. They must not throw.
 */
export interface ControllerObserver {
  onReconcile?(event: ReconcileEvent): void;
  onActiveWorkers?(controller: string, active: number): void;
}

/** The subset of pino's API used here. */
export interface Logger {
  error(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

/** The queue operations the runner needs (WorkQueue provides them). */
export type RunnerQueue = Pick<WorkQueue, 'get' | 'done' | 'forget' | 'addAfter' | 'addRateLimited' | 'numRequeues' | 'shutDown'>;

export interface ControllerRunnerOptions {
  /** The `controller` metric label and log field. */
  name: string;
  queue: RunnerQueue;
  reconcile: Reconcile;
  /** Number of workers, i.e. keys reconciled at once. Default 1. */
  concurrency?: number;
  logger?: Logger;
  observer?: ControllerObserver;
  clock?: Clock;
}

export interface StopOptions {
  /** How long in-flight reconciles may run before their signal aborts. Default 30 s (controller-runtime's). */
  drainTimeoutMs?: number;
}

export class DrainTimeoutError extends Error {
  constructor(controller: string, timeoutMs: number) {
    super(`controller ${controller}: in-flight reconciles did not finish within ${timeoutMs} ms of stop`);
    this.name = 'DrainTimeoutError';
  }
}

export class ControllerRunner {
  readonly name: string;
  readonly concurrency: number;
  readonly #queue: RunnerQueue;
  readonly #reconcile: Reconcile;
  readonly #logger: Logger | undefined;
  readonly #observer: ControllerObserver;
  readonly #clock: Clock;
  readonly #abort = new AbortController();
  readonly #inFlight = new Set<string>();
  #workers: Promise<void>[] | undefined;
  #stopping: Promise<void> | undefined;

  constructor(opts: ControllerRunnerOptions) {
    const concurrency = opts.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be an integer >= 1');
    this.name = opts.name;
    this.concurrency = concurrency;
    this.#queue = opts.queue;
    this.#reconcile = opts.reconcile;
    this.#logger = opts.logger;
    this.#observer = opts.observer ?? {};
    this.#clock = opts.clock ?? systemClock;
  }

  /** Keys being reconciled right now. */
  inFlight(): ReadonlySet<string> {
    return this.#inFlight;
  }

  /** Starts the workers. A runner runs once: it cannot be restarted after stop(). */
  start(): void {
    if (this.#workers) throw new Error(`controller ${this.name} already started`);
    if (this.#stopping) throw new Error(`controller ${this.name} was stopped`);
    this.#workers = Array.from({ length: this.concurrency }, () => this.#worker());
  }

  /**
   * Shuts the queue down (no new keys; queued ones are dropped, since a new
   * leader or restart re-lists anyway), waits for in-flight reconciles and, if
   * they outlast drainTimeoutMs, aborts their signal and waits for them to
   * return. Resolves once every worker has exited. Idempotent.
   */
  stop(opts: StopOptions = {}): Promise<void> {
    this.#stopping ??= this.#drain(opts.drainTimeoutMs ?? 30_000);
    return this.#stopping;
  }

  async #drain(timeoutMs: number): Promise<void> {
    this.#queue.shutDown();
    if (!this.#workers) return;
    const exited = Promise.all(this.#workers).then(() => 'exited' as const);
    let cancel: CancelTimer | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      if (Number.isFinite(timeoutMs)) cancel = this.#clock.setTimer(() => resolve('timeout'), timeoutMs);
    });
    const first = await Promise.race([exited, timedOut]);
    cancel?.();
    if (first === 'timeout') {
      this.#logger?.error({ controller: this.name, keys: [...this.#inFlight] }, 'drain timeout: aborting in-flight reconciles');
      this.#abort.abort(new DrainTimeoutError(this.name, timeoutMs));
      await exited;
    }
  }

  async #worker(): Promise<void> {
    for (;;) {
      const key = await this.#queue.get();
      if (key === undefined) return;
      try {
        await this.#process(key);
      } catch (err) {
        // Only a throwing hook or logger gets here; keep the worker alive.
        this.#logger?.error({ controller: this.name, key, err }, 'controller runner internal error');
      } finally {
        this.#queue.done(key);
      }
    }
  }

  async #process(key: string): Promise<void> {
    this.#inFlight.add(key);
    this.#observer.onActiveWorkers?.(this.name, this.#inFlight.size);
    const start = this.#clock.now();
    let result: ReconcileResult;
    let error: unknown;
    let failed = false;
    try {
      result = await this.#reconcile(key, this.#abort.signal);
    } catch (err) {
      failed = true;
      error = err;
    } finally {
      this.#inFlight.delete(key);
      this.#observer.onActiveWorkers?.(this.name, this.#inFlight.size);
    }
    const durationMs = this.#clock.now() - start;

    // Requeue before done() (in the worker), so the queue sees the key as
    // re-added while processing and hands it out again only afterwards.
    let outcome: ReconcileOutcome;
    if (failed) {
      outcome = 'error';
      this.#queue.addRateLimited(key);
      this.#logger?.error(
        { controller: this.name, key, err: error, requeues: this.#queue.numRequeues(key) },
        'reconcile failed',
      );
    } else if (result && result.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
      outcome = 'requeue_after';
      this.#queue.forget(key);
      this.#queue.addAfter(key, result.requeueAfterMs);
    } else if (result?.requeue) {
      outcome = 'requeue';
      this.#queue.addRateLimited(key);
    } else {
      outcome = 'success';
      this.#queue.forget(key);
    }
    this.#logger?.debug?.({ controller: this.name, key, result: outcome, durationMs }, 'reconciled');
    this.#observer.onReconcile?.({
      controller: this.name,
      key,
      result: outcome,
      durationMs,
      ...(failed && { error }),
    });
  }
}
