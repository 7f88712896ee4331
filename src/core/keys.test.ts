import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePolicyKey, parseWorkKey, policyKey, workKey, workKeyOf } from './keys.ts';

test('policy keys round-trip without the version', () => {
  const key = policyKey({ group: 'kuadrant.io', resource: 'authpolicies' }, 'ns', 'p');
  assert.equal(key, 'authpolicies.kuadrant.io|ns/p');
  assert.deepEqual(parsePolicyKey(key), { gr: { group: 'kuadrant.io', resource: 'authpolicies' }, namespace: 'ns', name: 'p' });
  assert.deepEqual(parsePolicyKey(policyKey({ group: '', resource: 'configmaps' }, 'ns', 'p')), { gr: { group: '', resource: 'configmaps' }, namespace: 'ns', name: 'p' });
});

test('a malformed policy key is refused, naming it', () => {
  for (const key of ['authpolicies.kuadrant.io', '|ns/p', 'authpolicies.kuadrant.io|ns', 'authpolicies.kuadrant.io|/p']) {
    assert.throws(() => parsePolicyKey(key), new RegExp(`malformed policy key ${key.replace(/[|.]/g, '\\$&')}`));
  }
});

test('work keys are cluster/name and round-trip', () => {
  const key = workKey('spoke-1', 'authpolicies-ns-p-0123');
  assert.equal(key, 'spoke-1/authpolicies-ns-p-0123');
  assert.deepEqual(parseWorkKey(key), { cluster: 'spoke-1', name: 'authpolicies-ns-p-0123' });
  assert.equal(workKeyOf({ apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork', metadata: { namespace: 'spoke-2', name: 'w' } }), 'spoke-2/w');
});
