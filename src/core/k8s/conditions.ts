// metav1.Condition handling: set a condition keeping lastTransitionTime when its status is unchanged,
// and tell whether a desired set differs from what is written (so status is written only on change).

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

/**
 * The conditions to write: `desired` in order, each keeping the existing lastTransitionTime when its
 * status did not change, else stamped `now`. Conditions of other types are kept as they were.
 */
export function mergeConditions(existing: readonly Condition[], desired: readonly Condition[], now: string): Condition[] {
  const byType = new Map(existing.map((c) => [c.type, c]));
  const merged = desired.map((d) => {
    const old = byType.get(d.type);
    const lastTransitionTime = old && old.status === d.status && old.lastTransitionTime ? old.lastTransitionTime : now;
    return { ...d, lastTransitionTime };
  });
  const desiredTypes = new Set(desired.map((d) => d.type));
  return [...merged, ...existing.filter((c) => !desiredTypes.has(c.type))];
}

/** True when every desired condition is already written with the same status, reason, message and generation. */
export function conditionsUpToDate(existing: readonly Condition[], desired: readonly Condition[]): boolean {
  return desired.every((d) => {
    const old = existing.find((c) => c.type === d.type);
    return (
      old !== undefined &&
      old.status === d.status &&
      old.reason === d.reason &&
      old.message === d.message &&
      old.observedGeneration === d.observedGeneration
    );
  });
}

export function readConditions(object: { status?: unknown }): Condition[] {
  const conditions = (object.status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(conditions) ? (conditions as Condition[]) : [];
}
