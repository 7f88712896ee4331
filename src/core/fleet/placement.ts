// OCM placement: which clusters a hub Gateway is placed on (MGC convention, docs/design/configuration.md#placement), and whether
// those decisions can be taken as a decision (a cluster absent from them may go) or are in flux.
import type { KubeObject } from '../k8s/objects.ts';

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
  | { state: 'unsettled'; reason: 'PlacementAbsent' | 'DecisionsUpdating' | 'ClustersRefused'; message: string };

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

/** The PlacementDecisions the Placement owns (owner reference to it, by uid): OCM's own, not a forgery. */
export function ownedDecisions(placement: KubeObject | undefined, decisions: readonly KubeObject[]): KubeObject[] {
  if (!placement?.metadata.uid) return [];
  return decisions.filter((d) =>
    (d.metadata.ownerReferences ?? []).some((r) => {
      const ref = r as { kind?: unknown; name?: unknown; uid?: unknown } | null;
      return ref?.kind === 'Placement' && ref.name === placement.metadata.name && ref.uid === placement.metadata.uid;
    }),
  );
}

/** The clusters a Gateway's Placement places it on, what was refused, and whether its decisions are settled. */
export interface PlacedClusters {
  clusters: string[];
  /** Decided clusters, or PlacementDecisions, that do not count, with why. */
  refused: { cluster?: string; message: string }[];
  state: PlacementState;
}

export interface PlacementInput {
  /** `namespace/name` of the Placement; its namespace is the Gateway's. */
  placementKey: string;
  placement: KubeObject | undefined;
  /** The PlacementDecisions labelled for it. */
  decisions: readonly KubeObject[];
  /**
   * Take decisions by their label alone, as MGC did (decisions written by a tool of one's own, no tenants);
   * otherwise (the default) only decisions owned by the Placement, and only clusters of ManagedClusterSets
   * bound to the namespace, count (clustersets.ts).
   */
  trustDecisionLabels: boolean;
  /** Only when the labels are not trusted: the clusters the namespace may place on. */
  bind?: (clusters: readonly string[]) => { allowed: string[]; refused: { cluster: string; message: string }[] };
}

export function placedClusters(input: PlacementInput): PlacedClusters {
  const { placementKey, placement, decisions } = input;
  if (input.trustDecisionLabels || !input.bind) {
    return { clusters: clustersFromDecisions(decisions), refused: [], state: placementState(placementKey, placement, decisions) };
  }
  const owned = ownedDecisions(placement, decisions);
  const ownedNames = new Set(owned.map((d) => d.metadata.name));
  const forged = decisions
    .filter((d) => !ownedNames.has(d.metadata.name))
    .map((d) => ({ message: `PlacementDecision ${d.metadata.namespace}/${d.metadata.name} is not owned by Placement ${placementKey}: its decisions do not count` }));
  const { allowed, refused } = input.bind(clustersFromDecisions(owned));
  // A cluster OCM decides but the bindings, as cached here, do not allow: no new copy goes there, and what
  // runs there stays — OCM and this cache disagree (a set or binding being replaced), which is doubt, not a
  // deselection. Once OCM agrees, the cluster leaves the decisions and the Placement settles.
  const state: PlacementState =
    refused.length > 0
      ? { state: 'unsettled', reason: 'ClustersRefused', message: `Placement ${placementKey} decides clusters its namespace is not bound to: ${refused.map((r) => r.cluster).join(', ')}` }
      : placementState(placementKey, placement, owned);
  return { clusters: allowed, refused: [...forged, ...refused], state };
}
