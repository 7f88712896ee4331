// What a hub policy's aggregated status comes from (docs/design/status.md#status-on-the-hub): the reconciler's decisions for the policy
// (its works as written and as cached, conflicts, local policies' verdicts, clusters awaiting a spoke report,
// clusters in doubt, lane conflicts) turned into one verdict input per cluster, and the policy's own problems.
import type { KubeObject } from '../k8s/objects.ts';
import type { CollisionLoss, DesiredWorks } from '../works/desiredworks.ts';
import { readClusterFeedback } from '../works/feedback.ts';
import { readSpecHash, relabelledOnly, type ManifestWork } from '../works/manifestwork.ts';
import type { AggregateInput, ClusterInput, LingeringNote, LocalNote, PlacedNone, PolicyProblem } from './policystatus.ts';
import type { SpokeTruth } from '../spoke/spoketruth.ts';
import type { ClusterRollout, RolloutStatus } from './rolloutstatus.ts';

/** What the reconciler decided for one policy, from which its status is aggregated. */
export interface StatusInput {
  desired: DesiredWorks;
  losses: readonly Pick<CollisionLoss, 'cluster' | 'message'>[];
  /** The policy's works as cached. */
  observed: readonly KubeObject[];
  /** The works now in place (written or already equal). */
  written: readonly ManifestWork[];
  /** Works a Progressive rollout keeps as they are (not reached, held or halted), as cached. */
  kept?: readonly KubeObject[];
  /** The rollout of the policy's revision (core/rollout): its state, and where each cluster stands. */
  rollout?: { status: RolloutStatus; clusters: Readonly<Record<string, ClusterRollout>>; waiting: readonly string[] };
  /** What local policies do to the copy, by cluster (the spoke agents' fresh reports). */
  local?: LocalVerdicts;
  /** Clusters that get no first copy until a fresh spoke report vouches for its name, and the evidence missing. */
  awaiting?: readonly { cluster: string; message: string }[];
  /** Clusters the policy left whose works are kept: OCM cannot vouch for them, or the Placement is in flux. */
  unknown?: readonly UnknownCluster[];
  /** Its Gateways' lanes shared with other hub Gateways (core/lanes.ts): a problem of the policy, told to both Gateways too. */
  lanes?: readonly LaneReport[];
  /** Other problems the reconciler found (decisions or clusters of its Gateways' Placements refused). */
  problems?: readonly PolicyProblem[];
  /** What the fresh spoke reports say runs of the policy: drifted copies, and copies where it has no work. */
  truth?: SpokeTruth;
  /**
   * The controller (its label value) that withdrew the policy's copies and still witnesses them (`truth.withdrawn`):
   * its withdrawal mark stays on the policy with the status (core/pipeline/withdrawal.ts).
   */
  withdrawnBy?: string;
}


export interface LaneReport {
  message: string;
  /** The two hub Gateways, as cached (an Event goes to each when the conflict is new for this policy). */
  gateways: readonly KubeObject[];
}

/** The reason of a lane conflict, on the policy and on both Gateways. */
export const LANE_CONFLICT_REASON = 'DownstreamGatewayConflict';

export interface UnknownCluster {
  cluster: string;
  reason: string;
  message: string;
  since?: string;
  /** The kept work, as cached. */
  work?: ManifestWork;
}

export interface LocalVerdicts {
  /** Clusters where local policies cover every target: the copy is not placed there. `by`: the coverage verdict's. */
  overridden: readonly { cluster: string; message: string; by: readonly string[] }[];
  /** Clusters where the copy is placed and local policies take part of it, or are overridden by it. */
  notes: ReadonlyMap<string, LocalNote>;
}

/**
 * docs/design/status.md#status-on-the-hub: what the aggregated status comes from — each cluster as its work's feedback shows it or
 * as the hub itself decided (too large, conflicted), and the policy's problems.
 */
