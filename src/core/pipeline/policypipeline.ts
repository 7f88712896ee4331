// Everything the hub decides for one hub policy, in one pure function over a read-only view of the hub
// (hubview.ts): the Gateways it targets (each one's class, params and placement, the tenant lane it holds
// against same-named Gateways), the desired works (core/works/desiredworks.ts), where a same-named policy is
// older and keeps the spoke object, what the spoke agents' reports say (a name held by another object, local
// policies covering the copy, evidence missing for a first copy), the rollout strategy and plan, and the
// problems to report. The hub controller (src/hub/policyreconciler.ts) calls it and writes what it returns;
// `policy-sync diff` (core/pipeline/preview.ts) calls it and shows what it returns. A rule added here is in
// both; a rule written anywhere else is a drift. docs/architecture.md#the-decision-pipeline.
import { groupResourceKey, type GroupResource, type GroupVersionResource } from '../k8s/gvr.ts';
import { namespacedKey, objectKey, type KubeObject } from '../k8s/objects.ts';
import { workKeyOf, type WorkKey } from '../keys.ts';
import { REAPPLY_LABEL, ROLLOUT_RESUME_ANNOTATION, ROLLOUT_STRATEGY_ANNOTATION, STATUS_ANNOTATION } from '../metadatakeys.ts';
import { OBSERVED_GENERATION_TEXT } from '../params/classparams.ts';
import { renderDownstreamNamespace } from '../params/params.ts';
import { planRollout, recordedRollout, rolloutVariants, type RolloutPlan, type UnreachedCluster } from '../rollout/plan.ts';
import { workCopy } from '../works/revision.ts';
import { classesRolloutStrategy, policyRolloutStrategy, type RolloutStrategy } from '../params/strategy.ts';
import { coverage, usesOverrides } from '../spoke/conflicts.ts';
import { awaitingFirstCopies, type AwaitingCluster, type ReportEvidence } from '../spoke/firstcopy.ts';
import { localPoliciesIn, occupantOf } from '../spoke/reportquery.ts';
import { type SpokeReport } from '../spoke/spokereport.ts';
import { readPolicyStatus } from '../status/annotation.ts';
import type { LocalNote, PolicyProblem } from '../status/policystatus.ts';
import type { LaneReport, LocalVerdicts } from '../status/statusinput.ts';
import { laneConflicts, mayShareLane, refusedClusters, type GatewayLane, type LaneConflict } from '../targets/lanes.ts';
import { possibleRivals } from '../targets/rivals.ts';
import { GATEWAY_GROUP, GATEWAY_KIND, classifyTargets, readTargets } from '../targets/targetrefs.ts';
import { collisionCandidates, desiredWorksForPolicy, resolveCollisions, type DesiredWorks, type GatewayPlacement } from '../works/desiredworks.ts';
import { holdersOf } from '../works/heldlanes.ts';
import { adoptLegacyName, relabelledOnly, withReapplyLabel, type ManifestWork } from '../works/manifestwork.ts';
import { driftedCopies, driftToken, lingeringCopies, type SpokeTruth } from '../spoke/spoketruth.ts';
import { withdrawnHere } from './withdrawal.ts';
import { parseVariant, type PolicyVariant } from '../variants/policyvariant.ts';
import { renderCopy, selects, type CopyRendering, type KindSchema } from '../variants/render.ts';
import { schemaCheck } from '../variants/schemacheck.ts';
import type { VariantFailure } from '../works/desiredworks.ts';
import { classOfGateway, type HubView } from './hubview.ts';
import { decideRemovals, type Removals } from './removals.ts';
import type { DefaultingSchema } from '../k8s/schemadefaults.ts';

export interface PolicyPipelineInput {
  gvr: GroupVersionResource;
  policy: KubeObject;
  /** The policy's ManifestWorks as they are (identity validated: name, label and source-ref agree). */
  observed: readonly KubeObject[];
  /** The hub controller's label value (controllerLabelValue). */
  controller: string;
  /** Works carry the raw `conditions` feedback rule (the agent's RawFeedbackJsonString gate). */
  rawFeedback: boolean;
  maxWorkBytes: number;
  /**
   * Progressive: since when each cluster has succeeded at the revision (the soak clocks of the last plan of this
   * revision); the hub remembers them between passes, a preview starts from none.
   */
  soak?: ReadonlyMap<string, number>;
  /**
   * When this process first saw each copy of the policy reported where it has no work (core/spoke/spoketruth.ts
   * lingerKey): the hub remembers them between passes (the decision's `truth.lingering`), a preview starts from none.
   */
  lingerSeen?: ReadonlyMap<string, number>;
  /** Wall time, ms since the epoch. */
  now: number;
}

