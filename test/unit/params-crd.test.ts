// The params document has two ways in: a ConfigMap's JSON, checked by the zod schema only, and a
// PolicySyncParams object, checked by the CRD's schema at admission and by zod after. The two must say
// the same: a limit only in the CRD is missing for ConfigMaps; one only in zod lets the apiserver store
// params the hub refuses. This holds them to each other, keyword by keyword, for every field.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse } from 'yaml';
import { z } from 'zod';
import { paramsSchema } from '../../src/core/params/params.ts';

type Schema = Record<string, unknown>;

const CRD_FILE = new URL('../../crds/policysync.kuadrant.io_policysyncparams.yaml', import.meta.url);

/** The keywords that constrain a value; descriptions, defaults and vendor extensions do not. */
const CONSTRAINTS = ['type', 'maxItems', 'minItems', 'maxLength', 'minLength', 'pattern', 'enum', 'minimum', 'maximum', 'format'];

function crdSpecSchema(): Schema {
  const crd = parse(readFileSync(CRD_FILE, 'utf8')) as { spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] } };
  const version = crd.spec.versions.find((v) => v.name === 'v1alpha1');
  assert.ok(version, 'the CRD serves v1alpha1');
  const root = version.schema.openAPIV3Schema as { properties: { spec: Schema } };
  return root.properties.spec;
}

/** Every constraint of a schema, as `path keyword = value` lines, sorted. */
function constraints(schema: Schema, path = 'spec'): string[] {
  const lines: string[] = [];
  for (const keyword of CONSTRAINTS) {
    if (schema[keyword] !== undefined) lines.push(`${path} ${keyword} = ${JSON.stringify(schema[keyword])}`);
  }
  const required = (schema.required as string[] | undefined) ?? [];
  if (required.length > 0) lines.push(`${path} required = ${JSON.stringify([...required].sort())}`);
  const properties = (schema.properties as Record<string, Schema> | undefined) ?? {};
  for (const [name, property] of Object.entries(properties)) lines.push(...constraints(property, `${path}.${name}`));
  if (schema.items !== undefined) lines.push(...constraints(schema.items as Schema, `${path}[]`));
  return lines.sort();
}

test('the PolicySyncParams CRD and the zod params schema have the same fields, types, required fields, limits and patterns', () => {
  const crd = crdSpecSchema();
  const zod = z.toJSONSchema(paramsSchema, { io: 'input' }) as Schema;
  assert.deepEqual(constraints(crd), constraints(zod));
});

test('the comparison sees a limit that only one side has (it would catch the drift it is for)', () => {
  const zod = z.toJSONSchema(paramsSchema, { io: 'input' }) as Schema;
  const drifted = structuredClone(crdSpecSchema()) as { properties: { policiesToSync: Schema } };
  delete drifted.properties.policiesToSync.maxItems;
  assert.notDeepEqual(constraints(drifted), constraints(zod));
  assert.ok(constraints(zod).includes('spec.policiesToSync maxItems = 64'));
  assert.ok(constraints(zod).includes('spec.policiesToSync[].statusFeedback[].name pattern = "^[A-Za-z0-9_.-]+$"'));
});

test('neither side lets a field escape the comparison: zod emits no keyword the comparison ignores but structure', () => {
  // A refinement (z.refine) is invisible to toJSONSchema; anything that shows as allOf/anyOf/not would be
  // missed by the line-by-line comparison above, so neither may appear.
  const text = JSON.stringify(z.toJSONSchema(paramsSchema, { io: 'input' }));
  for (const keyword of ['allOf', 'anyOf', 'oneOf', '"not"', '$ref']) assert.ok(!text.includes(keyword), keyword);
});
