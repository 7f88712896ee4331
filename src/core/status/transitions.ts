// What in a new status is worth an Event: clusters that entered a state, problems not reported before —
// and the Events they make, on the policy and, for a lane conflict, on both Gateways too.
import type { KubeObject } from '../k8s/objects.ts';
import { cutMessage } from '../k8s/sanitize.ts';
import { DRIFTED, LINGERING, type PolicyProblem, type PolicyStatus } from './policystatus.ts';
import { LANE_CONFLICT_REASON, type LaneReport } from './statusinput.ts';

export interface StatusTransition {
  cluster: string;
  type: 'Enforced' | 'Overridden' | 'Failed' | 'Unknown';
  reason: string;
  message: string;
}

/**
 * Problems the hub found with the policy itself (a target it cannot sync, no cluster at all, …).
 * Kept in the annotation so that, after a restart, Events are still raised only for new ones.
 */
export function newProblems(before: PolicyStatus | undefined, after: PolicyStatus): PolicyProblem[] {
  const known = new Set((before?.problems ?? []).map((p) => JSON.stringify([p.reason, p.message])));
  return (after.problems ?? []).filter((p) => !known.has(JSON.stringify([p.reason, p.message])));
}

/**
 * Clusters that entered the Enforced, Overridden, Failed or Unknown state, sorted by cluster: one Event
 * each. A cluster staying in its state (even with a new reason, but for Drifted and Lingering) or becoming Pending
 * gives none.
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
    // What the spoke says runs against what the hub sent is news within a state too (Failed, NoStatus → Drifted).
    if (was?.state === now.state && !(SPOKE_TRUTH_REASONS.has(now.reason) && was.reason !== now.reason)) continue;
    transitions.push({ cluster, type: now.state, reason: now.reason, message: now.message });
  }
  return transitions;
}

/** Reasons that make an Event whenever a cluster comes to them, whatever its state was. */
const SPOKE_TRUTH_REASONS: ReadonlySet<string> = new Set([DRIFTED, LINGERING]);

/**
 * Whether `after` says of a cluster, newly, that its copy runs not as sent or where no work places it: news that must
 * not wait behind other writes, since the next status (the drift put back, the copy gone) would replace it unsaid.
 */
export function spokeTruthNews(before: PolicyStatus | undefined, after: PolicyStatus): boolean {
  return statusTransitions(before, after).some((t) => SPOKE_TRUTH_REASONS.has(t.reason));
}

/** An Event to record: on which object, of which type, why. */
export interface StatusEvent {
  object: KubeObject;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * The Events a write of `after` over `before` (the status last written, else the annotation as it was:
 * a restart raises no Event for what was already reported) makes, in order: one per cluster transition
 * on the policy, then one per new problem on the policy — a lane conflict, which concerns two tenants'
 * Gateways, on each of its Gateways too, so that each hears of it where its admin looks.
 */
export function statusEvents(policy: KubeObject, before: PolicyStatus | undefined, after: PolicyStatus, lanes: readonly LaneReport[] = []): StatusEvent[] {
  const events: StatusEvent[] = [];
  for (const t of statusTransitions(before, after)) {
    const type = t.type === 'Enforced' ? 'Normal' : 'Warning';
    // A copy that runs not as sent, or where no work places it, says so in the reason: what to alert and search on.
    events.push({ object: policy, type, reason: SPOKE_TRUTH_REASONS.has(t.reason) ? t.reason : t.type === 'Unknown' ? 'ClusterUnknown' : t.type, message: `cluster ${t.cluster}: ${t.reason}${t.message ? `: ${t.message}` : ''}` });
  }
  const rollout = rolloutEvent(before, after);
  if (rollout) events.push({ object: policy, ...rollout });
  for (const p of newProblems(before, after)) {
    events.push({ object: policy, type: 'Warning', reason: p.reason, message: p.message });
    const lane = p.reason === LANE_CONFLICT_REASON ? lanes.find((l) => cutMessage(l.message) === p.message) : undefined;
    for (const gateway of lane?.gateways ?? []) events.push({ object: gateway, type: 'Warning', reason: LANE_CONFLICT_REASON, message: p.message });
  }
  return events;
}

/**
 * A Progressive rollout that moved: a new wave started (RolloutProgressing), it halted (RolloutHalted, naming
 * the cluster and its controller's words) or completed (RolloutComplete). Undefined when it stands where it stood.
 */
export function rolloutEvent(before: PolicyStatus | undefined, after: PolicyStatus): Omit<StatusEvent, 'object'> | undefined {
  const now = after.rollout;
  if (!now || now.strategy !== 'Progressive') return undefined;
  const was = before?.rollout;
  const same = was !== undefined && was.revision === now.revision && was.state === now.state && was.wave === now.wave;
  if (same) return undefined;
  switch (now.state) {
    case 'Halted':
      return { type: 'Warning', reason: 'RolloutHalted', message: now.message };
    case 'Complete':
      // A policy seen for the first time complete (already placed everywhere) has nothing new to tell.
      return was === undefined ? undefined : { type: 'Normal', reason: 'RolloutComplete', message: now.message };
    case 'Progressing':
      return { type: 'Normal', reason: 'RolloutProgressing', message: `revision ${now.revision}: ${now.message}` };
  }
}
