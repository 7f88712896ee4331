// Workload 5, a progressive rollout (docs/design/rollout.md#rolling-out-a-change): one hub policy under a class
// whose params roll out `Progressive` (maxConcurrency 1, minSuccessTime S, success when Enforced), its spec
// edited once: timed from the edit to its status annotation saying `rollout.state: Complete` at the new
// revision, against the waits the strategy asks for (W waves × S), with each wave's part; and the same edit of
// a policy under `All` (the default) in the same run. The bench clusters have no work agent, so this workload
// plays it for their works (WorkAgent): on a work at a revision its status does not report yet, it writes
// the ManifestWork status the OCM agent would — Applied at the work's generation, the copy's feedback at that
// revision, Enforced=True — which is what the controller counts as "judged this revision and succeeded".
import { performance } from 'node:perf_hooks';
import { parseDuration } from '../../../src/core/k8s/duration.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { SOURCE_LABEL, STATUS_ANNOTATION } from '../../../src/core/metadatakeys.ts';
import { judgedRevision } from '../../../src/core/rollout/plan.ts';
import { copyRevisionTag, workCopy, workRevision } from '../../../src/core/works/revision.ts';
import { readPolicyStatus } from '../../../src/core/status/annotation.ts';
import type { PolicyStatus } from '../../../src/core/status/policystatus.ts';
import { readClusterFeedback } from '../../../src/core/works/feedback.ts';
import { sourceHash } from '../../../src/core/works/manifestwork.ts';
import { isNotFound, type KubeHttp } from '../../../src/kube/http.ts';
import { RESOURCES } from '../../../src/kube/resource.ts';
import { Watcher } from '../../../src/kube/watcher.ts';
import { mergePatch } from '../../../src/kube/writes.ts';
import { delta, waitQuiet } from '../../../testkit/counters.ts';
import { eventually } from '../../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, gateway, gatewayClass, get, paramsConfigMap } from '../../../testkit/fixtures.ts';
import { BENCH_LABEL } from '../../../testkit/world.ts';
import { log, type Bench } from '../config.ts';
import type { RolloutEdit, RolloutResult, RolloutWave } from '../report.ts';
import { Tracker } from '../tracker.ts';
import { report, workWrites } from '../writes.ts';

const PROGRESSIVE = 'rollout-progressive';
const ALL = 'rollout-all';
/** The field manager of the status this workload writes in the agent's place. */
const AGENT_MANAGER = 'work-agent';
const OWN_STATUS_WRITES = 'PATCH work.open-cluster-management.io/manifestworks/status';
const OWN_POLICY_APPLY = 'APPLY kuadrant.io/authpolicies';

/** When the agent first saw a cluster's work at a revision, and when its status for it was written. */
interface Served {
  seenAt: number;
  statusAt?: number;
}

/**
 * The OCM work agent of the bench clusters, for the works of one hub policy: on every work whose status does
 * not report the revision its copy carries at the work's generation, one status write (Applied and Available
 * at that generation; the copy's feedback at that revision, Accepted and Enforced True). Its spoke copy's
 * generation is taken to be the revision (one spec change each).
 */
class WorkAgent {
  /** cluster → revision → times (performance.now()). */
  readonly served = new Map<string, Map<number, Served>>();
  /** cluster → the work as last seen. */
  readonly works = new Map<string, KubeObject>();
  /** cluster → the controller's writes of its work seen (a new generation, or new labels or annotations). */
  readonly writesSeen = new Map<string, number>();
  statusWrites = 0;
  readonly failures: string[] = [];
  private readonly watcher: Watcher;
  private readonly inFlight = new Set<string>();
  /** `cluster@generation` written once: a status that does not count as judged is not written again. */
  private readonly written = new Set<string>();
  private goals: { met: () => boolean; resolve: (at: number) => void }[] = [];

  constructor(
    private readonly http: KubeHttp,
    policyName: string,
    ns: string,
  ) {
    const labelSelector = `${SOURCE_LABEL}=${sourceHash(AUTH_POLICIES, ns, policyName)}`;
    this.watcher = new Watcher(http, RESOURCES.manifestWorks, {
      replace: (items) => {
        this.works.clear();
        for (const w of items) this.seen(w);
      },
      event: (type, w) => {
        if (type === 'DELETED') this.works.delete(w.metadata.namespace ?? '');
        else this.seen(w);
      },
    }, { labelSelector });
  }

