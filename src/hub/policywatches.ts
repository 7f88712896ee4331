// The dynamic watch manager: one informer per policy kind in the union of the valid `policiesToSync`
// of every owned GatewayClass. Watches start and stop at runtime as params change.
import type { Logger } from 'pino';
import { gvrKey, type GroupVersionResource } from '../core/gvr.ts';
import { objectKey, type KubeObject } from '../core/objects.ts';
import type { KubeHttp } from '../kube/http.ts';
import { Informer } from '../kube/informer.ts';
import type { StoreChange } from '../kube/store.ts';
import { BY_GATEWAY, BY_NAME, targetedGateways } from './indexes.ts';

export interface WatchedKind {
  gvr: GroupVersionResource;
  namespaced: boolean;
}

export type PolicyChangeHandler = (gvr: GroupVersionResource, change: StoreChange<KubeObject>) => void;

export class PolicyWatches {
  private readonly informers = new Map<string, { kind: WatchedKind; informer: Informer }>();

  constructor(
    private readonly http: KubeHttp,
    private readonly onChange: PolicyChangeHandler,
    private readonly logger?: Logger,
  ) {}

  /** Makes the set of running watches equal `wanted`; returns the kinds started and stopped. */
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
      const informer = new Informer(this.http, { ...kind.gvr, namespaced: kind.namespaced }, {
        logger: this.logger?.child({ kind: key }),
      });
      informer.store.addIndex(BY_GATEWAY, targetedGateways).addIndex(BY_NAME, (p) => [p.metadata.name]);
      informer.onChange((change) => this.onChange(kind.gvr, change));
      this.informers.set(key, { kind, informer });
      informer.start();
      started.push(key);
    }
    if (started.length + stopped.length > 0) this.logger?.info({ started, stopped }, 'policy watches changed');
    return { started, stopped };
  }

  has(gvr: GroupVersionResource): boolean {
    return this.informers.has(gvrKey(gvr));
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

  /** The cached policy, if its kind is watched. */
  get(gvr: GroupVersionResource, namespace: string, name: string): KubeObject | undefined {
    return this.informer(gvr)?.store.get(objectKey({ metadata: { namespace, name } }));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].map((e) => e.informer.stop()));
    this.informers.clear();
  }
}
