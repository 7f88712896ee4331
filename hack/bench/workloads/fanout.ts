// Workload 1, fan-out: P policies × C clusters, timed from Gateway `gw` created to all P×C works with
// their spec-hash, against (a) a bare client writing the same works with as many requests in flight as the
// controller may have — server-side applied once (for the reading), then POSTed in each round — and (b) OCM's
// own ManifestWorkReplicaSet controller (workloads/ocm.ts), in alternating rounds whose median ratio is the
// headline. The last round's controller and works go on to the change and the restart. The variants workload
// (variants.ts) runs the same rounds on a world whose copies differ per cluster, against bare creates alone.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CONTROLLER_LABEL, POLICIES_SYNCED_ANNOTATION, STATUS_ANNOTATION } from '../../../src/core/metadatakeys.ts';
import { policiesSyncedAnnotation } from '../../../src/core/status/policiessynced.ts';
import { controllerLabelValue, readSpecHash, type ManifestWork } from '../../../src/core/works/manifestwork.ts';
import { readCrd } from '../../../src/kube/discovery.ts';
import { KubeHttp } from '../../../src/kube/http.ts';
import { RESOURCES, collectionPath } from '../../../src/kube/resource.ts';
import { mergePatch, serverSideApply } from '../../../src/kube/writes.ts';
import { delta, waitQuiet } from '../../../testkit/counters.ts';
import { AUTH_POLICIES, apply, gateway } from '../../../testkit/fixtures.ts';
import { repoRoot } from '../../../testkit/sandbox/layout.ts';
import { FIELD_MANAGER, deleteIfPresent, deleteWorks, hashes, pool } from '../../../testkit/world.ts';
import { PS_COMPONENT, log, type Bench, type ResultDraft } from '../config.ts';
import { CpuWindow, controllerMetrics, metricValue, planePids, rssOf, startController, startupPass, type Controller } from '../controller.ts';
import { median, type BareRound, type BenchResult, type FanoutResult, type FanoutRound, type WriteReport } from '../report.ts';
import { Tracker } from '../tracker.ts';
import { fanoutWrites, report } from '../writes.ts';
import { ocmBaseline } from './ocm.ts';
import { worldWorks, type World } from './world.ts';

/** Watches on policy-sync's works and the policies' policies-synced annotations, with what they must reach. */
export interface PolicySyncTrackers {
  works: Tracker;
  annotations: Tracker;
  /** `cluster/name` → spec-hash of each work policy-sync must write. */
  expected: Map<string, string>;
  synced: Map<string, string>;
  /** The AuthPolicy CRD's uid, which the works' source-ref records. */
  crdUid: string | undefined;
  stop(): Promise<void>;
}

/** The label selector of the measured controller's works. */
export function policySyncSelector(bench: Bench): string {
  return `${CONTROLLER_LABEL}=${controllerLabelValue(bench.cfg.controllerName)}`;
}

export async function policySyncTrackers(bench: Bench, world: World): Promise<PolicySyncTrackers> {
  const { http } = bench;
  const { ns, controllerName } = bench.cfg;
  const { clusters, policies } = world;
  const psSelector = policySyncSelector(bench);
  const crdUid = (await readCrd(http, AUTH_POLICIES))?.uid;
  const expected = hashes(worldWorks(world, ns, controllerName, crdUid));
  const synced = new Map(policies.map((p) => [`${ns}/${p.metadata.name}`, policiesSyncedAnnotation(clusters.map((cluster) => ({ cluster, name: p.metadata.name, namespace: ns }))) ?? '']));
  const works = await new Tracker(http, RESOURCES.manifestWorks, { labelSelector: psSelector }, readSpecHash).start();
  const annotations = await new Tracker(http, AUTH_POLICIES, { namespace: ns }, (p) => p.metadata.annotations?.[POLICIES_SYNCED_ANNOTATION]).start();
  return {
    works,
    annotations,
    expected,
    synced,
    crdUid,
    stop: async () => {
      await works.stop();
      await annotations.stop();
    },
  };
}

