// --scale: policy-sync alone, to P×C works (5000 × 20 = 100k by default; no baselines, no feedback): the
// fan-out with its cost curve at 10 %, 50 % and 100 % of the works (elapsed, works/s, RSS, CPU), peak RSS, and
// restarts on all the works — with the streaming list, with paged lists, and both again on a quiet hub.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTROLLER_LABEL, POLICIES_SYNCED_ANNOTATION } from '../../../src/core/metadatakeys.ts';
import { policiesSyncedAnnotation } from '../../../src/core/status/policiessynced.ts';
import { controllerLabelValue, readSpecHash } from '../../../src/core/works/manifestwork.ts';
import { readCrd } from '../../../src/kube/discovery.ts';
import { isGone, type KubeHttp } from '../../../src/kube/http.ts';
import { RESOURCES, collectionPath } from '../../../src/kube/resource.ts';
import { delta, waitQuiet } from '../../../testkit/counters.ts';
import { etcdAlarms, etcdDb, etcdQuotaBytes, etcdUrl } from '../../../testkit/etcd.ts';
import { AUTH_POLICIES, apply, gateway } from '../../../testkit/fixtures.ts';
import { hashes, setUpWorld, worksFor } from '../../../testkit/world.ts';
import { LIFTED_QPS, PS_COMPONENT, log, type Bench } from '../config.ts';
import { CpuWindow, controllerMetrics, metricValue, planePids, resetPeakRss, rssOf, startController, startupPass } from '../controller.ts';
import { machineInfo } from '../harness.ts';
import type { ScaleResult } from '../report.ts';
import { Tracker } from '../tracker.ts';
import { costCurve, watchStall } from '../fanoutwatch.ts';
import { fanoutWrites, report } from '../writes.ts';

/**
 * How long a quiet hub is waited for. The apiserver compacts etcd every 5 min, each time to the revision
 * it read at the previous tick: a revision is compacted 5 to 10 min after it was written (444 s in one
 * run, over 480 s in the next).
 */
const COMPACTION_TIMEOUT_MS = 12 * 60_000;

/**
 * Waits until the revision the works are at now is compacted (an exact-revision list of it answers 410
 * Gone): from then on the watch cache holds no snapshot to serve a paged list's continuations from. Returns
 * the time waited.
 */
async function waitCompacted(http: KubeHttp, timeoutMs: number): Promise<number> {
  const path = collectionPath(RESOURCES.manifestWorks);
  const now = await http.request<{ metadata: { resourceVersion: string } }>('GET', path, { query: { limit: 1 } });
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    try {
      await http.request('GET', path, { query: { limit: 1, resourceVersion: now.metadata.resourceVersion, resourceVersionMatch: 'Exact' } });
    } catch (err) {
      if (isGone(err)) return performance.now() - start;
      throw err;
    }
    await sleep(10_000);
  }
  throw new Error(`revision ${now.metadata.resourceVersion} not compacted within ${timeoutMs / 1000} s`);
}


