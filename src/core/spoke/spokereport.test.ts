import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtReport, parsedReport } from '../../../testkit/reports.ts';
import { canonicalJson } from '../k8s/canonical.ts';
import { POLICY_SYNCED_ANNOTATION } from '../metadatakeys.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { buildSpokeConfigWork, readSpokeReport, spokeReportText } from './spokeconfig.ts';
import { buildSpokeReport, reportedObjectOf } from './reportbuild.ts';
import { changedScopes, localPoliciesIn, occupantOf, reportedCount, unnamedLocalsIn } from './reportquery.ts';
import { parseSpokeReport, reportContent, serializeSpokeReport } from './reportwire.ts';
import { LISTED_WHOLE_MAX, NAMED_PER_TARGET_SET, REPORT_CAPS, spokeReportName, WHOLE_KIND, type SpokeReport } from './spokereport.ts';

const AUTH = 'authpolicies.kuadrant.io';
const RLP = 'ratelimitpolicies.kuadrant.io';
const GW = 'gateway.networking.k8s.io';
const NOW = new Date('2026-11-23T10:00:00.123Z');

function policy(namespace: string, name: string, target: Record<string, unknown> | null, extra: { synced?: string; status?: unknown; deleting?: boolean } = {}): KubeObject {
  const metadata: KubeObject['metadata'] = { namespace, name };
  if (extra.synced !== undefined) {
    metadata.annotations = { [POLICY_SYNCED_ANNOTATION]: extra.synced };
    // As OCM's work agent applies a copy: owned by its AppliedManifestWork.
    metadata.ownerReferences = [{ apiVersion: 'work.open-cluster-management.io/v1', kind: 'AppliedManifestWork', name: 'hubhash-work', uid: 'u1' }];
  }
  if (extra.deleting) metadata.deletionTimestamp = '2026-11-23T09:00:00Z';
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata,
    spec: target ? { targetRef: { group: GW, kind: 'Gateway', ...target } } : {},
    ...(extra.status === undefined ? {} : { status: extra.status }),
  };
}

const REJECTED = { conditions: [{ type: 'Accepted', status: 'False', reason: 'Invalid', message: 'bad' }] };

const build = (kinds: [string, KubeObject[]][], now = NOW): SpokeReport => builtReport(kinds, now);
const parsed = parsedReport;

test('the report lists, per kind and namespace, every object sorted by name: local ones with their Gateway targets and rejection, synced copies with their source', () => {
  const report = build([
    [RLP, []],
    [
      AUTH,
      [
        policy('b', 'z', { name: 'gw' }),
        policy('a', 'y', { name: 'gw', sectionName: 'https' }),
        policy('b', 'x', { name: 'gw' }, { status: REJECTED }),
        policy('a', 'copy', { name: 'gw' }, { synced: 'hub/copy' }),
        policy('a', 'route-only', { name: 'r', kind: 'HTTPRoute' }),
        policy('a', 'going', { name: 'gw' }, { deleting: true }),
      ],
    ],
  ]);
  assert.deepEqual(report, {
    version: 4,
    heartbeat: '2026-11-23T10:00:00Z',
    objects: {
      [AUTH]: {
        a: [
          { name: 'copy', synced: 'hub/copy' },
          // Being deleted, it covers nothing; it still holds its name.
          { name: 'going', targets: [] },
          { name: 'route-only', targets: [] },
          { name: 'y', targets: [{ gateway: 'gw', sectionName: 'https' }] },
        ],
        b: [{ name: 'x', targets: [{ gateway: 'gw' }], rejected: true }, { name: 'z', targets: [{ gateway: 'gw' }] }],
      },
      [RLP]: {},
    },
  });
});

test('a synced annotation that names no policy is reported as a copy of nothing; a target that names no Gateway is left out', () => {
  const report = build([
    [
      AUTH,
      [
        policy('a', 'odd-copy', { name: 'gw' }, { synced: 'true' }),
        policy('a', 'upper', { name: 'GW' }),
        policy('a', 'bad-section', { name: 'gw', sectionName: 'Bad_Section' }),
      ],
    ],
  ]);
  assert.deepEqual(report.objects[AUTH], {
    a: [
      { name: 'bad-section', targets: [] },
      { name: 'odd-copy', synced: '' },
      { name: 'upper', targets: [] },
    ],
  });
  assert.deepEqual(occupantOf(report, AUTH, 'a', 'odd-copy'), { state: 'synced', source: '' });
});

