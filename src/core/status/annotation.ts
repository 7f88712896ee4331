// The `policysync.kuadrant.io/status` annotation (docs/design/status.md#status-on-the-hub): a PolicyStatus as bounded, canonical JSON,
// and read back. The annotation as a whole is cut here when it grows past its budget; each message is cut where
// it is made (cutMessage, core/k8s/sanitize.ts).
import { z } from 'zod';
import { canonicalJson } from '../k8s/canonical.ts';
import { parseJson } from '../k8s/parsejson.ts';
import { cutMessage } from '../k8s/sanitize.ts';
import type { ClusterStatus, PolicyProblem, PolicyStatus, StatusSummary } from './policystatus.ts';

/** Past this many bytes the annotation leaves out the statusFeedback values, then the per-cluster part. */
export const MAX_STATUS_ANNOTATION_BYTES = 64 * 1024;

/** The reason of the problem that says how many problems a cut annotation leaves out. */
export const PROBLEMS_TRUNCATED_REASON = 'ProblemsTruncated';

/**
 * The annotation value: canonical JSON, so equal statuses give equal text and no write. Past
 * MAX_STATUS_ANNOTATION_BYTES, each step until it fits: the statusFeedback values are left out; then
 * the entries of clusters whose copy is applied (the CLI reads those back from the works), but for as many
 * as fit of those failed, in doubt or pending, the failing first (byClusterRank), keeping every one no work
 * shows (withdrawn as overridden, lost to a conflict, not applied); then of those, as many as fit, the
 * failing first; then the
 * per-cluster part altogether; then the problems past those that fit (one per cluster can be many: a
 * refused spoke report each), taken in turn by reason so that every reason stays named, and a last
 * problem (PROBLEMS_TRUNCATED_REASON) says how many of which reason were left out. Every step marks
 * `summary.truncated: true`; the summary's counts per state are always the whole fleet's.
 */
export function policyStatusAnnotation(status: PolicyStatus): string {
  // Past this many clusters no text with every cluster fits (a reconcile of a policy on 3,500 clusters spent 10 % of
  // its time making a 700 KB text to learn that): the first two steps are not tried.
  const tooMany = status.clusters !== undefined && Object.keys(status.clusters).length > MAX_STATUS_ANNOTATION_BYTES / MIN_CLUSTER_ENTRY_BYTES;
  if (!tooMany) {
    const full = canonicalJson(status);
    if (fits(full)) return full;
  }
  const summary: StatusSummary = { ...status.summary, truncated: true };
  const { clusters, ...rest } = status;
  if (clusters !== undefined) {
    const compact = withoutStatusFeedback(clusters);
    if (!tooMany && Object.values(clusters).some((c) => c.statusFeedback !== undefined)) {
      const withoutValues = canonicalJson({ ...rest, summary, clusters: compact });
      if (fits(withoutValues)) return withoutValues;
    }
    const ranked = Object.entries(compact).sort(byClusterRank);
    const unapplied = ranked.filter(([, c]) => !c.applied);
    // Of the applied copies, only those in trouble or waiting: an enforced or overridden cluster is what the
    // summary counts, and a healthy fleet's annotation stays a summary (a write of it stays small).
    const appliedNotSettled = ranked.filter(([, c]) => c.applied && c.state !== 'Enforced' && c.state !== 'Overridden');
    const withClusters = (entries: readonly [string, ClusterStatus][]): string => canonicalJson({ ...rest, summary, clusters: Object.fromEntries(entries) });
    // Sizes counted, not texts made: canonical JSON is the base's `"clusters":{}` with each entry's
    // `"name":value` inside, comma-separated (at a thousand clusters, a text per try cost seconds a reconcile).
    const base = Buffer.byteLength(withClusters([]), 'utf8');
    const entryBytes = (entries: readonly [string, ClusterStatus][]): number[] => entries.map(([name, c]) => Buffer.byteLength(`${JSON.stringify(name)}:${canonicalJson(c)}`, 'utf8') + 1);
    // The largest n in [low, high] whose text — `before` entries already counted in `start`, then the first n of
    // `bytes` — fits; undefined when even n = low does not.
    const fitting = (bytes: readonly number[], low: number, high: number, start: number, before: number): number | undefined => {
      let size = start;
      let n: number | undefined;
      for (let i = 0; i <= high; i += 1) {
        if (i >= low && size - (before + i > 0 ? 1 : 0) <= MAX_STATUS_ANNOTATION_BYTES) n = i;
        else if (i >= low) break;
        size += bytes[i] ?? 0;
      }
      return n;
    };
    const unappliedBytes = entryBytes(unapplied);
    // Every cluster no work shows, and as many of the applied ones not settled as fit, the failing first.
    const allUnapplied = base + unappliedBytes.reduce((a, b) => a + b, 0);
    const everyUnapplied = fitting(entryBytes(appliedNotSettled), unapplied.length > 0 ? 0 : 1, appliedNotSettled.length, allUnapplied, unapplied.length);
    if (everyUnapplied !== undefined) return withClusters([...unapplied, ...appliedNotSettled.slice(0, everyUnapplied)]);
    // Not even those: as many of them as fit, the failing first.
    const someUnapplied = fitting(unappliedBytes, 1, unapplied.length - 1, base, 0);
    if (someUnapplied !== undefined) return withClusters(unapplied.slice(0, someUnapplied));
  }
  const withoutClusters = canonicalJson({ ...rest, summary });
  if (fits(withoutClusters) || rest.problems === undefined) return withoutClusters;
  return withSomeProblems({ ...rest, summary }, rest.problems);
}

