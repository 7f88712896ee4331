import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../k8s/objects.ts';
import { countWorkStates, workState } from './workstate.ts';

function work(generation: number, conditions?: unknown[]): KubeObject {
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name: 'w', namespace: 'c1', generation },
    ...(conditions ? { status: { conditions } } : {}),
  };
}
const applied = (status: string, observedGeneration?: number) => ({ type: 'Applied', status, reason: 'x', message: '', observedGeneration });

test('a work without status, or without an Applied condition, is pending', () => {
  assert.equal(workState(work(1)), 'pending');
  assert.equal(workState(work(1, [])), 'pending');
  assert.equal(workState(work(1, [{ type: 'Available', status: 'True' }])), 'pending');
  assert.equal(workState({ ...work(1), status: { conditions: 'garbage' } }), 'pending');
});

test('Applied True / False for the current generation is applied / failed', () => {
  assert.equal(workState(work(2, [applied('True', 2)])), 'applied');
  assert.equal(workState(work(2, [applied('False', 2)])), 'failed');
  assert.equal(workState(work(2, [applied('Unknown', 2)])), 'pending');
  assert.equal(workState(work(2, [applied('True')])), 'applied', 'no observedGeneration counts as current');
});

test('an Applied condition of an older generation is pending', () => {
  assert.equal(workState(work(3, [applied('True', 2)])), 'pending');
  assert.equal(workState(work(3, [applied('False', 2)])), 'pending');
});

test('countWorkStates counts every state, zeros included', () => {
  assert.deepEqual(countWorkStates([work(1), work(1, [applied('True', 1)]), work(1)]), { applied: 1, failed: 0, pending: 2 });
  assert.deepEqual(countWorkStates([]), { applied: 0, failed: 0, pending: 0 });
});
