import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseParamsJson } from '../params/params.ts';
import { buildSpokeConfigWork, kindsOfParamsConfigMap } from './spokeconfig.ts';
import type { KubeObject } from '../k8s/objects.ts';

const AUTH = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };
const RLP = { group: 'kuadrant.io', version: 'v1', resource: 'ratelimitpolicies' };

test('the spoke config work carries a ConfigMap whose params the spoke agent parses back to the kinds, sorted', () => {
  const work = buildSpokeConfigWork({ cluster: 'c1', kinds: [RLP, AUTH], configMap: { namespace: 'policy-sync-system', name: 'policy-sync-spoke' }, controller: 'abc' });
  assert.equal(work.metadata.name, 'policy-sync-spoke-config');
  assert.equal(work.metadata.namespace, 'c1');
  assert.deepEqual(work.metadata.labels, { 'app.kubernetes.io/managed-by': 'policy-sync', 'policysync.kuadrant.io/controller': 'abc', 'policysync.kuadrant.io/spoke-config': 'true' });
  const [cm] = work.spec.workload.manifests;
  assert.deepEqual(cm?.metadata, { name: 'policy-sync-spoke', namespace: 'policy-sync-system', labels: { 'app.kubernetes.io/managed-by': 'policy-sync' } });
  const parsed = parseParamsJson((cm?.data as { params: string }).params);
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.params.policiesToSync.map((k) => k.resource), ['authpolicies', 'ratelimitpolicies']);
});

test('the spec-hash changes with the kinds and not with their order', () => {
  const hash = (kinds: typeof AUTH[]) =>
    buildSpokeConfigWork({ cluster: 'c1', kinds, configMap: { namespace: 'n', name: 'm' }, controller: 'abc' }).metadata.annotations['policysync.kuadrant.io/spec-hash'];
  assert.equal(hash([AUTH, RLP]), hash([RLP, AUTH]));
  assert.notEqual(hash([AUTH]), hash([AUTH, RLP]));
});

test('kindsOfParamsConfigMap: the kinds of a valid params document; missing or invalid says which', () => {
  const cm = (params: unknown): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', name: 'cm' }, data: { params } });
  const valid = kindsOfParamsConfigMap(cm(JSON.stringify({ policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] })));
  assert.deepEqual(valid.ok && valid.kinds.map((k) => k.resource), ['authpolicies']);
  assert.deepEqual(kindsOfParamsConfigMap(undefined), { ok: false, missing: true, errors: ['params ConfigMap not found'] });
  const invalid = kindsOfParamsConfigMap(cm('{not json'));
  assert.ok(!invalid.ok && !invalid.missing && invalid.errors.length > 0, 'not JSON: refused, naming why');
  const noKey = kindsOfParamsConfigMap({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', name: 'cm' } });
  assert.ok(!noKey.ok && !noKey.missing, 'no params key: invalid, not missing');
});
