// What each cluster's status is aggregated from (the StatusReporter's writes are covered by
// test/integration against the sandbox).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { desiredWorksForPolicy, type DesiredWorks } from '../works/desiredworks.ts';
import type { ManifestWork } from '../works/manifestwork.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { coverage } from '../spoke/conflicts.ts';
import { STATUS_GRACE_MS, aggregatePolicyStatus, statusRecheckDelay, type LocalNote } from './policystatus.ts';
import { policyStatusAnnotation, readPolicyStatus } from './annotation.ts';
import { LANE_CONFLICT_REASON, policyProblems, statusAggregateInput, type LocalVerdicts } from './statusinput.ts';

const GW = 'gateway.networking.k8s.io';
const NOW = Date.parse('2026-01-01T00:10:00Z');

function policy(): KubeObject {
  return {
    apiVersion: 'gateway.envoyproxy.io/v1alpha1',
    kind: 'BackendTrafficPolicy',
    metadata: { name: 'p', namespace: 'shop', uid: 'u1', creationTimestamp: '2025-12-01T00:00:00Z' },
    spec: { targetRefs: [{ group: GW, kind: 'Gateway', name: 'shop' }] },
  };
}

function desired(clusters: string[], maxWorkBytes = 500 * 1024) {
  return desiredWorksForPolicy({
    gvr: { group: 'gateway.envoyproxy.io', version: 'v1alpha1', resource: 'backendtrafficpolicies' },
    policy: policy(),
    gateways: () => ({ managed: true, downstreamNamespaceTemplate: '{namespace}', clusters, kindAllowed: true }),
    rawFeedback: false,
    statusFeedback: [],
    maxWorkBytes,
  });
}

/** The work as the agent reports it: applied at `appliedAt`, with these feedback values. */
function live(work: ManifestWork, appliedAt: string, values: { name: string; fieldValue: Record<string, unknown> }[]): KubeObject {
  const applied = { type: 'Applied', status: 'True', reason: 'AppliedManifestWorkComplete', message: '', observedGeneration: 1, lastTransitionTime: appliedAt };
  return {
    ...work,
    metadata: { ...work.metadata, generation: 1 },
    status: { conditions: [applied], resourceStatus: { manifests: [{ resourceMeta: { ordinal: 0 }, statusFeedback: { values }, conditions: [] }] } },
  };
}

const str = (name: string, value: string) => ({ name, fieldValue: { type: 'String', string: value } });

test('statusAggregateInput: feedback of a work as written now; a stale or status-less work is pending', () => {
  const d = desired(['c1', 'c2', 'c3']);
  const written = [...d.works.values()];
  const [w1, w2, w3] = written as [ManifestWork, ManifestWork, ManifestWork];
  const stale = { ...live(w2, '2026-01-01T00:00:00Z', []), metadata: { ...w2.metadata, annotations: { ...w2.metadata.annotations, 'policysync.kuadrant.io/spec-hash': 'old' } } };
  const observed = [live(w1, '2026-01-01T00:00:00Z', [str('ancestor0Status', 'True'), str('ancestor0Reason', 'Accepted')]), stale, w3];
  const input = statusAggregateInput({ desired: d, losses: [], observed, written }, 1000, NOW);
  assert.equal(input.now, NOW);
  assert.deepEqual(Object.keys(input.clusters).sort(), ['c1', 'c2', 'c3']);
  assert.equal(input.clusters.c1?.state, 'work');
  assert.equal(input.clusters.c2?.state, 'pending');
  assert.equal(input.clusters.c3?.state, 'pending');
  const status = aggregatePolicyStatus(input);
  assert.deepEqual([status.clusters?.c1?.state, status.clusters?.c1?.reason], ['Enforced', 'Accepted']);
});

test('statusAggregateInput: too large and conflicted clusters are the hub\'s own verdicts', () => {
  const d = { ...desired(['c1']), tooLarge: ['c9'] };
  const input = statusAggregateInput({ desired: d, losses: [{ cluster: 'c1', message: 'already synced from ns/older' }], observed: [], written: [] }, 1000, NOW);
  assert.deepEqual(input.clusters, {
    c9: { state: 'tooLarge', message: 'the ManifestWork exceeds 1000 bytes; the last good copy stays in place' },
    c1: { state: 'conflicted', message: 'already synced from ns/older' },
  });
});

