import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decide, microTime, observe, released, type LeaseRecord } from './lease.ts';

const base = { identity: 'me', leaseDurationMs: 15_000, wallTime: 'W' };

test('a missing lease or one without holder is taken', () => {
  assert.deepEqual(decide({ ...base, current: undefined, observation: undefined, now: 0 }), {
    action: 'write',
    record: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: 'W', renewTime: 'W', leaseTransitions: 0 },
  });
  const empty: LeaseRecord = { holderIdentity: '', leaseTransitions: 3 };
  const d = decide({ ...base, current: empty, observation: observe(undefined, empty, 0), now: 0 });
  assert.equal(d.action, 'write');
  assert.equal(d.action === 'write' && d.record.leaseTransitions, 4);
});

test("another holder's lease is waited on until it has not changed for a whole lease duration on our clock", () => {
  const theirs: LeaseRecord = { holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: '2999-01-01T00:00:00.000000Z', leaseTransitions: 1 };
  const seen = observe(undefined, theirs, 1_000);
  assert.deepEqual(decide({ ...base, current: theirs, observation: seen, now: 15_999 }), { action: 'wait', holder: 'other' });
  const taken = decide({ ...base, current: theirs, observation: seen, now: 16_001 });
  assert.deepEqual(taken, { action: 'write', record: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: 'W', renewTime: 'W', leaseTransitions: 2 } });
  // A renewal by the holder restarts the clock, whatever timestamps it wrote.
  const renewed = { ...theirs, renewTime: '1970-01-01T00:00:00.000000Z' };
  assert.deepEqual(decide({ ...base, current: renewed, observation: observe(seen, renewed, 16_000), now: 30_000 }), { action: 'wait', holder: 'other' });
});

test('our own lease is renewed, keeping its acquire time and transition count', () => {
  const ours: LeaseRecord = { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: 'A', renewTime: 'R', leaseTransitions: 2 };
  assert.deepEqual(decide({ ...base, current: ours, observation: observe(undefined, ours, 0), now: 1 }), {
    action: 'write',
    record: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: 'A', renewTime: 'W', leaseTransitions: 2 },
  });
});

test('observe keeps the first time a record was seen; release empties the holder with a 1 s lease', () => {
  const r: LeaseRecord = { holderIdentity: 'x' };
  const first = observe(undefined, r, 5);
  assert.equal(observe(first, { holderIdentity: 'x' }, 9).at, 5);
  assert.equal(observe(first, { holderIdentity: 'y' }, 9).at, 9);
  assert.deepEqual(released({ holderIdentity: 'me', leaseDurationSeconds: 15, leaseTransitions: 2 }, 'W'), {
    holderIdentity: '', leaseDurationSeconds: 1, renewTime: 'W', leaseTransitions: 2,
  });
});

test('microTime has six fractional digits', () => {
  assert.equal(microTime(Date.UTC(2026, 10, 21, 11, 30, 0, 123)), '2026-11-21T11:30:00.123000Z');
});

test("expiry follows the record's own leaseDurationSeconds, not the local setting", () => {
  const theirs: LeaseRecord = { holderIdentity: 'other', leaseDurationSeconds: 60, leaseTransitions: 0 };
  const seen = observe(undefined, theirs, 0);
  assert.deepEqual(decide({ ...base, current: theirs, observation: seen, now: 30_000 }), { action: 'wait', holder: 'other' }, 'past our 15 s but within its 60 s');
  assert.equal(decide({ ...base, current: theirs, observation: seen, now: 60_001 }).action, 'write');
  // A released lease (1 s) is taken a second after it was seen.
  const released1s: LeaseRecord = { holderIdentity: 'other', leaseDurationSeconds: 1 };
  assert.equal(decide({ ...base, current: released1s, observation: observe(undefined, released1s, 0), now: 1_001 }).action, 'write');
});
