// Rolling out a revision of one hub policy (docs/design/rollout.md#rolling-out-a-change): which cluster gets the
// new revision now, which keeps what it runs, which returns to its previous copy; and where the rollout stands.
// Everything is read from the works as they are (the record of which revision runs where) and the spoke
// controllers' verdicts in their status, so a restart or a failover continues a rollout where it was: nothing
// but the soak clocks (minSuccessTime) is remembered, and a lost one only makes a wave soak again. Pure.
import { selectorMatches } from '../k8s/labelselector.ts';
import { canonicalJson, specHash } from '../k8s/canonical.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { ROLLOUT_RESUME_ANNOTATION } from '../metadatakeys.ts';
import { clusterVerdict, type ClusterStatus } from '../status/policystatus.ts';
import type { ClusterRollout, RolloutStatus } from '../status/rolloutstatus.ts';
import { judgedFedBackCopy, readClusterFeedback, type ClusterFeedback } from '../works/feedback.ts';
import { workSizeBytes, type ManifestWork } from '../works/manifestwork.ts';
import { copyRevision, copyRevisionTag, copyVariants, previousCopy, revisionText, rolloutHold, sameSpec, workCopy, workPlacing, type HaltCause, type RolloutHold } from '../works/revision.ts';
import { resolveCount, type ProgressiveRollout, type RolloutStrategy } from '../params/strategy.ts';

export interface RolloutClusterInput {
  cluster: string;
  /** The ManagedCluster's labels (the canary selector reads them). */
  labels: Readonly<Record<string, string>>;
  /** The work placing the policy's current revision, as `All` writes it. */
  desired: ManifestWork;
  /** The work in place, as cached (its copy whole: core/works/cacheview.ts). */
  observed?: KubeObject;
}

export interface RolloutInput {
  strategy: RolloutStrategy;
  /** The hub policy's metadata.generation: the revision being rolled out. */
  revision: number;
  /**
   * With PolicyVariants, what the clusters' copies carry besides the policy's generation (rolloutVariants): a
   * variant edit, or a change of a cluster label a variant reads, is a rollout of its own at the same revision.
   * Undefined when no copy carries a variant.
   */
  variants?: string;
  /** The policy's resume annotation names this revision: failures no longer halt it. */
  resume: boolean;
  /**
   * The rollout of this revision completed before (the status the hub wrote on the policy says so): it is
   * proven, a later failure of a cluster no longer halts or rolls it back, and any cluster gets it at once.
   */
  completed?: boolean;
  /**
   * The rollout of this revision halted before, and why (the status the hub wrote on the policy says so): a halt
   * stands until a resume or a new edit, even when the cluster that failed succeeds later.
   */
  halted?: HaltCause;
  /**
   * The latest earlier revision whose rollout completed, as the status the hub wrote on the policy records it;
   * `none` when the record says none did. A cluster that joins gets a copy of that revision only (a copy of one
   * whose rollout never completed would reach it outside any wave). Undefined when nothing is recorded (the policy
   * rolled out All, or has no status yet): any earlier copy that ran elsewhere serves.
   */
  lastCompleted?: number | 'none';
  clusters: readonly RolloutClusterInput[];
  /**
   * Clusters the policy is placed on that are left out of `clusters` until a fresh spoke report vouches for a
   * first copy there (AwaitingSpokeReport). While any is, the rollout is not Complete: a completed rollout is
   * proven and would give them the revision at once, outside any wave, when their reports come.
   */
  awaiting?: readonly string[];
  /**
   * Clusters the policy is placed on that cannot be sent this revision's copy: it is too large, or its variants
   * fail to render (core/works/desiredworks.ts). They keep the copy they run, so the revision is not on every
   * cluster: while any is, the rollout is not Complete (a completed rollout is proven, and would say so).
   */
  unreached?: readonly UnreachedCluster[];
  /** Since when (ms since the epoch) the hub has seen each cluster succeed at this revision, as last returned. */
  soak: ReadonlyMap<string, number>;
  now: number;
  maxWorkBytes: number;
}

export interface UnreachedCluster {
  cluster: string;
  /** Why no copy of the revision can be sent there, as the policy's status names it (TooLarge, a variant's reason). */
  reason: string;
}

