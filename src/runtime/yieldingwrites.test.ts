import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, settle } from '../../testkit/fake-clock.ts';
import { YieldingWrites } from './yieldingwrites.ts';

function setup(o: { maxDelayMs?: number; concurrency?: number } = {}) {
  const clock = new FakeClock();
  let busy = false;
  const written: string[] = [];
  const errors: string[] = [];
  const writes = new YieldingWrites({
    busy: () => busy,
    maxDelayMs: o.maxDelayMs ?? 10_000,
    pollMs: 100,
    concurrency: o.concurrency ?? 2,
    onError: (key) => errors.push(key),
    clock,
  });
  const write = (label: string) => (): Promise<void> => {
    written.push(label);
    return Promise.resolve();
  };
  return { clock, writes, written, errors, write, setBusy: (b: boolean) => (busy = b) };
}

test('not busy: a write is made at once, and submit resolves with it', async () => {
  const { writes, written, write } = setup();
  await writes.submit('a', write('a1'));
  assert.deepEqual(written, ['a1']);
  assert.equal(writes.pending, 0);
});

test('not busy: a failing write rejects submit (the caller retries it)', async () => {
  const { writes } = setup();
  await assert.rejects(
    writes.submit('a', () => Promise.reject(new Error('boom'))),
    /boom/,
  );
});

test('busy: writes are held, the newest per key, and all made once the controller is no longer busy', async () => {
  const { clock, writes, written, write, setBusy } = setup();
  setBusy(true);
  await writes.submit('a', write('a1'));
  await writes.submit('b', write('b1'));
  await writes.submit('a', write('a2'));
  assert.deepEqual(written, []);
  assert.equal(writes.pending, 2);
  await clock.advanceAsync(500);
  assert.deepEqual(written, [], 'still busy: nothing written');
  setBusy(false);
  await clock.advanceAsync(100);
  assert.deepEqual(written.sort(), ['a2', 'b1'], 'one write per key, the newest');
  assert.equal(writes.pending, 0);
});

test('busy: an urgent write is made at once, in place of the one held for its key; others stay held', async () => {
  const { clock, writes, written, write, setBusy } = setup();
  setBusy(true);
  await writes.submit('a', write('a1'));
  await writes.submit('b', write('b1'));
  await writes.submit('a', write('a2'), { urgent: true });
  assert.deepEqual(written, ['a2'], 'the urgent write, while busy');
  assert.equal(writes.holds('a'), false, 'what was held for its key is replaced by it');
  assert.equal(writes.holds('b'), true);
  setBusy(false);
  await clock.advanceAsync(100);
  assert.deepEqual(written, ['a2', 'b1']);
});

test('busy for ever: a held write is made once it waited maxDelayMs, others keep waiting', async () => {
  const { clock, writes, written, write, setBusy } = setup({ maxDelayMs: 1_000 });
  setBusy(true);
  await writes.submit('a', write('a1'));
  await clock.advanceAsync(600);
  await writes.submit('b', write('b1'));
  // a's wait counts from its first submit, not from the newest one.
  await writes.submit('a', write('a2'));
  await clock.advanceAsync(500);
  assert.deepEqual(written, ['a2']);
  await clock.advanceAsync(600);
  assert.deepEqual(written, ['a2', 'b1']);
});

test('a submit for a key held past its longest wait is made at once, even while busy', async () => {
  const { clock, writes, written, write, setBusy } = setup({ maxDelayMs: 1_000 });
  setBusy(true);
  await writes.submit('a', write('a1'));
  clock.advance(1_000);
  // The poll has not run yet; the next submit finds the held write overdue and makes the newest at once.
  await writes.submit('a', write('a2'));
  assert.deepEqual(written, ['a2']);
  assert.equal(writes.holds('a'), false);
});

test('cancel drops a held write; stop drops all and writes nothing after', async () => {
  const { clock, writes, written, write, setBusy } = setup();
  setBusy(true);
  await writes.submit('a', write('a1'));
  await writes.submit('b', write('b1'));
  writes.cancel('a');
  assert.equal(writes.holds('a'), false);
  writes.stop();
  setBusy(false);
  await clock.advanceAsync(1_000);
  await writes.submit('c', write('c1'));
  assert.deepEqual(written, []);
});

test('a held write that fails goes to onError; the others are still made', async () => {
  const { clock, writes, written, errors, write, setBusy } = setup();
  setBusy(true);
  await writes.submit('a', () => Promise.reject(new Error('conflict')));
  await writes.submit('b', write('b1'));
  setBusy(false);
  await clock.advanceAsync(100);
  assert.deepEqual(errors, ['a']);
  assert.deepEqual(written, ['b1']);
});

test('one write per key at a time: a submit waits for the held write of its key under way', async () => {
  const { clock, writes, setBusy } = setup();
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  setBusy(true);
  await writes.submit('a', async () => {
    order.push('a1 start');
    await gate;
    order.push('a1 end');
  });
  setBusy(false);
  await clock.advanceAsync(100);
  assert.deepEqual(order, ['a1 start']);
  const second = writes.submit('a', () => {
    order.push('a2');
    return Promise.resolve();
  });
  await settle();
  assert.deepEqual(order, ['a1 start'], 'a2 waits for a1');
  release();
  await second;
  assert.deepEqual(order, ['a1 start', 'a1 end', 'a2']);
});
