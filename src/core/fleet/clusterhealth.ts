// Whether OCM vouches for a cluster (docs/design/deletion.md#never-delete-on-doubt, "Unknown is not unwanted, for clusters too"): its ManagedCluster
// available and untainted. A cluster that leaves a Gateway's decisions while OCM cannot vouch for it (its
// registration agent stopped renewing its lease: tainted, and dropped by every Placement that does not
// tolerate the taint) keeps its works — a partition of a few minutes must not switch its policies off. Pure.
import { formatKubeTime, kubeTimeMillis } from '../k8s/kubetime.ts';
import type { KubeObject } from '../k8s/objects.ts';

/** Taints OCM's registration puts on a cluster whose agent stopped renewing its lease (effect NoSelect). */
export const UNREACHABLE_TAINT = 'cluster.open-cluster-management.io/unreachable';
export const UNAVAILABLE_TAINT = 'cluster.open-cluster-management.io/unavailable';
export const AVAILABLE_CONDITION = 'ManagedClusterConditionAvailable';

export type ClusterHealth =
  /** Available and untainted: a deselection of it is a decision. */
  | { state: 'healthy' }
  /** No ManagedCluster of that name (deleted, or never registered): its works may go. */
  | { state: 'absent' }
  /** The ManagedCluster is being deleted: its works may go. */
  | { state: 'deleting' }
  /**
   * OCM cannot vouch for it: what the Placement says of it now is not a decision. `recheckAt` (ms since
   * the epoch): when that ends with no event to say so (a cluster just back, see RECOVERY_GRACE_MS).
   */
  | { state: 'unavailable'; reason: string; message: string; since?: string; recheckAt?: number };

/**
 * How long a cluster that became available again still counts as in doubt. OCM lifts the taint before the
 * Placements take the cluster back (tens of ms apart on the real plane): read in between, a cluster back from
 * a partition would look healthy and deselected, and lose its works on its return.
 */
export const RECOVERY_GRACE_MS = 30_000;

interface Taint {
  key?: unknown;
  timeAdded?: unknown;
}

interface ConditionLike {
  type?: unknown;
  status?: unknown;
  reason?: unknown;
  message?: unknown;
  lastTransitionTime?: unknown;
}

/** The health of one cluster from its ManagedCluster (undefined: none in a synced cache). */
export function clusterHealth(managedCluster: KubeObject | undefined, now?: number): ClusterHealth {
  if (!managedCluster) return { state: 'absent' };
  if (managedCluster.metadata.deletionTimestamp) return { state: 'deleting' };
  const taints = (managedCluster.spec as { taints?: unknown } | undefined)?.taints;
  const taint = (Array.isArray(taints) ? (taints as Taint[]) : []).find((t) => t?.key === UNREACHABLE_TAINT || t?.key === UNAVAILABLE_TAINT);
  const conditions = (managedCluster.status as { conditions?: unknown } | undefined)?.conditions;
  const available = (Array.isArray(conditions) ? (conditions as ConditionLike[]) : []).find((c) => c?.type === AVAILABLE_CONDITION);
  if (!taint && available?.status === 'True') {
    const availableAt = kubeTimeMillis(available.lastTransitionTime);
    if (now === undefined || availableAt === undefined || now >= availableAt + RECOVERY_GRACE_MS) return { state: 'healthy' };
    return {
      state: 'unavailable',
      reason: 'ClusterRecovering',
      message: `cluster ${managedCluster.metadata.name} became available again: its Placements may not have taken it back yet`,
      since: formatKubeTime(available.lastTransitionTime)!,
      recheckAt: availableAt + RECOVERY_GRACE_MS,
    };
  }

  const reason = text(available?.reason) || (taint ? taintReason(String(taint.key)) : 'NotAvailable');
  const status = typeof available?.status === 'string' ? available.status : 'absent';
  const detail = text(available?.message);
  const message = taint
    ? `OCM marks cluster ${managedCluster.metadata.name} ${String(taint.key).split('/')[1]} (${AVAILABLE_CONDITION}=${status})${detail ? `: ${detail}` : ''}`
    : `cluster ${managedCluster.metadata.name} is not available (${AVAILABLE_CONDITION}=${status})${detail ? `: ${detail}` : ''}`;
  const since = formatKubeTime(available?.status !== 'True' ? available?.lastTransitionTime : undefined) ?? formatKubeTime(taint?.timeAdded);
  return { state: 'unavailable', reason, message, ...(since ? { since } : {}) };
}

function taintReason(key: string): string {
  return key === UNREACHABLE_TAINT ? 'ClusterUnreachable' : 'ClusterUnavailable';
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
