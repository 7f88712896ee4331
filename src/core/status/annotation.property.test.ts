// Properties of the status annotation (annotation.ts, from the statuses policystatus.ts and report.ts build), for
// generated fleets — up to hundreds of clusters in every state, long messages with odd characters, the kind's
// statusFeedback values, many problems, a rollout — : the annotation always fits its budget and always parses
// back; what fits is kept whole; and what a cut keeps is what the CLI (src/cli/status.ts statusFromWorks) needs
// to rebuild the rest from the works: the true counts, the problems, the rollout, and the clusters no work shows,
// then those not settled, each the failing first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkProperty, oddText } from '../../../testkit/arbitraries.ts';
import { canonicalJson } from '../k8s/canonical.ts';
import type { ClusterPhase, RolloutStatus } from './rolloutstatus.ts';
import type { ClusterFeedback, FeedbackScalar } from '../works/feedback.ts';
import { cutMessage } from '../k8s/sanitize.ts';
import { MAX_STATUS_ANNOTATION_BYTES, PROBLEMS_TRUNCATED_REASON, byClusterRank, policyStatusAnnotation, readPolicyStatus } from './annotation.ts';
import { aggregatePolicyStatus, type ClusterInput, type ClusterStatus, type PolicyStatus } from './policystatus.ts';

const NOW = Date.parse('2026-01-01T00:10:00Z');

/** Messages: mostly short, some far past the cut, all with the characters that break naive code. */
const message = fc.oneof({ weight: 3, arbitrary: oddText({ maxLength: 40 }) }, { weight: 1, arbitrary: oddText({ maxLength: 600 }) });
const condition = fc.record(
  { status: fc.constantFrom('True' as const, 'False' as const, 'Unknown' as const), reason: fc.constantFrom('Enforced', 'Accepted', 'Overridden', 'TargetNotFound', 'MissingResource'), message },
  { requiredKeys: ['status'] },
);
const scalar: fc.Arbitrary<FeedbackScalar> = fc.oneof(
  message,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Object.is(x, -0)),
  fc.boolean(),
);
const feedback: fc.Arbitrary<ClusterFeedback> = fc.record(
  {
    applied: fc.boolean(),
    available: fc.boolean(),
    appliedObservedCurrent: fc.boolean(),
    generation: fc.integer({ min: 1, max: 5 }),
    revision: fc.integer({ min: 1, max: 5 }),
    enforcedGeneration: fc.integer({ min: 1, max: 5 }),
    accepted: condition,
    enforced: condition,
    ancestors: fc.array(
      fc.record({
        gateway: fc.constantFrom('gw1', 'gw2'),
        entries: fc.array(fc.record({ status: fc.constantFrom('True' as const, 'False' as const, 'Unknown' as const), reason: fc.constant('Accepted'), message, observedGeneration: fc.integer({ min: 1, max: 5 }) }, { requiredKeys: ['status'] }), { maxLength: 2 }),
      }),
      { maxLength: 2 },
    ),
    appliedAt: fc.integer({ min: NOW - 120_000, max: NOW }),
    // Named as the params allow a statusFeedback rule (params.ts refuses `__proto__`: no object can hold it as a key).
    extra: fc.dictionary(fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/).filter((n) => n !== '__proto__'), scalar, { maxKeys: 4 }),
    applyError: message,
    feedbackError: message,
  },
  { requiredKeys: ['applied', 'available', 'appliedObservedCurrent', 'ancestors', 'extra'] },
);
/** Overriding local policies (`namespace/name`, as a spoke report's schema allows them): a few mostly, some past the cap, some long. */
const policyKey = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}\/[a-z][a-z0-9-]{0,14}$/) },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{50,61}[a-z0-9]\/[a-z][a-z0-9.-]{200,251}[a-z0-9]$/) },
);
const overriders = fc.oneof({ weight: 3, arbitrary: fc.array(policyKey, { minLength: 1, maxLength: 3 }) }, { weight: 1, arbitrary: fc.array(policyKey, { minLength: 1, maxLength: 20 }) });
const localNote = fc.oneof(
  fc.record({ reason: fc.constant('PartiallyEnforced' as const), message, by: overriders }),
  fc.record({ reason: fc.constant('OverridesLocal' as const), message }),
);
const clusterInput: fc.Arbitrary<ClusterInput> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ state: fc.constant('work' as const), feedback, local: fc.option(localNote, { nil: undefined }) }) },
  fc.constant({ state: 'pending' as const }),
  fc.record({ state: fc.constant('waiting' as const), message }),
  fc.record({ state: fc.constant('tooLarge' as const), message, feedback }, { requiredKeys: ['state'] }),
  fc.record({ state: fc.constant('conflicted' as const), message }),
  fc.record({ state: fc.constant('overridden' as const), message, by: overriders }),
  fc.record({ state: fc.constant('unknown' as const), reason: fc.constantFrom('Unreachable', 'PlacementAbsent'), message, since: fc.constant('2026-01-01T00:00:00Z'), feedback }, { requiredKeys: ['state', 'reason', 'message'] }),
);
/** Cluster names as OCM allows them (DNS subdomains), short mostly, some long. */
const clusterName = fc.oneof({ weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,14}$/) }, { weight: 1, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9.-]{40,200}[a-z0-9]$/) });
const PHASES: ClusterPhase[] = ['Succeeded', 'Progressing', 'Failed', 'Waiting', 'Held', 'RolledBack'];
const rolloutStatus: fc.Arbitrary<RolloutStatus> = fc.record(
  {
    strategy: fc.constantFrom('All' as const, 'Progressive' as const),
    revision: fc.integer({ min: 1, max: 1000 }),
    state: fc.constantFrom('Progressing' as const, 'Halted' as const, 'Complete' as const),
    wave: fc.nat(50),
    waves: fc.nat(50),
    halted: fc.record({ cluster: clusterName, reason: fc.constantFrom('ProgressDeadlineExceeded', 'TargetNotFound'), message: message.map(cutMessage), rolledBack: fc.boolean() }),
    message: message.map(cutMessage),
  },
  { requiredKeys: ['strategy', 'revision', 'state', 'message'] },
);