test('statusAggregateInput: a cluster awaiting its spoke report is the hub\'s own verdict, with the feedback of a work kept there; a conflict says more', () => {
  const kept = [...desired(['c2']).works.values()][0]!;
  const observed = [live(kept, '2026-01-01T00:00:00Z', [str('ancestor0Status', 'True'), str('ancestor0Reason', 'Accepted')])];
  const d = desired([]);
  const input = statusAggregateInput(
    {
      desired: d,
      losses: [{ cluster: 'c3', message: 'already synced from ns/older' }],
      observed,
      written: [],
      awaiting: [
        { cluster: 'c1', message: 'no report from the spoke agent yet' },
        { cluster: 'c2', message: 'kind x is not in the report' },
        { cluster: 'c3', message: 'no report from the spoke agent yet' },
      ],
    },
    1000,
    NOW,
  );
  assert.deepEqual(input.clusters.c1, { state: 'awaitingReport', message: 'no report from the spoke agent yet' });
  assert.equal(input.clusters.c2?.state, 'awaitingReport');
  assert.ok(input.clusters.c2?.state === 'awaitingReport' && input.clusters.c2.feedback?.applied);
  assert.equal(input.clusters.c3?.state, 'conflicted');
  const status = aggregatePolicyStatus(input);
  assert.deepEqual([status.clusters?.c1?.state, status.clusters?.c1?.reason], ['Pending', 'AwaitingSpokeReport']);
  assert.equal(status.summary.pending, 2);
});

test('statusAggregateInput with statusRecheckDelay: a copy with no status yet is looked at again when the grace ends', () => {
  const d = desired(['c1']);
  const written = [...d.works.values()];
  const appliedAt = NOW - 20_000;
  const observed = [live(written[0]!, new Date(appliedAt).toISOString(), [])];
  const input = statusAggregateInput({ desired: d, losses: [], observed, written }, 500 * 1024, NOW);
  assert.equal(aggregatePolicyStatus(input).clusters?.c1?.state, 'Pending');
  assert.equal(statusRecheckDelay(input), STATUS_GRACE_MS - 20_000);
  const later = statusAggregateInput({ desired: d, losses: [], observed, written }, 500 * 1024, appliedAt + STATUS_GRACE_MS);
  assert.equal(aggregatePolicyStatus(later).clusters?.c1?.reason, 'NoStatus');
  assert.equal(statusRecheckDelay(later), undefined);
});

test('statusAggregateInput: a cluster whose work is kept while OCM cannot vouch for it is Unknown, with OCM\'s reason, since when and its last feedback', () => {
  const kept = desired(['c2']);
  const work = [...kept.works.values()][0]!;
  const observed = [live(work, '2026-01-01T00:00:00Z', [str('ancestor0Status', 'True'), str('ancestor0Reason', 'Accepted')])];
  const d = desired(['c1']);
  const input = statusAggregateInput(
    { desired: d, losses: [], observed, written: [...d.works.values()], unknown: [{ cluster: 'c2', reason: 'ManagedClusterLeaseUpdateStopped', message: 'OCM marks cluster c2 unreachable', since: '2026-01-01T00:05:00Z', work }] },
    500 * 1024,
    NOW,
  );
  assert.equal(input.clusters.c2?.state, 'unknown');
  const status = aggregatePolicyStatus(input);
  assert.deepEqual(status.summary, { clusters: 2, applied: 1, enforced: 0, overridden: 0, pending: 1, failed: 0, unknown: 1 });
  assert.deepEqual(status.clusters?.c2, {
    state: 'Unknown',
    applied: true,
    available: false,
    enforced: 'True',
    reason: 'ManagedClusterLeaseUpdateStopped',
    message: 'OCM marks cluster c2 unreachable since 2026-01-01T00:05:00Z; its ManifestWork is kept as it was',
    upToDate: false,
  });
});

