// The check of a variant's copy scoped to the paths its variants set: what a changed value can break is found
// (its own schema, the nodes above it, the CEL rules that see it), what it cannot is not looked at.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PathSegment } from './fieldpath.ts';
import { schemaCheck, type OpenApiSchema } from './schemacheck.ts';
import { policySchema } from '../../../testkit/policyschema.ts';

const LIMITS: OpenApiSchema = policySchema({
  type: 'object',
  required: ['targetRef'],
  properties: {
    targetRef: { type: 'object', properties: { kind: { type: 'string' }, name: { type: 'string' } } },
    geo: { type: 'string', enum: ['EU', 'US'] },
    loadBalancing: { type: 'object', required: ['weight', 'defaultGeo'], properties: { weight: { type: 'integer' }, defaultGeo: { type: 'boolean' }, geo: { type: 'string' } } },
    rates: {
      type: 'array',
      maxItems: 3,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['window'],
      items: { type: 'object', required: ['limit', 'window'], properties: { limit: { type: 'integer', minimum: 1 }, window: { type: 'string' } } },
    },
  },
});

/** LIMITS with a rule on spec that reads a changed field, and one on targetRef.name that no real name passes. */
const RULES: OpenApiSchema = structuredClone(LIMITS);
const rulesSpec = (RULES.properties as Record<string, OpenApiSchema>).spec!;
rulesSpec['x-kubernetes-validations'] = [{ rule: 'self.targetRef.kind == "Gateway" || !has(self.geo)', message: 'geo needs a Gateway target' }];
((rulesSpec.properties as Record<string, OpenApiSchema>).targetRef!.properties as Record<string, OpenApiSchema>).name!['x-kubernetes-validations'] = [{ rule: 'self.size() > 100', message: 'never true of a real name' }];
/** LIMITS with a field whose pattern no regular expression engine compiles. */
const BROKEN: OpenApiSchema = structuredClone(LIMITS);
(((BROKEN.properties as Record<string, OpenApiSchema>).spec!.properties as Record<string, OpenApiSchema>).broken = { type: 'object', properties: { x: { type: 'string', pattern: '(' } } });

const copy = (spec: Record<string, unknown>) => ({ apiVersion: 'x/v1', kind: 'L', metadata: { name: 'p' }, spec: { targetRef: { kind: 'Gateway', name: 'gw' }, ...spec } });
const messages = (c: unknown, changed?: PathSegment[][], schema = LIMITS) => schemaCheck(schema)(c, changed).map((v) => v.message);

test('a changed value is checked against the schema at its path', () => {
  assert.deepEqual(messages(copy({ geo: 'EU' }), [['spec', 'geo']]), []);
  assert.deepEqual(messages(copy({ geo: 'ASIA' }), [['spec', 'geo']]), ['spec.geo: must be equal to one of the allowed values: "EU", "US"']);
  assert.deepEqual(messages(copy({ rates: [{ limit: 0, window: '1m' }] }), [['spec', 'rates', 0, 'limit']]), ['spec.rates[0].limit: must be >= 1']);
});

test('the nodes above a changed path are checked for what they say themselves: a field they do not declare, a required one removed, a new object missing its required fields, a list grown past its bound', () => {
  assert.deepEqual(messages(copy({ gep: 'EU' }), [['spec', 'gep']]), ['spec.gep: field not declared in the schema']);
  assert.deepEqual(messages({ apiVersion: 'x/v1', kind: 'L', metadata: {}, spec: {} }, [['spec', 'targetRef']]), ['spec.targetRef: required']);
  assert.deepEqual(messages(copy({ loadBalancing: { geo: 'EU' } }), [['spec', 'loadBalancing', 'geo']]), ['spec.loadBalancing.weight: required', 'spec.loadBalancing.defaultGeo: required']);
  const four = [1, 2, 3, 4].map((i) => ({ limit: i, window: `${i}m` }));
  assert.deepEqual(messages(copy({ rates: four }), [['spec', 'rates', 3, 'limit']]), ['spec.rates: must NOT have more than 3 items']);
});