export interface RolloutPlan {
  /** What each cluster should have in place now: the new revision, an earlier one, or (absent) what it has. */
  write: Map<string, ManifestWork>;
  /** Clusters whose work stays as it is (not reached, held, or halted). */
  keep: Set<string>;
  /** Clusters with no work where none is placed yet (not reached, and no earlier revision to give them). */
  waiting: string[];
  status: RolloutStatus;
  clusters: Record<string, ClusterRollout>;
  /** The soak clocks to pass to the next plan. */
  soak: Map<string, number>;
  /**
   * Progressive: the clusters that get the revision at once whatever their wave: the spec they run stays (only
   * the copy's metadata or revision changes), or goes back to the one they ran before (a rollback).
   */
  ungated: Set<string>;
  /** When (ms since the epoch) the plan changes with no event: a soak or a progress deadline ends. */
  recheckAt?: number;
}

interface Cluster {
  input: RolloutClusterInput;
  /** The copy in place, and the one it replaced. */
  current?: KubeObject;
  previous?: KubeObject;
  /** A hold for this revision (a RolledBack one is void once resumed). */
  hold?: RolloutHold;
  /** Runs this revision (and is not held back from it). */
  atRevision: boolean;
  /** Gets this revision at once: its spec is the one the cluster runs, or the one it ran before (an edit back). */
  ungated: boolean;
}

export function planRollout(input: RolloutInput): RolloutPlan {
  if (input.strategy.type === 'All') return planAll(input);
  return new ProgressivePlanner(input, input.strategy).plan();
}

/** `All`: every cluster gets the revision at once; complete when every work places it. */
function planAll(input: RolloutInput): RolloutPlan {
  const write = new Map(input.clusters.map((c) => [c.cluster, c.desired]));
  const behind = input.clusters.filter((c) => !runsRevision(workCopy(c.observed), workCopy(c.desired), input.revision)).map((c) => c.cluster);
  const clusters = Object.fromEntries(input.clusters.map((c): [string, ClusterRollout] => [c.cluster, { phase: behind.includes(c.cluster) ? 'Progressing' : 'Succeeded' }]));
  const variants = input.variants === undefined ? {} : { variants: input.variants };
  const status: RolloutStatus =
    behind.length === 0
      ? { strategy: 'All', revision: input.revision, ...variants, state: 'Complete', message: `revision ${input.revision} placed on every cluster` }
      : { strategy: 'All', revision: input.revision, ...variants, state: 'Progressing', message: `revision ${input.revision} being placed on ${names(behind)}` };
  return { write, keep: new Set(), waiting: [], status, clusters, soak: new Map(), ungated: new Set() };
}

class ProgressivePlanner {
  private readonly R: number;
  private readonly write = new Map<string, ManifestWork>();
  private readonly keep = new Set<string>();
  private readonly waiting: string[] = [];
  private readonly phases: Record<string, ClusterRollout> = {};
  private readonly soak = new Map<string, number>();
  private recheckAt: number | undefined;

  constructor(
    private readonly input: RolloutInput,
    private readonly s: { type: 'Progressive' } & ProgressiveRollout,
  ) {
    this.R = input.revision;
  }