test('the report survives its own serialisation, written as version 4', () => {
  const report = build([[AUTH, [policy('a', 'l', { name: 'gw', sectionName: 's' }), policy('a', 'm', { name: 'gw' }, { status: REJECTED }), policy('b', 'c', { name: 'gw' }, { synced: 'hub/c' })]]]);
  const text = serializeSpokeReport(report);
  assert.equal((JSON.parse(text) as { version: unknown }).version, 4);
  assert.deepEqual(parsed(text), report);
});

test("an old agent's report (version 1: no version field, local policies only) is read: its locals count, who holds a name is unknown", () => {
  const v1 = JSON.stringify({ heartbeat: '2026-11-23T10:00:00Z', kinds: { [AUTH]: { a: [{ name: 'l', targets: [{ gateway: 'gw' }] }], b: [] }, [RLP]: {} } });
  const report = parsed(v1);
  assert.equal(report.version, 1);
  assert.deepEqual(localPoliciesIn(report, AUTH, 'a'), [{ key: 'a/l', targets: [{ gateway: 'gw' }] }]);
  assert.deepEqual(localPoliciesIn(report, RLP, 'a'), []);
  assert.deepEqual(occupantOf(report, AUTH, 'a', 'l'), { state: 'unknown' });
  assert.deepEqual(occupantOf(report, AUTH, 'a', 'other'), { state: 'unknown' });
});

const HB = '2026-11-23T10:00:00Z';
const v2 = (objects: unknown, extra: Record<string, unknown> = {}): string => JSON.stringify({ version: 2, heartbeat: HB, objects, ...extra });
const local1 = (name: string, targets: unknown = [{ gateway: 'gw' }]): Record<string, unknown> => ({ name, targets });
const many = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

// [case, text, field, message part]
const REFUSED: [string, string, string, string][] = [
  ['not JSON', 'not json', '(report)', 'not JSON'],
  ['not an object', '[]', '(report)', 'not a JSON object'],
  ['a version this hub does not read', JSON.stringify({ version: 5, heartbeat: HB, objects: {} }), 'version', 'unsupported version 5'],
  ['a version of the wrong type', JSON.stringify({ version: '2', heartbeat: HB, objects: {} }), 'version', 'unsupported version "2"'],
  ['over the byte cap', v2({ [AUTH]: { a: [local1('x'.repeat(REPORT_CAPS.bytes))] } }), '(report)', 'over the cap of 524288'],
  ['a heartbeat that is no time', JSON.stringify({ version: 2, heartbeat: 'yesterday', objects: {} }), 'heartbeat', 'RFC 3339'],
  ['a name not DNS-1123', v2({ [AUTH]: { a: [local1('Not_A_Name')] } }), `objects["${AUTH}"].a[0].name`, 'DNS-1123 subdomain'],
  ['a name of 254 characters', v2({ [AUTH]: { a: [local1(`${'a'.repeat(250)}.bcd`)] } }), `objects["${AUTH}"].a[0].name`, 'at most 253'],
  ['a namespace of 64 characters', v2({ [AUTH]: { ['n'.repeat(64)]: [local1('l')] } }), `objects["${AUTH}"].${'n'.repeat(64)}`, 'DNS-1123 label'],
  ['an empty namespace', v2({ [AUTH]: { '': [local1('l')] } }), `objects["${AUTH}"][""]`, 'DNS-1123 label'],
  ['a kind that is no resource.group', v2({ 'Auth Policies': {} }), 'objects["Auth Policies"]', 'resource.group'],
  ['a sectionName of 254 characters', v2({ [AUTH]: { a: [local1('l', [{ gateway: 'gw', sectionName: `${'s'.repeat(250)}.abc` }])] } }), `objects["${AUTH}"].a[0].targets[0].sectionName`, 'at most 253'],
  ['a Gateway name not DNS-1123', v2({ [AUTH]: { a: [local1('l', [{ gateway: 'GW' }])] } }), `objects["${AUTH}"].a[0].targets[0].gateway`, 'DNS-1123'],
  ['too many targets', v2({ [AUTH]: { a: [local1('l', many(65, (i) => ({ gateway: `gw${i}` })))] } }), `objects["${AUTH}"].a[0].targets`, 'at most 64 targets'],
  ['an entry both local and synced', v2({ [AUTH]: { a: [{ name: 'l', targets: [], synced: 'hub/l' }] } }), `objects["${AUTH}"].a[0]`, 'either targets'],
  ['an entry neither local nor synced', v2({ [AUTH]: { a: [{ name: 'l' }] } }), `objects["${AUTH}"].a[0]`, 'either targets'],
  ['a synced copy marked rejected', v2({ [AUTH]: { a: [{ name: 'l', synced: 'hub/l', rejected: true }] } }), `objects["${AUTH}"].a[0].rejected`, 'only a local policy'],
  ['rejected other than true', v2({ [AUTH]: { a: [{ name: 'l', targets: [], rejected: false }] } }), `objects["${AUTH}"].a[0].rejected`, ''],
  ['a source that is no policy key', v2({ [AUTH]: { a: [{ name: 'l', synced: 'a/b/c' }] } }), `objects["${AUTH}"].a[0].synced`, 'namespace/name'],
  ['a duplicate name', v2({ [AUTH]: { a: [local1('l'), local1('l')] } }), `objects["${AUTH}"].a[1].name`, 'duplicate name'],
  ['a namespace without objects', v2({ [AUTH]: { a: [] } }), `objects["${AUTH}"].a`, 'only with objects'],
  ['an unknown field', v2({}, { extra: 1 }), 'extra', 'unknown field'],
  ['an unknown field in an entry', v2({ [AUTH]: { a: [{ ...local1('l'), enforced: true }] } }), `objects["${AUTH}"].a[0].enforced`, 'unknown field'],
  ['too many kinds', v2(Object.fromEntries(many(65, (i): [string, unknown] => [`k${i}.example.io`, {}]))), 'objects', '65 kinds, over the cap of 64'],
  ['too many objects', v2({ [AUTH]: Object.fromEntries(many(9, (n): [string, unknown[]] => [`n${n}`, many(1000, (i) => ({ name: `p${i}`, synced: '' }))])) }), 'objects', '9000 objects, over the cap of 8192'],
  ['version 1 with a bad name', JSON.stringify({ heartbeat: HB, kinds: { [AUTH]: { a: [local1('Bad')] } } }), `kinds["${AUTH}"].a[0].name`, 'DNS-1123'],
  ['neither format', '{}', 'heartbeat', ''],
];

