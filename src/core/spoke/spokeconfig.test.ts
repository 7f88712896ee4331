import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseParamsJson } from '../params/params.ts';
import { workCacheView } from '../works/cacheview.ts';
import { buildSpokeConfigWork, buildSpokeHeartbeatWork, isSpokeConfigWork, isSpokeHeartbeatWork, kindsOfParamsConfigMap, readSpokeReport, spokeHeartbeatText, spokeReportText } from './spokeconfig.ts';
import { parseSpokeHeartbeat, reportDigest, serializeSpokeHeartbeat } from './spokeheartbeat.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { withConfigMapFeedback } from '../../../testkit/reports.ts';

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

test('the heartbeat work reads the agent heartbeat ConfigMap back ReadOnly, apart from the configuration and report, and finds it in its feedback', () => {
  const configMap = { namespace: 'policy-sync-system', name: 'policy-sync-spoke' };
  const work = buildSpokeHeartbeatWork({ cluster: 'c1', configMap, controller: 'abc' });
  assert.equal(work.metadata.name, 'policy-sync-spoke-heartbeat');
  assert.equal(work.metadata.namespace, 'c1');
  assert.ok(isSpokeConfigWork(work) && isSpokeHeartbeatWork(work), 'one of the spoke configuration works, placed and deleted with it');
  assert.equal(isSpokeHeartbeatWork(buildSpokeConfigWork({ cluster: 'c1', kinds: [], configMap, controller: 'abc' })), false);
  assert.deepEqual(work.spec.workload.manifests, [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'policy-sync-spoke-heartbeat', namespace: 'policy-sync-system' } }]);
  assert.deepEqual(work.spec.manifestConfigs, [
    {
      resourceIdentifier: { group: '', resource: 'configmaps', name: 'policy-sync-spoke-heartbeat', namespace: 'policy-sync-system' },
      updateStrategy: { type: 'ReadOnly' },
      feedbackRules: [{ type: 'JSONPaths', jsonPaths: [{ name: 'heartbeat', path: '.data.heartbeat' }] }],
      feedbackScrapeType: 'Watch',
    },
  ]);
  assert.equal(spokeHeartbeatText(work), undefined, 'no status: no heartbeat');
  const text = serializeSpokeHeartbeat({ heartbeat: '2026-11-23T10:00:00.123Z', report: reportDigest('{}') });
  const withStatus: KubeObject = {
    ...work,
    status: { resourceStatus: { manifests: [{ resourceMeta: { ordinal: 0, resource: 'configmaps', name: 'policy-sync-spoke-heartbeat', namespace: 'policy-sync-system' }, statusFeedback: { values: [{ name: 'heartbeat', fieldValue: { type: 'String', string: text } }] } }] } },
  };
  assert.equal(spokeHeartbeatText(withStatus), text);
  assert.equal(spokeReportText(withStatus), undefined, 'a heartbeat work carries no report');
  // What it costs the hub per heartbeat: the heartbeat work's status, a few hundred bytes of it the feedback.
  assert.ok(text.length < 128, `${text.length} bytes of heartbeat`);
});

test('a heartbeat names the report by the SHA-256 of its text; an unreadable one is refused, saying why', () => {
  const ok = parseSpokeHeartbeat(serializeSpokeHeartbeat({ heartbeat: '2026-11-23T10:00:00Z', report: reportDigest('report text') }));
  assert.deepEqual(ok, { ok: true, heartbeat: { heartbeat: '2026-11-23T10:00:00Z', report: reportDigest('report text') } });
  assert.match(reportDigest('report text'), /^[0-9a-f]{64}$/);
  assert.equal(reportDigest('report text'), reportDigest('report text'));
  assert.notEqual(reportDigest('report text'), reportDigest('report text '));
  const refused = (text: string): string => {
    const r = parseSpokeHeartbeat(text);
    assert.ok(!r.ok, text);
    return r.message;
  };
  assert.equal(refused('not json'), 'not JSON');
  assert.equal(refused('{"heartbeat":"yesterday","report":"' + 'a'.repeat(64) + '"}'), 'heartbeat: must be an RFC 3339 time');
  assert.equal(refused('{"heartbeat":"2026-11-23T10:00:00Z","report":"abc"}'), 'report: must be a SHA-256 digest in hex');
  assert.equal(refused('{"heartbeat":"2026-11-23T10:00:00Z","report":"' + 'a'.repeat(64) + '","x":1}'), 'x: unknown field');
  assert.equal(refused(`{"heartbeat":"${'9'.repeat(300)}"}`), 'over 256 bytes');
});

test('the spoke configuration work as the hub caches it (core/works/cacheview.ts) keeps its report and its label', () => {
  const built = buildSpokeConfigWork({ cluster: 'c1', kinds: [AUTH], configMap: { namespace: 'policy-sync-system', name: 'cfg' }, controller: 'abc' });
  const report = JSON.stringify({ heartbeat: '2026-01-01T00:00:00Z', kinds: {} });
  const whole = withConfigMapFeedback(built, 1, 'report', report);
  const cached = workCacheView()(whole);
  assert.equal(isSpokeConfigWork(cached), true);
  assert.deepEqual(readSpokeReport(cached), readSpokeReport(whole));
  assert.ok(readSpokeReport(cached));
});