/** A policy's status as the hub reports it (report.ts): aggregated, with revisions, rollout phases and problems. */
const policyStatus: fc.Arbitrary<PolicyStatus> = fc
  .record({
    // Few clusters mostly; hundreds (past the budget) often enough.
    clusters: fc.oneof(
      { weight: 3, arbitrary: fc.dictionary(clusterName, clusterInput, { maxKeys: 12 }) },
      { weight: 1, arbitrary: fc.dictionary(clusterName, clusterInput, { minKeys: 100, maxKeys: 400, size: 'max' }) },
    ),
    problems: fc.oneof(
      { weight: 3, arbitrary: fc.array(fc.record({ reason: fc.constantFrom('PlacementRefused', 'SpokeReportRefused', 'NotAGateway'), message }), { maxLength: 4 }) },
      // One per cluster, as SpokeReportRefused and PlacementRefused are: hundreds, distinct.
      {
        weight: 1,
        arbitrary: fc
          .array(fc.record({ reason: fc.constantFrom('PlacementRefused', 'SpokeReportRefused'), why: message }), { minLength: 200, maxLength: 1500, size: 'max' })
          .map((list) => list.map(({ reason, why }, i) => ({ reason, message: `cluster spoke-${i}: the spoke agent's report is refused (${why}); local policies there are not known` }))),
      },
    ),
    rollout: fc.option(rolloutStatus, { nil: undefined }),
    phases: fc.array(fc.record({ phase: fc.constantFrom(...PHASES), message: fc.option(message, { nil: undefined }), revision: fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }) }), { maxLength: 8 }),
  })
  // As JSON gives it (fast-check may build objects without a prototype; the hub's come from JSON).
  .map((generated) => JSON.parse(JSON.stringify(generated)) as typeof generated)
  .map(({ clusters, problems, rollout, phases }) => {
    const status = aggregatePolicyStatus({ now: NOW, clusters, problems });
    if (!rollout || !status.clusters) return status;
    // report.ts withRevisions: each cluster's revision and rollout phase, messages cut.
    const names = Object.keys(status.clusters);
    const withPhases: Record<string, ClusterStatus> = Object.fromEntries(
      names.map((name, i) => {
        const p = phases[i % Math.max(1, phases.length)];
        const entry: ClusterStatus = { ...status.clusters![name]! };
        if (p?.revision !== undefined) entry.revision = p.revision;
        if (p) entry.rollout = { phase: p.phase, ...(p.message ? { message: cutMessage(p.message) } : {}) };
        return [name, entry];
      }),
    );
    return { ...status, clusters: withPhases, rollout };
  });

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

