// Whether a copy on a spoke is what the hub sent (docs/design/tenancy.md#what-runs-on-a-spoke), read on objects shaped
// as the real OCM work agent v1.2.1 (Update strategy) leaves them: its managedFields entry is
// `{manager: 'work-agent', operation: 'Update'}` and owns every field it wrote, the schema-defaulted ones too; an edit
// by another tool moves the field it changes out of the work agent's set into that tool's entry; a JSON-patch removal
// leaves no trace in any manager (the field just leaves the work agent's set); an annotation another tool adds is
// owned by that tool alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../k8s/objects.ts';
import { DIGEST_ANNOTATION, ORIGIN_CREATION_ANNOTATION, POLICY_SYNCED_ANNOTATION, REVISION_ANNOTATION } from '../metadatakeys.ts';
import { withCopyDigest } from '../works/copydigest.ts';
import { DROPPED_KEYS_ANNOTATION, withDroppedKeys } from '../works/droppedkeys.ts';
import { copyDriftOf, isWorkAgentManager, leafPaths, ownedByAppliedWork } from './copydrift.ts';
import { REPORT_CAPS } from './spokereport.ts';

const GW = 'gateway.networking.k8s.io';
const AGENT_TIME = '2026-11-30T09:00:00Z';
const EDIT_TIME = '2026-11-30T10:15:00Z';
const OWNER = { apiVersion: 'work.open-cluster-management.io/v1', kind: 'AppliedManifestWork', name: 'hubhash-shop-auth', uid: 'amw-1' };

/** The copy as the hub sends it: an AuthPolicy with its sync annotations, stamped with its digest. */
function sent(extra: { labels?: Record<string, string>; annotations?: Record<string, string>; spec?: Record<string, unknown> } = {}): KubeObject {
  return withCopyDigest({
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: {
      namespace: 'shop',
      name: 'shop-auth',
      labels: { app: 'shop', 'app.kubernetes.io/part-of': 'storefront', ...extra.labels },
      annotations: { [POLICY_SYNCED_ANNOTATION]: 'hub-shop/shop-auth', [ORIGIN_CREATION_ANNOTATION]: '2026-11-01T00:00:00Z', [REVISION_ANNOTATION]: '3', ...extra.annotations },
    },
    spec: extra.spec ?? {
      targetRef: { group: GW, kind: 'Gateway', name: 'shop' },
      rules: { authentication: { apikey: { apiKey: { selector: { matchLabels: { app: 'shop' } } }, credentials: { authorizationHeader: { prefix: 'APIKEY' } } } } },
    },
  });
}

/** The fieldsV1 an Update of `value` owns: each member `f:<key>`, a map also `.`; lists are atomic. */
function fieldsOf(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [`f:${key}`, v !== null && typeof v === 'object' && !Array.isArray(v) ? { '.': {}, ...fieldsOf(v as Record<string, unknown>) } : {}]),
  );
}

/** `fields` without the member at `path` (f: steps), as the set is left when another manager takes it or it is removed. */
function without(fields: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  const [first, ...rest] = path;
  if (first === undefined) return fields;
  const key = `f:${first}`;
  if (rest.length === 0) {
    const { [key]: _gone, ...others } = fields;
    return others;
  }
  return { ...fields, [key]: without(fields[key] as Record<string, unknown>, rest) };
}

/** The work agent's entry for the object as it applied it (`applied`: what it wrote), but for `taken` (paths gone from its set). */
function agentEntry(applied: KubeObject, taken: readonly string[][] = []): Record<string, unknown> {
  let fieldsV1: Record<string, unknown> = {
    'f:metadata': {
      'f:annotations': { '.': {}, ...fieldsOf(applied.metadata.annotations ?? {}) },
      'f:labels': { '.': {}, ...fieldsOf(applied.metadata.labels ?? {}) },
      'f:ownerReferences': { '.': {}, [`k:{"uid":"${OWNER.uid}"}`]: {} },
    },
    'f:spec': { '.': {}, ...fieldsOf(applied.spec ?? {}) },
  };
  for (const path of taken) fieldsV1 = without(fieldsV1, path);
  return { manager: 'work-agent', operation: 'Update', apiVersion: applied.apiVersion, time: AGENT_TIME, fieldsType: 'FieldsV1', fieldsV1 };
}