/** A cluster the policy wants, that gets no copy (or keeps the one it has), and why. */
export interface ClusterRefusal {
  cluster: string;
  message: string;
}

export interface PolicyDecision {
  /**
   * The works to have in place now: per cluster, the copy of the policy's revision — or, under a Progressive
   * rollout, the one the plan writes now — with no work for the clusters refused below.
   */
  desired: DesiredWorks;
  /** The work each cluster the policy is placed on would get at its revision, before the rollout chose when. */
  revisionWorks: ReadonlyMap<string, ManifestWork>;
  /** Conflicts between the lanes of the policy's Gateways and other hub Gateways. */
  lanes: LaneReport[];
  /** Clusters where another hub Gateway keeps the downstream Gateway (its lane): no copy through the policy's Gateway there. */
  laneRefused: ClusterRefusal[];
  /** Where a same-named policy's copy or another object holds the spoke object: nothing placed there. */
  losses: ClusterRefusal[];
  /** Of the losses, those a spoke report showed (the name held there by another object). */
  nameTaken: ClusterRefusal[];
  /** What local policies do to the copies. */
  local: LocalVerdicts;
  /** Clusters whose first copy waits for a fresh report from their spoke agent. */
  awaiting: AwaitingCluster[];
  /** The GatewayClasses of the Gateways the policy targets, sorted. */
  targetClasses: string[];
  strategy: RolloutStrategy;
  /** Progressive: the rollout plan (All writes every work at once: none). */
  rollout?: RolloutPlan;
  /** Works whose cluster is left as it is (too large, name taken, awaiting a report, held by the rollout): never deleted for it. */
  retain: Set<WorkKey>;
  /** Observed works the rollout keeps as they are. */
  kept: KubeObject[];
  /** What keeps the policy, or some targets or clusters, from syncing. */
  problems: PolicyProblem[];
  /** Clusters whose copy the variants could not render: no new write, they keep the copy they run. */
  variantFailures: VariantFailure[];
  /** Each PolicyVariant targeting the policy, as its status reports it. */
  variants: VariantOutcome[];
  /** What the fresh spoke reports say runs of the policy (drifted and lingering copies). */
  truth: SpokeTruth;
  /**
   * The deletion rule's word on every observed work neither written nor retained, and on every copy that
   * lingers past its grace where no work places it (removals.ts). The hub deletes (or hands back) only what it
   * lets go; `diff` shows each with its reason.
   */
  removals: Removals;
}

/** What became of one PolicyVariant of the policy (its status, src/hub/variantstatus.ts). */
export interface VariantOutcome {
  namespace: string;
  name: string;
  generation: number;
  /** Why the variant itself is refused (the field named); absent when accepted. */
  refused?: { field: string; message: string };
  /** Clusters whose copy it changes, sorted. */
  applied: string[];
  /** Clusters it selects whose copy could not be rendered, and why. */
  failing: VariantFailure[];
  /** Indices of entries that select none of the clusters the policy is placed on. */
  unmatched: number[];
}