test('property: the status annotation always fits its budget, always parses back, and keeps whole what fits', (t) => {
  checkProperty(t, 100, [policyStatus], (status) => {
    const before = canonicalJson(status);
    const text = policyStatusAnnotation(status);
    assert.equal(canonicalJson(status), before, 'the status is not modified');
    assert.ok(bytes(text) <= MAX_STATUS_ANNOTATION_BYTES, `${bytes(text)} bytes, past the budget of ${MAX_STATUS_ANNOTATION_BYTES}`);
    const read = readPolicyStatus(text);
    assert.ok(read, `the annotation does not parse back: ${text.slice(0, 300)}`);
    // What fits is written whole, and read back as it was.
    if (bytes(before) <= MAX_STATUS_ANNOTATION_BYTES) assert.equal(canonicalJson(read), before);
    else assert.equal(read.summary.truncated, true, 'a cut is marked');
    // Written again from what it reads, it is the same text: no write loop between replicas or restarts.
    assert.equal(policyStatusAnnotation(read), text);
  });
});

test('property: a cut annotation keeps what the CLI rebuilds the rest around: counts, problems, rollout, the clusters no work shows, then those not settled, the failing first', (t) => {
  checkProperty(t, 100, [policyStatus], (status) => {
    const annotation = policyStatusAnnotation(status);
    const read = readPolicyStatus(annotation)!;
    const { truncated, ...counts } = read.summary;
    assert.deepEqual(counts, status.summary, 'the counts are the true ones, whatever is cut');
    if (truncated === undefined) return;
    const note = read.problems?.at(-1);
    if (note?.reason !== PROBLEMS_TRUNCATED_REASON) assert.deepEqual(read.problems, status.problems, 'the problems are kept');
    else {
      // Cut too: those kept are the status's, in its order; the last one says how many of which reason are left out.
      const all = status.problems ?? [];
      const kept = read.problems!.slice(0, -1);
      const keys = all.map((p) => JSON.stringify(p));
      const at = kept.map((p) => keys.indexOf(JSON.stringify(p)));
      assert.ok(at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1]!)), 'the problems kept are the status\'s, in order');
      const left = new Map<string, number>();
      for (const p of all) left.set(p.reason, (left.get(p.reason) ?? 0) + 1);
      for (const p of kept) left.set(p.reason, left.get(p.reason)! - 1);
      const counts = [...left]
        .filter(([, n]) => n > 0)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([reason, n]) => `${reason}: ${n}`)
        .join(', ');
      assert.equal(note.message, cutMessage(`${all.length - kept.length} more problems left out of this annotation (${counts})`));
      assert.deepEqual(new Set(kept.map((p) => p.reason)), new Set(all.map((p) => p.reason)), 'every reason stays named');
      assert.equal(read.clusters, undefined, 'problems are cut only once the clusters are');
    }
    assert.deepEqual(read.rollout, status.rollout, 'the rollout is kept');
    if (read.clusters === undefined) return;
    for (const [name, entry] of Object.entries(read.clusters)) {
      const { statusFeedback: _values, ...withoutValues } = status.clusters![name]!;
      assert.ok(entry.statusFeedback === undefined ? true : false, `${name}: a cut leaves the values out first`);
      assert.deepEqual(entry, withoutValues, `${name}: an entry kept is the cluster's, without its values`);
    }
    const all = Object.entries(status.clusters ?? {});
    const kept = new Set(Object.keys(read.clusters));
    if (kept.size === all.length) return; // only the values were cut
    // statusFromWorks rebuilds the clusters that have a work; one not applied may have none: those come first,
    // then the applied ones not settled (failed, in doubt, pending), each the failing first; never a settled one.
    const ranked = [...all].sort(byClusterRank);
    const unapplied = ranked.filter(([, c]) => !c.applied).map(([name]) => name);
    const notSettled = ranked.filter(([, c]) => c.applied && c.state !== 'Enforced' && c.state !== 'Overridden').map(([name]) => name);
    const keptUnapplied = unapplied.filter((name) => kept.has(name));
    const keptApplied = notSettled.filter((name) => kept.has(name));
    assert.deepEqual(keptUnapplied, unapplied.slice(0, keptUnapplied.length), 'the clusters no work shows kept are the first by rank');
    assert.deepEqual(keptApplied, notSettled.slice(0, keptApplied.length), 'the applied ones kept are the first by rank');
    if (keptApplied.length > 0) assert.equal(keptUnapplied.length, unapplied.length, 'an applied cluster only once every one no work shows is kept');
    assert.equal(kept.size, keptUnapplied.length + keptApplied.length, 'no enforced or overridden applied cluster is kept');
    // As many as fit: the next cluster in that order would not have.
    const next = keptUnapplied.length < unapplied.length ? unapplied[keptUnapplied.length] : notSettled[keptApplied.length];
    if (next !== undefined) {
      const { statusFeedback: _values, ...entry } = status.clusters![next]!;
      const grown = Buffer.byteLength(annotation, 'utf8') + Buffer.byteLength(`${JSON.stringify(next)}:${canonicalJson(entry)}`, 'utf8') + (kept.size > 0 ? 1 : 0);
      assert.ok(grown > MAX_STATUS_ANNOTATION_BYTES, `${next} would have fitted (${grown} bytes)`);
    }
  });
});