/** The copy as it runs on the spoke: `copy` (the sent one, edited or not) with the apiserver's metadata and these managers. */
function live(copy: KubeObject, managedFields: unknown[]): KubeObject {
  return {
    ...copy,
    metadata: { ...copy.metadata, uid: 'spoke-uid', resourceVersion: '4242', generation: 1, ownerReferences: [OWNER], managedFields },
  };
}

const otherTool = (fieldsV1: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  manager: 'other-tool',
  operation: 'Update',
  apiVersion: 'kuadrant.io/v1',
  time: EDIT_TIME,
  fieldsType: 'FieldsV1',
  fieldsV1,
  ...extra,
});

/** The sent copy with spec.targetRef.name set to `name` (kubectl patch --field-manager=other-tool). */
function withTargetName(copy: KubeObject, name: string): KubeObject {
  const spec = copy.spec as { targetRef: Record<string, unknown> };
  return { ...copy, spec: { ...copy.spec, targetRef: { ...spec.targetRef, name } } };
}

test('copyDriftOf: a copy as the work agent applied it is not drifted', () => {
  const copy = sent();
  assert.equal(copyDriftOf(live(copy, [agentEntry(copy)])), undefined);
});

test('copyDriftOf: a schema-defaulted field the apiserver wrote (and the work agent owns) is not drift when the hub hashed with the default', () => {
  // The hub hashes the spec with the kind's defaults (core/works/copydigest.ts): the spoke stores them.
  const schema = { properties: { rules: { properties: { priority: { default: 0 } } } } };
  const rendered: KubeObject = { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { namespace: 'shop', name: 'p', annotations: { [POLICY_SYNCED_ANNOTATION]: 'hub/p' } }, spec: { rules: {} } };
  const copy = withCopyDigest(rendered, schema);
  const stored = { ...copy, spec: { rules: { priority: 0 } } };
  assert.equal(copyDriftOf(live(stored, [agentEntry(stored)])), undefined);
});

