// Aggregated spoke status on the hub policy: the `policysync.kuadrant.io/status` annotation
// (DESIGN §5), its bounded serialisation, and the per-cluster transitions worth an Event.
import { z } from 'zod';
import { canonicalJson } from '../k8s/canonical.ts';
import { parseJson } from '../k8s/parsejson.ts';
import type { ClusterFeedback, FeedbackCondition, FeedbackScalar } from '../works/feedback.ts';
import { eventReason } from '../k8s/sanitize.ts';

/** Longest per-cluster message (and statusFeedback string value), in characters (code points). */
export const MAX_STATUS_MESSAGE_LENGTH = 256;
/** Past this many bytes the annotation leaves out the statusFeedback values, then the per-cluster part. */
export const MAX_STATUS_ANNOTATION_BYTES = 64 * 1024;
/**
 * How long after a copy was applied the hub waits for a status it can read (an Enforced or Accepted
 * condition, or ancestor entries for the copy's Gateways) before reporting that there is none: a spoke
 * controller writes within seconds, and some (Envoy Gateway, for a missing Gateway) never do.
 */
export const STATUS_GRACE_MS = 60_000;

/** Where a cluster stands; every cluster is in exactly one of these. */
export type ClusterState = 'Enforced' | 'Overridden' | 'Pending' | 'Failed' | 'Unknown';

/** What the hub knows about one cluster of the policy. */
export type ClusterInput =
  /**
   * The work exists; its status as read by readClusterFeedback. `local`: what local policies on the
   * cluster do to the copy by the spoke agent's report (some listeners taken, or taken but overridden by
   * the hub policy), said in place of the controller's own words while the controller enforces the copy.
   */
  | { state: 'work'; feedback: ClusterFeedback; local?: LocalNote }
  /** The work was just written and has no status yet. */
  | { state: 'pending' }
  /** The desired work exceeds --max-work-bytes; feedback of the retained last good work, if any. */
  | { state: 'tooLarge'; message?: string; feedback?: ClusterFeedback }
  /** Another hub policy owns the spoke object here (DESIGN §3). */
  | { state: 'conflicted'; message: string }
  /** Local policies cover every target of the copy (the spoke agent's fresh report): it is not placed there. */
  | { state: 'overridden'; message: string }
  /**
   * The cluster left the decisions while OCM cannot vouch for it, or while the Placement is in flux: its
   * work is kept as it was (DESIGN §7). OCM's reason and since when; the kept work's last feedback, if any.
   */
  | { state: 'unknown'; reason: string; message: string; since?: string; feedback?: ClusterFeedback };

/** What local policies do to a placed copy, by the spoke agent's report. */
export interface LocalNote {
  /** `PartiallyEnforced` (listeners taken by local policies), `OverridesLocal` (the hub policy uses overrides). */
  reason: 'PartiallyEnforced' | 'OverridesLocal';
  message: string;
}

export interface ClusterStatus {
  state: ClusterState;
  /** The work's Applied condition is True. */
  applied: boolean;
  /** The work's Available condition is True. */
  available: boolean;
  /**
   * Whether the policy is enforced there, as the spoke reports it: its Enforced condition, or for
   * GEP-713 ancestors True when accepted for its Gateways and False when not (Unknown when not reported).
   */
  enforced: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  /**
   * The current work is applied and the spoke's status observed the copy's generation (the Enforced
   * condition's observedGeneration, or every ancestor entry's).
   */
  upToDate: boolean;
  /** The kind's own statusFeedback values (params), by name, strings cut like messages; absent when none. */
  statusFeedback?: Record<string, FeedbackScalar>;
}

export interface StatusSummary {
  clusters: number;
  /** Clusters whose work is applied. */
  applied: number;
  enforced: number;
  overridden: number;
  pending: number;
  failed: number;
  /** Clusters whose works are kept while OCM cannot vouch for them; absent when none (the common case). */
  unknown?: number;
  /**
   * Set when the annotation did not hold everything: the statusFeedback values were left out, and when
   * that was not enough, the per-cluster part too. The works have the rest (the CLI reads them).
   */
  truncated?: true;
}

export interface PolicyProblem {
  reason: string;
  message: string;
}

