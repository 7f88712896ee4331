// The objects the benchmark puts on the hub: C ManagedClusters (bench-c1 … bench-cC, each with its
// namespace, where ManifestWorks go) in one ManagedClusterSet, a run namespace bound to that set with a
// real OCM Placement deciding the C clusters, the GatewayClass and params of a controller name of the
// run's own, and P AuthPolicies (setUpWorld). Nothing here serves the bench clusters: their works only have to
// exist. And the works the core builds for such policies (worksFor), which tests expect too.
import type { KubeObject } from '../src/core/k8s/objects.ts';
import { desiredWorksForPolicy } from '../src/core/works/desiredworks.ts';
import { controllerLabelValue, readSpecHash, type ManifestWork } from '../src/core/works/manifestwork.ts';
import { PLACEMENT_LABEL, clustersFromDecisions } from '../src/core/fleet/placement.ts';
import { isConflict, isNotFound, type KubeHttp } from '../src/kube/http.ts';
import { RESOURCES, collectionPath, objectPath, type ResourceRef } from '../src/kube/resource.ts';
import { mergePatch, serverSideApply } from '../src/kube/writes.ts';
import { eventually } from './eventually.ts';
import { readConditions } from '../src/core/k8s/conditions.ts';
import { AUTH_POLICIES, apply, authPolicy, gatewayClass, paramsConfigMap } from './fixtures.ts';

export const FIELD_MANAGER = 'policy-sync-bench';
/** On every object the benchmark creates: `run` (deleted at the end of a run) or `cluster` (kept). */
export const BENCH_LABEL = 'policysync.kuadrant.io/bench';
export const CLUSTER_SET = 'policy-sync-bench';
export const CLUSTER_SET_LABEL = 'cluster.open-cluster-management.io/clusterset';

const OCM_CLUSTER = 'cluster.open-cluster-management.io';
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

/**
 * The C bench clusters, exactly: ManagedClusters bench-c1 … bench-cC in the bench ManagedClusterSet
 * (bench clusters of a larger earlier run are removed, or a Placement would decide them too), each with
 * its namespace on the hub.
 */
