import assert from 'node:assert/strict';
import { test } from 'node:test';
import { duration } from './duration.ts';

test('duration reads Go-style durations as milliseconds', () => {
  assert.equal(duration('15s'), 15_000);
  assert.equal(duration('500ms'), 500);
  assert.equal(duration('1m30s'), 90_000);
  assert.equal(duration('1.5s'), 1_500);
});

test('duration rejects anything else, naming the value', () => {
  for (const bad of ['', '15', 's', '10x', '1s junk', '-1s']) assert.throws(() => duration(bad), new RegExp(`got "${bad}"`));
});
