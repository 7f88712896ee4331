// A watcher feeding a store, with change handlers: the cache the reconcilers read. Handlers only map
// changes to work-queue keys; they run synchronously and must not do I/O.
import type { KubeObject } from '../core/objects.ts';
import type { KubeHttp } from './http.ts';
import type { ResourceRef } from './resource.ts';
import { Store, type StoreChange } from './store.ts';
import { Watcher, type WatcherOptions } from './watcher.ts';

export type ChangeHandler<T extends KubeObject> = (change: StoreChange<T>) => void;

export class Informer<T extends KubeObject = KubeObject> {
  readonly store = new Store<T>();
  private readonly handlers: ChangeHandler<T>[] = [];
  private readonly watcher: Watcher<T>;
  private readonly syncWaiters: (() => void)[] = [];

  /** `options.transform` decides what the cache keeps of each object (see WatcherOptions). */
  constructor(http: KubeHttp, readonly resource: ResourceRef, options: WatcherOptions<T> = {}) {
    this.watcher = new Watcher<T>(http, resource, {
      replace: (items) => {
        this.commit(this.store.replace(items));
        for (const resolve of this.syncWaiters.splice(0)) resolve();
      },
      event: (type, object) => {
        const change = this.store.apply(type, object);
        if (change) this.commit([change]);
      },
    }, options);
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
