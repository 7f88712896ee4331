import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '../../testkit/fake-clock.ts';
import { ItemExponentialRateLimiter } from './ratelimiter.ts';
import { ControllerRunner, DrainTimeoutError } from './runner.ts';
import type { Reconcile, ReconcileEvent, ReconcileResult } from './runner.ts';
import { WorkQueue } from './workqueue.ts';

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
}
function deferred<T = void>(): Deferred<T> {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function setup(reconcile: Reconcile, concurrency = 1) {
  const clock = new FakeClock();
  const queue = new WorkQueue({ clock, rateLimiter: new ItemExponentialRateLimiter() });
  const events: ReconcileEvent[] = [];
  const errors: { obj: object; msg: string }[] = [];
  const runner = new ControllerRunner({
    name: 'test',
    queue,
    reconcile,
    concurrency,
    clock,
    observer: { onReconcile: (e) => events.push(e) },
    logger: { error: (obj, msg) => errors.push({ obj, msg }) },
  });
  return { clock, queue, runner, events, errors };
}

describe('ControllerRunner', () => {
  it('reconciles added keys and forgets them on success', async () => {
    const seen: string[] = [];
    const { queue, runner, events } = setup(async (key) => {
      seen.push(key);
      await Promise.resolve();
    });
    queue.addRateLimited('a'); // a prior failure, to be forgotten
    runner.start();
    queue.add('a');
    queue.add('b');
    await settle();
    assert.deepEqual(seen.sort(), ['a', 'b']);
    assert.deepEqual(events.map((e) => [e.key, e.result]).sort(), [['a', 'success'], ['b', 'success']]);
    assert.equal(queue.numRequeues('a'), 0);
    await runner.stop();
  });

  it('retries a failing key with per-key exponential backoff, then forgets it on success', async () => {
    const attempts: number[] = [];
    const { clock, queue, runner, events, errors } = setup((key) => {
      attempts.push(clock.now());
      return attempts.length <= 3 ? Promise.reject(new Error(`boom ${key}`)) : Promise.resolve();
    });
    runner.start();
    queue.add('a');
    await settle();
    assert.equal(queue.numRequeues('a'), 1);
    await clock.advanceAsync(1000);
    // Failures at t=0, 5, 15 back off 5, 10, 20 ms; the 4th attempt (t=35) succeeds.
    assert.deepEqual(attempts, [0, 5, 15, 35]);
    assert.deepEqual(
      events.map((e) => e.result),
      ['error', 'error', 'error', 'success'],
    );
    assert.ok(events[0]?.error instanceof Error);
    assert.equal(queue.numRequeues('a'), 0, 'forgotten after success');
    assert.equal(errors.length, 3);
    assert.equal(errors[0]?.msg, 'reconcile failed');
    await runner.stop();
  });

  it('requeueAfterMs schedules the key again after that delay, with backoff reset', async () => {
    const attempts: number[] = [];
    const { clock, queue, runner, events } = setup((): Promise<ReconcileResult> => {
      attempts.push(clock.now());
      return Promise.resolve(attempts.length === 1 ? { requeueAfterMs: 60_000 } : undefined);
    });
    queue.addRateLimited('a'); // a prior failure, to be forgotten
    runner.start();
    await clock.advanceAsync(5);
    assert.equal(queue.numRequeues('a'), 0);
    await clock.advanceAsync(59_999);
    assert.deepEqual(attempts, [5]);
    await clock.advanceAsync(1);
    assert.deepEqual(attempts, [5, 60_005]);
    assert.deepEqual(
      events.map((e) => e.result),
      ['requeue_after', 'success'],
    );
    await runner.stop();
  });

  it('requeue: true retries with rate-limited backoff and is not an error', async () => {
    const attempts: number[] = [];
    const { clock, queue, runner, events, errors } = setup(() => {
      attempts.push(clock.now());
      return Promise.resolve(attempts.length === 1 ? { requeue: true } : undefined);
    });
    runner.start();
    queue.add('a');
    await clock.advanceAsync(100);
    assert.deepEqual(attempts, [0, 5]);
    assert.deepEqual(
      events.map((e) => e.result),
      ['requeue', 'success'],
    );
    assert.equal(errors.length, 0);
    await runner.stop();
  });

  it('reports reconcile duration from the injected clock', async () => {
    const gate = deferred();
    const { clock, queue, runner, events } = setup(() => gate.promise);
    runner.start();
    queue.add('a');
    await clock.advanceAsync(250);
    gate.resolve();
    await settle();
    assert.equal(events[0]?.durationMs, 250);
    assert.equal(events[0]?.controller, 'test');
    await runner.stop();
  });

  it('never reconciles one key concurrently, even with concurrency > 1', async () => {
    const active = new Map<string, number>();
    let maxPerKey = 0;
    let maxOverall = 0;
    let overall = 0;
    const runs: string[] = [];
    const gates: Deferred<void>[] = [];
    const { queue, runner } = setup(async (key) => {
      active.set(key, (active.get(key) ?? 0) + 1);
      overall++;
      maxPerKey = Math.max(maxPerKey, active.get(key) ?? 0);
      maxOverall = Math.max(maxOverall, overall);
      runs.push(key);
      const gate = deferred();
      gates.push(gate);
      await gate.promise;
      active.set(key, (active.get(key) ?? 0) - 1);
      overall--;
    }, 4);
    runner.start();
    queue.add('a');
    queue.add('b');
    await settle();
    // While a and b run, add each repeatedly: they must wait, not run in parallel.
    for (let i = 0; i < 5; i++) {
      queue.add('a');
      queue.add('b');
      queue.add('c');
    }
    await settle();
    // c went to an idle worker on its first add; its later adds are re-adds during processing.
    assert.deepEqual(runs, ['a', 'b', 'c'], 'none started twice; c runs alongside');
    assert.deepEqual([...runner.inFlight()].sort(), ['a', 'b', 'c']);
    // Release everything until quiet.
    while (gates.length > 0) {
      for (const g of gates.splice(0)) g.resolve();
      await settle();
    }
    assert.deepEqual(runs.sort(), ['a', 'a', 'b', 'b', 'c', 'c'], 're-adds during processing ran exactly once more');
    assert.equal(maxPerKey, 1);
    assert.equal(maxOverall, 3);
    await runner.stop();
  });

  it('stop() lets in-flight reconciles finish, drops queued keys and resolves when workers exit', async () => {
    const gate = deferred();
    const runs: string[] = [];
    let signal: AbortSignal | undefined;
    const { queue, runner } = setup(async (key, s) => {
      runs.push(key);
      signal = s;
      await gate.promise;
    }, 1);
    runner.start();
    queue.add('a');
    queue.add('b');
    await settle();
    assert.deepEqual(runs, ['a']);

    const stopped = runner.stop({ drainTimeoutMs: 10_000 });
    let done = false;
    void stopped.then(() => (done = true));
    await settle();
    assert.equal(done, false, 'waits for the in-flight reconcile');
    queue.add('c');
    gate.resolve();
    await stopped;
    assert.deepEqual(runs, ['a'], 'queued and new keys are not started after stop');
    assert.equal(signal?.aborted, false, 'finished within the timeout: never aborted');
    assert.equal(runner.stop({ drainTimeoutMs: 1 }), stopped, 'stop() is idempotent');
  });

  it('stop() aborts in-flight reconciles after the drain timeout, then resolves', async () => {
    let reason: unknown;
    const { clock, queue, runner, errors } = setup(
      (_key, signal) =>
        new Promise<void>((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            reason = signal.reason;
            reject(signal.reason as Error);
          });
        }),
      2,
    );
    runner.start();
    queue.add('a');
    queue.add('b');
    await settle();
    let done = false;
    const stopped = runner.stop({ drainTimeoutMs: 5000 }).then(() => (done = true));
    await clock.advanceAsync(4999);
    assert.equal(done, false);
    await clock.advanceAsync(1);
    await stopped;
    assert.ok(reason instanceof DrainTimeoutError);
    assert.equal(errors[0]?.msg, 'drain timeout: aborting in-flight reconciles');
    assert.deepEqual((errors[0]?.obj as { keys: string[] }).keys.sort(), ['a', 'b']);
    assert.equal(runner.inFlight().size, 0);
  });

  it('stop() before start() shuts the queue down and resolves; start() then refuses', async () => {
    const { queue, runner } = setup(() => Promise.resolve());
    await runner.stop();
    assert.equal(queue.isShuttingDown(), true);
    assert.throws(() => runner.start(), /stopped/);
  });

  it('a worker survives a throwing observer hook and still marks the key done', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    const errors: string[] = [];
    const runs: string[] = [];
    const runner = new ControllerRunner({
      name: 't',
      queue,
      clock,
      reconcile: (key) => {
        runs.push(key);
        return Promise.resolve();
      },
      observer: {
        onReconcile: () => {
          throw new Error('bad hook');
        },
      },
      logger: { error: (_obj, msg) => errors.push(msg) },
    });
    runner.start();
    queue.add('a');
    await settle();
    queue.add('a');
    await settle();
    assert.deepEqual(runs, ['a', 'a']);
    assert.deepEqual(errors, ['controller runner internal error', 'controller runner internal error']);
    assert.equal(queue.processingCount(), 0);
    await runner.stop();
  });
});
