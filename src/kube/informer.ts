// A watcher feeding a store, with change handlers: the cache the reconcilers read. Handlers only map
// changes to work-queue keys; they run synchronously and must not do I/O.
import type { KubeObject } from '../core/k8s/objects.ts';
import { Backoff } from '../runtime/backoff.ts';
import type { KubeHttp } from './http.ts';
import type { ResourceRef } from './resource.ts';
import { Store, type StoreChange } from './store.ts';
import { Watcher, type WatcherOptions } from './watcher.ts';

export type ChangeHandler<T extends KubeObject> = (change: StoreChange<T>) => void;

/**
 * The watcher's backoff, passed through to the one it would have used, that also tells when it is asked
 * for a delay: the watcher does so exactly when a list or watch failed (not on a 410, which relists at
 * once), the moment the cache stops following the apiserver.
 */
class FailureTap extends Backoff {
  constructor(
    private readonly inner: Backoff,
    private readonly onFailure: () => void,
  ) {
    super();
  }

  override next(): number {
    const delay = this.inner.next();
    this.onFailure();
    return delay;
  }

  override markHealthy(): void {
    this.inner.markHealthy();
  }

  override reset(): void {
    this.inner.reset();
  }

  override get attempts(): number {
    return this.inner.attempts;
  }
}

export class Informer<T extends KubeObject = KubeObject> {
  readonly store = new Store<T>();
  private readonly handlers: ChangeHandler<T>[] = [];
  private readonly watcher: Watcher<T>;
  private readonly syncWaiters: (() => void)[] = [];
  private readonly failureHandlers: ((err: Error) => void)[] = [];
  private readonly liveHandlers: (() => void)[] = [];

  /** `options.transform` decides what the cache keeps of each object (see WatcherOptions). */
  constructor(http: KubeHttp, readonly resource: ResourceRef, options: WatcherOptions<T> = {}) {
    const backoff = new FailureTap(options.backoff ?? new Backoff(options.clock ? { clock: options.clock } : {}), () => {
      const err = this.watcher.lastError;
      if (!err) return;
      for (const h of this.failureHandlers) {
        try {
          h(err);
        } catch (handlerErr) {
          // Inside the watcher's retry loop: a handler's throw must not end the watch.
          options.logger?.error({ err: String(handlerErr) }, 'informer failure handler threw');
        }
      }
    });
    this.watcher = new Watcher<T>(http, resource, {
      replace: (items) => {
        this.commit(this.store.replace(items));
        for (const resolve of this.syncWaiters.splice(0)) resolve();
      },
      event: (type, object) => {
        const change = this.store.apply(type, object);
        if (change) this.commit([change]);
      },
      live: () => {
        for (const h of this.liveHandlers) {
          try {
            h();
          } catch (handlerErr) {
            // Inside the watch's stream: a handler's throw must not end the watch.
            options.logger?.error({ err: String(handlerErr) }, 'informer live handler threw');
          }
        }
      },
    }, { ...options, backoff });
  }

  onChange(handler: ChangeHandler<T>): this {
    this.handlers.push(handler);
    return this;
  }

  get synced(): boolean {
    return this.watcher.synced;
  }

  get lists(): number {
    return this.watcher.lists;
  }

  /** Why the last list or watch failed, until it works again (see Watcher.lastError). */
  get lastError(): Error | undefined {
    return this.watcher.lastError;
  }

  /**
   * Whether the cache holds the apiserver's state as of now (Watcher.live): synced, and since the last
   * failed list or watch — a 410 Gone included — the state delivered afresh or the resumed watch caught up
   * (a bookmark). Never at the first event after a gap: the gap may hold more. A resumed watch with
   * nothing to deliver is caught up at its first bookmark (about a minute); with `relistAfterFailure` the
   * state is taken afresh instead and the cache is live once it is delivered. onLive marks the moment.
   */
  get live(): boolean {
    return this.watcher.live;
  }

  /**
   * `handler` is told of each failed list or watch (the cache is no longer live), synchronously, with the
   * error. Not of a 410 Gone, after which the watcher relists at once: the cache is not live meanwhile.
   */
  onFailure(handler: (err: Error) => void): this {
    this.failureHandlers.push(handler);
    return this;
  }

  /**
   * `handler` is told, synchronously, each time the cache becomes live: at the first sync, and after each
   * failure once the state is delivered afresh or caught up — whether or not any object changed.
   */
  onLive(handler: () => void): this {
    this.liveHandlers.push(handler);
    return this;
  }

  start(): this {
    this.watcher.start();
    return this;
  }

  stop(): Promise<void> {
    return this.watcher.stop();
  }

  /** Resolves once the first list has been delivered. */
  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /**
   * Hands the changes to every handler. A change is kept in the cache only once every handler took it:
   * on a throw the cache goes back to before the changes and the watcher delivers them again.
   */
  private commit(changes: StoreChange<T>[]): void {
    try {
      for (const change of changes) for (const h of this.handlers) h(change);
    } catch (err) {
      this.store.revert(changes);
      throw err;
    }
  }
}