// Found by the first property: the problems were never cut, so a policy on 1,000 clusters whose spoke reports
// are refused (one SpokeReportRefused problem each) wrote a 177 KB annotation — past its budget, and from
// ~1,500 clusters past the apiserver's 256 KiB for all annotations, when every status write fails.
test('regression: a thousand problems (a refused spoke report per cluster) fit the budget; every reason stays named, and how many were left out', () => {
  const problems = Array.from({ length: 1000 }, (_, i) => ({
    reason: i % 100 === 0 ? 'PlacementRefused' : 'SpokeReportRefused',
    message: `cluster spoke-${String(i).padStart(4, '0')}: the spoke agent's report is refused (the report is larger than 1048576 bytes); local policies there are not known`,
  }));
  const status = aggregatePolicyStatus({ now: NOW, clusters: { 'spoke-0000': { state: 'pending' } }, problems });
  const text = policyStatusAnnotation(status);
  assert.ok(bytes(text) <= MAX_STATUS_ANNOTATION_BYTES, `${bytes(text)} bytes`);
  const read = readPolicyStatus(text)!;
  assert.equal(read.summary.truncated, true);
  const kept = read.problems!.slice(0, -1);
  const note = read.problems!.at(-1)!;
  assert.ok(kept.length > 100 && kept.every((p) => status.problems!.some((q) => q.reason === p.reason && q.message === p.message)));
  assert.deepEqual([...new Set(kept.map((p) => p.reason))].sort(), ['PlacementRefused', 'SpokeReportRefused']);
  const left = 1000 - kept.length;
  assert.equal(note.reason, 'ProblemsTruncated');
  // Round robin over the reasons: the 10 PlacementRefused are all kept, the SpokeReportRefused are cut.
  assert.equal(note.message, `${left} more problems left out of this annotation (SpokeReportRefused: ${left})`);
});
