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

/** Keywords that only describe: everything else a schema says is a constraint, and is compared. */
const ANNOTATIONS = new Set(['description', 'title', '$schema', 'examples']);
/** Keywords that hold schemas, walked into rather than compared as values. */
const STRUCTURE = new Set(['properties', 'items', 'required', 'additionalProperties']);

function crdSpecSchema(): Schema {
  const crd = parse(readFileSync(CRD_FILE, 'utf8')) as { spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] } };
  const version = crd.spec.versions.find((v) => v.name === 'v1alpha1');
  assert.ok(version, 'the CRD serves v1alpha1');
  const root = version.schema.openAPIV3Schema as { properties: { spec: Schema } };
  return root.properties.spec;
}

/**
 * Every constraint of a schema, as `path keyword = value` lines, sorted: each keyword but the
 * annotations, the required fields, and what an object does with fields it does not list — zod's
 * strictObject says `additionalProperties: false`; a CRD object with properties says it by not
 * preserving unknown fields (the apiserver prunes them, or refuses them under strict field validation).
 */
function constraints(schema: Schema, side: 'crd' | 'zod', path = 'spec'): string[] {
  const lines: string[] = [];
  for (const [keyword, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(keyword) || STRUCTURE.has(keyword)) continue;
    if (side === 'crd' && keyword === 'x-kubernetes-preserve-unknown-fields') continue;
    lines.push(`${path} ${keyword} = ${JSON.stringify(value)}`);
  }
  const required = (schema.required as string[] | undefined) ?? [];
  if (required.length > 0) lines.push(`${path} required = ${JSON.stringify([...required].sort())}`);
  const properties = schema.properties as Record<string, Schema> | undefined;
  const closed = side === 'zod' ? schema.additionalProperties === false : properties !== undefined && schema['x-kubernetes-preserve-unknown-fields'] !== true;
  if (closed) lines.push(`${path} unknown fields refused`);
  if (typeof schema.additionalProperties === 'object') lines.push(...constraints(schema.additionalProperties as Schema, side, `${path}{}`));
  for (const [name, property] of Object.entries(properties ?? {})) lines.push(...constraints(property, side, `${path}.${name}`));
  if (schema.items !== undefined) lines.push(...constraints(schema.items as Schema, side, `${path}[]`));
  return lines.sort();
}

function zodSpecSchema(): Schema {
  return z.toJSONSchema(paramsSchema, { io: 'input' });
}

test('the PolicySyncParams CRD and the zod params schema have the same fields, types, required fields, limits and patterns', () => {
  const crd = crdSpecSchema();
  const zod = zodSpecSchema();
  assert.deepEqual(constraints(crd, 'crd'), constraints(zod, 'zod'));
});

test('the comparison sees a limit that only one side has (it would catch the drift it is for)', () => {
  const zod = zodSpecSchema();
  const drifted = structuredClone(crdSpecSchema()) as { properties: { policiesToSync: Schema } };
  delete drifted.properties.policiesToSync.maxItems;
  assert.notDeepEqual(constraints(drifted, 'crd'), constraints(zod, 'zod'));
  assert.ok(constraints(zod, 'zod').includes('spec.policiesToSync maxItems = 64'));
  assert.ok(constraints(zod, 'zod').includes('spec.policiesToSync[].statusFeedback[].name pattern = "^[A-Za-z0-9_.-]+$"'));
});

test('neither side lets a field escape the comparison: zod emits no keyword the comparison ignores but structure', () => {
  // A refinement (z.refine) is invisible to toJSONSchema; anything that shows as allOf/anyOf/not would be
  // missed by the line-by-line comparison above, so neither may appear.
  const text = JSON.stringify(z.toJSONSchema(paramsSchema, { io: 'input' }));
  for (const keyword of ['allOf', 'anyOf', 'oneOf', '"not"', '$ref']) assert.ok(!text.includes(keyword), keyword);
});

type Drift = [string, (schema: Schema, side: 'crd' | 'zod') => void];
const at = (schema: Schema, ...path: string[]): Schema => path.reduce((s, key) => (key === '[]' ? (s.items as Schema) : ((s.properties as Record<string, Schema>)[key] as Schema)), schema);
/** One change of each kind of constraint, made to one side only. */
const DRIFTS: Drift[] = [
  ['a type', (s) => void (at(s, 'downstreamNamespace').type = 'integer')],
  ['a required field dropped', (s) => void (at(s, 'policiesToSync', '[]').required = ['group', 'version'])],
  ['a required field added', (s) => void (at(s, 'policiesToSync', '[]', 'statusFeedback', '[]').required = ['name', 'path', 'extra'])],
  ['an enum', (s) => void (at(s, 'downstreamClass').enum = ['a', 'b'])],
  ['a pattern changed', (s) => void (at(s, 'policiesToSync', '[]', 'version').pattern = '^v[0-9]+$')],
  ['a pattern dropped', (s) => void delete at(s, 'experimentalPolicySync', '[]', 'statusFeedback', '[]', 'name').pattern],
  ['a minItems', (s) => void (at(s, 'policiesToSync').minItems = 1)],
  ['a minLength', (s) => void (at(s, 'downstreamNamespace').minLength = 1)],
  ['a maxItems changed', (s) => void (at(s, 'policiesToSync', '[]', 'statusFeedback').maxItems = 17)],
  ['a maxLength dropped', (s) => void delete at(s, 'downstreamClass').maxLength],
  ['a minimum and maximum', (s) => void Object.assign(at(s, 'downstreamNamespace'), { minimum: 0, maximum: 3 })],
  ['a field only on one side', (s) => void ((s.properties as Record<string, Schema>).extra = { type: 'string' })],
  ['a field missing on one side', (s) => void delete (s.properties as Record<string, Schema>).downstreamClass],
  ['a default', (s) => void (at(s, 'downstreamNamespace').default = '{namespace}')],
  ['a CEL rule', (s) => void (at(s, 'policiesToSync')['x-kubernetes-validations'] = [{ rule: 'size(self) > 0' }])],
  [
    'unknown fields kept',
    (s, side) => {
      const kind = at(s, 'policiesToSync', '[]');
      if (side === 'crd') kind['x-kubernetes-preserve-unknown-fields'] = true;
      else delete kind.additionalProperties;
    },
  ],
];

test('the comparison catches a drift of every kind of constraint, made on either side', () => {
  const crd = crdSpecSchema();
  const zod = zodSpecSchema();
  for (const [kind, change] of DRIFTS) {
    const crdDrifted = structuredClone(crd);
    change(crdDrifted, 'crd');
    assert.notDeepEqual(constraints(crdDrifted, 'crd'), constraints(zod, 'zod'), `${kind}, in the CRD only`);
    const zodDrifted = structuredClone(zod);
    change(zodDrifted, 'zod');
    assert.notDeepEqual(constraints(crd, 'crd'), constraints(zodDrifted, 'zod'), `${kind}, in zod only`);
  }
});
