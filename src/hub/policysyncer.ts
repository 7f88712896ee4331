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
import { POLICIES_SYNCED_ANNOTATION } from '../core/metadatakeys.ts';
import { objectKey, type KubeObject } from '../core/objects.ts';
import { clustersFromDecisions } from '../core/placement.ts';
import { policiesSyncedAnnotation } from '../core/policiessynced.ts';
import type { EventRecorder } from '../kube/events.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { Informer } from '../kube/informer.ts';
import { RESOURCES, type ResourceRef } from '../kube/resource.ts';
import { deleteObject, mergePatch, serverSideApply } from '../kube/writes.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import type { ClassConfigs } from './classconfigs.ts';
import { ownsClass } from './gatewayclassreconciler.ts';
import { BY_NAME, BY_PLACEMENT, BY_SOURCE, parsePolicyKey } from './indexes.ts';
import type { DynamicInformers } from '../kube/dynamicinformers.ts';
import { WriteExpectations } from './writeexpectations.ts';

export interface PolicySyncerOptions {
  controllerName: string;
  /** Adds the raw `conditions` feedback rule (needs the agent's RawFeedbackJsonString gate). */
  rawFeedback: boolean;
  maxWorkBytes: number;
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

export class PolicySyncer {
  private readonly expectations = new WriteExpectations();
  /** Problems last reported per policy, so Events mark transitions rather than repeat every pass. */
  private readonly reported = new Map<string, Set<string>>();

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
      if (observed.length === 0) return;
      if (!this.configurationSettled()) {
        log.debug({}, 'kind not watched but some GatewayClass has no configuration in force; keeping its works');
        return;
      }
      await this.converge(log, [], observed, new Set());
      this.reported.delete(key);
      return;
    }
    if (!informer.synced) return { requeueAfterMs: UNSYNCED_RETRY_MS };

    const policy = informer.store.get(objectKey({ metadata: { namespace, name } }));
    if (!policy || policy.metadata.deletionTimestamp) {
      await this.converge(log, [], observed, new Set());
      this.reported.delete(key);
      return;
    }

    const desired = this.desired(gvr, policy);
    const losses = this.collisionLosses(gvr, policy, desired);
    for (const loss of losses) desired.works.delete(loss.cluster);
    // A work grown too large is not written; the last good one on that cluster stays in place.
    const tooLarge = new Set(desired.tooLarge);
    const retain = new Set(observed.filter((w) => tooLarge.has(w.metadata.namespace ?? '')).map(workKeyOf));
    const written = await this.converge(log, [...desired.works.values()], observed, retain);

    await this.writePoliciesSynced(gvr, policy, written);
    await this.reportProblems(key, policy, desired, losses.map((l) => l.message));
    return;
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
        clusters: this.clustersOf(gateway),
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

  private clustersOf(gateway: KubeObject): string[] {
    const placement = gateway.metadata.labels?.['cluster.open-cluster-management.io/placement'];
    if (!placement) return [];
    return clustersFromDecisions(this.d.decisions.store.byIndex(BY_PLACEMENT, `${gateway.metadata.namespace}/${placement}`));
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

  /** `kuadrant.io/policies-synced`: where the copy is placed, sorted, written only when it changed. */
  private async writePoliciesSynced(gvr: GroupVersionResource, policy: KubeObject, works: ManifestWork[]): Promise<void> {
    const value = policiesSyncedAnnotation(
      works.map((w) => {
        const copy = w.spec.workload.manifests[0]!;
        return { cluster: w.metadata.namespace, name: copy.metadata.name, namespace: copy.metadata.namespace ?? '' };
      }),
    );
    if ((policy.metadata.annotations?.[POLICIES_SYNCED_ANNOTATION] ?? undefined) === value) return;
    const resource: ResourceRef = { ...gvr, namespaced: true };
    await mergePatch(this.d.http, resource, policy.metadata.namespace, policy.metadata.name, {
      metadata: { annotations: { [POLICIES_SYNCED_ANNOTATION]: value ?? null } },
    });
  }

  /** Events on the policy for problems that are new since the last pass. */
  private async reportProblems(key: string, policy: KubeObject, desired: DesiredWorks, collisions: string[]): Promise<void> {
    const problems = new Map<string, [reason: string, message: string]>();
    for (const t of desired.targets) {
      if (t.state === 'rejected') problems.set(`target:${t.path}:${t.reason}`, ['TargetNotSynced', `${t.path}: ${t.reason}: ${t.message}`]);
    }
    if (desired.noClusters) problems.set('noClusters', ['NoClusters', 'the targeted Gateways are placed on no cluster: nothing is synced']);
    for (const c of desired.tooLarge) problems.set(`tooLarge:${c}`, ['TooLarge', `the ManifestWork for cluster ${c} exceeds ${this.o.maxWorkBytes} bytes and is not written`]);
    for (const m of desired.mismatches) problems.set(`mismatch:${m.cluster}:${m.path}`, ['NamespaceMismatch', m.message]);
    for (const m of collisions) problems.set(`conflicted:${m}`, ['Conflicted', m]);
    if (desired.targets.length > 0 && desired.targets.every((t) => t.state === 'rejected')) {
      problems.set('notSynced', ['NotSynced', 'no target of this policy can be synced: it has no ManifestWorks']);
    }
    const before = this.reported.get(key) ?? new Set<string>();
    this.reported.set(key, new Set(problems.keys()));
    for (const [id, [reason, message]] of problems) {
      if (!before.has(id)) await this.d.events.record(policy, 'Warning', reason, message);
    }
  }
}

function splitWorkKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}
