// What the spoke agent does to a synced policy's `Enforced` condition (DESIGN §6), given the conflict
// verdict. When it takes the condition over it records the one it displaced (the spoke policy
// controller's), and when the conflict ends it puts that one back — or removes its own when there was
// none — so the spoke's own status is left as it would have been.
import type { Condition } from './conditions.ts';
import { DISPLACED_ENFORCED_ANNOTATION } from './metadatakeys.ts';
import type { KubeObject } from './objects.ts';
import { readConditions } from './conditions.ts';
import { ENFORCED_CONDITION } from './conflicts.ts';

export type EnforcedAction =
  | { action: 'none' }
  /** Record `displaced` on the policy, then write `condition`. */
  | { action: 'takeOver'; displaced: Condition | null; condition: Condition }
  /** Already taken over: write `condition` (the verdict or its message changed). */
  | { action: 'update'; condition: Condition }
  /** The conflict ended: write back `restore`, or drop our condition when undefined; forget the record. */
  | { action: 'release'; restore: Condition | undefined };

/** The displaced condition recorded on the policy: a Condition, null (there was none), or undefined (not taken over). */
export function readDisplaced(policy: KubeObject): Condition | null | undefined {
  const text = policy.metadata.annotations?.[DISPLACED_ENFORCED_ANNOTATION];
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null) return null;
    if (typeof value === 'object' && (value as Condition).type === ENFORCED_CONDITION) return value as Condition;
  } catch {
    // A mangled record is treated as "nothing displaced": the agent still releases its own condition.
  }
  return null;
}

export function enforcedAction(policy: KubeObject, desired: Condition | undefined): EnforcedAction {
  const current = readConditions(policy).find((c) => c.type === ENFORCED_CONDITION);
  const displaced = readDisplaced(policy);
  if (desired === undefined) {
    return displaced === undefined ? { action: 'none' } : { action: 'release', restore: displaced ?? undefined };
  }
  if (displaced === undefined) return { action: 'takeOver', displaced: current ?? null, condition: desired };
  const same =
    current !== undefined &&
    current.status === desired.status &&
    current.reason === desired.reason &&
    current.message === desired.message &&
    current.observedGeneration === desired.observedGeneration;
  return same ? { action: 'none' } : { action: 'update', condition: { ...desired, lastTransitionTime: current?.status === desired.status && current.lastTransitionTime ? current.lastTransitionTime : desired.lastTransitionTime } };
}
