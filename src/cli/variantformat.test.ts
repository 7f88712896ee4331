// How explain and status tell PolicyVariants (variantformat.ts); the explain and table layouts around them are
// statusformat.test.ts and tableformat.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterVariantsCell, clustersWithVariants, fieldText, variantOutcomeText, variantsItem } from './variantformat.ts';

const GEO = 'kuadrant.io/lb-attribute-geo-code';

test('fieldText: the field, its value as JSON, and where it came from (a label, a claim, the cluster name, a default, a patch), with the variant and entry', () => {
  assert.equal(fieldText({ path: 'spec.loadBalancing.geo', value: 'EU', variant: 'geo', entry: 0, source: { from: 'clusterLabel', key: GEO } }), `spec.loadBalancing.geo = "EU" from label ${GEO} (variant geo, entry 0)`);
  assert.equal(
    fieldText({ path: 'spec.loadBalancing.weight', value: 120, variant: 'geo', entry: 0, source: { from: 'clusterLabel', key: 'w' }, defaulted: true }),
    'spec.loadBalancing.weight = 120 (default; label w not set) (variant geo, entry 0)',
  );
  assert.equal(fieldText({ path: 'spec.region', value: 'eu-west-1', variant: 'r', entry: 2, source: { from: 'clusterClaim', name: 'region.open-cluster-management.io' } }), 'spec.region = "eu-west-1" from claim region.open-cluster-management.io (variant r, entry 2)');
  assert.equal(fieldText({ path: 'spec.id', value: 'c1', variant: 'n', entry: 0, source: { from: 'clusterName' } }), 'spec.id = "c1" from the cluster name (variant n, entry 0)');
  assert.equal(fieldText({ path: 'spec.limits.global.rates', value: [{ limit: 50, window: '1m' }], variant: 'c2-limit', entry: 0, source: 'patch' }), 'spec.limits.global.rates = [{"limit":50,"window":"1m"}] from patch (variant c2-limit, entry 0)');
});

test('variantOutcomeText: the clusters a variant changes, those it fails on and why, entries selecting none; a refused one with its field', () => {
  const failing = [{ cluster: 'c3', reason: 'VariantValueMissing' as const, message: 'm', variants: ['geo'] }];
  assert.equal(variantOutcomeText({ namespace: 'ns', name: 'geo', generation: 2, applied: ['c1', 'c2'], failing, unmatched: [] }), 'geo@2: changes 2 clusters (c1, c2); fails on 1 (c3: VariantValueMissing)');
  assert.equal(variantOutcomeText({ namespace: 'ns', name: 'one', generation: 1, applied: ['c1'], failing: [], unmatched: [1] }), "one@1: changes 1 cluster (c1); entry 1 selects none of the policy's clusters");
  assert.equal(variantOutcomeText({ namespace: 'ns', name: 'none', generation: 1, applied: [], failing: [], unmatched: [0, 2] }), "none@1: changes no cluster; entries 0, 2 select none of the policy's clusters");
  const many = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
  assert.equal(variantOutcomeText({ namespace: 'ns', name: 'm', generation: 1, applied: many, failing: [], unmatched: [] }), 'm@1: changes 7 clusters (a, b, c, d, e and 2 more)');
  assert.equal(
    variantOutcomeText({ namespace: 'ns', name: 'bad', generation: 3, refused: { field: 'spec.entries[0].patch', message: 'no' }, applied: [], failing: [], unmatched: [] }),
    'bad@3: refused: spec.entries[0].patch: no (every cluster of the policy keeps the copy it runs)',
  );
});

test('the VARIANTS cell of a cluster, and how many clusters of a policy run a variant', () => {
  assert.equal(clusterVariantsCell({ variants: ['geo@1', 'zone@2'] }), 'geo@1,zone@2');
  assert.equal(clusterVariantsCell({}), '-');
  assert.equal(clusterVariantsCell({ variants: [] }), '-');
  assert.equal(clusterVariantsCell(undefined), '-');
  assert.equal(clustersWithVariants({ c1: { variants: ['geo@1'] }, c2: {}, c3: { variants: ['geo@1'] } }), 2);
  assert.equal(clustersWithVariants(undefined), 0);
});

test('variantsItem: the outcomes, per cluster (sorted) what the variants set, and the failures', () => {
  const field = { path: 'spec.x', value: 1, variant: 'v', entry: 0, source: 'patch' as const };
  const item = variantsItem({
    variants: [],
    clusters: new Map([
      ['c2', { carried: ['v@1'], fields: [field] }],
      ['c1', { carried: ['v@1'], fields: [field] }],
    ]),
    failures: [],
    placed: new Set(['c1', 'c2']),
  });
  assert.deepEqual(Object.keys(item.clusters as object), ['c1', 'c2']);
  assert.deepEqual((item.clusters as Record<string, unknown>).c1, { carried: ['v@1'], fields: [field] });
});
