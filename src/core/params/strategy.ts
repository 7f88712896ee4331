// How a new revision of a hub policy reaches its clusters (docs/design/rollout.md#rolling-out-a-change): `All` at
// once, or `Progressive` in waves gated on each cluster's own controller. The class params hold the default
// (`rolloutStrategy`, shaped like OCM's ManifestWorkReplicaSet rolloutStrategy), a hub policy may override it
// by an annotation. Pure; errors name the field, since they are shown on the GatewayClass or the policy.
import { z } from 'zod';
import { labelSelectorSchema, type LabelSelector } from '../k8s/labelselector.ts';
import { parseDuration } from '../k8s/duration.ts';
import { parseJson } from '../k8s/parsejson.ts';
import { ROLLOUT_STRATEGY_ANNOTATION } from '../metadatakeys.ts';

/** What counts as a cluster's success: its controller says Enforced, or (where enforcement is not reported) Accepted. */
export type SuccessWhen = 'Enforced' | 'Accepted';
/** What a halt does to the clusters already reached: keep the new revision, or return them to their previous one. */
export type OnFailure = 'Hold' | 'Rollback';

/** A count of clusters, or a percentage of the policy's clusters (rounded down, at least 1 for concurrency). */
export type ClusterCount = { count: number } | { percent: number };

export interface ProgressiveRollout {
  /** Clusters (by ManagedCluster labels) reached first; undefined: no canary group. */
  canary?: LabelSelector;
  maxConcurrency: ClusterCount;
  minSuccessTimeMs: number;
  /** Undefined: no deadline (a silent cluster waits for ever, and the rollout with it). */
  progressDeadlineMs?: number;
  maxFailures: ClusterCount;
  successWhen: SuccessWhen;
  onFailure: OnFailure;
}

export type RolloutStrategy = { type: 'All' } | ({ type: 'Progressive' } & ProgressiveRollout);

export const ALL: RolloutStrategy = Object.freeze({ type: 'All' });

export const PROGRESSIVE_DEFAULTS: Readonly<ProgressiveRollout> = Object.freeze({
  maxConcurrency: { percent: 25 },
  minSuccessTimeMs: 0,
  progressDeadlineMs: 10 * 60_000,
  maxFailures: { count: 0 },
  successWhen: 'Enforced',
  onFailure: 'Hold',
});

// Strings with patterns, no unions or refinements: the PolicySyncParams CRD says the same at admission
// (test/unit/params-crd.test.ts holds the two to each other).
const COUNT_OR_PERCENT = /^([0-9]{1,6}|(100|[1-9]?[0-9])%)$/;
const DURATION = /^(0|([0-9]{1,9}(\.[0-9]{1,9})?(ms|s|m|h)){1,4})$/;
// No bare "0": a deadline of nothing fails every cluster the moment its copy is written (a zero written
// with a unit, "0s", is refused by rolloutStrategyErrors, as one below minSuccessTime is).
const DEADLINE = /^(None|([0-9]{1,9}(\.[0-9]{1,9})?(ms|s|m|h)){1,4})$/;
const countOrPercent = z.string().regex(COUNT_OR_PERCENT, 'must be a count (e.g. "2") or a percentage from 0% to 100% (e.g. "25%")');
const durationText = z.string().regex(DURATION, 'must be a duration such as 30s, 5m or 1h30m');
const progressiveSchema = z.strictObject({
  canary: labelSelectorSchema.optional(),
  maxConcurrency: countOrPercent.optional(),
  minSuccessTime: durationText.optional(),
  progressDeadline: z.string().regex(DEADLINE, 'must be a duration above 0 such as 10m, or None').optional(),
  maxFailures: countOrPercent.optional(),
  successWhen: z.enum(['Enforced', 'Accepted']).optional(),
  onFailure: z.enum(['Hold', 'Rollback']).optional(),
});

/** The `rolloutStrategy` document, in the params and (as JSON) in the policy annotation. */
export const rolloutStrategySchema = z.strictObject({
  type: z.enum(['All', 'Progressive']),
  progressive: progressiveSchema.optional(),
});

export type RolloutStrategyInput = z.infer<typeof rolloutStrategySchema>;

/** The strategy a validated document says; fields it leaves out take PROGRESSIVE_DEFAULTS. */
export function toRolloutStrategy(input: RolloutStrategyInput | undefined): RolloutStrategy {
  if (!input || input.type === 'All') return ALL;
  const p = input.progressive ?? {};
  const strategy: RolloutStrategy = {
    type: 'Progressive',
    maxConcurrency: p.maxConcurrency === undefined ? PROGRESSIVE_DEFAULTS.maxConcurrency : clusterCount(p.maxConcurrency),
    minSuccessTimeMs: p.minSuccessTime === undefined ? PROGRESSIVE_DEFAULTS.minSuccessTimeMs : parseDuration(p.minSuccessTime)!,
    maxFailures: p.maxFailures === undefined ? PROGRESSIVE_DEFAULTS.maxFailures : clusterCount(p.maxFailures),
    successWhen: p.successWhen ?? PROGRESSIVE_DEFAULTS.successWhen,
    onFailure: p.onFailure ?? PROGRESSIVE_DEFAULTS.onFailure,
  };
  // Left out, the deadline is the default, or minSuccessTime when that is longer: a deadline given is
  // refused below it (rolloutStrategyErrors), the default must not be shorter either.
  const deadline =
    p.progressDeadline === undefined ? Math.max(PROGRESSIVE_DEFAULTS.progressDeadlineMs!, strategy.minSuccessTimeMs) : p.progressDeadline === 'None' ? undefined : parseDuration(p.progressDeadline);
  if (deadline !== undefined) strategy.progressDeadlineMs = deadline;
  if (p.canary !== undefined) strategy.canary = p.canary;
  return strategy;
}

