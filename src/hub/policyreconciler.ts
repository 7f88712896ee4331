// The policy reconciler (DESIGN §2.3–§5, §7): converges the ManifestWorks of one hub policy. Reads the
// caches, asks the core for the desired works and — for every observed work that is not desired — the
// deletion rule (core/removal.ts) whether it may go; hands the writes to the WorkApplier and the outcome
// to the StatusReporter. It decides nothing else on its own.
import type { Logger } from 'pino';
import { coverage, usesOverrides } from '../core/spoke/conflicts.ts';
import { desiredWorksForPolicy, resolveCollisions, type DesiredWorks, type GatewayPlacement, type PlacementCandidate } from '../core/works/desiredworks.ts';
import { groupResourceKey, type GroupResource, type GroupVersionResource } from '../core/k8s/gvr.ts';
import { adoptLegacyName, controllerLabelValue, readSourceRef, sourceHash, workIdentity, type ManifestWork } from '../core/works/manifestwork.ts';
import { objectKey, type KubeObject } from '../core/k8s/objects.ts';
import type { LocalNote, PolicyProblem } from '../core/status/policystatus.ts';
import { decideRemoval, type CrdState, type RemovalDecision, type RemovalInput } from '../core/works/removal.ts';
import { localPoliciesIn, occupantOf } from '../core/spoke/spokereport.ts';
import { clusterHealth } from '../core/fleet/clusterhealth.ts';
import type { PlacementState } from '../core/fleet/placement.ts';
import { possibleRivals } from '../core/targets/rivals.ts';
import { GATEWAY_GROUP, GATEWAY_KIND, readTargets } from '../core/targets/targetrefs.ts';
import { readCrd } from '../kube/discovery.ts';
import type { DynamicInformers } from '../kube/dynamicinformers.ts';
import { isNotFound, type KubeHttp } from '../kube/http.ts';
import type { Informer } from '../kube/informer.ts';
import { objectPath } from '../kube/resource.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import type { ClassConfigs } from './classconfigs.ts';
import { ownsClass } from '../core/params/classparams.ts';
import { BY_NAME, BY_SOURCE, gatewayClassOf, gatewayTemplates, targetedGateways } from './indexes.ts';
import { parsePolicyKey, parseWorkKey, workKeyOf, type WorkKey } from '../core/keys.ts';
import type { GatewayPlacements } from './placements.ts';
import type { SpokeReports } from './spokereports.ts';
import type { StatusReporter } from './statusreporter.ts';
import type { LaneReport, LocalVerdicts, UnknownCluster } from '../core/status/statusinput.ts';
import { laneConflicts, refusedClusters, type GatewayLane, type LaneConflict } from '../core/targets/lanes.ts';
import { renderDownstreamNamespace } from '../core/params/params.ts';
import type { WorkApplier } from './workapplier.ts';

export interface PolicyReconcilerOptions {
  controllerName: string;
  /** Adds the raw `conditions` feedback rule (needs the agent's RawFeedbackJsonString gate). */
  rawFeedback: boolean;
  maxWorkBytes: number;
}

export interface PolicyReconcilerDeps {
  http: KubeHttp;
  watches: DynamicInformers;
  classes: Informer;
  gateways: Informer;
  decisions: Informer;
  managedClusters: Informer;
  /** Where each Gateway is placed: the decisions that count, and whether they are settled. */
  placed: GatewayPlacements;
  works: Informer;
  configs: ClassConfigs;
  applier: WorkApplier;
  reporter: StatusReporter;
  /** The spoke agents' reports of local policies; undefined when no spoke configuration is placed. */
  reports?: SpokeReports;
  logger: Logger;
}

/** A policy the cache shows present on the apiserver: the watch will bring it; look again meanwhile. */
const CACHE_LAG_RETRY_MS = 5_000;

export class PolicyReconciler {
  constructor(
    private readonly d: PolicyReconcilerDeps,
    private readonly o: PolicyReconcilerOptions,
  ) {}

