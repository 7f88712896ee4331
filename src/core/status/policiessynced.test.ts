import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkProperty, oddText } from '../../../testkit/arbitraries.ts';
import { canonicalJson } from '../k8s/canonical.ts';
import { MAX_POLICIES_SYNCED_BYTES, policiesSyncedAnnotation } from './policiessynced.ts';

test('policiesSyncedAnnotation writes the RFC format with keys cluster, name, namespace', () => {
  assert.equal(policiesSyncedAnnotation([{ namespace: 'ns', name: 'p', cluster: 'c1' }]), '[{"cluster":"c1","name":"p","namespace":"ns"}]');
});

test('policiesSyncedAnnotation sorts by cluster, then namespace, then name, and drops duplicates', () => {
  const value = policiesSyncedAnnotation([
    { cluster: 'c2', name: 'p', namespace: 'a' },
    { cluster: 'c1', name: 'a', namespace: 'z' },
    { cluster: 'c1', name: 'b', namespace: 'a' },
    { cluster: 'c1', name: 'a', namespace: 'a' },
    { cluster: 'c2', name: 'p', namespace: 'a' },
  ]);
  assert.equal(
    value,
    '[{"cluster":"c1","name":"a","namespace":"a"},{"cluster":"c1","name":"b","namespace":"a"},' +
      '{"cluster":"c1","name":"a","namespace":"z"},{"cluster":"c2","name":"p","namespace":"a"}]',
  );
});

test('policiesSyncedAnnotation is undefined for no entries, so the annotation is removed', () => {
  assert.equal(policiesSyncedAnnotation([]), undefined);
});

test('policiesSyncedAnnotation on a fleet too large for it names the first clusters by name that fit its budget, as many as fit', () => {
  const entries = Array.from({ length: 3500 }, (_, i) => ({ cluster: `cluster-${String(i).padStart(5, '0')}`, name: 'p-00001', namespace: 'bench-0123456789' }));
  const value = policiesSyncedAnnotation([...entries].reverse())!;
  assert.ok(Buffer.byteLength(value, 'utf8') <= MAX_POLICIES_SYNCED_BYTES, `${value.length} bytes`);
  const listed = JSON.parse(value) as typeof entries;
  assert.ok(listed.length > 1000 && listed.length < entries.length, `${listed.length} listed`);
  assert.deepEqual(listed, entries.slice(0, listed.length), 'the first by cluster name');
  const oneMore = policiesSyncedAnnotation(entries.slice(0, listed.length + 1))!;
  assert.ok(Buffer.byteLength(JSON.stringify(entries.slice(0, listed.length + 1)), 'utf8') > MAX_POLICIES_SYNCED_BYTES, 'one more would not fit');
  assert.equal(oneMore, value, 'cut alike whatever lies past the budget');
  // Within the budget: the whole list.
  assert.equal((JSON.parse(policiesSyncedAnnotation(entries.slice(0, 100))!) as unknown[]).length, 100);
});

test('policiesSyncedAnnotation within its budget is the canonical JSON of the entries sorted and deduplicated, whatever their characters', (t) => {
  const entry = fc.record({ cluster: oddText({ maxLength: 12 }), name: oddText({ maxLength: 12 }), namespace: oddText({ maxLength: 12 }) });
  checkProperty(t, 200, [fc.array(entry, { minLength: 1, maxLength: 30 })], (entries) => {
    const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
    const unique = [...new Map(entries.map((e) => [JSON.stringify([e.cluster, e.namespace, e.name]), e])).values()];
    const sorted = unique.sort((a, b) => cmp(a.cluster, b.cluster) || cmp(a.namespace, b.namespace) || cmp(a.name, b.name));
    assert.equal(policiesSyncedAnnotation(entries), canonicalJson(sorted.map(({ cluster, name, namespace }) => ({ namespace, name, cluster }))));
  });
});