function clusterCount(value: string): ClusterCount {
  return value.endsWith('%') ? { percent: Number(value.slice(0, -1)) } : { count: Number(value) };
}

/**
 * What the schema cannot say: `progressive` belongs to type Progressive only; a `progressDeadline` of zero
 * (`0s`) fails every cluster as soon as its copy is written, and one shorter than `minSuccessTime` gives up
 * on a cluster before its success may count. Empty when none.
 */
export function rolloutStrategyErrors(input: RolloutStrategyInput, at: string): string[] {
  if (input.type === 'All') return input.progressive !== undefined ? [`${at}.progressive: is only read with type Progressive; remove it or set type: Progressive`] : [];
  const deadline = input.progressive?.progressDeadline;
  if (deadline === undefined || deadline === 'None') return [];
  const deadlineMs = parseDuration(deadline)!;
  const minSuccessTime = input.progressive?.minSuccessTime;
  const minSuccessMs = minSuccessTime === undefined ? PROGRESSIVE_DEFAULTS.minSuccessTimeMs : parseDuration(minSuccessTime)!;
  const field = `${at}.progressive.progressDeadline`;
  if (deadlineMs === 0) return [`${field}: must be above 0 (${deadline} fails every cluster as soon as its copy is written); None waits for ever`];
  if (deadlineMs < minSuccessMs) return [`${field}: ${deadline} is below minSuccessTime ${minSuccessTime ?? ''}: a cluster would fail before its success may count; set it to at least minSuccessTime, or None`];
  return [];
}

/** `count` clusters of `total`: a percentage rounded down, at least `min`. */
export function resolveCount(count: ClusterCount, total: number, min = 0): number {
  const n = 'count' in count ? count.count : Math.floor((total * count.percent) / 100);
  return Math.max(min, n);
}

export type PolicyStrategyResult = { strategy: RolloutStrategy; error?: string };

/**
 * The strategy for one hub policy: its annotation `policysync.kuadrant.io/rollout-strategy` when set and valid
 * (`All`, `Progressive` — the class's progressive settings, or the defaults when the class rolls out `All` — or
 * a whole rolloutStrategy document as JSON), else the class default. An invalid annotation is an error the
 * policy reports, and the class default stays in force.
 */
export function policyRolloutStrategy(annotations: Readonly<Record<string, string>> | undefined, classDefault: RolloutStrategy): PolicyStrategyResult {
  const text = annotations?.[ROLLOUT_STRATEGY_ANNOTATION];
  if (text === undefined) return { strategy: classDefault };
  const value = text.trim();
  if (value === 'All') return { strategy: ALL };
  if (value === 'Progressive') return { strategy: classDefault.type === 'Progressive' ? classDefault : toRolloutStrategy({ type: 'Progressive' }) };
  const parsed = parseJsonWithError(value);
  if (parsed.error !== undefined) return { strategy: classDefault, error: `${ROLLOUT_STRATEGY_ANNOTATION}: ${parsed.error}` };
  const result = rolloutStrategySchema.safeParse(parsed.value);
  const issues = result.success
    ? rolloutStrategyErrors(result.data, 'rolloutStrategy')
    : result.error.issues.map((i) => `${fieldPath(['rolloutStrategy', ...i.path])}: ${i.code === 'unrecognized_keys' ? `unrecognized key(s) ${i.keys.map((k) => `"${k}"`).join(', ')}` : i.message}`);
  if (!result.success || issues.length > 0) return { strategy: classDefault, error: `${ROLLOUT_STRATEGY_ANNOTATION}: ${issues.join('; ')} (the class's strategy stays in force)` };
  return { strategy: toRolloutStrategy(result.data) };
}

/** `a.b[0].c`, as the params' errors name a field. */
function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, p) => (typeof p === 'number' ? `${out}[${p}]` : out === '' ? String(p) : `${out}.${String(p)}`), '');
}

function parseJsonWithError(text: string): { value?: unknown; error?: string } {
  if (!text.startsWith('{')) return { error: `must be All, Progressive or a rolloutStrategy as JSON, got ${JSON.stringify(text.slice(0, 64))} (the class's strategy stays in force)` };
  const value = parseJson(text, z.unknown());
  return value === undefined ? { error: 'is not valid JSON (the class\'s strategy stays in force)' } : { value };
}

/** One line saying what a strategy does, for status and the CLI. */
export function describeStrategy(s: RolloutStrategy): string {
  if (s.type === 'All') return 'All';
  const count = (c: ClusterCount): string => ('count' in c ? String(c.count) : `${c.percent}%`);
  const parts = [
    `maxConcurrency ${count(s.maxConcurrency)}`,
    `minSuccessTime ${s.minSuccessTimeMs / 1000}s`,
    `progressDeadline ${s.progressDeadlineMs === undefined ? 'None' : `${s.progressDeadlineMs / 1000}s`}`,
    `maxFailures ${count(s.maxFailures)}`,
    `success ${s.successWhen}`,
    `on failure ${s.onFailure}`,
  ];
  return `Progressive (${parts.join(', ')}${s.canary ? ', canary first' : ''})`;
}

/**
 * The default of a policy targeting Gateways of several classes: the most careful one, a Progressive
 * strategy (the first in class-name order) over All.
 */
export function classesRolloutStrategy(byClass: ReadonlyMap<string, RolloutStrategy>): RolloutStrategy {
  const names = [...byClass.keys()].sort();
  const progressive = names.map((n) => byClass.get(n)!).find((s) => s.type === 'Progressive');
  return progressive ?? ALL;
}
