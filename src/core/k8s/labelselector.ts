// metav1.LabelSelector: its schema as the apiserver's validation takes it, and whether a set of labels matches it.
// What selects ManagedClusters: cluster sets, a rollout's canary, variants. Pure.
import { z } from 'zod';

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** A metav1.LabelSelector as the apiserver's validation takes it (the operators it knows). */
export const labelSelectorSchema = z.strictObject({
  matchLabels: z.object({}).catchall(z.string()).optional(),
  matchExpressions: z
    .array(
      z.strictObject({
        key: z.string(),
        operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
        values: z.array(z.string()).optional(),
      }),
    )
    .optional(),
});

/** Whether the labels match a metav1.LabelSelector; an unknown operator matches nothing. */
export function selectorMatches(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!selector) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(labels[e.key]!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[e.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
