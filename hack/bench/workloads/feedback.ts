// Workload 4, feedback latency on a real spoke and work agent: K isolated status changes on the spoke copy of
// one policy, each timed by watches on the hub until the hub annotation shows it, split into OCM's part (→
// ManifestWork status feedback) and ours (→ annotation); and the annotation writes they cost.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { SOURCE_LABEL, STATUS_ANNOTATION } from '../../../src/core/metadatakeys.ts';
import { sourceHash } from '../../../src/core/works/manifestwork.ts';
import { RESOURCES } from '../../../src/kube/resource.ts';
import { mergePatch } from '../../../src/kube/writes.ts';
import { delta, waitQuiet } from '../../../testkit/counters.ts';
import { eventually } from '../../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, gateway, get } from '../../../testkit/fixtures.ts';
import { hubStatus, writeSpokeStatus } from '../../../testkit/status.ts';
import { BENCH_LABEL, CLUSTER_SET_LABEL, FIELD_MANAGER, applyObject, ensureNamespace, placement, waitForDecisions } from '../../../testkit/world.ts';
import { SPOKE, SPOKE_CLUSTER_SET, STATUS_COALESCE_MS, log, type Bench } from '../config.ts';
import { stats, type BenchResult } from '../report.ts';
import { Tracker } from '../tracker.ts';
import { POLICY_PATCH } from '../writes.ts';

/** Workload 4: K isolated status changes on the spoke copy of one policy, timed by watches on the hub. */
export async function feedback(bench: Bench): Promise<BenchResult['feedback']> {
  const { kubeConfig, http, spokeHttp } = bench;
  const { K, fbNs, className } = bench.cfg;
  await ensureNamespace(spokeHttp, fbNs, 'run');
  await ensureNamespace(http, fbNs, 'run');
  await applyObject(http, RESOURCES.managedClusterSets, {
    apiVersion: 'cluster.open-cluster-management.io/v1beta2',
    kind: 'ManagedClusterSet',
    metadata: { name: SPOKE_CLUSTER_SET, labels: { [BENCH_LABEL]: 'cluster' } },
    spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } },
  });
  await mergePatch(http, RESOURCES.managedClusters, undefined, SPOKE, { metadata: { labels: { [CLUSTER_SET_LABEL]: SPOKE_CLUSTER_SET } } }, { fieldManager: FIELD_MANAGER });
  await placement(http, fbNs, 'spoke', SPOKE_CLUSTER_SET);
  await waitForDecisions(http, fbNs, 'spoke', [SPOKE]);
  await apply(http, gateway(fbNs, 'gw', className, 'spoke'));
  const name = 'fb';
  const enforcedMessage = (w: KubeObject): string | undefined => {
    const values = (w.status as { resourceStatus?: { manifests?: { statusFeedback?: { values?: { name: string; fieldValue: { string?: string } }[] } }[] } } | undefined)?.resourceStatus
      ?.manifests?.[0]?.statusFeedback?.values;
    return values?.find((v) => v.name === 'enforcedMessage')?.fieldValue.string;
  };
  const hubMessage = (p: KubeObject): string | undefined => {
    const text = p.metadata.annotations?.[STATUS_ANNOTATION];
    if (text === undefined) return undefined;
    return (JSON.parse(text) as { clusters?: Record<string, { message?: string; applied?: boolean }> }).clusters?.[SPOKE]?.message;
  };
  const work = await new Tracker(http, RESOURCES.manifestWorks, { namespace: SPOKE, labelSelector: `${SOURCE_LABEL}=${sourceHash(AUTH_POLICIES, fbNs, name)}` }, enforcedMessage).start();
  const policy = await new Tracker(http, AUTH_POLICIES, { namespace: fbNs, fieldSelector: `metadata.name=${name}` }, hubMessage).start();
  const key = `${fbNs}/${name}`;
  try {
    await apply(http, authPolicy(fbNs, name, 'gw'));
    await eventually(() => get(spokeHttp, AUTH_POLICIES, fbNs, name), { what: `the copy of ${key} on ${SPOKE}`, timeoutMs: 120_000 });
    await eventually(async () => (await hubStatus(http, AUTH_POLICIES, fbNs, name))?.clusters?.[SPOKE]?.applied === true, { what: `${key} to show ${SPOKE} applied`, timeoutMs: 120_000 });
    const before = (await waitQuiet(kubeConfig)).snapshot;
    log(`feedback: ${K} status changes on the copy of ${key} on ${SPOKE}`);
    const samplesMs: { totalMs: number; ocmMs: number; oursMs: number }[] = [];
    for (let i = 1; i <= K; i++) {
      // Isolated changes: past the coalescing window of the previous annotation write.
      await sleep(STATUS_COALESCE_MS + 100);
      const message = `AuthPolicy has been successfully enforced (bench change ${i})`;
      const atWork = work.until(() => [...work.seen.values()].includes(message), `change ${i} in the work's feedback`, 60_000);
      const atHub = policy.until(() => policy.seen.get(key) === message, `change ${i} on the hub annotation`, 60_000);
      const start = performance.now();
      await writeSpokeStatus(spokeHttp, AUTH_POLICIES, fbNs, name, message);
      const [w, h] = await Promise.all([atWork, atHub]);
      samplesMs.push({ totalMs: h - start, ocmMs: w - start, oursMs: h - w });
    }
    const after = await waitQuiet(kubeConfig);
    const writes = delta(before, after.snapshot).writes.get(POLICY_PATCH) ?? 0;
    const r = (x: number): number => Math.round(x * 10) / 10;
    const result = {
      changes: K,
      totalMs: stats(samplesMs.map((s) => s.totalMs)),
      ocmMs: stats(samplesMs.map((s) => s.ocmMs)),
      oursMs: stats(samplesMs.map((s) => s.oursMs)),
      annotationWrites: writes,
      samples: samplesMs.map((s) => ({ totalMs: r(s.totalMs), ocmMs: r(s.ocmMs), oursMs: r(s.oursMs) })),
    };
    log(`feedback: ours median ${result.oursMs.median} ms, p99 ${result.oursMs.p99} ms; OCM median ${result.ocmMs.median} ms`);
    return result;
  } finally {
    await work.stop();
    await policy.stop();
  }
}
