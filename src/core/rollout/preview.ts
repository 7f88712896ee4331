// What the hub would do with a hub policy as it would be after an edit (`policy-sync diff`,
// docs/architecture.md#rolling-out-a-change): the same decisions the hub controller makes for it — its
// Gateways' classes, params and placements, tenant lanes, same-named rivals, the spoke agents' reports of
// local policies, the desired works, the rollout strategy and the rollout plan — from a snapshot of the hub,
// so a person sees before the edit which clusters it reaches, in which waves, and what each copy becomes.
// Pure; the CLI reads the snapshot.
import { boundSets, clustersBoundTo } from '../fleet/clustersets.ts';
import { PLACEMENT_LABEL, placedClusters, type PlacedClusters } from '../fleet/placement.ts';
import { groupResourceKey, type GroupVersionResource } from '../k8s/gvr.ts';
import { namespacedKey, objectKey, type KubeObject } from '../k8s/objects.ts';
import { ROLLOUT_RESUME_ANNOTATION } from '../metadatakeys.ts';
import { renderDownstreamNamespace, type SyncParams } from '../params/params.ts';
import { coverage, usesOverrides } from '../spoke/conflicts.ts';
import { awaitingFirstCopies, type ReportEvidence } from '../spoke/firstcopy.ts';
import { localPoliciesIn, occupantOf, type SpokeReport } from '../spoke/spokereport.ts';
import type { PolicyProblem } from '../status/policystatus.ts';
import { LANE_CONFLICT_REASON } from '../status/statusinput.ts';
import { laneConflicts, mayShareLane, refusedClusters, type GatewayLane, type LaneConflict, type LaneHolders } from '../targets/lanes.ts';
import { possibleRivals } from '../targets/rivals.ts';
import { GATEWAY_GROUP, GATEWAY_KIND, readTargets } from '../targets/targetrefs.ts';
import {
  collisionCandidates,
  desiredWorksForPolicy,
  resolveCollisions,
  type DesiredWorks,
  type GatewayPlacement,
  type TargetReport,
} from '../works/desiredworks.ts';
import { holdersOf } from '../works/heldlanes.ts';
import { adoptLegacyName, readSpecHash, type CopyUpdateStrategy, type ManifestWork } from '../works/manifestwork.ts';
import { planRollout, recordedRollout } from './plan.ts';
import type { ClusterPhase, RolloutStatus } from '../status/rolloutstatus.ts';
import { copyRevision, previousCopy, revisionText, rolloutHold, sameSpec, workCopy } from './revision.ts';
import { classesRolloutStrategy, policyRolloutStrategy, type RolloutStrategy } from './strategy.ts';

/** The hub as the hub controller's caches hold it, for one policy's preview. */
export interface HubSnapshot {
  /** The GatewayClasses of this controller whose params are in force, by name. */
  classes: ReadonlyMap<string, SyncParams>;
  gateways: readonly KubeObject[];
  placements: readonly KubeObject[];
  decisions: readonly KubeObject[];
  managedClusters: readonly KubeObject[];
  clusterSets: readonly KubeObject[];
  bindings: readonly KubeObject[];
  /** As the hub's `--trust-decision-labels`. */
  trustDecisionLabels: boolean;
  /** The spoke agents' readable reports, by cluster; refused ones by why (`<field>: <problem>`). */
  reports: ReadonlyMap<string, SpokeReport>;
  refusedReports?: ReadonlyMap<string, string>;
  /**
   * The hub places the spoke agents' configuration (its `--spoke-config` is not `none`): a cluster without a
   * readable report gets no first copy, as on the hub (core/spoke/firstcopy.ts). Absent: no-agent mode.
   */
  spokeAgents?: boolean;
  /**
   * The hub controller's ManifestWorks on every cluster (of every policy), for who holds a tenant lane there
   * (core/works/heldlanes.ts). Absent: no lane counts as held, and the older Gateway takes a shared one.
   */
  works?: readonly KubeObject[];
}

