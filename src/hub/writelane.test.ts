import assert from 'node:assert/strict';
import { test } from 'node:test';
import { writeLane } from './indexes.ts';

test('writeLane: a cluster\'s ManifestWork writes are that cluster\'s lane; every other write is the hub\'s', () => {
  assert.equal(writeLane('/apis/work.open-cluster-management.io/v1/namespaces/spoke-1/manifestworks'), 'cluster/spoke-1');
  assert.equal(writeLane('/apis/work.open-cluster-management.io/v1/namespaces/spoke-1/manifestworks/authpolicies-ns-p-abc'), 'cluster/spoke-1');
  assert.equal(writeLane('/apis/kuadrant.io/v1/namespaces/spoke-1/authpolicies/p'), 'hub');
  assert.equal(writeLane('/api/v1/namespaces/ns/events'), 'hub');
});