/** What the hub decides for `input.policy` over `view`. */
export function decidePolicy(view: HubView, input: PolicyPipelineInput): PolicyDecision {
  const { gvr, policy, observed } = input;
  const lanes: LaneConflict[] = [];
  const problems: PolicyProblem[] = [];
  const variants = policyVariants(view, gvr, policy);
  const desired = desiredWorks(view, input, policy, sentCopies(observed), lanes, problems, variants.render);
  const variantOutcomes = outcomes(view, variants, desired);
  for (const r of variants.refused) problems.push({ reason: 'InvalidVariant', message: `PolicyVariant ${r.name}: ${r.field}: ${r.message}; every cluster keeps the copy it runs` });
  // A cluster one of the policy's Gateways lost its lane on, and that no other of its Gateways reaches.
  const targeted = new Set(readTargets(policy).map((t) => namespacedKey(t.namespace ?? policy.metadata.namespace ?? '', t.name)));
  const laneRefused = uniqueByCluster(lanes.filter((c) => targeted.has(c.refused) && !desired.works.has(c.cluster) && !desired.tooLarge.includes(c.cluster)));
  // A work an earlier version named is updated under its name, never renamed (a rename would delete the copy).
  // Each cluster's desired work against that cluster's observed works alone: against all of them, a policy on a
  // thousand clusters read a million works per reconcile.
  const observedOn = new Map<string, KubeObject[]>();
  for (const w of observed) {
    const on = observedOn.get(w.metadata.namespace ?? '');
    if (on) on.push(w);
    else observedOn.set(w.metadata.namespace ?? '', [w]);
  }
  for (const [cluster, work] of desired.works) desired.works.set(cluster, adoptLegacyName(work, observedOn.get(work.metadata.namespace ?? '') ?? []));
  // A spoke report refused (schema, caps) says nothing of local policies there: the policy says so (a first
  // copy waits below; a copy already placed is kept and updated).
  // What each cluster's agent vouches for, read once per pass (several stages ask).
  const known = new Map<string, ReportEvidence>();
  const evidenceOf = (cluster: string): ReportEvidence => {
    let e = known.get(cluster);
    if (e === undefined) known.set(cluster, (e = view.evidence(cluster)));
    return e;
  };
  for (const cluster of desired.works.keys()) {
    const evidence = evidenceOf(cluster);
    if (view.spokeAgents && evidence.state === 'refused') {
      problems.push({ reason: 'SpokeReportRefused', message: `cluster ${cluster}: the spoke agent's report is refused (${evidence.why}); local policies there are not known` });
    }
  }
  // Where the copy's name on a spoke is held by an object that is not this policy's copy, nothing is placed
  // (OCM's agent would merge into it and take it over) and nothing there is removed.
  const nameTaken = takenNames(evidenceOf, gvr, policy, desired.works);
  for (const t of nameTaken) desired.works.delete(t.cluster);
  const losses = [...collisionLosses(view, input, desired), ...nameTaken];
  for (const loss of losses) desired.works.delete(loss.cluster);
  // Where local policies cover the whole copy, they are what is enforced there: no copy.
  const local = localVerdicts(evidenceOf, gvr, policy, desired.works);
  for (const o of local.overridden) desired.works.delete(o.cluster);
  // No evidence is not evidence of absence: a first copy waits for a fresh report that vouches for its name
  // and says whether local policies cover it. Removed before the rollout plans, like the taken names, so no
  // wave writes there; a work already there stays as it is (never withdrawn for doubt).
  const awaiting = view.spokeAgents ? awaitingFirstCopies(groupResourceKey(gvr), desired.works, observed, evidenceOf) : [];
  for (const a of awaiting) desired.works.delete(a.cluster);
  const revisionWorks = new Map(desired.works);

  // The revision reaches the clusters as the rollout strategy says: those it has not reached keep their works
  // as they are (docs/design/rollout.md#rolling-out-a-change).
  const targetClasses = classesTargeted(view, policy);
  const { strategy, problem } = strategyFor(view, policy, targetClasses);
  if (problem) problems.push(problem);
  // Clusters no copy of this revision can be sent to keep theirs, and hold the rollout short of Complete.
  const unreached = [...desired.tooLarge.map((cluster) => ({ cluster, reason: 'TooLarge' })), ...desired.variantFailures.map((f) => ({ cluster: f.cluster, reason: f.reason }))];
  const rollout = plan(view, input, strategy, desired.works, awaiting.map((a) => a.cluster), unreached);
  if (rollout) {
    desired.works.clear();
    for (const [cluster, work] of rollout.write) desired.works.set(cluster, work);
  }
  const kept = rollout ? observed.filter((w) => rollout.keep.has(w.metadata.namespace ?? '')) : [];
  // What runs on each spoke, by its fresh report: a copy not as sent is put back at once unless the classes say
  // `drift: Report`; a copy that runs where no work places it is told (and mended by the deletion rule, in the hub).
  const truth = spokeTruth(view, input, targetClasses, evidenceOf);
  if (truth.correct) {
    const live = new Map(observed.map((w) => [w.metadata.namespace ?? '', w]));
    for (const d of truth.drifted) {
      const work = desired.works.get(d.cluster);
      const observedWork = live.get(d.cluster);
      if (!work || !observedWork) continue;
      // Put back by a relabel only where the work is otherwise the one in place: a new revision written now is applied
      // whole and overwrites the drift itself — relabelled, the put-back would go unsaid, the cluster Pending on the
      // new revision rather than Drifted (the soak, seed 4623: a hub edit landed 0.1 s after a spoke edit).
      const relabelled = withReapplyLabel(work, driftToken(d.drift));
      if (relabelled !== work && relabelledOnly(relabelled, observedWork)) desired.works.set(d.cluster, relabelled);
    }
  }
  // A token once written stays while no new drift comes: the work is not written again for its going.
  for (const w of observed) {
    const cluster = w.metadata.namespace ?? '';
    const token = w.metadata.labels?.[REAPPLY_LABEL];
    const work = desired.works.get(cluster);
    if (token !== undefined && work && work.metadata.labels[REAPPLY_LABEL] === undefined) desired.works.set(cluster, withReapplyLabel(work, token));
  }
  // A work grown too large is not written; the last good one on that cluster stays in place.
  // A cluster whose variants fail to render keeps the copy it runs: never the base copy in its place.
  const untouched = new Set([...desired.tooLarge, ...desired.variantFailures.map((f) => f.cluster), ...nameTaken.map((t) => t.cluster), ...awaiting.map((a) => a.cluster), ...(rollout?.keep ?? [])]);
  const retain = new Set(observed.filter((w) => untouched.has(w.metadata.namespace ?? '')).map(workKeyOf));
  const removals = decideRemovals(view, {
    gr: gvr,
    policy,
    observed,
    desired: desired.works,
    retain,
    targetClasses,
    overridden: new Map(local.overridden.map((o) => [o.cluster, o.message])),
    lingering: truth.lingering,
    now: input.now,
  });
  return {
    desired,
    revisionWorks,
    lanes: laneReports(view, lanes),
    laneRefused,
    losses,
    nameTaken,
    local,
    awaiting,
    targetClasses,
    strategy,
    ...(rollout ? { rollout } : {}),
    retain,
    kept,
    problems,
    variantFailures: desired.variantFailures,
    variants: variantOutcomes,
    truth,
    removals,
  };
}

