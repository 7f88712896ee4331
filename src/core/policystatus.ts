// Aggregated spoke status on the hub policy: the `policysync.kuadrant.io/status` annotation
// (DESIGN §5), its bounded serialisation, and the per-cluster transitions worth an Event.
import { z } from 'zod';
import { canonicalJson } from './canonical.ts';
import { parseJson } from './parsejson.ts';
import type { ClusterFeedback } from './feedback.ts';

/** Longest per-cluster message, in characters (code points). */
export const MAX_STATUS_MESSAGE_LENGTH = 256;
/** Past this many bytes the annotation keeps only the summary. */
export const MAX_STATUS_ANNOTATION_BYTES = 64 * 1024;

/** Where a cluster stands; every cluster is in exactly one of these. */
export type ClusterState = 'Enforced' | 'Overridden' | 'Pending' | 'Failed';

/** What the hub knows about one cluster of the policy. */
export type ClusterInput =
  /** The work exists; its status as read by readClusterFeedback. */
  | { state: 'work'; feedback: ClusterFeedback }
  /** The work was just written and has no status yet. */
  | { state: 'pending' }
  /** The desired work exceeds --max-work-bytes; feedback of the retained last good work, if any. */
  | { state: 'tooLarge'; message?: string; feedback?: ClusterFeedback }
  /** Another hub policy owns the spoke object here (DESIGN §3). */
  | { state: 'conflicted'; message: string };

export interface ClusterStatus {
  state: ClusterState;
  /** The work's Applied condition is True. */
  applied: boolean;
  /** The work's Available condition is True. */
  available: boolean;
  /** The spoke's Enforced condition status, as reported (Unknown when not reported). */
  enforced: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  /** The current work is applied and the spoke's Enforced condition observed the copy's generation. */
  upToDate: boolean;
}

export interface StatusSummary {
  clusters: number;
  /** Clusters whose work is applied. */
  applied: number;
  enforced: number;
  overridden: number;
  pending: number;
  failed: number;
  /** Set when the per-cluster part did not fit the annotation and was dropped. */
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
  type: 'Enforced' | 'Overridden' | 'Failed';
  reason: string;
  message: string;
}

/**
 * The status of a policy across its clusters. Each cluster's state is decided by the first rule
 * that matches, so it lands in exactly one count:
 *  1. conflicted                          → Failed, reason Conflicted
 *  2. tooLarge                            → Failed, reason TooLarge
 *  3. pending (no work status yet)        → Pending
 *  4. the manifest failed to apply        → Failed, reason ApplyFailed
 *  5. the feedback rules failed           → Failed, reason FeedbackFailed
 *  6. the work is not applied (yet)       → Pending
 *  7. the spoke says Accepted=False       → Failed, with the spoke's reason (e.g. TargetNotFound)
 *  8. no Enforced feedback yet            → Pending
 *  9. Enforced reason Overridden          → Overridden (whatever its status)
 * 10. Enforced=True (incl. PartiallyEnforced) → Enforced
 * 11. Enforced=Unknown                    → Pending, with the spoke's reason
 * 12. Enforced=False                      → Failed, with the spoke's reason
 */