test('copyDriftOf: an annotation another tool added (not sent by the hub) is that tool\'s alone: not drift', () => {
  const copy = sent();
  const annotated = { ...copy, metadata: { ...copy.metadata, annotations: { ...copy.metadata.annotations, 'example.com/owner': 'team-x' } } };
  const tool = { manager: 'kubectl-annotate', operation: 'Update', time: EDIT_TIME, fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:example.com/owner': {} } } } };
  assert.equal(copyDriftOf(live(annotated, [agentEntry(copy), tool])), undefined);
});

test('copyDriftOf: a label another tool added is not drift either', () => {
  const copy = sent();
  const labelled = { ...copy, metadata: { ...copy.metadata, labels: { ...copy.metadata.labels, 'example.com/cost-center': '42' } } };
  assert.equal(copyDriftOf(live(labelled, [agentEntry(copy), otherTool({ 'f:metadata': { 'f:labels': { 'f:example.com/cost-center': {} } } })])), undefined);
});

test('copyDriftOf: the spoke controller\'s status written through the status subresource is not drift', () => {
  const copy = sent();
  const withStatus = { ...copy, status: { conditions: [{ type: 'Enforced', status: 'True' }] } };
  const operator = { manager: 'kuadrant-operator', operation: 'Update', subresource: 'status', time: EDIT_TIME, fieldsV1: { 'f:status': { '.': {}, 'f:conditions': {} } } };
  assert.equal(copyDriftOf(live(withStatus, [agentEntry(copy), operator])), undefined);
});

test('copyDriftOf: a spec field another tool changed names the field it owns, the tool with its operation and time, and since then', () => {
  const copy = sent();
  const edited = withTargetName(copy, 'shop-canary');
  const object = live(edited, [agentEntry(copy, [['spec', 'targetRef', 'name']]), otherTool({ 'f:spec': { 'f:targetRef': { 'f:name': {} } } })]);
  assert.deepEqual(copyDriftOf(object), {
    fields: ['spec.targetRef.name'],
    managers: [{ manager: 'other-tool', operation: 'Update', time: EDIT_TIME }],
    since: EDIT_TIME,
  });
});

test('copyDriftOf: a spec field another tool added is drift (the Update apply writes the spec whole)', () => {
  const copy = sent();
  const added = { ...copy, spec: { ...copy.spec, overrides: { strategy: 'merge' } } };
  const edit = { manager: 'kubectl-edit', operation: 'Update', time: EDIT_TIME, fieldsV1: { 'f:spec': { 'f:overrides': { '.': {}, 'f:strategy': {} } } } };
  assert.deepEqual(copyDriftOf(live(added, [agentEntry(copy), edit])), {
    // The map the tool made is its own (`.`) as well as its member.
    fields: ['spec.overrides', 'spec.overrides.strategy'],
    managers: [{ manager: 'kubectl-edit', operation: 'Update', time: EDIT_TIME }],
    since: EDIT_TIME,
  });
});

test('copyDriftOf: a field removed (a JSON patch, owned by no one after) names the part, with no manager', () => {
  const copy = sent();
  const { rules: _rules, ...spec } = copy.spec!;
  const removed = { ...copy, spec };
  assert.deepEqual(copyDriftOf(live(removed, [agentEntry(copy, [['spec', 'rules']])])), { fields: ['spec.rules'], managers: [] });
});

test('copyDriftOf: a field removed deep inside a spec field names that top-level field: the digest holds one hash per field', () => {
  const copy = sent();
  const spec = structuredClone(copy.spec) as { rules: { authentication: { apikey: Record<string, unknown> } } };
  delete spec.rules.authentication.apikey.credentials;
  const removed = { ...copy, spec };
  assert.deepEqual(copyDriftOf(live(removed, [agentEntry(copy, [['spec', 'rules', 'authentication', 'apikey', 'credentials']])])), { fields: ['spec.rules'], managers: [] });
});

test('copyDriftOf: a sent label another tool changed moves to that tool: named as metadata.labels.<key>', () => {
  const copy = sent();
  const relabelled = { ...copy, metadata: { ...copy.metadata, labels: { ...copy.metadata.labels, app: 'shop-v2' } } };
  const object = live(relabelled, [agentEntry(copy, [['metadata', 'labels', 'app']]), otherTool({ 'f:metadata': { 'f:labels': { 'f:app': {} } } })]);
  assert.deepEqual(copyDriftOf(object), {
    fields: ['metadata.labels.app'],
    managers: [{ manager: 'other-tool', operation: 'Update', time: EDIT_TIME }],
    since: EDIT_TIME,
  });
});

test('copyDriftOf: a sent annotation another tool removed is drift on the annotations, with no manager', () => {
  const copy = sent();
  const { [REVISION_ANNOTATION]: _revision, ...annotations } = copy.metadata.annotations!;
  const removed = { ...copy, metadata: { ...copy.metadata, annotations } };
  assert.deepEqual(copyDriftOf(live(removed, [agentEntry(removed)])), { fields: ['metadata.annotations'], managers: [] });
});

test('copyDriftOf: several parts differing, several managers: each part named, managers sorted, since the earliest write', () => {
  const copy = sent();
  const edited = { ...withTargetName(copy, 'x'), metadata: { ...copy.metadata, labels: { ...copy.metadata.labels, app: 'y' } } };
  const early = '2026-11-30T08:00:00Z';
  const object = live(edited, [
    agentEntry(copy, [['spec', 'targetRef', 'name'], ['metadata', 'labels', 'app']]),
    otherTool({ 'f:spec': { 'f:targetRef': { 'f:name': {} } } }),
    { manager: 'argocd-controller', operation: 'Apply', time: early, fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } } } },
  ]);
  assert.deepEqual(copyDriftOf(object), {
    fields: ['metadata.labels.app', 'spec.targetRef.name'],
    managers: [
      { manager: 'argocd-controller', operation: 'Apply', time: early },
      { manager: 'other-tool', operation: 'Update', time: EDIT_TIME },
    ],
    since: early,
  });
});

