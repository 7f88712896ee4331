import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NON_RESOURCE, codeClass, requestResource, requestVerb } from './metricslabels.ts';

test('requestResource names the resource and subresource, never a namespace or an object name', () => {
  assert.equal(requestResource('/apis/work.open-cluster-management.io/v1/namespaces/spoke-1/manifestworks/w-abc'), 'manifestworks');
  assert.equal(requestResource('/apis/work.open-cluster-management.io/v1/namespaces/spoke-1/manifestworks'), 'manifestworks');
  assert.equal(requestResource('/apis/work.open-cluster-management.io/v1/manifestworks'), 'manifestworks');
  assert.equal(requestResource('/apis/gateway.networking.k8s.io/v1/gatewayclasses/c/status'), 'gatewayclasses/status');
  assert.equal(requestResource('/apis/kuadrant.io/v1/namespaces/ns/authpolicies/p/status?fieldManager=x'), 'authpolicies/status');
  assert.equal(requestResource('/api/v1/namespaces/ns/events'), 'events');
  assert.equal(requestResource('/api/v1/namespaces'), 'namespaces');
  assert.equal(requestResource('/api/v1/namespaces/ns'), 'namespaces');
  assert.equal(requestResource('/apis/coordination.k8s.io/v1/namespaces/policy-sync-system/leases/policy-sync-hub'), 'leases');
  for (const path of ['/api', '/apis', '/api/v1', '/apis/kuadrant.io/v1', '/version', '/openapi/v3', '/healthz']) {
    assert.equal(requestResource(path), NON_RESOURCE, path);
  }
});

test('requestVerb tells get from list and delete from deletecollection', () => {
  assert.equal(requestVerb('GET', '/apis/kuadrant.io/v1/namespaces/ns/authpolicies/p'), 'get');
  assert.equal(requestVerb('GET', '/apis/kuadrant.io/v1/namespaces/ns/authpolicies'), 'list');
  assert.equal(requestVerb('GET', '/apis/kuadrant.io/v1/authpolicies'), 'list');
  assert.equal(requestVerb('GET', '/api/v1/namespaces/ns'), 'get');
  assert.equal(requestVerb('GET', '/apis/kuadrant.io/v1'), 'get');
  assert.equal(requestVerb('POST', '/apis/work.open-cluster-management.io/v1/namespaces/c/manifestworks'), 'create');
  assert.equal(requestVerb('PUT', '/apis/coordination.k8s.io/v1/namespaces/n/leases/l'), 'update');
  assert.equal(requestVerb('PATCH', '/apis/kuadrant.io/v1/namespaces/ns/authpolicies/p'), 'patch');
  assert.equal(requestVerb('DELETE', '/apis/work.open-cluster-management.io/v1/namespaces/c/manifestworks/w'), 'delete');
  assert.equal(requestVerb('DELETE', '/apis/work.open-cluster-management.io/v1/namespaces/c/manifestworks'), 'deletecollection');
});

test('codeClass groups status codes by hundred', () => {
  assert.deepEqual([200, 201, 304, 404, 409, 429, 500, 503].map(codeClass), ['2xx', '2xx', '3xx', '4xx', '4xx', '4xx', '5xx', '5xx']);
  assert.equal(codeClass(0), 'other');
  assert.equal(codeClass(600), 'other');
});