export interface PolicyStatus {
  summary: StatusSummary;
  /** What keeps the policy, or some of its targets, from being synced; absent when nothing does. */
  problems?: PolicyProblem[];
  /** Absent only when truncated. */
  clusters?: Record<string, ClusterStatus>;
}

export interface StatusTransition {
  cluster: string;
  type: 'Enforced' | 'Overridden' | 'Failed' | 'Unknown';
  reason: string;
  message: string;
}

export interface AggregateInput {
  clusters: Readonly<Record<string, ClusterInput>>;
  problems?: readonly PolicyProblem[];
  /** The time to judge STATUS_GRACE_MS against (ms since the epoch). */
  now: number;
}

/**
 * The status of a policy across its clusters. Each cluster's state is decided by the first rule
 * that matches, so it lands in exactly one count:
 * -1. unknown (left the decisions while OCM cannot vouch for it) → Unknown, with OCM's reason
 *  0. overridden (local policies cover the copy; not placed) → Overridden, naming them
 *  1. conflicted                          → Failed, reason Conflicted
 *  2. tooLarge                            → Failed, reason TooLarge
 *  3. pending (no work status yet)        → Pending
 *  4. the manifest failed to apply        → Failed, reason ApplyFailed
 *  5. the feedback rules failed           → Failed, reason FeedbackFailed
 *  6. the work is not applied (yet)       → Pending
 *  7. the spoke says Accepted=False       → Failed, with the spoke's reason (e.g. TargetNotFound)
 * Kuadrant style, an Enforced condition:
 *  8. Enforced reason Overridden          → Overridden (whatever its status)
 *  9. Enforced=True (incl. PartiallyEnforced) → Enforced
 * 10. Enforced=Unknown                    → Pending, with the spoke's reason
 * 11. Enforced=False                      → Failed, with the spoke's reason
 * GEP-713 style, `status.ancestors` entries for the copy's Gateways (DESIGN §6.1):
 * 12. an entry Accepted=False             → Failed, with the controller's reason (Conflicted, Invalid, …)
 * 13. an entry Accepted=Unknown           → Pending, with the controller's reason
 * 14. all True, for every Gateway         → Enforced, with the controller's reason (Accepted)
 * 15. all True, some Gateway without any  → Pending for STATUS_GRACE_MS after the apply, then Enforced,
 *                                           reason PartiallyEnforced
 * A cluster Enforced by rules 9, 14, 15 or 18 whose copy local policies partly take, or whose hub policy uses
 * overrides over them, shows that (the local note) as reason and message.
 * Neither:
 * 16. Accepted=Unknown                    → Pending, with the spoke's reason
 * 17. within STATUS_GRACE_MS of the apply → Pending
 * 18. Accepted=True, no Enforced          → Enforced, reason Accepted
 * 19. a status of another shape           → Failed, reason UnrecognisedStatus
 * 20. no status at all                    → Failed, reason NoStatus
 */
export function aggregatePolicyStatus(input: AggregateInput): PolicyStatus {
  const problems = sortedProblems(input.problems ?? []);
  const summary: StatusSummary = { clusters: 0, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 0 };
  const clusters: [string, ClusterStatus][] = [];
  for (const name of Object.keys(input.clusters).sort()) {
    const cluster = input.clusters[name];
    if (cluster === undefined) continue;
    const { status } = clusterVerdict(cluster, input.now);
    clusters.push([name, status]);
    summary.clusters += 1;
    if (status.applied) summary.applied += 1;
    const counter = COUNTER[status.state];
    summary[counter] = (summary[counter] ?? 0) + 1;
  }
  const status: PolicyStatus = { summary, clusters: Object.fromEntries(clusters) };
  if (problems.length > 0) status.problems = problems;
  return status;
}

/**
 * Milliseconds until the first cluster that waits for the spoke's status reaches STATUS_GRACE_MS, when
 * its state changes with no event to say so: reconcile the policy again then. Undefined when none waits.
 */
export function statusRecheckDelay(input: Omit<AggregateInput, 'problems'>): number | undefined {
  const deadlines = Object.values(input.clusters).flatMap((cluster) => {
    const { recheckAt } = clusterVerdict(cluster, input.now);
    return recheckAt === undefined ? [] : [recheckAt];
  });
  return deadlines.length === 0 ? undefined : Math.max(0, Math.min(...deadlines) - input.now);
}

