import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClusterFeedback } from './feedback.ts';
import {
  MAX_STATUS_ANNOTATION_BYTES,
  aggregatePolicyStatus,
  cutMessage,
  newProblems,
  policyStatusAnnotation,
  readPolicyStatus,
  statusTransitions,
} from './policystatus.ts';
import type { ClusterInput, ClusterStatus, PolicyStatus } from './policystatus.ts';

function feedback(extra: Partial<ClusterFeedback> = {}): ClusterFeedback {
  return {
    applied: true,
    available: true,
    appliedObservedCurrent: true,
    generation: 2,
    enforcedGeneration: 2,
    accepted: { status: 'True', reason: 'Accepted', message: 'accepted' },
    enforced: { status: 'True', reason: 'Enforced', message: 'AuthPolicy has been successfully enforced' },
    extra: {},
    ...extra,
  };
}

const work = (extra: Partial<ClusterFeedback> = {}): ClusterInput => ({ state: 'work', feedback: feedback(extra) });

function one(input: ClusterInput): ClusterStatus {
  const status = aggregatePolicyStatus({ clusters: { c1: input } });
  const cluster = status.clusters?.c1;
  assert.ok(cluster);
  return cluster;
}

test('aggregatePolicyStatus: the DESIGN §5 example, one enforced and one overridden cluster', () => {
  const status = aggregatePolicyStatus({
    clusters: {
      c2: work({ enforced: { status: 'False', reason: 'Overridden', message: 'AuthPolicy is overridden by [ns/local-auth]' } }),
      c1: work(),
    },
  });
  assert.deepEqual(status, {
    summary: { clusters: 2, applied: 2, enforced: 1, overridden: 1, pending: 0, failed: 0 },
    clusters: {
      c1: {
        state: 'Enforced',
        applied: true,
        available: true,
        enforced: 'True',
        reason: 'Enforced',
        message: 'AuthPolicy has been successfully enforced',
        upToDate: true,
      },
      c2: {
        state: 'Overridden',
        applied: true,
        available: true,
        enforced: 'False',
        reason: 'Overridden',
        message: 'AuthPolicy is overridden by [ns/local-auth]',
        upToDate: true,
      },
    },
  });
});

test('aggregatePolicyStatus: no clusters gives a zero summary', () => {
  assert.deepEqual(aggregatePolicyStatus({ clusters: {} }), {
    summary: { clusters: 0, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 0 },
    clusters: {},
  });
});

// [name, input, expected state, reason, enforced, message?]
const CASES: [string, ClusterInput, ClusterStatus['state'], string, ClusterStatus['enforced'], string?][] = [
  ['Enforced=True', work(), 'Enforced', 'Enforced', 'True'],
  ['Enforced=True without a reason', work({ enforced: { status: 'True' } }), 'Enforced', 'Enforced', 'True', ''],
  [
    'PartiallyEnforced counts as enforced',
    work({ enforced: { status: 'True', reason: 'PartiallyEnforced', message: 'AuthPolicy is partially overridden: x' } }),
    'Enforced',
    'PartiallyEnforced',
    'True',
  ],
  ['Overridden', work({ enforced: { status: 'False', reason: 'Overridden', message: 'm' } }), 'Overridden', 'Overridden', 'False'],
  ['Overridden whatever the status', work({ enforced: { status: 'True', reason: 'Overridden' } }), 'Overridden', 'Overridden', 'True'],
  ['Enforced=False, another reason', work({ enforced: { status: 'False', reason: 'MissingDependency', message: 'no authorino' } }), 'Failed', 'MissingDependency', 'False', 'no authorino'],
  ['Enforced=False without a reason', work({ enforced: { status: 'False' } }), 'Failed', 'NotEnforced', 'False'],
  ['Enforced=Unknown', work({ enforced: { status: 'Unknown', reason: 'Unknown', message: 'reconciling' } }), 'Pending', 'Unknown', 'Unknown', 'reconciling'],
  ['no Enforced feedback yet', work({ enforced: undefined }), 'Pending', 'Pending', 'Unknown'],
  ['not applied yet', work({ applied: false, enforced: undefined }), 'Pending', 'Pending', 'Unknown'],
  [
    'Accepted=False',
    work({ accepted: { status: 'False', reason: 'TargetNotFound', message: 'gateway not found' }, enforced: undefined }),
    'Failed',
    'TargetNotFound',
    'Unknown',
    'gateway not found',
  ],
  [
    'apply error',
    work({ applied: false, applyError: 'Failed to apply manifest: namespaces "x" not found' }),
    'Failed',
    'ApplyFailed',
    'True',
    'Failed to apply manifest: namespaces "x" not found',
  ],
  ['feedback error', work({ feedbackError: 'bad path' }), 'Failed', 'FeedbackFailed', 'True', 'bad path'],
  ['apply error before feedback error', work({ applyError: 'a', feedbackError: 'f' }), 'Failed', 'ApplyFailed', 'True', 'a'],
  ['work without status', { state: 'pending' }, 'Pending', 'Pending', 'Unknown'],
  ['too large', { state: 'tooLarge', message: 'exceeds 512000 bytes' }, 'Failed', 'TooLarge', 'Unknown', 'exceeds 512000 bytes'],
  ['conflicted', { state: 'conflicted', message: 'already synced from ns/older' }, 'Failed', 'Conflicted', 'False', 'already synced from ns/older'],
];

