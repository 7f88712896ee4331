// What each PolicyVariant came to in its policy's last reconcile (core/pipeline/policypipeline.ts VariantOutcome),
// held for the one writer of the variants' status (variantstatusreconciler.ts): the policy reconciler decides,
// the variant status reconciler tells. In memory: a restart reconciles every policy again before it says more.
import { canonicalJson } from '../core/k8s/canonical.ts';
import { namespacedKey } from '../core/k8s/objects.ts';
import type { VariantOutcome } from '../core/pipeline/policypipeline.ts';

export class VariantOutcomes {
  private readonly byVariant = new Map<string, { policy: string; outcome: VariantOutcome; text: string }>();
  private readonly byPolicy = new Map<string, Set<string>>();

  /** What the policy's reconcile found of its variants; returns the variants (`namespace/name`) whose outcome changed. */
  record(policy: string, outcomes: readonly VariantOutcome[]): string[] {
    const changed: string[] = [];
    const now = new Set<string>();
    for (const outcome of outcomes) {
      const key = namespacedKey(outcome.namespace, outcome.name);
      now.add(key);
      const text = canonicalJson(outcome);
      const before = this.byVariant.get(key);
      if (before?.text !== text || before.policy !== policy) changed.push(key);
      this.byVariant.set(key, { policy, outcome, text });
    }
    changed.push(...this.drop(policy, now));
    if (now.size > 0) this.byPolicy.set(policy, now);
    else this.byPolicy.delete(policy);
    return changed;
  }

  /** The policy is gone (or no longer synced): its variants' outcomes go too; returns those variants. */
  forget(policy: string): string[] {
    const dropped = this.drop(policy, new Set());
    this.byPolicy.delete(policy);
    return dropped;
  }

  get(variant: string): VariantOutcome | undefined {
    return this.byVariant.get(variant)?.outcome;
  }

  private drop(policy: string, keep: ReadonlySet<string>): string[] {
    const dropped: string[] = [];
    for (const key of this.byPolicy.get(policy) ?? []) {
      if (keep.has(key) || this.byVariant.get(key)?.policy !== policy) continue;
      this.byVariant.delete(key);
      dropped.push(key);
    }
    return dropped;
  }
}
