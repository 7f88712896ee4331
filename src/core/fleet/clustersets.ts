// Which clusters a namespace may place on (docs/design/tenancy.md#tenant-lanes), as OCM's placement controller decides
// it: the clusters of the ManagedClusterSets bound to that namespace by a ManagedClusterSetBinding (condition
// Bound=True). A PlacementDecision is only a status that anyone allowed to write one in the namespace can
// forge; checking its clusters against the bindings keeps a tenant from choosing clusters outside its sets.
// Mirrors open-cluster-management.io/sdk-go BuildClusterSelector. Pure.
import { selectorMatches, type LabelSelector } from '../k8s/labelselector.ts';
import type { KubeObject } from '../k8s/objects.ts';

/** The label of ExclusiveClusterSetLabel sets: a cluster belongs to the set it names. */
export const CLUSTER_SET_LABEL = 'cluster.open-cluster-management.io/clusterset';

/** Whether a ManagedClusterSet selects a ManagedCluster (ExclusiveClusterSetLabel, the default, or LabelSelector). */
export function setSelects(clusterSet: KubeObject, cluster: KubeObject): boolean {
  const selector = (clusterSet.spec as { clusterSelector?: { selectorType?: string; labelSelector?: LabelSelector } } | undefined)?.clusterSelector;
  const labels = cluster.metadata.labels ?? {};
  switch (selector?.selectorType ?? 'ExclusiveClusterSetLabel') {
    case 'ExclusiveClusterSetLabel':
      return labels[CLUSTER_SET_LABEL] === clusterSet.metadata.name;
    case 'LabelSelector':
      return selectorMatches(selector?.labelSelector ?? {}, labels);
    default:
      return false;
  }
}

/** The sets bound to a namespace: its ManagedClusterSetBindings with condition Bound=True, by set name. */
export function boundSets(bindings: readonly KubeObject[]): Set<string> {
  const names = new Set<string>();
  for (const b of bindings) {
    const set = (b.spec as { clusterSet?: unknown } | undefined)?.clusterSet;
    const conditions = (b.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions ?? [];
    if (typeof set === 'string' && conditions.some((c) => c.type === 'Bound' && c.status === 'True')) names.add(set);
  }
  return names;
}

export interface BoundClusters {
  allowed: string[];
  /** Decided clusters that are in no set bound to the namespace (or have no ManagedCluster), with why. */
  refused: { cluster: string; message: string }[];
}

/**
 * Splits decided clusters into those the namespace may place on and those it may not. `managedCluster`
 * and `clusterSet` look up the cached objects; `bound` is boundSets(the namespace's bindings).
 */
export function clustersBoundTo(
  namespace: string,
  clusters: readonly string[],
  bound: ReadonlySet<string>,
  managedCluster: (name: string) => KubeObject | undefined,
  clusterSet: (name: string) => KubeObject | undefined,
): BoundClusters {
  const allowed: string[] = [];
  const refused: BoundClusters['refused'] = [];
  const sets = [...bound].sort().flatMap((name) => clusterSet(name) ?? []);
  for (const cluster of clusters) {
    const mc = managedCluster(cluster);
    if (mc && sets.some((s) => setSelects(s, mc))) allowed.push(cluster);
    else {
      refused.push({
        cluster,
        message: mc
          ? `cluster ${cluster} is in no ManagedClusterSet bound to namespace ${namespace}${bound.size > 0 ? ` (bound: ${[...bound].sort().join(', ')})` : ''}`
          : `cluster ${cluster} has no ManagedCluster`,
      });
    }
  }
  return { allowed, refused };
}
