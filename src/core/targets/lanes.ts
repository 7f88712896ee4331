// Tenant lanes between hub Gateways (docs/architecture.md#tenant-lanes): on a spoke, a hub Gateway is the downstream Gateway
// `{render(downstreamNamespace), name}`. With a template that does not contain `{namespace}` (MGC's one
// namespace for downstream Gateways), `team-a/gw` and `team-b/gw` are the same spoke Gateway, and team-a's
// policies would attach to team-b's Gateway. Where two hub Gateways would be one downstream Gateway on a
// cluster, the older (creationTimestamp, then namespace/name) keeps that lane and the other is refused
// there: its policies are not placed on that cluster, and both are told. Pure.
import { kubeTimeMillis } from '../k8s/kubetime.ts';
import { namespacedKey } from '../k8s/objects.ts';

/** One managed hub Gateway as the hub sees it: its downstream identity and where it is placed. */
export interface GatewayLane {
  namespace: string;
  name: string;
  creationTimestamp?: string | Date;
  /** The rendered downstream namespace. */
  downstreamNamespace: string;
  clusters: readonly string[];
}

export interface LaneConflict {
  cluster: string;
  /** `namespace/name` of the hub Gateway that keeps the downstream Gateway there. */
  keeper: string;
  /** `namespace/name` of the hub Gateway refused there. */
  refused: string;
  /** `namespace/name` of the downstream Gateway. */
  downstream: string;
  message: string;
}

/**
 * The conflicts that concern `gateway` (as keeper or refused) among `others` (managed hub Gateways of the same
 * name; `gateway` itself may be among them), sorted by cluster then Gateway.
 */
export function laneConflicts(gateway: GatewayLane, others: readonly GatewayLane[]): LaneConflict[] {
  const me = keyOf(gateway);
  const conflicts: LaneConflict[] = [];
  for (const cluster of [...new Set(gateway.clusters)].sort()) {
    const sharing = others.filter(
      (o) => keyOf(o) !== me && o.name === gateway.name && o.downstreamNamespace === gateway.downstreamNamespace && o.clusters.includes(cluster),
    );
    if (sharing.length === 0) continue;
    const [keeper, ...refused] = [gateway, ...sharing].sort(olderFirst);
    const downstream = `${gateway.downstreamNamespace}/${gateway.name}`;
    for (const r of refused) {
      if (keyOf(r) !== me && keyOf(keeper!) !== me) continue;
      conflicts.push({
        cluster,
        keeper: keyOf(keeper!),
        refused: keyOf(r),
        downstream,
        message:
          `on cluster ${cluster}, hub Gateways ${keyOf(keeper!)} and ${keyOf(r)} are both the downstream Gateway ${downstream}: ` +
          `${keyOf(keeper!)} (the older) keeps it, the policies of ${keyOf(r)} are not placed there`,
      });
    }
  }
  return conflicts.sort((a, b) => compare(a.cluster, b.cluster) || compare(a.refused, b.refused));
}

/** The clusters where `gateway` is refused (another hub Gateway keeps its downstream Gateway there). */
export function refusedClusters(gateway: GatewayLane, conflicts: readonly LaneConflict[]): Set<string> {
  const me = keyOf(gateway);
  return new Set(conflicts.filter((c) => c.refused === me).map((c) => c.cluster));
}

function keyOf(g: Pick<GatewayLane, 'namespace' | 'name'>): string {
  return namespacedKey(g.namespace, g.name);
}

function olderFirst(a: GatewayLane, b: GatewayLane): number {
  const ageA = kubeTimeMillis(a.creationTimestamp) ?? Number.POSITIVE_INFINITY;
  const ageB = kubeTimeMillis(b.creationTimestamp) ?? Number.POSITIVE_INFINITY;
  if (ageA !== ageB) return ageA < ageB ? -1 : 1;
  return compare(a.namespace, b.namespace) || compare(a.name, b.name);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
