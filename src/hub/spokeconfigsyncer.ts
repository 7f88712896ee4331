// Places the spoke agent's configuration (the policy kinds in force) on every cluster where a managed
// Gateway is placed, through one ManifestWork per cluster (DESIGN §6). Works of clusters that left are
// deleted — only while every owned GatewayClass has a configuration in force.
import type { Logger } from 'pino';
import { controllerLabelValue, type ManifestWork } from '../core/manifestwork.ts';
import { buildSpokeConfigWork, isSpokeConfigWork } from '../core/spokeconfig.ts';
import type { Informer } from '../kube/informer.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import type { ClassConfigs } from './classconfigs.ts';
import { ownsClass } from './gatewayclassreconciler.ts';
import { gatewayClassOf, gatewayClusters } from './indexes.ts';
import type { WorkApplier } from './workapplier.ts';

export const SPOKE_CONFIG_KEY = 'spoke-config';

export interface SpokeConfigSyncerDeps {
  applier: WorkApplier;
  classes: Informer;
  gateways: Informer;
  decisions: Informer;
  works: Informer;
  configs: ClassConfigs;
  controllerName: string;
  configMap: { namespace: string; name: string };
  logger: Logger;
}

export class SpokeConfigSyncer {
  constructor(private readonly d: SpokeConfigSyncerDeps) {}

  async reconcile(): Promise<ReconcileResult> {
    const kinds = this.d.configs.wantedKinds().map((k) => k.gvr);
    const controller = controllerLabelValue(this.d.controllerName);
    const desired: ManifestWork[] = this.clusters().map((cluster) => buildSpokeConfigWork({ cluster, kinds, configMap: this.d.configMap, controller }));
    const observed = this.d.works.store.list().filter(isSpokeConfigWork);
    const owned = this.d.classes.store.list().filter((c) => ownsClass(c, this.d.controllerName)).map((c) => c.metadata.name);
    const plan = this.d.applier.plan(desired, observed);
    // Without a configuration for every owned class the set of clusters is not known: delete nothing.
    // (The spoke configuration only tells the agent what to watch; it never carries enforcement.)
    const known = this.d.works.synced && this.d.configs.completeFor(owned);
    await this.d.applier.execute(SPOKE_CONFIG_KEY, { ...plan, delete: known ? plan.delete : [] }, this.d.logger.child({ kinds: kinds.length }));
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