export interface PreviewInput {
  gvr: GroupVersionResource;
  /** The policy as it would be; its metadata.generation is the revision the hub would roll out. */
  policy: KubeObject;
  hub: HubSnapshot;
  /** The policy's ManifestWorks as they are (identity validated). */
  observed: readonly KubeObject[];
  /** Policies of the same kind and name in other namespaces (same-named rivals for one spoke object). */
  sameName: readonly KubeObject[];
  /** The hub controller's label value (controllerLabelValue). */
  controller: string;
  rawFeedback: boolean;
  maxWorkBytes: number;
  crdUid?: string;
  /**
   * How the agent applies the kind's copies, as the hub decides it (`Update` where the kind's CRD has the status
   * subresource, else `ServerSideApply`). Absent: as the policy's observed works say, else `Update`.
   */
  updateStrategy?: CopyUpdateStrategy;
  /** Where the hub's status on the policy says its rollout stands (its `rollout`): a completed or halted rollout stays so. */
  reported?: RolloutStatus;
  now: number;
}

/** What the hub would do to one cluster's work now. */
export type ClusterAction =
  /** Gets the new revision now: its wave is under way (or the strategy is All). */
  | 'write'
  /** Its work already is what the hub would write: nothing is written. */
  | 'unchanged'
  /** Ungated: the spec it runs stays, only the copy's metadata or revision changes. */
  | 'relabel'
  /** Ungated: back to the spec it ran before (rolling back is never gated). */
  | 'rollback'
  /** Written with an earlier revision: it joined during the rollout, or the halt rolled it back. */
  | 'hold'
  /** Its work stays exactly as it is: its wave has not come, the rollout is halted, or it is held. */
  | 'keep'
  /** No copy, and none until its wave. */
  | 'wait'
  /** No longer targeted there: its work goes once the hub knows it is unwanted (never on doubt). */
  | 'remove'
  /** Not placed there: local policies cover the copy, its spoke name is taken, or the work is too large. */
  | 'skip';

export interface ClusterPreview {
  cluster: string;
  action: ClusterAction;
  /** Progressive: the cluster's wave (1-based); absent for All and for clusters outside the waves. */
  wave?: number;
  /** Progressive: where the cluster would stand in the rollout. */
  phase?: ClusterPhase;
  /** Why, in a few words. */
  message: string;
  /** The copy its work places now; absent when it has none. */
  current?: KubeObject;
  /** The copy of the new revision rendered for the cluster; absent where none is placed (skip, remove). */
  desired?: KubeObject;
  /** The copy written now when it is not `desired` (hold: an earlier revision). */
  written?: KubeObject;
}

export interface RolloutPreview {
  /** The revision the hub would roll out (the policy's generation). */
  revision: number;
  strategy: RolloutStrategy;
  /** The policy's rollout-strategy annotation is invalid: the class default stays in force. */
  strategyError?: string;
  /** The GatewayClasses of the Gateways the policy targets. */
  classes: string[];
  /** Where the rollout would stand once the hub has written what it writes now. */
  rollout: RolloutStatus;
  /** Progressive: the clusters of each wave, in order. */
  waves: string[][];
  /** In the order the change reaches them: by wave, then name; clusters it does not reach last. */
  clusters: ClusterPreview[];
  /** One report per target entry of the policy, in spec order. */
  targets: TargetReport[];
  /** What keeps the policy, or some targets or clusters, from syncing (as the status would say). */
  problems: PolicyProblem[];
}

/** The hub's view of the snapshot: Gateways by key and name, placements memoised. */
class View {
  private readonly gateways = new Map<string, KubeObject>();
  private readonly byName = new Map<string, KubeObject[]>();
  private readonly clusters = new Map<string, KubeObject>();
  private readonly sets = new Map<string, KubeObject>();
  private readonly placed = new Map<KubeObject, PlacedClusters>();
  private readonly worksOn = new Map<string, KubeObject[]>();

  constructor(readonly hub: HubSnapshot) {
    for (const w of hub.works ?? []) {
      const cluster = w.metadata.namespace ?? '';
      const here = this.worksOn.get(cluster);
      if (here) here.push(w);
      else this.worksOn.set(cluster, [w]);
    }
    for (const g of hub.gateways) {
      this.gateways.set(namespacedKey(g.metadata.namespace ?? '', g.metadata.name), g);
      this.byName.set(g.metadata.name, [...(this.byName.get(g.metadata.name) ?? []), g]);
    }
    for (const c of hub.managedClusters) this.clusters.set(c.metadata.name, c);
    for (const s of hub.clusterSets) this.sets.set(s.metadata.name, s);
  }

  gateway(namespace: string, name: string): KubeObject | undefined {
    return this.gateways.get(namespacedKey(namespace, name));
  }

  named(name: string): KubeObject[] {
    return this.byName.get(name) ?? [];
  }