for (const [name, text, field, message] of REFUSED) {
  test(`a report is refused whole: ${name}`, () => {
    const result = parseSpokeReport(text);
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.field, field);
    assert.ok(result.message.includes(message), result.message);
    assert.ok(result.field.length <= 256 && result.message.length <= 256);
  });
}

test('a refusal names a hostile key cut short and in printable ASCII', () => {
  const key = `Ω${'k'.repeat(10_000)}`;
  const result = parseSpokeReport(v2({ [AUTH]: { [key]: [local1('l')] } }));
  assert.equal(result.ok, false);
  if (result.ok) return;
  assert.ok(result.field.length < 120, result.field);
  assert.match(result.field, /^[\x20-\x7e]*$/);
});

test('the agent never writes a report the hub refuses: a kind past the caps or the schema is left out whole, and named', () => {
  // Many kinds: the first 64 (smallest first, then by name) go in.
  const kinds = many(70, (i) => [`k${String(i).padStart(2, '0')}.example.io`, [policy('a', 'l', { name: 'gw' })]] as [string, KubeObject[]]);
  const tooMany = buildSpokeReport(new Map(kinds), NOW);
  assert.equal(Object.keys(tooMany.report.objects).length, REPORT_CAPS.kinds);
  assert.deepEqual(tooMany.leftOut.map((l) => l.kind), ['k64.example.io', 'k65.example.io', 'k66.example.io', 'k67.example.io', 'k68.example.io', 'k69.example.io']);
  assert.ok(parseSpokeReport(serializeSpokeReport(tooMany.report)).ok);

  // A kind larger than the byte cap: left out, the small one stays. (Namespaces of at most 16 objects are
  // listed whole: 500 of them, of long names.)
  const big = many(8_000, (i) => policy(`ns-${i % 500}`, `${'long-policy-name-'.repeat(5)}${i}`, { name: 'gw', sectionName: 'https' }));
  const bytes = buildSpokeReport(new Map([[AUTH, big], [RLP, [policy('a', 'l', { name: 'gw' })]]]), NOW);
  assert.deepEqual(Object.keys(bytes.report.objects), [RLP]);
  assert.equal(bytes.leftOut[0]?.kind, AUTH);
  assert.match(bytes.leftOut[0]?.reason ?? '', /bytes would pass the report's cap/);

  // More objects than the cap: left out.
  const objects = many(REPORT_CAPS.objects + 1, (i) => policy('a', `p${i}`, null, { synced: '' }));
  const count = buildSpokeReport(new Map([[AUTH, objects]]), NOW);
  assert.deepEqual(count.report.objects, {});
  assert.match(count.leftOut[0]!.reason, /objects listed would pass the report's cap of 8192/);

  // A cluster-scoped kind (no namespace), a kind key the schema refuses, too many targets: left out, with why.
  const wide = policy('a', 'wide', null);
  wide.spec = { targetRefs: many(65, (i) => ({ group: GW, kind: 'Gateway', name: `gw${i}` })) };
  const invalid = buildSpokeReport(new Map([[AUTH, [{ ...policy('a', 'c', { name: 'gw' }), metadata: { name: 'c' } }]], ['Bad Kind', []], [RLP, [wide]]]), NOW);
  assert.deepEqual(invalid.report.objects, {});
  // Sorted by code unit: upper case first.
  assert.deepEqual(invalid.leftOut.map((l) => l.kind), ['Bad Kind', AUTH, RLP]);
  assert.match(invalid.leftOut[0]!.reason, /resource\.group/);
  assert.match(invalid.leftOut[1]!.reason, /DNS-1123 label/);
  assert.match(invalid.leftOut[2]!.reason, /at most 64 targets/);
});

test('a report filled to the byte cap is exactly within it, and read back', () => {
  // Kinds of about 40 KiB each, listed whole (25 namespaces of 16): the sum of what the builder counts must
  // be the written size.
  const kinds = many(14, (k) => [`k${k}.example.io`, many(400, (i) => policy(`ns${i % 25}`, `policy-${k}-${i}-${'x'.repeat(40)}`, { name: 'gw' }))] as [string, KubeObject[]]);
  const { report, leftOut } = buildSpokeReport(new Map(kinds), NOW);
  const text = serializeSpokeReport(report);
  assert.ok(leftOut.length > 0 && Object.keys(report.objects).length > 0);
  assert.ok(Buffer.byteLength(text) <= REPORT_CAPS.bytes, `${Buffer.byteLength(text)} bytes`);
  // The next kind left out would not have fitted.
  const smallestLeft = Math.min(...leftOut.map((l) => canonicalJson(parsed(serializeSpokeReport(build([[l.kind, kinds.find(([k]) => k === l.kind)![1]]]))).objects[l.kind]).length));
  assert.ok(Buffer.byteLength(text) + smallestLeft > REPORT_CAPS.bytes);
  assert.deepEqual(parsed(text), report);
});

test('the content leaves out the heartbeat: an unchanged spoke gives the same content', () => {
  const objects: [string, KubeObject[]][] = [[AUTH, [policy('a', 'l', { name: 'gw' })]]];
  const a = build(objects);
  const b = build(objects, new Date(NOW.getTime() + 60_000));
  assert.notEqual(serializeSpokeReport(a), serializeSpokeReport(b));
  assert.equal(reportContent(a), reportContent(b));
  assert.notEqual(reportContent(a), reportContent(build([[AUTH, []]])));
});

test('localPoliciesIn: unknown kind undefined; otherwise the locals that count — not rejected, not synced, with a Gateway target', () => {
  const report = build([
    [AUTH, [policy('a', 'l', { name: 'gw' }), policy('a', 'r', { name: 'gw' }, { status: REJECTED }), policy('a', 's', { name: 'gw' }, { synced: 'hub/s' }), policy('a', 'n', null)]],
  ]);
  assert.deepEqual(localPoliciesIn(report, AUTH, 'a'), [{ key: 'a/l', targets: [{ gateway: 'gw' }] }]);
  assert.deepEqual(localPoliciesIn(report, AUTH, 'b'), []);
  assert.deepEqual(localPoliciesIn(report, AUTH, 'constructor'), []);
  assert.equal(localPoliciesIn(report, RLP, 'a'), undefined);
  assert.equal(localPoliciesIn(report, 'constructor', 'a'), undefined);
});

test('occupantOf: who holds a name — unknown for a kind not covered, free, a local policy (rejected or not), a synced copy and its source', () => {
  const names = many(1000, (i) => policy('a', `p${String(i).padStart(4, '0')}`, null, { synced: `hub/p${i}` }));
  const report = build([[AUTH, [...names, policy('a', 'l', { name: 'gw' }), policy('a', 'r', { name: 'gw' }, { status: REJECTED }), policy('a', 'no-target', null)]]]);
  assert.deepEqual(occupantOf(report, RLP, 'a', 'l'), { state: 'unknown' });
  assert.deepEqual(occupantOf(report, AUTH, 'a', 'free-name'), { state: 'free' });
  assert.deepEqual(occupantOf(report, AUTH, 'other-ns', 'l'), { state: 'free' });
  assert.deepEqual(occupantOf(report, AUTH, 'a', 'l'), { state: 'local' });
  // 1003 objects: the namespace is condensed, and those two are named only in its hashed set.
  assert.deepEqual(occupantOf(report, AUTH, 'a', 'r'), { state: 'local', hashed: true });
  assert.deepEqual(occupantOf(report, AUTH, 'a', 'no-target'), { state: 'local', hashed: true });
  for (const i of [0, 1, 499, 998, 999]) assert.deepEqual(occupantOf(report, AUTH, 'a', `p${String(i).padStart(4, '0')}`), { state: 'synced', source: `hub/p${i}` });
  // Read back from text in any order, the lookup still finds every name.
  const shuffled = JSON.parse(serializeSpokeReport(report)) as { objects: Record<string, Record<string, { listed: unknown[] }>> };
  shuffled.objects[AUTH]!.a!.listed.reverse();
  assert.deepEqual(occupantOf(parsed(JSON.stringify(shuffled)), AUTH, 'a', 'p0500'), { state: 'synced', source: 'hub/p500' });
});

test('changedScopes: only the (kind, namespace) pairs whose content differs; a kind coming, going or changing format changes whole', () => {
  const one = build([[AUTH, [policy('a', 'l', { name: 'gw' }), policy('b', 'm', { name: 'gw' })]], [RLP, [policy('c', 'x', null)]]]);
  const localRejected = build([[AUTH, [policy('a', 'l', { name: 'gw' }, { status: REJECTED }), policy('b', 'm', { name: 'gw' })]], [RLP, [policy('c', 'x', null)]]]);
  const copyAdded = build([[AUTH, [policy('a', 'l', { name: 'gw' }), policy('b', 'm', { name: 'gw' }), policy('d', 's', { name: 'gw' }, { synced: 'hub/s' })]], [RLP, [policy('c', 'x', null)]]]);
  const rlpGone = build([[AUTH, [policy('a', 'l', { name: 'gw' }), policy('b', 'm', { name: 'gw' })]]]);
  assert.deepEqual(changedScopes(one, one), []);
  assert.deepEqual(changedScopes(one, build([[AUTH, [policy('a', 'l', { name: 'gw' }), policy('b', 'm', { name: 'gw' })]], [RLP, [policy('c', 'x', null)]]], new Date(0))), [], 'a heartbeat is no change');
  assert.deepEqual(changedScopes(one, localRejected), [{ kind: AUTH, namespace: 'a' }]);
  assert.deepEqual(changedScopes(one, copyAdded), [{ kind: AUTH, namespace: 'd' }], 'a namespace appearing within a known kind');
  assert.deepEqual(changedScopes(one, rlpGone), [{ kind: RLP, namespace: WHOLE_KIND }, { kind: RLP, namespace: 'c' }]);
  assert.deepEqual(changedScopes(rlpGone, one), [{ kind: RLP, namespace: WHOLE_KIND }, { kind: RLP, namespace: 'c' }]);
  assert.deepEqual(changedScopes(undefined, rlpGone), [{ kind: AUTH, namespace: WHOLE_KIND }, { kind: AUTH, namespace: 'a' }, { kind: AUTH, namespace: 'b' }]);
  assert.deepEqual(changedScopes(rlpGone, undefined), changedScopes(undefined, rlpGone));
  assert.deepEqual(changedScopes(undefined, undefined), []);
  const v1 = parsed(JSON.stringify({ heartbeat: HB, kinds: { [AUTH]: { a: [{ name: 'l', targets: [{ gateway: 'gw' }] }] } } }));
  const v2same = build([[AUTH, [policy('a', 'l', { name: 'gw' })]]]);
  assert.deepEqual(changedScopes(v1, v2same), [{ kind: AUTH, namespace: WHOLE_KIND }, { kind: AUTH, namespace: 'a' }], 'occupancy went from unknown to known');
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
  const withText = (text: string): KubeObject => ({
    ...work,
    status: {
      resourceStatus: {
        manifests: [
          { resourceMeta: { ordinal: 0, resource: 'configmaps', name: 'policy-sync-spoke', namespace: 'policy-sync-system' }, statusFeedback: {} },
          { resourceMeta: { ordinal: 1, resource: 'configmaps', name: 'policy-sync-spoke-report', namespace: 'policy-sync-system' }, statusFeedback: { values: [{ name: 'report', fieldValue: { type: 'String', string: text } }] } },
        ],
      },
    },
  });
  const text = serializeSpokeReport(build([[AUTH, [policy('a', 'l', { name: 'gw' })]]]));
  assert.equal(spokeReportText(withText(text)), text);
  assert.deepEqual(readSpokeReport(withText(text)), parsed(text));
  assert.equal(readSpokeReport(withText('{"version":9}')), undefined, 'refused: no report');
  const respecced = { ...withText(text), spec: buildSpokeConfigWork({ cluster: 'c1', kinds: [], configMap: { namespace: 'policy-sync-system', name: 'other' }, controller: 'abc' }).spec };
  assert.equal(spokeReportText(respecced), undefined, 'a status still about the report the spec named before: no report');
  assert.equal(spokeReportText(withText(text), { namespace: 'policy-sync-system', name: 'policy-sync-spoke' }), text, "the hub's own configuration");
  assert.equal(spokeReportText(withText(text), { namespace: 'policy-sync-system', name: 'other' }), undefined, "another configuration's report: not the hub's");
});

// Version 3: large namespaces condensed.

/** A team's namespace at scale: `count` local policies of realistic names, every 10th on a Gateway (of 8, some on a listener), every 50th rejected, and a few synced copies. */
function atScale(namespace: string, count: number, copies = 20): KubeObject[] {
  const purposes = ['auth', 'ratelimit', 'jwt', 'apikey', 'oidc', 'deny-all', 'allow-internal'];
  const objects = many(count, (i) => {
    const name = `team-${i % 97}-svc-${Math.floor(i / 97)}-${purposes[i % purposes.length]}`;
    const target = i % 10 === 0 ? { name: `gw-${i % 8}`, ...(i % 20 === 0 ? { sectionName: 'https' } : {}) } : { name: `route-${i}`, kind: 'HTTPRoute' };
    return policy(namespace, name, target, i % 50 === 0 ? { status: REJECTED } : {});
  });
  return [...objects, ...many(copies, (i) => policy(namespace, `synced-${i}`, { name: 'gw-0' }, { synced: `hub/synced-${i}` }))];
}

test('version 3: 50,000 local objects of a kind fit well within the caps; every name they hold is held, copies and coverage are exact', (t) => {
  const objects = atScale('team', 50_000);
  const started = performance.now();
  const { report, leftOut } = buildSpokeReport(new Map([[AUTH, objects]]), NOW);
  const buildMs = performance.now() - started;
  assert.deepEqual(leftOut, []);
  const text = serializeSpokeReport(report);
  const bytes = Buffer.byteLength(text);
  t.diagnostic(`50,020 objects (50,000 local, 20 copies) in one namespace: ${bytes} bytes (${(bytes / 50_020).toFixed(2)} a object; cap ${REPORT_CAPS.bytes}), built in ${buildMs.toFixed(0)} ms`);
  assert.ok(bytes < REPORT_CAPS.bytes / 2, `${bytes} bytes: well within the cap`);
  const parseStarted = performance.now();
  const back = parsed(text);
  t.diagnostic(`parsed in ${(performance.now() - parseStarted).toFixed(0)} ms`);
  assert.equal(reportedCount(back), 50_020);
  // No false "free": every object's name is held, by what it is.
  for (const object of objects) {
    const occupant = occupantOf(back, AUTH, 'team', object.metadata.name);
    const source = object.metadata.annotations?.[POLICY_SYNCED_ANNOTATION];
    if (source !== undefined) assert.deepEqual(occupant, { state: 'synced', source });
    else assert.equal(occupant.state, 'local', object.metadata.name);
  }
  // Coverage: the same Gateway targets as the whole list gives, each target set named up to 4 times and counted past that.
  const full = objects.map(reportedObjectOf).filter((e): e is { name: string; targets: { gateway: string; sectionName?: string }[] } => 'targets' in e && !('rejected' in e) && e.targets.length > 0);
  const targetsOf = (ts: readonly { gateway: string; sectionName?: string }[]) => new Set(ts.map((x) => JSON.stringify(x)));
  const covered = localPoliciesIn(back, AUTH, 'team')!;
  assert.deepEqual(targetsOf(covered.flatMap((l) => l.targets)), targetsOf(full.flatMap((e) => e.targets)));
  const sets = new Set(full.map((e) => JSON.stringify(e.targets)));
  assert.equal(covered.length, sets.size * NAMED_PER_TARGET_SET);
  const unnamed = unnamedLocalsIn(back, AUTH, 'team');
  assert.equal(unnamed.reduce((n, u) => n + u.count, 0) + covered.length, full.length);
  assert.equal(unnamed.length, sets.size);
  assert.deepEqual(unnamedLocalsIn(back, AUTH, 'elsewhere'), []);
});

test('version 3: a name no object holds is answered "free", except about once in a million ("held": only doubt)', (t) => {
  const report = parsed(serializeSpokeReport(build([[AUTH, atScale('team', 50_000)]])));
  const questions = 100_000;
  let falseHeld = 0;
  for (let i = 0; i < questions; i++) {
    const occupant = occupantOf(report, AUTH, 'team', `hub-policy-${i}`);
    assert.notEqual(occupant.state, 'synced');
    if (occupant.state === 'local') falseHeld++;
  }
  t.diagnostic(`${falseHeld} false "held" in ${questions} names not on the spoke (expected about ${(questions / 2 ** 20).toFixed(2)})`);
  assert.ok(falseHeld <= 3);
});

test(`version 3: a namespace of up to ${LISTED_WHOLE_MAX} objects is listed whole and exact; one more and it is condensed`, () => {
  const small = build([[AUTH, many(LISTED_WHOLE_MAX, (i) => policy('a', `p${i}`, null))]]);
  assert.equal(small.condensed, undefined);
  assert.equal(small.objects[AUTH]!.a!.length, LISTED_WHOLE_MAX);
  const large = build([[AUTH, many(LISTED_WHOLE_MAX + 1, (i) => policy('a', `p${i}`, null))]]);
  assert.deepEqual(large.objects[AUTH], { a: [] }, 'nothing to list: no copies, no covering locals');
  assert.equal(large.condensed?.[AUTH]?.a?.names.count, LISTED_WHOLE_MAX + 1);
  assert.deepEqual(occupantOf(large, AUTH, 'a', 'p3'), { state: 'local', hashed: true });
  assert.deepEqual(occupantOf(large, AUTH, 'b', 'p3'), { state: 'free' });
  assert.deepEqual(parsed(serializeSpokeReport(large)), large);
});

test('version 3: the content changes with any name of a condensed namespace, and only that namespace is a changed scope', () => {
  const base = [...atScale('team', 1_000), policy('other', 'l', { name: 'gw' })];
  const a = parsed(serializeSpokeReport(build([[AUTH, base]])));
  const b = parsed(serializeSpokeReport(build([[AUTH, [...base, policy('team', 'one-more', null)]]], new Date(NOW.getTime() + 1000))));
  assert.notEqual(reportContent(a), reportContent(b));
  assert.deepEqual(changedScopes(a, b), [{ kind: AUTH, namespace: 'team' }]);
  assert.deepEqual(changedScopes(a, parsed(serializeSpokeReport(build([[AUTH, base]], new Date(0))))), []);
});

test('version 2 reports of older agents are still read, and an agent moving to version 3 changes no scope that says the same', () => {
  const objects: [string, KubeObject[]][] = [[AUTH, [policy('a', 'l', { name: 'gw' }), policy('a', 'c', { name: 'gw' }, { synced: 'hub/c' })]]];
  const v3 = build(objects);
  const v2text = canonicalJson({ version: 2, heartbeat: HB, objects: v3.objects });
  const old = parsed(v2text);
  assert.equal(old.version, 2);
  assert.deepEqual(occupantOf(old, AUTH, 'a', 'c'), { state: 'synced', source: 'hub/c' });
  assert.deepEqual(occupantOf(old, AUTH, 'a', 'x'), { state: 'free' });
  assert.deepEqual(localPoliciesIn(old, AUTH, 'a'), [{ key: 'a/l', targets: [{ gateway: 'gw' }] }]);
  assert.deepEqual(changedScopes(old, v3), []);
  // Its heartbeats are still parsed once per content.
  const next = parseSpokeReport(v2text.replace(HB, '2026-11-23T10:00:30Z'), { text: v2text, report: old });
  assert.ok(next.ok && next.report.objects === old.objects && next.report.heartbeat === '2026-11-23T10:00:30Z');
});

const v3 = (objects: unknown, extra: Record<string, unknown> = {}): string => JSON.stringify({ version: 3, written: HB, objects, ...extra });
const goodNames = (() => {
  const built = build([[AUTH, many(40, (i) => policy('a', `p${i}`, null))]]);
  return built.condensed![AUTH]!.a!.names;
})();
const condensed = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ listed: [], unnamed: [], names: goodNames, ...extra });

