import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../k8s/objects.ts';
import { VARIANTS_ANNOTATION } from '../metadatakeys.ts';
import { parseVariant, type PolicyVariant } from './policyvariant.ts';
import { convertValue, renderCopy, type ClusterFacts, type KindSchema } from './render.ts';
import { schemaCheck, type OpenApiSchema } from './schemacheck.ts';
import { revisionTag } from '../revisionannotation.ts';

// The parts of kuadrant-operator v1.2.0's DNSPolicy and RateLimitPolicy schemas these tests reach (as served).
const SCHEMA: OpenApiSchema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['targetRef'],
      properties: {
        targetRef: { type: 'object', properties: { group: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' } }, required: ['group', 'kind', 'name'] },
        loadBalancing: {
          type: 'object',
          required: ['defaultGeo', 'geo', 'weight'],
          properties: { defaultGeo: { type: 'boolean' }, geo: { type: 'string', minLength: 1 }, weight: { type: 'integer', default: 120, minimum: 0 } },
        },
        limits: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            properties: { rates: { type: 'array', items: { type: 'object', required: ['limit', 'window'], properties: { limit: { type: 'integer' }, window: { type: 'string', pattern: '^([0-9]{1,5}(h|m|s|ms)){1,4}$' } } } } },
          },
        },
        port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        opaque: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
};
const KIND: KindSchema = { ok: true, schema: SCHEMA, check: schemaCheck(SCHEMA) };

const COPY: KubeObject = {
  apiVersion: 'kuadrant.io/v1',
  kind: 'DNSPolicy',
  metadata: { name: 'dns', namespace: 'team-a', annotations: { 'policysync.kuadrant.io/revision': '2' } },
  spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }, loadBalancing: { defaultGeo: false, geo: 'US', weight: 120 }, limits: { global: { rates: [{ limit: 10, window: '1m' }] } } },
};

function variant(name: string, entries: unknown[], generation = 1): PolicyVariant {
  const parsed = parseVariant({ apiVersion: 'policysync.kuadrant.io/v1alpha1', kind: 'PolicyVariant', metadata: { name, namespace: 'team-a', generation }, spec: { targetRef: { group: 'kuadrant.io', kind: 'DNSPolicy', name: 'dns' }, entries } });
  assert.ok(parsed.ok, JSON.stringify(parsed));
  return parsed.variant;
}

const GEO_ENTRIES = [
  {
    values: [
      { path: 'spec.loadBalancing.geo', valueFrom: { clusterLabel: { key: 'kuadrant.io/lb-attribute-geo-code' } } },
      { path: 'spec.loadBalancing.weight', valueFrom: { clusterLabel: { key: 'kuadrant.io/lb-attribute-custom-weight' } }, default: '120' },
    ],
  },
];
const GEO = variant('geo', GEO_ENTRIES);

function cluster(name: string, labels: Record<string, string> = {}, claims: Record<string, string> = {}): ClusterFacts {
  return { name, labels, claims };
}

test('values from the cluster, converted to the schema type: a label "150" is the integer 150; the default when the label is absent', () => {
  const eu = renderCopy({ copy: COPY, cluster: cluster('c1', { 'kuadrant.io/lb-attribute-geo-code': 'EU', 'kuadrant.io/lb-attribute-custom-weight': '150' }), variants: [GEO], schema: KIND });
  assert.equal(eu.state, 'rendered');
  if (eu.state !== 'rendered') return;
  assert.deepEqual(eu.copy.spec?.loadBalancing, { defaultGeo: false, geo: 'EU', weight: 150 });
  assert.equal(eu.copy.metadata.annotations?.[VARIANTS_ANNOTATION], 'geo@1');
  assert.equal(eu.copy.metadata.annotations?.['policysync.kuadrant.io/revision'], `2/${revisionTag(eu.copy.spec)}`, 'the copy keeps its revision, tagged with its rendered spec');
  assert.deepEqual(eu.fields, [
    { path: 'spec.loadBalancing.geo', value: 'EU', variant: 'geo', entry: 0, source: { from: 'clusterLabel', key: 'kuadrant.io/lb-attribute-geo-code' } },
    { path: 'spec.loadBalancing.weight', value: 150, variant: 'geo', entry: 0, source: { from: 'clusterLabel', key: 'kuadrant.io/lb-attribute-custom-weight' } },
  ]);
  const defaulted = renderCopy({ copy: COPY, cluster: cluster('c2', { 'kuadrant.io/lb-attribute-geo-code': 'SA' }), variants: [GEO], schema: KIND });
  assert.ok(defaulted.state === 'rendered');
  assert.deepEqual(defaulted.copy.spec?.loadBalancing, { defaultGeo: false, geo: 'SA', weight: 120 });
  assert.equal(defaulted.fields[1]?.defaulted, true);
  assert.deepEqual(COPY.spec?.loadBalancing, { defaultGeo: false, geo: 'US', weight: 120 }, 'the base copy is not changed');
});

