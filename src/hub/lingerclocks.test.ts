import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LINGER_GRACE_MS, type LingeringCopy } from '../core/spoke/spoketruth.ts';
import { DELETED_KEPT_MS, LingerClocks } from './lingerclocks.ts';

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

test("lingeringOnGateway: a deleted policy's copies past their grace, on the Gateways it targeted; none being removed, none once it exists again, none for another Gateway", () => {
  const clocks = new LingerClocks();
  const gone = { group: 'kuadrant.io', resource: 'authpolicies', kind: 'AuthPolicy', namespace: 'ns', name: 'gone', gateways: ['ns/gw', 'ns/edge'] };
  clocks.deleted('gone', gone, NOW);
  clocks.record('gone', [copy('c2', 'gone', NOW - LINGER_GRACE_MS), copy('c1', 'gone', NOW - 1_000)], NOW);
  const on = clocks.lingeringOnGateway('ns/gw', () => false, NOW);
  assert.deepEqual(on, [{ group: 'kuadrant.io', resource: 'authpolicies', kind: 'AuthPolicy', namespace: 'ns', name: 'gone', clusters: ['c2'] }]);
  assert.deepEqual(clocks.lingeringOnGateway('ns/gw', () => false, NOW + LINGER_GRACE_MS)[0]?.clusters, ['c1', 'c2'], 'the one being removed lingers once its grace ends');
  assert.deepEqual(clocks.lingeringOnGateway('ns/other', () => false, NOW), []);
  assert.deepEqual(clocks.lingeringOnGateway('ns/gw', (p) => p === 'gone', NOW), [], 'created again: its own status says it');
  assert.deepEqual(clocks.gatewaysOfDeleted('gone'), ['ns/gw', 'ns/edge']);
});

test('deleted policies are kept while their copies are seen and for a while after; forget drops them', () => {
  const clocks = new LingerClocks();
  const gone = { group: 'kuadrant.io', resource: 'authpolicies', namespace: 'ns', name: 'gone', gateways: ['ns/gw'] };
  clocks.deleted('gone', gone, NOW);
  clocks.deleted('quiet', { ...gone, name: 'quiet' }, NOW);
  clocks.record('gone', [copy('c1', 'gone', NOW)], NOW + DELETED_KEPT_MS);
  assert.deepEqual(clocks.gatewaysOfDeleted('gone'), ['ns/gw'], 'its copy is still seen');
  assert.deepEqual(clocks.gatewaysOfDeleted('quiet'), [], 'none seen past the time kept');
  clocks.record('gone', [], NOW + DELETED_KEPT_MS - 1);
  assert.deepEqual(clocks.gatewaysOfDeleted('gone'), ['ns/gw'], 'kept a while after its copies went: a report may lag');
  clocks.forget('gone');
  assert.deepEqual(clocks.gatewaysOfDeleted('gone'), []);
});