  async start(): Promise<this> {
    this.watcher.start();
    while (!this.watcher.synced) await new Promise((r) => setTimeout(r, 20));
    return this;
  }

  stop(): Promise<void> {
    return this.watcher.stop();
  }

  /** The revision each cluster's work places now. */
  revisions(): Map<string, number | undefined> {
    return new Map([...this.works].map(([cluster, w]) => [cluster, workRevision(w)]));
  }

  /** Resolves with the time (performance.now()) at which `met()` first holds after a watch event or a status write. */
  until(met: () => boolean, what: string, timeoutMs: number): Promise<number> {
    if (met()) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.goals = this.goals.filter((g) => g !== goal);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const goal = { met, resolve: (at: number) => (clearTimeout(timer), resolve(at)) };
      this.goals.push(goal);
    });
  }

  private seen(work: KubeObject): void {
    const at = performance.now();
    const cluster = work.metadata.namespace ?? '';
    const before = this.works.get(cluster);
    if (before && (before.metadata.generation !== work.metadata.generation || !sameMetadata(before, work))) {
      this.writesSeen.set(cluster, (this.writesSeen.get(cluster) ?? 0) + 1);
    }
    this.works.set(cluster, work);
    const revision = workRevision(work);
    if (revision !== undefined) {
      const byRevision = this.served.get(cluster) ?? new Map<number, Served>();
      this.served.set(cluster, byRevision);
      if (!byRevision.has(revision)) byRevision.set(revision, { seenAt: at });
    }
    void this.serve(cluster);
    this.check();
  }

  private async serve(cluster: string): Promise<void> {
    if (this.inFlight.has(cluster)) return; // served again when the write in flight ends
    const work = this.works.get(cluster);
    const revision = workRevision(work);
    const generation = work?.metadata.generation;
    if (!work || revision === undefined || typeof generation !== 'number') return;
    if (judgedRevision(readClusterFeedback(work), revision, copyRevisionTag(workCopy(work)))) return;
    const once = `${cluster}@${generation}`;
    if (this.written.has(once)) return;
    this.written.add(once);
    this.inFlight.add(cluster);
    try {
      await mergePatch(this.http, RESOURCES.manifestWorks, cluster, work.metadata.name, workStatus(work, revision, generation), {
        subresource: 'status',
        fieldManager: AGENT_MANAGER,
        discardResponse: true,
      });
      this.statusWrites += 1;
      const served = this.served.get(cluster)?.get(revision);
      if (served && served.statusAt === undefined) served.statusAt = performance.now();
    } catch (err) {
      if (!isNotFound(err)) this.failures.push(`${cluster}/${work.metadata.name} at generation ${generation}: ${String(err)}`);
    } finally {
      this.inFlight.delete(cluster);
      if (this.works.get(cluster) !== work) void this.serve(cluster);
      this.check();
    }
  }

  private check(): void {
    if (this.goals.length === 0) return;
    const at = performance.now();
    this.goals = this.goals.filter((g) => {
      if (!g.met()) return true;
      g.resolve(at);
      return false;
    });
  }
}

function sameMetadata(a: KubeObject, b: KubeObject): boolean {
  const { labels: la, annotations: aa } = a.metadata;
  const { labels: lb, annotations: ab } = b.metadata;
  return JSON.stringify([la, aa]) === JSON.stringify([lb, ab]);
}

/** Each cluster's work writes seen since `before` (a copy of writesSeen). */
function writesSince(agent: WorkAgent, clusters: readonly string[], before: ReadonlyMap<string, number>): Record<string, number> {
  return Object.fromEntries(clusters.map((c) => [c, (agent.writesSeen.get(c) ?? 0) - (before.get(c) ?? 0)]));
}