test('a label missing with no default, or empty: VariantValueMissing naming the variant, entry, field and label; never an empty string', () => {
  for (const labels of [{}, { 'kuadrant.io/lb-attribute-geo-code': '' }] as Record<string, string>[]) {
    const r = renderCopy({ copy: COPY, cluster: cluster('c3', labels), variants: [GEO], schema: KIND });
    assert.deepEqual(r, {
      state: 'failed',
      reason: 'VariantValueMissing',
      message: 'variant geo entry 0 (spec.loadBalancing.geo): label kuadrant.io/lb-attribute-geo-code is not set on cluster c3 and the value has no default',
      variants: ['geo'],
    });
  }
});

test('a value the schema refuses: InvalidVariant naming the label, its value and the type wanted', () => {
  const r = renderCopy({ copy: COPY, cluster: cluster('c1', { 'kuadrant.io/lb-attribute-geo-code': 'EU', 'kuadrant.io/lb-attribute-custom-weight': 'heavy' }), variants: [GEO], schema: KIND });
  assert.equal(r.state, 'failed');
  if (r.state === 'failed') {
    assert.equal(r.reason, 'InvalidVariant');
    assert.equal(r.message, 'variant geo entry 0 (spec.loadBalancing.weight): label kuadrant.io/lb-attribute-custom-weight = "heavy" on cluster c1 is not an integer');
  }
});

test('a patch that breaks the schema (a string where it wants an integer, a field it does not declare, a bound) is refused before it is sent', () => {
  const cases: [unknown, RegExp][] = [
    [{ spec: { limits: { global: { rates: [{ limit: '50', window: '1m' }] } } } }, /variant limits entry 0: the copy for cluster c1 does not validate: spec\.limits\.global\.rates\[0\]\.limit: must be integer/],
    [{ spec: { loadBalancing: { wieght: 3 } } }, /spec\.loadBalancing\.wieght: field not declared in the schema/],
    [{ spec: { loadBalancing: { weight: -1 } } }, /spec\.loadBalancing\.weight: must be >= 0/],
    [{ spec: { loadBalancing: { geo: null } } }, /spec\.loadBalancing\.geo: required/],
    [{ spec: { limits: { global: { rates: [{ limit: 5, window: 'soon' }] } } } }, /window: must match pattern/],
  ];
  for (const [patch, message] of cases) {
    const r = renderCopy({ copy: COPY, cluster: cluster('c1'), variants: [variant('limits', [{ patch }])], schema: KIND });
    assert.equal(r.state, 'failed', JSON.stringify(patch));
    if (r.state === 'failed') {
      assert.equal(r.reason, 'InvalidVariant');
      assert.match(r.message, message);
    }
  }
  const fine = renderCopy({ copy: COPY, cluster: cluster('c1'), variants: [variant('limits', [{ patch: { spec: { limits: { global: { rates: [{ limit: 50, window: '1m' }] } }, opaque: { any: ['thing'] }, port: 'http' } } }])], schema: KIND });
  assert.equal(fine.state, 'rendered');
});

test('selection: names, labels and claims together; no variant selecting the cluster leaves the base copy', () => {
  const pick = variant('pick', [{ clusters: { names: ['c1', 'c2'], labelSelector: { matchLabels: { env: 'prod' } }, claimSelector: { matchExpressions: [{ key: 'region.open-cluster-management.io', operator: 'In', values: ['eu-west-1'] }] } }, patch: { spec: { loadBalancing: { geo: 'EU' } } } }]);
  const claims = { 'region.open-cluster-management.io': 'eu-west-1' };
  assert.equal(renderCopy({ copy: COPY, cluster: cluster('c1', { env: 'prod' }, claims), variants: [pick], schema: KIND }).state, 'rendered');
  assert.equal(renderCopy({ copy: COPY, cluster: cluster('c3', { env: 'prod' }, claims), variants: [pick], schema: KIND }).state, 'base', 'not named');
  assert.equal(renderCopy({ copy: COPY, cluster: cluster('c1', { env: 'dev' }, claims), variants: [pick], schema: KIND }).state, 'base', 'label');
  assert.equal(renderCopy({ copy: COPY, cluster: cluster('c1', { env: 'prod' }, {}), variants: [pick], schema: KIND }).state, 'base', 'claim');
});