  classOf(gateway: KubeObject): string | undefined {
    const cls = (gateway.spec as { gatewayClassName?: unknown } | undefined)?.gatewayClassName;
    return typeof cls === 'string' ? cls : undefined;
  }

  params(gateway: KubeObject): SyncParams | undefined {
    const cls = this.classOf(gateway);
    return cls === undefined ? undefined : this.hub.classes.get(cls);
  }

  labels(cluster: string): Readonly<Record<string, string>> {
    return this.clusters.get(cluster)?.metadata.labels ?? {};
  }

  /** As src/hub/placements.ts: the Gateway's Placement's decisions that count. */
  placement(gateway: KubeObject): PlacedClusters {
    const known = this.placed.get(gateway);
    if (known) return known;
    const placementName = gateway.metadata.labels?.[PLACEMENT_LABEL];
    const namespace = gateway.metadata.namespace ?? '';
    let result: PlacedClusters;
    if (!placementName) result = { clusters: [], refused: [], state: { state: 'settled' } };
    else {
      const inNamespace = (o: KubeObject): boolean => (o.metadata.namespace ?? '') === namespace;
      result = placedClusters({
        placementKey: namespacedKey(namespace, placementName),
        placement: this.hub.placements.find((p) => inNamespace(p) && p.metadata.name === placementName),
        decisions: this.hub.decisions.filter((d) => inNamespace(d) && d.metadata.labels?.[PLACEMENT_LABEL] === placementName),
        trustDecisionLabels: this.hub.trustDecisionLabels,
        bind: (clusters) =>
          clustersBoundTo(
            namespace,
            clusters,
            boundSets(this.hub.bindings.filter(inNamespace)),
            (name) => this.clusters.get(name),
            (name) => this.sets.get(name),
          ),
      });
    }
    this.placed.set(gateway, result);
    return result;
  }

  /** As src/hub/wantedworks.ts: the hub Gateways whose policies' works on the cluster target the downstream Gateway. */
  readonly holders: LaneHolders = (cluster, downstream) => holdersOf(this.worksOn.get(cluster) ?? [], downstream);

  /** A Gateway of a class in force, as its tenant lane. */
  lane(gateway: KubeObject, clusters?: readonly string[]): GatewayLane | undefined {
    const params = this.params(gateway);
    if (!params) return undefined;
    const namespace = gateway.metadata.namespace ?? '';
    return {
      namespace,
      name: gateway.metadata.name,
      ...(gateway.metadata.creationTimestamp ? { creationTimestamp: gateway.metadata.creationTimestamp } : {}),
      downstreamNamespace: renderDownstreamNamespace(params.downstreamNamespace, namespace),
      clusters: clusters ?? this.placement(gateway).clusters,
    };
  }
}

/** As src/hub/wantedworks.ts: the works a policy wants; `lanes` and `problems` collect what its placement refused. */
function wanted(view: View, input: PreviewInput, policy: KubeObject, lanes: LaneConflict[] = [], problems: PolicyProblem[] = []): { desired: DesiredWorks; classes: Set<string> } {
  const { gvr } = input;
  const classes = new Set<string>();
  const looked = new Map<string, GatewayPlacement | undefined>();
  const lookAt = (namespace: string, name: string): GatewayPlacement | undefined => {
    const gateway = view.gateway(namespace, name);
    if (!gateway) return undefined;
    const params = view.params(gateway);
    if (!params) return { managed: false, downstreamNamespaceTemplate: '', clusters: [], kindAllowed: false };
    classes.add(view.classOf(gateway)!);
    const placed = view.placement(gateway);
    for (const r of placed.refused) problems.push({ reason: 'PlacementRefused', message: `Gateway ${namespace}/${name}: ${r.message}` });
    const lane = view.lane(gateway, placed.clusters);
    const others = view.named(name).flatMap((g) => (g === gateway ? [] : (view.lane(g) ?? [])));
    const conflicts = lane && mayShareLane(lane, others) ? laneConflicts(lane, others, view.holders) : [];
    lanes.push(...conflicts);
    const refused = lane ? refusedClusters(lane, conflicts) : new Set<string>();
    return {
      managed: true,
      downstreamNamespaceTemplate: params.downstreamNamespace,
      clusters: placed.clusters.filter((c) => !refused.has(c)),
      kindAllowed: kindOf(params, gvr) !== undefined,
    };
  };
  const lookup = (namespace: string, name: string): GatewayPlacement | undefined => {
    const key = namespacedKey(namespace, name);
    if (!looked.has(key)) looked.set(key, lookAt(namespace, name));
    return looked.get(key);
  };
  // The previewed policy's copies name what they dropped against what its works place now, as the hub's do.
  const sent = policy === input.policy ? sentCopies(input.observed) : undefined;
  const base = {
    gvr,
    policy,
    gateways: lookup,
    rawFeedback: input.rawFeedback,
    maxWorkBytes: input.maxWorkBytes,
    controller: input.controller,
    ...(input.crdUid === undefined ? {} : { crdUid: input.crdUid }),
    updateStrategy: input.updateStrategy ?? observedStrategy(input.observed),
    ...(sent ? { sentCopy: (cluster: string) => sent.get(cluster) } : {}),
  };
  const first = desiredWorksForPolicy({ ...base, statusFeedback: [] });
  const statusFeedback = [...classes]
    .flatMap((c) => kindOf(input.hub.classes.get(c)!, gvr)?.statusFeedback ?? [])
    .filter((rule, i, all) => all.findIndex((r) => r.name === rule.name) === i);
  return { desired: statusFeedback.length === 0 ? first : desiredWorksForPolicy({ ...base, statusFeedback }), classes };
}

