import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backoff } from './backoff.ts';
import { FakeClock } from '../../testkit/fake-clock.ts';

const seq = (b: Backoff, n: number): number[] => Array.from({ length: n }, () => b.next());

describe('Backoff', () => {
  it('without jitter: 800 ms doubling, capped at 30 s', () => {
    const b = new Backoff({ random: () => 0, clock: new FakeClock() });
    assert.deepEqual(seq(b, 9), [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000]);
    assert.equal(b.attempts, 9);
  });

  it('jitter adds at most 10% on top, at the cap too', () => {
    const low = new Backoff({ random: () => 0, clock: new FakeClock() });
    const high = new Backoff({ random: () => 0.999_999, clock: new FakeClock() });
    const lows = seq(low, 10);
    const highs = seq(high, 10);
    for (let i = 0; i < 10; i++) {
      const base = lows[i] as number;
      const h = highs[i] as number;
      assert.ok(h >= base && h < base * 1.1, `step ${i}: ${h} not in [${base}, ${base * 1.1})`);
    }
    assert.ok((highs[9] as number) < 33_000);
    assert.ok((highs[9] as number) > 32_999);
  });

  it('jittered values stay within bounds for arbitrary random draws', () => {
    let x = 0.37;
    const random = (): number => (x = (x * 9301 + 0.49297) % 1); // deterministic pseudo-random
    const b = new Backoff({ random, clock: new FakeClock() });
    const bases = [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000];
    for (const base of bases) {
      const d = b.next();
      assert.ok(d >= base && d < base * 1.1, `${d} not in [${base}, ${base * 1.1})`);
    }
  });

  it('reset() starts over from 800 ms', () => {
    const b = new Backoff({ random: () => 0, clock: new FakeClock() });
    seq(b, 5);
    b.reset();
    assert.equal(b.attempts, 0);
    assert.deepEqual(seq(b, 2), [800, 1600]);
  });

  it('resets after 2 min healthy, not before', () => {
    const clock = new FakeClock();
    const b = new Backoff({ random: () => 0, clock });
    seq(b, 4); // next would be 12.8 s

    b.markHealthy();
    clock.advance(119_999);
    assert.equal(b.next(), 12_800, 'healthy for just under 2 min keeps backing off');

    b.markHealthy();
    clock.advance(60_000);
    b.markHealthy(); // repeated calls keep the stretch's start
    clock.advance(60_000);
    assert.equal(b.next(), 800, 'healthy for 2 min resets');
    assert.equal(b.next(), 1600);
  });

  it('a failure ends the healthy stretch', () => {
    const clock = new FakeClock();
    const b = new Backoff({ random: () => 0, clock });
    b.markHealthy();
    clock.advance(100_000);
    assert.equal(b.next(), 800);
    clock.advance(100_000); // not marked healthy again: no reset
    assert.equal(b.next(), 1600);
  });
});