test('copyDriftOf: a foreign manager\'s fields outside the parts that differ are not named', () => {
  // other-tool owns a label of its own; only the spec differs.
  const copy = sent();
  const edited = { ...withTargetName(copy, 'x'), metadata: { ...copy.metadata, labels: { ...copy.metadata.labels, extra: '1' } } };
  const object = live(edited, [
    agentEntry(copy, [['spec', 'targetRef', 'name']]),
    otherTool({ 'f:metadata': { 'f:labels': { 'f:extra': {} } }, 'f:spec': { 'f:targetRef': { 'f:name': {} } } }),
  ]);
  assert.deepEqual(copyDriftOf(object)?.fields, ['spec.targetRef.name']);
});

test('copyDriftOf: the spoke agent\'s own manager and status-subresource writers are never named as the drift\'s managers', () => {
  const copy = sent();
  const { rules: _rules, ...spec } = copy.spec!;
  const removed = { ...copy, spec };
  const object = live(removed, [
    agentEntry(copy, [['spec', 'rules']]),
    { manager: 'policy-sync-spoke', operation: 'Update', time: EDIT_TIME, fieldsV1: { 'f:spec': { 'f:rules': {} } } },
    { manager: 'kuadrant-operator', operation: 'Update', subresource: 'status', time: EDIT_TIME, fieldsV1: { 'f:spec': { 'f:rules': {} } } },
  ]);
  assert.deepEqual(copyDriftOf(object), { fields: ['spec.rules'], managers: [] });
});

test('copyDriftOf: a copy without a digest (an older hub\'s) says nothing, even when edited', () => {
  const copy = sent();
  const { [DIGEST_ANNOTATION]: _digest, ...annotations } = copy.metadata.annotations!;
  const older = { ...withTargetName(copy, 'x'), metadata: { ...copy.metadata, annotations } };
  assert.equal(copyDriftOf(live(older, [agentEntry(copy), otherTool({ 'f:spec': { 'f:targetRef': { 'f:name': {} } } })])), undefined);
});

test('copyDriftOf: a copy whose digest does not read says nothing', () => {
  const copy = sent();
  const broken = { ...copy, metadata: { ...copy.metadata, annotations: { ...copy.metadata.annotations, [DIGEST_ANNOTATION]: 'not json' } } };
  assert.equal(copyDriftOf(live(broken, [agentEntry(broken)])), undefined);
});

test('copyDriftOf: keys the hub dropped (named in the dropped-keys annotation) still on the copy are not counted as sent', () => {
  // The work agent's Update merges labels and annotations: a key the hub policy dropped stays on the spoke, owned by
  // the work agent, until the spoke agent removes it (core/works/droppedkeys.ts).
  const before = sent({ labels: { team: 'a' }, annotations: { 'example.com/old': 'x' } });
  const copy = withCopyDigest(withDroppedKeys(sent(), before));
  assert.match(copy.metadata.annotations?.[DROPPED_KEYS_ANNOTATION] ?? '', /team/);
  const merged = {
    ...copy,
    metadata: { ...copy.metadata, labels: { ...copy.metadata.labels, team: 'a' }, annotations: { ...copy.metadata.annotations, 'example.com/old': 'x' } },
  };
  assert.equal(copyDriftOf(live(merged, [agentEntry(merged)])), undefined);
  // The same leftover without the annotation naming it is what the hub did not send: drift.
  const unnamed = withCopyDigest(sent());
  const leftover = { ...unnamed, metadata: { ...unnamed.metadata, labels: { ...unnamed.metadata.labels, team: 'a' } } };
  assert.deepEqual(copyDriftOf(live(leftover, [agentEntry(leftover)]))?.fields, ['metadata.labels']);
});

test('copyDriftOf: without managedFields (an apiserver that keeps none) every label and annotation counts', () => {
  const copy = sent();
  assert.equal(copyDriftOf(live(copy, [])), undefined);
  const annotated = { ...copy, metadata: { ...copy.metadata, annotations: { ...copy.metadata.annotations, 'example.com/owner': 'team-x' } } };
  assert.deepEqual(copyDriftOf(live(annotated, [])), { fields: ['metadata.annotations'], managers: [] });
});

test('copyDriftOf: unreadable managedFields entries are skipped, not trusted', () => {
  const copy = sent();
  const edited = withTargetName(copy, 'x');
  const object = live(edited, [agentEntry(copy, [['spec', 'targetRef', 'name']]), null, 'text', { operation: 'Update', fieldsV1: { 'f:spec': { 'f:targetRef': { 'f:name': {} } } } }]);
  assert.deepEqual(copyDriftOf(object), { fields: ['spec.targetRef'], managers: [] });
});

