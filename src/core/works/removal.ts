// The one deletion rule (docs/design/deletion.md#never-delete-on-doubt): whether the ManifestWorks of a hub policy that are no longer desired
// may be deleted. Deleting a work deletes the policy on the spoke (for an AuthPolicy: authentication
// switched off there), so a work goes only when the controller *knows* it is unwanted:
//   - PolicyDeleted: the policy is gone from a synced cache, confirmed by a live read, and its CRD is the
//     same live CRD the work was written under (a CRD deleted or re-created takes every policy of the
//     kind with it: that is an accident on the hub, not a user deleting policies);
//   - NoLongerTargeted: the policy exists and, from synced caches and configurations that are known for
//     every GatewayClass of the Gateways it targets, no longer needs a copy on that cluster — and the
//     cluster's absence is a decision: OCM vouches for the cluster (or its ManagedCluster is deleted) and
//     the Placements of the Gateways it targets are settled (not being deleted, re-created or rewritten);
//   - KindRemoved: an admin removed the kind from params that are valid and in force for every owned class,
//     and no Gateway its works were for names a GatewayClass that is absent (a class deleted and re-created, as `kubectl
//     replace --force` or a GitOps prune does, takes its kinds with it only for a moment);
//   - LocallyOverridden: the policy still wants a copy there, but the spoke agent's fresh report shows local
//     policies covering every target of that copy (and the policy does not use GEP-713 overrides): the local
//     policies are what is enforced there (docs/design/tenancy.md#local-policies-win). Decided on the same terms as NoLongerTargeted; the
//     reconciler asks only for works whose cluster such a report covers.
// Everything else — a cache not synced, a class whose params are missing or invalid since start-up, a class
// that a Gateway names but that does not exist, a kind listed but not (yet) validated, a CRD absent or
// terminating, a cluster OCM cannot vouch for, a Placement in flux — keeps the works. Pure: the reconciler
// gathers the inputs and does the reads and writes.
import type { ClusterHealth } from '../fleet/clusterhealth.ts';
import type { PlacementState } from '../fleet/placement.ts';

/** What this process knows of one owned GatewayClass's configuration. */
export interface ClassKnowledge {
  /**
   * `inForce`: the params as last read are valid; `lastKnownGood`: they are not, the last valid ones stay
   * in force; `unknown`: never valid since this process started (missing, invalid, unreadable).
   */
  state: 'inForce' | 'lastKnownGood' | 'unknown';
  /** `resource.group` of every kind the configuration in force lists, validated or not. */
  listed: ReadonlySet<string>;
  /** `resource.group` of the kinds validated and synced (a subset of `listed`). */
  synced: ReadonlySet<string>;
}

/** The live state of a policy's CRD compared with the one its works were written under. */
export type CrdState = 'live' | 'absent' | 'terminating' | 'replaced' | 'unreadable' | 'builtin';

export interface RemovalInput {
  /** `resource.group` of the policy's kind. */
  groupResource: string;
  caches: { works: boolean; classes: boolean; gateways: boolean; decisions: boolean; clusters: boolean; placements: boolean };
  /** Every owned GatewayClass (as the synced class cache lists them), by name. */
  classes: ReadonlyMap<string, ClassKnowledge>;
  /**
   * GatewayClasses that the policy's Gateways (or, for a kind no longer watched, the Gateways its works were
   * for) name but the class cache does not hold (deleted, perhaps to be created again): whether they were
   * ours, and what they listed, is unknown.
   */
  absentClasses: ReadonlySet<string>;
  /** The kind's policy watch; undefined when the kind is not watched. */
  watch?: { synced: boolean };
  /**
   * The policy as cached (read only when the watch is synced): undefined when absent. `targetClasses`
   * names the GatewayClass of every Gateway it targets that the Gateway cache holds.
   */
  policy?: { deleting: boolean; targetClasses: readonly string[]; locallyOverridden?: boolean };
  /**
   * The cluster of the works in question, for a policy that no longer wants a copy there: what OCM says
   * of it, and whether the Placements of the Gateways the policy targets are settled.
   */
  cluster?: { health: ClusterHealth; placements: PlacementState };
  /** Live reads confirming a deletion; undefined until the reconciler has made them. */
  confirmation?: { policyExists: boolean; crd: CrdState };
}

export type RemovalReason = 'PolicyDeleted' | 'NoLongerTargeted' | 'KindRemoved' | 'LocallyOverridden';