  plan(): RolloutPlan {
    const all = this.input.clusters.map((c) => this.read(c));
    const members = all.filter((c) => c.hold?.cause !== 'Joined');
    const joined = all.filter((c) => c.hold?.cause === 'Joined');
    const waves = this.waves(members);
    const maxFailures = resolveCount(this.s.maxFailures, members.length);

    for (const [i, wave] of waves.entries()) for (const c of wave) this.phases[c.input.cluster] = { ...this.judge(c), wave: i + 1 };
    const order = waves.flat();
    // In wave order: the halt names the first cluster that failed in the order the rollout reached them.
    const failed = order.filter((c) => this.phases[c.input.cluster]!.phase === 'Failed');
    const rolledBack = order.filter((c) => c.hold?.cause === 'RolledBack');
    const completed = this.input.completed === true;
    const before = this.input.halted;
    const halted = !this.input.resume && !completed && (failed.length > maxFailures || rolledBack.length > 0 || before !== undefined);
    // The wave under way: the first one not every cluster of which runs the revision and is done with it.
    const passed = (c: Cluster): boolean => c.atRevision && ['Succeeded', 'Failed'].includes(this.phases[c.input.cluster]!.phase);
    let current = completed ? waves.length : waves.findIndex((wave) => !wave.every(passed));
    if (current < 0) current = waves.length;
    const complete = !halted && current === waves.length;

    const halt = halted ? (haltOf(failed, rolledBack, this.phases) ?? before) : undefined;
    const lastFirst = [...order].reverse();
    for (const [i, wave] of waves.entries()) {
      for (const c of wave) {
        const name = c.input.cluster;
        if (c.ungated) {
          // No copy to roll back to: a relabel changes nothing a halt could undo, and an edit back is itself the
          // rollback (undoing it would bring back the revision rolled back from).
          this.place(c, workCopy(c.input.desired)!, {});
          this.phases[name] = { phase: 'Progressing', wave: i + 1, reason: 'Placing', message: `revision ${this.R} being placed at once: the spec it runs, or ran before` };
        } else if (c.atRevision && halt && this.s.onFailure === 'Rollback' && c.previous) this.rollBack(c, halt);
        // Same revision (metadata or targets changed with the placement): written, its record kept.
        else if (c.atRevision) this.place(c, workCopy(c.input.desired)!, { previous: c.previous });
        else if (c.hold) {
          this.keep.add(name);
          this.phases[name] = { phase: 'RolledBack', wave: i + 1, message: `returned to revision ${revisionText(c.current)} by the halt` };
        } else if (!halted && i <= current) {
          this.place(c, workCopy(c.input.desired)!, { previous: this.previousFor(c) });
          this.phases[name] = { phase: 'Progressing', wave: i + 1, reason: 'Placing', message: `revision ${this.R} being placed` };
        } else if (c.input.observed) {
          // Not reached: its work is not written, whatever changed.
          this.keep.add(name);
          this.phases[name] = { phase: 'Waiting', wave: i + 1, message: `runs revision ${revisionText(c.current)} until its wave` };
        } else if (!complete && this.join(c, lastFirst)) {
          // Held at the last completed revision.
        } else {
          this.waiting.push(name);
          this.phases[name] = { phase: 'Waiting', wave: i + 1, message: halted ? 'no copy: the rollout is halted' : 'no copy until its wave' };
        }
      }
    }
    for (const c of joined) {
      if (complete) {
        this.place(c, workCopy(c.input.desired)!, { previous: this.previousFor(c) });
        this.phases[c.input.cluster] = { phase: 'Progressing', message: `joined during the rollout: gets revision ${this.R} now that it completed` };
      } else {
        this.keep.add(c.input.cluster);
        this.phases[c.input.cluster] = { phase: 'Held', message: `joined during the rollout: runs revision ${revisionText(c.current)}, the last completed, until revision ${this.R} completes` };
      }
    }

    // Halted, the wave is the last one reached (a failed cluster has passed its wave, a rolled-back one has not:
    // the wave under way would move between the plan that rolls back and the next, a new RolloutHalted each time).
    const reached = waves.reduce((last, wave, i) => (wave.some((c) => c.atRevision || c.hold?.cause === 'RolledBack') ? i + 1 : last), 0);
    const status = this.status(waves, current, halt, joined.length > 0 && complete, reached);
    const ungated = new Set(all.filter((c) => c.ungated).map((c) => c.input.cluster));
    const plan: RolloutPlan = { write: this.write, keep: this.keep, waiting: this.waiting.sort(), status, clusters: this.phases, soak: this.soak, ungated };
    if (this.recheckAt !== undefined) plan.recheckAt = this.recheckAt;
    return plan;
  }

  private read(input: RolloutClusterInput): Cluster {
    const { observed, desired } = input;
    const current = workCopy(observed);
    const previous = previousCopy(observed);
    const found = rolloutHold(observed);
    const hold = found && found.revision === this.R && found.variants === this.input.variants && !(this.input.resume && found.cause === 'RolledBack') ? found : undefined;
    const desiredCopy = workCopy(desired);
    const atRevision = observed !== undefined && runsRevision(current, desiredCopy, this.R) && hold === undefined;
    const ungated = observed !== undefined && !atRevision && hold === undefined && (sameSpec(desiredCopy, current) || sameSpec(desiredCopy, previous));
    return { input, ...(current ? { current } : {}), ...(previous ? { previous } : {}), ...(hold ? { hold } : {}), atRevision, ungated };
  }

  /** Canary clusters first, then the rest, each in name order, cut into waves of maxConcurrency. */
  private waves(members: readonly Cluster[]): Cluster[][] {
    const byName = [...members].sort((a, b) => (a.input.cluster < b.input.cluster ? -1 : a.input.cluster > b.input.cluster ? 1 : 0));
    const canary = this.s.canary;
    const first = canary ? byName.filter((c) => selectorMatches(canary, c.input.labels)) : [];
    const rest = byName.filter((c) => !first.includes(c));
    const size = resolveCount(this.s.maxConcurrency, members.length, 1);
    return [...chunk(first, size), ...chunk(rest, size)];
  }

