// Which policy kinds the spoke agent watches: a fixed `--policies` list, or the params ConfigMap the hub
// places on every spoke (core/spoke/spokeconfig.ts kindsOfParamsConfigMap), each resolved against what
// this cluster serves. An unusable ConfigMap keeps the kinds watched so far; a kind not served is looked
// for again later.
import type { Logger } from 'pino';
import { gvrKey, type GroupVersionResource } from '../core/k8s/gvr.ts';
import { namespacedKey } from '../core/k8s/objects.ts';
import { kindsOfParamsConfigMap } from '../core/spoke/spokeconfig.ts';
import { findServedResource } from '../kube/discovery.ts';
import type { DynamicInformers } from '../kube/dynamicinformers.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { Informer } from '../kube/informer.ts';
import type { ReconcileResult } from '../runtime/runner.ts';

export const KINDS_KEY = 'kinds';
const RECHECK_MISSING_KINDS_MS = 30_000;

export type ServedKind = GroupVersionResource & { namespaced: boolean };

export interface KindsReconcilerDeps {
  http: KubeHttp;
  informers: DynamicInformers;
  /** A fixed list of kinds; otherwise the ConfigMap `configMap` in the `config` cache is followed. */
  policies?: GroupVersionResource[];
  config?: Informer;
  configMap: { namespace: string; name: string };
  /** The kinds changed (or were looked at again): what the report covers may have. */
  onKindsChanged: () => void;
  logger: Logger;
}

export class KindsReconciler {
  private kinds = new Map<string, ServedKind>();

  constructor(private readonly deps: KindsReconcilerDeps) {}

  /** The kinds being watched, by gvrKey. */
  watched(): ServedKind[] {
    return [...this.kinds.values()];
  }

  /** Resolves the kinds to watch against this cluster and makes the watches match. */
  async reconcile(): Promise<ReconcileResult> {
    const kinds = this.kindsToWatch();
    if (!kinds) return;
    const resolved = new Map<string, ServedKind>();
    let missing = false;
    for (const gvr of kinds) {
      const plain = { group: gvr.group, version: gvr.version, resource: gvr.resource };
      const served = await findServedResource(this.deps.http, plain);
      if (!served) {
        this.deps.logger.warn({ kind: gvrKey(plain) }, 'policy kind is not served on this cluster; looking again later');
        missing = true;
        continue;
      }
      resolved.set(gvrKey(plain), { ...plain, namespaced: served.namespaced });
    }
    this.kinds = resolved;
    await this.deps.informers.reconcile([...resolved.values()].map((k) => ({ gvr: { group: k.group, version: k.version, resource: k.resource }, namespaced: k.namespaced })));
    this.deps.onKindsChanged();
    return missing ? { requeueAfterMs: RECHECK_MISSING_KINDS_MS } : undefined;
  }

  /** The kinds to watch, as the flag or the ConfigMap says; undefined when the ConfigMap is unusable. */
  private kindsToWatch(): GroupVersionResource[] | undefined {
    if (this.deps.policies) return this.deps.policies;
    const { namespace, name } = this.deps.configMap;
    const read = kindsOfParamsConfigMap(this.deps.config?.store.get(namespacedKey(namespace, name)));
    if (read.ok) return read.kinds;
    if (read.missing) this.deps.logger.warn({ configMap: this.deps.configMap }, 'params ConfigMap not found; keeping the kinds watched so far');
    else this.deps.logger.error({ configMap: this.deps.configMap, errors: read.errors }, 'params ConfigMap is invalid; keeping the kinds watched so far');
    return undefined;
  }
}
