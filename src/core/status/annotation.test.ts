import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_STATUS_ANNOTATION_BYTES, policyStatusAnnotation, readPolicyStatus } from './annotation.ts';
import { MAX_OVERRIDDEN_BY, aggregatePolicyStatus } from './policystatus.ts';
import type { ClusterInput, ClusterStatus, PolicyStatus } from './policystatus.ts';
import { canonicalJson } from '../k8s/canonical.ts';
import { statusTransitions } from './transitions.ts';
import { NOW, manyClusters, work, one } from '../../../testkit/statusfixtures.ts';

test('a cluster\'s message is cut to 256 characters in the status', () => {
  assert.equal(one(work({ enforced: { status: 'False', reason: 'Overridden', message: 'm'.repeat(1000) } })).message.length, 256);
  assert.equal(one({ state: 'conflicted', message: 'c'.repeat(1000) }).message.length, 256);
});

test('policyStatusAnnotation is canonical JSON with sorted keys', () => {
  const status = aggregatePolicyStatus({ now: NOW, clusters: { c2: { state: 'pending' }, c1: work() } });
  const text = policyStatusAnnotation(status);
  assert.equal(
    text,
    '{"clusters":{"c1":{"applied":true,"available":true,"enforced":"True","message":"AuthPolicy has been successfully enforced",' +
      '"reason":"Enforced","state":"Enforced","upToDate":true},"c2":{"applied":false,"available":false,"enforced":"Unknown",' +
      '"message":"waiting for the ManifestWork status from the cluster","reason":"Pending","state":"Pending","upToDate":false}},' +
      '"summary":{"applied":1,"clusters":2,"enforced":1,"failed":0,"overridden":0,"pending":1}}',
  );
  // Input order does not matter.
  assert.equal(policyStatusAnnotation(aggregatePolicyStatus({ now: NOW, clusters: { c1: work(), c2: { state: 'pending' } } })), text);
});

test('policyStatusAnnotation drops the per-cluster part past 64 KiB and marks the summary truncated', () => {
  const status = aggregatePolicyStatus({ now: NOW, clusters: manyClusters(300) });
  const text = policyStatusAnnotation(status);
  assert.ok(Buffer.byteLength(text) <= MAX_STATUS_ANNOTATION_BYTES);
  assert.equal(text, '{"summary":{"applied":300,"clusters":300,"enforced":0,"failed":0,"overridden":300,"pending":0,"truncated":true}}');
  assert.equal(status.summary.truncated, undefined, 'the input is not modified');
  assert.ok(status.clusters?.['cluster-0000']);
});

test('policyStatusAnnotation keeps the per-cluster part up to 64 KiB', () => {
  // Each entry is a little under 400 bytes (messages cut to 256): 160 fit in 64 KiB, 170 do not.
  const text = policyStatusAnnotation(aggregatePolicyStatus({ now: NOW, clusters: manyClusters(160) }));
  assert.ok(Buffer.byteLength(text) > 60 * 1024 && Buffer.byteLength(text) <= MAX_STATUS_ANNOTATION_BYTES);
  assert.equal(readPolicyStatus(text)?.summary.truncated, undefined);
  assert.equal(Object.keys(readPolicyStatus(text)?.clusters ?? {}).length, 160);
  const over = readPolicyStatus(policyStatusAnnotation(aggregatePolicyStatus({ now: NOW, clusters: manyClusters(170) })));
  assert.equal(over?.summary.truncated, true);
  assert.equal(over?.clusters, undefined);
});

test('policyStatusAnnotation past 64 KiB keeps the clusters no work shows (not applied), and drops those too when they do not fit', () => {
  const withdrawn = (i: number): ClusterInput => ({ state: 'overridden', message: `AuthPolicy is overridden by [ns/local-${i}]`, by: [`ns/local-${i}`] });
  const status = aggregatePolicyStatus({
    now: NOW,
    clusters: { ...manyClusters(300), 'gone-1': withdrawn(1), 'gone-2': withdrawn(2), lost: { state: 'conflicted', message: 'synced by another' } },
  });
  const read = readPolicyStatus(policyStatusAnnotation(status));
  assert.deepEqual(read?.summary, { clusters: 303, applied: 300, enforced: 0, overridden: 302, pending: 0, failed: 1, truncated: true });
  assert.deepEqual(Object.keys(read?.clusters ?? {}), ['gone-1', 'gone-2', 'lost']);
  assert.deepEqual(read?.clusters?.['gone-1'], status.clusters?.['gone-1']);

  const tooMany: Record<string, ClusterInput> = {};
  for (let i = 0; i < 300; i += 1) tooMany[`gone-${i}`] = { state: 'overridden', message: `AuthPolicy is overridden by [ns/${'l'.repeat(400)}${i}]`, by: [`ns/${'l'.repeat(400)}${i}`] };
  const text = policyStatusAnnotation(aggregatePolicyStatus({ now: NOW, clusters: tooMany }));
  assert.ok(Buffer.byteLength(text) <= MAX_STATUS_ANNOTATION_BYTES);
  // As many as fit, in the order a cut keeps them (all overridden here: by name).
  const kept = Object.keys(readPolicyStatus(text)?.clusters ?? {});
  assert.ok(kept.length > 0 && kept.length < 300, `${kept.length} kept`);
  assert.deepEqual(kept, Object.keys(tooMany).sort().slice(0, kept.length));
  assert.equal(readPolicyStatus(text)?.summary.overridden, 300);
});

