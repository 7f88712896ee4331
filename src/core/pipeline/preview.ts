// What the hub would do with a hub policy as it would be after an edit (`policy-sync diff`,
// docs/design/rollout.md#rolling-out-a-change): the hub controller's own decisions for it, from the one decision
// pipeline (core/pipeline/policypipeline.ts) over a snapshot of the hub, told per cluster as an action — so a
// person sees before the edit which clusters it reaches, in which waves, and what each copy becomes. What is
// here is the preview's own: naming each cluster's action and why, and the order it is told in. Pure; the CLI
// reads the snapshot.
import { groupResourceKey, type GroupVersionResource } from '../k8s/gvr.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { decidePolicy } from './policypipeline.ts';
import { SnapshotView, type HubSnapshot } from './snapshotview.ts';
import { STATUS_ANNOTATION } from '../metadatakeys.ts';
import { LINGER_GRACE_MS, lingerKey } from '../spoke/spoketruth.ts';
import { readPolicyStatus } from '../status/annotation.ts';
import { LINGERING, type PolicyProblem } from '../status/policystatus.ts';
import { LANE_CONFLICT_REASON } from '../status/statusinput.ts';
import type { TargetReport } from '../works/desiredworks.ts';
import { readSpecHash } from '../works/manifestwork.ts';
import type { RemovalDecision, RemovalReason } from '../works/removal.ts';
import { planRollout } from '../rollout/plan.ts';
import type { ClusterPhase, RolloutStatus } from '../status/rolloutstatus.ts';
import { copyRevision, revisionText, rolloutHold, sameSpec, workCopy } from '../works/revision.ts';
import type { RolloutStrategy } from '../params/strategy.ts';

export type { HubSnapshot } from './snapshotview.ts';

export interface PreviewInput {
  gvr: GroupVersionResource;
  /**
   * The policy as it would be; its metadata.generation is the revision the hub would roll out, and the hub's
   * status annotation on it says where the rollout of that revision stands (a completed or halted one stays so).
   */
  policy: KubeObject;
  /** The hub, as lists read once; its `policies` hold the previewed policy in place of the hub's version of it. */
  hub: HubSnapshot;
  /** The policy's ManifestWorks as they are (identity validated). */
  observed: readonly KubeObject[];
  /** The hub controller's label value (controllerLabelValue). */
  controller: string;
  rawFeedback: boolean;
  maxWorkBytes: number;
  now: number;
}

/** What the hub would do to one cluster's work now. */
export type ClusterAction =
  /** Gets the new revision now: its wave is under way (or the strategy is All). */
  | 'write'
  /** Its work already is what the hub would write: nothing is written. */
  | 'unchanged'
  /** Ungated: the spec it runs stays, only the copy's metadata or revision changes. */
  | 'relabel'
  /** Ungated: back to the spec it ran before (rolling back is never gated). */
  | 'rollback'
  /** Written with an earlier revision: it joined during the rollout, or the halt rolled it back. */
  | 'hold'
  /** Its work stays exactly as it is: its wave has not come, the rollout is halted, or it is held. */
  | 'keep'
  /** No copy, and none until its wave. */
  | 'wait'
  /** No longer wanted there, and the deletion rule knows it: its work is deleted (the reason in the message). */
  | 'remove'
  /**
   * A copy OCM's work agent left running there where no work of the policy places it (Lingering), and the deletion
   * rule knows it is unwanted: it is handed back to the agent, which deletes it.
   */
  | 'mend'
  /**
   * Not placed there: local policies cover the copy, its spoke name is taken, another hub Gateway keeps the
   * downstream Gateway (its lane), the spoke agent has not vouched for the name yet, the work is too large, or
   * the PolicyVariants selecting the cluster cannot render its copy (InvalidVariant, VariantValueMissing,
   * VariantConflict).
   */
  | 'skip';

export interface ClusterPreview {
  cluster: string;
  action: ClusterAction;
  /** Progressive: the cluster's wave (1-based); absent for All and for clusters outside the waves. */
  wave?: number;
  /** Progressive: where the cluster would stand in the rollout. */
  phase?: ClusterPhase;
  /** Why, in a few words. */
  message: string;
  /** The copy its work places now; absent when it has none. */
  current?: KubeObject;
  /** The copy of the new revision rendered for the cluster; absent where none is placed (skip, remove). */
  desired?: KubeObject;
  /** The copy written now when it is not `desired` (hold: an earlier revision). */
  written?: KubeObject;
  /**
   * The copy it runs stays exactly as it is (skipped: its work would be too large, its variants do not render;
   * kept: the deletion rule does not know it unwanted): nothing is written or withdrawn there.
   */
  stays?: boolean;
}

