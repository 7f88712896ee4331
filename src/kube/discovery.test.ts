import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OBSERVED_GENERATION_FIELDS, schemaHasObservedGeneration, type JsonSchema } from './discovery.ts';

const int: JsonSchema = { type: 'integer' };
const condition = (withGeneration: boolean): JsonSchema => ({
  type: 'object',
  properties: { type: { type: 'string' }, status: { type: 'string' }, ...(withGeneration ? { observedGeneration: int } : {}) },
});
const policy = (status: JsonSchema | undefined): JsonSchema => ({
  type: 'object',
  properties: { spec: { type: 'object', properties: { targetRef: { type: 'object' } } }, ...(status ? { status } : {}) },
});

test('the three fields the rollout judges a verdict by, as a person reads them', () => {
  assert.deepEqual(OBSERVED_GENERATION_FIELDS, ['status.observedGeneration', 'status.conditions[].observedGeneration', 'status.ancestors[].conditions[].observedGeneration']);
});

test('a schema with any of the three fields lets its controller say which generation it observed', () => {
  assert.equal(schemaHasObservedGeneration(policy({ type: 'object', properties: { observedGeneration: int } })), true, 'status level (the Kuadrant operator)');
  assert.equal(schemaHasObservedGeneration(policy({ type: 'object', properties: { conditions: { type: 'array', items: condition(true) } } })), true, 'on its conditions');
  const ancestors = { type: 'array', items: { type: 'object', properties: { ancestorRef: { type: 'object' }, conditions: { type: 'array', items: condition(true) } } } };
  assert.equal(schemaHasObservedGeneration(policy({ type: 'object', properties: { conditions: { type: 'array', items: condition(false) }, ancestors } })), true, 'on its ancestors (GEP-713)');
});

test('a structural schema with none of them says it cannot: no status, a status without them, conditions without them', () => {
  assert.equal(schemaHasObservedGeneration(policy(undefined)), false, 'no status at all: the apiserver prunes it');
  assert.equal(schemaHasObservedGeneration(policy({ type: 'object', properties: { phase: { type: 'string' } } })), false);
  assert.equal(schemaHasObservedGeneration(policy({ type: 'object', properties: { conditions: { type: 'array', items: condition(false) } } })), false);
  const ancestors = { type: 'array', items: { type: 'object', properties: { conditions: { type: 'array', items: condition(false) } } } };
  assert.equal(schemaHasObservedGeneration(policy({ type: 'object', properties: { ancestors } })), false);
  assert.equal(schemaHasObservedGeneration(policy({ type: 'object' })), false, 'an object with no properties keeps none');
});

test('a schema that keeps part of the way open, or no schema, cannot tell: undefined (nothing is named)', () => {
  assert.equal(schemaHasObservedGeneration(undefined), undefined);
  assert.equal(schemaHasObservedGeneration(policy({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true })), undefined);
  assert.equal(schemaHasObservedGeneration(policy({ type: 'object', properties: { conditions: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } })), undefined);
  assert.equal(schemaHasObservedGeneration(policy({ type: 'object', additionalProperties: { type: 'string' } })), undefined, 'a map');
  assert.equal(schemaHasObservedGeneration({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }), undefined, 'the whole object open');
  assert.equal(schemaHasObservedGeneration(policy({ type: 'object', properties: { conditions: { type: 'array' } } })), undefined, 'a list of anything');
});
