import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseParamsJson } from '../params/params.ts';
import { buildSpokeConfigWork } from './spokeconfig.ts';

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
