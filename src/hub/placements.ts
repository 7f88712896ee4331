// Where each hub Gateway is placed, read from the OCM caches (docs/design/configuration.md#placement, #tenant-lanes): the clusters of its
// Placement's decisions that count (core/placement.ts placedClusters), what was refused and why, and whether
// the decisions are settled. One reader for the policy reconciler and the spoke-configuration syncer.
import { boundSets, clustersBoundTo } from '../core/fleet/clustersets.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { placedClusters, type PlacedClusters, type PlacementState } from '../core/fleet/placement.ts';
import type { Informer } from '../kube/informer.ts';
import { BY_NAMESPACE, BY_PLACEMENT, placementOfGateway } from './indexes.ts';

export interface PlacementCaches {
  decisions: Informer;
  placements: Informer;
  managedClusters: Informer;
  clusterSets: Informer;
  /** ManagedClusterSetBindings, indexed BY_NAMESPACE. */
  bindings: Informer;
}

export class GatewayPlacements {
  constructor(
    private readonly caches: PlacementCaches,
    private readonly trustDecisionLabels: boolean,
  ) {}

  /** Every cache this reads has synced. */
  get synced(): boolean {
    return [this.caches.decisions, this.caches.placements, this.caches.managedClusters, this.caches.clusterSets, this.caches.bindings].every((i) => i.synced);
  }

  /** The Gateway's placement: nothing when it names no Placement. */
  of(gateway: KubeObject): PlacedClusters {
    const [key] = placementOfGateway(gateway);
    if (key === undefined) return { clusters: [], refused: [], state: { state: 'settled' } };
    const namespace = gateway.metadata.namespace ?? '';
    return placedClusters({
      placementKey: key,
      placement: this.caches.placements.store.get(key),
      decisions: this.caches.decisions.store.byIndex(BY_PLACEMENT, key),
      trustDecisionLabels: this.trustDecisionLabels,
      bind: (clusters) =>
        clustersBoundTo(
          namespace,
          clusters,
          boundSets(this.caches.bindings.store.byIndex(BY_NAMESPACE, namespace)),
          (name) => this.caches.managedClusters.store.get(name),
          (name) => this.caches.clusterSets.store.get(name),
        ),
    });
  }

  clusters(gateway: KubeObject): string[] {
    return this.of(gateway).clusters;
  }

  state(gateway: KubeObject): PlacementState {
    return this.of(gateway).state;
  }
}
