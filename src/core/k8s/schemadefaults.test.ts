import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withSchemaDefaults, type DefaultingSchema } from './schemadefaults.ts';

const SCHEMA: DefaultingSchema = {
  properties: {
    spec: {
      properties: {
        priority: { default: 0 },
        metrics: { default: false },
        opa: { properties: { allValues: { default: false }, rego: {} } },
        rules: { additionalProperties: { properties: { enabled: { default: true } } } },
        list: { items: { properties: { weight: { default: 1 } } } },
        nested: { default: {}, properties: { inner: { default: 'x' } } },
        maybe: { nullable: true, default: 'set' },
        dropped: {},
      },
    },
  },
};

test('absent properties take their default, in objects, maps and list items; a default set is defaulted inside', () => {
  const input = { spec: { opa: { rego: 'allow' }, rules: { a: {}, b: { enabled: false } }, list: [{}, { weight: 3 }] } };
  assert.deepEqual(withSchemaDefaults(input, SCHEMA), {
    spec: {
      priority: 0,
      metrics: false,
      opa: { allValues: false, rego: 'allow' },
      rules: { a: { enabled: true }, b: { enabled: false } },
      list: [{ weight: 1 }, { weight: 3 }],
      nested: { inner: 'x' },
      maybe: 'set',
    },
  });
  assert.deepEqual(input.spec.opa, { rego: 'allow' }, 'the input is not changed');
});

test('nulls: dropped where the schema does not allow them, defaulted where it has a default, kept where nullable', () => {
  assert.deepEqual(withSchemaDefaults({ spec: { dropped: null, priority: null, maybe: null } }, SCHEMA).spec, {
    priority: 0,
    metrics: false,
    nested: { inner: 'x' },
    maybe: null,
  });
  assert.deepEqual(withSchemaDefaults({ spec: { unknown: null } }, SCHEMA).spec.unknown, null, 'no schema for it: left alone');
  assert.deepEqual(withSchemaDefaults({ a: 1 }, undefined), { a: 1 });
});
