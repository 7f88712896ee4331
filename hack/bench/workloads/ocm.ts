// The OCM baseline of workload 1: OCM's own ManifestWorkReplicaSet controller (`work manager`, same OCM module,
// feature gate on) producing the same works from P ManifestWorkReplicaSets over a real C-cluster Placement.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PLACEMENT_LABEL, clustersFromDecisions } from '../../../src/core/fleet/placement.ts';
import { RESOURCES } from '../../../src/kube/resource.ts';
import { delta, waitQuiet } from '../../../testkit/counters.ts';
import { eventually } from '../../../testkit/eventually.ts';
import { binDir } from '../../../testkit/sandbox/layout.ts';
import { freePort } from '../../../testkit/sandbox/ports.ts';
import { PLACEMENT_NAMESPACE } from '../../../testkit/sandbox/sandbox.ts';
import { BENCH_LABEL, BENCH_TOLERATIONS, CLUSTER_SET, MWRS_PLACEMENT_LABEL, REPLICA_SETS, applyObject, deleteCollection, deleteIfPresent, listAll, pool, removeReplicaSets, worksFor } from '../../../testkit/world.ts';
import { LIFTED_QPS, MANAGER_COMPONENT, log, type Bench } from '../config.ts';
import { CpuWindow, planePids } from '../controller.ts';
import type { BenchResult } from '../report.ts';
import { Tracker } from '../tracker.ts';
import { report } from '../writes.ts';
import type { World } from './world.ts';

export async function ocmBaseline(bench: Bench, world: World, label: string): Promise<NonNullable<BenchResult['fanout']['ocm']>> {
  const { sandbox, kubeConfig, http } = bench;
  const { P, C, FANOUT_TIMEOUT_MS, ns, controllerName } = bench.cfg;
  const { clusters, policies } = world;
  const N = P * C;
  const port = await freePort();
  log(`${label}: starting \`work manager --feature-gates=ManifestWorkReplicaSet=true\``);
  const manager = await sandbox.run(
    {
      name: MANAGER_COMPONENT,
      command: join(binDir, 'work'),
      args: [
        'manager',
        `--kubeconfig=${sandbox.hub.kubeconfig}`,
        `--namespace=${PLACEMENT_NAMESPACE}`,
        '--disable-leader-election',
        `--listen=127.0.0.1:${port}`,
        '--feature-gates=ManifestWorkReplicaSet=true',
        // Lifted like the controller's: both bound by the apiserver, not by a client-side limiter.
        `--kube-api-qps=${LIFTED_QPS}`,
        `--kube-api-burst=${LIFTED_QPS}`,
      ],
      log: join(sandbox.layout.logs, 'bench-work-manager.log'),
    },
    { url: `https://127.0.0.1:${port}/healthz` },
    undefined,
    { once: true },
  );
  const works = await new Tracker(http, RESOURCES.manifestWorks, { labelSelector: `${MWRS_PLACEMENT_LABEL}=bench-ocm` }, () => 'x').start();
  const decisions = await new Tracker(http, RESOURCES.placementDecisions, { namespace: ns, labelSelector: `${PLACEMENT_LABEL}=bench-ocm` }, (d) => clustersFromDecisions([d]).join(',')).start();
  try {
    // Each policy's work spec (the same on every cluster) as the template, over Placement bench-ocm,
    // which does not exist yet.
    await pool(policies, 16, (p) =>
      applyObject(http, REPLICA_SETS, {
        apiVersion: 'work.open-cluster-management.io/v1alpha1',
        kind: 'ManifestWorkReplicaSet',
        metadata: { name: p.metadata.name, namespace: ns, labels: { [BENCH_LABEL]: 'run' } },
        spec: {
          manifestWorkTemplate: worksFor([p], ns, clusters.slice(0, 1), controllerName)[0]!.spec,
          placementRefs: [{ name: 'bench-ocm', rolloutStrategy: { type: 'All' } }],
        },
      }),
    );
    const before = (await waitQuiet(kubeConfig, { quietMs: 2_000, timeoutMs: 120_000 })).snapshot;
    log(`${label}: ${P} ManifestWorkReplicaSets created; creating Placement ${ns}/bench-ocm`);
    const cpu = new CpuWindow({ ...planePids(sandbox), 'work manager': manager.pid, harness: process.pid }, sandbox.pids());
    const start = performance.now();
    const decided = decisions.until(() => [...decisions.seen.values()].reduce((n, v) => n + (v ? v.split(',').length : 0), 0) === C, `Placement bench-ocm to decide ${C} clusters`, 120_000);
    const all = works.until(() => works.seen.size === N, `${N} works from the replica sets`, FANOUT_TIMEOUT_MS);
    await applyObject(http, RESOURCES.placements, {
      apiVersion: 'cluster.open-cluster-management.io/v1beta1',
      kind: 'Placement',
      metadata: { name: 'bench-ocm', namespace: ns },
      spec: { clusterSets: [CLUSTER_SET], tolerations: BENCH_TOLERATIONS },
    });
    const decidedAt = await decided;
    const doneAt = await all;
    const cpuSeconds = cpu.end();
    log(`${label}: ${N} works in ${((doneAt - decidedAt) / 1000).toFixed(2)} s after the decision (${((doneAt - start) / 1000).toFixed(2)} s after the Placement)`);
    // Its replica sets keep reporting rollout progress for a while: their status writes are counted too.
    const after = await waitQuiet(kubeConfig, { quietMs: 2_000, timeoutMs: 120_000 });
    const writes = report(delta(before, after.snapshot), { 'APPLY cluster.open-cluster-management.io/placements': 1 }, N, after.quiet);
    log(`${label}: deleting the replica sets (its controller deletes their works)`);
    await deleteCollection(http, REPLICA_SETS, ns);
    await works.until(() => works.seen.size === 0, 'the replica sets\' works to go', 600_000);
    await eventually(async () => (await listAll(http, REPLICA_SETS, ns)).length === 0, { what: 'the replica sets to go', timeoutMs: 120_000 });
    return { ms: doneAt - decidedAt, works: N, fromPlacementMs: doneAt - start, decisionMs: decidedAt - start, writes, cpuSeconds };
  } finally {
    await sandbox.remove(MANAGER_COMPONENT);
    await works.stop();
    await decisions.stop();
    await removeReplicaSets(http, ns);
    await deleteIfPresent(http, RESOURCES.placements, ns, 'bench-ocm');
    // Gone with its decisions before the next round: a decision left over would start its clock early.
    await eventually(async () => {
      const left = [...(await listAll(http, RESOURCES.placements, ns)), ...(await listAll(http, RESOURCES.placementDecisions, ns))];
      return !left.some((o) => o.metadata.name === 'bench-ocm' || o.metadata.labels?.[PLACEMENT_LABEL] === 'bench-ocm');
    }, { what: 'Placement bench-ocm and its decisions to go', timeoutMs: 120_000 });
  }
}