test('a fleet of 3,500 clusters: the annotation keeps its budget and the counts per state, and names the failing clusters first, then those no work shows, never the enforced', () => {
  const failed = (i: number): ClusterInput => work({ enforced: { status: 'False', reason: 'Invalid', message: `AuthPolicy target is invalid: ${'x'.repeat(200)} ${i}` } });
  const clusters: Record<string, ClusterInput> = {};
  for (let i = 0; i < 3_050; i += 1) clusters[`ok-${String(i).padStart(4, '0')}`] = work();
  for (let i = 0; i < 400; i += 1) clusters[`bad-${String(i).padStart(4, '0')}`] = failed(i);
  for (let i = 0; i < 50; i += 1) clusters[`new-${String(i).padStart(4, '0')}`] = { state: 'waiting', message: 'waiting for the spoke agent\'s first report' };
  const status = aggregatePolicyStatus({ now: NOW, clusters });
  const text = policyStatusAnnotation(status);
  assert.ok(Buffer.byteLength(text) <= MAX_STATUS_ANNOTATION_BYTES);
  const read = readPolicyStatus(text)!;
  const { truncated, ...counts } = read.summary;
  assert.equal(truncated, true);
  assert.deepEqual(counts, status.summary);
  assert.equal(counts.clusters, 3_500);
  const kept = Object.keys(read.clusters ?? {});
  assert.equal(kept.filter((c) => c.startsWith('ok-')).length, 0, 'no enforced cluster takes the room');
  assert.equal(kept.filter((c) => c.startsWith('new-')).length, 50, 'every cluster no work shows');
  const bad = kept.filter((c) => c.startsWith('bad-'));
  assert.ok(bad.length > 0 && bad.length < 400, `${bad.length} failing clusters fit beside them`);
  assert.deepEqual(bad, Object.keys(clusters).filter((c) => c.startsWith('bad-')).sort().slice(0, bad.length), 'the failing kept are a prefix, by name');
});

