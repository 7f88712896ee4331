// Aggregated spoke status of a hub policy (docs/design/status.md#status-on-the-hub): each cluster's verdict, decided once, and the
// policy's summary and problems. Its annotation form is annotation.ts; what is worth an Event, transitions.ts.
import { judgedPlacedCopy, type ClusterFeedback, type FeedbackCondition, type FeedbackScalar } from '../works/feedback.ts';
import type { ClusterPhase, RolloutStatus } from './rolloutstatus.ts';
import { cutMessage, eventReason } from '../k8s/sanitize.ts';
import { deepFreeze } from '../k8s/freeze.ts';
import type { CopyDrift } from '../spoke/spokereport.ts';
import { LINGER_GRACE_MS } from '../spoke/spoketruth.ts';

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
  | { state: 'work'; feedback: ClusterFeedback; local?: LocalNote; drift?: DriftNote }
  /**
   * No work of the policy places a copy there, but the spoke agent's fresh report lists one
   * (core/spoke/spoketruth.ts): being removed for LINGER_GRACE_MS after it was first seen so, lingering past it.
   */
  | { state: 'lingering'; copies: readonly LingeringNote[]; instead?: PlacedNone }
  /** The work was just written and has no status yet. */
  | { state: 'pending' }
  /** A Progressive rollout has not reached the cluster, and it has no copy yet (core/rollout). */
  | { state: 'waiting'; message: string }
  /** The desired work exceeds --max-work-bytes; feedback of the retained last good work, if any. */
  | { state: 'tooLarge'; message?: string; feedback?: ClusterFeedback }
  /**
   * The PolicyVariants that select the cluster could not render its copy (core/variants/render.ts): nothing new is
   * written; feedback of the work it keeps, if any.
   */
  | { state: 'variantFailed'; reason: string; message: string; feedback?: ClusterFeedback }
  /** Another hub policy owns the spoke object here (docs/design/works.md#the-spoke-copy). */
  | { state: 'conflicted'; message: string }
  /**
   * Local policies cover every target of the copy (the spoke agent's fresh report): it is not placed there.
   * `by`: their `namespace/name` (core/spoke/conflicts.ts coverage).
   */
  | { state: 'overridden'; message: string; by: readonly string[] }
  /**
   * No first copy is placed until a fresh report of the spoke agent vouches for its name (docs/design/tenancy.md#reports-are-evidence-not-orders):
   * the evidence missing; the feedback of a work kept as it was (its copy of another name), if any.
   */
  | { state: 'awaitingReport'; message: string; feedback?: ClusterFeedback }
  /**
   * The cluster left the decisions while OCM cannot vouch for it, or while the Placement is in flux: its
   * work is kept as it was (docs/design/deletion.md#never-delete-on-doubt). OCM's reason and since when; the kept work's last feedback, if any.
   */
  | { state: 'unknown'; reason: string; message: string; since?: string; feedback?: ClusterFeedback };

/** A copy that runs not as the hub sent it, by the spoke agent's fresh report; `correcting`: it is being put back. */
export interface DriftNote {
  drift: CopyDrift;
  correcting: boolean;
}

/**
 * Why the hub places no copy on a cluster where one lingers, when the policy has a say there: a local policy
 * overrides it, or another hub policy won the Gateway. The say stands; the copy left behind is what runs.
 */
export interface PlacedNone {
  reason: 'Overridden' | 'Conflicted';
  message: string;
  by?: readonly string[];
}

/** A copy that runs where no work of the policy places it. */
export interface LingeringNote {
  kind: string;
  namespace: string;
  name: string;
  /** Seen so for the whole grace: it lingers (else it is only being removed). */
  lingering: boolean;
  /** Since when (hub wall time, RFC 3339) this hub has seen it reported so. */
  since: string;
  /** The same, in ms since the epoch: when its grace ends is judged from this (`since` is cut to the second). */
  seenAt: number;
}

/** Reasons of the spoke's truth: a copy not as sent, one that runs where no work places it, one on its way out. */
export const DRIFTED = 'Drifted';
export const LINGERING = 'Lingering';
export const REMOVING = 'Removing';