for (const [name, input, state, reason, enforced, message] of CASES) {
  test(`aggregatePolicyStatus: ${name} → ${state}/${reason}`, () => {
    const status = aggregatePolicyStatus({ clusters: { c1: input } });
    const cluster = status.clusters?.c1;
    assert.ok(cluster);
    assert.equal(cluster.state, state);
    assert.equal(cluster.reason, reason);
    assert.equal(cluster.enforced, enforced);
    if (message !== undefined) assert.equal(cluster.message, message);
    // Exactly one category.
    const { enforced: e, overridden, pending, failed } = status.summary;
    assert.equal(e + overridden + pending + failed, 1);
    assert.equal(status.summary[state === 'Enforced' ? 'enforced' : state === 'Overridden' ? 'overridden' : state === 'Pending' ? 'pending' : 'failed'], 1);
  });
}

test('aggregatePolicyStatus: tooLarge keeps applied/available/enforced of the retained work, never upToDate', () => {
  const cluster = one({ state: 'tooLarge', feedback: feedback() });
  assert.deepEqual(
    { applied: cluster.applied, available: cluster.available, enforced: cluster.enforced, upToDate: cluster.upToDate },
    { applied: true, available: true, enforced: 'True', upToDate: false },
  );
  assert.match(one({ state: 'tooLarge' }).message, /size limit/);
});

test('aggregatePolicyStatus: upToDate needs the current work applied and enforcedGeneration equal to generation', () => {
  assert.equal(one(work()).upToDate, true);
  assert.equal(one(work({ appliedObservedCurrent: false })).upToDate, false);
  assert.equal(one(work({ applied: false })).upToDate, false);
  assert.equal(one(work({ enforcedGeneration: 1 })).upToDate, false);
  assert.equal(one(work({ enforcedGeneration: undefined })).upToDate, false);
  assert.equal(one(work({ generation: undefined, enforcedGeneration: undefined })).upToDate, false);
  assert.equal(one({ state: 'pending' }).upToDate, false);
  assert.equal(one({ state: 'conflicted', message: 'm' }).upToDate, false);
});

test('aggregatePolicyStatus: summary.applied counts applied works across categories', () => {
  const status = aggregatePolicyStatus({
    clusters: {
      a: work(),
      b: work({ enforced: { status: 'False', reason: 'Overridden' } }),
      c: work({ applied: false }),
      d: work({ feedbackError: 'x' }),
      e: { state: 'pending' },
      f: { state: 'conflicted', message: 'm' },
    },
  });
  assert.deepEqual(status.summary, { clusters: 6, applied: 3, enforced: 1, overridden: 1, pending: 2, failed: 2 });
  assert.deepEqual(Object.keys(status.clusters ?? {}), ['a', 'b', 'c', 'd', 'e', 'f']);
});