function spokeTruth(view: HubView, input: PolicyPipelineInput, classes: readonly string[], evidenceOf: (cluster: string) => ReportEvidence): SpokeTruth {
  const kind = groupResourceKey(input.gvr);
  const source = objectKey(input.policy);
  const placed = new Map<string, KubeObject>();
  for (const w of input.observed) {
    const copy = workCopy(w);
    if (copy && !w.metadata.deletionTimestamp) placed.set(w.metadata.namespace ?? '', copy);
  }
  const drifted = view.spokeAgents ? driftedCopies(kind, source, placed, evidenceOf) : [];
  // A policy that targets no Gateway of a class this controller owns, and has no work of ours, is another
  // controller's (or nobody's): its copies are not this hub's to call lingering, nor to keep a witness for —
  // unless this controller withdrew them and its mark says so (withdrawal.ts): then what was left is still its own.
  const placing = input.observed.length > 0 || classes.some((c) => view.params(c) !== undefined);
  const withdrawn = !placing && view.spokeAgents && withdrawnHere(view, input.gvr, input.policy, input.controller, classes);
  const lingering = view.spokeAgents && (placing || withdrawn) ? lingeringCopies(view.reportedCopies(kind, source), placed, input.lingerSeen ?? new Map(), input.now) : [];
  const correct = classes.every((c) => (view.params(c)?.drift ?? 'Correct') === 'Correct');
  return { drifted, lingering, correct, withdrawn };
}

function uniqueByCluster(conflicts: readonly LaneConflict[]): ClusterRefusal[] {
  const byCluster = new Map<string, string>();
  for (const c of conflicts) if (!byCluster.has(c.cluster)) byCluster.set(c.cluster, c.message);
  return [...byCluster].map(([cluster, message]) => ({ cluster, message }));
}

/** The copy each observed work places now, by cluster (for the keys a copy dropped, core/works/droppedkeys.ts). */
function sentCopies(observed: readonly KubeObject[]): Map<string, KubeObject> {
  const sent = new Map<string, KubeObject>();
  for (const w of observed) {
    const copy = workCopy(w);
    if (copy) sent.set(w.metadata.namespace ?? '', copy);
  }
  return sent;
}

