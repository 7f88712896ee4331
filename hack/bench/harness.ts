// The run around the workloads: what an interrupted run left, the run's own objects at its end, and the
// machine the numbers were taken on.
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CONTROLLER_LABEL } from '../../src/core/metadatakeys.ts';
import { controllerLabelValue } from '../../src/core/works/manifestwork.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { mergePatch } from '../../src/kube/writes.ts';
import { eventually } from '../../testkit/eventually.ts';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import { BENCH_LABEL, CLUSTER_SET_LABEL, FIELD_MANAGER, applyObject, deleteIfPresent, deleteWorks, listAll, removeReplicaSets } from '../../testkit/world.ts';
import { SPOKE, SPOKE_CLUSTER_SET, log, type Bench } from './config.ts';
import type { BenchResult } from './report.ts';

/**
 * What an interrupted run may have left: replica sets (with finalizers), works on the bench clusters, run
 * namespaces, the bench's spoke in the fleet's cluster set.
 */
export async function cleanLeftovers(bench: Pick<Bench, 'cfg' | 'http' | 'cleanupHttp' | 'spokeHttp'>): Promise<void> {
  const { http, cleanupHttp } = bench;
  await joinClusterSet(http, SPOKE_CLUSTER_SET);
  await removeReplicaSets(http);
  const benchClusters = (await listAll(http, RESOURCES.namespaces, undefined, `${BENCH_LABEL}=cluster`)).map((n) => n.metadata.name);
  await deleteWorks(cleanupHttp, benchClusters, undefined, log);
  await cleanRun(bench, true, true);
}

/**
 * Puts the bench's spoke (the one cluster with a work agent) in cluster set `set` (made if missing): its own
 * (SPOKE_CLUSTER_SET) for workload 4, the fleet's for the fleet mode's feedback. Each run starts with it in its own.
 */
export async function joinClusterSet(http: KubeHttp, set: string): Promise<void> {
  await applyObject(http, RESOURCES.managedClusterSets, {
    apiVersion: 'cluster.open-cluster-management.io/v1beta2',
    kind: 'ManagedClusterSet',
    metadata: { name: set, labels: { [BENCH_LABEL]: 'cluster' } },
    spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } },
  });
  await mergePatch(http, RESOURCES.managedClusters, undefined, SPOKE, { metadata: { labels: { [CLUSTER_SET_LABEL]: set } } }, { fieldManager: FIELD_MANAGER });
}

/** Deletes the run's objects (all runs' with `everyRun`) and, when `wait`, waits for the namespaces to go. */
export async function cleanRun(bench: Pick<Bench, 'cfg' | 'http' | 'cleanupHttp' | 'spokeHttp'>, wait: boolean, everyRun = false): Promise<void> {
  const { http, cleanupHttp, spokeHttp } = bench;
  const { controllerName, bareName, className, rolloutClassName, ns, fbNs } = bench.cfg;
  // Works first: the bench clusters' have no agent (no finalizer); spoke-1's go through its agent.
  const mine = everyRun ? `${CONTROLLER_LABEL}` : `${CONTROLLER_LABEL} in (${controllerLabelValue(controllerName)},${controllerLabelValue(bareName)})`;
  const benchClusters = (await listAll(http, RESOURCES.namespaces, undefined, `${BENCH_LABEL}=cluster`)).map((n) => n.metadata.name);
  const start = performance.now();
  await deleteWorks(cleanupHttp, [...benchClusters, SPOKE], mine, log);
  log(`cleanup: works deleted in ${((performance.now() - start) / 1000).toFixed(1)} s`);
  await removeReplicaSets(http, everyRun ? undefined : ns);
  for (const c of await listAll(http, RESOURCES.gatewayClasses, undefined, `${BENCH_LABEL}=run`)) {
    if (everyRun || c.metadata.name === className || c.metadata.name === rolloutClassName) await deleteIfPresent(http, RESOURCES.gatewayClasses, undefined, c.metadata.name);
  }
  const runNamespaces = async (h: KubeHttp): Promise<string[]> =>
    (await listAll(h, RESOURCES.namespaces, undefined, `${BENCH_LABEL}=run`)).map((n) => n.metadata.name).filter((n) => everyRun || n === ns || n === fbNs);
  for (const h of [http, spokeHttp]) for (const n of await runNamespaces(h)) await deleteIfPresent(h, RESOURCES.namespaces, undefined, n);
  if (!wait) return;
  // The namespace controller empties them (P policies): its deletions would be counted against the next window.
  await eventually(async () => (await runNamespaces(http)).length === 0 && (await runNamespaces(spokeHttp)).length === 0, { what: 'the run namespaces to go', timeoutMs: 900_000, intervalMs: 500 });
}

export async function machineInfo(http: KubeHttp): Promise<BenchResult['machine']> {
  const version = await http.request<{ gitVersion?: string }>('GET', '/version').catch(() => undefined);
  const pins = readFileSync(join(repoRoot, 'hack', 'versions.env'), 'utf8');
  return {
    nproc: cpus().length,
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    kubernetes: version?.gitVersion,
    ocm: /^OCM_VERSION=(.*)$/m.exec(pins)?.[1],
  };
}
