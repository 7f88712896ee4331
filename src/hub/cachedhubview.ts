// The hub controller's HubView (core/pipeline/hubview.ts): the decision pipeline's reads, answered from the
// informers' caches and what the class reconciler put in force. Reads only; the pipeline decides.
import { clusterHealth, type ClusterHealth } from '../core/fleet/clusterhealth.ts';
import type { PlacedClusters } from '../core/fleet/placement.ts';
import { groupResourceKey, type GroupResource } from '../core/k8s/gvr.ts';
import { namespacedKey, type KubeObject } from '../core/k8s/objects.ts';
import { ownsClass } from '../core/params/classparams.ts';
import type { PolicyKindConfig, SyncParams } from '../core/params/params.ts';
import { clusterClaimsOf, variantTargetKey, type HubView, type KindFacts } from '../core/pipeline/hubview.ts';
import type { ReportEvidence } from '../core/spoke/firstcopy.ts';
import type { DynamicInformers } from '../kube/dynamicinformers.ts';
import type { DerivedStore } from '../kube/derivedstore.ts';
import type { Informer } from '../kube/informer.ts';
import type { ClassConfigs } from './classconfigs.ts';
import { BY_CLUSTER, BY_NAME, BY_VARIANT_TARGET } from './indexes.ts';
import type { GatewayPlacements } from './placements.ts';
import type { SpokeReports } from './spokereports.ts';
import type { ReportedCopyOn } from '../core/spoke/spoketruth.ts';
import type { UngatedKinds } from './ungatedkinds.ts';
import type { RemovalInput } from '../core/works/removal.ts';

export interface CachedHubViewSources {
  /** The policy informers, each indexed BY_NAME. */
  watches: DynamicInformers;
  /** Hub Gateways, indexed BY_NAME. */
  gateways: Informer;
  /** GatewayClasses and PlacementDecisions: the deletion rule reads their sync, and which classes are ours. */
  classes: Informer;
  decisions: Informer;
  controllerName: string;
  placed: GatewayPlacements;
  managedClusters: Informer;
  /** Our ManifestWorks, indexed BY_CLUSTER. */
  works: DerivedStore;
  /** The PolicyVariants, indexed BY_VARIANT_TARGET. */
  variants: Informer;
  configs: ClassConfigs;
  /** The spoke agents' reports; undefined when no spoke configuration is placed (no-agent mode). */
  reports?: SpokeReports;
  /** The kinds a Progressive rollout cannot gate on, as the class reconciler found them. */
  ungatedKinds?: UngatedKinds;
}

/** No-agent mode: nothing reports (called per cluster of every policy: one object for all). */
const NO_REPORT: ReportEvidence = Object.freeze({ state: 'absent' });

export class CachedHubView implements HubView {
  readonly spokeAgents: boolean;

  constructor(private readonly sources: CachedHubViewSources) {
    this.spokeAgents = sources.reports !== undefined;
  }

  removalGrounds(gr: GroupResource, named: readonly string[]): Pick<RemovalInput, 'groupResource' | 'caches' | 'classes' | 'absentClasses' | 'watch'> {
    const { classes, controllerName } = this.sources;
    const owned = classes.store.list().filter((c) => ownsClass(c, controllerName)).map((c) => c.metadata.name);
    const informer = this.sources.watches.informer(gr);
    return {
      groupResource: groupResourceKey(gr),
      caches: {
        works: this.sources.works.synced,
        classes: classes.synced,
        gateways: this.sources.gateways.synced,
        decisions: this.sources.decisions.synced,
        clusters: this.sources.managedClusters.synced,
        placements: this.sources.placed.synced,
      },
      classes: this.sources.configs.knowledge(owned),
      absentClasses: new Set(named.filter((name) => classes.store.get(name) === undefined)),
      ...(informer ? { watch: { synced: informer.synced } } : {}),
    };
  }

  clusterHealth(cluster: string, now: number): ClusterHealth {
    return clusterHealth(this.sources.managedClusters.store.get(cluster), now);
  }

  gateway(namespace: string, name: string): KubeObject | undefined {
    return this.sources.gateways.store.get(namespacedKey(namespace, name));
  }

  gatewaysNamed(name: string): readonly KubeObject[] {
    return this.sources.gateways.store.byIndex(BY_NAME, name);
  }

  params(className: string): SyncParams | undefined {
    return this.sources.configs.get(className)?.params;
  }

  kindInForce(className: string, gr: GroupResource): PolicyKindConfig | undefined {
    return this.sources.configs.kind(className, gr)?.config;
  }

  placement(gateway: KubeObject): PlacedClusters {
    return this.sources.placed.of(gateway);
  }

  clusterLabels(cluster: string): Readonly<Record<string, string>> {
    return this.sources.managedClusters.store.get(cluster)?.metadata.labels ?? {};
  }

  clusterClaims(cluster: string): Readonly<Record<string, string>> {
    return clusterClaimsOf(this.sources.managedClusters.store.get(cluster));
  }

  variantsTargeting(namespace: string, group: string, kind: string, name: string): readonly KubeObject[] {
    return this.sources.variants.store.byIndex(BY_VARIANT_TARGET, namespacedKey(namespace, variantTargetKey(group, kind, name)));
  }

  worksOn(cluster: string): readonly KubeObject[] {
    return this.sources.works.store.byIndex(BY_CLUSTER, cluster);
  }

  policiesNamed(gr: GroupResource, name: string): readonly KubeObject[] {
    return this.sources.watches.informer(gr)?.store.byIndex(BY_NAME, name) ?? [];
  }

  evidence(cluster: string): ReportEvidence {
    return this.sources.reports?.evidence(cluster) ?? NO_REPORT;
  }

  reportedCopies(kind: string, source: string): readonly ReportedCopyOn[] {
    return this.sources.reports?.reportedCopies(kind, source) ?? [];
  }

  kind(gr: GroupResource): KindFacts {
    const crdUid = this.sources.configs.crdUid(gr);
    const schema = this.sources.configs.schema(gr);
    return { ...(crdUid === undefined ? {} : { crdUid }), statusSubresource: this.sources.configs.statusSubresource(gr), ...(schema === undefined ? {} : { schema }) };
  }

  ungatedKind(apiVersion: string | undefined, kind: string | undefined): string | undefined {
    return this.sources.ungatedKinds?.find(apiVersion, kind)?.name;
  }
}
