// Places the spoke agent's configuration (the policy kinds in force) on every cluster where a managed
// Gateway is placed, or where a copy of ours may still run, through one ManifestWork per cluster that also reads the agent's report back, and a
// second that reads its heartbeat back (docs/design/tenancy.md#local-policies-win). Works of clusters that left are
// deleted — only while every owned GatewayClass has a configuration in force, no Gateway names a class
// that is absent, no Placement is in flux, and OCM vouches for the cluster (docs/design/deletion.md#never-delete-on-doubt): the agent's report
// is what keeps a copy off a cluster where local policies win, and an agent unconfigured by a partition
// would let the copies back on when the cluster returns.
import type { Logger } from 'pino';
import { controllerLabelValue, type ManifestWork } from '../core/works/manifestwork.ts';
import { buildSpokeConfigWork, buildSpokeHeartbeatWork, isSpokeConfigWork } from '../core/spoke/spokeconfig.ts';
import type { DerivedStore } from '../kube/derivedstore.ts';
import type { Informer } from '../kube/informer.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import type { ClassConfigs } from './classconfigs.ts';
import { ownsClass } from '../core/params/classparams.ts';
import { clusterHealth } from '../core/fleet/clusterhealth.ts';
import { gatewayClassOf } from './indexes.ts';
import type { GatewayPlacements } from './placements.ts';
import type { WorkApplier } from './workapplier.ts';
import type { LingerClocks } from './lingerclocks.ts';
import { LINGER_GRACE_MS } from '../core/spoke/spoketruth.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import { WitnessWindows } from './witnesswindows.ts';

export const SPOKE_CONFIG_KEY = 'spoke-config';

export interface SpokeConfigSyncerDeps {
  applier: WorkApplier;
  classes: Informer;
  gateways: Informer;
  managedClusters: Informer;
  placed: GatewayPlacements;
  works: DerivedStore;
  configs: ClassConfigs;
  controllerName: string;
  configMap: { namespace: string; name: string };
  /** Copies seen lingering, by cluster: the report of such a cluster must stay. */
  lingering?: Pick<LingerClocks, 'watches'>;
  /** Whether the hub holds a fresh report of the cluster: a witness window closes only once one was seen (witnesswindows.ts). */
  reportFresh: (cluster: string) => boolean;
  logger: Logger;
  clock?: Clock;
}

/**
 * How long a cluster keeps its spoke configuration after its last work of ours left: a copy the work agent left
 * behind is seen by the report that comes back after that (Removing, then Lingering: core/spoke/spoketruth.ts).
 */
export const WITNESS_AFTER_WORKS_MS = 2 * LINGER_GRACE_MS;
/** How often a cluster whose window waits on a fresh report is looked at again. */
const STALE_LOOK_MS = 5_000;

export class SpokeConfigSyncer {
  /** Each cluster's window as a witness after its last work of ours (not counting the spoke configuration). */
  private readonly witnesses = new WitnessWindows(WITNESS_AFTER_WORKS_MS);
  private readonly clock: Clock;