export interface RolloutPreview {
  /** The revision the hub would roll out (the policy's generation). */
  revision: number;
  strategy: RolloutStrategy;
  /** The policy's rollout-strategy annotation is invalid: the class default stays in force. */
  strategyError?: string;
  /** The GatewayClasses of the Gateways the policy targets. */
  classes: string[];
  /** Where the rollout would stand once the hub has written what it writes now. */
  rollout: RolloutStatus;
  /** Progressive: the clusters of each wave, in order. */
  waves: string[][];
  /** In the order the change reaches them: by wave, then name; clusters it does not reach last. */
  clusters: ClusterPreview[];
  /** One report per target entry of the policy, in spec order. */
  targets: TargetReport[];
  /** What keeps the policy, or some targets or clusters, from syncing (as the status would say). */
  problems: PolicyProblem[];
}

/** What the hub would do for `input.policy`: which clusters it reaches, in which waves, with which copies. */
export function previewRollout(input: PreviewInput): RolloutPreview {
  const { policy } = input;
  const revision = typeof policy.metadata.generation === 'number' ? policy.metadata.generation : 1;
  // The hub's own decisions (core/pipeline): the preview adds only what it shows.
  const decision = decidePolicy(new SnapshotView(input.hub), {
    ...input,
    policy: { ...policy, metadata: { ...policy.metadata, generation: revision } },
    lingerSeen: lingerSeenInStatus(input),
  });
  const { desired, revisionWorks, strategy, problems } = decision;
  for (const l of decision.lanes) problems.push({ reason: LANE_CONFLICT_REASON, message: l.message });
  const strategyError = problems.find((p) => p.reason === 'InvalidRolloutStrategy')?.message;

  const skipped = new Map<string, string>();
  const stays = new Set<string>([...desired.tooLarge, ...decision.variantFailures.map((f) => f.cluster)]);
  for (const t of desired.tooLarge) skipped.set(t, `the ManifestWork would exceed ${input.maxWorkBytes} bytes: not written (TooLarge); the last one written stays`);
  // The variants cannot render its copy (a value missing, a conflict, a copy the schema refuses): no new write.
  const placedNow = new Set(input.observed.map((w) => w.metadata.namespace ?? ''));
  for (const f of decision.variantFailures) {
    skipped.set(f.cluster, `${f.reason}: ${f.message}${placedNow.has(f.cluster) ? ' (nothing is written: the copy it runs stays)' : ' (no copy is placed until it renders)'}`);
  }
  for (const lane of decision.laneRefused) skipped.set(lane.cluster, `${LANE_CONFLICT_REASON}: ${lane.message}`);
  for (const loss of decision.losses) skipped.set(loss.cluster, `Conflicted: ${loss.message}`);
  // What the deletion rule says of each work no longer written (removals.ts), by cluster.
  const removalOn = new Map(decision.removals.works.map((r) => [r.cluster, r.decision]));
  for (const o of decision.local.overridden) {
    const removal = removalOn.get(o.cluster);
    const withdrawn = removal === undefined ? '' : removal.action === 'delete' ? ': its copy is withdrawn' : `: its copy is kept (${keptText(removal)})`;
    skipped.set(o.cluster, `Overridden: ${o.message}${withdrawn}`);
  }
  for (const a of decision.awaiting) skipped.set(a.cluster, `AwaitingSpokeReport: ${a.message}`);

  const observedBy = new Map(input.observed.map((w) => [w.metadata.namespace ?? '', w]));
  // All writes every work of the revision at once; the planner says where that leaves the rollout.
  const plan =
    decision.rollout ??
    planRollout({
      strategy,
      revision,
      resume: false,
      clusters: [...revisionWorks].map(([cluster, work]) => {
        const observed = observedBy.get(cluster);
        return { cluster, labels: {}, desired: work, ...(observed ? { observed } : {}) };
      }),
      soak: new Map(),
      now: input.now,
      maxWorkBytes: input.maxWorkBytes,
    });

  const progressive = strategy.type === 'Progressive';
  const clusters: ClusterPreview[] = [];
  for (const [cluster, work] of revisionWorks) {
    const observed = observedBy.get(cluster);
    const current = workCopy(observed);
    const desiredCopy = workCopy(work)!;
    const phase = plan.clusters[cluster];
    const entry: ClusterPreview = { cluster, action: 'write', message: '', desired: desiredCopy, ...(current ? { current } : {}) };
    if (progressive && phase) {
      if (phase.wave !== undefined) entry.wave = phase.wave;
      entry.phase = phase.phase;
    }
    const written = plan.write.get(cluster);
    const ungated = plan.ungated.has(cluster);
    if (written) {
      const copy = workCopy(written)!;
      const placesOther = copyRevision(copy) !== revision || rolloutHold(written) !== undefined;
      if (observed && readSpecHash(observed) === readSpecHash(written)) {
        entry.action = 'unchanged';
        entry.message = placesOther ? `runs revision ${revisionText(copy)}: its work stays as it is` : `runs revision ${revision} already: nothing to write`;
      } else if (placesOther) {
        entry.action = 'hold';
        entry.written = copy;
        entry.message = phase?.message ?? `gets revision ${revisionText(copy)} for now`;
      } else if (progressive && ungated) {
        entry.action = sameSpec(desiredCopy, current) ? 'relabel' : 'rollback';
        entry.message =
          entry.action === 'relabel'
            ? `the spec it runs stays: only the copy's metadata or revision changes, written at once whatever the wave`
            : `back to the spec it ran before: rolling back is written at once whatever the wave`;
      } else {
        entry.action = 'write';
        entry.message = progressive ? `gets revision ${revision} now${entry.wave === undefined ? '' : ` (wave ${entry.wave} is under way)`}` : `gets revision ${revision} now`;
      }
    } else if (plan.keep.has(cluster)) {
      entry.action = 'keep';
      entry.message = phase?.message ?? 'its work stays as it is';
    } else {
      entry.action = 'wait';
      entry.message = phase?.message ?? 'no copy until its wave';
    }
    clusters.push(entry);
  }
  const order = (c: ClusterPreview): number => c.wave ?? Number.MAX_SAFE_INTEGER;
  clusters.sort((a, b) => order(a) - order(b) || compare(a.cluster, b.cluster));

  const outside: ClusterPreview[] = [];
  for (const [cluster, message] of skipped) {
    const current = workCopy(observedBy.get(cluster));
    outside.push({ cluster, action: 'skip', message, ...(current ? { current } : {}), ...(stays.has(cluster) ? { stays: true } : {}) });
  }
  for (const [cluster, work] of observedBy) {
    if (revisionWorks.has(cluster) || skipped.has(cluster)) continue;
    const current = workCopy(work);
    const removal = removalOn.get(cluster);
    const entry: ClusterPreview =
      removal?.action === 'delete'
        ? { cluster, action: 'remove', message: `${removal.reason}: ${REMOVAL_TEXT[removal.reason]}: its ManifestWork is deleted` }
        : { cluster, action: 'keep', message: `no longer targeted there, but its work stays as it is: ${removal ? keptText(removal) : 'the hub keeps it'}`, stays: true };
    outside.push({ ...entry, ...(current ? { current } : {}) });
  }
  for (const { copy, decision: d } of decision.removals.lingering) {
    if (d.action !== 'delete' || observedBy.has(copy.cluster)) continue;
    outside.push({ cluster: copy.cluster, action: 'mend', message: `Lingering: its copy ${copy.namespace}/${copy.name} still runs there, though no ManifestWork places it; the deletion rule knows it is unwanted (${d.reason}): handed back to OCM's work agent, which deletes it` });
  }
  outside.sort((a, b) => compare(a.cluster, b.cluster));

  const waves: string[][] = [];
  if (progressive) {
    for (const c of clusters) if (c.wave !== undefined) (waves[c.wave - 1] ??= []).push(c.cluster);
  }
  return {
    revision,
    strategy,
    ...(strategyError === undefined ? {} : { strategyError }),
    classes: decision.targetClasses,
    rollout: plan.status,
    waves: waves.map((w) => w ?? []),
    clusters: [...clusters, ...outside],
    targets: desired.targets,
    problems,
  };
}



