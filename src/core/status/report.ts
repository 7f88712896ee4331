// One status report of a hub policy, computed in one pure call: every cluster's verdict decided once, and
// from them the status, the two annotations the hub writes on the policy, the counts behind the
// policysync_clusters gauge and when to look again. What of it is worth an Event depends on what was
// last written, known only when the write is made: transitions.ts (statusEvents) reads it off `status`.
import type { KubeObject } from '../k8s/objects.ts';
import { canonicalJson } from '../k8s/canonical.ts';
import type { ManifestWork } from '../works/manifestwork.ts';
import { POLICIES_SYNCED_ANNOTATION, STATUS_ANNOTATION, WITHDRAWN_BY_ANNOTATION } from '../metadatakeys.ts';
import { cutMessage } from '../k8s/sanitize.ts';
import { policyStatusAnnotation } from './annotation.ts';
import { policiesSyncedAnnotation } from './policiessynced.ts';
import { clusterVerdict, judgePolicy, type PolicyStatus, type StatusSummary } from './policystatus.ts';
import { workRevision, workVariants } from '../works/revision.ts';
import { statusAggregateInput, type StatusInput } from './statusinput.ts';

/** Clusters by state in one policy's aggregated status (the policysync_clusters gauge sums them). */
/** A policy's clusters by state, and of them those whose copy drifted or lingers (docs/concepts/status.md#what-runs-on-a-spoke). */
export type ClusterStateCounts = Pick<StatusSummary, 'enforced' | 'overridden' | 'pending' | 'failed'> & { unknown: number; drifted: number; lingering: number };

/** The annotations the hub writes on a policy, by key; undefined for one to remove. */
export type ReportAnnotations = Record<string, string | undefined>;

export interface PolicyStatusReport {
  status: PolicyStatus;
  /** The policies-synced and status annotations as they should be. */
  annotations: ReportAnnotations;
  counts: ClusterStateCounts;
  /** Reconcile the policy again this many ms from now (a cluster's status grace ends); undefined when none waits. */
  recheckDelay?: number;
}

/**
 * Each cluster's revision (what the work in place carries) and, for a Progressive rollout, where it stands in
 * it; the rollout's own state on the policy.
 */
function withRevisions(status: PolicyStatus, inPlace: readonly KubeObject[], rollout: StatusInput['rollout']): PolicyStatus {
  if (!status.clusters) return status;
  const revisions = new Map(inPlace.map((w) => [w.metadata.namespace ?? '', workRevision(w)]));
  const variants = new Map(inPlace.map((w) => [w.metadata.namespace ?? '', workVariants(w)]));
  const progressive = rollout?.status.strategy === 'Progressive' ? rollout : undefined;
  const clusters = Object.fromEntries(
    Object.entries(status.clusters).map(([name, c]) => {
      const revision = revisions.get(name);
      const carried = variants.get(name);
      const phase = progressive?.clusters[name];
      return [
        name,
        {
          ...c,
          ...(revision === undefined ? {} : { revision }),
          ...(carried === undefined ? {} : { variants: carried }),
          ...(phase ? { rollout: { phase: phase.phase, ...(phase.message ? { message: cutMessage(phase.message) } : {}) } } : {}),
        },
      ];
    }),
  );
  if (!progressive) return { ...status, clusters };
  const { halted, message } = progressive.status;
  const state = { ...progressive.status, message: cutMessage(message), ...(halted ? { halted: { ...halted, message: cutMessage(halted.message) } } : {}) };
  return { ...status, clusters, rollout: state };
}

/**
 * The annotations this reporter writes, for these works in place and this status (undefined: none), and the
 * withdrawal mark (core/pipeline/withdrawal.ts) of the controller that withdrew the policy's copies, if it did.
 */
export function reportAnnotations(works: readonly ManifestWork[], status: PolicyStatus | undefined, withdrawnBy?: string): ReportAnnotations {
  return {
    [WITHDRAWN_BY_ANNOTATION]: withdrawnBy,
    [POLICIES_SYNCED_ANNOTATION]: policiesSyncedAnnotation(
      works.map((w) => {
        const copy = w.spec.workload.manifests[0]!;
        return { cluster: w.metadata.namespace, name: copy.metadata.name, namespace: copy.metadata.namespace ?? '' };
      }),
    ),
    [STATUS_ANNOTATION]: status ? policyStatusAnnotation(status) : undefined,
  };
}

/** The annotations written by this reporter as `policy` has them, in the form the reporter compares. */
export function reportedAnnotations(policy: KubeObject): string {
  const current = policy.metadata.annotations ?? {};
  return canonicalJson({
    [WITHDRAWN_BY_ANNOTATION]: current[WITHDRAWN_BY_ANNOTATION],
    [POLICIES_SYNCED_ANNOTATION]: current[POLICIES_SYNCED_ANNOTATION],
    [STATUS_ANNOTATION]: current[STATUS_ANNOTATION],
  });
}

/** The annotation keys the reporter writes. */
export const REPORTED_ANNOTATIONS: readonly string[] = [WITHDRAWN_BY_ANNOTATION, POLICIES_SYNCED_ANNOTATION, STATUS_ANNOTATION];

/**
 * The report of a policy from what the reconciler decided (`now`: the time to judge the status grace
 * against). `verdict` is for tests that count the verdicts.
 */
export function reportPolicyStatus(input: StatusInput, maxWorkBytes: number, now: number, verdict: typeof clusterVerdict = clusterVerdict): PolicyStatusReport {
  const judged = judgePolicy(statusAggregateInput(input, maxWorkBytes, now), verdict);
  const { recheckDelay } = judged;
  const { enforced, overridden, pending, failed, unknown = 0 } = judged.status.summary;
  // A work kept on a cluster in doubt is still where the copy runs, as far as anyone knows.
  const inPlace = [...input.written, ...((input.kept ?? []) as ManifestWork[]), ...(input.unknown ?? []).flatMap((u) => (u.work ? [u.work] : []))];
  const status = withRevisions(judged.status, inPlace, input.rollout);
  const report: PolicyStatusReport = { status, annotations: reportAnnotations(inPlace, status, input.withdrawnBy), counts: { enforced, overridden, pending, failed, unknown, drifted: status.summary.drifted ?? 0, lingering: status.summary.lingering ?? 0 } };
  if (recheckDelay !== undefined) report.recheckDelay = recheckDelay;
  return report;
}