  /** A cluster running the revision, as its controller judges it; others are Waiting until placed. */
  private judge(c: Cluster): ClusterRollout {
    if (!c.atRevision) return { phase: 'Waiting', message: `runs revision ${revisionText(c.current)}` };
    const feedback = readClusterFeedback(c.input.observed!);
    const verdict = clusterVerdict({ state: 'work', feedback }, this.input.now).status;
    const { now } = this.input;
    // An apply error counts once the agent reports on this work generation: until then it is about the one before.
    if (feedback.applyError !== undefined && feedback.appliedObservedCurrent) return { phase: 'Failed', reason: 'ApplyFailed', message: feedback.applyError };
    // The copy the work places (atRevision: the desired spec), whose tag the verdict must carry to be about it.
    const judged = judgedRevision(feedback, this.R, copyRevisionTag(c.current));
    if (judged) {
      if (verdict.state === 'Overridden') return this.soaked(c, verdict);
      if (this.succeeded(feedback, verdict)) return this.soaked(c, verdict);
      if (verdict.state === 'Failed') return { phase: 'Failed', reason: verdict.reason, message: verdict.message };
    }
    const deadline = this.s.progressDeadlineMs === undefined || feedback.appliedAt === undefined ? undefined : feedback.appliedAt + this.s.progressDeadlineMs;
    const state = judged ? `its controller says ${verdict.reason}${verdict.message ? `: ${verdict.message}` : ''}` : `its controller has not reported on revision ${this.R} yet`;
    if (deadline !== undefined && now >= deadline) {
      return { phase: 'Failed', reason: 'ProgressDeadlineExceeded', message: `no ${this.s.successWhen} verdict on revision ${this.R} within ${seconds(this.s.progressDeadlineMs!)}: ${state}` };
    }
    if (deadline !== undefined) this.recheck(deadline);
    return { phase: 'Progressing', reason: judged ? verdict.reason : 'AwaitingVerdict', message: state };
  }

  private succeeded(feedback: ClusterFeedback, verdict: ClusterStatus): boolean {
    if (verdict.state === 'Enforced') return true;
    return this.s.successWhen === 'Accepted' && feedback.accepted?.status === 'True';
  }

  /** Success seen: Succeeded once it has lasted minSuccessTime (counted from when this hub first saw it). */
  private soaked(c: Cluster, verdict: ClusterStatus): ClusterRollout {
    const since = this.input.soak.get(c.input.cluster) ?? this.input.now;
    this.soak.set(c.input.cluster, since);
    const until = since + this.s.minSuccessTimeMs;
    if (this.input.now >= until) return { phase: 'Succeeded', reason: verdict.reason, message: verdict.message };
    this.recheck(until);
    return { phase: 'Progressing', reason: 'Soaking', message: `${verdict.reason}; successful for ${seconds(this.input.now - since)} of ${seconds(this.s.minSuccessTimeMs)}` };
  }

  private recheck(at: number): void {
    this.recheckAt = Math.min(this.recheckAt ?? at, at);
  }

  /** What a halt would return the cluster to once the revision replaces its copy: that copy, when the spec changes. */
  private previousFor(c: Cluster): KubeObject | undefined {
    return c.current && !sameSpec(c.current, workCopy(c.input.desired)) ? c.current : undefined;
  }

  /** The cluster's work placing `copy`, with the rollout's records (the previous copy only while the work fits). */
  private place(c: Cluster, copy: KubeObject, records: { previous?: KubeObject | undefined; hold?: RolloutHold }): void {
    const { desired } = c.input;
    const hold = records.hold ? { hold: records.hold } : {};
    let work = workPlacing(desired, copy, { ...(records.previous ? { previous: records.previous } : {}), ...hold });
    // Without the copy to roll back to, a halt holds this cluster at the new revision instead.
    if (records.previous && workSizeBytes(work) > this.input.maxWorkBytes) work = workPlacing(desired, copy, hold);
    this.write.set(c.input.cluster, work);
  }

