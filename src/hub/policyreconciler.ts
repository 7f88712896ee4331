// The policy reconciler: converges the ManifestWorks of one hub policy. Reads what the policy wants
// (wantedworks.ts) and what the spoke agents report (spokeevidence.ts), plans the writes (workapplier.ts),
// lets the deletion rule decide each work that is no longer wanted (workremovals.ts), writes, and hands the
// outcome to the status reporter. It decides nothing on its own. docs/architecture.md#the-hub.
import type { Logger } from 'pino';
import { groupResourceKey } from '../core/k8s/gvr.ts';
import { namespacedKey } from '../core/k8s/objects.ts';
import { parsePolicyKey, parseWorkKey, workKeyOf } from '../core/keys.ts';
import type { DesiredWorks } from '../core/works/desiredworks.ts';
import { adoptLegacyName, sourceHash, workIdentity } from '../core/works/manifestwork.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import { BY_SOURCE } from './indexes.ts';
import { SpokeEvidence } from './spokeevidence.ts';
import type { Rollouts } from './rollouts.ts';
import type { SpokeReports } from './spokereports.ts';
import type { StatusReporter } from './statusreporter.ts';
import { WantedWorks } from './wantedworks.ts';
import { WorkRemovals, type WorkRemovalsDeps } from './workremovals.ts';

export interface PolicyReconcilerOptions {
  controllerName: string;
  /** Adds the raw `conditions` feedback rule (needs the agent's RawFeedbackJsonString gate). */
  rawFeedback: boolean;
  maxWorkBytes: number;
}

/** What the reconciler reads and writes through: the caches and the applier its removals use, and the reporter. */
export interface PolicyReconcilerDeps extends Omit<WorkRemovalsDeps, 'controllerName'> {
  reporter: StatusReporter;
  rollouts: Rollouts;
  /** The spoke agents' reports of local policies; undefined when no spoke configuration is placed. */
  reports?: SpokeReports;
  logger: Logger;
}

/** A policy the cache shows present on the apiserver: the watch will bring it; look again meanwhile. */
const CACHE_LAG_RETRY_MS = 5_000;

export class PolicyReconciler {
  private readonly wanted: WantedWorks;
  private readonly evidence: SpokeEvidence;
  private readonly removals: WorkRemovals;

