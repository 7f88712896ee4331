import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../k8s/objects.ts';
import { readSelectorEntries, selectedGateways, targetFormsOf, type TargetForms } from './selectors.ts';

const ALL: TargetForms = { namedRefs: true, refSelectors: true, targetSelectors: true };
const policy = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'example.io/v1', kind: 'P', metadata: { namespace: 'ns', name: 'p' }, spec });
const gateway = (name: string, labels?: Record<string, string>): KubeObject => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { namespace: 'ns', name, ...(labels ? { labels } : {}) } });
const GW = { group: 'gateway.networking.k8s.io', kind: 'Gateway' };

test('targetFormsOf reads the forms from the spec schema: named targetRefs, a selector in their items, targetSelectors; none without a schema', () => {
  const item = (properties: Record<string, unknown>) => ({ type: 'array', items: { type: 'object', properties } });
  assert.deepEqual(targetFormsOf({ properties: { targetRefs: item({ group: {}, kind: {}, name: {} }) } }), { namedRefs: true, refSelectors: false, targetSelectors: false });
  assert.deepEqual(targetFormsOf({ properties: { targetRefs: item({ group: {}, kind: {}, name: {}, selector: {} }) } }), { namedRefs: true, refSelectors: true, targetSelectors: false });
  assert.deepEqual(
    targetFormsOf({ properties: { targetRefs: item({ name: {} }), targetSelectors: item({ group: {}, kind: {}, matchLabels: {}, matchExpressions: {} }) } }),
    { namedRefs: true, refSelectors: false, targetSelectors: true },
  );
  assert.deepEqual(targetFormsOf({ properties: { targetRef: { properties: { name: {} } } } }), { namedRefs: false, refSelectors: false, targetSelectors: false }, 'a single targetRef is not a list of named refs');
  assert.deepEqual(targetFormsOf({ properties: { targetSelectors: item({ kind: {} }) } }).targetSelectors, false, 'a list that takes no labels selects nothing');
  assert.deepEqual(targetFormsOf(undefined), { namedRefs: false, refSelectors: false, targetSelectors: false });
});

test('readSelectorEntries: a selector in targetRefs and targetSelectors, in spec order; the group defaults to Gateway API’s; named refs are not selectors', () => {
  const entries = readSelectorEntries(
    policy({
      targetRefs: [{ ...GW, name: 'gw' }, { ...GW, selector: { matchLabels: { tier: 'edge' } }, sectionName: 'https' }],
      targetSelectors: [{ kind: 'Gateway', matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] }],
    }),
    ALL,
  );
  assert.deepEqual(entries, [
    { path: 'spec.targetRefs[1]', ...GW, selector: { matchLabels: { tier: 'edge' } }, sectionName: 'https' },
    { path: 'spec.targetSelectors[0]', ...GW, selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] } },
  ]);
});

test('readSelectorEntries reads only the forms the kind has, and names what is wrong with a malformed selector', () => {
  const spec = { targetRefs: [{ ...GW, selector: { matchLabels: { tier: 'edge' } } }], targetSelectors: [{ kind: 'Gateway', matchLabels: { a: 'b' } }] };
  assert.deepEqual(readSelectorEntries(policy(spec), { namedRefs: true, refSelectors: false, targetSelectors: false }), []);
  assert.deepEqual(readSelectorEntries(policy(spec), { namedRefs: true, refSelectors: false, targetSelectors: true }).map((e) => e.path), ['spec.targetSelectors[0]']);
  const bad = readSelectorEntries(
    policy({ targetRefs: [{ ...GW, selector: { matchExpressions: [{ key: 'k', operator: 'Near' }] } }], targetSelectors: [{ matchLabels: { a: 'b' } }, 'x'] }),
    ALL,
  );
  assert.deepEqual(bad.map((e) => ('error' in e ? e.error : '')), [
    'spec.targetRefs[0]: selector.matchExpressions.0.operator: Invalid option: expected one of "In"|"NotIn"|"Exists"|"DoesNotExist"',
    'spec.targetSelectors[0]: kind is required',
    'spec.targetSelectors[1]: must be an object',
  ]);
});

test('selectedGateways: the Gateways of the namespace whose labels match, sorted; an empty selector chooses all; another kind none', () => {
  const gateways = [gateway('b', { tier: 'edge' }), gateway('a', { tier: 'edge', env: 'prod' }), gateway('c', { tier: 'core' }), gateway('d')];
  const entry = (selector: Record<string, unknown>, kind = 'Gateway') => ({ path: 'spec.targetSelectors[0]', group: GW.group, kind, selector });
  assert.deepEqual(selectedGateways(entry({ matchLabels: { tier: 'edge' } }), gateways), ['a', 'b']);
  assert.deepEqual(selectedGateways(entry({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }), gateways), ['d']);
  assert.deepEqual(selectedGateways(entry({}), gateways), ['a', 'b', 'c', 'd']);
  assert.deepEqual(selectedGateways(entry({ matchLabels: { tier: 'edge' } }, 'HTTPRoute'), gateways), []);
});
