// The hub's caches: one informer per resource the decisions read, each with its indexes and what it keeps
// of an object (core/works/cacheview.ts), and the policy kinds' informers, which come and go with the
// configuration. Read-only lookups over them serve the routes (routes.ts) and the reconcilers; nothing
// here decides or writes.
import type { Logger } from 'pino';
import { cachedObject, workCacheView } from '../core/works/cacheview.ts';
import { clustersFromDecisions } from '../core/fleet/placement.ts';
import type { GroupResource, GroupVersionResource } from '../core/k8s/gvr.ts';
import { namespacedKey, objectKey, type KubeObject } from '../core/k8s/objects.ts';
import { CONTROLLER_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE, MEND_LABEL, SOURCE_LABEL } from '../core/metadatakeys.ts';
import { ownedConditionTypes, ownedConditionsEntry } from '../core/status/gatewaystatus.ts';
import { possibleRivals } from '../core/targets/rivals.ts';
import { controllerLabelValue } from '../core/works/manifestwork.ts';
import { BUNDLE_LABEL, copiesOf, isBundle, namespaceHash, preferredCopy, sameCopy } from '../core/works/bundle.ts';
import { DerivedStore } from '../kube/derivedstore.ts';
import { DynamicInformers } from '../kube/dynamicinformers.ts';
import type { KubeHttp } from '../kube/http.ts';
import { Informer } from '../kube/informer.ts';
import { RESOURCES, type ResourceRef } from '../kube/resource.ts';
import { FIELD_MANAGER } from '../kube/writes.ts';
import type { StoreChange } from '../kube/store.ts';
import type { ClassConfigs } from './classconfigs.ts';
import { BY_BUNDLE, BY_CLASS, BY_CLUSTER, BY_GATEWAY, BY_MEND, BY_NAME, BY_NAMESPACE, BY_PLACEMENT, BY_SOURCE, BY_VARIANT_TARGET, gatewayClassOf, variantTarget, gatewayTemplates, placementOfDecision, placementOfGateway, targetedGateways } from './indexes.ts';
import { GatewayPlacements } from './placements.ts';
import type { HubLookups, KindedPolicy } from './routes.ts';

export type PolicyChangeHandler = (gvr: GroupVersionResource, change: StoreChange<KubeObject>) => void;

export class HubCaches implements HubLookups {
  readonly classes: Informer;
  readonly gateways: Informer;
  readonly decisions: Informer;
  readonly placements: Informer;
  readonly managedClusters: Informer;
  readonly clusterSets: Informer;
  readonly bindings: Informer;
  /** Our ManifestWorks only (by the managed-by and controller labels), kept as workCacheView shares them: bundles and works of their own. */
  readonly workObjects: Informer;
  /**
   * The copy works, one per copy whatever carries it (core/works/bundle.ts copiesOf: a bundle's copies, a work of
   * its own as itself; a copy carried twice while it moves, as preferredCopy picks): what every reader of works
   * reads. Keyed `cluster/copy work name`, as a work of its own is.
   */
  readonly works: DerivedStore;
  /** The PolicyVariants, indexed by the policy they target. */
  readonly variants: Informer;
  /** The policy kinds in force, one informer each. */
  readonly policies: DynamicInformers;
  /** Where each Gateway is placed, read from the OCM caches above. */
  readonly placed: GatewayPlacements;
  private readonly policyHandlers: PolicyChangeHandler[] = [];
  private readonly syncedHandlers: Array<(gvr: GroupVersionResource) => void> = [];

