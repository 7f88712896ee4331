// A set of informers that starts and stops at runtime: the hub's policy watches (the union of the kinds
// in force) and the spoke agent's configured kinds. Keyed by group+resource: a version switch replaces
// the informer of that resource (the objects are the same ones, served at another version).
import type { Logger } from 'pino';
import { groupResourceKey, gvrKey, type GroupResource, type GroupVersionResource } from '../core/k8s/gvr.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import type { KubeHttp } from './http.ts';
import { Informer } from './informer.ts';
import type { StoreChange } from './store.ts';

export interface WatchedKind {
  gvr: GroupVersionResource;
  namespaced: boolean;
}

export interface DynamicInformersOptions {
  onChange: (gvr: GroupVersionResource, change: StoreChange<KubeObject>) => void;
  /** A newly started informer delivered its first list. */
  onSynced?: (gvr: GroupVersionResource) => void;
  /** A list or watch of the kind failed: its cache is no longer live (Informer.live) until it works again. */
  onFailure?: (gvr: GroupVersionResource, err: Error) => void;
  /** The kind's cache became live (Informer.onLive): its first state, and again after each failure. */
  onLive?: (gvr: GroupVersionResource) => void;
  /**
   * After a failure, each informer takes the kind's whole state afresh instead of resuming from the
   * resourceVersion (WatcherOptions.relistAfterFailure): for the spoke agent's small caches, live again
   * within a second of a reconnect. Not for the hub's, where a relist can be 100k objects.
   */
  relistAfterFailure?: boolean;
  /** Adds indexes to a new informer's store before it starts. */
  configure?: (informer: Informer) => void;
  /** What the caches keep of each object (see WatcherOptions.transform). */
  transform?: (object: KubeObject) => KubeObject;
  logger?: Logger;
}

export class DynamicInformers {
  private readonly informers = new Map<string, { kind: WatchedKind; informer: Informer }>();

  constructor(
    private readonly http: KubeHttp,
    private readonly options: DynamicInformersOptions,
  ) {}

  /** Makes the set of running informers equal `kinds`; returns the kinds started and stopped. */
  async reconcile(kinds: WatchedKind[]): Promise<{ started: string[]; stopped: string[] }> {
    const want = new Map(kinds.map((k) => [groupResourceKey(k.gvr), k]));
    const started: string[] = [];
    const stopped: string[] = [];
    for (const [key, { kind, informer }] of [...this.informers]) {
      const wantedKind = want.get(key);
      if (wantedKind && wantedKind.gvr.version === kind.gvr.version && wantedKind.namespaced === kind.namespaced) continue;
      this.informers.delete(key);
      await informer.stop();
      stopped.push(gvrKey(kind.gvr));
    }
    for (const [key, kind] of want) {
      if (this.informers.has(key)) continue;
      const informer = new Informer(this.http, { ...kind.gvr, namespaced: kind.namespaced }, {
        logger: this.options.logger?.child({ kind: key }),
        ...(this.options.transform ? { transform: this.options.transform } : {}),
        ...(this.options.relistAfterFailure ? { relistAfterFailure: true } : {}),
      });
      this.options.configure?.(informer);
      informer.onChange((change) => this.options.onChange(kind.gvr, change));
      const onFailure = this.options.onFailure;
      if (onFailure) informer.onFailure((err) => this.informers.get(key)?.informer === informer && onFailure(kind.gvr, err));
      const onLive = this.options.onLive;
      if (onLive) informer.onLive(() => this.informers.get(key)?.informer === informer && onLive(kind.gvr));
      this.informers.set(key, { kind, informer });
      informer.start();
      const onSynced = this.options.onSynced;
      if (onSynced) void informer.waitForSync().then(() => this.informers.get(key)?.informer === informer && onSynced(kind.gvr));
      started.push(gvrKey(kind.gvr));
    }
    if (started.length + stopped.length > 0) this.options.logger?.info({ started, stopped }, 'watched kinds changed');
    return { started, stopped };
  }

  /** The informer of the resource, whatever version it watches. */
  informer(gr: GroupResource): Informer | undefined {
    return this.informers.get(groupResourceKey(gr))?.informer;
  }

  /** The kind watched for the resource (its version included). */
  kind(gr: GroupResource): WatchedKind | undefined {
    return this.informers.get(groupResourceKey(gr))?.kind;
  }

  kinds(): WatchedKind[] {
    return [...this.informers.values()].map((e) => e.kind);
  }

  get allSynced(): boolean {
    return [...this.informers.values()].every((e) => e.informer.synced);
  }


  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].map((e) => e.informer.stop()));
    this.informers.clear();
  }
}