/** Where the controller of `phase` writes its CPU profile (with --cpu-prof), created. */
export function profileDir(bench: Bench, phase: string): string | undefined {
  if (!bench.cfg.cpuProf) return undefined;
  const dir = join(repoRoot, '.local', 'bench', `cpuprofile-${bench.cfg.runId}`, phase);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface FanoutOutcome {
  controller: Controller;
  rss: { peakMiB: number; rssMiB: number };
  after: Awaited<ReturnType<typeof waitQuiet>>;
  /** Each round's bare creates and policy-sync, with OCM's when it ran. */
  rounds: (BareRound | FanoutRound)[];
}

/** The baselines a fan-out runs beside bare creates: the bare client's SSA (once) and OCM (each round). */
export interface Baselines {
  ssa: boolean;
  ocm: boolean;
}

/**
 * The rounds of the fan-out; fills in `result.fanout` and `result.writes` (bare, bareCreate, fanout).
 * `baselines`: all by default; OCM's replica sets cannot give each cluster a copy of its own.
 */
export async function fanout(bench: Bench, world: World, trackers: PolicySyncTrackers, result: ResultDraft, baselines: Baselines = { ssa: true, ocm: true }): Promise<FanoutOutcome> {
  const { sandbox, kubeConfig, http, cleanupHttp } = bench;
  const { P, C, ROUNDS, FANOUT_TIMEOUT_MS, ns, bareName } = bench.cfg;
  const { clusters } = world;
  const N = P * C;
  const bareInFlight = bench.cfg.BARE_IN_FLIGHT;
  const skipBaselines = bench.cfg.skipBaselines;
  const bareSelector = `${CONTROLLER_LABEL}=${controllerLabelValue(bareName)}`;
  const bareWorks = worldWorks(world, ns, bareName);
  const bareTracker = skipBaselines ? undefined : await new Tracker(http, RESOURCES.manifestWorks, { labelSelector: bareSelector }, readSpecHash).start();
  const bare = new KubeHttp(kubeConfig, { maxInFlight: bareInFlight });
  /** The same works as policy-sync's, BARE_IN_FLIGHT under way; then deleted and gone. */
  const bareFanout = async (mode: 'apply' | 'create', label: string): Promise<{ fanout: FanoutResult & { requestsMs: number }; writes: WriteReport }> => {
    const write = mode === 'apply'
      ? (w: ManifestWork) => serverSideApply(bare, RESOURCES.manifestWorks, w)
      : (w: ManifestWork) => bare.request('POST', collectionPath(RESOURCES.manifestWorks, w.metadata.namespace), { query: { fieldManager: FIELD_MANAGER }, body: w });
    const before = (await waitQuiet(kubeConfig)).snapshot;
    log(`${label}: ${N} works, ${bareInFlight} in flight`);
    const cpu = new CpuWindow({ ...planePids(sandbox), harness: process.pid }, sandbox.pids());
    const start = performance.now();
    const seen = bareTracker!.expect(hashes(bareWorks), `${N} bare works`, FANOUT_TIMEOUT_MS);
    await pool(bareWorks, bareInFlight, write);
    const requestsMs = performance.now() - start;
    const ms = (await seen) - start;
    const cpuSeconds = cpu.end();
    const after = await waitQuiet(kubeConfig);
    log(`${label}: ${(ms / 1000).toFixed(2)} s`);
    await deleteWorks(cleanupHttp, clusters, bareSelector, log);
    await bareTracker!.until(() => bareTracker!.seen.size === 0, 'the bare works to go', 300_000);
    return { fanout: { ms, works: N, requestsMs, cpuSeconds }, writes: report(delta(before, after.snapshot), {}, N, after.quiet) };
  };

  const fanoutProfile = profileDir(bench, 'fanout');
  const rounds: FanoutOutcome['rounds'] = [];
  try {
    if (!skipBaselines && baselines.ssa) {
      const ssa = await bareFanout('apply', 'bare client (apply)');
      [result.fanout.bare, result.writes.bare] = [ssa.fanout, ssa.writes];
    }
    const roundCount = skipBaselines ? 1 : ROUNDS;
    let ps: PolicySyncLeg | undefined;
    for (let round = 1; round <= roundCount; round++) {
      const last = round === roundCount;
      const label = (what: string): string => (roundCount > 1 ? `${what}, round ${round}/${roundCount}` : what);
      if (!skipBaselines) {
        if (baselines.ocm) result.fanout.ocm = await ocmBaseline(bench, world, label('OCM'));
        const bareCreates = await bareFanout('create', label('bare client (create)'));
        [result.fanout.bareCreate, result.writes.bareCreate] = [bareCreates.fanout, bareCreates.writes];
      }
      // The last round's world (its controller, its works) goes on to the change, the restart and the feedback.
      ps = await policySyncLeg(bench, world, trackers, label('policy-sync'), { profile: last ? fanoutProfile : undefined });
      const [creates, ocm] = [result.fanout.bareCreate, result.fanout.ocm];
      if (creates) {
        const apiserverCpuSeconds = { bareCreate: creates.cpuSeconds.apiserver ?? NaN, policySync: ps.fanout.cpuSeconds.apiserver ?? NaN };
        const outsideCpuSeconds = { bareCreate: creates.cpuSeconds.outside ?? NaN, policySync: ps.fanout.cpuSeconds.outside ?? NaN };
        const policySyncMs = ps.fanout.ms;
        const bareRound: BareRound = { bareCreateMs: creates.ms, policySyncMs, ratio: policySyncMs / creates.ms, apiserverCpuSeconds, outsideCpuSeconds };
        rounds.push(ocm ? { ...bareRound, ocmMs: ocm.ms, ratioOcm: policySyncMs / ocm.ms } : bareRound);
      }
      if (!last) await resetPolicySync(bench, world, trackers.works);
    }
    result.fanout.policySync = ps!.fanout;
    result.writes.fanout = ps!.writes;
    return { controller: ps!.controller, rss: ps!.rss, after: ps!.after, rounds };
  } finally {
    await bareTracker?.stop();
    bare.destroy();
  }
}

/** What one policy-sync fan-out leg measured, its controller left running on the works. */
export interface PolicySyncLeg {
  controller: Controller;
  fanout: BenchResult['fanout']['policySync'];
  rss: { peakMiB: number; rssMiB: number };
  writes: WriteReport;
  after: Awaited<ReturnType<typeof waitQuiet>>;
}

export interface LegOptions {
  /** Where the controller writes its CPU profile (--cpu-prof). */
  profile?: string | undefined;
  /** More `policy-sync hub` flags. */
  extraArgs?: string[];
  /** Run after the controller's first pass and before the clock starts. */
  beforeClock?: (controller: Controller) => Promise<void>;
}

/**
 * policy-sync's fan-out: the controller started on the P inert policies and its first pass done, then
 * Gateway `gw` created; timed to all P×C works with their spec-hash (and all P annotated).
 */
export async function policySyncLeg(bench: Bench, world: World, trackers: PolicySyncTrackers, label: string, o: LegOptions = {}): Promise<PolicySyncLeg> {
  const { sandbox, kubeConfig, http } = bench;
  const { P, C, FANOUT_TIMEOUT_MS, PASS_TIMEOUT_MS, ns, className } = bench.cfg;
  const { works, annotations, expected, synced } = trackers;
  const N = P * C;
  log(`${label}: starting the controller${o.profile ? ' (with --cpu-prof)' : ''}`);
  const controller = await startController(bench, o.profile, o.extraArgs);
  const cold = await startupPass(controller, P, PASS_TIMEOUT_MS);
  await o.beforeClock?.(controller);
  const before = (await waitQuiet(kubeConfig)).snapshot;
  const reconcilesBefore = metricValue(await controllerMetrics(controller), 'controller_runtime_reconcile_total', { controller: 'policy' });
  log(`${label}: ${P} inert policies reconciled; creating Gateway ${ns}/gw`);
  const cpu = new CpuWindow({ ...planePids(sandbox), controller: controller.pid, harness: process.pid }, sandbox.pids());
  const start = performance.now();
  const allWorks = works.expect(expected, `${N} works with the expected spec-hash`, FANOUT_TIMEOUT_MS);
  const allAnnotated = annotations.expect(synced, `${P} policies annotated`, FANOUT_TIMEOUT_MS);
  await apply(http, gateway(ns, 'gw', className, 'bench'));
  const ms = (await allWorks) - start;
  const annotatedMs = (await allAnnotated) - start;
  const cpuSeconds = cpu.end();
  log(`${label}: ${N} works in ${(ms / 1000).toFixed(2)} s, ${P} policies annotated in ${(annotatedMs / 1000).toFixed(2)} s`);
  const after = await waitQuiet(kubeConfig);
  const reconciles = metricValue(await controllerMetrics(controller), 'controller_runtime_reconcile_total', { controller: 'policy' }) - reconcilesBefore;
  const fanout: BenchResult['fanout']['policySync'] = { ms, works: N, annotatedMs, coldStartMs: { serving: cold.servingMs, cachesSynced: cold.cachesSyncedMs, pass: cold.passMs }, cpuSeconds, reconciles };
  return { controller, fanout, rss: rssOf(controller.pid), writes: fanoutWrites(delta(before, after.snapshot), after.quiet, N, P, 1, world.variants ?? 0), after };
}

/**
 * Back to the state a round starts from, with the controller stopped (so that it writes nothing meanwhile): no
 * Gateway `gw`, no works (`works` watches them go), and the policies without the annotations it wrote.
 */
export async function resetPolicySync(bench: Bench, world: World, works: Tracker): Promise<void> {
  const { sandbox, http, cleanupHttp } = bench;
  const { ns } = bench.cfg;
  await sandbox.remove(PS_COMPONENT, 15_000);
  await deleteIfPresent(http, RESOURCES.gateways, ns, 'gw');
  await deleteWorks(cleanupHttp, world.clusters, policySyncSelector(bench), log);
  const unannotated = { metadata: { annotations: { [POLICIES_SYNCED_ANNOTATION]: null, [STATUS_ANNOTATION]: null } } };
  await pool(world.policies, 16, (p) => mergePatch(http, AUTH_POLICIES, ns, p.metadata.name, unannotated, { fieldManager: FIELD_MANAGER }));
  await works.until(() => works.seen.size === 0, 'the works of the round to go', 300_000);
}

/** The headline ratios: each the median of the rounds' (rounds with OCM's fan-out). */
export function ratios(result: ResultDraft, allRounds: readonly (BareRound | FanoutRound)[]): void {
  const f = result.fanout;
  const rounds = allRounds.filter((r): r is FanoutRound => 'ocmMs' in r);
  if (rounds.length > 0) {
    f.rounds = [...rounds];
    f.ratioBareCreate = median(rounds.map((r) => r.ratio));
    f.ratioOcm = median(rounds.map((r) => r.ratioOcm));
    // Against SSA, measured once (for the reading): policy-sync's median round.
    if (f.bare) f.ratioBareSsa = median(rounds.map((r) => r.policySyncMs)) / f.bare.ms;
  }
}
