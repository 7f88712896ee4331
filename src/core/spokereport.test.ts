import assert from 'node:assert/strict';
import { test } from 'node:test';
import { POLICY_SYNCED_ANNOTATION } from './metadatakeys.ts';
import type { KubeObject } from './objects.ts';
import { buildSpokeConfigWork, readSpokeReport } from './spokeconfig.ts';
import {
  buildSpokeReport,
  changedKinds,
  localPoliciesIn,
  parseSpokeReport,
  reportContent,
  reportFreshUntil,
  serializeSpokeReport,
  spokeReportName,
} from './spokereport.ts';

const AUTH = 'authpolicies.kuadrant.io';
const RLP = 'ratelimitpolicies.kuadrant.io';

function policy(namespace: string, name: string, target: Record<string, unknown>, synced = false): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { namespace, name, ...(synced ? { annotations: { [POLICY_SYNCED_ANNOTATION]: `hub/${name}` } } : {}) },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', ...target } },
  };
}

const NOW = new Date('2026-11-23T10:00:00.123Z');

test('the report lists, per kind and namespace, the local policies that take a Gateway — not synced copies — sorted', () => {
  const report = buildSpokeReport(
    new Map([
      [RLP, []],
      [AUTH, [policy('b', 'z', { name: 'gw' }), policy('a', 'y', { name: 'gw', sectionName: 'https' }), policy('b', 'x', { name: 'gw' }), policy('a', 'copy', { name: 'gw' }, true)]],
    ]),
    NOW,
  );
  assert.deepEqual(report, {
    heartbeat: '2026-11-23T10:00:00Z',
    kinds: {
      [AUTH]: { a: [{ name: 'y', targets: [{ gateway: 'gw', sectionName: 'https' }] }], b: [{ name: 'x', targets: [{ gateway: 'gw' }] }, { name: 'z', targets: [{ gateway: 'gw' }] }] },
      [RLP]: {},
    },
  });
  assert.deepEqual(Object.keys(report.kinds), [AUTH, RLP]);
});

test('the report survives its own serialisation; anything else parses to nothing', () => {
  const report = buildSpokeReport(new Map([[AUTH, [policy('a', 'l', { name: 'gw', sectionName: 's' }), policy('a', 'm', { name: 'gw' })]]]), NOW);
  assert.deepEqual(parseSpokeReport(serializeSpokeReport(report)), report);
  for (const bad of [undefined, '', 'not json', '{}', '{"heartbeat":"yesterday","kinds":{}}', '{"heartbeat":"2026-11-23T10:00:00Z","kinds":{"a":[]}}']) {
    assert.equal(parseSpokeReport(bad), undefined, String(bad));
  }
});

test('the content leaves out the heartbeat: an unchanged spoke gives the same content', () => {
  const policies = new Map([[AUTH, [policy('a', 'l', { name: 'gw' })]]]);
  const a = buildSpokeReport(policies, NOW);
  const b = buildSpokeReport(policies, new Date(NOW.getTime() + 60_000));
  assert.notEqual(serializeSpokeReport(a), serializeSpokeReport(b));
  assert.equal(reportContent(a), reportContent(b));
  assert.notEqual(reportContent(a), reportContent(buildSpokeReport(new Map([[AUTH, []]]), NOW)));
});

test('localPoliciesIn: an unreported kind is unknown (undefined), a reported one without locals in the namespace is none', () => {
  const report = buildSpokeReport(new Map([[AUTH, [policy('a', 'l', { name: 'gw' })]]]), NOW);
  assert.deepEqual(localPoliciesIn(report, AUTH, 'a'), [{ key: 'a/l', targets: [{ gateway: 'gw' }] }]);
  assert.deepEqual(localPoliciesIn(report, AUTH, 'b'), []);
  assert.deepEqual(localPoliciesIn(report, AUTH, 'constructor'), []);
  assert.equal(localPoliciesIn(report, RLP, 'a'), undefined);
  assert.equal(localPoliciesIn(report, 'constructor', 'a'), undefined);
});

test('a report counts until its heartbeat plus the stale limit', () => {
  const report = buildSpokeReport(new Map(), NOW);
  assert.equal(reportFreshUntil(report, 120_000), Date.parse('2026-11-23T10:00:00Z') + 120_000);
});

test('changedKinds names the kinds whose local policies differ, a kind appearing or going included', () => {
  const one = buildSpokeReport(new Map([[AUTH, [policy('a', 'l', { name: 'gw' })]], [RLP, []]]), NOW);
  const two = buildSpokeReport(new Map([[AUTH, []], [RLP, []]]), NOW);
  const three = buildSpokeReport(new Map([[AUTH, []]]), NOW);
  assert.deepEqual(changedKinds(one, one), []);
  assert.deepEqual(changedKinds(one, two), [AUTH]);
  assert.deepEqual(changedKinds(two, three), [RLP]);
  assert.deepEqual(changedKinds(undefined, three), [AUTH]);
  assert.deepEqual(changedKinds(three, undefined), [AUTH]);
});

test('the spoke-config work reads the report back ReadOnly, beside the configuration, and finds it in its feedback', () => {
  const work = buildSpokeConfigWork({ cluster: 'c1', kinds: [], configMap: { namespace: 'policy-sync-system', name: 'policy-sync-spoke' }, controller: 'abc' });
  const [, report] = work.spec.workload.manifests;
  assert.deepEqual(report, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: spokeReportName('policy-sync-spoke'), namespace: 'policy-sync-system' } });
  assert.equal(spokeReportName('policy-sync-spoke'), 'policy-sync-spoke-report');
  assert.deepEqual(work.spec.manifestConfigs, [
    {
      resourceIdentifier: { group: '', resource: 'configmaps', name: 'policy-sync-spoke-report', namespace: 'policy-sync-system' },
      updateStrategy: { type: 'ReadOnly' },
      feedbackRules: [{ type: 'JSONPaths', jsonPaths: [{ name: 'report', path: '.data.report' }] }],
      feedbackScrapeType: 'Watch',
    },
  ]);
  assert.equal(readSpokeReport(work), undefined, 'no status: no report');
  const text = serializeSpokeReport(buildSpokeReport(new Map([[AUTH, [policy('a', 'l', { name: 'gw' })]]]), NOW));
  const withStatus = {
    ...work,
    status: {
      resourceStatus: {
        manifests: [
          { resourceMeta: { ordinal: 0, resource: 'configmaps', name: 'policy-sync-spoke' }, statusFeedback: {} },
          { resourceMeta: { ordinal: 1, resource: 'configmaps', name: 'policy-sync-spoke-report' }, statusFeedback: { values: [{ name: 'report', fieldValue: { type: 'String', string: text } }] } },
        ],
      },
    },
  };
  assert.deepEqual(readSpokeReport(withStatus), parseSpokeReport(text));
});
