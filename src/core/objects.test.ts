import { test } from 'node:test';
import assert from 'node:assert/strict';
import { objectKey } from './objects.ts';

test('objectKey is namespace/name for namespaced objects', () => {
  assert.equal(objectKey({ metadata: { name: 'p', namespace: 'ns' } }), 'ns/p');
});

test('objectKey is the bare name for cluster-scoped objects', () => {
  assert.equal(objectKey({ metadata: { name: 'gc' } }), 'gc');
  assert.equal(objectKey({ metadata: { name: 'gc', namespace: '' } }), 'gc');
});
