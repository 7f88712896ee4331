// When this process first saw each copy of a policy reported on a spoke where the policy has no work
// (core/spoke/spoketruth.ts): a copy seen so for LINGER_GRACE_MS lingers; before, it is on its way out. Kept
// between reconciles like a rollout's soak clocks (rollouts.ts); a restart starts them again, which only delays
// saying `Lingering` by one grace.
import type { LingeringCopy } from '../core/spoke/spoketruth.ts';
import { LINGER_GRACE_MS, lingerKey } from '../core/spoke/spoketruth.ts';

const NONE: ReadonlyMap<string, number> = new Map();

export class LingerClocks {
  private readonly byPolicy = new Map<string, ReadonlyMap<string, number>>();

  /** The first-seen times of the policy's copies reported where it has no work, by lingerKey. */
  seenOf(policy: string): ReadonlyMap<string, number> {
    return this.byPolicy.get(policy) ?? NONE;
  }

  /** What the decision found: the copies still reported so keep their clocks, the others' go. */
  record(policy: string, copies: readonly LingeringCopy[]): void {
    if (copies.length === 0) this.byPolicy.delete(policy);
    else this.byPolicy.set(policy, new Map(copies.map((c) => [lingerKey(c.cluster, c.kind, c.namespace, c.name), c.seenSince])));
  }

  forget(policy: string): void {
    this.byPolicy.delete(policy);
  }

  /**
   * How many copies linger (seen so for LINGER_GRACE_MS by `now`) of the policies `counted` says no status counts:
   * a deleted policy's, which only these clocks still know of (its copies count in `policysync_copies` all the same).
   */
  lingeringUncounted(counted: (policy: string) => boolean, now: number): number {
    let n = 0;
    for (const [policy, seen] of this.byPolicy) {
      if (counted(policy)) continue;
      for (const since of seen.values()) if (now - since >= LINGER_GRACE_MS) n++;
    }
    return n;
  }

  /** Whether a copy of any policy is seen lingering (or being removed) on `cluster`: its agent's report must stay. */
  watches(cluster: string): boolean {
    for (const seen of this.byPolicy.values()) for (const key of seen.keys()) if (key.startsWith(`${cluster}|`)) return true;
    return false;
  }
}