/** The copy each observed work places now, by cluster. */
function sentCopies(observed: readonly KubeObject[]): Map<string, KubeObject> {
  const sent = new Map<string, KubeObject>();
  for (const w of observed) {
    const copy = workCopy(w);
    if (copy) sent.set(w.metadata.namespace ?? '', copy);
  }
  return sent;
}

/** The strategy the policy's works carry for their copy (the hub's choice for the kind); Update when none says. */
function observedStrategy(observed: readonly KubeObject[]): CopyUpdateStrategy {
  for (const w of observed) {
    const type = (w.spec as { manifestConfigs?: { updateStrategy?: { type?: unknown } }[] } | undefined)?.manifestConfigs?.[0]?.updateStrategy?.type;
    if (type === 'ServerSideApply' || type === 'Update') return type;
  }
  return 'Update';
}

function kindOf(params: SyncParams, gvr: GroupVersionResource): SyncParams['policiesToSync'][number] | undefined {
  return params.policiesToSync.find((k) => k.group === gvr.group && k.resource === gvr.resource);
}

/** Where the policy's copy would be the same spoke object as an older same-named policy's: that one keeps it. */
function collisionLosses(view: View, input: PreviewInput, desired: DesiredWorks): { cluster: string; message: string }[] {
  const { policy, gvr } = input;
  const templateOf = (namespace: string, name: string): string | undefined => {
    const g = view.gateway(namespace, name);
    return g ? view.params(g)?.downstreamNamespace : undefined;
  };
  const rivals = possibleRivals(policy, input.sameName, templateOf).filter((p) => !p.metadata.deletionTimestamp);
  if (rivals.length === 0) return [];
  const candidates = [
    ...collisionCandidates(gvr, policy, desired.works),
    ...rivals.flatMap((rival) => collisionCandidates(gvr, rival, wanted(view, input, rival).desired.works)),
  ];
  const mine = objectKey(policy);
  return resolveCollisions(candidates).filter((loss) => loss.policyKey === mine);
}

/** As src/hub/spokeevidence.ts: where the copy's spoke name is held by something else, and where local policies cover it. */
function spokeEvidence(input: PreviewInput, works: ReadonlyMap<string, ManifestWork>): { taken: { cluster: string; message: string }[]; overridden: { cluster: string; message: string }[] } {
  const kind = groupResourceKey(input.gvr);
  const source = objectKey(input.policy);
  const taken: { cluster: string; message: string }[] = [];
  const overridden: { cluster: string; message: string }[] = [];
  for (const [cluster, work] of works) {
    const report = input.hub.reports.get(cluster);
    const copy = work.spec.workload.manifests[0];
    if (!report || !copy) continue;
    const namespace = copy.metadata.namespace ?? '';
    const at = namespacedKey(namespace, copy.metadata.name);
    const occupant = occupantOf(report, kind, namespace, copy.metadata.name);
    if (occupant.state === 'local') {
      taken.push({ cluster, message: `${copy.kind} ${at} on cluster ${cluster} is the cluster's own policy, not a copy of this one: nothing is placed there until the name is free` });
      continue;
    }
    if (occupant.state === 'synced' && occupant.source !== source) {
      taken.push({ cluster, message: `${copy.kind} ${at} on cluster ${cluster} is a copy of hub policy ${occupant.source}, not of this one: nothing is placed there until the name is free` });
      continue;
    }
    const locals = localPoliciesIn(report, kind, namespace);
    if (!locals || locals.length === 0 || usesOverrides(input.policy)) continue;
    const verdict = coverage(copy.kind, copy, locals);
    if (verdict.state === 'Overridden') overridden.push({ cluster, message: verdict.message });
  }
  return { taken, overridden };
}