test('cutMessage cuts to 256 characters, marking the cut, without splitting surrogate pairs', () => {
  assert.equal(cutMessage('short'), 'short');
  assert.equal(cutMessage('x'.repeat(256)), 'x'.repeat(256));
  assert.equal(cutMessage('x'.repeat(300)), `${'x'.repeat(255)}…`);
  const emoji = '😀'.repeat(300);
  const cut = cutMessage(emoji);
  assert.equal(Array.from(cut).length, 256);
  assert.equal(cut, `${'😀'.repeat(255)}…`);
  assert.equal(one(work({ enforced: { status: 'False', reason: 'Overridden', message: 'm'.repeat(1000) } })).message.length, 256);
  assert.equal(one({ state: 'conflicted', message: 'c'.repeat(1000) }).message.length, 256);
});

test('policyStatusAnnotation is canonical JSON with sorted keys', () => {
  const status = aggregatePolicyStatus({ clusters: { c2: { state: 'pending' }, c1: work() } });
  const text = policyStatusAnnotation(status);
  assert.equal(
    text,
    '{"clusters":{"c1":{"applied":true,"available":true,"enforced":"True","message":"AuthPolicy has been successfully enforced",' +
      '"reason":"Enforced","state":"Enforced","upToDate":true},"c2":{"applied":false,"available":false,"enforced":"Unknown",' +
      '"message":"waiting for the ManifestWork status from the cluster","reason":"Pending","state":"Pending","upToDate":false}},' +
      '"summary":{"applied":1,"clusters":2,"enforced":1,"failed":0,"overridden":0,"pending":1}}',
  );
  // Input order does not matter.
  assert.equal(policyStatusAnnotation(aggregatePolicyStatus({ clusters: { c1: work(), c2: { state: 'pending' } } })), text);
});

function manyClusters(count: number): Record<string, ClusterInput> {
  const clusters: Record<string, ClusterInput> = {};
  for (let i = 0; i < count; i += 1) {
    clusters[`cluster-${String(i).padStart(4, '0')}`] = work({
      enforced: { status: 'False', reason: 'Overridden', message: `AuthPolicy is overridden by [ns/${'l'.repeat(400)}${i}]` },
    });
  }
  return clusters;
}

test('policyStatusAnnotation drops the per-cluster part past 64 KiB and marks the summary truncated', () => {
  const status = aggregatePolicyStatus({ clusters: manyClusters(300) });
  const text = policyStatusAnnotation(status);
  assert.ok(Buffer.byteLength(text) <= MAX_STATUS_ANNOTATION_BYTES);
  assert.equal(text, '{"summary":{"applied":300,"clusters":300,"enforced":0,"failed":0,"overridden":300,"pending":0,"truncated":true}}');
  assert.equal(status.summary.truncated, undefined, 'the input is not modified');
  assert.ok(status.clusters?.['cluster-0000']);
});

test('policyStatusAnnotation keeps the per-cluster part up to 64 KiB', () => {
  // Each entry is a little under 400 bytes (messages cut to 256): 160 fit in 64 KiB, 170 do not.
  const text = policyStatusAnnotation(aggregatePolicyStatus({ clusters: manyClusters(160) }));
  assert.ok(Buffer.byteLength(text) > 60 * 1024 && Buffer.byteLength(text) <= MAX_STATUS_ANNOTATION_BYTES);
  assert.equal(readPolicyStatus(text)?.summary.truncated, undefined);
  assert.equal(Object.keys(readPolicyStatus(text)?.clusters ?? {}).length, 160);
  const over = readPolicyStatus(policyStatusAnnotation(aggregatePolicyStatus({ clusters: manyClusters(170) })));
  assert.equal(over?.summary.truncated, true);
  assert.equal(over?.clusters, undefined);
});

test('readPolicyStatus parses the annotation back, full or truncated', () => {
  const status = aggregatePolicyStatus({ clusters: { c1: work(), c2: { state: 'conflicted', message: 'm' } } });
  assert.deepEqual(readPolicyStatus(policyStatusAnnotation(status)), status);
  const truncated = readPolicyStatus(policyStatusAnnotation(aggregatePolicyStatus({ clusters: manyClusters(300) })));
  assert.deepEqual(truncated, {
    summary: { clusters: 300, applied: 300, enforced: 0, overridden: 300, pending: 0, failed: 0, truncated: true },
  });
});