/** The status the OCM work agent writes for a work whose copy is applied and judged Enforced at `revision`. */
function workStatus(work: KubeObject, revision: number, generation: number): { status: unknown } {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const copy = workCopy(work)!;
  const condition = (type: string, reason: string, message: string, observedGeneration?: number) => ({
    type,
    status: 'True',
    reason,
    message,
    lastTransitionTime: now,
    ...(observedGeneration === undefined ? {} : { observedGeneration }),
  });
  const spokeGeneration = revision;
  const text = (name: string, value: string) => ({ name, fieldValue: { type: 'String', string: value } });
  const integer = (name: string, value: number) => ({ name, fieldValue: { type: 'Integer', integer: value } });
  const [group, version] = copy.apiVersion.includes('/') ? copy.apiVersion.split('/') : ['', copy.apiVersion];
  return {
    status: {
      conditions: [
        condition('Applied', 'AppliedManifestWorkComplete', 'Apply manifest work complete', generation),
        condition('Available', 'ResourcesAvailable', 'All resources are available', generation),
      ],
      resourceStatus: {
        manifests: [
          {
            resourceMeta: { ordinal: 0, group, version, kind: copy.kind, resource: AUTH_POLICIES.resource, name: copy.metadata.name, namespace: copy.metadata.namespace ?? '' },
            conditions: [
              condition('Applied', 'AppliedManifestComplete', 'Apply manifest complete'),
              condition('Available', 'ResourceAvailable', 'Resource is available'),
              condition('StatusFeedbackSynced', 'StatusFeedbackSynced', ''),
            ],
            statusFeedback: {
              values: [
                integer('generation', spokeGeneration),
                text('revision', String(revision)),
                text('acceptedStatus', 'True'),
                text('acceptedReason', 'Accepted'),
                text('acceptedMessage', 'AuthPolicy has been accepted'),
                text('enforcedStatus', 'True'),
                text('enforcedReason', 'Enforced'),
                text('enforcedMessage', `AuthPolicy has been successfully enforced (revision ${revision})`),
                integer('enforcedGeneration', spokeGeneration),
              ],
            },
          },
        ],
      },
    },
  };
}

/** The spec edit: a new revision of the policy. */
function edited(ns: string, name: string, gw: string, tag: string): KubeObject {
  return authPolicy(ns, name, gw, { rules: { authorization: { deny: { opa: { rego: `allow = input.bench == "${tag}"` } } } } });
}

function statusOf(tracker: Tracker, key: string): PolicyStatus | undefined {
  return readPolicyStatus(tracker.seen.get(key));
}

/** Every one of `clusters` shown at `revision` (and, with `enforced`, Enforced there with a verdict on it). */
function allShown(status: PolicyStatus | undefined, clusters: readonly string[], revision: number, enforced: boolean): boolean {
  return clusters.every((c) => {
    const s = status?.clusters?.[c];
    return s?.revision === revision && (!enforced || (s.state === 'Enforced' && s.upToDate));
  });
}