/** Deduplicated, sorted by reason then message, messages cut like the clusters'. */
function sortedProblems(problems: readonly PolicyProblem[]): PolicyProblem[] {
  const seen = new Map<string, PolicyProblem>();
  for (const p of problems) {
    const cut = { reason: p.reason, message: cutMessage(p.message) };
    seen.set(JSON.stringify([cut.reason, cut.message]), cut);
  }
  return [...seen.values()].sort((a, b) => (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : a.message < b.message ? -1 : a.message > b.message ? 1 : 0));
}

/**
 * Problems the hub found with the policy itself (a target it cannot sync, no cluster at all, …).
 * Kept in the annotation so that, after a restart, Events are still raised only for new ones.
 */
export function newProblems(before: PolicyStatus | undefined, after: PolicyStatus): PolicyProblem[] {
  const known = new Set((before?.problems ?? []).map((p) => JSON.stringify([p.reason, p.message])));
  return (after.problems ?? []).filter((p) => !known.has(JSON.stringify([p.reason, p.message])));
}

const COUNTER = { Enforced: 'enforced', Overridden: 'overridden', Pending: 'pending', Failed: 'failed', Unknown: 'unknown' } as const;

/** A cluster's status, and when it is Pending only until the grace ends, when that is. */
interface Verdict {
  status: ClusterStatus;
  recheckAt?: number;
}

type Base = Pick<ClusterStatus, 'applied' | 'available' | 'enforced' | 'upToDate'>;

function clusterVerdict(input: ClusterInput, now: number): Verdict {
  switch (input.state) {
    case 'unknown': {
      // What the kept work last said is all there is: it may be stale, so never upToDate.
      const since = input.since ? ` since ${input.since}` : '';
      const message = `${input.message}${since}; its ManifestWork is kept as it was`;
      return { status: withValues(entry('Unknown', notCurrent(input.feedback, now), input.reason, message), input.feedback) };
    }
    case 'overridden':
      // The report that decided it is fresh: the verdict is current.
      return { status: entry('Overridden', { applied: false, available: false, enforced: 'False', upToDate: true }, 'Overridden', input.message) };
    case 'conflicted':
      // Not placed there at all: definitely not enforced.
      return { status: entry('Failed', { applied: false, available: false, enforced: 'False', upToDate: false }, 'Conflicted', input.message) };
    case 'tooLarge': {
      // The desired work is not written, so whatever runs there is not current.
      const message = input.message ?? 'the ManifestWork for this cluster exceeds the size limit and is not written';
      return { status: withValues(entry('Failed', notCurrent(input.feedback, now), 'TooLarge', message), input.feedback) };
    }
    case 'pending':
      return {
        status: entry('Pending', { applied: false, available: false, enforced: 'Unknown', upToDate: false }, 'Pending', 'waiting for the ManifestWork status from the cluster'),
      };
    case 'work': {
      const verdict = fromFeedback(input.feedback, now);
      const { local } = input;
      const status = local && verdict.status.state === 'Enforced' ? { ...verdict.status, reason: local.reason, message: cutMessage(local.message) } : verdict.status;
      return { ...verdict, status: withValues(status, input.feedback) };
    }
  }
}

/** What a work that is not the desired one last said (if it said anything): never up to date. */
function notCurrent(feedback: ClusterFeedback | undefined, now: number): Base {
  return {
    applied: feedback?.applied ?? false,
    available: feedback?.available ?? false,
    enforced: feedback ? fromFeedback(feedback, now).status.enforced : 'Unknown',
    upToDate: false,
  };
}

function fromFeedback(feedback: ClusterFeedback, now: number): Verdict {
  const { enforced, accepted } = feedback;
  const base: Base = {
    applied: feedback.applied,
    available: feedback.available,
    enforced: enforced?.status ?? 'Unknown',
    upToDate: isUpToDate(feedback),
  };
  if (feedback.applyError !== undefined) return { status: entry('Failed', base, 'ApplyFailed', feedback.applyError) };
  if (feedback.feedbackError !== undefined) return { status: entry('Failed', base, 'FeedbackFailed', feedback.feedbackError) };
  if (!feedback.applied) return { status: entry('Pending', base, 'Pending', 'waiting for the ManifestWork to be applied on the cluster') };
  if (accepted?.status === 'False') {
    return { status: entry('Failed', base, accepted.reason || 'NotAccepted', accepted.message || 'the policy is not accepted on the cluster') };
  }
  if (enforced !== undefined) return { status: fromEnforced(base, enforced) };
  if (feedback.ancestors.some((a) => a.entries.length > 0)) return fromAncestors(feedback, base, now);
  return withoutReadableStatus(feedback, base, now);
}

