// The fleet as OCM's registration sees it: a ManagedCluster's ManagedClusterConditionAvailable and the
// NoSelect taints the hub puts on a cluster that is not Available (`unreachable` when Unknown, `unavailable` when
// False). For tests that take a spoke off the hub (sandbox.stop(registrationAgent(spoke))) and bring it back.
import type { KubeObject } from '../src/core/k8s/objects.ts';
import type { KubeHttp } from '../src/kube/http.ts';
import { AVAILABLE_CONDITION, UNAVAILABLE_TAINT, UNREACHABLE_TAINT } from '../src/core/fleet/clusterhealth.ts';
import { RESOURCES, type ResourceRef } from '../src/kube/resource.ts';
import { eventually } from './eventually.ts';
import { get } from './fixtures.ts';

export const MANAGED_CLUSTERS: ResourceRef = RESOURCES.managedClusters;
export { AVAILABLE_CONDITION, UNAVAILABLE_TAINT, UNREACHABLE_TAINT };

export type Availability = 'True' | 'Unknown' | 'False';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  lastTransitionTime?: string;
}

export interface ClusterHealth {
  /** ManagedClusterConditionAvailable's status; undefined while the hub has set none. */
  available: Availability | undefined;
  reason: string | undefined;
  since: string | undefined;
  /** The availability taints on the cluster (`unreachable`, `unavailable`), by key. */
  taints: string[];
}

export function clusterHealth(cluster: KubeObject): ClusterHealth {
  const conditions = ((cluster.status as { conditions?: Condition[] } | undefined)?.conditions ?? []);
  const available = conditions.find((c) => c.type === AVAILABLE_CONDITION);
  const taints = ((cluster.spec?.taints as { key: string }[] | undefined) ?? []).map((t) => t.key);
  return {
    available: available?.status as Availability | undefined,
    reason: available?.reason,
    since: available?.lastTransitionTime,
    taints: taints.filter((k) => k === UNREACHABLE_TAINT || k === UNAVAILABLE_TAINT),
  };
}

function describe(health: ClusterHealth | undefined): string {
  if (!health) return 'no ManagedCluster';
  return `Available=${health.available ?? 'unset'}${health.reason ? ` (${health.reason})` : ''}, taints [${health.taints.join(', ')}]`;
}

async function readHealth(http: KubeHttp, cluster: string): Promise<ClusterHealth | undefined> {
  const object = await get(http, MANAGED_CLUSTERS, undefined, cluster);
  return object && clusterHealth(object);
}

/** Until the cluster's ManagedClusterConditionAvailable has `status`; resolves with what the cluster then shows. */
export async function waitForClusterAvailability(http: KubeHttp, cluster: string, status: Availability, timeoutMs: number): Promise<ClusterHealth> {
  let last: ClusterHealth | undefined;
  return eventually(
    async () => {
      last = await readHealth(http, cluster);
      return last?.available === status ? last : undefined;
    },
    { what: `ManagedCluster ${cluster} Available=${status}`, timeoutMs, intervalMs: 250, context: () => `last seen: ${describe(last)}` },
  );
}

/**
 * Until the cluster carries an availability taint (`unreachable` or `unavailable`; `present`) or none (`!present`);
 * resolves with what the cluster then shows.
 */
export async function waitForTaint(http: KubeHttp, cluster: string, present: boolean, timeoutMs: number): Promise<ClusterHealth> {
  let last: ClusterHealth | undefined;
  return eventually(
    async () => {
      last = await readHealth(http, cluster);
      return last !== undefined && (last.taints.length > 0) === present ? last : undefined;
    },
    { what: `ManagedCluster ${cluster} ${present ? 'tainted unreachable or unavailable' : 'without availability taints'}`, timeoutMs, intervalMs: 250, context: () => `last seen: ${describe(last)}` },
  );
}
