import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Condition } from './conditions.ts';
import { enforcedAction, readDisplaced } from './enforcement.ts';
import type { KubeObject } from './objects.ts';

const enforcedTrue: Condition = { type: 'Enforced', status: 'True', reason: 'Enforced', message: 'AuthPolicy has been successfully enforced', lastTransitionTime: 'T0', observedGeneration: 1 };
const overridden: Condition = { type: 'Enforced', status: 'False', reason: 'Overridden', message: 'AuthPolicy is overridden by [ns/local]', lastTransitionTime: 'T1', observedGeneration: 1 };

function policy(conditions: Condition[], displaced?: string): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { name: 'p', namespace: 'ns', ...(displaced === undefined ? {} : { annotations: { 'policysync.kuadrant.io/displaced-enforced': displaced } }) },
    status: { conditions },
  };
}

test('a new conflict takes the condition over, recording the one it displaces', () => {
  assert.deepEqual(enforcedAction(policy([enforcedTrue]), overridden), { action: 'takeOver', displaced: enforcedTrue, condition: overridden });
  assert.deepEqual(enforcedAction(policy([]), overridden), { action: 'takeOver', displaced: null, condition: overridden });
});

test('an unchanged verdict writes nothing; a changed message updates and keeps the transition time of an unchanged status', () => {
  const taken = policy([overridden], JSON.stringify(enforcedTrue));
  assert.deepEqual(enforcedAction(taken, { ...overridden, lastTransitionTime: 'T9' }), { action: 'none' });
  const changed = { ...overridden, message: 'AuthPolicy is overridden by [ns/a, ns/local]', lastTransitionTime: 'T9' };
  assert.deepEqual(enforcedAction(taken, changed), { action: 'update', condition: { ...changed, lastTransitionTime: 'T1' } });
});

test('the end of a conflict restores the displaced condition, or drops ours when there was none', () => {
  assert.deepEqual(enforcedAction(policy([overridden], JSON.stringify(enforcedTrue)), undefined), { action: 'release', restore: enforcedTrue });
  assert.deepEqual(enforcedAction(policy([overridden], 'null'), undefined), { action: 'release', restore: undefined });
  assert.deepEqual(enforcedAction(policy([enforcedTrue]), undefined), { action: 'none' }, 'never taken over: the spoke status is left alone');
});

test('readDisplaced tells a recorded condition, a recorded absence, no record, and a mangled record apart', () => {
  assert.deepEqual(readDisplaced(policy([], JSON.stringify(enforcedTrue))), enforcedTrue);
  assert.equal(readDisplaced(policy([], 'null')), null);
  assert.equal(readDisplaced(policy([])), undefined);
  assert.equal(readDisplaced(policy([], '{not json')), null);
});
