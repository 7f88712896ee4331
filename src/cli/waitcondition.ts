// `policy-sync wait --for=synced|enforced`: whether a hub policy got there on each of its clusters. Pure:
// the hub policy, the hub's status annotation and the policy's ManifestWorks in, one verdict per cluster
// out, decided by the hub's own rules (clusterVerdict of src/core/status) on what the works say now.
//
// The clusters counted are those the hub places the policy on: the annotation's clusters, and any cluster
// with a (not deleting) work of the policy. On each:
// - Overridden (local policies win there, so the hub withdrew the copy or the spoke's controller reports it
//   overridden) has got there for both conditions: the hub's decision for that cluster is carried out.
// - Unknown (OCM cannot vouch for the cluster), or Failed Conflicted / TooLarge (the hub cannot place the
//   current copy there) has not.
// - synced: the cluster's work holds the copy of the policy's current spec (equal to the hub spec but for
//   the targets, which the copy has rewritten), and the work agent reports it Applied for that work's
//   generation. Whatever the spoke's controller then says (Failed MissingResource included) is its verdict,
//   not the sync's.
// - enforced: synced, and the verdict from that work is Enforced (PartiallyEnforced included) with the
//   spoke's status observing the copy's current generation (upToDate).
// A policy counts as there when it has at least one cluster and every cluster got there: a policy placed
// nowhere (NoClusters, NotSynced) never is.
import { canonicalJson } from '../core/k8s/canonical.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { clusterVerdict, type PolicyStatus } from '../core/status/policystatus.ts';
import { readClusterFeedback } from '../core/works/feedback.ts';
import { copyRevision, workCopy } from '../core/works/revision.ts';

export type WaitFor = 'synced' | 'enforced';
export const WAIT_CONDITIONS: readonly WaitFor[] = ['enforced', 'synced'];

export interface ClusterProgress {
  cluster: string;
  reached: boolean;
  state: string;
  reason: string;
  message: string;
}

export interface PolicyProgress {
  reached: boolean;
  clusters: ClusterProgress[];
  /** Why the policy as a whole is not there (no status yet, on no cluster, deleted). */
  problem?: { reason: string; message: string };
}

function withoutTargets(spec: unknown): unknown {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return spec;
  const { targetRef: _one, targetRefs: _many, ...rest } = spec as Record<string, unknown>;
  return rest;
}

/**
 * The work's copy is of the policy's current revision: the revision it carries is the policy's generation (an
 * edit of the targets alone is a new revision too); for a copy from before revisions were recorded, its spec is
 * the policy's (targets aside: the copy's are rewritten).
 */
export function holdsCurrentRevision(policy: KubeObject, work: KubeObject): boolean {
  const copy = workCopy(work);
  if (!copy) return false;
  const revision = copyRevision(copy);
  if (revision !== undefined) return revision === policy.metadata.generation;
  return canonicalJson(withoutTargets(copy.spec)) === canonicalJson(withoutTargets(policy.spec));
}

/** Where `policy` stands against `waitFor` on each of its clusters, at `now`. */
export function policyProgress(
  waitFor: WaitFor,
  policy: KubeObject | undefined,
  status: PolicyStatus | undefined,
  works: readonly KubeObject[],
  now: number,
): PolicyProgress {
  if (!policy) return { reached: false, clusters: [], problem: { reason: 'NotFound', message: 'the policy is gone from the hub' } };
  if (!status) {
    return { reached: false, clusters: [], problem: { reason: 'NotReported', message: 'the hub controller has not reported on the policy yet' } };
  }
  const workOf = new Map<string, KubeObject>();
  for (const w of works) if (!w.metadata.deletionTimestamp) workOf.set(w.metadata.namespace ?? '', w);
  const names = [...new Set([...Object.keys(status.clusters ?? {}), ...workOf.keys()])].sort();
  if (names.length === 0) {
    const problems = status.problems ?? [];
    return {
      reached: false,
      clusters: [],
      problem:
        problems.length > 0
          ? { reason: problems.map((p) => p.reason).join(', '), message: problems.map((p) => p.message).join('; ') }
          : { reason: 'NoClusters', message: 'the policy is placed on no cluster' },
    };
  }
  const clusters = names.map((cluster) => clusterProgress(waitFor, policy, status.clusters?.[cluster], workOf.get(cluster), cluster, now));
  return { reached: clusters.every((c) => c.reached), clusters };
}

function clusterProgress(
  waitFor: WaitFor,
  policy: KubeObject,
  hub: NonNullable<PolicyStatus['clusters']>[string] | undefined,
  work: KubeObject | undefined,
  cluster: string,
  now: number,
): ClusterProgress {
  const not = (state: string, reason: string, message: string): ClusterProgress => ({ cluster, reached: false, state, reason, message });
  // What only the hub knows: local policies win, OCM cannot vouch, the name is held, the work is too large.
  if (hub?.state === 'Overridden') return { cluster, reached: true, state: hub.state, reason: hub.reason, message: hub.message };
  if (hub?.state === 'Unknown') return not(hub.state, hub.reason, hub.message);
  if (hub?.state === 'Failed' && (hub.reason === 'Conflicted' || hub.reason === 'TooLarge')) return not(hub.state, hub.reason, hub.message);
  if (!work) return not(hub?.state ?? 'Pending', hub?.reason ?? 'Pending', 'no ManifestWork of the policy for this cluster yet');
  if (!holdsCurrentRevision(policy, work)) {
    return not('Pending', 'OutOfDate', "the cluster's ManifestWork holds an earlier revision of the policy: the hub controller has not written the current one yet (a Progressive rollout writes it in the cluster's wave)");
  }
  const feedback = work.status === undefined ? undefined : readClusterFeedback(work);
  const verdict = clusterVerdict(feedback ? { state: 'work', feedback } : { state: 'pending' }, now).status;
  const synced = feedback !== undefined && feedback.applied && feedback.appliedObservedCurrent;
  if (!synced) {
    // A failure to apply says why; anything else is the work agent not there yet.
    if (verdict.state === 'Failed') return not(verdict.state, verdict.reason, verdict.message);
    return not('Pending', 'NotApplied', 'the work agent has not applied the current ManifestWork yet');
  }
  if (waitFor === 'synced') return { cluster, reached: true, state: verdict.state, reason: verdict.reason, message: verdict.message };
  if (verdict.state === 'Overridden') return { cluster, reached: true, state: verdict.state, reason: verdict.reason, message: verdict.message };
  if (verdict.state !== 'Enforced') return not(verdict.state, verdict.reason, verdict.message);
  // The verdict is about the current copy: the status was read from the copy this work places (its revision and
  // tag; the work holds the policy's revision, above) and the spoke's controller observed its generation.
  if (!verdict.upToDate) {
    return not('Pending', 'NotObserved', "the spoke's policy controller has not reported on the current copy yet");
  }
  return { cluster, reached: true, state: verdict.state, reason: verdict.reason, message: verdict.message };
}

/**
 * The lines `wait` prints for a policy that did not get there: the problem, or one line per cluster not
 * there with its state, reason and message.
 */
export function unmetLines(label: string, waitFor: WaitFor, progress: PolicyProgress): string[] {
  if (progress.problem) return [`${label}: not ${waitFor}: ${progress.problem.reason}: ${progress.problem.message}`];
  return progress.clusters
    .filter((c) => !c.reached)
    .map((c) => `${label}: not ${waitFor} on ${c.cluster}: ${c.state} ${c.reason}${c.message ? `: ${c.message}` : ''}`);
}
