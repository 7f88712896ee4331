import { test } from 'node:test';
import assert from 'node:assert/strict';
import { differsOnlyInAnnotations, objectKey, type KubeObject } from './objects.ts';

test('objectKey is namespace/name for namespaced objects', () => {
  assert.equal(objectKey({ metadata: { name: 'p', namespace: 'ns' } }), 'ns/p');
});

test('objectKey is the bare name for cluster-scoped objects', () => {
  assert.equal(objectKey({ metadata: { name: 'gc' } }), 'gc');
  assert.equal(objectKey({ metadata: { name: 'gc', namespace: '' } }), 'gc');
});

test('differsOnlyInAnnotations: only the named annotations (and resourceVersion, managedFields) may differ', () => {
  const base: KubeObject = { apiVersion: 'v1', kind: 'X', metadata: { name: 'a', namespace: 'n', resourceVersion: '1', annotations: { mine: '1', theirs: 'x' } }, spec: { s: 1 } };
  const ours = { ...base, metadata: { ...base.metadata, resourceVersion: '2', managedFields: [{}], annotations: { mine: '2', theirs: 'x' } } };
  assert.equal(differsOnlyInAnnotations(base, ours, ['mine']), true);
  const added = { ...base, metadata: { ...base.metadata, annotations: { theirs: 'x' } } };
  assert.equal(differsOnlyInAnnotations(added, base, ['mine']), true, 'ours added or removed');
  assert.equal(differsOnlyInAnnotations(base, { ...ours, metadata: { ...ours.metadata, annotations: { mine: '2', theirs: 'y' } } }, ['mine']), false, 'another annotation');
  assert.equal(differsOnlyInAnnotations(base, { ...ours, spec: { s: 2 } }, ['mine']), false, 'the spec');
  assert.equal(differsOnlyInAnnotations(base, { ...ours, metadata: { ...ours.metadata, labels: { l: 'v' } } }, ['mine']), false, 'a label');
  assert.equal(differsOnlyInAnnotations(base, { ...ours, metadata: { ...ours.metadata, deletionTimestamp: 'now' } }, ['mine']), false, 'deletion');
  assert.equal(differsOnlyInAnnotations(base, { ...ours, status: { s: 1 } }, ['mine']), false, 'the status');
});