export async function ensureClusters(http: KubeHttp, count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => clusterName(i + 1));
  await applyObject(http, RESOURCES.managedClusterSets, {
    apiVersion: `${OCM_CLUSTER}/v1beta2`,
    kind: 'ManagedClusterSet',
    metadata: { name: CLUSTER_SET, labels: { [BENCH_LABEL]: 'cluster' } },
    spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } },
  });
  for (const old of await listAll(http, RESOURCES.managedClusters, undefined, `${BENCH_LABEL}=cluster`)) {
    if (!names.includes(old.metadata.name)) await deleteIfPresent(http, RESOURCES.managedClusters, undefined, old.metadata.name);
  }
  await pool(names, 8, async (name) => {
    await ensureNamespace(http, name, 'cluster');
    await applyObject(http, RESOURCES.managedClusters, {
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

/**
 * Every one of `names` judged by OCM's registration: its Available condition set. An agentless cluster gets it
 * (Unknown, ManagedClusterLeaseUpdateStopped) five lease durations — five minutes — after its lease is created:
 * on a fresh hub, minutes after the clusters, each a status change the hub reconciles every policy placed there
 * for. A bench that measures before then measures those reconciles too (a fleet run did: 91 reconciles in one
 * policy's edit instead of 1).
 */
export async function waitForClustersJudged(http: KubeHttp, names: readonly string[], o: { timeoutMs?: number; log?: (line: string) => void } = {}): Promise<void> {
  const wanted = new Set(names);
  let left = names.length;
  let told = 0;
  await eventually(
    async () => {
      const judged = (await listAll(http, RESOURCES.managedClusters, undefined, `${BENCH_LABEL}=cluster`)).filter(
        (c) => wanted.has(c.metadata.name) && readConditions(c).some((cond) => cond.type === 'ManagedClusterConditionAvailable'),
      );
      left = names.length - judged.length;
      if (left > 0 && Date.now() - told > 60_000) {
        o.log?.(`${left} of ${names.length} clusters not yet judged by OCM's registration (Available set five minutes after their lease)`);
        told = Date.now();
      }
      return left === 0;
    },
    { what: `OCM's registration to judge ${names.length} clusters`, timeoutMs: o.timeoutMs ?? 1_800_000, intervalMs: 5_000, context: () => `${left} not judged` },
  );
}

/** Binds `clusterSet` to `namespace` and creates Placement `name` over it (all its clusters). */
export async function placement(http: KubeHttp, namespace: string, name: string, clusterSet = CLUSTER_SET): Promise<void> {
  await applyObject(http, RESOURCES.managedClusterSetBindings, {
    apiVersion: `${OCM_CLUSTER}/v1beta2`,
    kind: 'ManagedClusterSetBinding',
    metadata: { name: clusterSet, namespace },
    spec: { clusterSet },
  });
  await applyObject(http, RESOURCES.placements, {
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
  await eventually(async () => {
    last = clustersFromDecisions(await listAll(http, RESOURCES.placementDecisions, namespace, `${PLACEMENT_LABEL}=${name}`)).join(',');
    return last === want;
  }, { what: `Placement ${namespace}/${name} to decide ${expected.length} clusters`, timeoutMs, context: () => `last: ${last || 'none'}` });
}

/**
 * The works the controller `controllerName` writes for the policies (of kind `gvr`) targeting Gateway `gw` in
 * `gatewayNamespace`, placed on `clusters`, built by the core as the controller builds them; `crdUid` is the
 * policy CRD's uid, which their source-ref records.
 */
export function worksFor(
  policies: readonly KubeObject[],
  gatewayNamespace: string,
  clusters: readonly string[],
  controllerName: string,
  crdUid?: string,
  gvr: ResourceRef = AUTH_POLICIES,
): ManifestWork[] {
  return policies.flatMap((policy) => [
    ...desiredWorksForPolicy({
      gvr,
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

export interface WorldOptions {
  /** C: the bench clusters bench-c1 … bench-cC. */
  clusters: number;
  /** P: the AuthPolicies p-00001 … */
  policies: number;
  /** The run namespace: the policies, Placement `bench`, the params. */
  namespace: string;
  className: string;
  controllerName: string;
  log?: (message: string) => void;
  /**
   * Wait for OCM's registration to judge every cluster (waitForClustersJudged) before the policies are made:
   * what a measure needs; a quick run that measures nothing skips the minutes it takes on a fresh hub.
   */
  judged?: boolean;
}

/**
 * The world a bench run starts from: the C bench clusters decided by Placement `bench` in the run namespace,
 * the run's GatewayClass and params, and P AuthPolicies targeting Gateway `gw`, which does not exist yet:
 * until it does, they are nobody's.
 */
export async function setUpWorld(http: KubeHttp, options: WorldOptions): Promise<{ clusters: string[]; policies: KubeObject[] }> {
  const { clusters: C, policies: P, namespace: ns, className, controllerName } = options;
  const log = options.log ?? (() => undefined);
  const clusters = await ensureClusters(http, C);
  await ensureNamespace(http, ns, 'run');
  await placement(http, ns, 'bench');
  await waitForDecisions(http, ns, 'bench', clusters);
  log(`${C} clusters decided by Placement ${ns}/bench`);
  if (options.judged) {
    await waitForClustersJudged(http, clusters, { log });
    log(`${C} clusters judged by OCM's registration`);
  }
  await apply(http, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  const cls = gatewayClass(className, { namespace: ns, name: 'params' }, controllerName);
  cls.metadata.labels = { [BENCH_LABEL]: 'run' };
  await apply(http, cls);
  const names = Array.from({ length: P }, (_, i) => `p-${String(i + 1).padStart(5, '0')}`);
  await pool(names, 16, (name) => apply(http, authPolicy(ns, name, 'gw')));
  const policies = (await listAll(http, AUTH_POLICIES, ns)).map((p) => ({ ...p, apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy' }));
  if (policies.length !== P) throw new Error(`expected ${P} policies in ${ns}, found ${policies.length}`);
  log(`${P} AuthPolicies created in ${ns}`);
  return { clusters, policies };
}

/**
 * Deletes the works (all, or those matching `labelSelector`) in each namespace, one deletecollection per
 * namespace. The apiserver deletes a collection one object after another (--delete-collection-workers=1)
 * and gives up at its request timeout (60 s) with the rest still there: such a call is simply made again.
 */
export async function deleteWorks(http: KubeHttp, namespaces: readonly string[], labelSelector?: string, log: (message: string) => void = () => undefined): Promise<void> {
  await pool(namespaces, 8, async (n) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await deleteCollection(http, RESOURCES.manifestWorks, n, labelSelector);
        return;
      } catch (err) {
        if (attempt >= 20) throw err;
        log(`deleting the works in ${n}: ${err instanceof Error ? err.message : String(err)}; again`);
      }
    }
  });
}
