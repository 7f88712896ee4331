// What one hub policy wants placed, read from the caches: the Gateways it targets, each looked at once (its
// class and params, where OCM places it, the lane it holds on the spokes against same-named hub Gateways,
// docs/architecture.md#tenant-lanes), then the desired works from the core (core/works/desiredworks.ts), and
// where a same-named policy is older and keeps the spoke object (#the-spoke-copy). Decides nothing itself.
import { gatewayClassOf, gatewayTemplates, BY_CLUSTER, BY_NAME, BY_SOURCE } from './indexes.ts';
import type { GroupVersionResource } from '../core/k8s/gvr.ts';
import { namespacedKey, objectKey, type KubeObject } from '../core/k8s/objects.ts';
import { renderDownstreamNamespace } from '../core/params/params.ts';
import type { PolicyProblem } from '../core/status/policystatus.ts';
import type { LaneReport } from '../core/status/statusinput.ts';
import { laneConflicts, mayShareLane, refusedClusters, type GatewayLane, type LaneConflict, type LaneHolders } from '../core/targets/lanes.ts';
import { possibleRivals } from '../core/targets/rivals.ts';
import { collisionCandidates, desiredWorksForPolicy, resolveCollisions, type DesiredWorks, type GatewayPlacement } from '../core/works/desiredworks.ts';
import { holdersOf } from '../core/works/heldlanes.ts';
import { controllerLabelValue, sourceHash, workIdentity } from '../core/works/manifestwork.ts';
import { workCopy } from '../core/rollout/revision.ts';
import type { DynamicInformers } from '../kube/dynamicinformers.ts';
import type { Informer } from '../kube/informer.ts';
import type { ClassConfigs } from './classconfigs.ts';
import type { GatewayPlacements } from './placements.ts';

export interface WantedWorksDeps {
  watches: DynamicInformers;
  gateways: Informer;
  placed: GatewayPlacements;
  /** Our ManifestWorks, indexed BY_CLUSTER: who holds a lane on a cluster is what its works show. */
  works: Informer;
  configs: ClassConfigs;
  controllerName: string;
  /** Adds the raw `conditions` feedback rule (needs the agent's RawFeedbackJsonString gate). */
  rawFeedback: boolean;
  maxWorkBytes: number;
}

export interface Wanted {
  desired: DesiredWorks;
  /** Conflicts between the lanes of the policy's Gateways and other hub Gateways, as the status reports them. */
  lanes: LaneReport[];
  /** Placements refused (forged decisions, clusters outside the namespace's sets). */
  problems: PolicyProblem[];
}

export class WantedWorks {
  constructor(private readonly d: WantedWorksDeps) {}

  of(gvr: GroupVersionResource, policy: KubeObject): Wanted {
    const lanes: LaneConflict[] = [];
    const problems: PolicyProblem[] = [];
    const desired = this.desired(gvr, policy, lanes, problems, this.sentCopies(gvr, policy));
    return { desired, lanes: this.laneReports(lanes), problems };
  }

  /**
   * Where this policy's copy would be the same spoke object as another hub policy's (a
   * downstreamNamespace without `{namespace}`), the older policy keeps it.
   */
  collisionLosses(gvr: GroupVersionResource, policy: KubeObject, desired: DesiredWorks): ReturnType<typeof resolveCollisions> {
    const informer = this.d.watches.informer(gvr)!;
    const sameName = informer.store.byIndex(BY_NAME, policy.metadata.name);
    const rivals = possibleRivals(policy, sameName, gatewayTemplates(this.d.gateways, this.d.configs)).filter((p) => !p.metadata.deletionTimestamp);
    if (rivals.length === 0) return [];
    const candidates = [
      ...collisionCandidates(gvr, policy, desired.works),
      ...rivals.flatMap((rival) => collisionCandidates(gvr, rival, this.desired(gvr, rival).works)),
    ];
    const mine = objectKey(policy);
    return resolveCollisions(candidates).filter((loss) => loss.policyKey === mine);
  }

  /** The copy the policy's work on each cluster places now (validated works only, as the reconciler reads them). */
  private sentCopies(gvr: GroupVersionResource, policy: KubeObject): Map<string, KubeObject> {
    const source = sourceHash(gvr, policy.metadata.namespace ?? '', policy.metadata.name);
    const sent = new Map<string, KubeObject>();
    for (const work of this.d.works.store.byIndex(BY_SOURCE, source)) {
      const copy = workIdentity(work) === undefined ? undefined : workCopy(work);
      if (copy) sent.set(work.metadata.namespace ?? '', copy);
    }
    return sent;
  }

  /**
   * The works the policy wants; `lanes` and `problems` collect what its Gateways' placement refused; `sent`, the
   * copies its works place now, by cluster (for the keys a copy dropped, core/works/droppedkeys.ts).
   */
  private desired(gvr: GroupVersionResource, policy: KubeObject, lanes: LaneConflict[] = [], problems: PolicyProblem[] = [], sent?: ReadonlyMap<string, KubeObject>): DesiredWorks {
    const classes = new Set<string>();
    // Each Gateway is looked at once per reconcile, however many targets and passes ask for it.
    const looked = new Map<string, GatewayPlacement | undefined>();
    const lookAt = (namespace: string, name: string): GatewayPlacement | undefined => {
      const gateway = this.d.gateways.store.get(namespacedKey(namespace, name));
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
      // The works on a cluster are read only where another Gateway could share this one's lane at all.
      const conflicts = lane && mayShareLane(lane, others) ? laneConflicts(lane, others, this.holders) : [];
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
      const key = namespacedKey(namespace, name);
      if (!looked.has(key)) looked.set(key, lookAt(namespace, name));
      return looked.get(key);
    };
    const crdUid = this.d.configs.crdUid(gvr);
    const input = {
      gvr,
      policy,
      gateways: lookup,
      rawFeedback: this.d.rawFeedback,
      maxWorkBytes: this.d.maxWorkBytes,
      controller: controllerLabelValue(this.d.controllerName),
      ...(crdUid === undefined ? {} : { crdUid }),
      updateStrategy: this.d.configs.statusSubresource(gvr) ? ('Update' as const) : ('ServerSideApply' as const),
      ...(sent ? { sentCopy: (cluster: string) => sent.get(cluster) } : {}),
    };
    const first = desiredWorksForPolicy({ ...input, statusFeedback: [] });
    // Feedback rules of the kind: the union over the classes its Gateways belong to, known only after a
    // first pass over the targets.
    const statusFeedback = [...classes]
      .flatMap((c) => this.d.configs.kind(c, gvr)?.config.statusFeedback ?? [])
      .filter((rule, i, all) => all.findIndex((r) => r.name === rule.name) === i);
    return statusFeedback.length === 0 ? first : desiredWorksForPolicy({ ...input, statusFeedback });
  }

  /** The hub Gateways whose policies' works on the cluster target the downstream Gateway (core/works/heldlanes.ts). */
  private readonly holders: LaneHolders = (cluster, downstream) => holdersOf(this.d.works.store.byIndex(BY_CLUSTER, cluster), downstream);

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
}