/**
 * The works a policy wants; `lanes` and `problems` collect what its Gateways' placement refused. Each Gateway is
 * looked at once, however many targets and passes ask for it.
 */
function desiredWorks(
  view: HubView,
  input: PolicyPipelineInput,
  policy: KubeObject,
  sent?: ReadonlyMap<string, KubeObject>,
  lanes: LaneConflict[] = [],
  problems: PolicyProblem[] = [],
  render?: (cluster: string, copy: KubeObject, running: KubeObject | undefined) => CopyRendering,
): DesiredWorks {
  const { gvr } = input;
  const classes = new Set<string>();
  const looked = new Map<string, GatewayPlacement | undefined>();
  const lookAt = (namespace: string, name: string): GatewayPlacement | undefined => {
    const gateway = view.gateway(namespace, name);
    if (!gateway) return undefined;
    const className = classOfGateway(gateway) ?? '';
    const params = view.params(className);
    if (!params) return { managed: false, downstreamNamespaceTemplate: '', clusters: [], kindAllowed: false };
    classes.add(className);
    // Forged decisions and clusters outside the namespace's ManagedClusterSets count for nothing; said.
    const placed = view.placement(gateway);
    for (const r of placed.refused) problems.push({ reason: 'PlacementRefused', message: `Gateway ${namespace}/${name}: ${r.message}` });
    const lane = laneOf(view, gateway, placed.clusters);
    const others = view.gatewaysNamed(name).flatMap((g) => (g === gateway ? [] : (laneOf(view, g) ?? [])));
    // The works on a cluster are read only where another Gateway could share this one's lane at all.
    const conflicts = lane && mayShareLane(lane, others) ? laneConflicts(lane, others, (cluster, downstream) => holdersOf(view.worksOn(cluster), downstream)) : [];
    lanes.push(...conflicts);
    const refused = lane ? refusedClusters(lane, conflicts) : new Set<string>();
    return {
      managed: true,
      downstreamNamespaceTemplate: params.downstreamNamespace,
      clusters: placed.clusters.filter((c) => !refused.has(c)),
      kindAllowed: view.kindInForce(className, gvr) !== undefined,
    };
  };
  const lookup = (namespace: string, name: string): GatewayPlacement | undefined => {
    const key = namespacedKey(namespace, name);
    if (!looked.has(key)) looked.set(key, lookAt(namespace, name));
    return looked.get(key);
  };
  const facts = view.kind(gvr);
  const base = {
    gvr,
    policy,
    gateways: lookup,
    rawFeedback: input.rawFeedback,
    maxWorkBytes: input.maxWorkBytes,
    controller: input.controller,
    ...(facts.crdUid === undefined ? {} : { crdUid: facts.crdUid }),
    updateStrategy: facts.statusSubresource ? ('Update' as const) : ('ServerSideApply' as const),
    ...specSchemaOf(facts.schema),
    ...(sent ? { sentCopy: (cluster: string) => sent.get(cluster) } : {}),
    ...(render ? { render } : {}),
  };
  // Feedback rules of the kind: the union over the classes its Gateways belong to, known once the targets are
  // looked at (the lookups are kept for the works' build: each Gateway is looked at once).
  classifyTargets(policy, (namespace, name) => lookup(namespace, name)?.managed === true);
  const statusFeedback = [...classes]
    .flatMap((c) => view.kindInForce(c, gvr)?.statusFeedback ?? [])
    .filter((rule, i, all) => all.findIndex((r) => r.name === rule.name) === i);
  return desiredWorksForPolicy({ ...base, statusFeedback });
}

/** The `spec` property of a kind's schema, what a copy's digest defaults its spec by; none when not known. */
function specSchemaOf(schema: Readonly<Record<string, unknown>> | undefined): { specSchema?: DefaultingSchema } {
  const spec = (schema?.properties as Record<string, unknown> | undefined)?.spec;
  return spec !== null && typeof spec === 'object' && !Array.isArray(spec) ? { specSchema: spec } : {};
}

