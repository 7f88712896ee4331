// A hub policy this controller stopped placing — its Gateways deleted, or retargeted to none of ours — may still run
// where its works were: OCM's work agent (v1.2.1) can let a terminating work go and leave its copy behind
// (docs/reliability.md). Once the works are gone nothing on the hub said the policy was ours, so such a copy was
// nobody's to call lingering and hand back (the soak, seed 4612: two copies of policies whose Gateway was deleted ran
// on, unsaid, until OCM's eviction grace would take them). The withdrawal mark (WITHDRAWN_BY_ANNOTATION) says it: the controller that withdrew the copies keeps
// witnessing them through the spoke reports, and mends them by the deletion rule, until no report shows one. Pure.
import type { KubeObject } from '../k8s/objects.ts';
import type { GroupResource } from '../k8s/gvr.ts';
import { WITHDRAWN_BY_ANNOTATION } from '../metadatakeys.ts';
import type { HubView } from './hubview.ts';

/** The controller (its label value) whose withdrawal mark the policy carries; undefined when none. */
export function withdrawnBy(policy: KubeObject): string | undefined {
  const value = policy.metadata.annotations?.[WITHDRAWN_BY_ANNOTATION];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Whether `controller` is still the witness of the policy's copies by its withdrawal mark: the mark names it, and no
 * Gateway the policy targets now is of a class another controller owns — that controller's copies would be its own
 * business (a Gateway whose class is absent is no one's yet: the deletion rule keeps on that doubt).
 */
export function withdrawnHere(view: HubView, gr: GroupResource, policy: KubeObject, controller: string, targetClasses: readonly string[]): boolean {
  if (withdrawnBy(policy) !== controller) return false;
  if (targetClasses.length === 0) return true;
  const grounds = view.removalGrounds(gr, targetClasses);
  return targetClasses.every((c) => grounds.classes.has(c) || grounds.absentClasses.has(c));
}
