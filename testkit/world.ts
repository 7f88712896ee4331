// The objects the benchmark puts on the hub: C ManagedClusters (bench-c1 … bench-cC, each with its
// namespace, where ManifestWorks go) in one ManagedClusterSet, a run namespace bound to that set with a
// real OCM Placement deciding the C clusters, the GatewayClass and params of a controller name of the
// run's own, and P AuthPolicies. Nothing here serves the bench clusters: their works only have to exist.
import type { KubeObject } from '../src/core/k8s/objects.ts';
import { desiredWorksForPolicy } from '../src/core/works/desiredworks.ts';
import { controllerLabelValue, readSpecHash, type ManifestWork } from '../src/core/works/manifestwork.ts';
import { PLACEMENT_LABEL, clustersFromDecisions } from '../src/core/fleet/placement.ts';
import { isConflict, isNotFound, type KubeHttp } from '../src/kube/http.ts';
import { RESOURCES, collectionPath, objectPath, type ResourceRef } from '../src/kube/resource.ts';
import { mergePatch, serverSideApply } from '../src/kube/writes.ts';
import { AUTH_POLICIES } from './fixtures.ts';

export const FIELD_MANAGER = 'policy-sync-bench';
/** On every object the benchmark creates: `run` (deleted at the end of a run) or `cluster` (kept). */
export const BENCH_LABEL = 'policysync.kuadrant.io/bench';
export const CLUSTER_SET = 'policy-sync-bench';
export const CLUSTER_SET_LABEL = 'cluster.open-cluster-management.io/clusterset';

const OCM_CLUSTER = 'cluster.open-cluster-management.io';
export const MANAGED_CLUSTERS: ResourceRef = { group: OCM_CLUSTER, version: 'v1', resource: 'managedclusters', namespaced: false };
export const CLUSTER_SETS: ResourceRef = { group: OCM_CLUSTER, version: 'v1beta2', resource: 'managedclustersets', namespaced: false };
export const CLUSTER_SET_BINDINGS: ResourceRef = { group: OCM_CLUSTER, version: 'v1beta2', resource: 'managedclustersetbindings', namespaced: true };
export const PLACEMENTS: ResourceRef = { group: OCM_CLUSTER, version: 'v1beta1', resource: 'placements', namespaced: true };
export const REPLICA_SETS: ResourceRef = { group: 'work.open-cluster-management.io', version: 'v1alpha1', resource: 'manifestworkreplicasets', namespaced: true };
/** Labels OCM's ManifestWorkReplicaSet controller puts on the works it creates. */
export const MWRS_PLACEMENT_LABEL = 'work.open-cluster-management.io/placementname';

export function clusterName(i: number): string {
  return `bench-c${i}`;
}

export async function applyObject(http: KubeHttp, resource: ResourceRef, object: KubeObject): Promise<KubeObject> {
  const { status, ...rest } = object;
  const applied = await serverSideApply<KubeObject>(http, resource, rest, { fieldManager: FIELD_MANAGER });
  if (status === undefined) return applied;
  return serverSideApply(http, resource, { ...rest, status }, { fieldManager: FIELD_MANAGER, subresource: 'status' });
}

export async function ensureNamespace(http: KubeHttp, name: string, bench: 'run' | 'cluster'): Promise<void> {
  try {
    await http.request('POST', collectionPath(RESOURCES.namespaces), {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [BENCH_LABEL]: bench } } },
    });
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}

export async function listAll(http: KubeHttp, resource: ResourceRef, namespace?: string, labelSelector?: string): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  let token: string | undefined;
  do {
    const page = await http.request<{ items: KubeObject[]; metadata: { continue?: string } }>('GET', collectionPath(resource, namespace), {
      query: { labelSelector, limit: 500, continue: token },
    });
    items.push(...page.items);
    token = page.metadata.continue || undefined;
  } while (token);
  return items;
}

export async function deleteCollection(http: KubeHttp, resource: ResourceRef, namespace: string | undefined, labelSelector?: string): Promise<void> {
  await http.request('DELETE', collectionPath(resource, namespace), { query: { labelSelector } });
}

