// The rollout of each hub policy's revision (docs/architecture.md#rolling-out-a-change), read from the caches: the
// strategy in force (the targeted classes' params, the policy's annotation), the clusters' labels for the
// canary group, and the plan from the core (core/rollout/plan.ts). The works say which revision runs where; the
// status this hub wrote on the policy says whether the rollout of its revision completed. What it remembers is
// only since when each cluster has succeeded (minSuccessTime), lost on a restart at the cost of one more soak,
// and, for the metrics, where each rollout stands.
import type { KubeObject } from '../core/k8s/objects.ts';
import { ROLLOUT_RESUME_ANNOTATION, ROLLOUT_STRATEGY_ANNOTATION, STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import { OBSERVED_GENERATION_TEXT } from '../core/params/classparams.ts';
import { readPolicyStatus } from '../core/status/annotation.ts';
import { planRollout, recordedRollout, type RolloutPlan } from '../core/rollout/plan.ts';
import type { ClusterPhase, RolloutState } from '../core/status/rolloutstatus.ts';
import { classesRolloutStrategy, policyRolloutStrategy, type RolloutStrategy } from '../core/rollout/strategy.ts';
import type { PolicyProblem } from '../core/status/policystatus.ts';
import type { ManifestWork } from '../core/works/manifestwork.ts';
import type { Informer } from '../kube/informer.ts';
import type { ClassConfigs } from './classconfigs.ts';
import type { UngatedKinds } from './ungatedkinds.ts';

export interface RolloutsDeps {
  configs: ClassConfigs;
  /** The ManagedClusters' cache: their labels place them in the canary group. */
  managedClusters: Pick<Informer, 'store'>;
  maxWorkBytes: number;
  /** The kinds a Progressive rollout cannot gate on, as the class reconciler found them. */
  ungatedKinds?: UngatedKinds;
}

export const ROLLOUT_STATES: readonly RolloutState[] = ['Progressing', 'Halted', 'Complete'];
export const CLUSTER_PHASES: readonly ClusterPhase[] = ['Succeeded', 'Progressing', 'Failed', 'Waiting', 'Held', 'RolledBack'];

export interface RolloutCounts {
  /** Policies rolling out Progressive, by the state of their rollout. */
  rollouts: Record<RolloutState, number>;
  /** Their clusters, by phase. */
  clusters: Record<ClusterPhase, number>;
}

export class Rollouts {
  private readonly soaks = new Map<string, { revision: number; soak: Map<string, number> }>();
  private readonly standing = new Map<string, { state: RolloutState; phases: ClusterPhase[] }>();

  constructor(private readonly d: RolloutsDeps) {}

  /**
   * The strategy for a policy whose Gateways are of `classes`; an invalid annotation is a problem of the
   * policy, and so is one selecting Progressive for a kind it cannot gate on (ungatedkinds.ts; the class
   * says so of its own strategy): the strategy is the one selected all the same, a person decides.
   */
  strategyFor(policy: KubeObject, classes: readonly string[]): { strategy: RolloutStrategy; problem?: PolicyProblem } {
    const byClass = new Map<string, RolloutStrategy>();
    for (const c of classes) {
      const config = this.d.configs.get(c);
      if (config) byClass.set(c, config.params.rolloutStrategy);
    }
    const { strategy, error } = policyRolloutStrategy(policy.metadata.annotations, classesRolloutStrategy(byClass));
    if (error !== undefined) return { strategy, problem: { reason: 'InvalidRolloutStrategy', message: error } };
    const selected = policy.metadata.annotations?.[ROLLOUT_STRATEGY_ANNOTATION] !== undefined;
    const ungated = selected && strategy.type === 'Progressive' ? this.d.ungatedKinds?.find(policy.apiVersion, policy.kind) : undefined;
    if (!ungated) return { strategy };
    const message =
      `${ROLLOUT_STRATEGY_ANNOTATION} selects Progressive, but no cluster can succeed for ${ungated.name}: its CRD has no ${OBSERVED_GENERATION_TEXT}, ` +
      'so no verdict of the controller is known to be about the revision a cluster runs, and each cluster fails at progressDeadline (roll it out All)';
    return { strategy, problem: { reason: 'NoObservedGeneration', message } };
  }

  /** The plan for the policy's desired works (its current revision) against its observed ones. */
  plan(key: string, policy: KubeObject, strategy: RolloutStrategy, desired: ReadonlyMap<string, ManifestWork>, observed: readonly KubeObject[], awaiting: readonly string[] = []): RolloutPlan | undefined {
    const revision = policy.metadata.generation;
    // All (the default) writes every work at once, as before: nothing to plan. A policy with no generation
    // (never from an apiserver) has no revision to roll out: placed as All.
    if (strategy.type === 'All' || typeof revision !== 'number') {
      this.forget(key);
      return undefined;
    }
    const byCluster = new Map(observed.map((w) => [w.metadata.namespace ?? '', w]));
    const remembered = this.soaks.get(key);
    // That this revision's rollout completed, or halted, is said on the policy, by the status this hub wrote there.
    const reported = readPolicyStatus(policy.metadata.annotations?.[STATUS_ANNOTATION])?.rollout;
    const plan = planRollout({
      strategy,
      revision,
      resume: policy.metadata.annotations?.[ROLLOUT_RESUME_ANNOTATION]?.trim() === String(revision),
      ...recordedRollout(reported, revision),
      clusters: [...desired].map(([cluster, work]) => {
        const observedWork = byCluster.get(cluster);
        return { cluster, labels: this.d.managedClusters.store.get(cluster)?.metadata.labels ?? {}, desired: work, ...(observedWork ? { observed: observedWork } : {}) };
      }),
      ...(awaiting.length > 0 ? { awaiting } : {}),
      soak: remembered?.revision === revision ? remembered.soak : new Map(),
      now: Date.now(),
      maxWorkBytes: this.d.maxWorkBytes,
    });
    this.soaks.set(key, { revision, soak: plan.soak });
    this.standing.set(key, { state: plan.status.state, phases: Object.values(plan.clusters).map((c) => c.phase) });
    return plan;
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

