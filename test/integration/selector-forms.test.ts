// Which label-selector forms each real policy kind's schema has (core/targets/selectors.ts), read from the CRDs as
// released (the Go module cache, as the sandbox installs them): Envoy Gateway v1.5's four policies take
// `targetSelectors` and named `targetRefs`; its EnvoyPatchPolicy and Kuadrant's policies take neither selector form,
// and keep the sync's named targets alone.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { targetFormsOf, type TargetForms } from '../../src/core/targets/selectors.ts';
import { moduleFolder } from '../../testkit/sandbox/crds.ts';

type CrdDoc = { kind?: string; spec?: { names: { kind: string }; versions: { name: string; storage?: boolean; schema: { openAPIV3Schema: { properties?: { spec?: unknown } } } }[] } };

/** The forms of the storage version of each CRD in the file, by Kind. */
function formsIn(file: string): Record<string, TargetForms> {
  const out: Record<string, TargetForms> = {};
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as CrdDoc | null)) {
    if (doc?.kind !== 'CustomResourceDefinition' || !doc.spec) continue;
    const version = doc.spec.versions.find((v) => v.storage) ?? doc.spec.versions[0]!;
    out[doc.spec.names.kind] = targetFormsOf(version.schema.openAPIV3Schema.properties?.spec);
  }
  return out;
}

test('Envoy Gateway v1.5: BackendTrafficPolicy, ClientTrafficPolicy, SecurityPolicy and EnvoyExtensionPolicy take targetSelectors and named targetRefs; EnvoyPatchPolicy neither', () => {
  const dir = join(moduleFolder('github.com/envoyproxy/gateway'), 'charts/gateway-helm/crds/generated');
  const withSelectors: TargetForms = { namedRefs: true, refSelectors: false, targetSelectors: true };
  for (const [file, kind] of [['backendtrafficpolicies', 'BackendTrafficPolicy'], ['clienttrafficpolicies', 'ClientTrafficPolicy'], ['securitypolicies', 'SecurityPolicy'], ['envoyextensionpolicies', 'EnvoyExtensionPolicy']] as const) {
    assert.deepEqual(formsIn(join(dir, `gateway.envoyproxy.io_${file}.yaml`))[kind], withSelectors, kind);
  }
  assert.deepEqual(formsIn(join(dir, 'gateway.envoyproxy.io_envoypatchpolicies.yaml')).EnvoyPatchPolicy, { namedRefs: false, refSelectors: false, targetSelectors: false });
});

test('Kuadrant v1: AuthPolicy, RateLimitPolicy, DNSPolicy and TLSPolicy take no selector', () => {
  const dir = join(moduleFolder('github.com/kuadrant/kuadrant-operator'), 'config/crd/bases');
  for (const [file, kind] of [['authpolicies', 'AuthPolicy'], ['ratelimitpolicies', 'RateLimitPolicy'], ['dnspolicies', 'DNSPolicy'], ['tlspolicies', 'TLSPolicy']] as const) {
    const forms = formsIn(join(dir, `kuadrant.io_${file}.yaml`))[kind];
    assert.ok(forms, kind);
    assert.equal(forms.refSelectors || forms.targetSelectors, false, kind);
  }
});