/** A Gateway of a class in force, as its tenant lane; undefined otherwise. */
function laneOf(view: HubView, gateway: KubeObject, clusters?: readonly string[]): GatewayLane | undefined {
  const className = classOfGateway(gateway);
  const params = className === undefined ? undefined : view.params(className);
  if (!params) return undefined;
  const namespace = gateway.metadata.namespace ?? '';
  return {
    namespace,
    name: gateway.metadata.name,
    ...(gateway.metadata.creationTimestamp ? { creationTimestamp: gateway.metadata.creationTimestamp } : {}),
    downstreamNamespace: renderDownstreamNamespace(params.downstreamNamespace, namespace),
    clusters: clusters ?? view.placement(gateway).clusters,
  };
}

/** The lane conflicts as the status reports them, once each, with the two hub Gateways to tell. */
function laneReports(view: HubView, conflicts: readonly LaneConflict[]): LaneReport[] {
  const seen = new Set<string>();
  const gatewayAt = (key: string): KubeObject[] => {
    const slash = key.indexOf('/');
    const g = view.gateway(key.slice(0, slash), key.slice(slash + 1));
    return g ? [g] : [];
  };
  return conflicts.flatMap((c) => {
    if (seen.has(c.message)) return [];
    seen.add(c.message);
    return [{ message: c.message, gateways: [c.keeper, c.refused].flatMap(gatewayAt) }];
  });
}

/**
 * Where this policy's copy would be the same spoke object as another hub policy's (a downstreamNamespace without
 * `{namespace}`), the older policy keeps it.
 */
function collisionLosses(view: HubView, input: PolicyPipelineInput, desired: DesiredWorks): ClusterRefusal[] {
  const { policy, gvr } = input;
  const templateOf = (namespace: string, name: string): string | undefined => {
    const g = view.gateway(namespace, name);
    const className = g ? classOfGateway(g) : undefined;
    return className === undefined ? undefined : view.params(className)?.downstreamNamespace;
  };
  const rivals = possibleRivals(policy, view.policiesNamed(gvr, policy.metadata.name), templateOf).filter((p) => !p.metadata.deletionTimestamp);
  if (rivals.length === 0) return [];
  const candidates = [
    ...collisionCandidates(gvr, policy, desired.works),
    ...rivals.flatMap((rival) => collisionCandidates(gvr, rival, desiredWorks(view, input, rival).works)),
  ];
  const mine = objectKey(policy);
  return resolveCollisions(candidates).filter((loss) => loss.policyKey === mine);
}

function freshReport(evidenceOf: (cluster: string) => ReportEvidence, cluster: string): SpokeReport | undefined {
  const evidence = evidenceOf(cluster);
  return evidence.state === 'fresh' ? evidence.report : undefined;
}

/**
 * Clusters whose fresh report shows the copy's kind, namespace and name held by an object that is not a copy of
 * this hub policy: a local policy, or a copy of another hub policy. A report that does not cover the kind says
 * nothing.
 */
function takenNames(evidenceOf: (cluster: string) => ReportEvidence, gr: GroupResource, policy: KubeObject, works: ReadonlyMap<string, ManifestWork>): ClusterRefusal[] {
  const kind = groupResourceKey(gr);
  const source = objectKey(policy);
  const taken: ClusterRefusal[] = [];
  for (const [cluster, work] of works) {
    const report = freshReport(evidenceOf, cluster);
    const copy = work.spec.workload.manifests[0];
    if (!report || !copy) continue;
    const at = namespacedKey(copy.metadata.namespace ?? '', copy.metadata.name);
    const occupant = occupantOf(report, kind, copy.metadata.namespace ?? '', copy.metadata.name);
    if (occupant.state === 'local') {
      taken.push({ cluster, message: `${copy.kind} ${at} on cluster ${cluster} is the cluster's own policy, not a copy of this one: nothing is placed there until the name is free` });
    } else if (occupant.state === 'synced' && occupant.source !== source) {
      taken.push({ cluster, message: `${copy.kind} ${at} on cluster ${cluster} is a copy of hub policy ${occupant.source}, not of this one: nothing is placed there until the name is free` });
    }
  }
  return taken;
}