/** The reason of a cluster that gets no first copy until its spoke agent's fresh report vouches for the name. */
export const AWAITING_SPOKE_REPORT = 'AwaitingSpokeReport';

/** What local policies do to a placed copy, by the spoke agent's report. */
export type LocalNote =
  /** Local policies take some Gateways or listeners of the copy; `by`: their `namespace/name` (conflicts.ts coverage). */
  | { reason: 'PartiallyEnforced'; message: string; by: readonly string[] }
  /** The hub policy uses overrides: it is in force over the local policies on its targets. */
  | { reason: 'OverridesLocal'; message: string };

/**
 * Most overriding local policies one cluster's status names: the annotation's budget is shared by every
 * cluster, and a name can be 317 characters. `overriddenByMore` counts the rest.
 */
export const MAX_OVERRIDDEN_BY = 8;

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
   * The current work is applied and the spoke's status, read from the copy it places (revision and tag),
   * observed that copy's generation (works/feedback.ts judgedPlacedCopy).
   */
  upToDate: boolean;
  /** The kind's own statusFeedback values (params), by name, strings cut like messages; absent when none. */
  statusFeedback?: Record<string, FeedbackScalar>;
  /** The revision of the policy (its metadata.generation) the copy placed there carries; absent when none is. */
  revision?: number;
  /** Progressive rollouts: where the cluster stands in the rollout of the policy's revision. */
  rollout?: { phase: ClusterPhase; message?: string };
  /**
   * Overridden, or PartiallyEnforced, by local policies as the hub found them in the spoke agent's report: their
   * `namespace/name`, sorted, at most MAX_OVERRIDDEN_BY. Absent otherwise — also when the spoke's own controller
   * reports the copy overridden (its message names who, in its words).
   */
  overriddenBy?: string[];
  /** How many overriding local policies overriddenBy leaves out; absent when none. */
  overriddenByMore?: number;
  /** The PolicyVariants the copy placed there carries, `name@generation`; absent when none. */
  variants?: string[];
  /** Drifted: what differs from what the hub sent, by the spoke agent's report. */
  drift?: CopyDrift;
  /** Lingering or Removing: the copies that run there with no work of the policy, `namespace/name`. */
  lingering?: string[];
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
  /** Clusters whose copy runs not as sent (reason Drifted); absent when none. */
  drifted?: number;
  /** Clusters where a copy runs with no work of the policy (reason Lingering); absent when none. */
  lingering?: number;
  /**
   * Set when the annotation did not hold everything: the statusFeedback values were left out, and when
   * that was not enough, the per-cluster part but for the clusters most in need of a look, or all of it
   * (annotation.ts). The counts are still the whole fleet's; the works have the rest (the CLI reads them).
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
  /** Progressive rollouts: where the rollout of the policy's revision stands (core/rollout). */
  rollout?: RolloutStatus;
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
 *  0b. awaitingReport (no fresh report vouches for the name; nothing new placed) → Pending, reason
 *     AwaitingSpokeReport, naming the evidence missing
 *  1. conflicted                          → Failed, reason Conflicted
 *  2. tooLarge                            → Failed, reason TooLarge
 *  2b. variantFailed                      → Failed, reason InvalidVariant, VariantValueMissing or VariantConflict
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
 * GEP-713 style, `status.ancestors` entries for the copy's Gateways (docs/design/status.md#reading-spoke-status):
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
  return judgePolicy(input).status;
}

/**
 * Milliseconds until the first cluster that waits for the spoke's status reaches STATUS_GRACE_MS, when
 * its state changes with no event to say so: reconcile the policy again then. Undefined when none waits.
 */
export function statusRecheckDelay(input: Omit<AggregateInput, 'problems'>): number | undefined {
  return judgePolicy(input).recheckDelay;
}

/** The status of a policy and when to look at it again, from one verdict per cluster. */
export interface PolicyJudgement {
  status: PolicyStatus;
  /** See statusRecheckDelay. */
  recheckDelay?: number;
}

/**
 * aggregatePolicyStatus and statusRecheckDelay at once, each cluster's verdict decided once. `verdict`
 * is for tests that count the verdicts.
 */