test('copyDriftOf: an operation other than Apply or Update, and an absent time, are left out of the manager', () => {
  const copy = sent();
  const edited = withTargetName(copy, 'x');
  const object = live(edited, [agentEntry(copy, [['spec', 'targetRef', 'name']]), { manager: 'odd', operation: 'Patch', fieldsV1: { 'f:spec': { 'f:targetRef': { 'f:name': {} } } } }]);
  assert.deepEqual(copyDriftOf(object), { fields: ['spec.targetRef.name'], managers: [{ manager: 'odd' }] });
});

test(`copyDriftOf: past ${REPORT_CAPS.driftFields} foreign fields the list is cut and \`more\` counts the rest`, () => {
  const copy = sent();
  const extra = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${String(i).padStart(2, '0')}`, i]));
  const added = { ...copy, spec: { ...copy.spec, extra } };
  const object = live(added, [agentEntry(copy), otherTool({ 'f:spec': { 'f:extra': { '.': {}, ...fieldsOf(extra) } } })]);
  const drift = copyDriftOf(object);
  assert.ok(drift);
  // 21 paths: the map itself and its 20 members; sorted, the first 16 kept.
  assert.equal(drift.fields.length, REPORT_CAPS.driftFields);
  assert.equal(drift.more, 21 - REPORT_CAPS.driftFields);
  assert.deepEqual(drift.fields.slice(0, 3), ['spec.extra', 'spec.extra.k00', 'spec.extra.k01']);
  assert.deepEqual(drift.managers, [{ manager: 'other-tool', operation: 'Update', time: EDIT_TIME }]);
});

test(`copyDriftOf: past ${REPORT_CAPS.driftManagers} managers only the first by name are named`, () => {
  const copy = sent();
  const extra = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i]));
  const added = { ...copy, spec: { ...copy.spec, extra } };
  const tools = Object.keys(extra).map((k, i) => ({ manager: `tool-${i}`, operation: 'Update', time: EDIT_TIME, fieldsV1: { 'f:spec': { 'f:extra': { [`f:${k}`]: {} } } } }));
  const drift = copyDriftOf(live(added, [agentEntry(copy), ...tools]));
  assert.equal(drift?.managers.length, REPORT_CAPS.driftManagers);
  assert.deepEqual(drift?.managers.map((m) => m.manager), ['tool-0', 'tool-1', 'tool-2', 'tool-3', 'tool-4', 'tool-5', 'tool-6', 'tool-7']);
});

test('copyDriftOf: non-ASCII in a field path or a manager name is made printable, and a long path is cut', () => {
  // A CRD map may have any key, and a field manager any printable Unicode: the text goes to the hub's status.
  const copy = sent();
  const long = 'x'.repeat(300);
  const added = { ...copy, spec: { ...copy.spec, extra: { 'clé': 1, [long]: 2 } } };
  const tool = { manager: 'outil-é', operation: 'Update', time: EDIT_TIME, fieldsV1: { 'f:spec': { 'f:extra': { 'f:clé': {}, [`f:${long}`]: {} } } } };
  const drift = copyDriftOf(live(added, [agentEntry(copy), tool]));
  assert.ok(drift);
  assert.deepEqual(drift.managers, [{ manager: 'outil-?', operation: 'Update', time: EDIT_TIME }]);
  assert.ok(drift.fields.includes('spec.extra.cl?'));
  const cut = drift.fields.find((f) => f.startsWith('spec.extra.xxx'));
  assert.ok(cut);
  assert.equal(cut.length, REPORT_CAPS.driftText);
  assert.ok(cut.endsWith('~'));
  for (const text of [...drift.fields, ...drift.managers.map((m) => m.manager)]) assert.match(text, /^[\x20-\x7e]+$/);
});

test('copyDriftOf: a field manager named \'\' (the apiserver allows it: a client with no user agent) is named `?`, never empty', () => {
  // The report's schema refuses an empty name: the agent would leave the whole kind out of its report.
  const copy = sent();
  const edited = withTargetName(copy, 'x');
  const object = live(edited, [agentEntry(copy, [['spec', 'targetRef', 'name']]), { manager: '', operation: 'Update', time: EDIT_TIME, fieldsV1: { 'f:spec': { 'f:targetRef': { 'f:name': {} } } } }]);
  assert.deepEqual(copyDriftOf(object)?.managers, [{ manager: '?', operation: 'Update', time: EDIT_TIME }]);
});

test('leafPaths: f: members are dotted steps; a `.` member makes its parent a leaf too', () => {
  assert.deepEqual(leafPaths({ 'f:spec': { '.': {}, 'f:a': {}, 'f:b': { 'f:c': {} } } }), ['spec', 'spec.a', 'spec.b.c']);
});

test('leafPaths: k: list keys name the item by its key fields, v: set members by their value, i: items by index', () => {
  const fields = {
    'f:spec': {
      'f:listeners': { 'k:{"name":"https","port":443}': { '.': {}, 'f:hostname': {} } },
      'f:hosts': { 'v:"a.example.com"': {}, 'v:3': {} },
      'f:rules': { 'i:0': { 'f:x': {} } },
    },
  };
  assert.deepEqual(leafPaths(fields), [
    'spec.listeners[name=https,port=443]',
    'spec.listeners[name=https,port=443].hostname',
    'spec.hosts[a.example.com]',
    'spec.hosts[3]',
    'spec.rules[0].x',
  ]);
});

test('leafPaths: a k: key that is no JSON is kept as written; unknown member tags are skipped; nothing but an object has paths', () => {
  assert.deepEqual(leafPaths({ 'f:l': { 'k:{oops': {} } }), ['l[{oops]']);
  assert.deepEqual(leafPaths({ 'f:a': {}, 'x:b': {}, '': {} }), ['a']);
  assert.deepEqual(leafPaths({}), []);
  assert.deepEqual(leafPaths(null), []);
  assert.deepEqual(leafPaths(['f:a']), []);
  assert.deepEqual(leafPaths('f:a'), []);
});

test('leafPaths: the work agent\'s set of a real copy lists every label and annotation key it wrote', () => {
  const copy = sent();
  const paths = leafPaths((agentEntry(copy) as { fieldsV1: unknown }).fieldsV1);
  assert.ok(paths.includes('metadata.labels.app.kubernetes.io/part-of'));
  assert.ok(paths.includes(`metadata.annotations.${DIGEST_ANNOTATION}`));
  assert.ok(paths.includes(`metadata.ownerReferences[uid=${OWNER.uid}]`));
  assert.ok(paths.includes('spec.targetRef.name'));
});

test('isWorkAgentManager: OCM\'s work agent by its Update name and its ServerSideApply managers', () => {
  assert.equal(isWorkAgentManager('work-agent'), true);
  assert.equal(isWorkAgentManager('work-agent-hubhash'), true);
  assert.equal(isWorkAgentManager('kubectl-edit'), false);
  assert.equal(isWorkAgentManager('my-work-agent'), false);
});

test('ownedByAppliedWork: an AppliedManifestWork of OCM\'s work API owns the copy; nothing else counts', () => {
  const copy = sent();
  const withOwners = (ownerReferences: unknown[] | undefined): KubeObject => ({ ...copy, metadata: { ...copy.metadata, ownerReferences } });
  assert.equal(ownedByAppliedWork(withOwners([OWNER])), true);
  assert.equal(ownedByAppliedWork(withOwners([{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'y' }, { ...OWNER, apiVersion: 'work.open-cluster-management.io/v1alpha1' }])), true);
  // Left by the Orphan delete option: its owner reference is gone.
  assert.equal(ownedByAppliedWork(withOwners(undefined)), false);
  assert.equal(ownedByAppliedWork(withOwners([])), false);
  assert.equal(ownedByAppliedWork(withOwners([{ ...OWNER, kind: 'ManifestWork' }])), false);
  assert.equal(ownedByAppliedWork(withOwners([{ ...OWNER, apiVersion: 'example.com/v1' }])), false);
  assert.equal(ownedByAppliedWork(withOwners([{ ...OWNER, apiVersion: 1 }])), false);
  assert.equal(ownedByAppliedWork(withOwners([null, 'x'])), false);
});