/** What local policies do to each cluster's copy. A hub policy using GEP-713 overrides is placed anyway. */
function localVerdicts(evidenceOf: (cluster: string) => ReportEvidence, gr: GroupResource, policy: KubeObject, works: ReadonlyMap<string, ManifestWork>): LocalVerdicts {
  const overridden: (ClusterRefusal & { by: readonly string[] })[] = [];
  const notes = new Map<string, LocalNote>();
  const kind = groupResourceKey(gr);
  for (const [cluster, work] of works) {
    const report = freshReport(evidenceOf, cluster);
    const copy = work.spec.workload.manifests[0];
    if (!report || !copy) continue;
    const locals = localPoliciesIn(report, kind, copy.metadata.namespace ?? '');
    if (!locals || locals.length === 0) continue;
    const verdict = coverage(copy.kind, copy, locals);
    if (verdict.state === 'None') continue;
    if (usesOverrides(policy)) {
      notes.set(cluster, { reason: 'OverridesLocal', message: `${copy.kind} overrides [${verdict.by.join(', ')}] on the cluster: the hub policy uses overrides` });
    } else if (verdict.state === 'Overridden') overridden.push({ cluster, message: verdict.message, by: verdict.by });
    else notes.set(cluster, { reason: 'PartiallyEnforced', message: verdict.message, by: verdict.by });
  }
  return { overridden, notes };
}

/** The classes of the Gateways the policy targets, sorted. */
function classesTargeted(view: HubView, policy: KubeObject): string[] {
  const classes = readTargets(policy)
    .filter((t) => t.group === GATEWAY_GROUP && t.kind === GATEWAY_KIND)
    .flatMap((t) => {
      const g = view.gateway(t.namespace ?? policy.metadata.namespace ?? '', t.name);
      const cls = g ? classOfGateway(g) : undefined;
      return cls === undefined ? [] : [cls];
    });
  return [...new Set(classes)].sort();
}

/**
 * The strategy for the policy: its annotation, else the targeted classes' params. An invalid annotation is a
 * problem of the policy, and so is one selecting Progressive for a kind it cannot gate on (the class says so of
 * its own strategy): the strategy is the one selected all the same, a person decides.
 */
export function strategyFor(view: HubView, policy: KubeObject, classes: readonly string[]): { strategy: RolloutStrategy; problem?: PolicyProblem } {
  const byClass = new Map<string, RolloutStrategy>();
  for (const c of classes) {
    const params = view.params(c);
    if (params) byClass.set(c, params.rolloutStrategy);
  }
  const { strategy, error } = policyRolloutStrategy(policy.metadata.annotations, classesRolloutStrategy(byClass));
  if (error !== undefined) return { strategy, problem: { reason: 'InvalidRolloutStrategy', message: error } };
  const selected = policy.metadata.annotations?.[ROLLOUT_STRATEGY_ANNOTATION] !== undefined;
  const ungated = selected && strategy.type === 'Progressive' ? view.ungatedKind(policy.apiVersion, policy.kind) : undefined;
  if (ungated === undefined) return { strategy };
  const message =
    `${ROLLOUT_STRATEGY_ANNOTATION} selects Progressive, but no cluster can succeed for ${ungated}: its CRD has no ${OBSERVED_GENERATION_TEXT}, ` +
    'so no verdict of the controller is known to be about the revision a cluster runs, and each cluster fails at progressDeadline (roll it out All)';
  return { strategy, problem: { reason: 'NoObservedGeneration', message } };
}

/** The rollout plan for the policy's revision; none under All, or for a policy with no generation (never from an apiserver). */
function plan(
  view: HubView,
  input: PolicyPipelineInput,
  strategy: RolloutStrategy,
  desired: ReadonlyMap<string, ManifestWork>,
  awaiting: readonly string[],
  unreached: readonly UnreachedCluster[],
): RolloutPlan | undefined {
  const { policy } = input;
  const revision = policy.metadata.generation;
  if (strategy.type === 'All' || typeof revision !== 'number') return undefined;
  const byCluster = new Map(input.observed.map((w) => [w.metadata.namespace ?? '', w]));
  // That this revision's rollout completed, or halted, is said on the policy, by the status this hub wrote there.
  const reported = readPolicyStatus(policy.metadata.annotations?.[STATUS_ANNOTATION])?.rollout;
  const variants = rolloutVariants(desired);
  return planRollout({
    strategy,
    revision,
    ...(variants === undefined ? {} : { variants }),
    resume: policy.metadata.annotations?.[ROLLOUT_RESUME_ANNOTATION]?.trim() === String(revision),
    ...recordedRollout(reported, revision, variants),
    clusters: [...desired].map(([cluster, work]) => {
      const observedWork = byCluster.get(cluster);
      return { cluster, labels: view.clusterLabels(cluster), desired: work, ...(observedWork ? { observed: observedWork } : {}) };
    }),
    ...(awaiting.length > 0 ? { awaiting } : {}),
    ...(unreached.length > 0 ? { unreached } : {}),
    soak: new Map(input.soak ?? []),
    now: input.now,
    maxWorkBytes: input.maxWorkBytes,
  });
}

