import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FairGate } from './fairgate.ts';
import { FakeClock } from '../../testkit/fake-clock.ts';
import { TokenBucket } from './ratelimiter.ts';

test('under contention the lanes take turns: a lane with one write waiting is served next, not after a long queue', async () => {
  const clock = new FakeClock();
  const gate = new FairGate(new TokenBucket({ qps: 1, burst: 1, clock }));
  const order: string[] = [];
  const done = [
    ...Array.from({ length: 5 }, (_, i) => gate.take('flapping').then(() => order.push(`flapping-${i}`))),
    gate.take('quiet').then(() => order.push('quiet-0')),
    gate.take('other').then(() => order.push('other-0')),
  ];
  await clock.advanceAsync(10_000);
  await Promise.all(done);
  assert.deepEqual(order, ['flapping-0', 'quiet-0', 'other-0', 'flapping-1', 'flapping-2', 'flapping-3', 'flapping-4']);
  assert.equal(gate.waiting, 0);
});

test('without contention a write goes at once, at the bucket\'s rate', async () => {
  const clock = new FakeClock();
  const gate = new FairGate(new TokenBucket({ qps: 1, burst: 3, clock }));
  let passed = 0;
  for (let i = 0; i < 3; i++) void gate.take('a').then(() => passed++);
  await clock.advanceAsync(0);
  assert.equal(passed, 3, 'the burst passes without waiting');
  void gate.take('a').then(() => passed++);
  await clock.advanceAsync(999);
  assert.equal(passed, 3);
  await clock.advanceAsync(1);
  assert.equal(passed, 4);
});
