// Where a ManifestWork stands, from its own status as written by the work agent: the policysync_works
// gauge counts the hub's works by this state.
import { readConditions } from '../k8s/conditions.ts';
import type { KubeObject } from '../k8s/objects.ts';

export type WorkState = 'applied' | 'failed' | 'pending';
export const WORK_STATES: readonly WorkState[] = ['applied', 'failed', 'pending'];

/**
 * `applied`: the work's Applied condition is True for its current generation; `failed`: it is False for
 * its current generation; `pending`: anything else — no status yet (no agent has seen it), no Applied
 * condition, or a condition observing an older generation (the current spec is not applied yet).
 * A condition without observedGeneration counts as current.
 */
export function workState(work: KubeObject): WorkState {
  const applied = readConditions(work).find((c) => c?.type === 'Applied');
  if (!applied) return 'pending';
  const observed = applied.observedGeneration;
  if (typeof observed === 'number' && observed !== work.metadata.generation) return 'pending';
  if (applied.status === 'True') return 'applied';
  if (applied.status === 'False') return 'failed';
  return 'pending';
}

export function countWorkStates(works: Iterable<KubeObject>): Record<WorkState, number> {
  const counts: Record<WorkState, number> = { applied: 0, failed: 0, pending: 0 };
  for (const work of works) counts[workState(work)] += 1;
  return counts;
}

/** The finalizer OCM's work agent puts on a work before it applies anything of it. */
export const AGENT_FINALIZER = 'cluster.open-cluster-management.io/manifest-work-cleanup';

/**
 * The work agent is taking the work up: it has put its finalizer on but has written no Applied condition yet.
 * OCM's agent (v1.2.1) takes a work up in steps — its finalizer; the AppliedManifestWork, which owns the copies
 * it applies; the copies; the work's status. Its finalizer controller reads the AppliedManifestWork from its
 * cache: a work deleted before that cache shows the AppliedManifestWork loses its finalizer at once, while the
 * copy being applied lands on the spoke, owned by an AppliedManifestWork that nothing deletes until the agent
 * evicts it an hour later (`--appliedmanifestwork-eviction-grace-period`; the soak found it, issue 29). An
 * Applied condition comes after the AppliedManifestWork: from then on a delete takes the copy with it.
 */
export function agentTakingUp(work: KubeObject): boolean {
  return (work.metadata.finalizers ?? []).includes(AGENT_FINALIZER) && !readConditions(work).some((c) => c?.type === 'Applied');
}