  async reconcile(key: string): Promise<ReconcileResult> {
    const { gr, namespace, name } = parsePolicyKey(key);
    const log = this.d.logger.child({ policy: `${namespace}/${name}`, kind: groupResourceKey(gr) });
    // Validated on read: a work counts as this policy's only when its name, label and source-ref agree.
    const observed = this.d.works.store.byIndex(BY_SOURCE, sourceHash(gr, namespace, name)).filter((w) => workIdentity(w) !== undefined);
    const kind = this.d.watches.kind(gr);
    const informer = this.d.watches.informer(gr);

    if (!kind || !informer) {
      // Not a watched kind (any more): its works go only once that is certain.
      this.d.reporter.forget(key);
      if (observed.length > 0) await this.removeUnwanted(log, key, observed, this.removalInput(gr, undefined, undefined, this.classesOfWorks(observed)));
      return;
    }
    // An unsynced watch (first list outstanding or failing) decides nothing: the key comes back when it syncs.
    if (!informer.synced) return;

    const policy = informer.store.get(objectKey({ metadata: { namespace, name } }));
    if (!policy || policy.metadata.deletionTimestamp) {
      this.d.reporter.forget(key);
      if (observed.length === 0) return;
      const input = this.removalInput(gr, { deleting: true, targetClasses: [] });
      const decision = decideRemoval(input);
      const confirmed = decision.action === 'confirm' ? decideRemoval({ ...input, confirmation: await this.confirmGone(kind.gvr, namespace, name, observed) }) : decision;
      await this.removeUnwanted(log, key, observed, input, confirmed);
      return confirmed.action === 'keep' && confirmed.reason === 'PolicyExists' ? { requeueAfterMs: CACHE_LAG_RETRY_MS } : undefined;
    }

    const lanes: LaneConflict[] = [];
    const problems: PolicyProblem[] = [];
    const desired = this.desired(kind.gvr, policy, lanes, problems);
    // A work an earlier version named is updated under its name, never renamed (a rename would delete the copy).
    for (const [cluster, work] of desired.works) desired.works.set(cluster, adoptLegacyName(work, observed));
    // Where the copy's name on a spoke is held by an object that is not this policy's copy, nothing is
    // placed (OCM's agent would merge into it and take it over) and nothing there is removed (DESIGN §7).
    // A spoke report refused (schema, caps) says nothing of local policies there: the copy is placed as if
    // no agent ran, and the policy says why its overrides there are not known.
    for (const cluster of desired.works.keys()) {
      const why = this.d.reports?.refused(cluster);
      if (why !== undefined) problems.push({ reason: 'SpokeReportRefused', message: `cluster ${cluster}: the spoke agent's report is refused (${why}); local policies there are not known` });
    }
    const nameTaken = this.nameTaken(gr, policy, desired.works);
    for (const t of nameTaken) desired.works.delete(t.cluster);
    const losses = [...this.collisionLosses(kind.gvr, policy, desired), ...nameTaken];
    for (const loss of losses) desired.works.delete(loss.cluster);
    // Where local policies cover the whole copy, they are what is enforced there: no copy (DESIGN §6).
    const local = this.localVerdicts(gr, policy, desired.works);
    for (const o of local.overridden) desired.works.delete(o.cluster);
    // A work grown too large is not written; the last good one on that cluster stays in place.
    const tooLarge = new Set(desired.tooLarge);
    const untouched = new Set([...tooLarge, ...nameTaken.map((t) => t.cluster)]);
    const retain = new Set(observed.filter((w) => untouched.has(w.metadata.namespace ?? '')).map(workKeyOf));
    const plan = this.d.applier.plan([...desired.works.values()], observed, retain);
    const targetClasses = this.targetClasses(policy);
    const overriddenOn = new Set(local.overridden.map((o) => o.cluster));
    const [overridden, unwanted] = partition(plan.delete, (key) => overriddenOn.has(parseWorkKey(key).cluster));
    const deletions: WorkKey[] = [];
    const unknown: UnknownCluster[] = [];
    let kept = false;
    let recheckAt: number | undefined;
    const observedByKey = new Map(observed.map((w) => [workKeyOf(w), w]));
    // One decision per cluster: what OCM says of each cluster is its own (DESIGN §7).
    for (const workKey of [...unwanted, ...overridden]) {
      const cluster = parseWorkKey(workKey).cluster;
      const locallyOverridden = overriddenOn.has(cluster);
      const fleet = locallyOverridden ? undefined : this.clusterKnowledge(cluster, policy);
      const d = decideRemoval(this.removalInput(gr, { deleting: false, targetClasses, locallyOverridden }, fleet));
      if (d.action === 'delete') {
        deletions.push(workKey);
        if (locallyOverridden) log.info({ work: workKey, overriddenBy: local.overridden.find((o) => o.cluster === cluster)?.message }, 'local policies cover the copy: its ManifestWork is withdrawn');
        continue;
      }
      kept = true;
      this.logKept(log, [workKey], d);
      if (fleet && d.action === 'keep' && (d.reason === 'ClusterUnavailable' || d.reason === 'PlacementUnsettled')) {
        const doubt = fleet.health.state === 'unavailable' ? fleet.health : fleet.placements.state === 'unsettled' ? { reason: fleet.placements.reason, message: fleet.placements.message } : undefined;
        const work = observedByKey.get(workKey) as ManifestWork | undefined;
        // No event marks the end of a recovery grace: look again then.
        if (fleet.health.state === 'unavailable' && fleet.health.recheckAt !== undefined) recheckAt = Math.min(recheckAt ?? Infinity, fleet.health.recheckAt);
        if (doubt) unknown.push({ cluster, reason: doubt.reason, message: doubt.message, ...('since' in doubt && doubt.since ? { since: doubt.since } : {}), ...(work ? { work } : {}) });
      }
    }
    // Every cluster's writes are attempted; the status below is reported whatever failed (one cluster's
    // failure must not freeze what the hub says of the others), then the failure is retried.
    let failure: Error | undefined;
    try {
      await this.d.applier.execute(key, { ...plan, delete: deletions }, log);
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
    }

    // While a targeted class's params are unknown, what to report is unknown too: leave the annotations.
    const unknownClasses = this.unknownClasses(targetClasses);
    if (unknownClasses.length > 0) {
      log.debug({ gatewayClasses: unknownClasses }, 'params of a targeted GatewayClass unknown; status not reported');
      if (failure !== undefined) throw failure;
      return;
    }
    // A policy none of whose targets is a Gateway of ours is another controller's business (several may
    // share a hub): its annotations are left alone — except right after it stopped being ours, while our
    // works for it still existed (and were not kept by the deletion rule), when ours are cleared.
    const written = [...desired.works.values()];
    let result: ReconcileResult;
    // The reporter says when a cluster's wait for the spoke controller's status ends (no event marks it).
    if (ours(desired)) result = await this.d.reporter.report(key, kind.gvr, policy, {
        desired,
        losses,
        observed,
        written,
        local,
        unknown,
        lanes: this.laneReports(lanes),
        problems,
      });
    else if (observed.length > 0 && !kept) await this.d.reporter.clear(key, kind.gvr, policy);
    if (failure !== undefined) throw failure;
    return withRecheck(result, recheckAt);
  }

