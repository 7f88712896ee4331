// Watches exactly the params objects that owned GatewayClasses reference — one narrow informer per
// referenced ConfigMap or PolicySyncParams (a namespace and a name field selector) rather than every
// ConfigMap in the cluster. A change to one re-queues the classes referencing it.
import type { Logger } from 'pino';
import { namespacedKey, type KubeObject } from '../core/k8s/objects.ts';
import type { KubeHttp } from '../kube/http.ts';
import { Informer } from '../kube/informer.ts';
import { RESOURCES, type ResourceRef } from '../kube/resource.ts';

export type ParamsKind = 'ConfigMap' | 'PolicySyncParams';

export interface ParamsRef {
  kind: ParamsKind;
  namespace: string;
  name: string;
}

export function paramsRefKey(ref: ParamsRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

const RESOURCE_OF: Record<ParamsKind, ResourceRef> = {
  ConfigMap: RESOURCES.configMaps,
  PolicySyncParams: RESOURCES.policySyncParams,
};

export class ParamsRefs {
  private readonly watches = new Map<string, { informer: Informer; users: Set<string> }>();

  constructor(
    private readonly http: KubeHttp,
    private readonly onChange: (classNames: string[]) => void,
    private readonly logger?: Logger,
  ) {}

  /** Records that `className` uses `ref` (or nothing), starting and stopping watches as needed. */
  async use(className: string, ref: ParamsRef | undefined): Promise<void> {
    const key = ref ? paramsRefKey(ref) : undefined;
    for (const [k, w] of [...this.watches]) {
      if (k === key || !w.users.delete(className) || w.users.size > 0) continue;
      this.watches.delete(k);
      await w.informer.stop();
    }
    if (!ref || !key) return;
    let watch = this.watches.get(key);
    if (!watch) {
      const informer = new Informer(this.http, RESOURCE_OF[ref.kind], {
        namespace: ref.namespace,
        fieldSelector: `metadata.name=${ref.name}`,
        logger: this.logger?.child({ params: key }),
      });
      watch = { informer, users: new Set() };
      const users = watch.users;
      informer.onChange(() => this.onChange([...users]));
      this.watches.set(key, watch);
      informer.start();
    }
    watch.users.add(className);
  }

  /**
   * `synced: false` while the first list is outstanding: the object's absence is not yet known; `error`
   * then says why the list fails (e.g. the PolicySyncParams CRD is not installed).
   */
  read(ref: ParamsRef): { synced: boolean; object?: KubeObject; error?: string } {
    const w = this.watches.get(paramsRefKey(ref));
    if (!w?.informer.synced) {
      const error = w?.informer.lastError;
      return error ? { synced: false, error: error.message } : { synced: false };
    }
    return { synced: true, object: w.informer.store.get(namespacedKey(ref.namespace, ref.name)) };
  }

  async stop(): Promise<void> {
    await Promise.all([...this.watches.values()].map((w) => w.informer.stop()));
    this.watches.clear();
  }
}