/**
 * The hub's linger clocks as far as the policy's status tells them: a copy the status says lingers has been seen so
 * for the grace at least (a snapshot holds no clocks; a copy only being removed starts its grace now, as on a hub
 * that just started). So `diff` shows the mending the hub does next, and none before the hub would.
 */
function lingerSeenInStatus(input: PreviewInput): Map<string, number> {
  const seen = new Map<string, number>();
  const status = readPolicyStatus(input.policy.metadata.annotations?.[STATUS_ANNOTATION]);
  const kind = groupResourceKey(input.gvr);
  for (const [cluster, c] of Object.entries(status?.clusters ?? {})) {
    if (c.reason !== LINGERING) continue;
    for (const copy of c.lingering ?? []) {
      const slash = copy.indexOf('/');
      seen.set(lingerKey(cluster, kind, copy.slice(0, slash), copy.slice(slash + 1)), input.now - LINGER_GRACE_MS);
    }
  }
  return seen;
}

/** Why the rule lets a work go, in a few words. */
const REMOVAL_TEXT: Record<RemovalReason, string> = {
  NoLongerTargeted: 'the policy no longer needs a copy there, and OCM vouches for the cluster and its Placements',
  LocallyOverridden: 'local policies cover the copy',
  PolicyDeleted: 'the policy is deleted',
  KindRemoved: 'the kind is no longer synced',
};

/** Why the rule keeps a work (or asks for live reads first), in the rule's words. */
function keptText(d: RemovalDecision): string {
  return d.action === 'keep' ? `${d.reason}: ${d.message}` : 'confirmed by live reads first';
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
