// Workload 4, feedback latency on a real spoke and work agent: K isolated status changes on the spoke copy of
// one policy, each timed by watches on the hub until the hub annotation shows it, split into OCM's part (→
// ManifestWork status feedback) and ours (→ annotation); and the annotation writes they cost. The fleet mode
// (fleet.ts) times the same changes on one of its own policies, the bench's spoke one cluster of its fleet.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { SOURCE_LABEL, STATUS_ANNOTATION } from '../../../src/core/metadatakeys.ts';
import { readPolicyStatus } from '../../../src/core/status/annotation.ts';
import { copiesOf } from '../../../src/core/works/bundle.ts';
import { sourceHash } from '../../../src/core/works/manifestwork.ts';
import { workState } from '../../../src/core/works/workstate.ts';
import { RESOURCES } from '../../../src/kube/resource.ts';
import { delta, waitQuiet } from '../../../testkit/counters.ts';
import { eventually } from '../../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, gateway, get } from '../../../testkit/fixtures.ts';
import { writeSpokeStatus } from '../../../testkit/status.ts';
import { ensureNamespace, listAll, placement, waitForDecisions } from '../../../testkit/world.ts';
import { joinClusterSet } from '../harness.ts';
import { SPOKE, SPOKE_CLUSTER_SET, STATUS_COALESCE_MS, log, type Bench } from '../config.ts';
import { stats, type BenchResult } from '../report.ts';
import { Tracker } from '../tracker.ts';
import { POLICY_PATCH } from '../writes.ts';

/** What the hub's annotation shows of the bench's spoke: its message where it names it, and the fleet's counts. */
interface HubView {
  message?: string;
  failed: number;
  enforced: number;
}

/** Workload 4: K isolated status changes on the spoke copy of one policy, timed by watches on the hub. */
export async function feedback(bench: Bench): Promise<BenchResult['feedback']> {
  const { http, spokeHttp } = bench;
  const { fbNs, className } = bench.cfg;
  await ensureNamespace(spokeHttp, fbNs, 'run');
  await ensureNamespace(http, fbNs, 'run');
  await joinClusterSet(http, SPOKE_CLUSTER_SET);
  await placement(http, fbNs, 'spoke', SPOKE_CLUSTER_SET);
  await waitForDecisions(http, fbNs, 'spoke', [SPOKE]);
  await apply(http, gateway(fbNs, 'gw', className, 'spoke'));
  const name = 'fb';
  await apply(http, authPolicy(fbNs, name, 'gw'));
  return spokeChanges(bench, fbNs, name, false);
}

/**
 * K isolated status changes on the copy of policy `namespace/name` on the bench's spoke, whatever carries it (a
 * work of its own or a bundle), each timed until the hub's status annotation shows it: OCM's part (the change in
 * the copy's feedback) and ours (from there to the annotation). Each change is a new Enforced message; with
 * `alternate`, Enforced turns False and True in turn too, and the hub shows a change by the cluster's message or,
 * where its cut annotation leaves that cluster out (a policy on a fleet: core/status/annotation.ts), by its summary's
 * counts — the whole fleet's, always there.
 */
export async function spokeChanges(bench: Bench, namespace: string, name: string, alternate: boolean): Promise<BenchResult['feedback']> {
  const { kubeConfig, http, spokeHttp } = bench;
  const { K } = bench.cfg;
  const source = sourceHash(AUTH_POLICIES, namespace, name);
  const copyOfPolicy = (w: KubeObject) => copiesOf(w).filter((c) => c.metadata.labels?.[SOURCE_LABEL] === source);
  const enforcedMessage = (w: KubeObject): string | undefined => {
    const values = (w.status as { resourceStatus?: { manifests?: { statusFeedback?: { values?: { name: string; fieldValue: { string?: string } }[] } }[] } } | undefined)?.resourceStatus
      ?.manifests?.[0]?.statusFeedback?.values;
    return values?.find((v) => v.name === 'enforcedMessage')?.fieldValue.string;
  };
  const hubView = (p: KubeObject): string | undefined => {
    const status = readPolicyStatus(p.metadata.annotations?.[STATUS_ANNOTATION] ?? '');
    return status && JSON.stringify({ message: status.clusters?.[SPOKE]?.message, failed: status.summary.failed, enforced: status.summary.enforced });
  };
  const shown = (text: string | undefined): HubView | undefined => (text === undefined ? undefined : (JSON.parse(text) as HubView));
  // Every work in the spoke's namespace: the policy's copy is in one of them, alone or in a bundle.
  const work = await new Tracker(http, RESOURCES.manifestWorks, { namespace: SPOKE, expand: copyOfPolicy }, enforcedMessage).start();
  const policy = await new Tracker(http, AUTH_POLICIES, { namespace, fieldSelector: `metadata.name=${name}` }, hubView).start();
  const key = `${namespace}/${name}`;
  try {
    await eventually(() => get(spokeHttp, AUTH_POLICIES, namespace, name), { what: `the copy of ${key} on ${SPOKE}`, timeoutMs: 120_000 });
    const applied = async () => (await listAll(http, RESOURCES.manifestWorks, SPOKE)).flatMap(copyOfPolicy).some((c) => workState(c) === 'applied');
    await eventually(applied, { what: `the copy of ${key} applied on ${SPOKE}`, timeoutMs: 120_000 });
    const before = (await waitQuiet(kubeConfig)).snapshot;
    // The fleet's counts but for this cluster's: it is neither enforced nor failed before its first change.
    const base = shown(policy.seen.get(key)) ?? { failed: 0, enforced: 0 };
    log(`feedback: ${K} status changes${alternate ? ' (Enforced False and True in turn)' : ''} on the copy of ${key} on ${SPOKE}`);
    const samplesMs: { totalMs: number; ocmMs: number; oursMs: number }[] = [];
    for (let i = 1; i <= K; i++) {
      // Isolated changes: past the coalescing window of the previous annotation write.
      await sleep(STATUS_COALESCE_MS + 100);
      const enforced = alternate && i % 2 === 1 ? 'False' : 'True';
      const message = enforced === 'True' ? `AuthPolicy has been successfully enforced (bench change ${i})` : `AuthPolicy has not been enforced (bench change ${i})`;
      const atWork = work.until(() => [...work.seen.values()].includes(message), `change ${i} in the work's feedback`, 60_000);
      const onHub = (v: HubView | undefined): boolean =>
        v !== undefined &&
        (v.message === message || (v.message === undefined && alternate && v.failed === base.failed + (enforced === 'False' ? 1 : 0) && v.enforced === base.enforced + (enforced === 'True' ? 1 : 0)));
      const atHub = policy.until(() => onHub(shown(policy.seen.get(key))), `change ${i} on the hub annotation`, 60_000);
      const start = performance.now();
      await writeSpokeStatus(spokeHttp, AUTH_POLICIES, namespace, name, message, enforced);
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