test('readPolicyStatus parses the annotation back, full or truncated', () => {
  const status = aggregatePolicyStatus({ now: NOW, clusters: { c1: work(), c2: { state: 'conflicted', message: 'm' } } });
  assert.deepEqual(readPolicyStatus(policyStatusAnnotation(status)), status);
  const truncated = readPolicyStatus(policyStatusAnnotation(aggregatePolicyStatus({ now: NOW, clusters: manyClusters(300) })));
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

test('policyStatusAnnotation writes the values sorted, and readPolicyStatus reads them back', () => {
  const status = aggregatePolicyStatus({ now: NOW, clusters: { c1: work({ extra: { phase: 'Ready', limitsTotal: 4 } }) } });
  const text = policyStatusAnnotation(status);
  assert.match(text, /"statusFeedback":\{"limitsTotal":4,"phase":"Ready"\}/);
  assert.deepEqual(readPolicyStatus(text), status);
  const badValue = JSON.parse(text) as { clusters: { c1: { statusFeedback: unknown } } };
  badValue.clusters.c1.statusFeedback = { x: { nested: true } };
  assert.equal(readPolicyStatus(JSON.stringify(badValue)), undefined);
});

function clustersWithValues(count: number, valueBytes: number): Record<string, ClusterInput> {
  const clusters: Record<string, ClusterInput> = {};
  for (let i = 0; i < count; i += 1) {
    const values = Object.fromEntries(Array.from({ length: 4 }, (_, j) => [`value${j}`, `${'v'.repeat(valueBytes)}${i}`]));
    clusters[`valued-${String(i).padStart(4, '0')}`] = work({ extra: values });
  }
  return clusters;
}

test('policyStatusAnnotation past 64 KiB leaves out the statusFeedback values first, keeping the clusters', () => {
  // ~250 bytes of state and ~1 KiB of values per cluster: 100 clusters fit without the values only.
  const status = aggregatePolicyStatus({ now: NOW, clusters: clustersWithValues(100, 250) });
  assert.ok(Buffer.byteLength(JSON.stringify(status)) > MAX_STATUS_ANNOTATION_BYTES);
  const text = policyStatusAnnotation(status);
  assert.ok(Buffer.byteLength(text) <= MAX_STATUS_ANNOTATION_BYTES);
  const read = readPolicyStatus(text);
  assert.equal(read?.summary.truncated, true);
  assert.equal(Object.keys(read?.clusters ?? {}).length, 100);
  assert.ok(Object.values(read?.clusters ?? {}).every((c) => c.statusFeedback === undefined && c.state === 'Enforced'));
  assert.deepEqual(statusTransitions(read, status), [], 'the per-cluster states are still known: no Event storm');
  assert.ok(status.clusters?.['valued-0000']?.statusFeedback, 'the input is not modified');
});

test('policyStatusAnnotation keeps only the summary when the clusters do not fit even without values', () => {
  const text = policyStatusAnnotation(aggregatePolicyStatus({ now: NOW, clusters: { ...clustersWithValues(300, 250), ...manyClusters(300) } }));
  assert.ok(Buffer.byteLength(text) <= MAX_STATUS_ANNOTATION_BYTES);
  assert.deepEqual(readPolicyStatus(text), {
    summary: { clusters: 600, applied: 600, enforced: 300, overridden: 300, pending: 0, failed: 0, truncated: true },
  });
});

test('policyStatusAnnotation: values within the budget are kept whole and nothing is truncated', () => {
  const text = policyStatusAnnotation(aggregatePolicyStatus({ now: NOW, clusters: clustersWithValues(20, 250) }));
  const read = readPolicyStatus(text);
  assert.equal(read?.summary.truncated, undefined);
  assert.equal(Object.values(read?.clusters ?? {}).filter((c) => c.statusFeedback !== undefined).length, 20);
});

test('the overriding local policies stay within the annotation budget: capped per cluster, and cut with the clusters', () => {
  // The longest names a spoke report allows (a 63-character namespace, a 253-character name), more than the cap.
  const longest = (i: number, j: number) => `${'n'.repeat(60)}${String(i).padStart(3, '0')}/${'l'.repeat(250)}${String(j).padStart(3, '0')}`;
  const overridden = (i: number): ClusterInput => ({ state: 'overridden', message: 'AuthPolicy is overridden by […]', by: Array.from({ length: 20 }, (_, j) => longest(i, j)) });
  const few = readPolicyStatus(policyStatusAnnotation(aggregatePolicyStatus({ now: NOW, clusters: { c1: overridden(1), c2: overridden(2) } })));
  assert.equal(few?.summary.truncated, undefined);
  assert.equal(few?.clusters?.c1?.overriddenBy?.length, MAX_OVERRIDDEN_BY);
  assert.equal(few?.clusters?.c1?.overriddenByMore, 20 - MAX_OVERRIDDEN_BY);
  const many: Record<string, ClusterInput> = {};
  for (let i = 0; i < 300; i += 1) many[`c${i}`] = overridden(i);
  const text = policyStatusAnnotation(aggregatePolicyStatus({ now: NOW, clusters: many }));
  assert.ok(Buffer.byteLength(text) <= MAX_STATUS_ANNOTATION_BYTES);
  assert.deepEqual(readPolicyStatus(text)?.summary, { clusters: 300, applied: 0, enforced: 0, overridden: 300, pending: 0, failed: 0, truncated: true });
});

test('readPolicyStatus reads an annotation written before overriddenBy was: no names, the rest as it was', () => {
  const old = '{"clusters":{"c2":{"applied":false,"available":false,"enforced":"False","message":"AuthPolicy is overridden by [ns/local]","reason":"Overridden","state":"Overridden","upToDate":true}},"summary":{"applied":0,"clusters":1,"enforced":0,"failed":0,"overridden":1,"pending":0}}';
  const read = readPolicyStatus(old);
  assert.equal(read?.clusters?.c2?.state, 'Overridden');
  assert.equal(read?.clusters?.c2 && 'overriddenBy' in read.clusters.c2, false);
  assert.equal(policyStatusAnnotation(read), old, 'and writes it back as it was');
});

test('policyStatusAnnotation keeps every cluster of a large fleet whose entries are short enough to fit', () => {
  // 560 clusters at about the fewest bytes an entry can take (one- and two-character names, empty messages): the
  // whole text fits (64,472 bytes), so no shortcut past the first step may drop it.
  const clusters: Record<string, ClusterStatus> = {};
  for (let i = 0; i < 560; i += 1) clusters[i.toString(36)] = { state: 'Failed', applied: true, available: true, enforced: 'True', reason: '', message: '', upToDate: true };
  const status: PolicyStatus = { summary: { clusters: 560, applied: 560, enforced: 0, overridden: 0, pending: 0, failed: 560 }, clusters };
  const text = policyStatusAnnotation(status);
  assert.ok(Buffer.byteLength(text) > 60 * 1024 && Buffer.byteLength(text) <= MAX_STATUS_ANNOTATION_BYTES, `${Buffer.byteLength(text)} bytes`);
  assert.ok(text === canonicalJson(status), 'the whole status');
});