test('within a variant a later entry wins; two variants setting one field of one cluster are a conflict naming both', () => {
  const layered = variant('layered', [{ patch: { spec: { loadBalancing: { geo: 'EU' } } } }, { clusters: { names: ['c2'] }, patch: { spec: { loadBalancing: { geo: 'DE' } } } }]);
  const c2 = renderCopy({ copy: COPY, cluster: cluster('c2'), variants: [layered], schema: KIND });
  assert.ok(c2.state === 'rendered');
  assert.equal((c2.copy.spec?.loadBalancing as { geo: string }).geo, 'DE');
  const other = variant('other', [{ clusters: { names: ['c2'] }, values: [{ path: 'spec.loadBalancing', valueFrom: { clusterClaim: { name: 'lb' } }, default: '{"geo":"X","weight":1,"defaultGeo":true}' }] }]);
  const r = renderCopy({ copy: COPY, cluster: cluster('c2'), variants: [layered, other], schema: KIND });
  assert.deepEqual(r, {
    state: 'failed',
    reason: 'VariantConflict',
    message: 'variants layered (entry 0) and other (entry 0) both set spec.loadBalancing on cluster c2: it keeps the copy it runs',
    variants: ['layered', 'other'],
  });
  // Other fields of one cluster, or one field of other clusters: no conflict.
  const weight = variant('weight', [{ patch: { spec: { loadBalancing: { weight: 7 } } } }]);
  const both = renderCopy({ copy: COPY, cluster: cluster('c2'), variants: [layered, weight], schema: KIND });
  assert.ok(both.state === 'rendered');
  assert.deepEqual(both.carried, ['layered@1', 'weight@1']);
  assert.deepEqual(both.copy.spec?.loadBalancing, { defaultGeo: false, geo: 'DE', weight: 7 });
});

test('a schema that could not be read refuses every rendered copy, never sends one unchecked', () => {
  const r = renderCopy({ copy: COPY, cluster: cluster('c1'), variants: [variant('v', [{ patch: { spec: { loadBalancing: { geo: 'EU' } } } }])], schema: { ok: false, message: 'the CRD of dnspolicies.kuadrant.io could not be read' } });
  assert.deepEqual(r, { state: 'failed', reason: 'InvalidVariant', message: 'c1: the CRD of dnspolicies.kuadrant.io could not be read', variants: ['v'] });
});

test('conversion by schema type', () => {
  assert.deepEqual(convertValue('12', { type: 'integer' }), { ok: true, value: 12 });
  assert.deepEqual(convertValue('1.5', { type: 'integer' }), { ok: false, wanted: 'an integer' });
  assert.deepEqual(convertValue('1.5', { type: 'number' }), { ok: true, value: 1.5 });
  assert.deepEqual(convertValue('true', { type: 'boolean' }), { ok: true, value: true });
  assert.deepEqual(convertValue('yes', { type: 'boolean' }), { ok: false, wanted: 'true or false' });
  assert.deepEqual(convertValue('80', { 'x-kubernetes-int-or-string': true }), { ok: true, value: 80 });
  assert.deepEqual(convertValue('http', { 'x-kubernetes-int-or-string': true }), { ok: true, value: 'http' });
  assert.deepEqual(convertValue('["a"]', { type: 'array' }), { ok: true, value: ['a'] });
  assert.deepEqual(convertValue('{}', { type: 'array' }), { ok: false, wanted: 'JSON of an array' });
  assert.deepEqual(convertValue('007', { type: 'string' }), { ok: true, value: '007' });
  assert.deepEqual(convertValue('anything', undefined), { ok: true, value: 'anything' });
});

test('the revision of a rendered copy names its spec: `<generation>/<tag>`, a new tag for a new value of the same variant, the same tag for the same spec', () => {
  const facts = (geo: string) => cluster('c1', { 'kuadrant.io/lb-attribute-geo-code': geo });
  const revisionOf = (r: ReturnType<typeof renderCopy>): string | undefined => (r.state === 'rendered' ? r.copy.metadata.annotations?.['policysync.kuadrant.io/revision'] : undefined);
  const eu = renderCopy({ copy: COPY, cluster: facts('EU'), variants: [GEO], schema: KIND });
  const us = renderCopy({ copy: COPY, cluster: facts('US'), variants: [GEO], schema: KIND });
  assert.match(revisionOf(eu) ?? '', /^2\/[0-9a-f]{10}$/);
  assert.notEqual(revisionOf(us), revisionOf(eu), 'a label a variant reads changed: the same generation and variants, another tag');
  assert.equal(revisionOf(renderCopy({ copy: COPY, cluster: cluster('c9', { 'kuadrant.io/lb-attribute-geo-code': 'EU' }), variants: [GEO], schema: KIND })), revisionOf(eu), 'the same spec: the same tag');
  const edited = renderCopy({ copy: COPY, cluster: facts('EU'), variants: [variant('geo', GEO_ENTRIES, 2)], schema: KIND });
  assert.equal(revisionOf(edited), revisionOf(eu), 'a variant edit that changes nothing in the copy: the same tag');
  const { annotations: _a, ...bare } = COPY.metadata;
  const unrecorded = renderCopy({ copy: { ...COPY, metadata: bare }, cluster: facts('EU'), variants: [GEO], schema: KIND });
  assert.ok(unrecorded.state === 'rendered');
  assert.equal(unrecorded.copy.metadata.annotations?.['policysync.kuadrant.io/revision'], undefined, 'no revision on the base copy: none made up');
  assert.equal(renderCopy({ copy: COPY, cluster: facts('EU'), variants: [], schema: KIND }).state, 'base', 'no variant: the base copy, its revision untouched');
});