export async function scale(bench: Bench, startedAt: Date): Promise<ScaleResult> {
  const { sandbox, kubeConfig, http } = bench;
  const { P, C, CONCURRENCY, FANOUT_TIMEOUT_MS, PASS_TIMEOUT_MS, QUIET_TIMEOUT_MS, root, runId, ns, className, controllerName } = bench.cfg;
  const N = P * C;
  const etcd = { url: await etcdUrl(sandbox), quotaBytes: etcdQuotaBytes(sandbox) };
  const alarms = await etcdAlarms(etcd.url);
  if (alarms.length > 0) {
    throw new Error(`etcd has alarms raised (${alarms.join(', ')}): every write would be refused; start the sandbox afresh (npx tsx testkit/sandbox/cli.ts down --root ${root} --purge)`);
  }
  const dbAtStart = await etcdDb(etcd.url);
  log(`etcd: database ${dbAtStart ? `${dbAtStart.inUseMiB.toFixed(0)} MiB in use of ${dbAtStart.dbMiB.toFixed(0)} MiB` : 'size unknown'}, quota ${(etcd.quotaBytes / 2 ** 20).toFixed(0)} MiB`);
  const { clusters, policies } = await setUpWorld(http, { clusters: C, policies: P, namespace: ns, className, controllerName, log, judged: true });
  const machine = await machineInfo(http);
  const apiserverPid = sandbox.process('kube-apiserver/hub').pid;

  const crdUid = (await readCrd(http, AUTH_POLICIES))?.uid;
  // Per policy, so that the harness never holds the P×C works themselves, only their hashes.
  const expected = new Map<string, string>();
  for (const p of policies) for (const [k, v] of hashes(worksFor([p], ns, clusters, controllerName, crdUid))) expected.set(k, v);
  const works = await new Tracker(http, RESOURCES.manifestWorks, { labelSelector: `${CONTROLLER_LABEL}=${controllerLabelValue(controllerName)}` }, readSpecHash).start();
  const annotations = await new Tracker(http, AUTH_POLICIES, { namespace: ns }, (p) => p.metadata.annotations?.[POLICIES_SYNCED_ANNOTATION]).start();
  const synced = new Map(policies.map((p) => [`${ns}/${p.metadata.name}`, policiesSyncedAnnotation(clusters.map((cluster) => ({ cluster, name: p.metadata.name, namespace: ns }))) ?? '']));
  // 10k / 50k / 100k of the full run; the same fractions of a smaller world.
  const checkpoints = [...new Set([Math.round(N / 10), Math.round(N / 2), N])].filter((k) => k > 0);
  let stall: ReturnType<typeof watchStall> | undefined;
  try {
    log('policy-sync: starting the controller');
    let controller = await startController(bench);
    const cold = await startupPass(controller, P, PASS_TIMEOUT_MS);
    const beforeFanout = (await waitQuiet(kubeConfig, { quietMs: 2_000, timeoutMs: QUIET_TIMEOUT_MS })).snapshot;
    const reconcilesBefore = metricValue(await controllerMetrics(controller), 'controller_runtime_reconcile_total', { controller: 'policy' });
    log(`policy-sync: ${P} inert policies reconciled; creating Gateway ${ns}/gw (checkpoints at ${checkpoints.join(', ')} works)`);
    // The hub's garbage collector (kube-controller-manager) watches every resource, the works too.
    const cpu = new CpuWindow({ ...planePids(sandbox), controller: controller.pid, harness: process.pid, 'controller-manager': sandbox.process('kube-controller-manager/hub').pid });
    // The apiserver's peak from here on, not over the sandbox's life (writing 5 to clear_refs resets VmHWM).
    const apiserverPeakSinceFanout = resetPeakRss(apiserverPid);
    let apiserverPeakMiB = 0;
    const start = performance.now();
    const allWorks = works.expect(expected, `${N} works with the expected spec-hash`, FANOUT_TIMEOUT_MS);
    const allAnnotated = annotations.expect(synced, `${P} policies annotated`, FANOUT_TIMEOUT_MS);
    // Read on the watch event that reaches the checkpoint: /proc at once, etcd's status over HTTP just after.
    const points = checkpoints.map((k) =>
      works.until(() => works.matched >= k, `${k} works`, FANOUT_TIMEOUT_MS).then(async (at) => {
        const apiserver = rssOf(apiserverPid);
        apiserverPeakMiB = Math.max(apiserverPeakMiB, apiserver.peakMiB);
        const point = { works: k, elapsedMs: at - start, controllerRssMiB: rssOf(controller.pid).rssMiB, cpuSeconds: cpu.end(), apiserverRssMiB: apiserver.rssMiB };
        const db = await etcdDb(etcd.url);
        log(`policy-sync: ${k} works at ${(point.elapsedMs / 1000).toFixed(1)} s, controller RSS ${point.controllerRssMiB.toFixed(0)} MiB, apiserver RSS ${point.apiserverRssMiB.toFixed(0)} MiB`);
        return { ...point, ...(db ? { etcdDbMiB: db.dbMiB, etcdDbInUseMiB: db.inUseMiB } : {}) };
      }),
    );
    // A fan-out whose works stop appearing fails in minutes rather than at the hour's timeout.
    stall = watchStall(works, N, 'works', controller.log, etcd.url);
    await apply(http, gateway(ns, 'gw', className, 'bench'));
    const ms = (await Promise.race([allWorks, stall.stalled])) - start;
    stall.stop();
    const annotatedMs = (await allAnnotated) - start;
    const cpuSeconds = cpu.end();
    const reached = await Promise.all(points);
    const curve = costCurve(reached);
    log(`policy-sync: ${N} works in ${(ms / 1000).toFixed(2)} s, ${P} policies annotated in ${(annotatedMs / 1000).toFixed(2)} s`);
    const afterFanout = await waitQuiet(kubeConfig, { quietMs: 2_000, timeoutMs: QUIET_TIMEOUT_MS });
    const reconciles = metricValue(await controllerMetrics(controller), 'controller_runtime_reconcile_total', { controller: 'policy' }) - reconcilesBefore;
    const fanoutRss = rssOf(controller.pid);
    const fanoutWritesReport = fanoutWrites(delta(beforeFanout, afterFanout.snapshot), afterFanout.quiet, N, P);

    // ---- restart on the P×C works ----
    await sandbox.remove(PS_COMPONENT, 15_000);
    const beforeRestart = (await waitQuiet(kubeConfig, { quietMs: 2_000, timeoutMs: QUIET_TIMEOUT_MS })).snapshot;
    log(`restart: starting the controller on ${N} works`);
    controller = await startController(bench);
    const pass = await startupPass(controller, P, PASS_TIMEOUT_MS);
    const afterRestart = await waitQuiet(kubeConfig, { quietMs: 2_000, timeoutMs: QUIET_TIMEOUT_MS });
    const restartRss = rssOf(controller.pid);
    apiserverPeakMiB = Math.max(apiserverPeakMiB, rssOf(apiserverPid).peakMiB);
    const db = await etcdDb(etcd.url);
    log(`restart: caches synced ${pass.cachesSyncedMs.toFixed(0)} ms, pass done ${pass.passMs.toFixed(0)} ms; peak RSS ${restartRss.peakMiB.toFixed(1)} MiB`);

    // ---- the same restart with paged lists, then both again on a quiet hub, for the reading ----
    // Right after the fan-out the apiserver's watch cache still holds snapshots of recent revisions, and
    // serves a paged list's continuations from them. On a quiet hub — no work written since the last etcd
    // compaction (every 5 min), as before most real restarts — it has none, and sends them to etcd.
    const restarts: NonNullable<ScaleResult['restarts']> = [];
    const restartAgain = async (label: string, args: string[]): Promise<void> => {
      await sandbox.remove(PS_COMPONENT, 15_000);
      await waitQuiet(kubeConfig, { quietMs: 2_000, timeoutMs: QUIET_TIMEOUT_MS });
      log(`restart (${label}): starting the controller on ${N} works`);
      controller = await startController(bench, undefined, args);
      const again = await startupPass(controller, P, PASS_TIMEOUT_MS);
      const rss = rssOf(controller.pid);
      restarts.push({ label, args, ...again, peakRssMiB: rss.peakMiB });
      log(`restart (${label}): caches synced ${again.cachesSyncedMs.toFixed(0)} ms, pass done ${again.passMs.toFixed(0)} ms; peak RSS ${rss.peakMiB.toFixed(1)} MiB`);
    };
    await restartAgain('paged lists', ['--no-watch-list']);
    await sandbox.remove(PS_COMPONENT, 15_000);
    // Measured in the reading only: a hub that does not become quiet in time loses these two, not the run.
    const compactedMs = await waitCompacted(http, COMPACTION_TIMEOUT_MS).catch((err: unknown) => {
      log(`quiet hub: ${String(err)}; its two restarts are not made`);
      return undefined;
    });
    if (compactedMs !== undefined) {
      log(`quiet hub: the works' last revision compacted after ${(compactedMs / 1000).toFixed(0)} s`);
      await restartAgain('quiet hub', []);
      await restartAgain('quiet hub, paged lists', ['--no-watch-list']);
    }
    return {
      version: 2,
      mode: 'scale',
      startedAt: startedAt.toISOString(),
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`,
      machine,
      params: { policies: P, clusters: C, concurrency: CONCURRENCY, qps: LIFTED_QPS, burst: LIFTED_QPS, runId },
      fanout: { ms, works: N, annotatedMs, reconciles, cpuSeconds, coldStartMs: { serving: cold.servingMs, cachesSynced: cold.cachesSyncedMs, pass: cold.passMs }, curve },
      writes: {
        fanout: fanoutWritesReport,
        restart: report(delta(beforeRestart, afterRestart.snapshot), {}, 0, afterRestart.quiet, { text: '= 0', ok: (w) => w.total === 0 }),
      },
      memory: { fanoutPeakRssMiB: fanoutRss.peakMiB, fanoutRssMiB: fanoutRss.rssMiB, restartPeakRssMiB: restartRss.peakMiB, restartRssMiB: restartRss.rssMiB, works: N },
      startup: pass,
      restarts,
      plane: { apiserverPeakRssMiB: apiserverPeakMiB, apiserverPeakSinceFanout, ...(db ? { etcdDbMiB: db.dbMiB, etcdDbInUseMiB: db.inUseMiB } : {}), etcdQuotaMiB: etcd.quotaBytes / 2 ** 20 },
    };
  } finally {
    stall?.stop();
    await works.stop();
    await annotations.stop();
  }
}