export function aggregatePolicyStatus(input: { clusters: Readonly<Record<string, ClusterInput>>; problems?: readonly PolicyProblem[] }): PolicyStatus {
  const problems = sortedProblems(input.problems ?? []);
  const summary: StatusSummary = { clusters: 0, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 0 };
  const clusters: [string, ClusterStatus][] = [];
  for (const name of Object.keys(input.clusters).sort()) {
    const cluster = input.clusters[name];
    if (cluster === undefined) continue;
    const status = clusterStatus(cluster);
    clusters.push([name, status]);
    summary.clusters += 1;
    if (status.applied) summary.applied += 1;
    summary[COUNTER[status.state]] += 1;
  }
  const status: PolicyStatus = { summary, clusters: Object.fromEntries(clusters) };
  if (problems.length > 0) status.problems = problems;
  return status;
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

const COUNTER = { Enforced: 'enforced', Overridden: 'overridden', Pending: 'pending', Failed: 'failed' } as const;

function clusterStatus(input: ClusterInput): ClusterStatus {
  switch (input.state) {
    case 'conflicted':
      // Not placed there at all: definitely not enforced.
      return entry('Failed', { applied: false, available: false, enforced: 'False', upToDate: false }, 'Conflicted', input.message);
    case 'tooLarge': {
      const feedback = input.feedback;
      const base = {
        applied: feedback?.applied ?? false,
        available: feedback?.available ?? false,
        enforced: feedback?.enforced?.status ?? 'Unknown',
        // The desired work is not written, so whatever runs there is not current.
        upToDate: false,
      };
      const message = input.message ?? 'the ManifestWork for this cluster exceeds the size limit and is not written';
      return entry('Failed', base, 'TooLarge', message);
    }
    case 'pending':
      return entry(
        'Pending',
        { applied: false, available: false, enforced: 'Unknown', upToDate: false },
        'Pending',
        'waiting for the ManifestWork status from the cluster',
      );
    case 'work':
      return fromFeedback(input.feedback);
  }
}

function fromFeedback(feedback: ClusterFeedback): ClusterStatus {
  const { enforced, accepted } = feedback;
  const base = {
    applied: feedback.applied,
    available: feedback.available,
    enforced: enforced?.status ?? 'Unknown',
    upToDate:
      feedback.applied &&
      feedback.appliedObservedCurrent &&
      feedback.generation !== undefined &&
      feedback.enforcedGeneration === feedback.generation,
  };
  if (feedback.applyError !== undefined) return entry('Failed', base, 'ApplyFailed', feedback.applyError);
  if (feedback.feedbackError !== undefined) return entry('Failed', base, 'FeedbackFailed', feedback.feedbackError);
  if (!feedback.applied) return entry('Pending', base, 'Pending', 'waiting for the ManifestWork to be applied on the cluster');
  if (accepted?.status === 'False') {
    return entry('Failed', base, accepted.reason || 'NotAccepted', accepted.message || 'the policy is not accepted on the cluster');
  }
  if (enforced === undefined) return entry('Pending', base, 'Pending', 'waiting for the Enforced condition of the policy on the cluster');
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

function entry(
  state: ClusterState,
  base: Pick<ClusterStatus, 'applied' | 'available' | 'enforced' | 'upToDate'>,
  reason: string,
  message: string,
): ClusterStatus {
  return { state, ...base, reason, message: cutMessage(message) };
}

/** At most MAX_STATUS_MESSAGE_LENGTH code points (never splitting a surrogate pair), `…` marking a cut. */
export function cutMessage(message: string): string {
  const chars = Array.from(message);
  if (chars.length <= MAX_STATUS_MESSAGE_LENGTH) return message;
  return `${chars.slice(0, MAX_STATUS_MESSAGE_LENGTH - 1).join('')}…`;
}

/**
 * The annotation value: canonical JSON, so equal statuses give equal text and no write. Past
 * MAX_STATUS_ANNOTATION_BYTES only the summary is kept, with `truncated: true`.
 */
export function policyStatusAnnotation(status: PolicyStatus): string {
  const full = canonicalJson(status);
  if (Buffer.byteLength(full, 'utf8') <= MAX_STATUS_ANNOTATION_BYTES) return full;
  const { clusters: _dropped, ...rest } = status;
  return canonicalJson({ ...rest, summary: { ...status.summary, truncated: true } });
}

const count = z.number().int().nonnegative();
const clusterStatusSchema = z.object({
  state: z.enum(['Enforced', 'Overridden', 'Pending', 'Failed']),
  applied: z.boolean(),
  available: z.boolean(),
  enforced: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  upToDate: z.boolean(),
});
const policyStatusSchema = z.object({
  summary: z.object({
    clusters: count,
    applied: count,
    enforced: count,
    overridden: count,
    pending: count,
    failed: count,
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
 * Clusters that entered the Enforced, Overridden or Failed state, sorted by cluster: one Event
 * each. A cluster staying in its state (even with a new reason) or becoming Pending gives none.
 * With no `before`, every cluster is new. A `before` without its per-cluster part (a truncated
 * annotation read back after a restart) gives none: what changed is unknown, and an Event
 * storm on every restart helps nobody.
 */
export function statusTransitions(before: PolicyStatus | undefined, after: PolicyStatus): StatusTransition[] {
  if (before !== undefined && before.clusters === undefined) return [];
  const previous = before?.clusters ?? {};
  const current = after.clusters ?? {};
  const transitions: StatusTransition[] = [];
  for (const cluster of Object.keys(current).sort()) {
    const now = current[cluster];
    if (now === undefined || now.state === 'Pending') continue;
    // Own properties only: a cluster may be named "constructor".
    const was = Object.hasOwn(previous, cluster) ? previous[cluster] : undefined;
    if (was?.state === now.state) continue;
    transitions.push({ cluster, type: now.state, reason: now.reason, message: now.message });
  }
  return transitions;
}
