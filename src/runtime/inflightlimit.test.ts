import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InFlightLimit } from './inflightlimit.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('at most `max` hold a slot; the others wait and get theirs in the order they asked', async () => {
  const limit = new InFlightLimit(2);
  const order: number[] = [];
  const releases = new Map<number, () => void>();
  for (const n of [1, 2, 3, 4, 5]) {
    void limit.acquire().then((release) => {
      order.push(n);
      releases.set(n, release);
    });
  }
  await tick();
  assert.deepEqual(order, [1, 2]);
  assert.equal(limit.inFlight, 2);
  assert.equal(limit.waiting, 3);
  releases.get(2)!();
  await tick();
  assert.deepEqual(order, [1, 2, 3], 'a released slot goes to the first waiter');
  assert.equal(limit.inFlight, 2);
  releases.get(1)!();
  releases.get(3)!();
  await tick();
  assert.deepEqual(order, [1, 2, 3, 4, 5]);
  assert.equal(limit.waiting, 0);
  releases.get(4)!();
  releases.get(5)!();
  assert.equal(limit.inFlight, 0);
});

test('a release called twice frees one slot', async () => {
  const limit = new InFlightLimit(1);
  const release = await limit.acquire();
  let second = false;
  let third = false;
  void limit.acquire().then(() => (second = true));
  void limit.acquire().then(() => (third = true));
  release();
  release();
  await tick();
  assert.equal(second, true);
  assert.equal(third, false, 'the second release of the same slot gave nothing away');
  assert.equal(limit.inFlight, 1);
});

test('the limit is a positive integer', () => {
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => new InFlightLimit(bad), RangeError);
});
