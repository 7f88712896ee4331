// Where a rollout stands, as the hub reports it in the policy's status (docs/design/rollout.md#rolling-out-a-change):
// the shape core/rollout/plan.ts fills and the status annotation carries. A description of the status, not of the
// planner, so the status modules read it without importing the planner (which reads their verdicts).
import type { HaltCause } from '../works/revision.ts';

/** Where one cluster stands in the rollout. */
export type ClusterPhase =
  /** Runs the revision, and its controller judged it a success (for minSuccessTime). */
  | 'Succeeded'
  /** Runs the revision; its controller has not judged it a success yet. */
  | 'Progressing'
  /** Its controller rejected the revision, or did not judge it a success within progressDeadline. */
  | 'Failed'
  /** Not reached yet: runs its previous revision, or nothing. */
  | 'Waiting'
  /** Joined during the rollout: runs the last revision that completed until this one completes. */
  | 'Held'
  /** Reached, and returned to its previous revision by the halt (onFailure: Rollback). */
  | 'RolledBack';

export interface ClusterRollout {
  phase: ClusterPhase;
  /** 1-based; absent for a held cluster. */
  wave?: number;
  reason?: string;
  message?: string;
}

export type RolloutState = 'Progressing' | 'Halted' | 'Complete';

export interface RolloutStatus {
  strategy: 'All' | 'Progressive';
  /** The revision being rolled out (the hub policy's generation). */
  revision: number;
  /** With PolicyVariants, what the copies carry besides the revision (core/rollout/plan.ts rolloutVariants). */
  variants?: string;
  state: RolloutState;
  /** Progressive: the wave under way (1-based) and how many there are. */
  wave?: number;
  waves?: number;
  halted?: HaltCause & { rolledBack: boolean };
  /** Progressive: the latest earlier revision whose rollout completed (as recorded); absent when none did. */
  lastCompleted?: number;
  message: string;
}
