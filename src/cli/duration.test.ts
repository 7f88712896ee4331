import assert from 'node:assert/strict';
import { test } from 'node:test';
import { duration, positiveDurationOrMs } from './duration.ts';

test('duration reads Go-style durations as milliseconds', () => {
  assert.equal(duration('15s'), 15_000);
  assert.equal(duration('500ms'), 500);
  assert.equal(duration('1m30s'), 90_000);
  assert.equal(duration('1.5s'), 1_500);
});

test('duration rejects anything else, naming the value', () => {
  for (const bad of ['', '15', 's', '10x', '1s junk', '-1s']) assert.throws(() => duration(bad), new RegExp(`got "${bad}"`));
});

test('positiveDurationOrMs reads a duration, or a bare integer as milliseconds, and nothing else', () => {
  assert.equal(positiveDurationOrMs('200ms'), 200);
  assert.equal(positiveDurationOrMs('1s'), 1_000);
  assert.equal(positiveDurationOrMs('200'), 200);
  for (const bad of ['', '0', '0s', '-1', '1.5', 's', '10x', '200 ms']) assert.throws(() => positiveDurationOrMs(bad), new RegExp(`got "${bad}"`));
});
