import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WriteExpectations } from './writeexpectations.ts';

test('a written hash stands in for a stale cache until the cache shows it', () => {
  const now = 0;
  const e = new WriteExpectations(() => now);
  e.applied('c1/w', 'new');
  assert.deepEqual(e.observe('c1/w', 'old'), { present: true, specHash: 'new' });
  assert.deepEqual(e.observe('c1/w', null), { present: true, specHash: 'new' });
  assert.deepEqual(e.observe('c1/w', 'new'), { present: true, specHash: 'new' });
  // caught up: the entry is gone, so a later external change is seen as it is
  assert.deepEqual(e.observe('c1/w', 'changed'), { present: true, specHash: 'changed' });
});

test('a deletion hides the cached work until the cache drops it', () => {
  const e = new WriteExpectations(() => 0);
  e.deleted('c1/w');
  assert.deepEqual(e.observe('c1/w', 'h'), { present: false });
  assert.deepEqual(e.observe('c1/w', null), { present: false });
  assert.deepEqual(e.observe('c1/w', 'h'), { present: true, specHash: 'h' });
});

test('an expectation the cache never confirms expires', () => {
  let now = 0;
  const e = new WriteExpectations(() => now);
  e.applied('c1/w', 'new');
  now = 31_000;
  assert.deepEqual(e.observe('c1/w', 'other'), { present: true, specHash: 'other' });
});

test('an expectation the cache never confirms hands its owner back once, on expiry', () => {
  let now = 0;
  const e = new WriteExpectations(() => now);
  e.applied('c1/w1', 'h', 'policy-a');
  e.deleted('c1/w2', 'policy-a');
  e.applied('c2/w3', 'h', 'policy-b');
  now = 10_000;
  e.applied('c3/w4', 'h', 'policy-c');
  assert.deepEqual(e.expired(), [], 'nothing is old enough yet');
  now = 30_001;
  assert.deepEqual(e.expired().sort(), ['policy-a', 'policy-b']);
  assert.deepEqual(e.expired(), [], 'each expectation is handed back once');
  assert.equal(e.size, 1);
  now = 40_001;
  assert.deepEqual(e.expired(), ['policy-c']);
});

test('confirm ends an expectation when the cache shows exactly the write expected, and only then', () => {
  const e = new WriteExpectations(() => 0);
  e.applied('c1/w', 'h1');
  assert.equal(e.confirm('c1/w', 'h0'), false, 'another spec-hash');
  assert.equal(e.confirm('c2/w', 'h1'), false, 'another work');
  assert.equal(e.confirm('c1/w', 'h1'), true);
  assert.equal(e.size, 0);
  assert.equal(e.confirm('c1/w', 'h1'), false, 'nothing expected any more');
  e.deleted('c1/w');
  assert.equal(e.confirm('c1/w', undefined), false, 'a deletion is never confirmed by an object');
});

test('a failed write is undone: what was expected before is expected again; an undo after the cache confirmed is a no-op', () => {
  const e = new WriteExpectations(() => 0);
  const undoFirst = e.applied('c1/w', 'h1');
  const undoSecond = e.applied('c1/w', 'h2');
  undoSecond();
  assert.deepEqual(e.observe('c1/w', null), { present: true, specHash: 'h1' }, 'the first write is still expected');
  undoFirst();
  assert.deepEqual(e.observe('c1/w', null), { present: false });
  const undo = e.applied('c1/w', 'h3');
  assert.equal(e.confirm('c1/w', 'h3'), true);
  undo();
  assert.equal(e.size, 0);
  const undoDelete = e.deleted('c2/w');
  undoDelete();
  assert.deepEqual(e.observe('c2/w', 'h'), { present: true, specHash: 'h' });
});