test('readPolicyStatus is undefined for absent, non-JSON or misshapen values', () => {
  const summary = { clusters: 0, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 0 };
  for (const text of [
    undefined,
    '',
    'not json',
    'null',
    '[]',
    '{}',
    JSON.stringify({ summary: { ...summary, failed: -1 } }),
    JSON.stringify({ summary: { ...summary, truncated: false } }),
    JSON.stringify({ summary, clusters: { c1: { state: 'Enforced' } } }),
    JSON.stringify({ summary, clusters: [] }),
  ]) {
    assert.equal(readPolicyStatus(text), undefined, String(text));
  }
  assert.deepEqual(readPolicyStatus(JSON.stringify({ summary })), { summary });
});

function statusOf(clusters: Record<string, ClusterInput>): PolicyStatus {
  return aggregatePolicyStatus({ clusters });
}

test('statusTransitions reports clusters that became enforced, overridden or failed, sorted by cluster', () => {
  const before = statusOf({ c1: { state: 'pending' }, c2: work(), c3: work(), c4: work() });
  const after = statusOf({
    c4: work({ enforced: { status: 'False', reason: 'Overridden', message: 'AuthPolicy is overridden by [ns/l]' } }),
    c3: work({ applyError: 'boom' }),
    c2: work(),
    c1: work(),
  });
  assert.deepEqual(statusTransitions(before, after), [
    { cluster: 'c1', type: 'Enforced', reason: 'Enforced', message: 'AuthPolicy has been successfully enforced' },
    { cluster: 'c3', type: 'Failed', reason: 'ApplyFailed', message: 'boom' },
    { cluster: 'c4', type: 'Overridden', reason: 'Overridden', message: 'AuthPolicy is overridden by [ns/l]' },
  ]);
});

test('statusTransitions ignores clusters that stay in their category, even with a new reason, and clusters becoming pending', () => {
  const before = statusOf({
    c1: work(),
    c2: work({ applyError: 'a' }),
    c3: work(),
  });
  const after = statusOf({
    c1: work({ enforced: { status: 'True', reason: 'PartiallyEnforced', message: 'partially' } }),
    c2: work({ feedbackError: 'f' }),
    c3: { state: 'pending' },
  });
  assert.deepEqual(statusTransitions(before, after), []);
  assert.deepEqual(statusTransitions(after, after), []);
});

test('statusTransitions: without a previous status every non-pending cluster is new', () => {
  const after = statusOf({ b: { state: 'conflicted', message: 'm' }, a: work(), c: { state: 'pending' } });
  assert.deepEqual(
    statusTransitions(undefined, after).map((t) => [t.cluster, t.type]),
    [
      ['a', 'Enforced'],
      ['b', 'Failed'],
    ],
  );
});

test('statusTransitions: a cluster new since before counts; a truncated before gives nothing', () => {
  const before = statusOf({ a: work() });
  assert.deepEqual(
    statusTransitions(before, statusOf({ a: work(), constructor: work() })).map((t) => t.cluster),
    ['constructor'],
  );
  const truncated = readPolicyStatus(policyStatusAnnotation(statusOf(manyClusters(300))));
  assert.ok(truncated);
  assert.deepEqual(statusTransitions(truncated, statusOf({ a: work({ applyError: 'x' }) })), []);
});

test('problems are kept sorted and deduplicated in the status, survive a round trip, and only new ones are reported', () => {
  const before = aggregatePolicyStatus({
    clusters: {},
    problems: [{ reason: 'TargetNotSynced', message: 'spec.targetRefs[1]: CrossNamespace' }],
  });
  const after = aggregatePolicyStatus({
    clusters: {},
    problems: [
      { reason: 'TargetNotSynced', message: 'spec.targetRefs[1]: CrossNamespace' },
      { reason: 'NoClusters', message: 'placed on no cluster' },
      { reason: 'NoClusters', message: 'placed on no cluster' },
    ],
  });
  assert.deepEqual(after.problems, [
    { reason: 'NoClusters', message: 'placed on no cluster' },
    { reason: 'TargetNotSynced', message: 'spec.targetRefs[1]: CrossNamespace' },
  ]);
  assert.deepEqual(readPolicyStatus(policyStatusAnnotation(after)), after);
  assert.deepEqual(newProblems(readPolicyStatus(policyStatusAnnotation(before)), after), [{ reason: 'NoClusters', message: 'placed on no cluster' }]);
  assert.deepEqual(newProblems(undefined, before), before.problems);
  assert.equal(aggregatePolicyStatus({ clusters: {} }).problems, undefined, 'no problems, no key');
});
