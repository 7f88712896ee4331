// OCM placement: which clusters a hub Gateway is placed on (MGC convention, DESIGN §2.3).
import type { KubeObject } from './objects.ts';

/** Gateway label naming its Placement; PlacementDecisions carry the same label. */
export const PLACEMENT_LABEL = 'cluster.open-cluster-management.io/placement';

/** The union of `status.decisions[].clusterName` over the decisions, sorted, without empty or repeated names. */
export function clustersFromDecisions(decisions: readonly KubeObject[]): string[] {
  const clusters = new Set<string>();
  for (const decision of decisions) {
    const status = decision.status as { decisions?: unknown } | undefined;
    if (!Array.isArray(status?.decisions)) continue;
    for (const entry of status.decisions as unknown[]) {
      const clusterName = (entry as { clusterName?: unknown } | null)?.clusterName;
      if (typeof clusterName === 'string' && clusterName !== '') clusters.add(clusterName);
    }
  }
  return [...clusters].sort();
}
