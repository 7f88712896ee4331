// What the hub remembers of each hub policy's Progressive rollout between passes (docs/design/rollout.md#rolling-out-a-change):
// since when each cluster has succeeded at the revision (minSuccessTime), lost on a restart at the cost of one more
// soak, and, for the metrics, where each rollout stands. The plan itself is the decision pipeline's
// (core/pipeline/policypipeline.ts); the works say which revision runs where, and the status this hub wrote on the
// policy whether the rollout of its revision completed.
import type { RolloutPlan } from '../core/rollout/plan.ts';
import type { ClusterPhase, RolloutState } from '../core/status/rolloutstatus.ts';

export const ROLLOUT_STATES: readonly RolloutState[] = ['Progressing', 'Halted', 'Complete'];
export const CLUSTER_PHASES: readonly ClusterPhase[] = ['Succeeded', 'Progressing', 'Failed', 'Waiting', 'Held', 'RolledBack'];

export interface RolloutCounts {
  /** Policies rolling out Progressive, by the state of their rollout. */
  rollouts: Record<RolloutState, number>;
  /** Their clusters, by phase. */
  clusters: Record<ClusterPhase, number>;
}

export class Rollouts {
  private readonly soaks = new Map<string, { revision: number; soak: ReadonlyMap<string, number> }>();
  private readonly standing = new Map<string, { state: RolloutState; phases: ClusterPhase[] }>();

  /** The soak clocks the last plan of this revision of the policy returned; none for another revision. */
  soakOf(key: string, revision: number | undefined): ReadonlyMap<string, number> | undefined {
    const remembered = this.soaks.get(key);
    return remembered !== undefined && remembered.revision === revision ? remembered.soak : undefined;
  }

  /** The policy's plan for `revision`, or none (All, or no revision to roll out): what to remember of it. */
  record(key: string, revision: number | undefined, plan: RolloutPlan | undefined): void {
    if (!plan || revision === undefined) {
      this.forget(key);
      return;
    }
    this.soaks.set(key, { revision, soak: plan.soak });
    this.standing.set(key, { state: plan.status.state, phases: Object.values(plan.clusters).map((c) => c.phase) });
  }

  /** The policy's Progressive rollout is under way (its verdicts move it on). */
  progressing(key: string): boolean {
    return this.standing.get(key)?.state === 'Progressing';
  }

  forget(key: string): void {
    this.soaks.delete(key);
    this.standing.delete(key);
  }

  /** For the policysync_rollouts and policysync_rollout_clusters gauges. */
  counts(): RolloutCounts {
    const rollouts = Object.fromEntries(ROLLOUT_STATES.map((s) => [s, 0])) as Record<RolloutState, number>;
    const clusters = Object.fromEntries(CLUSTER_PHASES.map((p) => [p, 0])) as Record<ClusterPhase, number>;
    for (const { state, phases } of this.standing.values()) {
      rollouts[state] += 1;
      for (const p of phases) clusters[p] += 1;
    }
    return { rollouts, clusters };
  }
}
