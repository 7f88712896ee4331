import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../testkit/fake-clock.ts';
import {
  BucketRateLimiter,
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
  TokenBucket,
  defaultControllerRateLimiter,
} from './ratelimiter.ts';
import type { RateLimiter } from './ratelimiter.ts';

describe('ItemExponentialRateLimiter', () => {
  it('doubles from 5 ms per failure of an item and counts requeues', () => {
    const rl = new ItemExponentialRateLimiter();
    assert.deepEqual(
      Array.from({ length: 6 }, () => rl.when('a')),
      [5, 10, 20, 40, 80, 160],
    );
    assert.equal(rl.numRequeues('a'), 6);
  });

  it('tracks items independently', () => {
    const rl = new ItemExponentialRateLimiter();
    rl.when('a');
    rl.when('a');
    assert.equal(rl.when('b'), 5);
    assert.equal(rl.numRequeues('b'), 1);
    assert.equal(rl.numRequeues('a'), 2);
  });

  it('caps at 1000 s, even after very many failures', () => {
    const rl = new ItemExponentialRateLimiter();
    const delays = Array.from({ length: 2000 }, () => rl.when('a'));
    // 5 ms × 2^17 = 655.36 s < 1000 s; 5 ms × 2^18 = 1310.72 s > 1000 s.
    assert.equal(delays[17], 655_360);
    assert.equal(delays[18], 1_000_000);
    assert.equal(delays[1999], 1_000_000);
    assert.ok(delays.every((d) => Number.isFinite(d) && d <= 1_000_000));
  });

  it('forget resets the item to the base delay', () => {
    const rl = new ItemExponentialRateLimiter();
    rl.when('a');
    rl.when('a');
    rl.when('a');
    rl.forget('a');
    assert.equal(rl.numRequeues('a'), 0);
    assert.equal(rl.when('a'), 5);
  });

  it('honours custom base and cap', () => {
    const rl = new ItemExponentialRateLimiter({ baseMs: 100, maxMs: 250 });
    assert.deepEqual([rl.when('a'), rl.when('a'), rl.when('a')], [100, 200, 250]);
  });
});

describe('TokenBucket', () => {
  it('allows a burst, then spaces reservations 1/qps apart', () => {
    const clock = new FakeClock();
    const b = new TokenBucket({ qps: 10, burst: 3, clock });
    assert.deepEqual([b.reserve(), b.reserve(), b.reserve()], [0, 0, 0]);
    assert.deepEqual([b.reserve(), b.reserve()], [100, 200]);
  });

  it('refills at qps up to burst while idle', () => {
    const clock = new FakeClock();
    const b = new TokenBucket({ qps: 10, burst: 3, clock });
    for (let i = 0; i < 3; i++) b.reserve();
    clock.advance(150);
    assert.equal(b.reserve(), 0); // 1.5 tokens refilled
    assert.equal(b.reserve(), 50); // 0.5 left → half a token short
    clock.advance(60_000);
    assert.equal(b.tokens(), 3); // capped at burst
  });

  it('tryTake takes only an available token', () => {
    const clock = new FakeClock();
    const b = new TokenBucket({ qps: 1, burst: 1, clock });
    assert.equal(b.tryTake(), true);
    assert.equal(b.tryTake(), false);
    clock.advance(1000);
    assert.equal(b.tryTake(), true);
  });

  it('take() resolves at once within the burst and waits for the reserved slot after it', async () => {
    const clock = new FakeClock();
    const b = new TokenBucket({ qps: 2, burst: 1, clock });
    await b.take();
    let second = false;
    let third = false;
    const p2 = b.take().then(() => (second = true));
    const p3 = b.take().then(() => (third = true));
    await clock.advanceAsync(499);
    assert.deepEqual([second, third], [false, false]);
    await clock.advanceAsync(1);
    assert.deepEqual([second, third], [true, false]);
    await clock.advanceAsync(500);
    assert.deepEqual([second, third], [true, true]);
    await Promise.all([p2, p3]);
  });

  it('take() rejects when aborted and returns the reserved token', async () => {
    const clock = new FakeClock();
    const b = new TokenBucket({ qps: 1, burst: 1, clock });
    await b.take();
    const ac = new AbortController();
    const p = b.take(ac.signal);
    assert.equal(b.tokens(), -1);
    ac.abort(new Error('stop'));
    await assert.rejects(p, /stop/);
    assert.equal(b.tokens(), 0);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('qps Infinity never waits', () => {
    const b = new TokenBucket({ qps: Infinity, burst: 1, clock: new FakeClock() });
    assert.deepEqual([b.reserve(), b.reserve(), b.reserve()], [0, 0, 0]);
  });
});

describe('BucketRateLimiter', () => {
  it('defaults to burst 100 then 10 qps, across all items', () => {
    const clock = new FakeClock();
    const rl = new BucketRateLimiter({ clock });
    for (let i = 0; i < 100; i++) assert.equal(rl.when(`k${i}`), 0);
    assert.deepEqual([rl.when('x'), rl.when('y'), rl.when('x')], [100, 200, 300]);
    assert.equal(rl.numRequeues('x'), 0);
  });
});

describe('MaxOfRateLimiter', () => {
  const fixed = (ms: number, calls: string[]): RateLimiter => ({
    when: (item) => {
      calls.push(`when:${item}`);
      return ms;
    },
    forget: (item) => void calls.push(`forget:${item}`),
    numRequeues: () => ms / 10,
  });

  it('returns the longest delay and consults every limiter', () => {
    const calls: string[] = [];
    const rl = new MaxOfRateLimiter(fixed(30, calls), fixed(70, calls), fixed(50, calls));
    assert.equal(rl.when('a'), 70);
    assert.deepEqual(calls, ['when:a', 'when:a', 'when:a']);
    assert.equal(rl.numRequeues('a'), 7);
  });

  it('forwards forget to every limiter', () => {
    const calls: string[] = [];
    const rl = new MaxOfRateLimiter(fixed(1, calls), fixed(2, calls));
    rl.forget('a');
    assert.deepEqual(calls, ['forget:a', 'forget:a']);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('is per-item exponential until the overall bucket (burst 100, 10 qps) dominates', () => {
    const clock = new FakeClock();
    const rl = defaultControllerRateLimiter({ clock });
    assert.deepEqual([rl.when('a'), rl.when('a'), rl.when('a')], [5, 10, 20]);
    for (let i = 0; i < 97; i++) rl.when(`k${i}`); // drains the rest of the burst
    assert.equal(rl.when('b'), 100); // bucket (100 ms) > per-item (5 ms)
    assert.equal(rl.numRequeues('a'), 3);
    rl.forget('a');
    assert.equal(rl.numRequeues('a'), 0);
  });
});
