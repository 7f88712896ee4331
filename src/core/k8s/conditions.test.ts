import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conditionsUpToDate, mergeConditions, type Condition } from './conditions.ts';

const accepted = (status: Condition['status'], reason: string, gen = 1): Condition => ({ type: 'Accepted', status, reason, message: 'm', observedGeneration: gen });

test('mergeConditions keeps lastTransitionTime while the status is unchanged and stamps it on a change', () => {
  const existing = [{ ...accepted('True', 'Accepted'), lastTransitionTime: '2026-01-01T00:00:00Z' }];
  assert.equal(mergeConditions(existing, [accepted('True', 'Accepted', 2)], 'NOW')[0]?.lastTransitionTime, '2026-01-01T00:00:00Z');
  assert.equal(mergeConditions(existing, [accepted('False', 'InvalidParameters', 2)], 'NOW')[0]?.lastTransitionTime, 'NOW');
});

test('mergeConditions keeps conditions of other types after the desired ones', () => {
  const other: Condition = { type: 'Other', status: 'True', reason: 'X', message: '', lastTransitionTime: 'T' };
  assert.deepEqual(mergeConditions([other], [accepted('True', 'Accepted')], 'NOW').map((c) => c.type), ['Accepted', 'Other']);
});

test('conditionsUpToDate compares status, reason, message and observedGeneration', () => {
  const written = [{ ...accepted('True', 'Accepted'), lastTransitionTime: 'T' }];
  assert.equal(conditionsUpToDate(written, [accepted('True', 'Accepted')]), true);
  assert.equal(conditionsUpToDate(written, [accepted('True', 'Accepted', 2)]), false);
  assert.equal(conditionsUpToDate(written, [{ ...accepted('True', 'Accepted'), message: 'other' }]), false);
  assert.equal(conditionsUpToDate([], [accepted('True', 'Accepted')]), false);
});
