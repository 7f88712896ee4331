import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LINGER_GRACE_MS, type LingeringCopy } from '../core/spoke/spoketruth.ts';
import { LingerClocks } from './lingerclocks.ts';

const NOW = Date.parse('2026-12-02T06:00:00Z');
const copy = (cluster: string, name: string, seenSince: number): LingeringCopy => ({ cluster, kind: 'authpolicies.kuadrant.io', namespace: 'ns', name, seenSince, lingering: NOW - seenSince >= LINGER_GRACE_MS });

test('lingeringUncounted: the copies past their grace of the policies no status counts (a deleted policy\'s); those being removed, and a counted policy\'s, are not', () => {
  const clocks = new LingerClocks();
  clocks.record('gone', [copy('c1', 'a', NOW - LINGER_GRACE_MS), copy('c2', 'a', NOW - 1_000)]);
  clocks.record('live', [copy('c1', 'b', NOW - 2 * LINGER_GRACE_MS)]);
  assert.equal(clocks.lingeringUncounted((p) => p === 'live', NOW), 1);
  assert.equal(clocks.lingeringUncounted(() => false, NOW), 2);
  assert.equal(clocks.lingeringUncounted(() => false, NOW + LINGER_GRACE_MS), 3, 'the one being removed lingers once its grace ends');
  clocks.forget('gone');
  assert.equal(clocks.lingeringUncounted(() => false, NOW), 1);
});

test('watches: a cluster where any policy\'s copy is seen lingering or being removed; none once they are recorded gone', () => {
  const clocks = new LingerClocks();
  clocks.record('gone', [copy('c1', 'a', NOW)]);
  assert.equal(clocks.watches('c1'), true);
  assert.equal(clocks.watches('c2'), false);
  clocks.record('gone', []);
  assert.equal(clocks.watches('c1'), false);
});
