// OCM placement: which clusters a hub Gateway is placed on (MGC convention, DESIGN §2.3), and whether
// those decisions can be taken as a decision (a cluster absent from them may go) or are in flux.
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

export type PlacementState =
  /** The decisions are what the Placement selected: a cluster absent from them was deselected. */
  | { state: 'settled' }
  /** The Placement is absent or its decisions are being rewritten: a cluster absent from them may come back. */
  | { state: 'unsettled'; reason: 'PlacementAbsent' | 'DecisionsUpdating'; message: string };

/**
 * Whether the decisions of Placement `name` can be taken as a decision. `placement` is the cached Placement
 * (undefined: none), `decisions` the cached PlacementDecisions labelled for it.
 *  - The Placement exists: its status says how many clusters it selected and which PlacementDecisions hold
 *    them (decision groups); settled when the decisions hold exactly that many and every one it names is
 *    cached. OCM writes the decisions before the status: while it moves clusters between decisions or
 *    re-creates them, the two disagree.
 *  - It does not: decisions it owned (owner reference to a Placement) outlive it only while the garbage
 *    collector or a GitOps tool replaces it, so unsettled; decisions with no Placement owner were written by
 *    another tool on their own and are taken as they are; no decisions at all is unsettled (nothing says
 *    the Placement is gone for good rather than being re-created).
 */
export function placementState(name: string, placement: KubeObject | undefined, decisions: readonly KubeObject[]): PlacementState {
  if (!placement) {
    const standalone = decisions.length > 0 && decisions.every((d) => !ownedByPlacement(d));
    if (standalone) return { state: 'settled' };
    return { state: 'unsettled', reason: 'PlacementAbsent', message: `Placement ${name} does not exist (deleted, or being re-created)` };
  }
  if (placement.metadata.deletionTimestamp) {
    return { state: 'unsettled', reason: 'PlacementAbsent', message: `Placement ${name} is being deleted` };
  }
  const status = placement.status as { numberOfSelectedClusters?: unknown; decisionGroups?: unknown } | undefined;
  const selected = status?.numberOfSelectedClusters;
  // Just created (or re-created): the placement controller has not decided anything yet.
  if (typeof selected !== 'number') return { state: 'unsettled', reason: 'DecisionsUpdating', message: `Placement ${name} has not decided yet` };
  const held = clustersFromDecisions(decisions).length;
  if (selected !== held) {
    return { state: 'unsettled', reason: 'DecisionsUpdating', message: `Placement ${name} selected ${selected} clusters, its PlacementDecisions hold ${held}` };
  }
  const cached = new Set(decisions.map((d) => d.metadata.name));
  const named = (Array.isArray(status?.decisionGroups) ? (status.decisionGroups as { decisions?: unknown }[]) : []).flatMap((g) =>
    Array.isArray(g?.decisions) ? (g.decisions as unknown[]).filter((d): d is string => typeof d === 'string') : [],
  );
  const missing = named.filter((d) => !cached.has(d)).sort();
  if (missing.length > 0) {
    return { state: 'unsettled', reason: 'DecisionsUpdating', message: `Placement ${name} names PlacementDecisions not seen yet: ${missing.join(', ')}` };
  }
  return { state: 'settled' };
}

function ownedByPlacement(decision: KubeObject): boolean {
  return (decision.metadata.ownerReferences ?? []).some((r) => (r as { kind?: unknown } | null)?.kind === 'Placement');
}