  constructor(
    http: KubeHttp,
    private readonly configs: ClassConfigs,
    o: { controllerName: string; trustDecisionLabels: boolean; logger: Logger },
  ) {
    const informer = (name: string, resource: ResourceRef, labelSelector?: string, transform = cachedObject): Informer =>
      new Informer(http, resource, { logger: o.logger.child({ informer: name }), labelSelector, transform });
    this.classes = informer('gatewayclasses', RESOURCES.gatewayClasses);
    this.gateways = informer('gateways', RESOURCES.gateways, undefined, gatewayCacheView);
    this.decisions = informer('placementdecisions', RESOURCES.placementDecisions);
    this.placements = informer('placements', RESOURCES.placements);
    this.managedClusters = informer('managedclusters', RESOURCES.managedClusters);
    this.clusterSets = informer('managedclustersets', RESOURCES.managedClusterSets);
    this.bindings = informer('managedclustersetbindings', RESOURCES.managedClusterSetBindings);
    // One table for the stored works and the copies unpacked from bundles: the copies of one policy on every
    // cluster share its manifest, labels, annotations and config, and every copy its condition names.
    const workView = workCacheView();
    this.workObjects = informer('manifestworks', RESOURCES.manifestWorks, `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE},${CONTROLLER_LABEL}=${controllerLabelValue(o.controllerName)}`, workView);
    this.workObjects.store.addIndex(BY_MEND, (w) => {
      const source = w.metadata.labels?.[MEND_LABEL];
      return source === undefined ? [] : [source];
    });
    this.workObjects.store.addIndex(BY_BUNDLE, (w) => {
      const namespaceHash = w.metadata.labels?.[BUNDLE_LABEL];
      return namespaceHash && isBundle(w) ? [`${w.metadata.namespace ?? ''}/${namespaceHash}`] : [];
    });
    this.works = new DerivedStore(this.workObjects, { derive: (work) => copiesOf(work, workView), choose: preferredCopy, same: sameCopy });

    this.variants = informer('policyvariants', RESOURCES.policyVariants);
    this.variants.store.addIndex(BY_VARIANT_TARGET, variantTarget);
    this.bindings.store.addIndex(BY_NAMESPACE, (b) => [b.metadata.namespace ?? '']);
    this.gateways.store.addIndex(BY_PLACEMENT, placementOfGateway).addIndex(BY_NAME, (g) => [g.metadata.name]).addIndex(BY_CLASS, gatewayClassOf);
    this.decisions.store.addIndex(BY_PLACEMENT, placementOfDecision);
    this.works.store.addIndex(BY_SOURCE, (w) => {
      const source = w.metadata.labels?.[SOURCE_LABEL];
      return source ? [source] : [];
    });
    this.works.store.addIndex(BY_CLUSTER, (w) => [w.metadata.namespace ?? '']);

    this.policies = new DynamicInformers(http, {
      onChange: (gvr, change) => this.policyHandlers.forEach((h) => h(gvr, change)),
      onSynced: (gvr) => this.syncedHandlers.forEach((h) => h(gvr)),
      configure: (i) =>
        i.store
          .addIndex(BY_GATEWAY, targetedGateways)
          .addIndex(BY_NAME, (p) => [p.metadata.name])
          .addIndex(BY_NAMESPACE, (p) => [p.metadata.namespace ?? '']),
      transform: cachedObject,
      logger: o.logger,
    });
    this.placed = new GatewayPlacements(
      { decisions: this.decisions, placements: this.placements, managedClusters: this.managedClusters, clusterSets: this.clusterSets, bindings: this.bindings },
      o.trustDecisionLabels,
    );
  }

  /** A policy of a watched kind changed. */
  onPolicyChange(handler: PolicyChangeHandler): void {
    this.policyHandlers.push(handler);
  }

  /** A newly started policy kind's informer delivered its first list. */
  onKindSynced(handler: (gvr: GroupVersionResource) => void): void {
    this.syncedHandlers.push(handler);
  }

  /** The informers every decision reads; the policy kinds' informers come and go with the configuration. */
  fixed(): Informer[] {
    return [this.classes, this.gateways, this.decisions, this.placements, this.managedClusters, this.clusterSets, this.bindings, this.workObjects, this.variants];
  }

  async start(): Promise<void> {
    for (const i of this.fixed()) i.start();
    await Promise.all(this.fixed().map((i) => i.waitForSync()));
  }

