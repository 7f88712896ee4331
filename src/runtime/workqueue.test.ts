import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '../../testkit/fake-clock.ts';
import { ItemExponentialRateLimiter } from './ratelimiter.ts';
import { WorkQueue } from './workqueue.ts';
import type { WorkQueueObserver } from './workqueue.ts';

/** Whether `p` has settled after pending work ran, and its value. */
async function peek<T>(p: Promise<T>): Promise<{ settled: boolean; value?: T }> {
  const out: { settled: boolean; value?: T } = { settled: false };
  void p.then((value) => {
    out.settled = true;
    out.value = value;
  });
  await settle();
  return out;
}

function newQueue(clock = new FakeClock(), observer?: WorkQueueObserver): WorkQueue {
  return new WorkQueue({ clock, observer, rateLimiter: new ItemExponentialRateLimiter() });
}

describe('WorkQueue', () => {
  it('dedups a key that is already waiting', async () => {
    const q = newQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    assert.equal(q.len(), 2);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    assert.equal(q.len(), 0);
  });

  it('hands keys out in FIFO order', async () => {
    const q = newQueue();
    for (const k of ['c', 'a', 'b']) q.add(k);
    assert.deepEqual([await q.get(), await q.get(), await q.get()], ['c', 'a', 'b']);
  });

  it('get() waits for an add', async () => {
    const q = newQueue();
    const p = q.get();
    assert.equal((await peek(p)).settled, false);
    q.add('a');
    assert.equal(await p, 'a');
  });

  it('never hands out a key that is being processed', async () => {
    const q = newQueue();
    q.add('a');
    assert.equal(await q.get(), 'a');
    q.add('a');
    assert.equal(q.len(), 0, 'a re-added while processing is not ready');
    const second = q.get();
    assert.equal((await peek(second)).settled, false);
    q.add('b');
    assert.equal(await second, 'b', 'other keys still flow');
    q.done('b');
    assert.equal(q.processingCount(), 1);
  });

  it('a key re-added while processing is handed out again after done, exactly once', async () => {
    const q = newQueue();
    q.add('a');
    assert.equal(await q.get(), 'a');
    q.add('a');
    q.add('a');
    q.add('a');
    const next = q.get();
    assert.equal((await peek(next)).settled, false);
    q.done('a');
    assert.equal(await next, 'a');
    assert.equal(q.len(), 0);
    q.done('a');
    const third = q.get();
    assert.equal((await peek(third)).settled, false, 'no further copy of a');
    q.shutDown();
    assert.equal(await third, undefined);
  });

  it('done() of a key without a re-add does not queue it', async () => {
    const q = newQueue();
    q.add('a');
    await q.get();
    q.done('a');
    assert.equal(q.len(), 0);
    q.done('a'); // unknown key: ignored
    assert.equal(q.processingCount(), 0);
  });

  it('addAfter adds the key only once the delay has elapsed', async () => {
    const clock = new FakeClock();
    const q = newQueue(clock);
    q.addAfter('a', 1000);
    const p = q.get();
    clock.advance(999);
    assert.equal(q.len(), 0);
    assert.equal((await peek(p)).settled, false);
    clock.advance(1);
    assert.equal(await p, 'a');
  });

  it('addAfter keeps the earlier of two schedules for the same key', async () => {
    const clock = new FakeClock();
    const q = newQueue(clock);
    q.addAfter('a', 1000);
    q.addAfter('a', 300); // earlier: replaces
    q.addAfter('a', 5000); // later: ignored
    assert.equal(clock.pendingTimers(), 1);
    clock.advance(300);
    assert.equal(q.len(), 1);
    assert.equal(await q.get(), 'a');
    q.done('a');
    clock.advance(10_000);
    assert.equal(q.len(), 0, 'the replaced schedules never fire');
  });

  it('addAfter with a non-positive delay adds at once', () => {
    const q = newQueue();
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    assert.equal(q.len(), 2);
  });

  it('addRateLimited backs off per key; forget resets it', () => {
    const clock = new FakeClock();
    const retries: string[] = [];
    const q = newQueue(clock, { onRetry: (k) => retries.push(k) });
    q.addRateLimited('a');
    clock.advance(4);
    assert.equal(q.len(), 0);
    clock.advance(1);
    assert.equal(q.len(), 1, 'first retry after 5 ms');
    q.addRateLimited('b');
    q.addRateLimited('b');
    assert.equal(q.numRequeues('b'), 2);
    q.forget('b');
    assert.equal(q.numRequeues('b'), 0);
    assert.deepEqual(retries, ['a', 'b', 'b']);
  });

  it('retryingCount counts keys waiting for a retry, not keys scheduled for a later look', () => {
    const clock = new FakeClock();
    const q = newQueue(clock);
    q.addAfter('recheck', 1_000);
    assert.equal(q.retryingCount(), 0, 'a scheduled look is not a retry');
    q.addRateLimited('failed');
    assert.equal(q.retryingCount(), 1);
    clock.advance(5);
    assert.equal(q.retryingCount(), 0, 'due: the retry is in the queue now');
    assert.equal(q.len(), 1);
    q.addAfter('both', 2);
    q.addRateLimited('both');
    assert.equal(q.retryingCount(), 1, 'a retry folded into an earlier scheduled look still counts');
    clock.advance(2);
    assert.equal(q.retryingCount(), 0);
  });

  it('shutDown() makes pending and later get() resolve undefined and drops waiting keys', async () => {
    const clock = new FakeClock();
    const q = newQueue(clock);
    const waiting = q.get();
    q.shutDown();
    assert.equal(await waiting, undefined);

    const q2 = newQueue(clock);
    q2.add('a');
    q2.addAfter('b', 100);
    q2.shutDown();
    assert.equal(q2.len(), 0);
    assert.equal(clock.pendingTimers(), 0, 'delayed adds are cancelled');
    assert.equal(await q2.get(), undefined);
    q2.add('c');
    assert.equal(await q2.get(), undefined, 'adds after shutdown are ignored');
    assert.equal(q2.isShuttingDown(), true);
  });

  it('shutDownWithDrain() hands out remaining keys, then undefined, and resolves after done', async () => {
    const q = newQueue();
    q.add('a');
    q.add('b');
    assert.equal(await q.get(), 'a');
    q.add('a'); // re-added while processing, before shutdown: still owed a run
    const drained = q.shutDownWithDrain();
    q.add('c'); // after shutdown: ignored
    assert.equal(await q.get(), 'b');
    const next = q.get();
    assert.equal((await peek(next)).settled, false, 'waits: a will be re-queued by done');
    q.done('a');
    assert.equal(await next, 'a');
    const end = q.get();
    assert.equal(await end, undefined);
    assert.equal((await peek(drained)).settled, false, 'a and b still processing');
    q.done('b');
    assert.equal((await peek(drained)).settled, false);
    q.done('a');
    await drained;
  });

  it('shutDownWithDrain() on an idle queue resolves at once', async () => {
    const q = newQueue();
    await q.shutDownWithDrain();
    assert.equal(await q.get(), undefined);
  });

  it('reports adds, depth, queue time, work time and retries to the observer', async () => {
    const clock = new FakeClock();
    const events: string[] = [];
    const q = newQueue(clock, {
      onAdd: (k) => events.push(`add ${k}`),
      onDepth: (d) => events.push(`depth ${d}`),
      onGet: (k, ms) => events.push(`get ${k} ${ms}`),
      onDone: (k, ms) => events.push(`done ${k} ${ms}`),
      onRetry: (k) => events.push(`retry ${k}`),
    });
    q.add('a');
    q.add('a'); // collapsed: no event
    clock.advance(30);
    await q.get();
    clock.advance(70);
    q.done('a');
    q.addRateLimited('a');
    assert.deepEqual(events, ['add a', 'depth 1', 'get a 30', 'depth 0', 'done a 70', 'retry a']);
  });
});
