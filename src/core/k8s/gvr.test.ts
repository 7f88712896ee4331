import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupResourceKey, groupVersion, gvrEquals, gvrKey, parseGroupResourceKey, parseGvrKey } from './gvr.ts';

const authPolicies = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };

test('gvrKey is resource.version.group, and resource.version for the core group', () => {
  assert.equal(gvrKey(authPolicies), 'authpolicies.v1.kuadrant.io');
  assert.equal(gvrKey({ group: '', version: 'v1', resource: 'configmaps' }), 'configmaps.v1');
});

test('parseGvrKey reads a dotted group and round-trips with gvrKey', () => {
  assert.deepEqual(parseGvrKey('authpolicies.v1.kuadrant.io'), authPolicies);
  assert.deepEqual(parseGvrKey('backendtrafficpolicies.v1alpha1.gateway.envoyproxy.io'), {
    group: 'gateway.envoyproxy.io',
    version: 'v1alpha1',
    resource: 'backendtrafficpolicies',
  });
  assert.equal(gvrKey(parseGvrKey('ratelimitpolicies.v1.kuadrant.io')), 'ratelimitpolicies.v1.kuadrant.io');
});

test('parseGvrKey reads the core group form', () => {
  assert.deepEqual(parseGvrKey('configmaps.v1'), { group: '', version: 'v1', resource: 'configmaps' });
});

test('parseGvrKey throws an error naming the bad input', () => {
  for (const bad of ['authpolicies', '', '.v1.kuadrant.io', 'authpolicies..kuadrant.io', 'authpolicies.v1.kuadrant..io', 'authpolicies.v1.', 'AuthPolicies.v1.kuadrant.io', 'authpolicies.v1.Kuadrant.io']) {
    assert.throws(() => parseGvrKey(bad), { message: new RegExp(`^invalid policy kind "${bad.replaceAll('.', '\\.')}"`) }, bad);
  }
});

test('gvrEquals compares all three parts', () => {
  assert.equal(gvrEquals(authPolicies, { ...authPolicies }), true);
  assert.equal(gvrEquals(authPolicies, { ...authPolicies, version: 'v1beta3' }), false);
  assert.equal(gvrEquals(authPolicies, { ...authPolicies, group: 'other.io' }), false);
  assert.equal(gvrEquals(authPolicies, { ...authPolicies, resource: 'ratelimitpolicies' }), false);
});

test('groupVersion is group/version, or version for the core group', () => {
  assert.equal(groupVersion(authPolicies), 'kuadrant.io/v1');
  assert.equal(groupVersion({ group: '', version: 'v1' }), 'v1');
});

test('groupResourceKey leaves the version out and round-trips with parseGroupResourceKey', () => {
  assert.equal(groupResourceKey(authPolicies), 'authpolicies.kuadrant.io');
  assert.equal(groupResourceKey({ group: 'kuadrant.io', resource: 'authpolicies' }), 'authpolicies.kuadrant.io');
  assert.equal(groupResourceKey({ group: '', resource: 'configmaps' }), 'configmaps');
  assert.deepEqual(parseGroupResourceKey('backendtrafficpolicies.gateway.envoyproxy.io'), { group: 'gateway.envoyproxy.io', resource: 'backendtrafficpolicies' });
  assert.deepEqual(parseGroupResourceKey('configmaps'), { group: '', resource: 'configmaps' });
});
