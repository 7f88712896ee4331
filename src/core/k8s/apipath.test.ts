import assert from 'node:assert/strict';
import { test } from 'node:test';
import { writtenResource } from './apipath.ts';

test('writtenResource names the resource of a mutating request and leaves out reads, reviews and leases', () => {
  assert.equal(writtenResource('PATCH', '/apis/work.open-cluster-management.io/v1/namespaces/c1/manifestworks/w?fieldManager=x'), 'manifestworks');
  assert.equal(writtenResource('PATCH', '/apis/gateway.networking.k8s.io/v1/gatewayclasses/c/status'), 'gatewayclasses/status');
  assert.equal(writtenResource('POST', '/api/v1/namespaces/ns/events'), 'events');
  assert.equal(writtenResource('DELETE', '/api/v1/namespaces/ns'), 'namespaces');
  assert.equal(writtenResource('GET', '/api/v1/namespaces/ns/configmaps'), undefined);
  assert.equal(writtenResource('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'), undefined);
  assert.equal(writtenResource('PUT', '/apis/coordination.k8s.io/v1/namespaces/ns/leases/l'), undefined);
});