/** Kuadrant style: the Enforced condition says it all (rules 8–11). */
function fromEnforced(base: Base, enforced: FeedbackCondition): ClusterStatus {
  const reason = enforced.reason ?? '';
  const message = enforced.message ?? '';
  if (reason === 'Overridden') return entry('Overridden', base, reason, message || 'the policy is overridden on the cluster');
  switch (enforced.status) {
    case 'True':
      return entry('Enforced', base, reason || 'Enforced', message);
    case 'Unknown':
      return entry('Pending', base, reason || 'Pending', message);
    case 'False':
      return entry('Failed', base, reason || 'NotEnforced', message || 'the policy is not enforced on the cluster');
  }
}

/** GEP-713 style: enforced where every ancestor entry for the copy's Gateways is Accepted=True (rules 12–15). */
function fromAncestors(feedback: ClusterFeedback, base: Base, now: number): Verdict {
  const several = feedback.ancestors.length > 1;
  const entries = feedback.ancestors.flatMap((a) => a.entries.map((condition) => ({ gateway: a.gateway, condition })));
  // Which Gateway a message is about, when the copy has several: the controller's message may not say.
  const about = (gateway: string, message: string): string => (several ? `Gateway ${gateway}: ${message}` : message);
  const rejected = entries.find((e) => e.condition.status === 'False');
  if (rejected) {
    const { gateway, condition } = rejected;
    const by = condition.controllerName ? ` by ${condition.controllerName}` : '';
    const message = condition.message || `the policy is not accepted${by} for Gateway ${gateway}`;
    return { status: entry('Failed', { ...base, enforced: 'False' }, condition.reason || 'NotAccepted', about(gateway, message)) };
  }
  const unknown = entries.find((e) => e.condition.status === 'Unknown');
  if (unknown) {
    const { gateway, condition } = unknown;
    const message = condition.message || `the policy's acceptance for Gateway ${gateway} is not decided yet`;
    return { status: entry('Pending', { ...base, enforced: 'Unknown' }, condition.reason || 'Pending', about(gateway, message)) };
  }
  const first = entries[0]!;
  const missing = feedback.ancestors.filter((a) => a.entries.length === 0).map((a) => a.gateway);
  if (missing.length === 0) {
    const by = first.condition.controllerName ? ` by ${first.condition.controllerName}` : '';
    const message = first.condition.message || `the policy is accepted${by}`;
    return { status: entry('Enforced', { ...base, enforced: 'True' }, first.condition.reason || 'Accepted', about(first.gateway, message)) };
  }
  const deadline = graceDeadline(feedback);
  if (now < deadline) {
    return {
      status: entry('Pending', { ...base, enforced: 'Unknown' }, 'Pending', `waiting for the status.ancestors entry for ${gatewayList(missing)} on the cluster`),
      recheckAt: deadline,
    };
  }
  const accepted = feedback.ancestors.filter((a) => a.entries.length > 0).map((a) => a.gateway);
  const message =
    `accepted for ${gatewayList(accepted)}; no status.ancestors entry for ${gatewayList(missing)} ` +
    `${graceSeconds()} after the copy was applied (does the Gateway exist on the cluster?)`;
  return { status: entry('Enforced', { ...base, enforced: 'True' }, 'PartiallyEnforced', message) };
}

