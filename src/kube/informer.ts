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

  constructor(http: KubeHttp, readonly resource: ResourceRef, options: WatcherOptions = {}) {
    this.watcher = new Watcher<T>(http, resource, {
      replace: (items) => {
        for (const change of this.store.replace(items)) this.dispatch(change);
        for (const resolve of this.syncWaiters.splice(0)) resolve();
      },
      event: (type, object) => {
        const change = this.store.apply(type, object);
        if (change) this.dispatch(change);
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

  private dispatch(change: StoreChange<T>): void {
    for (const h of this.handlers) h(change);
  }
}