/**
 * The status with as many of `problems` as fit (a prefix of them taken by reason in turn, written back in their
 * order) and a last one saying what was left out; the summary alone when not even one fits.
 */
function withSomeProblems(status: PolicyStatus, problems: readonly PolicyProblem[]): string {
  const byReason = new Map<string, PolicyProblem[]>();
  for (const p of problems) {
    const list = byReason.get(p.reason);
    if (list) list.push(p);
    else byReason.set(p.reason, [p]);
  }
  const inTurn: PolicyProblem[] = [];
  for (let i = 0; inTurn.length < problems.length; i += 1) for (const list of byReason.values()) if (list[i]) inTurn.push(list[i]!);
  const text = (count: number): string => {
    const kept = new Set(inTurn.slice(0, count));
    const left = new Map<string, number>();
    for (const p of inTurn.slice(count)) left.set(p.reason, (left.get(p.reason) ?? 0) + 1);
    const counts = [...left]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([reason, n]) => `${reason}: ${n}`)
      .join(', ');
    const note: PolicyProblem = { reason: PROBLEMS_TRUNCATED_REASON, message: cutMessage(`${problems.length - count} more problems left out of this annotation (${counts})`) };
    return canonicalJson({ ...status, problems: [...problems.filter((p) => kept.has(p)), note] });
  };
  return largestFitting(0, problems.length - 1, text) ?? canonicalJson({ summary: status.summary });
}

/**
 * text(n) for the largest n in [low, high] whose text fits, the text growing with n; undefined when none
 * does (or the range is empty).
 */
function largestFitting(low: number, high: number, text: (n: number) => string): string | undefined {
  if (low > high || !fits(text(low))) return undefined;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(text(mid))) low = mid;
    else high = mid - 1;
  }
  return text(low);
}

/**
 * The fewest bytes a cluster's entry takes in the annotation: a one-character name and the fields every entry
 * has, at their shortest.
 */
const MIN_CLUSTER_ENTRY_BYTES =
  Buffer.byteLength(`"c":${canonicalJson({ applied: true, available: true, enforced: 'True', message: '', reason: '', state: 'Failed', upToDate: true } satisfies ClusterStatus)}`, 'utf8') + 1;

