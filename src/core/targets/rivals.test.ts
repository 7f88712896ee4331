import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../k8s/objects.ts';
import { copyNamespaces, hubNamespacesRendering, possibleRivals, type TemplateOfGateway } from './rivals.ts';

const GW = 'gateway.networking.k8s.io';

function policy(namespace: string, ...gateways: (string | { name: string; namespace?: string; kind?: string })[]): KubeObject {
  const refs = gateways.map((g) => (typeof g === 'string' ? { group: GW, kind: 'Gateway', name: g } : { group: GW, kind: g.kind ?? 'Gateway', name: g.name, ...(g.namespace ? { namespace: g.namespace } : {}) }));
  return { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { namespace, name: 'p' }, spec: refs.length === 1 ? { targetRef: refs[0] } : { targetRefs: refs } };
}

/** Gateways `gw` (class with `{namespace}`), `shared` (class rendering "kuadrant"), `mixed` (class rendering "{namespace}-x"). */
const templates: TemplateOfGateway = (_namespace, name) => ({ gw: '{namespace}', shared: 'kuadrant', mixed: '{namespace}-x' })[name];

test('copyNamespaces renders the class template of every targeted Gateway of ours', () => {
  assert.deepEqual(copyNamespaces(policy('team-a', 'gw', 'shared', 'mixed'), templates), ['kuadrant', 'team-a', 'team-a-x']);
  assert.deepEqual(copyNamespaces(policy('team-a', 'unknown', { name: 'gw', kind: 'HTTPRoute' }), templates), [], 'not ours, not a Gateway');
  assert.deepEqual(copyNamespaces(policy('team-a', { name: 'gw', namespace: 'other' }), templates), ['other']);
});

test('possibleRivals: with {namespace} in the template, same-named policies of other namespaces never collide', () => {
  const mine = policy('team-a', 'gw');
  const sameName = [mine, policy('team-b', 'gw'), policy('team-c', 'gw')];
  assert.deepEqual(possibleRivals(mine, sameName, templates), []);
});

test('possibleRivals: policies rendering a namespace in common can collide, others not', () => {
  const mine = policy('team-a', 'shared');
  const alsoShared = policy('team-b', 'shared');
  const ownNamespace = policy('team-c', 'gw');
  // "team-x" + "{namespace}" and "team" + "{namespace}-x" both render "team-x".
  const renderedAlike = policy('team-x', 'gw');
  const viaSuffix = policy('team', 'mixed');
  assert.deepEqual(possibleRivals(mine, [mine, alsoShared, ownNamespace], templates), [alsoShared]);
  assert.deepEqual(possibleRivals(renderedAlike, [renderedAlike, viaSuffix, ownNamespace], templates), [viaSuffix]);
});

test('possibleRivals: a policy with no copy anywhere has no rivals; the policy itself is never its own rival', () => {
  const unplaced = policy('team-a', 'unknown');
  assert.deepEqual(possibleRivals(unplaced, [unplaced, policy('team-b', 'shared')], templates), []);
  const mine = policy('team-a', 'shared');
  assert.deepEqual(possibleRivals(mine, [structuredClone(mine)], templates), [], 'an older cached version of itself');
});

test('hubNamespacesRendering: which hub namespaces a template renders into a downstream namespace', () => {
  assert.deepEqual(hubNamespacesRendering('{namespace}', 'shop'), ['shop']);
  assert.deepEqual(hubNamespacesRendering('kuadrant-{namespace}', 'kuadrant-shop'), ['shop']);
  assert.deepEqual(hubNamespacesRendering('kuadrant-{namespace}', 'shop'), []);
  assert.deepEqual(hubNamespacesRendering('{namespace}-x-{namespace}', 'a-x-a'), ['a']);
  assert.deepEqual(hubNamespacesRendering('{namespace}-x-{namespace}', 'a-x-b'), []);
  assert.equal(hubNamespacesRendering('gateways', 'gateways'), 'any');
  assert.deepEqual(hubNamespacesRendering('gateways', 'shop'), []);
  assert.deepEqual(hubNamespacesRendering('a.b{namespace}', 'axbshop'), [], 'template text is literal, not a pattern');
});
