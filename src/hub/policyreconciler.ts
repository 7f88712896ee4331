// The policy reconciler: converges the ManifestWorks of one hub policy. Asks the decision pipeline
// (core/pipeline/policypipeline.ts, over the caches: cachedhubview.ts) what the hub decides for the policy —
// the very code `policy-sync diff` runs — plans the writes (workapplier.ts), lets the deletion rule decide each
// work that is no longer wanted (workremovals.ts), writes, and hands the outcome to the status reporter. It
// decides nothing on its own. docs/architecture.md#the-hub.
import type { Logger } from 'pino';
import { groupResourceKey } from '../core/k8s/gvr.ts';
import { namespacedKey } from '../core/k8s/objects.ts';
import { parsePolicyKey } from '../core/keys.ts';
import type { DesiredWorks } from '../core/works/desiredworks.ts';
import { decidePolicy } from '../core/pipeline/policypipeline.ts';
import { controllerLabelValue, sourceHash, sourceRefOf, workIdentity, workName } from '../core/works/manifestwork.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import { CachedHubView, type CachedHubViewSources } from './cachedhubview.ts';
import { BY_SOURCE } from './indexes.ts';
import type { VariantOutcomes } from './variantoutcomes.ts';
import type { Rollouts } from './rollouts.ts';
import type { LingerClocks } from './lingerclocks.ts';
import type { LingeringMender, MendOutcome } from './lingeringmender.ts';
import { withdrawnBy } from '../core/pipeline/withdrawal.ts';
import type { PolicyDecision } from '../core/pipeline/policypipeline.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import type { GroupResource, GroupVersionResource } from '../core/k8s/gvr.ts';
import { canonicalJson } from '../core/k8s/canonical.ts';
import { STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import { readPolicyStatus } from '../core/status/annotation.ts';
import { LINGERING } from '../core/status/policystatus.ts';
import type { StatusInput } from '../core/status/statusinput.ts';
import { lingerRecheckAt, lingeringCopies } from '../core/spoke/spoketruth.ts';
import { workCopy } from '../core/works/revision.ts';
import type { SpokeReports } from './spokereports.ts';
import type { StatusReporter } from './statusreporter.ts';
import { WorkRemovals, type WorkRemovalsDeps } from './workremovals.ts';

export interface PolicyReconcilerOptions {
  controllerName: string;
  /** Adds the raw `conditions` feedback rule (needs the agent's RawFeedbackJsonString gate). */
  rawFeedback: boolean;
  maxWorkBytes: number;
}

/** What the reconciler reads and writes through: the caches the pipeline and the removals read, the applier, and the reporter. */
export interface PolicyReconcilerDeps extends Omit<WorkRemovalsDeps, 'controllerName' | 'view'>, Omit<CachedHubViewSources, 'reports' | 'controllerName'> {
  reporter: StatusReporter;
  rollouts: Rollouts;
  /** When each copy reported where its policy has no work was first seen so. */
  lingerClocks: LingerClocks;
  /** Hands lingering copies back to OCM's work agent. */
  mender: LingeringMender;
  /** What each policy's variants came to, for their status; `variantsChanged` is told the variants whose outcome moved. */
  variantOutcomes: VariantOutcomes;
  variantsChanged: (keys: readonly string[]) => void;
  /** A deleted policy's lingering copies were looked at again: its Gateways say them (gatewaystatusreconciler.ts). */
  deletedPolicyLooked: (key: string) => void;
  /** The spoke agents' reports of local policies; undefined when no spoke configuration is placed. */
  reports?: SpokeReports;
  logger: Logger;
}

/** How soon to look again at a lingering copy whose status write is on its way (the reporter coalesces for a moment). */
const UNSAID_RECHECK_MS = 1_000;
/** A withdrawn policy whose copies some report may still hide (stale, refused): looked at again this often. */
const WITHDRAWN_RECHECK_MS = 30_000;
/** A policy the cache shows present on the apiserver: the watch will bring it; look again meanwhile. */
const CACHE_LAG_RETRY_MS = 5_000;

export class PolicyReconciler {
  private readonly view: CachedHubView;
  private readonly removals: WorkRemovals;
  private readonly controller: string;

  constructor(
    private readonly deps: PolicyReconcilerDeps,
    private readonly options: PolicyReconcilerOptions,
  ) {
    this.view = new CachedHubView({ ...deps, controllerName: options.controllerName });
    this.removals = new WorkRemovals({ ...deps, view: this.view, controllerName: options.controllerName });
    this.controller = controllerLabelValue(options.controllerName);
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { gr, namespace, name } = parsePolicyKey(key);
    const log = this.deps.logger.child({ policy: namespacedKey(namespace, name), kind: groupResourceKey(gr) });
    // Before the caches are read: the feedback seen by now is what this reconcile's report reflects.
    const read = this.deps.reporter.feedbackMark();
    // Validated on read: a work counts as this policy's only when its name, label and source-ref agree.
    const observed = this.deps.works.store.byIndex(BY_SOURCE, sourceHash(gr, namespace, name)).filter((w) => workIdentity(w) !== undefined);
    const kind = this.deps.watches.kind(gr);
    const informer = this.deps.watches.informer(gr);

    if (!kind || !informer) {
      // Not a watched kind (any more): its works go only once that is certain.
      this.deps.reporter.forget(key);
      this.deps.rollouts.forget(key);
      this.deps.lingerClocks.forget(key);
      this.deps.variantsChanged(this.deps.variantOutcomes.forget(key));
      if (observed.length > 0) await this.removals.removeOfUnwatchedKind(log, key, gr, observed);
      return;
    }
    // An unsynced watch (first list outstanding or failing) decides nothing: the key comes back when it syncs.
    if (!informer.synced) return;

    const policy = informer.store.get(namespacedKey(namespace, name));
    if (!policy || policy.metadata.deletionTimestamp) {
      this.deps.reporter.forget(key);
      this.deps.rollouts.forget(key);
      this.deps.variantsChanged(this.deps.variantOutcomes.forget(key));
      // Its copies that fresh reports still show where no work places them linger too: handed back to OCM once
      // the rule confirms the policy gone (a live read, its CRD live), like its works.
      const lingering = this.view.spokeAgents ? lingeringCopies(this.view.reportedCopies(groupResourceKey(gr), namespacedKey(namespace, name)), placedCopies(observed), this.deps.lingerClocks.seenOf(key), Date.now()) : [];
      this.deps.lingerClocks.record(key, lingering);
      this.deps.deletedPolicyLooked(key);
      const settled = lingering.filter((l) => l.lingering);
      const pending = this.deps.mender.pending(sourceHash(gr, namespace, name));
      if (observed.length === 0 && settled.length === 0 && !pending) return withRecheck(undefined, lingerRecheckAt(lingering));
      const decision = await this.removals.removeOfDeletedPolicy(log, key, kind.gvr, namespace, name, observed);
      const mendable = decision.action === 'delete' ? settled : [];
      const wn = workName(gr, namespace, name);
      const gone: KubeObject = { apiVersion: `${kind.gvr.group}/${kind.gvr.version}`, kind: '', metadata: { namespace, name } };
      const mends = await this.deps.mender.converge(log, canonicalJson(sourceRefOf(kind.gvr, gone)), sourceHash(gr, namespace, name), mendable.map((l) => ({ cluster: l.cluster, workName: wn, namespace: l.namespace })));
      for (const r of mends.refused) log.warn({ cluster: r.mend.cluster, work: r.mend.workName, why: r.why }, 'lingering copy of a deleted policy not handed back');
      const retry = decision.action === 'keep' && decision.reason === 'PolicyExists' ? Date.now() + CACHE_LAG_RETRY_MS : undefined;
      const at = [retry, lingerRecheckAt(lingering), mends.recheckAt].filter((t) => t !== undefined);
      return withRecheck(undefined, at.length > 0 ? Math.min(...at) : undefined);
    }

    const decision = decidePolicy(this.view, {
      gvr: kind.gvr,
      policy,
      observed,
      controller: this.controller,
      rawFeedback: this.options.rawFeedback,
      maxWorkBytes: this.options.maxWorkBytes,
      soak: this.deps.rollouts.soakOf(key, policy.metadata.generation),
      lingerSeen: this.deps.lingerClocks.seenOf(key),
      now: Date.now(),
    });
    this.deps.lingerClocks.record(key, decision.truth.lingering);
    this.deps.rollouts.record(key, policy.metadata.generation, decision.rollout);
    this.deps.variantsChanged(this.deps.variantOutcomes.record(key, decision.variants));
    const { desired, local, rollout, targetClasses } = decision;
    const plan = this.deps.applier.plan([...desired.works.values()], observed, decision.retain);
    // What the applier would delete, as the pipeline's deletion rule decided it per cluster.
    const removals = this.removals.fromDecision(log, decision.removals.works, plan.delete, decision.removals.recheckAt);
    // While a targeted class's params are unknown, what to report is unknown too: leave the annotations.
    const unknownClasses = this.removals.unknownClasses(targetClasses);
    // A policy none of whose targets is a Gateway of ours is another controller's business (several may
    // share a hub): its annotations are left alone — except right after it stopped being ours, while our
    // works for it still exist and the deletion rule lets them all go, when ours are cleared. First: once the
    // works are gone nothing tells this policy was ours, so a replica that died between the two left
    // `policies-synced` naming clusters whose copy was gone, for good (the soak, issue 29). Cleared first,
    // a failure or a crash leaves the works, and the next reconcile, of whichever leader, clears and deletes.
    const isOurs = ours(desired);
    const stoppedBeingOurs = unknownClasses.length === 0 && !isOurs && observed.length > 0 && !removals.kept;
    // With spoke agents to witness them, the clearing leaves this controller's withdrawal mark: a copy the work agent
    // leaves behind as the works go is still ours to see and hand back (core/pipeline/withdrawal.ts).
    if (stoppedBeingOurs) await this.deps.reporter.clear(key, kind.gvr, policy, this.view.spokeAgents ? this.controller : undefined);
    // Ours only by that mark: nothing placed, its copies still looked for.
    const withdrawn = decision.truth.withdrawn === true && unknownClasses.length === 0;

    const statusInput: StatusInput = {
      desired,
      losses: decision.losses,
      observed,
      written: [...desired.works.values()],
      kept: decision.kept,
      ...(rollout ? { rollout: { status: rollout.status, clusters: rollout.clusters, waiting: rollout.waiting } } : {}),
      local,
      awaiting: decision.awaiting,
      unknown: removals.unknown,
      lanes: decision.lanes,
      problems: decision.problems,
      truth: decision.truth,
      ...(withdrawn ? { withdrawnBy: this.controller } : {}),
    };
    // A drift is said before it is put back (as a lingering copy is before it is mended): the put-back is a work
    // write, and a leader that dies between the two writes leaves a drift that ran and was never said — its
    // successor finds the copy as sent (the soak, seed 4401: the hub killed a second after relabelling).
    const correcting = decision.truth.correct && decision.truth.drifted.length > 0;
    if (isOurs && unknownClasses.length === 0 && correcting) await this.deps.reporter.report(key, kind.gvr, policy, statusInput, { read });

    // Every cluster's writes are attempted; the status below is reported whatever failed (one cluster's
    // failure must not freeze what the hub says of the others), then the failure is retried.
    let failure: Error | undefined;
    try {
      await this.deps.applier.execute(key, { ...plan, delete: removals.deletions }, log);
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
    }

    // A copy that lingers where the policy has no work goes once the deletion rule knows it is unwanted there:
    // handed back to OCM's work agent (lingeringmender.ts), never deleted by the hub itself.
    const mends = await this.mendLingering(log, gr, kind.gvr, policy, decision, (isOurs || withdrawn) && unknownClasses.length === 0);
    if (unknownClasses.length > 0) {
      log.debug({ gatewayClasses: unknownClasses }, 'params of a targeted GatewayClass unknown; status not reported');
      if (failure !== undefined) throw failure;
      return;
    }
    let result: ReconcileResult;
    // The reporter says when a cluster's wait for the spoke controller's status ends (no event marks it).
    let witnessAgainAt: number | undefined;
    if (isOurs || (withdrawn && decision.truth.lingering.length > 0)) {
      // A withdrawn policy's status says its lingering copies (and only them) until they are mended.
      result = await this.deps.reporter.report(key, kind.gvr, policy, statusInput, { read });
    } else if (withdrawn) {
      // The mark goes once every report the hub holds is fresh and none lists a copy; a stale one may hide one.
      if (this.deps.reports?.allFresh() !== false && this.view.reportedCopies(groupResourceKey(gr), namespacedKey(namespace, name)).length === 0) {
        await this.deps.reporter.clear(key, kind.gvr, policy);
        log.info('no report shows a copy of the withdrawn policy any more: its withdrawal mark removed');
      } else witnessAgainAt = Date.now() + WITHDRAWN_RECHECK_MS;
    } else if (!isOurs && observed.length === 0 && unknownClasses.length === 0 && withdrawnBy(policy) === this.controller) {
      // Our mark, no longer honoured (the policy now targets another controller's Gateway, or no spoke agent reports):
      // nothing of ours is left for it to keep.
      await this.deps.reporter.clear(key, kind.gvr, policy);
    }
    if (failure !== undefined) throw failure;
    const recheckAt = [removals.recheckAt, rollout?.recheckAt, lingerRecheckAt(decision.truth.lingering), mends.recheckAt, witnessAgainAt].filter((t) => t !== undefined);
    return withRecheck(result, recheckAt.length > 0 ? Math.min(...recheckAt) : undefined);
  }

  /** The lingering copies the deletion rule lets go, handed to the mender; its mending works converged. */
  private async mendLingering(
    log: Logger,
    gr: GroupResource,
    gvr: GroupVersionResource,
    policy: KubeObject,
    decision: PolicyDecision,
    reported: boolean,
  ): Promise<MendOutcome> {
    const name = workName(gr, policy.metadata.namespace ?? '', policy.metadata.name);
    // Said before it is mended: a cluster whose Lingering the policy's status does not show yet waits for that write
    // (and its Event), a moment, so that what was left is on record even when it goes a second later.
    // A policy whose status this hub does not write (not ours: another controller's copies, perhaps; a class's params
    // unknown: doubt) has nothing mended. A status cut to fit (a fleet's: the cluster may be left out) cannot say it:
    // then it is mended on the rule alone, as a deleted policy's copy is.
    const status = readPolicyStatus(policy.metadata.annotations?.[STATUS_ANNOTATION]);
    const said = status?.clusters ?? {};
    const unsayable = status?.summary.truncated === true;
    // The pipeline's deletion rule decided each (removals.ts): only what it lets go is handed back.
    const lingering = reported ? decision.removals.lingering : [];
    const settled = lingering.filter((l) => unsayable || (Object.hasOwn(said, l.copy.cluster) && said[l.copy.cluster]!.reason === LINGERING));
    const unsaid = lingering.length > settled.length ? Date.now() + UNSAID_RECHECK_MS : undefined;
    for (const l of settled) if (l.decision.action === 'keep') log.info({ cluster: l.copy.cluster, reason: l.decision.reason, why: l.decision.message }, 'lingering copy kept: not known to be unwanted');
    const mends = settled.filter((l) => l.decision.action === 'delete').map((l) => ({ cluster: l.copy.cluster, workName: name, namespace: l.copy.namespace }));
    const outcome = await this.deps.mender.converge(log, canonicalJson(sourceRefOf(gvr, policy)), sourceHash(gr, policy.metadata.namespace ?? '', policy.metadata.name), mends);
    for (const r of outcome.refused) log.warn({ cluster: r.mend.cluster, work: r.mend.workName, why: r.why }, 'lingering copy not handed back');
    const at = [outcome.recheckAt, unsaid].filter((t) => t !== undefined);
    return at.length > 0 ? { ...outcome, recheckAt: Math.min(...at) } : outcome;
  }
}

/** The reconcile's result, asking to be run again at `at` (ms since the epoch) at the latest. */
function withRecheck(result: ReconcileResult, at: number | undefined): ReconcileResult {
  if (at === undefined) return result;
  const afterMs = Math.max(1, at - Date.now());
  const current = result?.requeueAfterMs;
  return { requeueAfterMs: current === undefined ? afterMs : Math.min(current, afterMs) };
}

/** The copy each observed work places, by cluster (a work being deleted places none). */
function placedCopies(observed: readonly KubeObject[]): Map<string, KubeObject> {
  const placed = new Map<string, KubeObject>();
  for (const w of observed) {
    const copy = workCopy(w);
    if (copy && !w.metadata.deletionTimestamp) placed.set(w.metadata.namespace ?? '', copy);
  }
  return placed;
}

/** The policy targets at least one Gateway of a class we own: its annotations are ours to write. */
function ours(desired: DesiredWorks): boolean {
  return desired.targets.some((t) => t.state === 'syncable' || (t.reason !== 'GatewayNotManaged' && t.reason !== 'NotAGateway'));
}
