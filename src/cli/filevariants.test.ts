// The file's PolicyVariants in a `diff` (filevariants.ts): which documents are variants, the hub's variants with
// the file's in place, and which of them a previewed policy is rendered with. Reading the hub (the variant's
// generation, its target) is covered by test/integration/cli-variants.test.ts against the sandbox.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../core/k8s/objects.ts';
import { isVariantDocument, variantsTargeting, variantsWith, type FileVariant } from './filevariants.ts';
import type { SyncedKind } from './status.ts';

const DNS: SyncedKind = { group: 'kuadrant.io', version: 'v1', resource: 'dnspolicies', kind: 'DNSPolicy', singular: 'dnspolicy', shortNames: [] };

function variant(namespace: string, name: string, target: string, generation = 1): KubeObject {
  return { apiVersion: 'policysync.kuadrant.io/v1alpha1', kind: 'PolicyVariant', metadata: { namespace, name, generation }, spec: { targetRef: { group: 'kuadrant.io', kind: 'DNSPolicy', name: target }, entries: [] } };
}

function fromFile(object: KubeObject, change: FileVariant['change']): FileVariant {
  return { object, where: 'v.yaml', namespace: object.metadata.namespace ?? '', change, target: { kind: DNS, name: 'dns' } };
}

test('isVariantDocument: a PolicyVariant of policysync.kuadrant.io, whatever its version; not another group\'s kind of that name', () => {
  assert.equal(isVariantDocument(variant('ns', 'geo', 'dns')), true);
  assert.equal(isVariantDocument({ ...variant('ns', 'geo', 'dns'), apiVersion: 'policysync.kuadrant.io/v1beta1' }), true);
  assert.equal(isVariantDocument({ ...variant('ns', 'geo', 'dns'), apiVersion: 'example.com/v1' }), false);
  assert.equal(isVariantDocument({ apiVersion: 'kuadrant.io/v1', kind: 'DNSPolicy', metadata: { name: 'dns' } }), false);
});

test('variantsWith: the file\'s variant replaces the hub\'s of the same namespace and name, or is added; others stay', () => {
  const hub = [variant('ns', 'geo', 'dns', 3), variant('ns', 'zone', 'dns'), variant('other', 'geo', 'dns')];
  const edited = fromFile(variant('ns', 'geo', 'dns', 4), 'spec');
  const added = fromFile(variant('ns', 'weight', 'dns'), 'new');
  const merged = variantsWith(hub, [edited, added]);
  assert.deepEqual(merged.map((v) => `${v.metadata.namespace}/${v.metadata.name}@${v.metadata.generation}`), ['ns/zone@1', 'other/geo@1', 'ns/geo@4', 'ns/weight@1']);
});

test('variantsTargeting: the variants of the previewed policy (its namespace, group, kind, name), by name, the file\'s marked with how they differ', () => {
  const edited = fromFile(variant('ns', 'geo', 'dns', 4), 'spec');
  const merged = variantsWith([variant('ns', 'geo', 'dns', 3), variant('ns', 'zone', 'dns'), variant('ns', 'elsewhere', 'other-dns'), variant('other', 'x', 'dns')], [edited]);
  assert.deepEqual(variantsTargeting(merged, [edited], { group: 'kuadrant.io', kind: 'DNSPolicy', namespace: 'ns', name: 'dns' }), [
    { name: 'geo', generation: 4, change: 'spec' },
    { name: 'zone', generation: 1 },
  ]);
});
