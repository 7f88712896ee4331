import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../k8s/objects.ts';
import { AGENT_FINALIZER, agentTakingUp, countWorkStates, workState } from './workstate.ts';

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

test('agentTakingUp: the agent\'s finalizer on and no Applied condition yet; without the finalizer, or once Applied is written (True or False, any generation), not', () => {
  const withFinalizer = (w: KubeObject): KubeObject => ({ ...w, metadata: { ...w.metadata, finalizers: ['other', AGENT_FINALIZER] } });
  assert.equal(agentTakingUp(work(1)), false, 'no agent has seen it: a delete removes it before anything is applied');
  assert.equal(agentTakingUp(withFinalizer(work(1))), true);
  assert.equal(agentTakingUp(withFinalizer(work(1, [{ type: 'Available', status: 'True' }]))), true);
  assert.equal(agentTakingUp(withFinalizer({ ...work(1), status: { conditions: 'garbage' } })), true);
  assert.equal(agentTakingUp(withFinalizer(work(1, [applied('False', 1)]))), false);
  assert.equal(agentTakingUp(withFinalizer(work(2, [applied('True', 1)]))), false, 'an older generation applied: the AppliedManifestWork exists');
  assert.equal(agentTakingUp({ ...work(1, []), metadata: { ...work(1).metadata, finalizers: ['other'] } }), false);
});