export function statusAggregateInput(input: StatusInput, maxWorkBytes: number, now: number): AggregateInput {
  const { desired, losses, observed, written, local } = input;
  const observedByCluster = new Map(observed.map((w) => [w.metadata.namespace ?? '', w]));
  const clusters: Record<string, ClusterInput> = {};
  for (const work of written) {
    const cluster = work.metadata.namespace;
    const live = observedByCluster.get(cluster);
    // Feedback counts only once it describes the work as written now (same spec-hash) — or the same work but for
    // the reapply label this pass put on it: the copy is what it was, a drift being put back (said Drifted below,
    // not Pending: the put-back may come back before any later pass, and the drift would go unsaid).
    const current = live && live.status !== undefined && (readSpecHash(live) === readSpecHash(work) || relabelledOnly(work, live));
    const note = local?.notes.get(cluster);
    clusters[cluster] = current ? { state: 'work', feedback: readClusterFeedback(live), ...(note ? { local: note } : {}) } : { state: 'pending' };
  }
  for (const work of input.kept ?? []) {
    const cluster = work.metadata.namespace ?? '';
    const note = local?.notes.get(cluster);
    clusters[cluster] = work.status === undefined ? { state: 'pending' } : { state: 'work', feedback: readClusterFeedback(work), ...(note ? { local: note } : {}) };
  }
  for (const cluster of input.rollout?.waiting ?? []) {
    clusters[cluster] = { state: 'waiting', message: input.rollout?.clusters[cluster]?.message ?? 'not reached by the rollout yet' };
  }
  for (const cluster of desired.tooLarge) {
    const live = observedByCluster.get(cluster);
    clusters[cluster] = {
      state: 'tooLarge',
      message: `the ManifestWork exceeds ${maxWorkBytes} bytes; the last good copy stays in place`,
      ...(live ? { feedback: readClusterFeedback(live) } : {}),
    };
  }
  for (const f of desired.variantFailures) {
    const live = observedByCluster.get(f.cluster);
    clusters[f.cluster] = { state: 'variantFailed', reason: f.reason, message: f.message, ...(live?.status !== undefined ? { feedback: readClusterFeedback(live) } : {}) };
  }
  for (const a of input.awaiting ?? []) {
    const live = observedByCluster.get(a.cluster);
    clusters[a.cluster] = { state: 'awaitingReport', message: a.message, ...(live?.status !== undefined ? { feedback: readClusterFeedback(live) } : {}) };
  }
  for (const loss of losses) clusters[loss.cluster] = { state: 'conflicted', message: loss.message };
  for (const o of local?.overridden ?? []) clusters[o.cluster] = { state: 'overridden', message: o.message, by: o.by };
  for (const u of input.unknown ?? []) {
    const live = observedByCluster.get(u.cluster);
    clusters[u.cluster] = {
      state: 'unknown',
      reason: u.reason,
      message: u.message,
      ...(u.since ? { since: u.since } : {}),
      ...(live?.status !== undefined ? { feedback: readClusterFeedback(live) } : {}),
    };
  }
  // What the spokes say runs: a placed copy not as sent, and copies where the policy has no work.
  const truth = input.truth;
  for (const d of truth?.drifted ?? []) {
    const c = clusters[d.cluster];
    if (c?.state === 'work') clusters[d.cluster] = { ...c, drift: { drift: d.drift, correcting: truth!.correct } };
  }
  const lingering = new Map<string, LingeringNote[]>();
  for (const l of truth?.lingering ?? []) {
    const notes = lingering.get(l.cluster) ?? [];
    notes.push({ kind: l.kind, namespace: l.namespace, name: l.name, lingering: l.lingering, since: new Date(l.seenSince).toISOString().replace(/\.\d{3}Z$/, 'Z'), seenAt: l.seenSince });
    lingering.set(l.cluster, notes);
  }
  // A cluster the policy has no say on shows what lingers there. One it has a say on keeps that verdict — unless
  // the say is that no copy belongs there (a local policy overrides it, another hub policy won the Gateway) and a
  // copy has lingered past its grace: then what runs is said, with the say beside it (what the copy's removal
  // waits for: mendLingering hands back only a copy the status says Lingering).
  for (const [cluster, copies] of lingering) {
    const say = clusters[cluster];
    if (say === undefined) clusters[cluster] = { state: 'lingering', copies };
    else if ((say.state === 'overridden' || say.state === 'conflicted') && copies.some((c) => c.lingering)) clusters[cluster] = { state: 'lingering', copies, instead: placedNone(say) };
  }
  const lanes = (input.lanes ?? []).map((l) => ({ reason: LANE_CONFLICT_REASON, message: l.message }));
  return { clusters, problems: [...policyProblems(desired), ...lanes, ...(input.problems ?? [])], now };
}

/** What keeps the policy, or some of its targets, from being synced (TooLarge and Conflicted are per cluster). */
export function policyProblems(desired: DesiredWorks): PolicyProblem[] {
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

/** What the hub decided for a cluster where it places no copy of the policy, as a lingering copy's status keeps it. */
function placedNone(say: Extract<ClusterInput, { state: 'overridden' | 'conflicted' }>): PlacedNone {
  return say.state === 'overridden' ? { reason: 'Overridden', message: say.message, by: say.by } : { reason: 'Conflicted', message: say.message };
}
