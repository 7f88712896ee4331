// --fleet: policy-sync at a fleet's size (issue 32; default P = 30 policies × C = 1,000 clusters, `-C 3500` for the
// telco hub's), writing bundles (`--work-shape bundled`, docs/design/fleet.md), against today's shape's floor in the
// same run. In order, on one hub:
//   1. the floor: a bare client POSTs the P×C works of today's shape (one per placement), BARE_IN_FLIGHT under way,
//      then server-side applies one policy's C works edited (the floor of an edit reaching every cluster); deleted;
//   2. policy-sync's fan-out in bundles, with its scale curve (at 10 %, 50 % and 100 % of the placements: elapsed,
//      rate, controller RSS, apiserver CPU, etcd), and etcd's bytes per placement (in use, each side compacted);
//   3. a restart on the unchanged world: caches synced, the no-op pass, and every write the hub saw (0 expected);
//   4. one policy edited, until every cluster's copy has the edit, and the bytes of the bundles it rewrote;
//   5. `policy-sync status` and `explain` on that policy, each timed as a user runs them; its status annotation's
//      size and summary.
// With --cpu-prof the restarted controller is profiled (start-up, the edit, the CLI's reads).
//   6. the bench's spoke (a real work agent) joins the fleet's cluster set: K status changes of the first policy's
//      copy there, each timed back to the policy's annotation (the default run's workload 4, on a fleet's policy).
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { CONTROLLER_LABEL, POLICIES_SYNCED_ANNOTATION, STATUS_ANNOTATION } from '../../../src/core/metadatakeys.ts';
import { readPolicyStatus } from '../../../src/core/status/annotation.ts';
import { MAX_STATUS_ANNOTATION_BYTES } from '../../../src/core/status/annotation.ts';
import { policiesSyncedAnnotation } from '../../../src/core/status/policiessynced.ts';
import { bundleSourceSelector, copiesOf } from '../../../src/core/works/bundle.ts';
import { controllerLabelValue, readSpecHash, sourceHash, type ManifestWork } from '../../../src/core/works/manifestwork.ts';
import { readCrd } from '../../../src/kube/discovery.ts';
import { KubeHttp } from '../../../src/kube/http.ts';
import { RESOURCES, collectionPath, objectPath } from '../../../src/kube/resource.ts';
import { serverSideApply } from '../../../src/kube/writes.ts';
import { delta, waitQuiet } from '../../../testkit/counters.ts';
import { compactEtcd, etcdAlarms, etcdDb, etcdQuotaBytes, etcdUrl } from '../../../testkit/etcd.ts';
import { AUTH_POLICIES, apply, authPolicy, gateway } from '../../../testkit/fixtures.ts';
import { CLUSTER_SET, FIELD_MANAGER, deleteWorks, ensureNamespace, hashes, pool, setUpWorld, waitForDecisions, worksFor } from '../../../testkit/world.ts';
import { LIFTED_QPS, PS_COMPONENT, SPOKE, SPOKE_CLUSTER_SET, log, type Bench } from '../config.ts';
import { CpuWindow, controllerMetrics, metricValue, planePids, profileOf, rssOf, startController, startupPass, type Controller } from '../controller.ts';
import { profileDir } from './fanout.ts';
import { joinClusterSet, machineInfo } from '../harness.ts';
import { spokeChanges } from './feedback.ts';
import type { FleetResult } from '../report.ts';
import { Tracker } from '../tracker.ts';
import { costCurve, watchStall } from '../fanoutwatch.ts';
import { fanoutWrites, report } from '../writes.ts';

const BUNDLED = ['--work-shape=bundled'];
const run = promisify(execFile);

/** The world's first policy with another spec: the edit every cluster's copy must take. */
function edited(policy: KubeObject): KubeObject {
  return authPolicy(policy.metadata.namespace ?? '', policy.metadata.name, 'gw', { rules: { authorization: { deny: { opa: { rego: 'allow = input.context.request.http.method == "GET"' } } } } });
}

/** The controller's V8 heap in use now (its own metrics), MiB; what RSS holds beyond it is garbage not yet collected, code and buffers. */
async function heapUsedMiB(controller: Controller): Promise<string> {
  const text = await controllerMetrics(controller).catch(() => '');
  return (metricValue(text, 'nodejs_heap_size_used_bytes') / 2 ** 20).toFixed(0);
}

/** etcd's bytes in use after a physical compaction, once its backend committed it. */
async function inUseBytes(sandbox: Bench['sandbox'], url: string): Promise<number> {
  await compactEtcd(sandbox);
  await sleep(2_000);
  const db = await etcdDb(url);
  return db ? db.inUseMiB * 2 ** 20 : NaN;
}