  get synced(): boolean {
    return this.fixed().every((i) => i.synced) && this.policies.allSynced;
  }

  async stop(): Promise<void> {
    await Promise.all(this.fixed().map((i) => i.stop()));
    await this.policies.stop();
  }

  // HubLookups: what the routes read.

  anyVariants(): boolean {
    return this.variants.store.list().length > 0;
  }

  watchedKinds(): GroupVersionResource[] {
    return this.policies.kinds().map((k) => k.gvr);
  }

  policiesOfKind(gr: GroupResource): readonly KubeObject[] {
    return this.policies.informer(gr)?.store.list() ?? [];
  }

  policiesInNamespace(gr: GroupResource, namespace: string): readonly KubeObject[] {
    return this.policies.informer(gr)?.store.byIndex(BY_NAMESPACE, namespace) ?? [];
  }

  /** Undefined when the kind is not watched. */
  kindSynced(gr: GroupResource): boolean | undefined {
    return this.policies.informer(gr)?.synced;
  }

  policyCached(gr: GroupResource, namespace: string, name: string): boolean {
    return this.policies.informer(gr)?.store.get(namespacedKey(namespace, name)) !== undefined;
  }

  policiesTargeting(gateway: KubeObject): KindedPolicy[] {
    const key = objectKey(gateway);
    return this.watchedKinds().flatMap((gvr) => (this.policies.informer(gvr)?.store.byIndex(BY_GATEWAY, key) ?? []).map((policy) => ({ gr: gvr, policy })));
  }

  rivalsOf(gr: GroupResource, policy: KubeObject): readonly KubeObject[] {
    return possibleRivals(policy, this.policies.informer(gr)?.store.byIndex(BY_NAME, policy.metadata.name) ?? [], gatewayTemplates(this.gateways, this.configs));
  }

  allGateways(): readonly KubeObject[] {
    return this.gateways.store.list();
  }

  sameNamedGateways(name: string): readonly KubeObject[] {
    return this.gateways.store.byIndex(BY_NAME, name);
  }

  gatewaysOfClass(className: string): readonly KubeObject[] {
    return this.gateways.store.byIndex(BY_CLASS, className);
  }

  gatewaysOfPlacement(placementKey: string): readonly KubeObject[] {
    return this.gateways.store.byIndex(BY_PLACEMENT, placementKey);
  }

  /** The clusters among the labelled decisions of the Gateway's Placement (counted or not). */
  clustersDecidedFor(gateway: KubeObject): string[] {
    return placementOfGateway(gateway).flatMap((p) => clustersFromDecisions(this.decisions.store.byIndex(BY_PLACEMENT, p)));
  }

  /** This controller's bundles of one cluster and downstream namespace (whole, entries readable or not). */
  bundles(cluster: string, namespace: string): readonly KubeObject[] {
    return this.workObjects.store.byIndex(BY_BUNDLE, `${cluster}/${namespaceHash(namespace)}`);
  }

  worksOnCluster(cluster: string): readonly KubeObject[] {
    return this.works.store.byIndex(BY_CLUSTER, cluster);
  }

  allWorks(): readonly KubeObject[] {
    return this.works.store.list();
  }

  downstreamTemplates(): string[] {
    return [...this.configs.downstreamTemplates()];
  }
}

/**
 * A Gateway as cached: cachedObject, keeping of its managed fields only which condition types our own
 * status applies own (core/status/gatewaystatus.ts): those are ours to remove when no longer wanted.
 */
function gatewayCacheView<T extends KubeObject>(gateway: T): T {
  const slim = cachedObject(gateway);
  const owned = ownedConditionTypes(gateway.metadata.managedFields, FIELD_MANAGER);
  return owned.size === 0 ? slim : { ...slim, metadata: { ...slim.metadata, managedFields: [ownedConditionsEntry(FIELD_MANAGER, owned)] } };
}