const REFUSED_V3: [string, string, string, string][] = [
  ['a heartbeat field (version 2\'s) in version 3', JSON.stringify({ version: 3, written: HB, heartbeat: HB, objects: {} }), 'heartbeat', 'unknown field'],
  ['no written time', JSON.stringify({ version: 3, objects: {} }), 'written', ''],
  ['a listed entry with a bad name', v3({ [AUTH]: { a: condensed({ listed: [local1('Bad')] }) } }), `objects["${AUTH}"].a.listed[0].name`, 'DNS-1123'],
  ['a duplicate listed name', v3({ [AUTH]: { a: condensed({ listed: [local1('l'), local1('l')] }) } }), `objects["${AUTH}"].a.listed[1].name`, 'duplicate name'],
  ['an unknown field in a condensed namespace', v3({ [AUTH]: { a: condensed({ extra: 1 }) } }), `objects["${AUTH}"].a.extra`, 'unknown field'],
  ['a namespace neither listed nor condensed', v3({ [AUTH]: { a: 'names' } }), `objects["${AUTH}"].a`, ''],
  ['an unnamed count of 0', v3({ [AUTH]: { a: condensed({ unnamed: [{ targets: [{ gateway: 'gw' }], count: 0 }] }) } }), `objects["${AUTH}"].a.unnamed[0].count`, ''],
  ['an unnamed target set without targets', v3({ [AUTH]: { a: condensed({ unnamed: [{ targets: [], count: 3 }] }) } }), `objects["${AUTH}"].a.unnamed[0].targets`, 'a target set has a target'],
  ['hashed names that are not base64', v3({ [AUTH]: { a: condensed({ names: { count: 40, data: '***' } }) } }), `objects["${AUTH}"].a.names.data`, 'base64'],
  ['hashed names fewer than counted', v3({ [AUTH]: { a: condensed({ names: { ...goodNames, count: 41 } }) } }), `objects["${AUTH}"].a.names.data`, ''],
  ['hashed names more than counted', v3({ [AUTH]: { a: condensed({ names: { ...goodNames, count: 39 } }) } }), `objects["${AUTH}"].a.names.data`, 'more data'],
  ['a names count over the cap', v3({ [AUTH]: { a: condensed({ names: { count: REPORT_CAPS.names + 1, data: '' } }) } }), `objects["${AUTH}"].a.names.count`, ''],
  ['hashed names over the cap in all', v3(Object.fromEntries(many(4, (k): [string, unknown] => [`k${k}.example.io`, { a: condensed({ names: { count: 40_000, data: 'AAAA' } }) }]))), 'objects', 'hashed names, over the cap'],
  ['too many listed in all', v3({ [AUTH]: Object.fromEntries(many(9, (n): [string, unknown] => [`n${n}`, condensed({ listed: many(1000, (i) => ({ name: `p${i}`, synced: '' })) })])) }), 'objects', 'objects listed, over the cap'],
  ['too many kinds', v3(Object.fromEntries(many(65, (i): [string, unknown] => [`k${i}.example.io`, {}]))), 'objects', '65 kinds, over the cap of 64'],
];

for (const [name, text, field, message] of REFUSED_V3) {
  test(`a version 3 report is refused whole: ${name}`, () => {
    const result = parseSpokeReport(text);
    assert.equal(result.ok, false, 'accepted');
    if (result.ok) return;
    assert.equal(result.field, field, result.message);
    assert.ok(result.message.includes(message), result.message);
  });
}