  /** What OCM says of a cluster the policy no longer wants a copy on, and of the Placements of its Gateways. */
  private clusterKnowledge(cluster: string, policy: KubeObject): NonNullable<RemovalInput['cluster']> {
    const health = clusterHealth(this.d.managedClusters.store.get(cluster), Date.now());
    let placements: PlacementState = { state: 'settled' };
    for (const gw of targetedGateways(policy)) {
      const gateway = this.d.gateways.store.get(gw);
      const state: PlacementState = gateway ? this.d.placed.state(gateway) : placements;
      if (state.state === 'unsettled') placements = state;
    }
    return { health, placements };
  }

  /**
   * Clusters whose fresh report shows the copy's kind, namespace and name held by an object that is not a
   * copy of this hub policy: a local policy, or a copy of another hub policy. A stale or absent report,
   * or one that does not cover the kind, says nothing (the copy is placed as before).
   */
  private nameTaken(gr: GroupResource, policy: KubeObject, works: ReadonlyMap<string, ManifestWork>): { cluster: string; message: string }[] {
    const reports = this.d.reports;
    if (!reports) return [];
    const kind = groupResourceKey(gr);
    const source = `${policy.metadata.namespace}/${policy.metadata.name}`;
    const taken: { cluster: string; message: string }[] = [];
    for (const [cluster, work] of works) {
      const report = reports.fresh(cluster);
      const copy = work.spec.workload.manifests[0];
      if (!report || !copy) continue;
      const at = `${copy.metadata.namespace ?? ''}/${copy.metadata.name}`;
      const occupant = occupantOf(report, kind, copy.metadata.namespace ?? '', copy.metadata.name);
      if (occupant.state === 'local') {
        taken.push({ cluster, message: `${copy.kind} ${at} on cluster ${cluster} is the cluster's own policy, not a copy of this one: nothing is placed there until the name is free` });
      } else if (occupant.state === 'synced' && occupant.source !== source) {
        taken.push({ cluster, message: `${copy.kind} ${at} on cluster ${cluster} is a copy of hub policy ${occupant.source}, not of this one: nothing is placed there until the name is free` });
      }
    }
    return taken;
  }

