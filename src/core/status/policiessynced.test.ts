import { test } from 'node:test';
import assert from 'node:assert/strict';
import { policiesSyncedAnnotation } from './policiessynced.ts';

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