test('a list-type map whose changed items share their keys is refused, as the apiserver refuses duplicates', () => {
  const rates = [
    { limit: 1, window: '1m' },
    { limit: 2, window: '1m' },
  ];
  assert.deepEqual(messages(copy({ rates }), [['spec', 'rates']]), ['spec.rates[1]: Duplicate value: window="1m"']);
  assert.deepEqual(messages(copy({ rates }), [['spec', 'rates', 1, 'window']]), ['spec.rates[1]: Duplicate value: window="1m"']);
  assert.deepEqual(messages(copy({ rates })), ['spec.rates[1]: Duplicate value: window="1m"'], 'and so does the whole-copy check');
});

test('the CEL rules above a changed value see it; a rule elsewhere, on values the apiserver already judged, is not evaluated', () => {
  const other = { ...copy({ geo: 'EU' }), spec: { targetRef: { kind: 'HTTPRoute', name: 'r' }, geo: 'EU' } };
  assert.deepEqual(messages(other, [['spec', 'geo']], RULES), ['spec: geo needs a Gateway target']);
  // targetRef.name's rule fails on every real name: reached only when the whole copy is checked.
  assert.deepEqual(messages(copy({ geo: 'US' }), [['spec', 'geo']], RULES), []);
  assert.deepEqual(messages(copy({ geo: 'US' }), undefined, RULES), ['spec.targetRef.name: never true of a real name']);
});

test('a part of the schema that cannot be compiled refuses the copies that reach it, and only those', () => {
  assert.deepEqual(messages(copy({ geo: 'EU' }), [['spec', 'geo']], BROKEN), []);
  const [refused] = messages(copy({ broken: { x: 'a' } }), [['spec', 'broken', 'x']], BROKEN);
  assert.match(refused ?? '', /^spec\.broken\.x: the schema there cannot be checked here \(.*\); refused rather than passed unchecked$/);
});

test('paths under another changed path are checked with it, once', () => {
  assert.deepEqual(messages(copy({ loadBalancing: { weight: 'x', defaultGeo: true } }), [['spec', 'loadBalancing'], ['spec', 'loadBalancing', 'weight']]), ['spec.loadBalancing.weight: must be integer']);
});

test('properties named under allOf/anyOf/oneOf/not validate those fields only: the fields a branch does not name are not unknown there', () => {
  const schema: OpenApiSchema = structuredClone(LIMITS);
  const spec = (schema.properties as Record<string, OpenApiSchema>).spec!;
  // A structural schema's value validation: each branch restates some fields the structural part declares.
  spec.anyOf = [{ properties: { geo: { enum: ['EU'] } } }, { required: ['rates'] }];
  spec.not = { properties: { loadBalancing: { properties: { geo: { enum: ['ASIA'] } } } }, required: ['loadBalancing'] };
  assert.deepEqual(messages(copy({ geo: 'EU' }), [['spec', 'geo']], schema), []);
  assert.deepEqual(messages(copy({ geo: 'US', rates: [{ limit: 1, window: '1m' }] }), [['spec', 'geo']], schema), []);
  assert.notDeepEqual(messages(copy({ geo: 'US' }), [['spec', 'geo']], schema), [], 'neither branch holds: refused');
  assert.deepEqual(messages(copy({ geo: 'EU', loadBalancing: { weight: 1, defaultGeo: true, geo: 'EU' } }), [['spec', 'loadBalancing', 'geo']], schema), []);
  assert.notDeepEqual(messages(copy({ geo: 'EU', loadBalancing: { weight: 1, defaultGeo: true, geo: 'ASIA' } }), [['spec', 'loadBalancing', 'geo']], schema), [], 'the `not` branch holds, whatever fields it does not name: refused');
});