  /**
   * What local policies do to each cluster's copy, by the spoke agent's report there — only a fresh report
   * counts (a stale or absent one withdraws nothing). A hub policy using GEP-713 overrides is placed anyway.
   */
  private localVerdicts(gr: GroupResource, policy: KubeObject, works: ReadonlyMap<string, ManifestWork>): LocalVerdicts {
    const overridden: { cluster: string; message: string }[] = [];
    const notes = new Map<string, LocalNote>();
    const reports = this.d.reports;
    if (!reports) return { overridden, notes };
    const kind = groupResourceKey(gr);
    for (const [cluster, work] of works) {
      const report = reports.fresh(cluster);
      const copy = work.spec.workload.manifests[0];
      if (!report || !copy) continue;
      const locals = localPoliciesIn(report, kind, copy.metadata.namespace ?? '');
      if (!locals || locals.length === 0) continue;
      const verdict = coverage(copy.kind, copy, locals);
      if (verdict.state === 'None') continue;
      if (usesOverrides(policy)) {
        notes.set(cluster, { reason: 'OverridesLocal', message: `${copy.kind} overrides [${verdict.by.join(', ')}] on the cluster: the hub policy uses overrides` });
      } else if (verdict.state === 'Overridden') overridden.push({ cluster, message: verdict.message });
      else notes.set(cluster, { reason: 'PartiallyEnforced', message: verdict.message });
    }
    return { overridden, notes };
  }

  /** The owned classes (from the class cache) and what is known of their configurations. */
  private removalInput(gr: GroupResource, policy?: RemovalInput['policy'], cluster?: RemovalInput['cluster'], worksClasses: readonly string[] = []): RemovalInput {
    const owned = this.d.classes.store.list().filter((c) => ownsClass(c, this.o.controllerName)).map((c) => c.metadata.name);
    const informer = this.d.watches.informer(gr);
    // A policy's own Gateways' classes; for a kind no longer watched, those of the Gateways its works were for.
    const named = policy ? policy.targetClasses : worksClasses;
    return {
      groupResource: groupResourceKey(gr),
      caches: {
        works: this.d.works.synced,
        classes: this.d.classes.synced,
        gateways: this.d.gateways.synced,
        decisions: this.d.decisions.synced,
        clusters: this.d.managedClusters.synced,
        placements: this.d.placed.synced,
      },
      classes: this.d.configs.knowledge(owned),
      absentClasses: new Set(named.filter((name) => this.d.classes.store.get(name) === undefined)),
      ...(informer ? { watch: { synced: informer.synced } } : {}),
      ...(policy ? { policy } : {}),
      ...(cluster ? { cluster } : {}),
    };
  }

  /** Deletes the observed works not desired, if the deletion rule allows it (all of them are unwanted here). */
  private async removeUnwanted(log: Logger, key: string, observed: readonly KubeObject[], input: RemovalInput, decided?: RemovalDecision): Promise<void> {
    const plan = this.d.applier.plan([], observed);
    if (plan.delete.length === 0) return;
    const decision = decided ?? decideRemoval(input);
    if (decision.action !== 'delete') {
      this.logKept(log, plan.delete, decision);
      return;
    }
    log.info({ reason: decision.reason, works: plan.delete.length }, 'deleting unwanted ManifestWorks');
    await this.d.applier.execute(key, { ...plan, create: [], apply: [] }, log);
  }