export function judgePolicy(input: AggregateInput, verdict: typeof clusterVerdict = clusterVerdict): PolicyJudgement {
  const problems = sortedProblems(input.problems ?? []);
  const summary: StatusSummary = { clusters: 0, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 0 };
  const clusters: [string, ClusterStatus][] = [];
  let recheckAt: number | undefined;
  for (const name of Object.keys(input.clusters).sort()) {
    const cluster = input.clusters[name];
    if (cluster === undefined) continue;
    const judged = verdict(cluster, input.now);
    const { status } = judged;
    clusters.push([name, status]);
    summary.clusters += 1;
    if (status.applied) summary.applied += 1;
    const counter = COUNTER[status.state];
    summary[counter] = (summary[counter] ?? 0) + 1;
    if (status.reason === DRIFTED) summary.drifted = (summary.drifted ?? 0) + 1;
    if (status.reason === LINGERING) summary.lingering = (summary.lingering ?? 0) + 1;
    if (judged.recheckAt !== undefined) recheckAt = Math.min(recheckAt ?? judged.recheckAt, judged.recheckAt);
  }
  const status: PolicyStatus = { summary, clusters: Object.fromEntries(clusters) };
  if (problems.length > 0) status.problems = problems;
  // Never 0: a delay of 0 is no requeue at all to the runner, and a look due now would never come.
  return recheckAt === undefined ? { status } : { status, recheckDelay: Math.max(1, recheckAt - input.now) };
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

const COUNTER = { Enforced: 'enforced', Overridden: 'overridden', Pending: 'pending', Failed: 'failed', Unknown: 'unknown' } as const;

/** A cluster's status, and when it is Pending only until the grace ends, when that is. */
export interface Verdict {
  status: ClusterStatus;
  recheckAt?: number;
}

type Base = Pick<ClusterStatus, 'applied' | 'available' | 'enforced' | 'upToDate'>;

/** One cluster's status by the rules of aggregatePolicyStatus. */
export function clusterVerdict(input: ClusterInput, now: number): Verdict {
  switch (input.state) {
    case 'unknown': {
      // What the kept work last said is all there is: it may be stale, so never upToDate.
      const since = input.since ? ` since ${input.since}` : '';
      const message = `${input.message}${since}; its ManifestWork is kept as it was`;
      return { status: withValues(entry('Unknown', notCurrent(input.feedback, now), input.reason, message), input.feedback) };
    }
    case 'overridden':
      // The report that decided it is fresh: the verdict is current.
      return { status: { ...entry('Overridden', { applied: false, available: false, enforced: 'False', upToDate: true }, 'Overridden', input.message), ...overriders(input.by) } };
    case 'awaitingReport':
      // Nothing new placed: what a kept work of another name last said, never current.
      return { status: withValues(entry('Pending', notCurrent(input.feedback, now), AWAITING_SPOKE_REPORT, input.message), input.feedback) };
    case 'conflicted':
      // Not placed there at all: definitely not enforced.
      return { status: entry('Failed', { applied: false, available: false, enforced: 'False', upToDate: false }, 'Conflicted', input.message) };
    case 'tooLarge': {
      // The desired work is not written, so whatever runs there is not current.
      const message = input.message ?? 'the ManifestWork for this cluster exceeds the size limit and is not written';
      return { status: withValues(entry('Failed', notCurrent(input.feedback, now), 'TooLarge', message), input.feedback) };
    }
    case 'variantFailed':
      // The copy the variants want is not written: whatever runs there is not current.
      return { status: withValues(entry('Failed', notCurrent(input.feedback, now), input.reason, input.message), input.feedback) };
    case 'waiting':
      return { status: entry('Pending', { applied: false, available: false, enforced: 'Unknown', upToDate: false }, 'RolloutWaiting', input.message) };
    case 'pending':
      return {
        status: entry('Pending', { applied: false, available: false, enforced: 'Unknown', upToDate: false }, 'Pending', 'waiting for the ManifestWork status from the cluster'),
      };
    case 'lingering': {
      const settled = input.copies.filter((c) => c.lingering);
      const named = (copies: readonly LingeringNote[]): string => copies.map((c) => `${c.namespace}/${c.name}`).join(', ');
      const lingering = input.copies.map((c) => `${c.namespace}/${c.name}`);
      const base = { applied: false, available: false, enforced: 'Unknown' as const, upToDate: false };
      if (settled.length > 0) {
        const since = settled.map((c) => c.since).sort()[0];
        const instead = input.instead ? ` (${input.instead.reason}: ${input.instead.message})` : '';
        const message = `${named(settled)} still runs on the cluster, though no ManifestWork of this hub places it${instead} (reported so since ${since}): OCM's work agent left it behind; it is removed once the hub knows it is unwanted there`;
        return { status: { ...entry('Failed', base, LINGERING, message), lingering, ...overriders(input.instead?.by ?? []) } };
      }
      const message = `${named(input.copies)} is still reported on the cluster; its ManifestWork is gone, and the copy should follow`;
      // From the milliseconds: from `since`, cut to its second, the look came up to a second early and found the copy
      // still in its grace (the agent-race e2e: Removing for good, never Lingering, the copy never mended).
      const recheckAt = Math.min(...input.copies.map((c) => c.seenAt + LINGER_GRACE_MS));
      return { status: { ...entry('Pending', base, REMOVING, message), lingering }, ...(Number.isFinite(recheckAt) ? { recheckAt } : {}) };
    }
    case 'work': {
      const { local, feedback, drift } = input;
      if (drift) {
        const { applied, available, enforced } = fromFeedback(feedback, now).status;
        const message = `the copy on the cluster is not what the hub sent: ${driftText(drift.drift)}; ${drift.correcting ? 'being put back' : 'left as it is (drift: Report)'}`;
        return { status: withValues({ ...entry('Failed', { applied, available, enforced, upToDate: false }, DRIFTED, message), drift: drift.drift }, feedback) };
      }
      // Feedback the caches froze (works/feedback.ts readClusterFeedback) is judged once: a verdict that does not
      // wait for the grace stays what it is as time goes on.
      const memo = local === undefined && Object.isFrozen(feedback);
      const known = memo ? workVerdicts.get(feedback) : undefined;
      if (known) return known;
      const verdict = fromFeedback(feedback, now);
      const status =
        local && verdict.status.state === 'Enforced'
          ? { ...verdict.status, reason: local.reason, message: cutMessage(local.message), ...(local.reason === 'PartiallyEnforced' ? overriders(local.by) : {}) }
          : verdict.status;
      const judged = { ...verdict, status: withValues(status, feedback) };
      if (memo && judged.recheckAt === undefined) workVerdicts.set(feedback, deepFreeze(judged));
      return judged;
    }
  }
}

/** `spec.rules changed by kubectl-edit (Update, 2026-…)`, bounded: what a Drifted status says. */
export function driftText(drift: CopyDrift): string {
  const fields = `${drift.fields.join(', ')}${drift.more ? ` and ${drift.more} more` : ''}`;
  const managers = drift.managers.map((m) => `${m.manager}${m.operation || m.time ? ` (${[m.operation, m.time].filter(Boolean).join(', ')})` : ''}`);
  return managers.length > 0 ? `${fields} changed by ${managers.join(', ')}` : `${fields} differ (no field manager owns the change: a removal, or a default the spoke's schema sets otherwise)`;
}

/** The verdicts of frozen feedback with no local note, by feedback (clusterVerdict's 'work'). */
const workVerdicts = new WeakMap<ClusterFeedback, Verdict>();

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
    upToDate: judgedPlacedCopy(feedback),
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

/** The overriding local policies as a cluster's status names them: sorted, unique, at most MAX_OVERRIDDEN_BY. */
function overriders(by: readonly string[]): Pick<ClusterStatus, 'overriddenBy' | 'overriddenByMore'> {
  const names = [...new Set(by)].sort();
  if (names.length === 0) return {};
  const kept = names.slice(0, MAX_OVERRIDDEN_BY);
  return names.length > kept.length ? { overriddenBy: kept, overriddenByMore: names.length - kept.length } : { overriddenBy: kept };
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

