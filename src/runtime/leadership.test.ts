import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotLeaderError } from './leadership.ts';
import { Leadership } from './leadership.ts';

test('without leader election every write is allowed, unfenced', () => {
  const l = new Leadership(false);
  assert.equal(l.canWrite, true);
  assert.equal(l.guard('PATCH', '/x'), undefined);
});

test('with leader election nothing is written until, and unless, the elector says it leads now', () => {
  const l = new Leadership(true);
  assert.equal(l.canWrite, false, 'a standby with no elector yet writes nothing');
  assert.throws(() => l.guard('PATCH', '/x'), NotLeaderError);
  const elector = { isLeader: true, inFlightMs: () => 1_000 };
  l.follow(elector);
  assert.equal(l.canWrite, true);
  elector.isLeader = false; // the renew deadline passed
  assert.throws(() => l.guard('DELETE', '/x'), NotLeaderError);
});

test("a write let through is fenced by the elector's in-flight time, asked anew each time", () => {
  const l = new Leadership(true);
  let left = 4_000;
  l.follow({ isLeader: true, inFlightMs: () => left });
  const fence = l.guard('DELETE', '/x');
  assert.ok(fence);
  assert.equal(fence(), 4_000);
  left = 0; // the elector lost the lease since the write was sent
  assert.equal(fence(), 0);
});
