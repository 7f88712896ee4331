// Places the spoke agent's configuration (the policy kinds in force) on every cluster where a managed
// Gateway is placed, through one ManifestWork per cluster (DESIGN §6). Works of clusters that left are
// deleted — only while every owned GatewayClass has a configuration in force.
import type { Logger } from 'pino';
import { diffWorks, workKeyOf } from '../core/desiredworks.ts';
import { controllerLabelValue, readSpecHash, type ManifestWork } from '../core/manifestwork.ts';
import type { KubeObject } from '../core/objects.ts';
import { SPOKE_CONFIG_LABEL, buildSpokeConfigWork } from '../core/spokeconfig.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { Informer } from '../kube/informer.ts';
import { RESOURCES } from '../kube/resource.ts';
import { deleteObject, serverSideApply } from '../kube/writes.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import type { ClassConfigs } from './classconfigs.ts';
import { ownsClass } from './gatewayclassreconciler.ts';
import { gatewayClassOf, gatewayClusters } from './indexes.ts';

export const SPOKE_CONFIG_KEY = 'spoke-config';

export interface SpokeConfigSyncerDeps {
  http: KubeHttp;
  classes: Informer;
  gateways: Informer;
  decisions: Informer;
  works: Informer;
  configs: ClassConfigs;
  controllerName: string;
  configMap: { namespace: string; name: string };
  logger: Logger;
}

export function isSpokeConfigWork(work: KubeObject): boolean {
  return work.metadata.labels?.[SPOKE_CONFIG_LABEL] === 'true';
}

export class SpokeConfigSyncer {
  constructor(private readonly d: SpokeConfigSyncerDeps) {}

  async reconcile(): Promise<ReconcileResult> {
    const kinds = this.d.configs.wantedKinds().map((k) => k.gvr);
    const controller = controllerLabelValue(this.d.controllerName);
    const desired = new Map<string, ManifestWork>();
    for (const cluster of this.clusters()) {
      const work = buildSpokeConfigWork({ cluster, kinds, configMap: this.d.configMap, controller });
      desired.set(workKeyOf(work), work);
    }
    const observed = new Map(
      this.d.works.store.list().filter(isSpokeConfigWork).map((w) => [workKeyOf(w), { specHash: readSpecHash(w) }]),
    );
    const owned = this.d.classes.store.list().filter((c) => ownsClass(c, this.d.controllerName)).map((c) => c.metadata.name);
    // Without a configuration for every owned class the set of clusters is not known: delete nothing.
    const plan = diffWorks(desired, observed, this.d.configs.completeFor(owned) ? new Set() : new Set(observed.keys()));
    for (const work of plan.apply) {
      await serverSideApply(this.d.http, RESOURCES.manifestWorks, work);
      this.d.logger.info({ cluster: work.metadata.namespace, kinds: kinds.length }, 'spoke configuration applied');
    }
    for (const key of plan.delete) {
      const cluster = key.slice(0, key.indexOf('/'));
      await deleteObject(this.d.http, RESOURCES.manifestWorks, cluster, key.slice(key.indexOf('/') + 1));
      this.d.logger.info({ cluster }, 'spoke configuration removed');
    }
  }

  /** Clusters where some Gateway of an owned class with a configuration in force is placed. */
  private clusters(): string[] {
    const clusters = new Set<string>();
    for (const gateway of this.d.gateways.store.list()) {
      const [className] = gatewayClassOf(gateway);
      if (!className || !this.d.configs.get(className)) continue;
      for (const c of gatewayClusters(gateway, this.d.decisions)) clusters.add(c);
    }
    return [...clusters].sort();
  }
}