  constructor(private readonly deps: SpokeConfigSyncerDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  async reconcile(): Promise<ReconcileResult> {
    const kinds = this.deps.configs.kindsToWatch().map((k) => k.gvr);
    const controller = controllerLabelValue(this.deps.controllerName);
    const desired: ManifestWork[] = this.clusters().flatMap((cluster) => [
      buildSpokeConfigWork({ cluster, kinds, configMap: this.deps.configMap, controller }),
      buildSpokeHeartbeatWork({ cluster, configMap: this.deps.configMap, controller }),
    ]);
    const observed = this.deps.works.store.list().filter(isSpokeConfigWork);
    const owned = this.deps.classes.store.list().filter((c) => ownsClass(c, this.deps.controllerName)).map((c) => c.metadata.name);
    const plan = this.deps.applier.plan(desired, observed);
    // Without a configuration for every owned class the set of clusters is not known: delete nothing.
    // (The spoke configuration only tells the agent what to watch; it never carries enforcement.)
    const known = this.deps.works.synced && this.deps.configs.completeFor(owned) && this.fleetKnown();
    const now = Date.now();
    const health = (key: string) => clusterHealth(this.deps.managedClusters.store.get(key.slice(0, key.indexOf('/'))), now);
    const deletions = known ? plan.delete.filter((key) => health(key).state !== 'unavailable') : [];
    if (plan.delete.length > deletions.length) {
      const why = !this.deps.works.synced ? 'the works cache has not synced' : !this.deps.configs.completeFor(owned) ? 'the params of an owned GatewayClass are not known' : !known ? this.fleetDoubt() : 'OCM does not vouch for the cluster';
      this.deps.logger.debug({ works: plan.delete.filter((k) => !deletions.includes(k)), why }, 'spoke configuration kept where no Gateway is placed');
    }
    await this.deps.applier.execute(SPOKE_CONFIG_KEY, { ...plan, delete: deletions }, this.deps.logger.child({ kinds: kinds.length }));
    // A cluster just back keeps its configuration for the recovery grace; no event marks its end.
    const rechecks = plan.delete.flatMap((key) => {
      const h = health(key);
      return h.state === 'unavailable' && h.recheckAt !== undefined ? [h.recheckAt] : [];
    });
    const witness = this.witnessEnds();
    const waits = [...rechecks.map((at) => at - now), ...(witness === undefined ? [] : [witness])];
    return waits.length > 0 ? { requeueAfterMs: Math.max(1, Math.min(...waits)) } : undefined;
  }

  /**
   * Every Gateway's class exists and the Placement of every Gateway of an owned class is settled: a cluster absent
   * from all is gone. Another controller's Gateways place none of our copies: their Placements are no doubt of ours (a
   * hub shared with a controller whose Placement decides a cluster it may not would keep every spoke configuration).
   * A Gateway whose class is absent may be ours (the class being re-created): that is doubt.
   */
  private fleetKnown(): boolean {
    return this.fleetDoubt() === undefined;
  }

  /** What keeps the set of placed clusters from being known (fleetKnown), in words; undefined when nothing does. */
  private fleetDoubt(): string | undefined {
    if (!this.deps.gateways.synced || !this.deps.placed.synced) return 'the Gateway or placement caches have not synced';
    for (const gateway of this.deps.gateways.store.list()) {
      const [className] = gatewayClassOf(gateway);
      const name = `Gateway ${gateway.metadata.namespace ?? ''}/${gateway.metadata.name}`;
      const cls = className === undefined ? undefined : this.deps.classes.store.get(className);
      if (className !== undefined && cls === undefined) return `${name} names GatewayClass ${className}, which does not exist`;
      if (!ownsClass(cls, this.deps.controllerName)) continue;
      const state = this.deps.placed.state(gateway);
      if (state.state !== 'settled') return `${name}: ${state.message}`;
    }
    return undefined;
  }

  /**
   * Clusters where some Gateway of an owned class with a configuration in force is placed — and those that may
   * still run a copy the sync placed: a work of ours is there (a copy on its way out, a mending work), one was less
   * than WITNESS_AFTER_WORKS_MS ago (this process's memory, witnesswindows.ts), or a copy is seen lingering there. The report is the
   * only witness of a copy left behind on a cluster the policies left (core/spoke/spoketruth.ts).
   */
  private clusters(): string[] {
    const clusters = new Set<string>();
    for (const gateway of this.deps.gateways.store.list()) {
      const [className] = gatewayClassOf(gateway);
      if (!className || !this.deps.configs.get(className)) continue;
      for (const c of this.deps.placed.clusters(gateway)) clusters.add(c);
    }
    const now = this.clock.now();
    const configured = new Set<string>();
    for (const work of this.deps.works.store.list()) {
      const cluster = work.metadata.namespace ?? '';
      if (isSpokeConfigWork(work)) configured.add(cluster);
      else {
        clusters.add(cluster);
        this.witnesses.worked(cluster, now);
      }
    }
    for (const cluster of configured) {
      if (clusters.has(cluster)) continue;
      if (this.witnesses.witnessing(cluster, now, this.deps.reportFresh(cluster)) || this.deps.lingering?.watches(cluster)) clusters.add(cluster);
    }
    this.witnesses.retain(configured);
    clusters.delete('');
    return [...clusters].sort();
  }

  /** Ms until the first cluster kept only as a witness stops being one; undefined when none is. */
  private witnessEnds(): number | undefined {
    return this.witnesses.endsIn(this.clock.now(), STALE_LOOK_MS);
  }
}