/** Workload 5; `changeMs` is workload 2b's (one policy of the fan-out changed), for the reading. */
export async function rollout(bench: Bench, clusters: readonly string[], changeMs: number | undefined): Promise<RolloutResult> {
  const { kubeConfig, http } = bench;
  const { ns, runId, controllerName, rolloutClassName, ROLLOUT_MIN_SUCCESS, ROLLOUT_MAX_CONCURRENCY } = bench.cfg;
  const C = clusters.length;
  const S = parseDuration(ROLLOUT_MIN_SUCCESS)!;
  const W = Math.ceil(C / ROLLOUT_MAX_CONCURRENCY);
  const strategy = { type: 'Progressive', progressive: { maxConcurrency: String(ROLLOUT_MAX_CONCURRENCY), minSuccessTime: ROLLOUT_MIN_SUCCESS, successWhen: 'Enforced' } };
  const timeoutMs = W * S + 120_000;

  // The Progressive class, its Gateway placed on the bench clusters; the All policy goes under the fan-out's class.
  await apply(http, paramsConfigMap(ns, 'params-rollout', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }], rolloutStrategy: strategy }));
  const cls = gatewayClass(rolloutClassName, { namespace: ns, name: 'params-rollout' }, controllerName);
  cls.metadata.labels = { [BENCH_LABEL]: 'run' };
  await apply(http, cls);
  // Its params read before its policy exists: a policy of a class not read yet would be placed as All.
  await eventually(async () => {
    const c = await get(http, RESOURCES.gatewayClasses, undefined, rolloutClassName);
    const conditions = (c?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    return conditions.some((x) => x.type === 'Accepted' && x.status === 'True');
  }, { what: `GatewayClass ${rolloutClassName} accepted`, timeoutMs: 60_000 });
  await apply(http, gateway(ns, 'gw-rollout', rolloutClassName, 'bench'));

  const agents = { progressive: await new WorkAgent(http, PROGRESSIVE, ns).start(), all: await new WorkAgent(http, ALL, ns).start() };
  const derive = (p: KubeObject): string | undefined => p.metadata.annotations?.[STATUS_ANNOTATION];
  const trackers = {
    progressive: await new Tracker(http, AUTH_POLICIES, { namespace: ns, fieldSelector: `metadata.name=${PROGRESSIVE}` }, derive).start(),
    all: await new Tracker(http, AUTH_POLICIES, { namespace: ns, fieldSelector: `metadata.name=${ALL}` }, derive).start(),
  };
  const keys = { progressive: `${ns}/${PROGRESSIVE}`, all: `${ns}/${ALL}` };
  const agentWrites = (): number => agents.progressive.statusWrites + agents.all.statusWrites;
  try {
    // Revision 1 of both, rolled out (the Progressive one wave by wave too: a new policy waits for its wave).
    log(`rollout: creating ${PROGRESSIVE} (Progressive: maxConcurrency ${ROLLOUT_MAX_CONCURRENCY}, minSuccessTime ${ROLLOUT_MIN_SUCCESS}; ${W} waves) and ${ALL} (All)`);
    const first = {
      progressive: (await apply(http, authPolicy(ns, PROGRESSIVE, 'gw-rollout'))).metadata.generation!,
      all: (await apply(http, authPolicy(ns, ALL, 'gw'))).metadata.generation!,
    };
    await trackers.progressive.until(() => {
      const r = statusOf(trackers.progressive, keys.progressive)?.rollout;
      return r?.state === 'Complete' && r.revision === first.progressive;
    }, `${PROGRESSIVE} rolled out at revision ${first.progressive}`, timeoutMs);
    await trackers.all.until(() => allShown(statusOf(trackers.all, keys.all), clusters, first.all, true), `${ALL} enforced at revision ${first.all}`, timeoutMs);

    // ---- the edit under All ----
    let before = (await waitQuiet(kubeConfig)).snapshot;
    let writesBefore = agentWrites();
    const allSeenBefore = new Map(agents.all.writesSeen);
    const allRevision = first.all + 1;
    let start = performance.now();
    const allWorks = agents.all.until(() => clusters.every((c) => agents.all.revisions().get(c) === allRevision), `every work of ${ALL} at revision ${allRevision}`, timeoutMs);
    const allStatus = trackers.all.until(() => allShown(statusOf(trackers.all, keys.all), clusters, allRevision, false), `${ALL}'s status at revision ${allRevision}`, timeoutMs);
    const allEnforced = trackers.all.until(() => allShown(statusOf(trackers.all, keys.all), clusters, allRevision, true), `${ALL} enforced at revision ${allRevision}`, timeoutMs);
    const allApplied = await apply(http, edited(ns, ALL, 'gw', `${runId}-all`));
    if (allApplied.metadata.generation !== allRevision) throw new Error(`${ALL}: generation ${allApplied.metadata.generation} after the edit, expected ${allRevision}`);
    const [allWorksAt, allStatusAt, allEnforcedAt] = await Promise.all([allWorks, allStatus, allEnforced]);
    let after = await waitQuiet(kubeConfig);
    const allPerCluster = writesSince(agents.all, clusters, allSeenBefore);
    const allWrites = report(delta(before, after.snapshot), { [OWN_POLICY_APPLY]: 1, [OWN_STATUS_WRITES]: agentWrites() - writesBefore }, C, after.quiet, {
      text: `${C} work writes, one a cluster`,
      ok: (w) => workWrites(w) === C && Object.values(allPerCluster).every((n) => n === 1),
    });
    const all: RolloutResult['all'] = {
      revision: allRevision,
      worksMs: allWorksAt - start,
      statusMs: allStatusAt - start,
      enforcedMs: allEnforcedAt - start,
      workWrites: workWrites(allWrites),
      writesPerCluster: allPerCluster,
      writes: allWrites,
    };
    log(`rollout: All: every work at revision ${allRevision} in ${all.worksMs.toFixed(0)} ms, shown in ${all.statusMs.toFixed(0)} ms, enforced in ${all.enforcedMs.toFixed(0)} ms; ${all.workWrites} work writes`);

    // ---- the same edit under Progressive ----
    // The counters the All window ended on, still for 2 s: the Progressive window starts from them.
    before = after.snapshot;
    writesBefore = agentWrites();
    const seenBefore = new Map(agents.progressive.writesSeen);
    const R = first.progressive + 1;
    start = performance.now();
    const complete = trackers.progressive.until(() => {
      const r = statusOf(trackers.progressive, keys.progressive)?.rollout;
      return r?.state === 'Complete' && r.revision === R;
    }, `${PROGRESSIVE} rolled out at revision ${R}`, timeoutMs);
    const applied = await apply(http, edited(ns, PROGRESSIVE, 'gw-rollout', `${runId}-progressive`));
    if (applied.metadata.generation !== R) throw new Error(`${PROGRESSIVE}: generation ${applied.metadata.generation} after the edit, expected ${R}`);
    const completeAt = await complete;
    const final = statusOf(trackers.progressive, keys.progressive)!;
    after = await waitQuiet(kubeConfig);
    const perCluster = writesSince(agents.progressive, clusters, seenBefore);
    const writes = report(delta(before, after.snapshot), { [OWN_POLICY_APPLY]: 1, [OWN_STATUS_WRITES]: agentWrites() - writesBefore }, C, after.quiet, {
      text: `${C} work writes, one a cluster`,
      ok: (w) => workWrites(w) === C && Object.values(perCluster).every((n) => n === 1),
    });
    if (agents.progressive.failures.length + agents.all.failures.length > 0) {
      throw new Error(`the bench's work agent failed: ${[...agents.progressive.failures, ...agents.all.failures].join('; ')}`);
    }

    // Each wave: its works at R seen, their status written, the next wave's works (or Complete) seen.
    const atR = clusters.map((cluster) => ({ cluster, ...agents.progressive.served.get(cluster)?.get(R) }));
    const missing = atR.filter((c) => c.seenAt === undefined || c.statusAt === undefined).map((c) => c.cluster);
    if (missing.length > 0) throw new Error(`${PROGRESSIVE} complete at revision ${R}, but the agent did not serve revision ${R} on ${missing.join(', ')}`);
    const order = [...atR].sort((a, b) => a.seenAt! - b.seenAt!);
    const expectedOrder = [...clusters].sort();
    const waves: RolloutWave[] = [];
    for (let i = 0; i < order.length; i += ROLLOUT_MAX_CONCURRENCY) {
      const wave = order.slice(i, i + ROLLOUT_MAX_CONCURRENCY);
      const writtenMs = Math.max(...wave.map((c) => c.seenAt!)) - start;
      const statusMs = Math.max(...wave.map((c) => c.statusAt!)) - start;
      const next = order.slice(i + ROLLOUT_MAX_CONCURRENCY, i + 2 * ROLLOUT_MAX_CONCURRENCY);
      const nextMs = (next.length > 0 ? Math.min(...next.map((c) => c.seenAt!)) : completeAt) - start;
      waves.push({ clusters: wave.map((c) => c.cluster), writtenMs, statusMs, nextMs, advanceMs: nextMs - statusMs - S });
    }
    const totalMs = completeAt - start;
    const waitsMs = W * S;
    const progressive: RolloutEdit = {
      revision: R,
      waves: final.rollout?.waves ?? NaN,
      totalMs,
      waitsMs,
      overheadMs: totalMs - waitsMs,
      overheadPerWaveMs: (totalMs - waitsMs) / W,
      firstWrittenMs: waves[0]!.writtenMs,
      perWave: waves,
      inOrder: order.map((c) => c.cluster).join(',') === expectedOrder.join(','),
      workWrites: workWrites(writes),
      writesPerCluster: perCluster,
      writes,
    };
    log(
      `rollout: Progressive: Complete at revision ${R} in ${(totalMs / 1000).toFixed(2)} s = ${W} × ${ROLLOUT_MIN_SUCCESS} + ${progressive.overheadMs.toFixed(0)} ms ` +
        `(${progressive.overheadPerWaveMs.toFixed(0)} ms a wave; waves after the soak: ${waves.map((w) => w.advanceMs.toFixed(0)).join(', ')} ms); ${progressive.workWrites} work writes`,
    );
    if (progressive.waves !== W) log(`rollout: the status says ${progressive.waves} waves, ${W} expected`);
    if (!progressive.inOrder) log(`rollout: waves reached ${order.map((c) => c.cluster).join(', ')}, expected ${expectedOrder.join(', ')}`);
    return {
      clusters: C,
      strategy: { maxConcurrency: String(ROLLOUT_MAX_CONCURRENCY), minSuccessTime: ROLLOUT_MIN_SUCCESS, successWhen: 'Enforced' },
      minSuccessTimeMs: S,
      expectedWaves: W,
      progressive,
      all,
      ...(changeMs === undefined ? {} : { changeMs }),
      ratioToWaits: totalMs / waitsMs,
      overheadPerWaveToAll: progressive.overheadPerWaveMs / all.enforcedMs,
    };
  } finally {
    await agents.progressive.stop();
    await agents.all.stop();
    await trackers.progressive.stop();
    await trackers.all.stop();
  }
}