export type KeepReason =
  | 'CachesNotSynced'
  | 'KindWatchNotSynced'
  | 'ClassConfigurationUnknown'
  | 'KindNotValidated'
  | 'PolicyExists'
  | 'CrdNotLive'
  | 'CrdReplaced'
  | 'ClassAbsent'
  | 'ClusterUnavailable'
  | 'PlacementUnsettled';

export type RemovalDecision =
  | { action: 'delete'; reason: RemovalReason }
  /** Read the policy and its CRD from the apiserver, then decide again with `confirmation`. */
  | { action: 'confirm' }
  | { action: 'keep'; reason: KeepReason; message: string };

function keep(reason: KeepReason, message: string): RemovalDecision {
  return { action: 'keep', reason, message };
}

export function decideRemoval(input: RemovalInput): RemovalDecision {
  const { caches, groupResource: kind } = input;
  if (!caches.works || !caches.classes) return keep('CachesNotSynced', 'the ManifestWork and GatewayClass caches have not synced');
  const classes = [...input.classes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

  const absent = [...input.absentClasses].sort();
  if (!input.watch) {
    if (absent.length > 0) return keep('ClassAbsent', `GatewayClass ${absent.join(', ')} is named by a Gateway but does not exist: whether ${kind} is still wanted is unknown`);
    const notInForce = classes.filter(([, c]) => c.state !== 'inForce').map(([name]) => name);
    if (notInForce.length > 0) {
      return keep('ClassConfigurationUnknown', `the params of GatewayClass ${notInForce.join(', ')} are not valid: whether ${kind} is still wanted is unknown`);
    }
    const listing = classes.filter(([, c]) => c.listed.has(kind)).map(([name]) => name);
    if (listing.length > 0) return keep('KindNotValidated', `${kind} is listed by GatewayClass ${listing.join(', ')} but not validated yet`);
    return { action: 'delete', reason: 'KindRemoved' };
  }
  if (!input.watch.synced) return keep('KindWatchNotSynced', `the watch of ${kind} has not synced`);

  const policy = input.policy;
  if (!policy || policy.deleting) {
    const c = input.confirmation;
    if (!c) return { action: 'confirm' };
    if (c.policyExists) return keep('PolicyExists', 'the policy still exists on the apiserver (the cache lags)');
    switch (c.crd) {
      case 'absent':
      case 'terminating':
      case 'unreadable':
        return keep('CrdNotLive', `the CRD of ${kind} is ${c.crd}: its policies went with it, not by a user's delete`);
      case 'replaced':
        return keep('CrdReplaced', `the CRD of ${kind} was re-created since the work was written: its policies went with the old one`);
      case 'live':
      case 'builtin':
        return { action: 'delete', reason: 'PolicyDeleted' };
    }
  }

  if (!caches.gateways || !caches.decisions || !caches.clusters || !caches.placements) {
    return keep('CachesNotSynced', 'the Gateway, PlacementDecision, Placement and ManagedCluster caches have not synced');
  }
  const targeted = new Set(policy.targetClasses);
  const absentTargeted = absent.filter((name) => targeted.has(name));
  if (absentTargeted.length > 0) return keep('ClassAbsent', `GatewayClass ${absentTargeted.join(', ')} of a targeted Gateway does not exist: whether it is still ours is unknown`);
  const unknown = classes.filter(([name, c]) => targeted.has(name) && c.state === 'unknown').map(([name]) => name);
  if (unknown.length > 0) return keep('ClassConfigurationUnknown', `the params of GatewayClass ${unknown.join(', ')} have not been valid since start-up`);
  const unvalidated = classes.filter(([name, c]) => targeted.has(name) && c.listed.has(kind) && !c.synced.has(kind)).map(([name]) => name);
  if (unvalidated.length > 0) return keep('KindNotValidated', `${kind} is listed by GatewayClass ${unvalidated.join(', ')} but not validated yet`);
  if (policy.locallyOverridden) return { action: 'delete', reason: 'LocallyOverridden' };
  const cluster = input.cluster;
  if (!cluster) return keep('ClusterUnavailable', 'what OCM says of the cluster was not looked at');
  if (cluster.health.state === 'unavailable') return keep('ClusterUnavailable', cluster.health.message);
  if (cluster.placements.state === 'unsettled') return keep('PlacementUnsettled', cluster.placements.message);
  return { action: 'delete', reason: 'NoLongerTargeted' };
}