/** Neither an Enforced condition nor ancestor entries for the copy's Gateways (rules 16–20). */
function withoutReadableStatus(feedback: ClusterFeedback, base: Base, now: number): Verdict {
  const { accepted } = feedback;
  if (accepted?.status === 'Unknown') return { status: entry('Pending', base, accepted.reason || 'Pending', accepted.message ?? '') };
  const deadline = graceDeadline(feedback);
  if (now < deadline) {
    const message =
      accepted === undefined
        ? `waiting for the policy's status on the cluster: an Enforced condition${feedback.ancestors.length > 0 ? `, or a status.ancestors entry for ${gatewayList(feedback.ancestors.map((a) => a.gateway))}` : ''}`
        : 'waiting for the Enforced condition of the policy on the cluster';
    return { status: entry('Pending', base, 'Pending', message), recheckAt: deadline };
  }
  // A kind that reports Accepted only: accepted is the most it says, as for GEP-713 ancestors.
  if (accepted !== undefined) return { status: entry('Enforced', { ...base, enforced: 'True' }, 'Accepted', accepted.message || 'the policy is accepted on the cluster') };
  const lacking = `no Accepted or Enforced condition and no status.ancestors entry${
    feedback.ancestors.length > 0 ? ` for ${gatewayList(feedback.ancestors.map((a) => a.gateway))}` : ''
  }`;
  const seen = [
    ...(feedback.firstConditionType !== undefined ? [`condition ${JSON.stringify(feedback.firstConditionType)}`] : []),
    ...(feedback.firstAncestorName !== undefined ? [`an ancestor entry for Gateway ${JSON.stringify(feedback.firstAncestorName)}`] : []),
  ];
  if (seen.length > 0) {
    return { status: entry('Failed', base, 'UnrecognisedStatus', `the policy's status on the cluster has ${lacking}; it has ${seen.join(' and ')}`) };
  }
  const message = `no status ${graceSeconds()} after the copy was applied: ${lacking} (is the kind's controller running on the cluster, and does the Gateway exist there?)`;
  return { status: entry('Failed', base, 'NoStatus', message) };
}

/**
 * The spoke's status observed the copy's generation, for the current work: the Enforced condition's
 * observedGeneration when reported (Kuadrant style), else every ancestor entry's.
 */
function isUpToDate(feedback: ClusterFeedback): boolean {
  const { generation } = feedback;
  if (!feedback.applied || !feedback.appliedObservedCurrent || generation === undefined) return false;
  if (feedback.enforced !== undefined || feedback.enforcedGeneration !== undefined) return feedback.enforcedGeneration === generation;
  const observed = feedback.ancestors.flatMap((a) => a.entries.map((e) => e.observedGeneration));
  return observed.length > 0 && observed.every((g) => g === generation);
}

/** When the grace for a readable status ends; an unknown apply time has none. */
function graceDeadline(feedback: ClusterFeedback): number {
  return feedback.appliedAt === undefined ? Number.NEGATIVE_INFINITY : feedback.appliedAt + STATUS_GRACE_MS;
}

function graceSeconds(): string {
  return `${STATUS_GRACE_MS / 1000}s`;
}

/** `Gateway a`, `Gateways a, b`. */
function gatewayList(names: readonly string[]): string {
  return `${names.length === 1 ? 'Gateway' : 'Gateways'} ${names.join(', ')}`;
}

function entry(state: ClusterState, base: Base, reason: string, message: string): ClusterStatus {
  // Many reasons are the spoke's words: the annotation and the Events hold valid, bounded ones only.
  return { state, ...base, reason: eventReason(reason), message: cutMessage(message) };
}

/** The status with the kind's own statusFeedback values of the cluster, sorted by name; unchanged when none. */
function withValues(status: ClusterStatus, feedback: ClusterFeedback | undefined): ClusterStatus {
  const names = Object.keys(feedback?.extra ?? {}).sort();
  if (feedback === undefined || names.length === 0) return status;
  const values = names.map((name): [string, FeedbackScalar] => {
    const value = feedback.extra[name]!;
    return [name, typeof value === 'string' ? cutMessage(value) : value];
  });
  return { ...status, statusFeedback: Object.fromEntries(values) };
}

/** At most MAX_STATUS_MESSAGE_LENGTH code points (never splitting a surrogate pair), `…` marking a cut. */
export function cutMessage(message: string): string {
  const chars = Array.from(message);
  if (chars.length <= MAX_STATUS_MESSAGE_LENGTH) return message;
  return `${chars.slice(0, MAX_STATUS_MESSAGE_LENGTH - 1).join('')}…`;
}

