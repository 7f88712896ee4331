// When this process first saw each copy of a policy reported on a spoke where the policy has no work
// (core/spoke/spoketruth.ts): a copy seen so for LINGER_GRACE_MS lingers; before, it is on its way out. Kept
// between reconciles like a rollout's soak clocks (rollouts.ts); a restart starts them again, which only delays
// saying `Lingering` by one grace.
//
// A deleted policy has no status to say its lingering copies on, so the hub Gateways it targeted say them
// (core/status/gatewaystatus.ts): which Gateways those were is taken from the policy as the cache last showed it
// (`deleted`), kept while its copies are seen, and for DELETED_KEPT_MS after it went. This process's memory, like
// the clocks: after a restart, a deleted policy's lingering copies are still counted in the metrics and listed by
// `policy-sync status --lingering`, but no Gateway names them.
import type { DeletedPolicyLingering } from '../core/status/gatewaystatus.ts';
import type { LingeringCopy } from '../core/spoke/spoketruth.ts';
import { clusterOfLingerKey, lingerKey, pastLingerGrace } from '../core/spoke/spoketruth.ts';

const NONE: ReadonlyMap<string, number> = new Map();
/** How long the Gateways of a deleted policy are kept with none of its copies seen: its copies' reports may lag. */
export const DELETED_KEPT_MS = 30 * 60_000;

/** A deleted policy as its Gateways name it, and the Gateways (`namespace/name`) it targeted. */
export type DeletedPolicy = Omit<DeletedPolicyLingering, 'clusters'> & { gateways: readonly string[] };

export class LingerClocks {
  private readonly byPolicy = new Map<string, ReadonlyMap<string, number>>();
  private readonly deletedPolicies = new Map<string, { policy: DeletedPolicy; at: number }>();

  /** The first-seen times of the policy's copies reported where it has no work, by lingerKey. */
  seenOf(policy: string): ReadonlyMap<string, number> {
    return this.byPolicy.get(policy) ?? NONE;
  }

  /** What the decision found: the copies still reported so keep their clocks, the others' go. */
  record(policy: string, copies: readonly LingeringCopy[], now = Date.now()): void {
    if (copies.length === 0) this.byPolicy.delete(policy);
    else this.byPolicy.set(policy, new Map(copies.map((c) => [lingerKey(c.cluster, c.kind, c.namespace, c.name), c.seenSince])));
    for (const [key, { at }] of this.deletedPolicies) if (!this.byPolicy.has(key) && now - at >= DELETED_KEPT_MS) this.deletedPolicies.delete(key);
  }

  /** The policy `key` is gone from the hub: the Gateways it targeted, as the cache last showed it. */
  deleted(key: string, policy: DeletedPolicy, now = Date.now()): void {
    this.deletedPolicies.set(key, { policy, at: now });
  }

  /** The Gateways a deleted policy targeted (none when it is not known as deleted). */
  gatewaysOfDeleted(key: string): readonly string[] {
    return this.deletedPolicies.get(key)?.policy.gateways ?? [];
  }

  /**
   * The deleted policies that targeted the Gateway `gateway` (`namespace/name`) and have copies lingering (seen so
   * for LINGER_GRACE_MS by `now`), with the clusters; `counted` says which policies a status counts (it exists
   * again: its own status says what lingers).
   */
  lingeringOnGateway(gateway: string, counted: (policy: string) => boolean, now: number): DeletedPolicyLingering[] {
    const out: DeletedPolicyLingering[] = [];
    for (const [key, { policy }] of this.deletedPolicies) {
      if (!policy.gateways.includes(gateway) || counted(key)) continue;
      const clusters = new Set<string>();
      for (const [copy, since] of this.seenOf(key)) if (pastLingerGrace(since, now)) clusters.add(clusterOfLingerKey(copy));
      if (clusters.size === 0) continue;
      const { gateways: _gateways, ...named } = policy;
      out.push({ ...named, clusters: [...clusters].sort() });
    }
    return out;
  }

  forget(policy: string): void {
    this.byPolicy.delete(policy);
    this.deletedPolicies.delete(policy);
  }

  /**
   * How many copies linger (seen so for LINGER_GRACE_MS by `now`) of the policies `counted` says no status counts:
   * a deleted policy's, which only these clocks still know of (its copies count in `policysync_copies` all the same).
   */
  lingeringUncounted(counted: (policy: string) => boolean, now: number): number {
    let n = 0;
    for (const [policy, seen] of this.byPolicy) {
      if (counted(policy)) continue;
      for (const since of seen.values()) if (pastLingerGrace(since, now)) n++;
    }
    return n;
  }

  /** Whether a copy of any policy is seen lingering (or being removed) on `cluster`: its agent's report must stay. */
  watches(cluster: string): boolean {
    for (const seen of this.byPolicy.values()) for (const key of seen.keys()) if (key.startsWith(`${cluster}|`)) return true;
    return false;
  }
}