  /** A hold for the rollout under way: its revision and, with variants, what the copies carry. */
  private holdOf(cause: RolloutHold['cause']): RolloutHold {
    return { revision: this.R, ...(this.input.variants === undefined ? {} : { variants: this.input.variants }), cause };
  }

  private rollBack(c: Cluster, halt: HaltCause): void {
    // Its own previous copy, as it ran it: its targets then are what it had (an edit may have changed them).
    this.place(c, c.previous!, { hold: { ...this.holdOf('RolledBack'), halt } });
    this.phases[c.input.cluster] = { ...this.phases[c.input.cluster], phase: 'RolledBack', message: `returned to revision ${revisionText(c.previous)} by the halt` };
  }

  /**
   * A cluster that joined during the rollout gets the last completed revision, held until this one completes: a
   * copy that ran elsewhere — what a cluster not reached yet runs (the last in order first), or what a reached one
   * ran before — whose Gateways are all ones the joiner has (copies of a policy differ only where its clusters
   * have different Gateways placed). None fits, or none exists (a new policy): false, and it waits for its wave.
   */
  private join(c: Cluster, lastFirst: readonly Cluster[]): boolean {
    const wanted = targetsOf(workCopy(c.input.desired));
    const { lastCompleted } = this.input;
    const completed = (copy: KubeObject): boolean => lastCompleted === undefined || copyRevision(copy) === lastCompleted;
    const candidates = [
      ...lastFirst.filter((o) => !o.atRevision && o.hold === undefined && o.current && copyRevision(o.current) !== this.R).map((o) => o.current!),
      ...lastFirst.filter((o) => o.atRevision && o.previous).map((o) => o.previous!),
    ].filter(completed);
    const base = candidates.find((copy) => targetsOf(copy).every((t) => wanted.includes(t)));
    if (!base) return false;
    this.place(c, base, { hold: this.holdOf('Joined') });
    this.phases[c.input.cluster] = { phase: 'Held', message: `joined during the rollout: gets revision ${revisionText(base)}, the last completed, until revision ${this.R} completes` };
    return true;
  }

  private status(waves: readonly Cluster[][], current: number, halt: HaltCause | undefined, joinersPending: boolean, reached: number): RolloutStatus {
    // The earlier revision that completed stays recorded (this one, once complete, is by its state).
    const last = this.input.lastCompleted === 'none' ? undefined : this.input.lastCompleted;
    const base = {
      strategy: 'Progressive' as const,
      revision: this.R,
      ...(this.input.variants === undefined ? {} : { variants: this.input.variants }),
      waves: waves.length,
      ...(last === undefined ? {} : { lastCompleted: last }),
    };
    if (halt) {
      const back = this.s.onFailure === 'Rollback';
      const message = `halted at revision ${this.R}: ${halt.cluster}: ${halt.reason}: ${halt.message}; ${
        back ? 'the clusters reached return to their previous revision' : 'the clusters reached keep it, the others their previous revision'
      } (edit the policy back to roll back, or annotate it ${ROLLOUT_RESUME_ANNOTATION}: "${this.R}" to resume)`;
      return { ...base, state: 'Halted', wave: reached || Math.min(current + 1, waves.length), halted: { ...halt, rolledBack: back }, message };
    }
    const awaiting = this.input.awaiting ?? [];
    const unreached = this.input.unreached ?? [];
    if (current === waves.length && !joinersPending && awaiting.length === 0 && unreached.length === 0) {
      return { ...base, state: 'Complete', wave: waves.length, message: `revision ${this.R} on every cluster` };
    }
    if (current === waves.length && !joinersPending) {
      const why = [
        ...(awaiting.length > 0 ? [`waiting for the spoke reports of ${names(awaiting)}`] : []),
        ...(unreached.length > 0 ? [`not sent to ${names(unreached.map((u) => `${u.cluster} (${u.reason})`))}, which keep the copy they run`] : []),
      ];
      return { ...base, state: 'Progressing', wave: waves.length, message: `revision ${this.R} on every cluster reached; ${why.join('; ')}` };
    }
    const wave = Math.min(current + 1, waves.length);
    const inWave = (waves[current] ?? []).map((c) => c.input.cluster);
    return { ...base, state: 'Progressing', wave, message: `wave ${wave} of ${waves.length}${inWave.length > 0 ? `: ${names(inWave)}` : ''}` };
  }
}

/**
 * What the status the hub wrote on the policy says of the rollout of `revision`, as the planner takes it: that it
 * completed, or halted and why, and the latest earlier revision whose rollout completed (RolloutInput.completed,
 * .halted, .lastCompleted).
 */
