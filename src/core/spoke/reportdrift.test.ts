// Report version 4 (docs/design/tenancy.md#what-runs-on-a-spoke): what differs on a copy and whether an
// AppliedManifestWork still owns it travel from the agent to the hub unchanged, an older agent's version 3 still reads,
// and a drift past the schema is refused whole, with the field at fault named (the spoke's text reaches the hub's
// status only through this schema).
import { test } from 'node:test';
import { builtReport, parsedReport } from '../../../testkit/reports.ts';
import assert from 'node:assert/strict';
import type { KubeObject } from '../k8s/objects.ts';
import { POLICY_SYNCED_ANNOTATION } from '../metadatakeys.ts';
import { withCopyDigest } from '../works/copydigest.ts';
import { copiesBySource, copyAt, occupantOf } from './reportquery.ts';
import { parseSpokeReport, serializeSpokeReport } from './reportwire.ts';
import { LISTED_WHOLE_MAX, REPORT_CAPS, type CopyDrift, type SpokeReport } from './spokereport.ts';

const AUTH = 'authpolicies.kuadrant.io';
const GW = 'gateway.networking.k8s.io';
const NOW = new Date('2026-11-30T11:00:00.500Z');
const HB = '2026-11-30T11:00:00Z';
const EDIT_TIME = '2026-11-30T10:15:00Z';
const OWNER = { apiVersion: 'work.open-cluster-management.io/v1', kind: 'AppliedManifestWork', name: 'hubhash-work', uid: 'amw-1' };

