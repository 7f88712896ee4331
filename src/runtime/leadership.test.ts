import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotLeaderError } from '../kube/http.ts';
import { Leadership } from './leadership.ts';

test('without leader election every write is allowed', () => {
  const l = new Leadership(false);
  assert.equal(l.canWrite, true);
  l.guard('PATCH', '/x');
});

test('with leader election nothing is written until, and unless, the elector says it leads now', () => {
  const l = new Leadership(true);
  assert.equal(l.canWrite, false, 'a standby with no elector yet writes nothing');
  assert.throws(() => l.guard('PATCH', '/x'), NotLeaderError);
  const elector = { isLeader: true };
  l.follow(elector);
  assert.equal(l.canWrite, true);
  elector.isLeader = false; // the renew deadline passed
  assert.throws(() => l.guard('DELETE', '/x'), NotLeaderError);
});
