// PolicySyncer (DESIGN §2.3–§4, §7): converges the ManifestWorks of one hub policy. Reads the caches,
// asks the core for the desired works, writes the difference (server-side apply / delete), keeps the
// RFC annotation `kuadrant.io/policies-synced` on the policy, and records Events on problems.
//
// Safety: nothing is deleted unless the caches that prove it unwanted have synced — the policy's kind
// watch for a deleted policy, and for a kind no longer watched, a configuration in force for every
// owned GatewayClass (invalid params keep the last good one; unknown params delete nothing).
import type { Logger } from 'pino';
import {
  desiredWorksForPolicy,
  diffWorks,
  resolveCollisions,
  workKeyOf,
  type DesiredWorks,
  type GatewayPlacement,
  type PlacementCandidate,
} from '../core/desiredworks.ts';
import { gvrKey, type GroupVersionResource } from '../core/gvr.ts';
import { controllerLabelValue, readSpecHash, sourceHash, type ManifestWork } from '../core/manifestwork.ts';
import { canonicalJson } from '../core/canonical.ts';
import { readClusterFeedback } from '../core/feedback.ts';
import { POLICIES_SYNCED_ANNOTATION, STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import {
  aggregatePolicyStatus,
  policyStatusAnnotation,
  newProblems,
  readPolicyStatus,
  statusTransitions,
  type ClusterInput,
  type PolicyProblem,
  type PolicyStatus,
  type StatusSummary,
} from '../core/policystatus.ts';
import { objectKey, type KubeObject } from '../core/objects.ts';
import { policiesSyncedAnnotation } from '../core/policiessynced.ts';
import type { EventRecorder } from '../kube/events.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { Informer } from '../kube/informer.ts';
import { RESOURCES } from '../kube/resource.ts';
import { deleteObject, mergePatch, serverSideApply } from '../kube/writes.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import type { ClassConfigs } from './classconfigs.ts';
import { ownsClass } from './gatewayclassreconciler.ts';
import { BY_NAME, BY_SOURCE, gatewayClusters, parsePolicyKey } from './indexes.ts';
import type { DynamicInformers } from '../kube/dynamicinformers.ts';
import { WriteExpectations } from './writeexpectations.ts';

export interface PolicySyncerOptions {
  controllerName: string;
  /** Adds the raw `conditions` feedback rule (needs the agent's RawFeedbackJsonString gate). */
  rawFeedback: boolean;
  maxWorkBytes: number;
  /** Status annotation writes for one policy are at least this far apart (leading edge, then batched). */
  statusCoalesceMs: number;
}

export interface PolicySyncerDeps {
  http: KubeHttp;
  watches: DynamicInformers;
  classes: Informer;
  gateways: Informer;
  decisions: Informer;
  works: Informer;
  configs: ClassConfigs;
  events: EventRecorder;
  logger: Logger;
}

const UNSYNCED_RETRY_MS = 500;

/** Clusters by state in one policy's aggregated status (the policysync_clusters gauge sums them). */
export type ClusterStateCounts = Pick<StatusSummary, 'enforced' | 'overridden' | 'pending' | 'failed'>;

export class PolicySyncer {
  private readonly expectations = new WriteExpectations();
  /** The annotations last written per policy, for the same cache-lag reason as the works. */
  private readonly annotationExpectations = new WriteExpectations();
  private readonly lastAnnotationWrite = new Map<string, number>();
  private readonly lastStatus = new Map<string, string>();
  /** Each policy's latest aggregated status counts, by policy key, for clusterStates(). */
  private readonly clusterCounts = new Map<string, ClusterStateCounts>();

  constructor(
    private readonly d: PolicySyncerDeps,
    private readonly o: PolicySyncerOptions,
  ) {}

  async reconcile(key: string): Promise<ReconcileResult> {
    const { gvr, namespace, name } = parsePolicyKey(key);
    const log = this.d.logger.child({ policy: `${namespace}/${name}`, kind: gvrKey(gvr) });
    const observed = this.d.works.store.byIndex(BY_SOURCE, sourceHash(gvr, namespace, name));
    const informer = this.d.watches.informer(gvr);

    if (!informer) {
      // Not a watched kind (any more): its works go, but only once that is certain.
      this.forget(key);
      if (observed.length === 0) return;
      if (!this.configurationSettled()) {
        log.debug({}, 'kind not watched but some GatewayClass has no configuration in force; keeping its works');
        return;
      }
      await this.converge(log, [], observed, new Set());
      return;
    }
    if (!informer.synced) return { requeueAfterMs: UNSYNCED_RETRY_MS };

    const policy = informer.store.get(objectKey({ metadata: { namespace, name } }));
    if (!policy || policy.metadata.deletionTimestamp) {
      this.forget(key);
      await this.converge(log, [], observed, new Set());
      return;
    }

    const desired = this.desired(gvr, policy);
    const losses = this.collisionLosses(gvr, policy, desired);
    for (const loss of losses) desired.works.delete(loss.cluster);
    // A work grown too large is not written; the last good one on that cluster stays in place.
    const tooLarge = new Set(desired.tooLarge);
    const retain = new Set(observed.filter((w) => tooLarge.has(w.metadata.namespace ?? '')).map(workKeyOf));
    const written = await this.converge(log, [...desired.works.values()], observed, retain);

    // A policy none of whose targets is a Gateway of ours is another controller's business (several may
    // share a hub): its annotations are left alone — except right after it stopped being ours, while our
    // works for it still exist, when ours are cleared.
    if (this.ours(desired)) {
      const status = this.status(desired, losses, observed, written);
      const { enforced, overridden, pending, failed } = status.summary;
      this.clusterCounts.set(key, { enforced, overridden, pending, failed });
      await this.writeAnnotations(key, gvr, policy, written, status);
    } else {
      this.clusterCounts.delete(key);
      if (observed.length > 0) await this.writeAnnotations(key, gvr, policy, [], undefined);
    }
  }

  /**
   * How long a status-driven reconcile of `key` should wait: none after a quiet spell (a single change
   * is reported at once), the rest of the coalescing window right after a write (a burst is batched).
   */
  statusDelay(key: string, now = Date.now()): number {
    const last = this.lastAnnotationWrite.get(key);
    return last === undefined ? 0 : Math.max(0, last + this.o.statusCoalesceMs - now);
  }

  /**
   * Clusters by state summed over the latest aggregated status of every policy of ours (a policy's
   * share goes when it is deleted, stops being ours, or its kind is no longer watched).
   */
  clusterStates(): ClusterStateCounts {
    const watched = new Set(this.d.watches.kinds().map((k) => gvrKey(k.gvr)));
    const total: ClusterStateCounts = { enforced: 0, overridden: 0, pending: 0, failed: 0 };
    for (const [key, counts] of this.clusterCounts) {
      if (!watched.has(key.slice(0, key.indexOf('|')))) {
        this.clusterCounts.delete(key);
        continue;
      }
      total.enforced += counts.enforced;
      total.overridden += counts.overridden;
      total.pending += counts.pending;
      total.failed += counts.failed;
    }
    return total;
  }

  /** The policy targets at least one Gateway of a class we own: its annotations are ours to write. */
  private ours(desired: DesiredWorks): boolean {
    return desired.targets.some((t) => t.state === 'syncable' || (t.reason !== 'GatewayNotManaged' && t.reason !== 'NotAGateway'));
  }

  /** DESIGN §5: the aggregated status from the works' feedback and what the hub itself decided. */
  private status(desired: DesiredWorks, losses: { cluster: string; message: string }[], observed: KubeObject[], written: ManifestWork[]): PolicyStatus {
    const observedByCluster = new Map(observed.map((w) => [w.metadata.namespace ?? '', w]));
    const clusters: Record<string, ClusterInput> = {};
    for (const work of written) {
      const cluster = work.metadata.namespace;
      const live = observedByCluster.get(cluster);
      // Feedback counts only once it describes the work as written now (same spec-hash).
      const current = live && readSpecHash(live) === readSpecHash(work) && live.status !== undefined;
      clusters[cluster] = current ? { state: 'work', feedback: readClusterFeedback(live) } : { state: 'pending' };
    }
    for (const cluster of desired.tooLarge) {
      const live = observedByCluster.get(cluster);
      clusters[cluster] = {
        state: 'tooLarge',
        message: `the ManifestWork exceeds ${this.o.maxWorkBytes} bytes; the last good copy stays in place`,
        ...(live ? { feedback: readClusterFeedback(live) } : {}),
      };
    }
    for (const loss of losses) clusters[loss.cluster] = { state: 'conflicted', message: loss.message };
    return aggregatePolicyStatus({ clusters, problems: this.problems(desired) });
  }

  /** What keeps the policy, or some of its targets, from being synced (TooLarge and Conflicted are per cluster). */
  private problems(desired: DesiredWorks): PolicyProblem[] {
    const problems: PolicyProblem[] = [];
    for (const t of desired.targets) {
      // A target at another controller's Gateway is not a problem of ours.
      if (t.state === 'rejected' && t.reason !== 'GatewayNotManaged') problems.push({ reason: 'TargetNotSynced', message: `${t.path}: ${t.reason}: ${t.message}` });
    }
    for (const m of desired.mismatches) problems.push({ reason: 'NamespaceMismatch', message: m.message });
    if (desired.noClusters) problems.push({ reason: 'NoClusters', message: 'the targeted Gateways are placed on no cluster: nothing is synced' });
    if (!desired.targets.some((t) => t.state === 'syncable')) problems.push({ reason: 'NotSynced', message: 'no target of this policy can be synced: it has no ManifestWorks' });
    return problems;
  }

  private forget(key: string): void {
    this.lastAnnotationWrite.delete(key);
    this.lastStatus.delete(key);
    this.clusterCounts.delete(key);
  }

  /** Every owned GatewayClass has a configuration in force. */
  private configurationSettled(): boolean {
    if (!this.d.works.synced) return false;
    const owned = this.d.classes.store.list().filter((c) => ownsClass(c, this.o.controllerName)).map((c) => c.metadata.name);
    return this.d.configs.completeFor(owned);
  }

  private desired(gvr: GroupVersionResource, policy: KubeObject): DesiredWorks {
    const classes = new Set<string>();
    const lookup = (namespace: string, name: string): GatewayPlacement | undefined => {
      const gateway = this.d.gateways.store.get(`${namespace}/${name}`);
      if (!gateway) return undefined;
      const className = (gateway.spec as { gatewayClassName?: string } | undefined)?.gatewayClassName ?? '';
      const config = this.d.configs.get(className);
      if (!config) return { managed: false, downstreamNamespaceTemplate: '', clusters: [], kindAllowed: false };
      classes.add(className);
      return {
        managed: true,
        downstreamNamespaceTemplate: config.params.downstreamNamespace,
        clusters: gatewayClusters(gateway, this.d.decisions),
        kindAllowed: this.d.configs.kind(className, gvr) !== undefined,
      };
    };
    // Feedback rules of the kind: the union over the classes its Gateways belong to.
    const input = {
      gvr,
      policy,
      gateways: lookup,
      rawFeedback: this.o.rawFeedback,
      maxWorkBytes: this.o.maxWorkBytes,
      controller: controllerLabelValue(this.o.controllerName),
    };
    const first = desiredWorksForPolicy({ ...input, statusFeedback: [] });
    const statusFeedback = [...classes]
      .flatMap((c) => this.d.configs.kind(c, gvr)?.config.statusFeedback ?? [])
      .filter((rule, i, all) => all.findIndex((r) => r.name === rule.name) === i);
    // The classes are known only after a first pass over the targets.
    return statusFeedback.length === 0 ? first : desiredWorksForPolicy({ ...input, statusFeedback });
  }

  /**
   * Where this policy's copy would be the same spoke object as another hub policy's (a
   * downstreamNamespace without `{namespace}`), the older policy keeps it (DESIGN §3).
   */
  private collisionLosses(gvr: GroupVersionResource, policy: KubeObject, desired: DesiredWorks): ReturnType<typeof resolveCollisions> {
    const informer = this.d.watches.informer(gvr)!;
    const rivals = informer.store.byIndex(BY_NAME, policy.metadata.name).filter((p) => p !== policy && !p.metadata.deletionTimestamp);
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

  /** Applies and deletes so that the policy's works are `desired`; returns the works now in place. */
  private async converge(log: Logger, desired: ManifestWork[], observed: KubeObject[], retain: Set<string>): Promise<ManifestWork[]> {
    const desiredByKey = new Map(desired.map((w) => [workKeyOf(w), w]));
    const observedByKey = new Map<string, { specHash?: string }>();
    for (const work of observed) {
      const key = workKeyOf(work);
      const seen = this.expectations.observe(key, readSpecHash(work) ?? '');
      if (seen.present) observedByKey.set(key, { specHash: seen.specHash });
    }
    // Works we wrote that the cache does not show yet count as present.
    for (const key of desiredByKey.keys()) {
      if (observedByKey.has(key)) continue;
      const seen = this.expectations.observe(key, null);
      if (seen.present) observedByKey.set(key, { specHash: seen.specHash });
    }
    const plan = diffWorks(desiredByKey, observedByKey, retain);
    const failures: unknown[] = [];
    await Promise.all([
      ...plan.apply.map(async (work) => {
        try {
          await serverSideApply(this.d.http, RESOURCES.manifestWorks, work);
          this.expectations.applied(workKeyOf(work), readSpecHash(work));
          log.info({ cluster: work.metadata.namespace, work: work.metadata.name }, 'ManifestWork applied');
        } catch (err) {
          failures.push(err);
          log.error({ cluster: work.metadata.namespace, work: work.metadata.name, err: String(err) }, 'ManifestWork apply failed');
        }
      }),
      ...plan.delete.map(async (key) => {
        const [cluster, name] = splitWorkKey(key);
        try {
          await deleteObject(this.d.http, RESOURCES.manifestWorks, cluster, name);
          this.expectations.deleted(key);
          log.info({ cluster, work: name }, 'ManifestWork deleted');
        } catch (err) {
          failures.push(err);
          log.error({ cluster, work: name, err: String(err) }, 'ManifestWork delete failed');
        }
      }),
    ]);
    if (failures.length > 0) throw failures[0] instanceof Error ? failures[0] : new Error(String(failures[0]));
    return desired;
  }

  /**
   * One merge patch for both hub annotations — `kuadrant.io/policies-synced` (where the copy is placed)
   * and `policysync.kuadrant.io/status` — written only when a value changed; Events for transitions.
   */
  private async writeAnnotations(key: string, gvr: GroupVersionResource, policy: KubeObject, works: ManifestWork[], status: PolicyStatus | undefined): Promise<void> {
    const desired = {
      [POLICIES_SYNCED_ANNOTATION]: policiesSyncedAnnotation(
        works.map((w) => {
          const copy = w.spec.workload.manifests[0]!;
          return { cluster: w.metadata.namespace, name: copy.metadata.name, namespace: copy.metadata.namespace ?? '' };
        }),
      ),
      [STATUS_ANNOTATION]: status ? policyStatusAnnotation(status) : undefined,
    };
    const current = policy.metadata.annotations ?? {};
    const cached = canonicalJson({ [POLICIES_SYNCED_ANNOTATION]: current[POLICIES_SYNCED_ANNOTATION], [STATUS_ANNOTATION]: current[STATUS_ANNOTATION] });
    const wanted = canonicalJson(desired);
    if (this.annotationExpectations.observe(key, cached).specHash === wanted) return;

    const patch = Object.fromEntries(Object.entries(desired).map(([k, v]) => [k, v ?? null]));
    await mergePatch(this.d.http, { ...gvr, namespaced: true }, policy.metadata.namespace, policy.metadata.name, { metadata: { annotations: patch } });
    this.annotationExpectations.applied(key, wanted);
    this.lastAnnotationWrite.set(key, Date.now());
    const previousStatus = this.lastStatus.get(key);
    if (desired[STATUS_ANNOTATION] === undefined) this.lastStatus.delete(key);
    else this.lastStatus.set(key, desired[STATUS_ANNOTATION]);
    if (status) {
      // Against the status last written (the cache may lag), else the annotation as it was: a restart
      // raises no Event for what was already reported.
      const before = readPolicyStatus(previousStatus ?? current[STATUS_ANNOTATION]);
      for (const t of statusTransitions(before, status)) {
        const type = t.type === 'Enforced' ? 'Normal' : 'Warning';
        await this.d.events.record(policy, type, t.type, `cluster ${t.cluster}: ${t.reason}${t.message ? `: ${t.message}` : ''}`);
      }
      for (const p of newProblems(before, status)) await this.d.events.record(policy, 'Warning', p.reason, p.message);
    }
  }
}

function splitWorkKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}
