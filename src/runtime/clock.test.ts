import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { sleep, systemClock } from './clock.ts';
import { FakeClock } from '../../testkit/fake-clock.ts';

describe('FakeClock', () => {
  it('fires due timers in due-time then creation order, each at its own time', () => {
    const clock = new FakeClock(1000);
    const fired: string[] = [];
    clock.setTimer(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimer(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimer(() => fired.push(`c@${clock.now()}`), 20);
    const cancel = clock.setTimer(() => fired.push('cancelled'), 5);
    cancel();
    clock.advance(15);
    assert.deepEqual(fired, ['a@1010']);
    clock.advance(100);
    assert.deepEqual(fired, ['a@1010', 'b@1020', 'c@1020']);
    assert.equal(clock.now(), 1115);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('fires timers scheduled by timers when they fall due within the same advance', () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    clock.setTimer(() => {
      fired.push(clock.now());
      clock.setTimer(() => fired.push(clock.now()), 10);
    }, 10);
    clock.advance(25);
    assert.deepEqual(fired, [10, 20]);
  });
});

describe('sleep', () => {
  it('resolves after the delay on the given clock', async () => {
    const clock = new FakeClock();
    let done = false;
    const p = sleep(clock, 100).then(() => (done = true));
    await clock.advanceAsync(99);
    assert.equal(done, false);
    await clock.advanceAsync(1);
    await p;
    assert.equal(done, true);
  });

  it('rejects with the abort reason and cancels its timer', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const p = sleep(clock, 100, ac.signal);
    ac.abort(new Error('bye'));
    await assert.rejects(p, /bye/);
    assert.equal(clock.pendingTimers(), 0);
    await assert.rejects(sleep(clock, 1, ac.signal), /bye/, 'an already aborted signal rejects at once');
  });
});

describe('systemClock', () => {
  it('chains timers beyond setTimeout’s 2^31-1 ms limit instead of firing early', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const fn = mock.fn();
    const max = 2 ** 31 - 1;
    systemClock.setTimer(fn, max + 1000);
    t.mock.timers.tick(max);
    assert.equal(fn.mock.callCount(), 0);
    t.mock.timers.tick(1000);
    assert.equal(fn.mock.callCount(), 1);
  });

  it('cancel stops a pending timer', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const fn = mock.fn();
    const cancel = systemClock.setTimer(fn, 10);
    cancel();
    t.mock.timers.tick(100);
    assert.equal(fn.mock.callCount(), 0);
  });
});