export function recordedRollout(reported: RolloutStatus | undefined, revision: number, variants?: string): Pick<RolloutInput, 'completed' | 'halted' | 'lastCompleted'> {
  if (reported?.strategy !== 'Progressive') return {};
  if (reported.revision === revision && reported.variants !== variants) {
    // The same revision with other variants: that rollout completed, the copies it placed are proven.
    const last = reported.state === 'Complete' ? reported.revision : reported.lastCompleted;
    return { lastCompleted: last ?? 'none' };
  }
  if (reported.revision !== revision) {
    // Another revision's record: the last completed is that one when it completed, else what it recorded.
    const last = reported.state === 'Complete' ? reported.revision : reported.lastCompleted;
    return { lastCompleted: last ?? 'none' };
  }
  const lastCompleted = reported.lastCompleted !== undefined && reported.lastCompleted !== revision ? reported.lastCompleted : 'none';
  if (reported.state === 'Complete') return { completed: true, lastCompleted };
  if (reported.state === 'Halted' && reported.halted) {
    const { cluster, reason, message } = reported.halted;
    return { halted: { cluster, reason, message }, lastCompleted };
  }
  return { lastCompleted };
}

/**
 * The cluster runs the revision being rolled out: its copy carries the revision and, when it or the desired copy
 * carries variants, the same variants and spec (a label a variant reads changes the spec alone).
 */
function runsRevision(current: KubeObject | undefined, desired: KubeObject | undefined, revision: number): boolean {
  if (current === undefined || copyRevision(current) !== revision) return false;
  const carried = copyVariants(current);
  const wanted = copyVariants(desired);
  if (carried === undefined && wanted === undefined) return true;
  return carried?.join() === wanted?.join() && sameSpec(current, desired);
}

/**
 * What the clusters' copies carry besides the revision, as one value (RolloutInput.variants): for each cluster
 * whose copy carries variants, the variants and the spec they render; undefined when none does.
 */
export function rolloutVariants(desired: ReadonlyMap<string, ManifestWork>): string | undefined {
  const parts: string[] = [];
  for (const [cluster, work] of [...desired].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const copy = workCopy(work);
    const carried = copyVariants(copy);
    if (carried) parts.push(`${cluster}=${carried.join()}#${specHash(copy?.spec ?? {})}`);
  }
  return parts.length === 0 ? undefined : specHash(parts).slice(0, 12);
}

/** A copy's targets, each as canonical JSON (a copy's targets are already rewritten for its cluster). */
function targetsOf(copy: KubeObject | undefined): string[] {
  const spec = copy?.spec as { targetRef?: unknown; targetRefs?: unknown } | undefined;
  const list: unknown[] = Array.isArray(spec?.targetRefs) ? (spec.targetRefs as unknown[]) : [];
  const refs = [...(spec?.targetRef === undefined ? [] : [spec.targetRef]), ...list];
  return refs.map((r) => canonicalJson(r));
}

/**
 * The controller's verdict is about `revision`: the copy it judged carries it, and it judged the copy's current
 * generation. `tag` is the revision tag of the copy the cluster is meant to run (core/revisionannotation.ts;
 * undefined for a copy no variant changes): a variant change keeps the revision, and the work agent acknowledges
 * the new copy (Applied current) before its status feedback catches up, so until the fed-back copy carries the
 * same tag the values still describe the copy before (its generation, its verdict).
 */
export function judgedRevision(feedback: ClusterFeedback, revision: number, tag: string | undefined): boolean {
  return feedback.revision === revision && feedback.revisionTag === tag && judgedFedBackCopy(feedback);
}

function haltOf(failed: readonly Cluster[], rolledBack: readonly Cluster[], phases: Record<string, ClusterRollout>): HaltCause | undefined {
  const first = failed[0];
  if (first) {
    const p = phases[first.input.cluster]!;
    return { cluster: first.input.cluster, reason: p.reason ?? 'Failed', message: p.message ?? '' };
  }
  return rolledBack.find((c) => c.hold?.halt)?.hold?.halt;
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}


function seconds(ms: number): string {
  return `${Math.round(ms / 1000)}s`;
}

function names(clusters: readonly string[]): string {
  return clusters.length <= 5 ? clusters.join(', ') : `${clusters.slice(0, 5).join(', ')} and ${clusters.length - 5} more`;
}