/**
 * The annotation value: canonical JSON, so equal statuses give equal text and no write. Past
 * MAX_STATUS_ANNOTATION_BYTES, each step until it fits: the statusFeedback values are left out; then
 * the entries of clusters whose copy is applied (the CLI reads those back from the works), keeping
 * the ones no work shows (withdrawn as overridden, lost to a conflict, not applied); then the
 * per-cluster part altogether. Every step marks `summary.truncated: true`.
 */
export function policyStatusAnnotation(status: PolicyStatus): string {
  const full = canonicalJson(status);
  if (fits(full)) return full;
  const summary: StatusSummary = { ...status.summary, truncated: true };
  const { clusters, ...rest } = status;
  if (clusters !== undefined) {
    const compact = withoutStatusFeedback(clusters);
    if (Object.values(clusters).some((c) => c.statusFeedback !== undefined)) {
      const withoutValues = canonicalJson({ ...rest, summary, clusters: compact });
      if (fits(withoutValues)) return withoutValues;
    }
    const unapplied = Object.fromEntries(Object.entries(compact).filter(([, c]) => !c.applied));
    if (Object.keys(unapplied).length > 0) {
      const unappliedOnly = canonicalJson({ ...rest, summary, clusters: unapplied });
      if (fits(unappliedOnly)) return unappliedOnly;
    }
  }
  return canonicalJson({ ...rest, summary });
}

function fits(text: string): boolean {
  return Buffer.byteLength(text, 'utf8') <= MAX_STATUS_ANNOTATION_BYTES;
}

function withoutStatusFeedback(clusters: Record<string, ClusterStatus>): Record<string, ClusterStatus> {
  return Object.fromEntries(
    Object.entries(clusters).map(([name, cluster]) => {
      const { statusFeedback: _dropped, ...rest } = cluster;
      return [name, rest];
    }),
  );
}

const count = z.number().int().nonnegative();
const clusterStatusSchema = z.object({
  state: z.enum(['Enforced', 'Overridden', 'Pending', 'Failed', 'Unknown']),
  applied: z.boolean(),
  available: z.boolean(),
  enforced: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  upToDate: z.boolean(),
  statusFeedback: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});
const policyStatusSchema = z.object({
  summary: z.object({
    clusters: count,
    applied: count,
    enforced: count,
    overridden: count,
    pending: count,
    failed: count,
    unknown: count.optional(),
    truncated: z.literal(true).optional(),
  }),
  clusters: z.record(z.string(), clusterStatusSchema).optional(),
  problems: z.array(z.object({ reason: z.string(), message: z.string() })).optional(),
});

/** The annotation value parsed back; undefined when absent, not JSON or not of this shape. */
export function readPolicyStatus(text: string | undefined): PolicyStatus | undefined {
  const parsed = parseJson(text, policyStatusSchema);
  if (!parsed) return undefined;
  const { summary, clusters, problems } = parsed;
  const { truncated, ...counts } = summary;
  const status: PolicyStatus = { summary: truncated ? { ...counts, truncated } : counts };
  if (clusters !== undefined) status.clusters = clusters;
  if (problems !== undefined) status.problems = problems;
  return status;
}

/**
 * Clusters that entered the Enforced, Overridden, Failed or Unknown state, sorted by cluster: one Event
 * each. A cluster staying in its state (even with a new reason) or becoming Pending gives none.
 * With no `before`, every cluster is new. A cluster that a truncated `before` (an annotation read
 * back after a restart) does not list gives none: what changed is unknown, and an Event storm on
 * every restart helps nobody.
 */
export function statusTransitions(before: PolicyStatus | undefined, after: PolicyStatus): StatusTransition[] {
  const previous = before?.clusters ?? {};
  // Every cluster of `before` is listed unless it was truncated to fewer entries than it counts.
  const complete = before === undefined || Object.keys(previous).length === before.summary.clusters;
  const current = after.clusters ?? {};
  const transitions: StatusTransition[] = [];
  for (const cluster of Object.keys(current).sort()) {
    const now = current[cluster];
    if (now === undefined || now.state === 'Pending') continue;
    // Own properties only: a cluster may be named "constructor".
    const listed = Object.hasOwn(previous, cluster);
    if (!listed && !complete) continue;
    const was = listed ? previous[cluster] : undefined;
    if (was?.state === now.state) continue;
    transitions.push({ cluster, type: now.state, reason: now.reason, message: now.message });
  }
  return transitions;
}
