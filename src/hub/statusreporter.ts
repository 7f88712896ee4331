// Reports a hub policy's sync state on the policy itself (DESIGN §5): the RFC annotation
// `kuadrant.io/policies-synced` and the aggregated `policysync.kuadrant.io/status`, in one merge patch
// written only when a value changed, coalesced per policy (leading edge, then batched), with Events for
// transitions; and the per-policy cluster counts behind the policysync_clusters gauge. While the
// controller is busy writing ManifestWorks the annotation writes give way (`writes`, YieldingWrites):
// enforcement on the spokes comes before the hub's report of it.
import type { Logger } from 'pino';
import { canonicalJson } from '../core/k8s/canonical.ts';
import type { CollisionLoss, DesiredWorks } from '../core/works/desiredworks.ts';
import { readClusterFeedback } from '../core/works/feedback.ts';
import type { GroupVersionResource } from '../core/k8s/gvr.ts';
import { readSpecHash, type ManifestWork } from '../core/works/manifestwork.ts';
import { POLICIES_SYNCED_ANNOTATION, STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import { differsOnlyInAnnotations, type KubeObject } from '../core/k8s/objects.ts';
import { policiesSyncedAnnotation } from '../core/status/policiessynced.ts';
import {
  aggregatePolicyStatus,
  cutMessage,
  newProblems,
  policyStatusAnnotation,
  readPolicyStatus,
  statusRecheckDelay,
  statusTransitions,
  type AggregateInput,
  type ClusterInput,
  type LocalNote,
  type PolicyProblem,
  type PolicyStatus,
  type StatusSummary,
} from '../core/status/policystatus.ts';
import type { EventRecorder } from '../kube/events.ts';
import type { KubeHttp } from '../kube/http.ts';
import { mergePatch } from '../kube/writes.ts';
import type { YieldingWrites } from '../runtime/yieldingwrites.ts';
import { WriteExpectations } from './writeexpectations.ts';

/** Clusters by state in one policy's aggregated status (the policysync_clusters gauge sums them). */
export type ClusterStateCounts = Pick<StatusSummary, 'enforced' | 'overridden' | 'pending' | 'failed'> & { unknown: number };

export interface StatusReporterDeps {
  http: KubeHttp;
  events: EventRecorder;
  logger: Logger;
  /** Least time between two annotation writes of one policy. */
  coalesceMs: number;
  maxWorkBytes: number;
  /** How the annotation writes are made: the hub's give way to ManifestWork writes. */
  writes: YieldingWrites;
}

export class StatusReporter {
  /** The annotations last written per policy, for the same cache-lag reason as the works. */
  private readonly expectations = new WriteExpectations();
  private readonly lastWrite = new Map<string, number>();
  private readonly lastStatus = new Map<string, string>();
  private readonly counts = new Map<string, ClusterStateCounts>();

  constructor(private readonly d: StatusReporterDeps) {}

  /**
   * How long a status-driven reconcile of `key` should wait: none after a quiet spell (a single change
   * is reported at once), the rest of the coalescing window right after a write (a burst is batched).
   */
  delay(key: string, now = Date.now()): number {
    const last = this.lastWrite.get(key);
    return last === undefined ? 0 : Math.max(0, last + this.d.coalesceMs - now);
  }

  /** Clusters by state summed over every policy of a watched kind (by groupResourceKey). */
  clusterStates(watched: ReadonlySet<string>): ClusterStateCounts {
    const total: ClusterStateCounts = { enforced: 0, overridden: 0, pending: 0, failed: 0, unknown: 0 };
    for (const [key, c] of this.counts) {
      if (!watched.has(key.slice(0, key.indexOf('|')))) {
        this.counts.delete(key);
        continue;
      }
      total.enforced += c.enforced;
      total.overridden += c.overridden;
      total.pending += c.pending;
      total.failed += c.failed;
      total.unknown += c.unknown;
    }
    return total;
  }

  /**
   * A change of the policy that is exactly our annotation write coming back (nothing else in it
   * changed): true, and the expectation ends. The reconcile it would trigger has nothing new to see —
   * a policy need not be reconciled again for its own status write.
   */
  confirmsWrite(key: string, change: { old?: KubeObject; object: KubeObject }): boolean {
    // The cheap test first: this runs on every change of every watched policy.
    if (!change.old || !this.expectations.has(key) || !differsOnlyInAnnotations(change.old, change.object, REPORTED)) return false;
    if (!this.expectations.confirm(key, reportedAnnotations(change.object))) return false;
    // The cache holds the status as written now: no second copy of it is kept (~4 KB a policy on 20
    // clusters, ~19 MiB at 5000 policies).
    this.lastStatus.delete(key);
    return true;
  }

  forget(key: string): void {
    this.d.writes.cancel(key);
    this.lastWrite.delete(key);
    this.lastStatus.delete(key);
    this.counts.delete(key);
  }

  /**
   * Where the policy is synced and how each cluster stands: the annotations, written when changed. Asks
   * for the policy to be reconciled again when a cluster waits for the spoke's status and its grace ends
   * (STATUS_GRACE_MS): no event marks that moment.
   */
  async report(key: string, gvr: GroupVersionResource, policy: KubeObject, input: StatusInput, now = Date.now()): Promise<{ requeueAfterMs: number } | undefined> {
    const aggregate = statusAggregateInput(input, this.d.maxWorkBytes, now);
    const status = aggregatePolicyStatus(aggregate);
    const { enforced, overridden, pending, failed, unknown = 0 } = status.summary;
    this.counts.set(key, { enforced, overridden, pending, failed, unknown });
    // A work kept on a cluster in doubt is still where the copy runs, as far as anyone knows.
    await this.write(key, gvr, policy, [...input.written, ...(input.unknown ?? []).flatMap((u) => (u.work ? [u.work] : []))], status, input.lanes ?? []);
    const recheck = statusRecheckDelay(aggregate);
    return recheck === undefined ? undefined : { requeueAfterMs: recheck };
  }

  /** The policy stopped being ours while works of ours existed: clear our annotations. */
  async clear(key: string, gvr: GroupVersionResource, policy: KubeObject): Promise<void> {
    this.counts.delete(key);
    await this.write(key, gvr, policy, [], undefined);
  }

  private async write(key: string, gvr: GroupVersionResource, policy: KubeObject, works: readonly ManifestWork[], status: PolicyStatus | undefined, lanes: readonly LaneReport[] = []): Promise<void> {
    const desired = {
      [POLICIES_SYNCED_ANNOTATION]: policiesSyncedAnnotation(
        works.map((w) => {
          const copy = w.spec.workload.manifests[0]!;
          return { cluster: w.metadata.namespace, name: copy.metadata.name, namespace: copy.metadata.namespace ?? '' };
        }),
      ),
      [STATUS_ANNOTATION]: status ? policyStatusAnnotation(status) : undefined,
    };
    const wanted = canonicalJson(desired);
    if (this.expectations.observe(key, reportedAnnotations(policy)).specHash === wanted) {
      // What is on the policy (or written and not cached yet) is what is wanted: a write held is moot.
      this.d.writes.cancel(key);
      return;
    }
    await this.d.writes.submit(key, () => this.patch(key, gvr, policy, desired, wanted, status, lanes));
  }

  private async patch(
    key: string,
    gvr: GroupVersionResource,
    policy: KubeObject,
    desired: Record<string, string | undefined>,
    wanted: string,
    status: PolicyStatus | undefined,
    lanes: readonly LaneReport[],
  ): Promise<void> {
    const patch = Object.fromEntries(Object.entries(desired).map(([k, v]) => [k, v ?? null]));
    const undo = this.expectations.applied(key, wanted);
    try {
      await mergePatch(this.d.http, { ...gvr, namespaced: true }, policy.metadata.namespace, policy.metadata.name, { metadata: { annotations: patch } }, { discardResponse: true });
    } catch (err) {
      undo();
      throw err;
    }
    this.lastWrite.set(key, Date.now());
    const previousStatus = this.lastStatus.get(key);
    if (desired[STATUS_ANNOTATION] === undefined) this.lastStatus.delete(key);
    else this.lastStatus.set(key, desired[STATUS_ANNOTATION]);
    if (!status) return;
    // Against the status last written (the cache may lag), else the annotation as it was: a restart
    // raises no Event for what was already reported.
    const before = readPolicyStatus(previousStatus ?? policy.metadata.annotations?.[STATUS_ANNOTATION]);
    for (const t of statusTransitions(before, status)) {
      const type = t.type === 'Enforced' ? 'Normal' : 'Warning';
      await this.d.events.record(policy, type, t.type === 'Unknown' ? 'ClusterUnknown' : t.type, `cluster ${t.cluster}: ${t.reason}${t.message ? `: ${t.message}` : ''}`);
    }
    for (const p of newProblems(before, status)) {
      await this.d.events.record(policy, 'Warning', p.reason, p.message);
      // A lane conflict concerns two tenants' Gateways: each hears of it where its admin looks.
      const lane = p.reason === LANE_CONFLICT_REASON ? lanes.find((l) => cutMessage(l.message) === p.message) : undefined;
      for (const gateway of lane?.gateways ?? []) await this.d.events.record(gateway, 'Warning', LANE_CONFLICT_REASON, p.message);
    }
  }
}

const REPORTED = [POLICIES_SYNCED_ANNOTATION, STATUS_ANNOTATION];

/** The annotations this reporter writes, as its expectations record them. */
function reportedAnnotations(policy: KubeObject): string {
  const current = policy.metadata.annotations ?? {};
  return canonicalJson({ [POLICIES_SYNCED_ANNOTATION]: current[POLICIES_SYNCED_ANNOTATION], [STATUS_ANNOTATION]: current[STATUS_ANNOTATION] });
}

/** What the reconciler decided for one policy, from which its status is aggregated. */
export interface StatusInput {
  desired: DesiredWorks;
  losses: readonly Pick<CollisionLoss, 'cluster' | 'message'>[];
  /** The policy's works as cached. */
  observed: readonly KubeObject[];
  /** The works now in place (written or already equal). */
  written: readonly ManifestWork[];
  /** What local policies do to the copy, by cluster (the spoke agents' fresh reports). */
  local?: LocalVerdicts;
  /** Clusters the policy left whose works are kept: OCM cannot vouch for them, or the Placement is in flux. */
  unknown?: readonly UnknownCluster[];
  /** Its Gateways' lanes shared with other hub Gateways (core/lanes.ts): a problem of the policy, told to both Gateways too. */
  lanes?: readonly LaneReport[];
  /** Other problems the reconciler found (decisions or clusters of its Gateways' Placements refused). */
  problems?: readonly PolicyProblem[];
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
  /** Clusters where local policies cover every target: the copy is not placed there. */
  overridden: readonly { cluster: string; message: string }[];
  /** Clusters where the copy is placed and local policies take part of it, or are overridden by it. */
  notes: ReadonlyMap<string, LocalNote>;
}

/**
 * DESIGN §5: what the aggregated status comes from — each cluster as its work's feedback shows it or
 * as the hub itself decided (too large, conflicted), and the policy's problems.
 */
export function statusAggregateInput(input: StatusInput, maxWorkBytes: number, now: number): AggregateInput {
  const { desired, losses, observed, written, local } = input;
  const observedByCluster = new Map(observed.map((w) => [w.metadata.namespace ?? '', w]));
  const clusters: Record<string, ClusterInput> = {};
  for (const work of written) {
    const cluster = work.metadata.namespace;
    const live = observedByCluster.get(cluster);
    // Feedback counts only once it describes the work as written now (same spec-hash).
    const current = live && readSpecHash(live) === readSpecHash(work) && live.status !== undefined;
    const note = local?.notes.get(cluster);
    clusters[cluster] = current ? { state: 'work', feedback: readClusterFeedback(live), ...(note ? { local: note } : {}) } : { state: 'pending' };
  }
  for (const cluster of desired.tooLarge) {
    const live = observedByCluster.get(cluster);
    clusters[cluster] = {
      state: 'tooLarge',
      message: `the ManifestWork exceeds ${maxWorkBytes} bytes; the last good copy stays in place`,
      ...(live ? { feedback: readClusterFeedback(live) } : {}),
    };
  }
  for (const loss of losses) clusters[loss.cluster] = { state: 'conflicted', message: loss.message };
  for (const o of local?.overridden ?? []) clusters[o.cluster] = { state: 'overridden', message: o.message };
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