export async function fleet(bench: Bench, startedAt: Date): Promise<FleetResult> {
  const { sandbox, kubeConfig, http, cleanupHttp, cli } = bench;
  const { P, C, CONCURRENCY, BARE_IN_FLIGHT, FANOUT_TIMEOUT_MS, PASS_TIMEOUT_MS, QUIET_TIMEOUT_MS, runId, ns, className, controllerName, bareName } = bench.cfg;
  const N = P * C;
  const etcd = { url: await etcdUrl(sandbox), quotaBytes: etcdQuotaBytes(sandbox) };
  const alarms = await etcdAlarms(etcd.url);
  if (alarms.length > 0) throw new Error(`etcd has alarms raised (${alarms.join(', ')}): start the bench sandbox afresh (--down --purge)`);
  const world = await setUpWorld(http, { clusters: C, policies: P, namespace: ns, className, controllerName, log, judged: true });
  const { clusters, policies } = world;
  const machine = await machineInfo(http);
  const apiserverPid = sandbox.process('kube-apiserver/hub').pid;
  const crdUid = (await readCrd(http, AUTH_POLICIES))?.uid;
  const first = policies[0]!;

  // ---- 1. today's shape's floor: bare creates of the P×C works, then one policy's C works edited ----
  const bareSelector = `${CONTROLLER_LABEL}=${controllerLabelValue(bareName)}`;
  const bareTracker = await new Tracker(http, RESOURCES.manifestWorks, { labelSelector: bareSelector }, readSpecHash).start();
  const bare = new KubeHttp(kubeConfig, { maxInFlight: BARE_IN_FLIGHT });
  let floor: FleetResult['floor'];
  try {
    const bareWorks = worksFor(policies, ns, clusters, bareName);
    await waitQuiet(kubeConfig, { quietMs: 2_000, timeoutMs: QUIET_TIMEOUT_MS });
    log(`bare client (create): ${N} works of one copy each, ${BARE_IN_FLIGHT} in flight`);
    const cpu = new CpuWindow({ apiserver: apiserverPid });
    let start = performance.now();
    let seen = bareTracker.expect(hashes(bareWorks), `${N} bare works`, FANOUT_TIMEOUT_MS);
    await pool(bareWorks, BARE_IN_FLIGHT, (w) => bare.request('POST', collectionPath(RESOURCES.manifestWorks, w.metadata.namespace), { query: { fieldManager: FIELD_MANAGER }, body: w }));
    const createMs = (await seen) - start;
    const createCpu = cpu.end().apiserver ?? NaN;
    log(`bare client (create): ${(createMs / 1000).toFixed(2)} s`);
    const editWorks = worksFor([edited(first)], ns, clusters, bareName);
    const editBytes = editWorks.reduce((sum, w) => sum + Buffer.byteLength(JSON.stringify(w)), 0);
    const editCpu = new CpuWindow({ apiserver: apiserverPid });
    start = performance.now();
    seen = bareTracker.expect(new Map([...hashes(bareWorks), ...hashes(editWorks)]), `${C} bare works edited`, FANOUT_TIMEOUT_MS);
    await pool(editWorks, BARE_IN_FLIGHT, (w: ManifestWork) => serverSideApply(bare, RESOURCES.manifestWorks, w, { discardResponse: true }));
    const editMs = (await seen) - start;
    const editApiserverCpuSeconds = editCpu.end().apiserver ?? NaN;
    log(`bare client (one policy's ${C} works edited): ${(editMs / 1000).toFixed(2)} s, ${(editBytes / 1024).toFixed(0)} KiB sent, apiserver CPU ${editApiserverCpuSeconds} s`);
    floor = { createMs, createApiserverCpuSeconds: createCpu, editMs, editBytes, editApiserverCpuSeconds };
    await deleteWorks(cleanupHttp, clusters, bareSelector, log);
    await bareTracker.until(() => bareTracker.seen.size === 0, 'the bare works to go', 600_000);
  } finally {
    await bareTracker.stop();
    bare.destroy();
  }

  // ---- 2. policy-sync's fan-out in bundles ----
  const inUseBefore = await inUseBytes(sandbox, etcd.url);
  const expected = hashes(worksFor(policies, ns, clusters, controllerName, crdUid));
  const works = await new Tracker(http, RESOURCES.manifestWorks, { labelSelector: `${CONTROLLER_LABEL}=${controllerLabelValue(controllerName)}`, expand: copiesOf }, readSpecHash).start();
  const annotations = await new Tracker(http, AUTH_POLICIES, { namespace: ns }, (p) => p.metadata.annotations?.[POLICIES_SYNCED_ANNOTATION]).start();
  const synced = new Map(policies.map((p) => [`${ns}/${p.metadata.name}`, policiesSyncedAnnotation(clusters.map((cluster) => ({ cluster, name: p.metadata.name, namespace: ns }))) ?? '']));
  const checkpoints = [...new Set([Math.round(N / 10), Math.round(N / 2), N])].filter((k) => k > 0);
  let stall: ReturnType<typeof watchStall> | undefined;
  try {
    log('policy-sync (bundled): starting the controller');
    let controller = await startController(bench, undefined, BUNDLED);
    await startupPass(controller, P, PASS_TIMEOUT_MS);
    const beforeFanout = (await waitQuiet(kubeConfig, { quietMs: 2_000, timeoutMs: QUIET_TIMEOUT_MS })).snapshot;
    const cpu = new CpuWindow({ ...planePids(sandbox), controller: controller.pid });
    const start = performance.now();
    const allCopies = works.expect(expected, `${N} copies with the expected spec-hash`, FANOUT_TIMEOUT_MS);
    const allAnnotated = annotations.expect(synced, `${P} policies annotated`, FANOUT_TIMEOUT_MS);
    const points = checkpoints.map((k) =>
      works.until(() => works.matched >= k, `${k} copies`, FANOUT_TIMEOUT_MS).then(async (at) => {
        const point = { works: k, elapsedMs: at - start, controllerRssMiB: rssOf(controller.pid).rssMiB, cpuSeconds: cpu.end(), apiserverRssMiB: rssOf(apiserverPid).rssMiB };
        const db = await etcdDb(etcd.url);
        log(`policy-sync: ${k} placements at ${(point.elapsedMs / 1000).toFixed(1)} s, controller RSS ${point.controllerRssMiB.toFixed(0)} MiB (heap used ${await heapUsedMiB(controller)} MiB)`);
        return { ...point, ...(db ? { etcdDbMiB: db.dbMiB, etcdDbInUseMiB: db.inUseMiB } : {}) };
      }),
    );
    stall = watchStall(works, N, 'copies', controller.log, etcd.url);
    await apply(http, gateway(ns, 'gw', className, 'bench'));
    const ms = (await Promise.race([allCopies, stall.stalled])) - start;
    stall.stop();
    const annotatedMs = (await allAnnotated) - start;
    const cpuSeconds = cpu.end();
    const reached = await Promise.all(points);
    const curve = costCurve(reached);
    const bundles = works.objects;
    log(`policy-sync: ${N} copies in ${bundles} bundles in ${(ms / 1000).toFixed(2)} s (${(ms / floor.createMs).toFixed(2)} × the bare creates), ${P} policies annotated in ${(annotatedMs / 1000).toFixed(2)} s`);
    const afterFanout = await waitQuiet(kubeConfig, { quietMs: 2_000, timeoutMs: QUIET_TIMEOUT_MS });
    const fanoutRss = rssOf(controller.pid);
    const inUseAfter = await inUseBytes(sandbox, etcd.url);

    // ---- 3. restart on the unchanged world ----
    await sandbox.remove(PS_COMPONENT, 15_000);
    const beforeRestart = (await waitQuiet(kubeConfig, { quietMs: 2_000, timeoutMs: QUIET_TIMEOUT_MS })).snapshot;
    log(`restart: starting the controller on ${N} copies in ${bundles} bundles`);
    // With --cpu-prof, the restarted controller is profiled: its start-up, the edit and the CLI's reads.
    const restartProfile = profileDir(bench, 'fleet-restart');
    controller = await startController(bench, restartProfile, BUNDLED);
    const pass = await startupPass(controller, P, PASS_TIMEOUT_MS);
    const afterRestart = await waitQuiet(kubeConfig, { quietMs: 2_000, timeoutMs: QUIET_TIMEOUT_MS });
    const restartRss = rssOf(controller.pid);
    log(`restart: caches synced ${pass.cachesSyncedMs.toFixed(0)} ms, pass done ${pass.passMs.toFixed(0)} ms; peak RSS ${restartRss.peakMiB.toFixed(1)} MiB (heap used ${await heapUsedMiB(controller)} MiB)`);

    // ---- 4. one policy edited, on every cluster ----
    await apply(http, edited(first));
    const stored = await http.request<KubeObject>('GET', objectPath(AUTH_POLICIES, ns, first.metadata.name));
    const editedExpected = new Map([...expected, ...hashes(worksFor([{ ...stored, apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy' }], ns, clusters, controllerName, crdUid))]);
    const reconciles = async (): Promise<number> => metricValue(await controllerMetrics(controller).catch(() => ''), 'controller_runtime_reconcile_total', { controller: 'policy' });
    const reconcilesBefore = await reconciles();
    const editCpu = new CpuWindow({ apiserver: apiserverPid, controller: controller.pid });
    const editStart = performance.now();
    const editMs = (await works.expect(editedExpected, `${C} copies of ${first.metadata.name} edited`, FANOUT_TIMEOUT_MS)) - editStart;
    const editCpuSeconds = editCpu.end();
    const editReconciles = (await reconciles()) - reconcilesBefore;
    const carrying = await http.request<{ items: KubeObject[] }>('GET', collectionPath(RESOURCES.manifestWorks), { query: { labelSelector: bundleSourceSelector(sourceHash(AUTH_POLICIES, ns, first.metadata.name)) } });
    // What an update of each sends: the bundle without its status and managed fields.
    const editBytes = carrying.items.reduce((sum, b) => sum + Buffer.byteLength(JSON.stringify({ ...b, status: undefined, metadata: { ...b.metadata, managedFields: undefined } })), 0);
    log(`edit: ${C} copies of ${first.metadata.name} in ${(editMs / 1000).toFixed(2)} s (${(editMs / floor.editMs).toFixed(2)} × the bare writes), ${carrying.items.length} bundles, ${(editBytes / 1024).toFixed(0)} KiB, CPU s ${JSON.stringify(editCpuSeconds)}, ${editReconciles} policy reconciles`);

    // ---- 5. the CLI on that policy, and its annotation ----
    const cliTime = async (args: string[]): Promise<number> => {
      const t = performance.now();
      await run(process.execPath, [cli, ...args, `authpolicy/${first.metadata.name}`, '-n', ns, '--kubeconfig', sandbox.hub.kubeconfig, '--controller-name', controllerName], { maxBuffer: 64 * 2 ** 20 });
      return performance.now() - t;
    };
    const statusMs = await cliTime(['status']);
    const explainMs = await cliTime(['explain']);
    const annotation = ((await http.request<KubeObject>('GET', objectPath(AUTH_POLICIES, ns, first.metadata.name))).metadata.annotations ?? {})[STATUS_ANNOTATION] ?? '';
    const summary = readPolicyStatus(annotation)?.summary;
    log(`cli: status ${statusMs.toFixed(0)} ms, explain ${explainMs.toFixed(0)} ms; status annotation ${annotation.length} B`);

    // ---- 6. one spoke's status change back on the hub: the bench's spoke joins the fleet ----
    // Its copies come in bundles too. The policy's annotation is cut (1,000 clusters): it may leave that cluster
    // out, so the changes turn Enforced False and True in turn, which the fleet's counts show.
    await ensureNamespace(bench.spokeHttp, ns, 'run');
    await joinClusterSet(http, CLUSTER_SET);
    let feedback: FleetResult['feedback'];
    try {
      await waitForDecisions(http, ns, 'bench', [...clusters, SPOKE]);
      feedback = await spokeChanges(bench, ns, first.metadata.name, true);
    } finally {
      await joinClusterSet(http, SPOKE_CLUSTER_SET);
    }
    // The profile is written when the process exits.
    if (restartProfile) await sandbox.remove(PS_COMPONENT, 15_000);
    const profile = restartProfile ? profileOf(restartProfile) : undefined;

    return {
      version: 1,
      mode: 'fleet',
      startedAt: startedAt.toISOString(),
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`,
      machine,
      params: { policies: P, clusters: C, concurrency: CONCURRENCY, bareInFlight: BARE_IN_FLIGHT, qps: LIFTED_QPS, runId },
      floor,
      fanout: { ms, placements: N, bundles, annotatedMs, cpuSeconds, curve, writes: fanoutWrites(delta(beforeFanout, afterFanout.snapshot), afterFanout.quiet, bundles, P) },
      restart: { ...pass, peakRssMiB: restartRss.peakMiB, writes: report(delta(beforeRestart, afterRestart.snapshot), {}, 0, afterRestart.quiet, { text: '= 0', ok: (w) => w.total === 0 }) },
      edit: { ms: editMs, bundles: carrying.items.length, bytes: editBytes, cpuSeconds: editCpuSeconds, reconciles: editReconciles },
      memory: { fanoutPeakRssMiB: fanoutRss.peakMiB, restartPeakRssMiB: restartRss.peakMiB },
      etcd: { bytesPerPlacement: (inUseAfter - inUseBefore) / N, inUseMiB: inUseAfter / 2 ** 20, quotaMiB: etcd.quotaBytes / 2 ** 20 },
      cli: { statusMs, explainMs },
      feedback,
      annotation: { bytes: Buffer.byteLength(annotation), budgetBytes: MAX_STATUS_ANNOTATION_BYTES, ...(summary ? { summary } : {}) },
      ...(profile ? { profile: { restart: profile } } : {}),
    };
  } finally {
    stall?.stop();
    await works.stop();
    await annotations.stop();
  }
}
