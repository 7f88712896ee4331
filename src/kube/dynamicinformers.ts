// A set of informers keyed by GroupVersionResource that starts and stops at runtime: the hub's policy
// watches (the union of valid `policiesToSync`) and the spoke agent's configured kinds.
import type { Logger } from 'pino';
import { gvrKey, type GroupVersionResource } from '../core/gvr.ts';
import type { KubeObject } from '../core/objects.ts';
import type { KubeHttp } from './http.ts';
import { Informer } from './informer.ts';
import type { StoreChange } from './store.ts';

export interface WatchedKind {
  gvr: GroupVersionResource;
  namespaced: boolean;
}

export interface DynamicInformersOptions {
  onChange: (gvr: GroupVersionResource, change: StoreChange<KubeObject>) => void;
  /** Adds indexes to a new informer's store before it starts. */
  configure?: (informer: Informer) => void;
  logger?: Logger;
}

export class DynamicInformers {
  private readonly informers = new Map<string, { kind: WatchedKind; informer: Informer }>();

  constructor(
    private readonly http: KubeHttp,
    private readonly options: DynamicInformersOptions,
  ) {}

  /** Makes the set of running informers equal `wanted`; returns the kinds started and stopped. */
  async reconcile(wanted: WatchedKind[]): Promise<{ started: string[]; stopped: string[] }> {
    const want = new Map(wanted.map((k) => [gvrKey(k.gvr), k]));
    const started: string[] = [];
    const stopped: string[] = [];
    for (const [key, { informer }] of [...this.informers]) {
      if (want.has(key)) continue;
      this.informers.delete(key);
      await informer.stop();
      stopped.push(key);
    }
    for (const [key, kind] of want) {
      if (this.informers.has(key)) continue;
      const informer = new Informer(this.http, { ...kind.gvr, namespaced: kind.namespaced }, { logger: this.options.logger?.child({ kind: key }) });
      this.options.configure?.(informer);
      informer.onChange((change) => this.options.onChange(kind.gvr, change));
      this.informers.set(key, { kind, informer });
      informer.start();
      started.push(key);
    }
    if (started.length + stopped.length > 0) this.options.logger?.info({ started, stopped }, 'watched kinds changed');
    return { started, stopped };
  }

  informer(gvr: GroupVersionResource): Informer | undefined {
    return this.informers.get(gvrKey(gvr))?.informer;
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