  constructor(
    private readonly d: PolicyReconcilerDeps,
    o: PolicyReconcilerOptions,
  ) {
    this.wanted = new WantedWorks({ ...d, ...o });
    this.evidence = new SpokeEvidence(d.reports);
    this.removals = new WorkRemovals({ ...d, controllerName: o.controllerName });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { gr, namespace, name } = parsePolicyKey(key);
    const log = this.d.logger.child({ policy: namespacedKey(namespace, name), kind: groupResourceKey(gr) });
    // Before the caches are read: the feedback seen by now is what this reconcile's report reflects.
    const read = this.d.reporter.feedbackMark();
    // Validated on read: a work counts as this policy's only when its name, label and source-ref agree.
    const observed = this.d.works.store.byIndex(BY_SOURCE, sourceHash(gr, namespace, name)).filter((w) => workIdentity(w) !== undefined);
    const kind = this.d.watches.kind(gr);
    const informer = this.d.watches.informer(gr);

    if (!kind || !informer) {
      // Not a watched kind (any more): its works go only once that is certain.
      this.d.reporter.forget(key);
      this.d.rollouts.forget(key);
      if (observed.length > 0) await this.removals.removeOfUnwatchedKind(log, key, gr, observed);
      return;
    }
    // An unsynced watch (first list outstanding or failing) decides nothing: the key comes back when it syncs.
    if (!informer.synced) return;

    const policy = informer.store.get(namespacedKey(namespace, name));
    if (!policy || policy.metadata.deletionTimestamp) {
      this.d.reporter.forget(key);
      this.d.rollouts.forget(key);
      if (observed.length === 0) return;
      const decision = await this.removals.removeOfDeletedPolicy(log, key, kind.gvr, namespace, name, observed);
      return decision.action === 'keep' && decision.reason === 'PolicyExists' ? { requeueAfterMs: CACHE_LAG_RETRY_MS } : undefined;
    }

    const { desired, lanes, problems } = this.wanted.of(kind.gvr, policy);
    // A work an earlier version named is updated under its name, never renamed (a rename would delete the copy).
    for (const [cluster, work] of desired.works) desired.works.set(cluster, adoptLegacyName(work, observed));
    // Where the copy's name on a spoke is held by an object that is not this policy's copy, nothing is
    // placed (OCM's agent would merge into it and take it over) and nothing there is removed.
    // A spoke report refused (schema, caps) says nothing of local policies there: the policy says so (a
    // first copy waits below; a copy already placed is kept and updated).
    problems.push(...this.evidence.refusedReports(desired.works.keys()));
    const nameTaken = this.evidence.nameTaken(gr, policy, desired.works);
    for (const t of nameTaken) desired.works.delete(t.cluster);
    const losses = [...this.wanted.collisionLosses(kind.gvr, policy, desired), ...nameTaken];
    for (const loss of losses) desired.works.delete(loss.cluster);
    // Where local policies cover the whole copy, they are what is enforced there: no copy.
    const local = this.evidence.localVerdicts(gr, policy, desired.works);
    for (const o of local.overridden) desired.works.delete(o.cluster);
    // No evidence is not evidence of absence: a first copy waits for a fresh report that vouches for its name
    // and says whether local policies cover it. Removed before the rollout plans, like the taken names, so no
    // wave writes there; a work already there stays as it is (never withdrawn for doubt).
    const awaiting = this.evidence.awaitingReport(gr, desired.works, observed);
    for (const a of awaiting) desired.works.delete(a.cluster);
    // The revision reaches the clusters as the rollout strategy says: those it has not reached keep their
    // works as they are (docs/architecture.md#rolling-out-a-change).
    const targetClasses = this.removals.targetClasses(policy);
    const { strategy, problem } = this.d.rollouts.strategyFor(policy, targetClasses);
    if (problem) problems.push(problem);
    const rollout = this.d.rollouts.plan(key, policy, strategy, desired.works, observed, awaiting.map((a) => a.cluster));
    if (rollout) {
      desired.works.clear();
      for (const [cluster, work] of rollout.write) desired.works.set(cluster, work);
    }
    const kept = rollout ? observed.filter((w) => rollout.keep.has(w.metadata.namespace ?? '')) : [];
    // A work grown too large is not written; the last good one on that cluster stays in place.
    const untouched = new Set([...desired.tooLarge, ...nameTaken.map((t) => t.cluster), ...awaiting.map((a) => a.cluster), ...(rollout?.keep ?? [])]);
    const retain = new Set(observed.filter((w) => untouched.has(w.metadata.namespace ?? '')).map(workKeyOf));
    const plan = this.d.applier.plan([...desired.works.values()], observed, retain);
    const overriddenOn = new Map(local.overridden.map((o) => [o.cluster, o.message]));
    const [overridden, unwanted] = partition(plan.delete, (k) => overriddenOn.has(parseWorkKey(k).cluster));
    const removals = this.removals.decidePerCluster(log, gr, policy, targetClasses, [...unwanted, ...overridden], observed, overriddenOn);

    // Every cluster's writes are attempted; the status below is reported whatever failed (one cluster's
    // failure must not freeze what the hub says of the others), then the failure is retried.
    let failure: Error | undefined;
    try {
      await this.d.applier.execute(key, { ...plan, delete: removals.deletions }, log);
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
    }

    // While a targeted class's params are unknown, what to report is unknown too: leave the annotations.
    const unknownClasses = this.removals.unknownClasses(targetClasses);
    if (unknownClasses.length > 0) {
      log.debug({ gatewayClasses: unknownClasses }, 'params of a targeted GatewayClass unknown; status not reported');
      if (failure !== undefined) throw failure;
      return;
    }
    // A policy none of whose targets is a Gateway of ours is another controller's business (several may
    // share a hub): its annotations are left alone — except right after it stopped being ours, while our
    // works for it still existed (and were not kept by the deletion rule), when ours are cleared.
    let result: ReconcileResult;
    // The reporter says when a cluster's wait for the spoke controller's status ends (no event marks it).
    if (ours(desired)) {
      result = await this.d.reporter.report(key, kind.gvr, policy, {
        desired,
        losses,
        observed,
        written: [...desired.works.values()],
        kept,
        ...(rollout ? { rollout: { status: rollout.status, clusters: rollout.clusters, waiting: rollout.waiting } } : {}),
        local,
        awaiting,
        unknown: removals.unknown,
        lanes,
        problems,
      }, { read });
    } else if (observed.length > 0 && !removals.kept) await this.d.reporter.clear(key, kind.gvr, policy);
    if (failure !== undefined) throw failure;
    const recheckAt = [removals.recheckAt, rollout?.recheckAt].filter((t) => t !== undefined);
    return withRecheck(result, recheckAt.length > 0 ? Math.min(...recheckAt) : undefined);
  }
}

/** The reconcile's result, asking to be run again at `at` (ms since the epoch) at the latest. */
function withRecheck(result: ReconcileResult, at: number | undefined): ReconcileResult {
  if (at === undefined) return result;
  const afterMs = Math.max(1, at - Date.now());
  const current = result?.requeueAfterMs;
  return { requeueAfterMs: current === undefined ? afterMs : Math.min(current, afterMs) };
}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((item) => !test(item))];
}

/** The policy targets at least one Gateway of a class we own: its annotations are ours to write. */
function ours(desired: DesiredWorks): boolean {
  return desired.targets.some((t) => t.state === 'syncable' || (t.reason !== 'GatewayNotManaged' && t.reason !== 'NotAGateway'));
}