/** The classes of the Gateways the policy targets (as the hub's targetClasses). */
function targetClasses(view: View, policy: KubeObject): string[] {
  const classes = readTargets(policy)
    .filter((t) => t.group === GATEWAY_GROUP && t.kind === GATEWAY_KIND)
    .flatMap((t) => {
      const g = view.gateway(t.namespace ?? policy.metadata.namespace ?? '', t.name);
      const cls = g ? view.classOf(g) : undefined;
      return cls === undefined ? [] : [cls];
    });
  return [...new Set(classes)].sort();
}

/** What the hub would do for `input.policy`: which clusters it reaches, in which waves, with which copies. */
export function previewRollout(input: PreviewInput): RolloutPreview {
  const view = new View(input.hub);
  const { policy } = input;
  const revision = typeof policy.metadata.generation === 'number' ? policy.metadata.generation : 1;
  const lanes: LaneConflict[] = [];
  const problems: PolicyProblem[] = [];
  const { desired } = wanted(view, input, policy, lanes, problems);
  for (const l of new Set(lanes.map((c) => c.message))) problems.push({ reason: LANE_CONFLICT_REASON, message: l });
  for (const [cluster, work] of desired.works) desired.works.set(cluster, adoptLegacyName(work, input.observed));
  for (const cluster of desired.works.keys()) {
    const why = input.hub.refusedReports?.get(cluster);
    if (why !== undefined) problems.push({ reason: 'SpokeReportRefused', message: `cluster ${cluster}: the spoke agent's report is refused (${why}); local policies there are not known` });
  }

  const skipped = new Map<string, string>();
  for (const t of desired.tooLarge) skipped.set(t, `the ManifestWork would exceed ${input.maxWorkBytes} bytes: not written (TooLarge); the last one written stays`);
  const evidence = spokeEvidence(input, desired.works);
  for (const t of evidence.taken) {
    desired.works.delete(t.cluster);
    skipped.set(t.cluster, `Conflicted: ${t.message}`);
  }
  for (const loss of collisionLosses(view, input, desired)) {
    desired.works.delete(loss.cluster);
    skipped.set(loss.cluster, `Conflicted: ${loss.message}`);
  }
  // As the hub: local policies are looked at for the clusters still wanted once the names taken and the collisions are out.
  for (const o of spokeEvidence(input, desired.works).overridden) {
    desired.works.delete(o.cluster);
    const withdrawn = input.observed.some((w) => w.metadata.namespace === o.cluster) ? ': its copy is withdrawn' : '';
    skipped.set(o.cluster, `Overridden: ${o.message}${withdrawn}`);
  }

  // As the hub: a first copy waits for a report that vouches for its name. The snapshot cannot tell a stale
  // report from a fresh one (the hub judges by when it saw it change): a readable one counts.
  const awaiting: string[] = [];
  if (input.hub.spokeAgents) {
    const evidenceOf = (cluster: string): ReportEvidence => {
      const report = input.hub.reports.get(cluster);
      if (report) return { state: 'fresh', report };
      const why = input.hub.refusedReports?.get(cluster);
      return why === undefined ? { state: 'absent' } : { state: 'refused', why };
    };
    for (const a of awaitingFirstCopies(groupResourceKey(input.gvr), desired.works, input.observed, evidenceOf)) {
      desired.works.delete(a.cluster);
      awaiting.push(a.cluster);
      skipped.set(a.cluster, `AwaitingSpokeReport: ${a.message}`);
    }
  }

  const classes = targetClasses(view, policy);
  const byClass = new Map<string, RolloutStrategy>();
  for (const c of classes) {
    const params = input.hub.classes.get(c);
    if (params) byClass.set(c, params.rolloutStrategy);
  }
  const { strategy, error } = policyRolloutStrategy(policy.metadata.annotations, classesRolloutStrategy(byClass));
  if (error !== undefined) problems.push({ reason: 'InvalidRolloutStrategy', message: error });

  const observedBy = new Map(input.observed.map((w) => [w.metadata.namespace ?? '', w]));
  const resume = policy.metadata.annotations?.[ROLLOUT_RESUME_ANNOTATION]?.trim() === String(revision);
  const { reported } = input;
  const plan = planRollout({
    strategy,
    revision,
    resume,
    ...recordedRollout(reported, revision),
    clusters: [...desired.works].map(([cluster, work]) => {
      const observed = observedBy.get(cluster);
      return { cluster, labels: view.labels(cluster), desired: work, ...(observed ? { observed } : {}) };
    }),
    ...(awaiting.length > 0 ? { awaiting } : {}),
    soak: new Map(),
    now: input.now,
    maxWorkBytes: input.maxWorkBytes,
  });

  const progressive = strategy.type === 'Progressive';
  const clusters: ClusterPreview[] = [];
  for (const [cluster, work] of desired.works) {
    const observed = observedBy.get(cluster);
    const current = workCopy(observed);
    const wantedCopy = workCopy(work)!;
    const phase = plan.clusters[cluster];
    const entry: ClusterPreview = { cluster, action: 'write', message: '', desired: wantedCopy, ...(current ? { current } : {}) };
    if (progressive && phase) {
      if (phase.wave !== undefined) entry.wave = phase.wave;
      entry.phase = phase.phase;
    }
    const written = plan.write.get(cluster);
    const hold = rolloutHold(observed);
    const held = hold !== undefined && hold.revision === revision && !(resume && hold.cause === 'RolledBack');
    const atRevision = observed !== undefined && copyRevision(current) === revision && !held;
    const ungated = observed !== undefined && !atRevision && !held && (sameSpec(wantedCopy, current) || sameSpec(wantedCopy, previousCopy(observed)));
    if (written) {
      const copy = workCopy(written)!;
      const placesOther = copyRevision(copy) !== revision || rolloutHold(written) !== undefined;
      if (observed && readSpecHash(observed) === readSpecHash(written)) {
        entry.action = 'unchanged';
        entry.message = placesOther ? `runs revision ${revisionText(copy)}: its work stays as it is` : `runs revision ${revision} already: nothing to write`;
      } else if (placesOther) {
        entry.action = 'hold';
        entry.written = copy;
        entry.message = phase?.message ?? `gets revision ${revisionText(copy)} for now`;
      } else if (progressive && ungated) {
        entry.action = sameSpec(wantedCopy, current) ? 'relabel' : 'rollback';
        entry.message =
          entry.action === 'relabel'
            ? `the spec it runs stays: only the copy's metadata or revision changes, written at once whatever the wave`
            : `back to the spec it ran before: rolling back is written at once whatever the wave`;
      } else {
        entry.action = 'write';
        entry.message = progressive ? `gets revision ${revision} now${entry.wave === undefined ? '' : ` (wave ${entry.wave} is under way)`}` : `gets revision ${revision} now`;
      }
    } else if (plan.keep.has(cluster)) {
      entry.action = 'keep';
      entry.message = phase?.message ?? 'its work stays as it is';
    } else {
      entry.action = 'wait';
      entry.message = phase?.message ?? 'no copy until its wave';
    }
    clusters.push(entry);
  }
  const order = (c: ClusterPreview): number => c.wave ?? Number.MAX_SAFE_INTEGER;
  clusters.sort((a, b) => order(a) - order(b) || compare(a.cluster, b.cluster));

  const outside: ClusterPreview[] = [];
  for (const [cluster, message] of skipped) {
    const current = workCopy(observedBy.get(cluster));
    outside.push({ cluster, action: 'skip', message, ...(current ? { current } : {}) });
  }
  for (const [cluster, work] of observedBy) {
    if (desired.works.has(cluster) || skipped.has(cluster)) continue;
    const current = workCopy(work);
    outside.push({ cluster, action: 'remove', message: 'no longer targeted there: its ManifestWork is deleted, once the hub knows it is unwanted (kept while OCM cannot vouch for the cluster)', ...(current ? { current } : {}) });
  }
  outside.sort((a, b) => compare(a.cluster, b.cluster));

  const waves: string[][] = [];
  if (progressive) {
    for (const c of clusters) if (c.wave !== undefined) (waves[c.wave - 1] ??= []).push(c.cluster);
  }
  return {
    revision,
    strategy,
    ...(error === undefined ? {} : { strategyError: error }),
    classes,
    rollout: plan.status,
    waves: waves.map((w) => w ?? []),
    clusters: [...clusters, ...outside],
    targets: desired.targets,
    problems,
  };
}



function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
