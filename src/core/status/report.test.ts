import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson } from '../k8s/canonical.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { POLICIES_SYNCED_ANNOTATION, STATUS_ANNOTATION, WITHDRAWN_BY_ANNOTATION } from '../metadatakeys.ts';
import type { ManifestWork } from '../works/manifestwork.ts';
import { policyStatusAnnotation } from './annotation.ts';
import { STATUS_GRACE_MS, aggregatePolicyStatus, clusterVerdict, statusRecheckDelay, type ClusterInput } from './policystatus.ts';
import { reportAnnotations, reportPolicyStatus, reportedAnnotations } from './report.ts';
import { statusAggregateInput, type StatusInput } from './statusinput.ts';
import { NOW } from '../../../testkit/statusfixtures.ts';
import { desired, live, policy } from '../../../testkit/reportfixtures.ts';

/** Four clusters: c1 enforced, c2 waiting for its status, c3 just written, c4 lost to another policy; c5 in doubt. */
function input(): StatusInput {
  const d = desired(['c1', 'c2', 'c3', 'c4']);
  const [w1, w2, w3] = [...d.works.values()] as [ManifestWork, ManifestWork, ManifestWork];
  const kept = [...desired(['c5']).works.values()][0]!;
  return {
    desired: d,
    losses: [{ cluster: 'c4', message: 'already synced from shop/older' }],
    observed: [live(w1, NOW - 10_000, true), live(w2, NOW - 20_000, false), live(kept, NOW - 99_000, true)],
    written: [w1, w2, w3],
    unknown: [{ cluster: 'c5', reason: 'ManagedClusterLeaseUpdateStopped', message: 'OCM marks cluster c5 unreachable', work: kept }],
  };
}

test('reportPolicyStatus: the status, its annotations, the counts and the recheck delay in one call', () => {
  const report = reportPolicyStatus(input(), 500 * 1024, NOW);
  const aggregate = statusAggregateInput(input(), 500 * 1024, NOW);
  assert.deepEqual(report.status, aggregatePolicyStatus(aggregate));
  assert.equal(report.recheckDelay, statusRecheckDelay(aggregate));
  assert.equal(report.recheckDelay, STATUS_GRACE_MS - 20_000);
  assert.deepEqual(report.counts, { enforced: 1, overridden: 0, pending: 2, failed: 1, unknown: 1, drifted: 0, lingering: 0 });
  assert.equal(report.annotations[STATUS_ANNOTATION], policyStatusAnnotation(report.status));
  // The works in place: those written, and the one kept on the cluster in doubt (not the conflicted one).
  assert.deepEqual(
    (JSON.parse(report.annotations[POLICIES_SYNCED_ANNOTATION]!) as { cluster: string }[]).map((e) => e.cluster),
    ['c1', 'c2', 'c3', 'c5'],
  );
});

test('reportPolicyStatus judges each cluster once per report', () => {
  const judged: ClusterInput[] = [];
  const report = reportPolicyStatus(input(), 500 * 1024, NOW, (cluster, now) => {
    judged.push(cluster);
    return clusterVerdict(cluster, now);
  });
  assert.equal(judged.length, 5);
  assert.equal(report.status.summary.clusters, 5);
  assert.deepEqual(report, reportPolicyStatus(input(), 500 * 1024, NOW));
});

test('reportedAnnotations reads back what reportAnnotations wrote, other annotations aside; clearing removes the status, and the withdrawal mark unless it is kept', () => {
  const { annotations } = reportPolicyStatus(input(), 500 * 1024, NOW);
  const written: KubeObject = { ...policy, metadata: { ...policy.metadata, annotations: { other: 'kept', ...(annotations as Record<string, string>) } } };
  assert.equal(reportedAnnotations(written), canonicalJson(annotations));
  assert.equal(annotations[WITHDRAWN_BY_ANNOTATION], undefined, 'a policy reported as ours carries no withdrawal mark');
  const cleared = reportAnnotations([], undefined);
  assert.deepEqual(Object.keys(cleared).sort(), [POLICIES_SYNCED_ANNOTATION, STATUS_ANNOTATION, WITHDRAWN_BY_ANNOTATION].sort());
  assert.equal(cleared[STATUS_ANNOTATION], undefined);
  assert.equal(cleared[WITHDRAWN_BY_ANNOTATION], undefined);
  // Cleared as the copies are withdrawn, the mark stays (core/pipeline/withdrawal.ts); the status of a withdrawn policy keeps it.
  const withdrawing = reportAnnotations([], undefined, 'c0ffee');
  assert.equal(withdrawing[WITHDRAWN_BY_ANNOTATION], 'c0ffee');
  assert.equal(withdrawing[STATUS_ANNOTATION], undefined);
  const marked: KubeObject = { ...policy, metadata: { ...policy.metadata, annotations: { [WITHDRAWN_BY_ANNOTATION]: 'c0ffee' } } };
  assert.equal(reportedAnnotations(marked), canonicalJson(withdrawing));
  assert.equal(reportPolicyStatus({ ...input(), withdrawnBy: 'c0ffee' }, 500 * 1024, NOW).annotations[WITHDRAWN_BY_ANNOTATION], 'c0ffee');
});

// Each cluster's revision, and where a Progressive rollout stands, as this report shows the planner's plans:
// core/rollout/plan.report.test.ts (the status does not import the planner).