test('policyProblems: rejected targets (but those at another controller\'s Gateway), namespace mismatches, no clusters, nothing syncable', () => {
  const d = desired(['c1']);
  assert.deepEqual(policyProblems(d), [], 'a synced policy has no problem');
  const withProblems = {
    ...d,
    targets: [
      { path: 'spec.targetRefs[0]', state: 'rejected' as const, reason: 'CrossNamespace' as const, message: 'Gateway other/gw is elsewhere' },
      { path: 'spec.targetRefs[1]', state: 'rejected' as const, reason: 'GatewayNotManaged' as const, message: 'not ours' },
    ],
    mismatches: [{ message: 'two downstream namespaces' } as DesiredWorks['mismatches'][number]],
    noClusters: true,
  };
  assert.deepEqual(policyProblems(withProblems), [
    { reason: 'TargetNotSynced', message: 'spec.targetRefs[0]: CrossNamespace: Gateway other/gw is elsewhere' },
    { reason: 'NamespaceMismatch', message: 'two downstream namespaces' },
    { reason: 'NoClusters', message: 'the targeted Gateways are placed on no cluster: nothing is synced' },
    { reason: 'NotSynced', message: 'no target of this policy can be synced: it has no ManifestWorks' },
  ]);
});

test('statusAggregateInput: the policy\'s problems are its own, then lane conflicts, then the reconciler\'s', () => {
  const d = desired(['c1']);
  const input = statusAggregateInput(
    { desired: d, losses: [], observed: [], written: [], lanes: [{ message: 'lane shared with ns/other', gateways: [] }], problems: [{ reason: 'ClustersRefused', message: 'c9' }] },
    1000,
    NOW,
  );
  assert.deepEqual(input.problems, [
    { reason: LANE_CONFLICT_REASON, message: 'lane shared with ns/other' },
    { reason: 'ClustersRefused', message: 'c9' },
  ]);
});

test('statusAggregateInput: the local policies that override a copy, as coverage found them, are the cluster status\'s overriddenBy, read back from the annotation', () => {
  const d = desired(['c1', 'c2']);
  const w2 = d.works.get('c2')!;
  const copy = w2.spec.workload.manifests[0]!;
  const gw = (sectionName?: string) => ({ gateway: 'shop', ...(sectionName ? { sectionName } : {}) });
  // As the hub weighs the spoke reports: c1's local policies take the whole Gateway, c2's one listener only.
  const whole = coverage(copy.kind, copy, [{ key: 'shop/local-b', targets: [gw()] }, { key: 'shop/local-a', targets: [gw()] }]);
  const partial = coverage(copy.kind, { ...copy, spec: { targetRefs: [{ group: GW, kind: 'Gateway', name: 'shop', sectionName: 'http' }, { group: GW, kind: 'Gateway', name: 'shop', sectionName: 'https' }] } }, [
    { key: 'shop/local-https', targets: [gw('https')] },
  ]);
  assert.equal(whole.state, 'Overridden');
  assert.equal(partial.state, 'PartiallyEnforced');
  if (whole.state !== 'Overridden' || partial.state !== 'PartiallyEnforced') return;
  const note: LocalNote = { reason: 'PartiallyEnforced', message: partial.message, by: partial.by };
  const local: LocalVerdicts = { overridden: [{ cluster: 'c1', message: whole.message, by: whole.by }], notes: new Map([['c2', note]]) };
  const observed = [live(w2, '2026-01-01T00:00:00Z', [str('ancestor0Status', 'True'), str('ancestor0Reason', 'Accepted')])];
  const status = aggregatePolicyStatus(statusAggregateInput({ desired: d, losses: [], observed, written: [w2], local }, 1000, NOW));
  assert.deepEqual([status.clusters?.c1?.state, status.clusters?.c1?.overriddenBy], ['Overridden', ['shop/local-a', 'shop/local-b']]);
  assert.deepEqual([status.clusters?.c2?.reason, status.clusters?.c2?.overriddenBy], ['PartiallyEnforced', ['shop/local-https']]);
  const read = readPolicyStatus(policyStatusAnnotation(status));
  assert.deepEqual(read?.clusters?.c1?.overriddenBy, ['shop/local-a', 'shop/local-b']);
  assert.deepEqual(read?.clusters?.c2?.overriddenBy, ['shop/local-https']);
});