  private logKept(log: Logger, keys: readonly string[], decision: RemovalDecision): void {
    if (decision.action === 'keep') log.warn({ works: keys, reason: decision.reason, why: decision.message }, 'ManifestWorks no longer desired are kept: not known to be unwanted');
  }

  /** Live reads behind a deletion: is the policy really gone, and is its CRD the one its works were written under? */
  private async confirmGone(gvr: GroupVersionResource, namespace: string, name: string, observed: readonly KubeObject[]): Promise<{ policyExists: boolean; crd: CrdState }> {
    let policyExists = true;
    try {
      await this.d.http.request('GET', objectPath({ ...gvr, namespaced: true }, namespace, name));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      policyExists = false;
    }
    return { policyExists, crd: await this.crdState(gvr, observed) };
  }

  private async crdState(gr: GroupResource, observed: readonly KubeObject[]): Promise<CrdState> {
    if (gr.group === '') return 'builtin';
    try {
      const crd = await readCrd(this.d.http, gr);
      if (!crd) return 'absent';
      if (crd.terminating) return 'terminating';
      const recorded = new Set(observed.map((w) => readSourceRef(w)?.crdUid).filter((u): u is string => u !== undefined));
      return recorded.size > 0 && !recorded.has(crd.uid) ? 'replaced' : 'live';
    } catch {
      return 'unreadable';
    }
  }

  /**
   * The GatewayClass of every cached hub Gateway these works were written for: the copy's Gateway targets
   * carry the hub Gateway's name, and the hub policy's namespace is its Gateway's (cross-namespace targets
   * are never synced).
   */
  private classesOfWorks(works: readonly KubeObject[]): string[] {
    return works.flatMap((w) => {
      const source = readSourceRef(w);
      const copy = (w as ManifestWork).spec?.workload?.manifests?.[0];
      if (!source || !copy) return [];
      return readTargets(copy)
        .filter((t) => t.group === GATEWAY_GROUP && t.kind === GATEWAY_KIND)
        .flatMap((t) => {
          const gateway = this.d.gateways.store.get(`${source.namespace}/${t.name}`);
          return gateway ? gatewayClassOf(gateway) : [];
        });
    });
  }

  /** The GatewayClass of every Gateway the policy targets that the Gateway cache holds. */
  private targetClasses(policy: KubeObject): string[] {
    return targetedGateways(policy).flatMap((gw) => {
      const gateway = this.d.gateways.store.get(gw);
      return gateway ? gatewayClassOf(gateway) : [];
    });
  }

  private unknownClasses(classNames: readonly string[]): string[] {
    const owned = classNames.filter((c) => ownsClass(this.d.classes.store.get(c), this.o.controllerName));
    return [...this.d.configs.knowledge(owned)].filter(([, k]) => k.state === 'unknown').map(([n]) => n);
  }

  /**
   * The works the policy wants. `lanes` collects the conflicts between the lanes of its Gateways and other
   * hub Gateways (core/lanes.ts): a Gateway refused on a cluster places no copy there.
   */
  private desired(gvr: GroupVersionResource, policy: KubeObject, lanes: LaneConflict[] = [], problems: PolicyProblem[] = []): DesiredWorks {
    const classes = new Set<string>();
    // Each Gateway is looked at once per reconcile, however many targets and passes ask for it.
    const looked = new Map<string, GatewayPlacement | undefined>();
    const lookAt = (namespace: string, name: string): GatewayPlacement | undefined => {
      const gateway = this.d.gateways.store.get(`${namespace}/${name}`);
      if (!gateway) return undefined;
      const [className = ''] = gatewayClassOf(gateway);
      const config = this.d.configs.get(className);
      if (!config) return { managed: false, downstreamNamespaceTemplate: '', clusters: [], kindAllowed: false };
      classes.add(className);
      // Forged decisions and clusters outside the namespace's ManagedClusterSets count for nothing; said.
      const placed = this.d.placed.of(gateway);
      for (const r of placed.refused) problems.push({ reason: 'PlacementRefused', message: `Gateway ${namespace}/${name}: ${r.message}` });
      const lane = this.laneOf(gateway, placed.clusters);
      const others = this.d.gateways.store.byIndex(BY_NAME, name).flatMap((g) => (g === gateway ? [] : (this.laneOf(g) ?? [])));
      const conflicts = lane && others.length > 0 ? laneConflicts(lane, others) : [];
      lanes.push(...conflicts);
      const refused = lane ? refusedClusters(lane, conflicts) : new Set<string>();
      return {
        managed: true,
        downstreamNamespaceTemplate: config.params.downstreamNamespace,
        clusters: placed.clusters.filter((c) => !refused.has(c)),
        kindAllowed: this.d.configs.kind(className, gvr) !== undefined,
      };
    };
    const lookup = (namespace: string, name: string): GatewayPlacement | undefined => {
      const key = `${namespace}/${name}`;
      if (!looked.has(key)) looked.set(key, lookAt(namespace, name));
      return looked.get(key);
    };
    const crdUid = this.d.configs.crdUid(gvr);
    const input = {
      gvr,
      policy,
      gateways: lookup,
      rawFeedback: this.o.rawFeedback,
      maxWorkBytes: this.o.maxWorkBytes,
      controller: controllerLabelValue(this.o.controllerName),
      ...(crdUid === undefined ? {} : { crdUid }),
    };
    const first = desiredWorksForPolicy({ ...input, statusFeedback: [] });
    // Feedback rules of the kind: the union over the classes its Gateways belong to, known only after a
    // first pass over the targets.
    const statusFeedback = [...classes]
      .flatMap((c) => this.d.configs.kind(c, gvr)?.config.statusFeedback ?? [])
      .filter((rule, i, all) => all.findIndex((r) => r.name === rule.name) === i);
    return statusFeedback.length === 0 ? first : desiredWorksForPolicy({ ...input, statusFeedback });
  }

