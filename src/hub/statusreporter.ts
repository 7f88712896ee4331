// Reports a hub policy's sync state on the policy itself (docs/design/status.md#status-on-the-hub): the RFC annotation
// `kuadrant.io/policies-synced` and the aggregated `policysync.kuadrant.io/status`, in one merge patch
// written only when a value changed, coalesced per policy (leading edge, then batched), with Events for
// transitions; and the per-policy cluster counts behind the policysync_clusters gauge, and those awaiting a
// spoke report behind policysync_clusters_awaiting_report. While the
// controller is busy writing ManifestWorks the annotation writes give way (`writes`, YieldingWrites):
// enforcement on the spokes comes before the hub's report of it. What is reported is computed by
// core/status (report.ts, once per report; transitions.ts for the Events of a write): this is the I/O.
// It also times feedback (policysync_feedback_latency_seconds): from a work's status change, as the works
// cache showed it, to the successful annotation write that reflects it (DESIGN: ≤ 100 ms at p99).
import type { Logger } from 'pino';
import { groupResourceKey, type GroupVersionResource } from '../core/k8s/gvr.ts';
import { parsePolicyKey } from '../core/keys.ts';
import { STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import { differsOnlyInAnnotations, type KubeObject } from '../core/k8s/objects.ts';
import { canonicalJson } from '../core/k8s/canonical.ts';
import { readPolicyStatus } from '../core/status/annotation.ts';
import type { PolicyStatus } from '../core/status/policystatus.ts';
import { REPORTED_ANNOTATIONS, reportAnnotations, reportPolicyStatus, reportedAnnotations, type ClusterStateCounts, type ReportAnnotations } from '../core/status/report.ts';
import type { LaneReport, StatusInput } from '../core/status/statusinput.ts';
import { spokeTruthNews, statusEvents } from '../core/status/transitions.ts';
import type { EventRecorder } from '../kube/events.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { StoreChange } from '../kube/store.ts';
import { mergePatch } from '../kube/writes.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import type { Metrics } from '../runtime/metrics.ts';
import type { YieldingWrites } from '../runtime/yieldingwrites.ts';
import { WriteExpectations } from './writeexpectations.ts';

export interface StatusReporterDeps {
  http: KubeHttp;
  events: EventRecorder;
  logger: Logger;
  /** Least time between two annotation writes of one policy. */
  coalesceMs: number;
  maxWorkBytes: number;
  /** How the annotation writes are made: the hub's give way to ManifestWork writes. */
  writes: YieldingWrites;
  /** Where feedback latency and the clusters awaiting a spoke report are observed; without it, neither is. */
  metrics?: Metrics;
  /** The clock feedback latency is measured on (monotonic); default the system clock. */
  clock?: Clock;
}

/**
 * Feedback changes kept per policy until a write reports them: more arrive between two writes only in a
 * burst, where the first ones already show the latency (and the memory stays bounded).
 */
const MAX_PENDING_FEEDBACK = 32;

/** When a reconcile read the caches (the feedback clock): the feedback changes seen by then are what its report reflects. */
export type FeedbackMark = number;

export class StatusReporter {
  /** The annotations last written per policy, for the same cache-lag reason as the works. */
  private readonly expectations = new WriteExpectations();
  private readonly lastWrite = new Map<string, number>();
  private readonly lastStatus = new Map<string, string>();
  private readonly counts = new Map<string, ClusterStateCounts>();
  /** Per policy, its clusters awaiting a spoke report; their sum is policysync_clusters_awaiting_report. */
  private readonly awaiting = new Map<string, number>();
  private awaitingTotal = 0;
  /** Per policy, when (feedback clock) each work status change not yet reported was seen. */
  private readonly feedbackSeen = new Map<string, number[]>();
  private readonly clock: Clock;

  constructor(private readonly deps: StatusReporterDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  /**
   * A ManifestWork of these policies changed in the works cache. A change of its status — written by the
   * spoke's work agent alone: conditions and feedback — starts a feedback latency measure for each policy,
   * ended by the annotation write that reports it.
   */
  workChanged(change: StoreChange<KubeObject>, keys: readonly string[]): void {
    if (!this.deps.metrics || change.type !== 'MODIFIED' || !change.old || !statusChanged(change.old, change.object)) return;
    const now = this.clock.now();
    for (const key of keys) {
      const seen = this.feedbackSeen.get(key);
      if (!seen) this.feedbackSeen.set(key, [now]);
      else if (seen.length < MAX_PENDING_FEEDBACK) seen.push(now);
    }
  }

  /** Taken by a reconcile before it reads the caches, and handed to report(). */
  feedbackMark(): FeedbackMark {
    return this.clock.now();
  }

  /**
   * How long a status-driven reconcile of `key` should wait: none after a quiet spell (a single change
   * is reported at once), the rest of the coalescing window right after a write (a burst is batched).
   */
  delay(key: string, now = Date.now()): number {
    const last = this.lastWrite.get(key);
    return last === undefined ? 0 : Math.max(0, last + this.deps.coalesceMs - now);
  }

  /** Clusters by state summed over every policy of a watched kind (by groupResourceKey). */
  clusterStates(watched: ReadonlySet<string>): ClusterStateCounts {
    const total: ClusterStateCounts = { enforced: 0, overridden: 0, pending: 0, failed: 0, unknown: 0, drifted: 0, lingering: 0 };
    for (const [key, c] of this.counts) {
      if (!watched.has(groupResourceKey(parsePolicyKey(key).gr))) {
        this.counts.delete(key);
        // A policy of a kind no longer watched may have no work to bring it back to a reconcile that forgets it.
        this.countAwaiting(key, 0);
        continue;
      }
      total.enforced += c.enforced;
      total.overridden += c.overridden;
      total.pending += c.pending;
      total.failed += c.failed;
      total.unknown += c.unknown;
      total.drifted += c.drifted;
      total.lingering += c.lingering;
    }
    return total;
  }

  /** Whether this reporter counts the policy (it reported it, and has not forgotten it since). */
  reports(key: string): boolean {
    return this.counts.has(key);
  }

  /**
   * A change of the policy that is exactly our annotation write coming back (nothing else in it
   * changed): true, and the expectation ends. The reconcile it would trigger has nothing new to see —
   * a policy need not be reconciled again for its own status write.
   */
  confirmsWrite(key: string, change: { old?: KubeObject; object: KubeObject }): boolean {
    // The cheap test first: this runs on every change of every watched policy.
    if (!change.old || !this.expectations.has(key) || !differsOnlyInAnnotations(change.old, change.object, REPORTED_ANNOTATIONS)) return false;
    if (!this.expectations.confirm(key, reportedAnnotations(change.object))) return false;
    // The cache holds the status as written now: no second copy of it is kept (~4 KB a policy on 20
    // clusters, ~19 MiB at 5000 policies).
    this.lastStatus.delete(key);
    return true;
  }

  forget(key: string): void {
    this.deps.writes.cancel(key);
    this.lastWrite.delete(key);
    this.lastStatus.delete(key);
    this.counts.delete(key);
    this.feedbackSeen.delete(key);
    this.countAwaiting(key, 0);
  }

  /** (policy, cluster) pairs awaiting a spoke report, over every policy reported. */
  clustersAwaitingReport(): number {
    return this.awaitingTotal;
  }

  private countAwaiting(key: string, n: number): void {
    const before = this.awaiting.get(key) ?? 0;
    if (n === before) return;
    if (n === 0) this.awaiting.delete(key);
    else this.awaiting.set(key, n);
    this.awaitingTotal += n - before;
    this.deps.metrics?.clustersAwaitingReport(this.awaitingTotal);
  }

  /**
   * Where the policy is synced and how each cluster stands: the annotations, written when changed. Asks
   * for the policy to be reconciled again when a cluster waits for the spoke's status and its grace ends
   * (STATUS_GRACE_MS): no event marks that moment. `read`: when the reconcile read the caches (feedbackMark).
   */
  async report(
    key: string,
    gvr: GroupVersionResource,
    policy: KubeObject,
    input: StatusInput,
    o: { now?: number; read?: FeedbackMark } = {},
  ): Promise<{ requeueAfterMs: number } | undefined> {
    const report = reportPolicyStatus(input, this.deps.maxWorkBytes, o.now ?? Date.now());
    this.counts.set(key, report.counts);
    this.countAwaiting(key, input.awaiting?.length ?? 0);
    await this.write(key, gvr, policy, report.annotations, report.status, input.lanes ?? [], o.read);
    return report.recheckDelay === undefined ? undefined : { requeueAfterMs: report.recheckDelay };
  }

  /**
   * The policy stopped being ours while works of ours existed: clear our annotations — leaving, when `withdrawnBy`
   * is given, the withdrawal mark of this controller (core/pipeline/withdrawal.ts) in the same write. Also how the
   * mark goes once no copy is left to witness.
   */
  async clear(key: string, gvr: GroupVersionResource, policy: KubeObject, withdrawnBy?: string): Promise<void> {
    this.counts.delete(key);
    this.countAwaiting(key, 0);
    await this.write(key, gvr, policy, reportAnnotations([], undefined, withdrawnBy), undefined);
  }

  private async write(
    key: string,
    gvr: GroupVersionResource,
    policy: KubeObject,
    desired: ReportAnnotations,
    status: PolicyStatus | undefined,
    lanes: readonly LaneReport[] = [],
    read?: FeedbackMark,
  ): Promise<void> {
    const desiredHash = canonicalJson(desired);
    if (this.expectations.observe(key, reportedAnnotations(policy)).specHash === desiredHash) {
      // What is on the policy (or written and not cached yet) is what is desiredHash: a write held is moot.
      this.deps.writes.cancel(key);
      // The feedback seen by now changed nothing the hub reports: no write reflects it, none is timed.
      this.feedbackReported(key, read, false);
      return;
    }
    // A write held while works are written keeps what it writes, not its comparison text (made again when it runs).
    // A drift or a lingering copy newly said is written at once: held, it would be replaced by the next status (the
    // drift put back a moment later) or dropped as already on the policy, and never said (the soak, seed 4202).
    const urgent = status !== undefined && spokeTruthNews(readPolicyStatus(this.lastStatus.get(key) ?? policy.metadata.annotations?.[STATUS_ANNOTATION]), status);
    await this.deps.writes.submit(key, () => this.patch(key, gvr, policy, desired, status, lanes, read), { urgent });
  }

  /** The feedback changes seen up to `read` are reflected on the policy now: timed when `written` now, else let go. */
  private feedbackReported(key: string, read: FeedbackMark | undefined, written: boolean): void {
    const seen = read === undefined ? undefined : this.feedbackSeen.get(key);
    if (!seen) return;
    const now = this.clock.now();
    const later = seen.filter((at) => at > read!);
    if (written) for (const at of seen) if (at <= read!) this.deps.metrics?.feedbackLatency(now - at);
    if (later.length > 0) this.feedbackSeen.set(key, later);
    else this.feedbackSeen.delete(key);
  }

  private async patch(
    key: string,
    gvr: GroupVersionResource,
    policy: KubeObject,
    desired: Record<string, string | undefined>,
    status: PolicyStatus | undefined,
    lanes: readonly LaneReport[],
    read: FeedbackMark | undefined,
  ): Promise<void> {
    const patch = Object.fromEntries(Object.entries(desired).map(([k, v]) => [k, v ?? null]));
    const undo = this.expectations.applied(key, canonicalJson(desired));
    try {
      await mergePatch(this.deps.http, { ...gvr, namespaced: true }, policy.metadata.namespace, policy.metadata.name, { metadata: { annotations: patch } }, { discardResponse: true });
    } catch (err) {
      undo();
      throw err;
    }
    this.lastWrite.set(key, Date.now());
    this.feedbackReported(key, read, true);
    const previousStatus = this.lastStatus.get(key);
    // Kept only while the cache has not shown the write: its echo often beats the answer (confirmsWrite
    // then ended the expectation already), and a copy set after that would stay until the next write.
    if (desired[STATUS_ANNOTATION] === undefined || !this.expectations.has(key)) this.lastStatus.delete(key);
    else this.lastStatus.set(key, desired[STATUS_ANNOTATION]);
    if (!status) return;
    // Against the status last written (the cache may lag), else the annotation as it was: a restart
    // raises no Event for what was already reported.
    const before = readPolicyStatus(previousStatus ?? policy.metadata.annotations?.[STATUS_ANNOTATION]);
    for (const e of statusEvents(policy, before, status, lanes)) await this.deps.events.record(e.object, e.type, e.reason, e.message);
  }
}

/** A work's status changed: something the spoke's work agent wrote (conditions, feedback) is new. */
function statusChanged(old: KubeObject, object: KubeObject): boolean {
  // The works cache shares equal values (core/works/cacheview.ts): an unchanged status is most often the same object.
  return old.status !== object.status && JSON.stringify(old.status) !== JSON.stringify(object.status);
}