function fits(text: string): boolean {
  return Buffer.byteLength(text, 'utf8') <= MAX_STATUS_ANNOTATION_BYTES;
}

/** Which clusters a cut annotation keeps first: the failing, then those in doubt, waiting, overridden, enforced. */
const STATE_RANK: Record<ClusterStatus['state'], number> = { Failed: 0, Unknown: 1, Pending: 2, Overridden: 3, Enforced: 4 };

/** The order a cut annotation keeps clusters in: by state (STATE_RANK), then by name. */
export function byClusterRank([a, ca]: readonly [string, ClusterStatus], [b, cb]: readonly [string, ClusterStatus]): number {
  return STATE_RANK[ca.state] - STATE_RANK[cb.state] || (a < b ? -1 : a > b ? 1 : 0);
}

function withoutStatusFeedback(clusters: Record<string, ClusterStatus>): Record<string, ClusterStatus> {
  return Object.fromEntries(
    Object.entries(clusters).map(([name, cluster]) => {
      const { statusFeedback: _dropped, ...rest } = cluster;
      return [name, rest];
    }),
  );
}

const count = z.number().int().nonnegative();
const clusterStatusSchema = z.object({
  state: z.enum(['Enforced', 'Overridden', 'Pending', 'Failed', 'Unknown']),
  applied: z.boolean(),
  available: z.boolean(),
  enforced: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  upToDate: z.boolean(),
  statusFeedback: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  revision: z.number().int().optional(),
  rollout: z.object({ phase: z.enum(['Succeeded', 'Progressing', 'Failed', 'Waiting', 'Held', 'RolledBack']), message: z.string().optional() }).optional(),
  // Absent from annotations written before the hub recorded them: read as none.
  overriddenBy: z.array(z.string()).optional(),
  overriddenByMore: count.optional(),
  variants: z.array(z.string()).optional(),
  drift: z
    .object({
      fields: z.array(z.string()),
      more: count.optional(),
      managers: z.array(z.object({ manager: z.string(), operation: z.string().optional(), time: z.string().optional() })),
      since: z.string().optional(),
    })
    .optional(),
  lingering: z.array(z.string()).optional(),
});
const rolloutStatusSchema = z.object({
  strategy: z.enum(['All', 'Progressive']),
  revision: z.number().int(),
  variants: z.string().optional(),
  state: z.enum(['Progressing', 'Halted', 'Complete']),
  wave: count.optional(),
  waves: count.optional(),
  halted: z.object({ cluster: z.string(), reason: z.string(), message: z.string(), rolledBack: z.boolean() }).optional(),
  lastCompleted: z.number().int().optional(),
  message: z.string(),
});
const policyStatusSchema = z.object({
  summary: z.object({
    clusters: count,
    applied: count,
    enforced: count,
    overridden: count,
    pending: count,
    failed: count,
    unknown: count.optional(),
    drifted: count.optional(),
    lingering: count.optional(),
    truncated: z.literal(true).optional(),
  }),
  clusters: z.record(z.string(), clusterStatusSchema).optional(),
  problems: z.array(z.object({ reason: z.string(), message: z.string() })).optional(),
  rollout: rolloutStatusSchema.optional(),
});

/** The annotation value parsed back; undefined when absent, not JSON or not of this shape. */
export function readPolicyStatus(text: string | undefined): PolicyStatus | undefined {
  const parsed = parseJson(text, policyStatusSchema);
  if (!parsed) return undefined;
  const { summary, clusters, problems, rollout } = parsed;
  const { truncated, ...counts } = summary;
  const status: PolicyStatus = { summary: truncated ? { ...counts, truncated } : counts };
  if (clusters !== undefined) status.clusters = clusters;
  if (problems !== undefined) status.problems = problems;
  if (rollout !== undefined) status.rollout = rollout;
  return status;
}