  /** A cached Gateway of an owned class with params in force, as its lane; undefined otherwise. */
  private laneOf(gateway: KubeObject, clusters?: readonly string[]): GatewayLane | undefined {
    const [className] = gatewayClassOf(gateway);
    const config = className === undefined ? undefined : this.d.configs.get(className);
    if (!config) return undefined;
    const namespace = gateway.metadata.namespace ?? '';
    return {
      namespace,
      name: gateway.metadata.name,
      ...(gateway.metadata.creationTimestamp ? { creationTimestamp: gateway.metadata.creationTimestamp } : {}),
      downstreamNamespace: renderDownstreamNamespace(config.params.downstreamNamespace, namespace),
      clusters: clusters ?? this.d.placed.clusters(gateway),
    };
  }

  /** The lane conflicts as the status reports them, with the two hub Gateways to tell. */
  private laneReports(conflicts: readonly LaneConflict[]): LaneReport[] {
    const seen = new Set<string>();
    return conflicts.flatMap((c) => {
      if (seen.has(c.message)) return [];
      seen.add(c.message);
      return [{ message: c.message, gateways: [c.keeper, c.refused].flatMap((k) => this.d.gateways.store.get(k) ?? []) }];
    });
  }

  /**
   * Where this policy's copy would be the same spoke object as another hub policy's (a
   * downstreamNamespace without `{namespace}`), the older policy keeps it (DESIGN §3).
   */
  private collisionLosses(gvr: GroupVersionResource, policy: KubeObject, desired: DesiredWorks): ReturnType<typeof resolveCollisions> {
    const informer = this.d.watches.informer(gvr)!;
    const sameName = informer.store.byIndex(BY_NAME, policy.metadata.name);
    const rivals = possibleRivals(policy, sameName, gatewayTemplates(this.d.gateways, this.d.configs)).filter((p) => !p.metadata.deletionTimestamp);
    if (rivals.length === 0) return [];
    const candidates: PlacementCandidate[] = [];
    const add = (p: KubeObject, works: Map<string, ManifestWork>): void => {
      for (const [cluster, work] of works) {
        const copy = work.spec.workload.manifests[0]!;
        candidates.push({
          cluster,
          copyNamespace: copy.metadata.namespace ?? '',
          copyName: copy.metadata.name,
          policyKey: objectKey(p),
          creationTimestamp: p.metadata.creationTimestamp,
          group: gvr.group,
          resource: gvr.resource,
        });
      }
    };
    add(policy, desired.works);
    for (const rival of rivals) add(rival, this.desired(gvr, rival).works);
    const mine = objectKey(policy);
    return resolveCollisions(candidates).filter((loss) => loss.policyKey === mine);
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