interface PolicyVariants {
  accepted: PolicyVariant[];
  refused: { namespace: string; name: string; generation: number; field: string; message: string }[];
  /** Each cluster's copy with the variants applied; undefined when no variant targets the policy. */
  render?: (cluster: string, copy: KubeObject, running: KubeObject | undefined) => CopyRendering;
}

/**
 * The PolicyVariants of the policy (same namespace, targetRef naming it), parsed, and how each cluster's copy is
 * rendered with them. A variant that does not parse says nothing of which clusters it meant: every cluster keeps
 * the copy it runs until it is fixed (its intent unknown, the base copy is no safer than the last one).
 */
function policyVariants(view: HubView, gr: GroupResource, policy: KubeObject): PolicyVariants {
  const namespace = policy.metadata.namespace ?? '';
  const objects = [...view.variantsTargeting(namespace, gr.group, policy.kind ?? '', policy.metadata.name)].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  if (objects.length === 0) return { accepted: [], refused: [] };
  const accepted: PolicyVariant[] = [];
  const refused: PolicyVariants['refused'] = [];
  for (const object of objects) {
    const parsed = parseVariant(object);
    if (parsed.ok) accepted.push(parsed.variant);
    else refused.push({ namespace, name: object.metadata.name, generation: object.metadata.generation ?? 0, field: parsed.field, message: parsed.message });
  }
  if (refused.length > 0) {
    const names = refused.map((r) => r.name);
    const message = `PolicyVariant ${refused.map((r) => `${r.name}: ${r.field}: ${r.message}`).join('; ')}: the cluster keeps the copy it runs`;
    return { accepted, refused, render: () => ({ state: 'failed', reason: 'InvalidVariant', message, variants: names }) };
  }
  const schema = kindSchema(view, gr);
  return {
    accepted,
    refused,
    render: (cluster, copy, running) =>
      renderCopy({ copy, cluster: { name: cluster, labels: view.clusterLabels(cluster), claims: view.clusterClaims(cluster) }, variants: accepted, schema, ...(running ? { running } : {}) }),
  };
}

function kindSchema(view: HubView, gr: GroupResource): KindSchema {
  const schema = view.kind(gr).schema;
  if (schema === undefined) return { ok: false, message: `the schema of ${groupResourceKey(gr)} is not known to the hub (no CRD read), so no copy a variant changes can be checked` };
  // What of the schema cannot be compiled refuses the copies that reach it (schemacheck.ts).
  return { ok: true, schema, check: schemaCheck(schema) };
}

/** What became of each variant of the policy: the clusters it changes, those it fails on, entries selecting none. */
function outcomes(view: HubView, variants: PolicyVariants, desired: DesiredWorks): VariantOutcome[] {
  const placed = [...new Set([...desired.works.keys(), ...desired.variantFailures.map((f) => f.cluster), ...desired.tooLarge])].sort();
  const refused = variants.refused.map((r): VariantOutcome => ({ namespace: r.namespace, name: r.name, generation: r.generation, refused: { field: r.field, message: r.message }, applied: [], failing: [], unmatched: [] }));
  const accepted = variants.accepted.map((v): VariantOutcome => {
    const applied = [...desired.renderings].filter(([, r]) => r.carried.some((c) => c.slice(0, c.lastIndexOf('@')) === v.name)).map(([cluster]) => cluster).sort();
    const failing = desired.variantFailures.filter((f) => f.variants.includes(v.name));
    const facts = placed.map((name) => ({ name, labels: view.clusterLabels(name), claims: view.clusterClaims(name) }));
    const unmatched = v.entries.filter((e) => !facts.some((c) => selects(e.clusters, c))).map((e) => e.index);
    return { namespace: v.namespace, name: v.name, generation: v.generation, applied, failing, unmatched };
  });
  return [...accepted, ...refused].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
