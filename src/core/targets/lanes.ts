// Tenant lanes between hub Gateways (docs/design/tenancy.md#tenant-lanes): on a spoke, a hub Gateway is the downstream Gateway
// `{render(downstreamNamespace), name}`. With a template that does not contain `{namespace}` (MGC's one
// namespace for downstream Gateways), `team-a/gw` and `team-b/gw` are the same spoke Gateway, and team-a's
// policies would attach to team-b's Gateway. Where two hub Gateways would be one downstream Gateway on a
// cluster, the lane belongs to whoever holds it, from what the works there show: the hub Gateway whose
// policies' copies already target that downstream Gateway keeps it, even against an older Gateway whose
// placement grows onto the cluster later (deleting the holder's works would switch its policies off there).
// Where no works hold it yet, the older (creationTimestamp, then namespace/name) takes it. The other is
// refused there: its policies are not placed on that cluster, and both are told. Pure.
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
 * The hub Gateways (`namespace/name`) whose policies' works on `cluster` place copies targeting the downstream
 * Gateway `downstream` (`namespace/name`): they hold that lane there (core/works/heldlanes.ts reads it from the works).
 */
export type LaneHolders = (cluster: string, downstream: string) => readonly string[];

/** Whether any of `others` could share a downstream Gateway with `gateway` on some cluster (same name and downstream namespace). */
export function mayShareLane(gateway: GatewayLane, others: readonly GatewayLane[]): boolean {
  const me = keyOf(gateway);
  return others.some((o) => keyOf(o) !== me && o.name === gateway.name && o.downstreamNamespace === gateway.downstreamNamespace);
}

/**
 * The conflicts that concern `gateway` (as keeper or refused) among `others` (managed hub Gateways of the same
 * name; `gateway` itself may be among them), sorted by cluster then Gateway. On each cluster the keeper is the
 * oldest of the holders (`holders`: the hub Gateways whose works there already target that downstream Gateway,
 * placed there now or not), else, when none holds it, the oldest of the Gateways placed there.
 */
export function laneConflicts(gateway: GatewayLane, others: readonly GatewayLane[], holders?: LaneHolders): LaneConflict[] {
  const me = keyOf(gateway);
  const conflicts: LaneConflict[] = [];
  const downstream = `${gateway.downstreamNamespace}/${gateway.name}`;
  const known = new Map([gateway, ...others].map((g) => [keyOf(g), g]));
  for (const cluster of [...new Set(gateway.clusters)].sort()) {
    const sharing = others.filter(
      (o) => keyOf(o) !== me && o.name === gateway.name && o.downstreamNamespace === gateway.downstreamNamespace && o.clusters.includes(cluster),
    );
    const held = [...new Set(holders?.(cluster, downstream) ?? [])];
    // A Gateway placed alone where nobody else's works hold the lane: no conflict.
    if (sharing.length === 0 && held.every((h) => h === me)) continue;
    const placed = [gateway, ...sharing].sort(olderFirst);
    // Holders are ordered as the Gateways are; one no longer cached (deleted, another class) counts as the newest.
    const holder = held.map((key) => known.get(key) ?? unknownLane(key, gateway)).sort(olderFirst)[0];
    const keeper = holder ?? placed[0]!;
    const why = holder === undefined || keyOf(holder) === keyOf(placed[0]!) ? '(the older)' : "(its policies' copies are there already)";
    for (const r of placed) {
      if (keyOf(r) === keyOf(keeper) || (keyOf(r) !== me && keyOf(keeper) !== me)) continue;
      conflicts.push({
        cluster,
        keeper: keyOf(keeper),
        refused: keyOf(r),
        downstream,
        message:
          `on cluster ${cluster}, hub Gateways ${keyOf(keeper)} and ${keyOf(r)} are both the downstream Gateway ${downstream}: ` +
          `${keyOf(keeper)} ${why} keeps it, the policies of ${keyOf(r)} are not placed there`,
      });
    }
  }
  return conflicts.sort((a, b) => compare(a.cluster, b.cluster) || compare(a.refused, b.refused));
}

/** A holder known only by its key (no cached Gateway): no age, so the newest. */
function unknownLane(key: string, like: GatewayLane): GatewayLane {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1), downstreamNamespace: like.downstreamNamespace, clusters: [] };
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