/** A synced copy as the work agent applied it (owned by its AppliedManifestWork, its managedFields entry), the digest on it. */
function copy(namespace: string, name: string, source: string, targetName = 'shop'): KubeObject {
  const sent = withCopyDigest({
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { namespace, name, labels: { app: 'shop' }, annotations: { [POLICY_SYNCED_ANNOTATION]: source } },
    spec: { targetRef: { group: GW, kind: 'Gateway', name: 'shop' }, rules: { authorization: {} } },
  });
  const agentAnnotations = Object.fromEntries(Object.keys(sent.metadata.annotations ?? {}).map((k) => [`f:${k}`, {}]));
  const targetRef = { 'f:group': {}, 'f:kind': {}, ...(targetName === 'shop' ? { 'f:name': {} } : {}) };
  const managedFields: unknown[] = [
    { manager: 'work-agent', operation: 'Update', time: '2026-11-30T09:00:00Z', fieldsV1: { 'f:metadata': { 'f:annotations': agentAnnotations, 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:targetRef': targetRef, 'f:rules': {} } } },
  ];
  if (targetName !== 'shop') managedFields.push({ manager: 'other-tool', operation: 'Update', time: EDIT_TIME, fieldsV1: { 'f:spec': { 'f:targetRef': { 'f:name': {} } } } });
  return {
    ...sent,
    metadata: { ...sent.metadata, ownerReferences: [OWNER], managedFields },
    spec: { ...sent.spec, targetRef: { group: GW, kind: 'Gateway', name: targetName } },
  };
}

/** A copy OCM's agent let go (the Orphan delete option): no AppliedManifestWork owns it. */
function orphaned(object: KubeObject): KubeObject {
  const { ownerReferences: _owners, ...metadata } = object.metadata;
  return { ...object, metadata };
}

function local(namespace: string, name: string, targets = true): KubeObject {
  return { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { namespace, name }, spec: targets ? { targetRef: { group: GW, kind: 'Gateway', name: 'shop' } } : {} };
}

const build = (objects: KubeObject[]): SpokeReport => builtReport([[AUTH, objects]], NOW);
const parsed = parsedReport;

const DRIFT: CopyDrift = { fields: ['spec.targetRef.name'], managers: [{ manager: 'other-tool', operation: 'Update', time: EDIT_TIME }], since: EDIT_TIME };

test('a report with a drifted copy and an unowned one survives its serialisation, as version 4', () => {
  const report = build([copy('shop', 'edited', 'hub/edited', 'shop-canary'), orphaned(copy('shop', 'left', 'hub/left')), copy('shop', 'fine', 'hub/fine'), local('shop', 'team-auth')]);
  assert.equal(report.version, 4);
  assert.deepEqual(report.objects[AUTH], {
    shop: [
      { name: 'edited', synced: 'hub/edited', drift: DRIFT },
      { name: 'fine', synced: 'hub/fine' },
      { name: 'left', synced: 'hub/left', unowned: true },
      { name: 'team-auth', targets: [{ gateway: 'shop' }] },
    ],
  });
  const text = serializeSpokeReport(report);
  assert.equal((JSON.parse(text) as { version: unknown }).version, 4);
  assert.deepEqual(parsed(text), report);
});

test('a copy both drifted and unowned says both', () => {
  const report = build([orphaned(copy('shop', 'edited', 'hub/edited', 'x'))]);
  assert.deepEqual(parsed(serializeSpokeReport(report)).objects[AUTH]?.shop, [{ name: 'edited', synced: 'hub/edited', drift: { ...DRIFT }, unowned: true }]);
});

test('a drift whose manager the spoke named \'\' still goes in the report: the kind is not left out for it', () => {
  const edited = copy('shop', 'edited', 'hub/edited', 'x');
  const managedFields = (edited.metadata.managedFields ?? []).map((e) => ((e as { manager: string }).manager === 'other-tool' ? { ...(e as object), manager: '' } : e));
  const report = build([{ ...edited, metadata: { ...edited.metadata, managedFields } }]);
  assert.deepEqual(copyAt(parsed(serializeSpokeReport(report)), AUTH, 'shop', 'edited')?.drift?.managers, [{ manager: '?', operation: 'Update', time: EDIT_TIME }]);
});

test('a condensed namespace (more than LISTED_WHOLE_MAX objects) keeps its copies with their drift, through the wire too', () => {
  const locals = Array.from({ length: LISTED_WHOLE_MAX + 4 }, (_, i) => local('big', `l${String(i).padStart(2, '0')}`, false));
  const report = build([...locals, copy('big', 'edited', 'hub/edited', 'x'), orphaned(copy('big', 'left', 'hub/left'))]);
  assert.ok(report.condensed?.[AUTH]?.big, 'condensed');
  const back = parsed(serializeSpokeReport(report));
  assert.deepEqual(back, report);
  assert.deepEqual(copyAt(back, AUTH, 'big', 'edited'), { name: 'edited', synced: 'hub/edited', drift: DRIFT });
  assert.deepEqual(copyAt(back, AUTH, 'big', 'left'), { name: 'left', synced: 'hub/left', unowned: true });
  // The locals are hashed there, never listed: still held, never copies.
  assert.equal(copyAt(back, AUTH, 'big', 'l00'), undefined);
  assert.deepEqual(occupantOf(back, AUTH, 'big', 'l00'), { state: 'local', hashed: true });
});

test("an older agent's version 3 report (copies without drift) still parses, as version 3", () => {
  const text = JSON.stringify({ version: 3, written: HB, objects: { [AUTH]: { shop: [{ name: 'c', synced: 'hub/c' }, { name: 'l', targets: [{ gateway: 'shop' }] }] } } });
  const report = parsed(text);
  assert.equal(report.version, 3);
  assert.deepEqual(report.objects[AUTH]?.shop, [{ name: 'c', synced: 'hub/c' }, { name: 'l', targets: [{ gateway: 'shop' }] }]);
  assert.deepEqual(copyAt(report, AUTH, 'shop', 'c'), { name: 'c', synced: 'hub/c' });
});

const v4 = (entry: Record<string, unknown>): string => JSON.stringify({ version: 4, written: HB, objects: { [AUTH]: { shop: [entry] } } });
const driftEntry = (drift: Record<string, unknown>): string => v4({ name: 'c', synced: 'hub/c', drift });
const AT = `objects["${AUTH}"].shop[0]`;
const manyFields = (n: number): string[] => Array.from({ length: n }, (_, i) => `spec.f${i}`);

// [case, text, field, message part]
const REFUSED: [string, string, string, string][] = [
  ['a manager name with a newline', driftEntry({ fields: ['spec.a'], managers: [{ manager: 'evil\nmanager' }] }), `${AT}.drift.managers[0].manager`, 'printable ASCII'],
  ['a manager name past the length cap', driftEntry({ fields: ['spec.a'], managers: [{ manager: 'm'.repeat(REPORT_CAPS.driftText + 1) }] }), `${AT}.drift.managers[0].manager`, `at most ${REPORT_CAPS.driftText}`],
  ['an empty manager name', driftEntry({ fields: ['spec.a'], managers: [{ manager: '' }] }), `${AT}.drift.managers[0].manager`, ''],
  [`more than ${REPORT_CAPS.driftFields} fields`, driftEntry({ fields: manyFields(REPORT_CAPS.driftFields + 1), managers: [] }), `${AT}.drift.fields`, `at most ${REPORT_CAPS.driftFields} fields`],
  [`more than ${REPORT_CAPS.driftManagers} managers`, driftEntry({ fields: ['spec.a'], managers: Array.from({ length: REPORT_CAPS.driftManagers + 1 }, (_, i) => ({ manager: `m${i}` })) }), `${AT}.drift.managers`, `at most ${REPORT_CAPS.driftManagers} managers`],
  ['an empty fields list', driftEntry({ fields: [], managers: [] }), `${AT}.drift.fields`, 'a drift names a field'],
  ['a field path not printable', driftEntry({ fields: ['spec.cl\u00e9'], managers: [] }), `${AT}.drift.fields[0]`, 'printable ASCII'],
  ['an operation of another name', driftEntry({ fields: ['spec.a'], managers: [{ manager: 'm', operation: 'Patch' }] }), `${AT}.drift.managers[0].operation`, ''],
  ['a write time that is no time', driftEntry({ fields: ['spec.a'], managers: [{ manager: 'm', time: 'yesterday' }] }), `${AT}.drift.managers[0].time`, 'RFC 3339'],
  ['a since that is no time', driftEntry({ fields: ['spec.a'], managers: [], since: 'now' }), `${AT}.drift.since`, 'RFC 3339'],
  ['a count of more fields of 0', driftEntry({ fields: ['spec.a'], managers: [], more: 0 }), `${AT}.drift.more`, ''],
  ['an unknown member in a drift', driftEntry({ fields: ['spec.a'], managers: [], extra: 1 }), `${AT}.drift.extra`, 'unknown field'],
  ['drift on a local policy entry', v4({ name: 'l', targets: [], drift: { fields: ['spec.a'], managers: [] } }), `${AT}.drift`, 'only a copy can drift'],
  ['unowned on a local policy entry', v4({ name: 'l', targets: [], unowned: true }), `${AT}.unowned`, 'only a copy can drift or be unowned'],
  ['unowned other than true', v4({ name: 'c', synced: 'hub/c', unowned: false }), `${AT}.unowned`, ''],
];

for (const [name, text, field, message] of REFUSED) {
  test(`the hub refuses a report with ${name}, naming ${field}`, () => {
    const result = parseSpokeReport(text);
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(result.field, field);
    assert.ok(result.message.includes(message), result.message);
  });
}

test('the hub refuses a drift past its schema in a condensed namespace too', () => {
  const text = JSON.stringify({
    version: 4,
    written: HB,
    objects: { [AUTH]: { big: { listed: [{ name: 'c', synced: 'hub/c', drift: { fields: [], managers: [] } }], unnamed: [], names: { count: 0, data: '' } } } },
  });
  const result = parseSpokeReport(text);
  assert.ok(!result.ok);
  assert.equal(result.field, `objects["${AUTH}"].big.listed[0].drift.fields`);
});

test(`a drift at the caps (${REPORT_CAPS.driftFields} fields, ${REPORT_CAPS.driftManagers} managers, ${REPORT_CAPS.driftText} characters) is read`, () => {
  const drift = {
    fields: manyFields(REPORT_CAPS.driftFields),
    more: 3,
    managers: Array.from({ length: REPORT_CAPS.driftManagers }, (_, i) => ({ manager: `${i}`.padEnd(REPORT_CAPS.driftText, 'm'), operation: 'Apply', time: EDIT_TIME })),
    since: EDIT_TIME,
  };
  assert.deepEqual(copyAt(parsed(driftEntry(drift)), AUTH, 'shop', 'c')?.drift, drift);
});

test('copyAt: the copy at a kind, namespace and name; nothing for a local policy, another name, namespace or kind', () => {
  const report = build([copy('shop', 'edited', 'hub/edited', 'x'), local('shop', 'team-auth')]);
  assert.deepEqual(copyAt(report, AUTH, 'shop', 'edited')?.drift, DRIFT);
  assert.equal(copyAt(report, AUTH, 'shop', 'team-auth'), undefined);
  assert.equal(copyAt(report, AUTH, 'shop', 'other'), undefined);
  assert.equal(copyAt(report, AUTH, 'other', 'edited'), undefined);
  assert.equal(copyAt(report, 'ratelimitpolicies.kuadrant.io', 'shop', 'edited'), undefined);
  // Namespaces and kinds are looked up as own members only.
  assert.equal(copyAt(report, AUTH, 'constructor', 'edited'), undefined);
  assert.equal(copyAt(report, 'constructor', 'shop', 'edited'), undefined);
});

test('copiesBySource: every copy the report lists by the hub policy it copies, condensed namespaces included; a copy of nothing is left out', () => {
  const locals = Array.from({ length: LISTED_WHOLE_MAX + 1 }, (_, i) => local('big', `l${String(i).padStart(2, '0')}`, false));
  const odd = copy('shop', 'odd', 'not-a-key');
  const report = parsed(serializeSpokeReport(build([...locals, copy('big', 'a', 'hub/p', 'x'), copy('shop', 'a', 'hub/p'), copy('shop', 'b', 'hub/q'), odd, local('shop', 'team-auth')])));
  assert.ok(report.condensed?.[AUTH]?.big);
  const index = copiesBySource(report);
  assert.deepEqual([...index.keys()].sort(), ['hub/p', 'hub/q']);
  assert.deepEqual(index.get('hub/p'), [
    { kind: AUTH, namespace: 'big', copy: { name: 'a', synced: 'hub/p', drift: DRIFT } },
    { kind: AUTH, namespace: 'shop', copy: { name: 'a', synced: 'hub/p' } },
  ]);
  assert.deepEqual(index.get('hub/q'), [{ kind: AUTH, namespace: 'shop', copy: { name: 'b', synced: 'hub/q' } }]);
  // Made once per report's objects: the hub asks for each policy.
  assert.equal(copiesBySource(report), index);
  assert.equal(copiesBySource({ ...report, heartbeat: '2026-11-30T12:00:00Z' }), index);
});