export async function deleteIfPresent(http: KubeHttp, resource: ResourceRef, namespace: string | undefined, name: string): Promise<void> {
  try {
    await http.request('DELETE', objectPath(resource, namespace, name));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** Runs `fn` over `items` with at most `n` at once. */
export async function pool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

export async function poll<T>(what: string | (() => string), probe: () => Promise<T | undefined | false>, timeoutMs = 120_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}${lastError instanceof Error ? ` (last error: ${lastError.message})` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * The C bench clusters, exactly: ManagedClusters bench-c1 … bench-cC in the bench ManagedClusterSet
 * (bench clusters of a larger earlier run are removed, or a Placement would decide them too), each with
 * its namespace on the hub.
 */
export async function ensureClusters(http: KubeHttp, count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => clusterName(i + 1));
  await applyObject(http, CLUSTER_SETS, {
    apiVersion: `${OCM_CLUSTER}/v1beta2`,
    kind: 'ManagedClusterSet',
    metadata: { name: CLUSTER_SET, labels: { [BENCH_LABEL]: 'cluster' } },
    spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } },
  });
  for (const old of await listAll(http, MANAGED_CLUSTERS, undefined, `${BENCH_LABEL}=cluster`)) {
    if (!names.includes(old.metadata.name)) await deleteIfPresent(http, MANAGED_CLUSTERS, undefined, old.metadata.name);
  }
  await pool(names, 8, async (name) => {
    await ensureNamespace(http, name, 'cluster');
    await applyObject(http, MANAGED_CLUSTERS, {
      apiVersion: `${OCM_CLUSTER}/v1`,
      kind: 'ManagedCluster',
      metadata: { name, labels: { [BENCH_LABEL]: 'cluster', [CLUSTER_SET_LABEL]: CLUSTER_SET } },
      spec: { hubAcceptsClient: true },
    });
  });
  return names;
}

/**
 * No agent serves the bench clusters: OCM's registration taints them unreachable at once. Their works only
 * have to exist, so the bench's Placements tolerate that.
 */
export const BENCH_TOLERATIONS = ['unreachable', 'unavailable'].map((t) => ({ key: `cluster.open-cluster-management.io/${t}`, operator: 'Exists' }));

/** Binds `clusterSet` to `namespace` and creates Placement `name` over it (all its clusters). */
export async function placement(http: KubeHttp, namespace: string, name: string, clusterSet = CLUSTER_SET): Promise<void> {
  await applyObject(http, CLUSTER_SET_BINDINGS, {
    apiVersion: `${OCM_CLUSTER}/v1beta2`,
    kind: 'ManagedClusterSetBinding',
    metadata: { name: clusterSet, namespace },
    spec: { clusterSet },
  });
  await applyObject(http, PLACEMENTS, {
    apiVersion: `${OCM_CLUSTER}/v1beta1`,
    kind: 'Placement',
    metadata: { name, namespace },
    spec: { clusterSets: [clusterSet], tolerations: BENCH_TOLERATIONS },
  });
}

/** The clusters the placement controller decided for Placement `name`, once they are `expected`. */
export async function waitForDecisions(http: KubeHttp, namespace: string, name: string, expected: readonly string[], timeoutMs = 120_000): Promise<void> {
  const want = [...expected].sort().join(',');
  let last = '';
  await poll(() => `Placement ${namespace}/${name} to decide ${expected.length} clusters (last: ${last || 'none'})`, async () => {
    last = clustersFromDecisions(await listAll(http, RESOURCES.placementDecisions, namespace, `${PLACEMENT_LABEL}=${name}`)).join(',');
    return last === want;
  }, timeoutMs);
}

/** The works the core builds for each policy on the clusters, as policy-sync's controller `controllerName` would. */
/** The works the controller writes; `crdUid` is the AuthPolicy CRD's uid, which their source-ref records. */
export function worksFor(policies: readonly KubeObject[], gatewayNamespace: string, clusters: readonly string[], controllerName: string, crdUid?: string): ManifestWork[] {
  return policies.flatMap((policy) => [
    ...desiredWorksForPolicy({
      gvr: AUTH_POLICIES,
      policy,
      gateways: (ns, name) => (ns === gatewayNamespace && name === 'gw' ? { managed: true, downstreamNamespaceTemplate: '{namespace}', clusters, kindAllowed: true } : undefined),
      rawFeedback: false,
      statusFeedback: [],
      maxWorkBytes: 500 * 1024,
      controller: controllerLabelValue(controllerName),
      ...(crdUid === undefined ? {} : { crdUid }),
    }).works.values(),
  ]);
}

/** `cluster/name` → spec-hash of each work. */
export function hashes(works: readonly ManifestWork[]): Map<string, string> {
  return new Map(works.map((w) => [`${w.metadata.namespace}/${w.metadata.name}`, readSpecHash(w) ?? '']));
}

/** Drops the finalizers of leftover ManifestWorkReplicaSets (their controller may not run any more) and deletes them. */
export async function removeReplicaSets(http: KubeHttp, namespace?: string): Promise<void> {
  for (const rs of await listAll(http, REPLICA_SETS, namespace)) {
    if (rs.metadata.finalizers?.length) {
      await mergePatch(http, REPLICA_SETS, rs.metadata.namespace, rs.metadata.name, { metadata: { finalizers: null } }, { fieldManager: FIELD_MANAGER }).catch(() => undefined);
    }
    await deleteIfPresent(http, REPLICA_SETS, rs.metadata.namespace, rs.metadata.name);
  }
}
