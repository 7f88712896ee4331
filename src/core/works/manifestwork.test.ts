import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkProperty, oddText } from '../../../testkit/arbitraries.ts';
import { sha256Hex, specHash } from '../k8s/canonical.ts';
import { feedbackRulesFor } from './feedbackrules.ts';
import { isDns1123Subdomain } from '../k8s/dns.ts';
import {
  MAX_WORK_NAME_LENGTH,
  buildManifestWork,
  controllerLabelValue,
  deleteOptionFor,
  WORK_NAME_HASH_LENGTH,
  adoptLegacyName,
  legacyWorkName,
  readSourceRef,
  readSpecHash,
  rehashWork,
  sourceHash,
  workIdentity,
  workName,
  workSizeBytes,
} from './manifestwork.ts';
import type { DeleteOption, ManifestConfig, ManifestWork } from './manifestwork.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { SPEC_HASH_ANNOTATION } from '../metadatakeys.ts';

const auth = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };
const authV1beta3 = { ...auth, version: 'v1beta3' };

function hash(text: string, length: number): string {
  return sha256Hex(text).slice(0, length);
}

const name32 = (group: string, resource: string, namespace: string, name: string): string =>
  sha256Hex(`policysync.kuadrant.io/work-name/v2\n${JSON.stringify([group, resource, namespace, name])}`).slice(0, 32);

test('workName is <resource>-<namespace>-<name>-<32 hex of sha256 over [group, resource, namespace, name]>', () => {
  assert.equal(WORK_NAME_HASH_LENGTH, 32);
  assert.equal(workName(auth, 'team-a', 'p'), `authpolicies-team-a-p-${name32('kuadrant.io', 'authpolicies', 'team-a', 'p')}`);
  assert.equal(workName(auth, 'ns', 'p'), workName({ ...auth }, 'ns', 'p'));
});

test('workName differs for the same resource name in another group, and ignores the version', () => {
  assert.notEqual(workName(auth, 'ns', 'p'), workName({ ...auth, group: 'example.com' }, 'ns', 'p'));
  assert.equal(workName(auth, 'ns', 'p'), workName(authV1beta3, 'ns', 'p'));
});

test('workName: identities differing only in where a "-" falls give different names, though they read alike', () => {
  const alike: [string, string, string][] = [
    ['auth-policies', 'a', 'b'],
    ['auth', 'policies-a', 'b'],
    ['auth', 'policies', 'a-b'],
    ['auth-policies-a', 'b', ''],
    ['auth', 'policies-a-b', ''],
  ];
  const names = alike.map(([resource, namespace, name]) => workName({ group: 'g', resource }, namespace, name));
  assert.equal(new Set(names.map((n) => n.slice(0, -33))).size, 1, 'the readable parts are equal');
  assert.equal(new Set(names).size, alike.length);
  // The legacy hash was over `group/resource/namespace/name`; the new one cannot be fooled by `/` either.
  assert.notEqual(workName({ group: 'a/b', resource: 'r' }, 'n', 'x'), workName({ group: 'a', resource: 'b/r' }, 'n', 'x'));
});

test('workName lowercases and replaces characters a DNS subdomain cannot hold', () => {
  assert.equal(workName(auth, 'ns', 'My_Policy..v2-.x'), `authpolicies-ns-my-policy.v2.x-${name32('kuadrant.io', 'authpolicies', 'ns', 'My_Policy..v2-.x')}`);
});

test('workName stays within 188 characters (so within 253) and a DNS subdomain for the longest inputs', () => {
  const group = `${'g'.repeat(61)}.${'h'.repeat(61)}.${'i'.repeat(61)}.${'j'.repeat(61)}`.slice(0, 253);
  const longest = workName({ group, resource: 'r'.repeat(63) }, 'n'.repeat(63), 'p'.repeat(253));
  assert.equal(longest.length, MAX_WORK_NAME_LENGTH);
  assert.ok(longest.length <= 253 && 65 + longest.length <= 253, 'the agent prefixes 64 hex and a dash');
  assert.equal(isDns1123Subdomain(longest), true);
  assert.equal(longest, `${'r'.repeat(63)}-${'n'.repeat(63)}-${'p'.repeat(188 - 33 - 128)}-${name32(group, 'r'.repeat(63), 'n'.repeat(63), 'p'.repeat(253))}`);
  for (const name of [`${'p'.repeat(26)}.rest`, `${'p'.repeat(26)}-rest`, '...', '', 'É'.repeat(300)]) {
    const n = workName({ group, resource: 'r'.repeat(63) }, 'n'.repeat(63), name);
    assert.ok(n.length <= MAX_WORK_NAME_LENGTH, n);
    assert.equal(isDns1123Subdomain(n), true, n);
  }
});

test('workName and legacyWorkName never give one name: the hash after the last "-" is 32 hex in one, 6 in the other', () => {
  for (const [namespace, name] of [['ns', 'p'], ['', ''], ['n'.repeat(63), 'p'.repeat(253)]] as const) {
    const current = workName(auth, namespace, name);
    const legacy = legacyWorkName(auth, namespace, name);
    assert.match(current.slice(current.lastIndexOf('-') + 1), /^[0-9a-f]{32}$/);
    assert.match(legacy.slice(legacy.lastIndexOf('-') + 1), /^[0-9a-f]{6}$/);
  }
});

test('legacyWorkName (names of earlier versions) is <resource>-<namespace>-<name>-<hash6 of group/resource/namespace/name>', () => {
  assert.equal(legacyWorkName(auth, 'team-a', 'p'), `authpolicies-team-a-p-${hash('kuadrant.io/authpolicies/team-a/p', 6)}`);
});

test('legacyWorkName is deterministic', () => {
  assert.equal(legacyWorkName(auth, 'ns', 'p'), legacyWorkName({ ...auth }, 'ns', 'p'));
});

test('legacyWorkName differs for the same resource name in another group, and ignores the version', () => {
  const other = { ...auth, group: 'example.com' };
  assert.notEqual(legacyWorkName(auth, 'ns', 'p'), legacyWorkName(other, 'ns', 'p'));
  assert.equal(legacyWorkName(auth, 'ns', 'p'), legacyWorkName(authV1beta3, 'ns', 'p'));
});

test('legacyWorkName keeps names apart whose readable parts are equal', () => {
  // "a-b"/"c" and "a"/"b-c" both read authpolicies-a-b-c.
  assert.notEqual(legacyWorkName(auth, 'a-b', 'c'), legacyWorkName(auth, 'a', 'b-c'));
});

test('legacyWorkName lowercases and replaces characters a DNS subdomain cannot hold', () => {
  assert.equal(
    legacyWorkName(auth, 'ns', 'My_Policy..v2-.x'),
    `authpolicies-ns-my-policy.v2.x-${hash('kuadrant.io/authpolicies/ns/My_Policy..v2-.x', 6)}`,
  );
});

test('legacyWorkName truncates long names to fit the agent limit, still ending with the hash', () => {
  const longName = `${'p'.repeat(120)}.${'q'.repeat(120)}`;
  const name = legacyWorkName(auth, 'n'.repeat(63), longName);
  const suffix = hash(`kuadrant.io/authpolicies/${'n'.repeat(63)}/${longName}`, 6);
  assert.equal(name.length, MAX_WORK_NAME_LENGTH);
  assert.equal(MAX_WORK_NAME_LENGTH, 188);
  assert.equal(name, `authpolicies-${'n'.repeat(63)}-${'p'.repeat(188 - 7 - 13 - 64)}-${suffix}`);
  assert.equal(isDns1123Subdomain(name), true);
  // 64 hex characters and a dash of the agent's AppliedManifestWork prefix still fit 253.
  assert.ok(65 + name.length <= 253);
});

test('legacyWorkName trims a separator left at the truncation point', () => {
  // The readable part is cut right after a dot; the dot must not precede the hash dash.
  const namespace = 'n'.repeat(63);
  const name = `${'p'.repeat(103)}.rest-of-the-name`;
  const workName = legacyWorkName(auth, namespace, name);
  assert.equal(workName, `authpolicies-${namespace}-${'p'.repeat(103)}-${hash(`kuadrant.io/authpolicies/${namespace}/${name}`, 6)}`);
  assert.equal(isDns1123Subdomain(workName), true);
});

test('sourceHash is the first 16 hex of sha256(group/resource/namespace/name)', () => {
  assert.equal(sourceHash(auth, 'ns', 'p'), hash('kuadrant.io/authpolicies/ns/p', 16));
  assert.equal(legacyWorkName(auth, 'ns', 'p').slice(-6), sourceHash(auth, 'ns', 'p').slice(0, 6));
});

test('deleteOptionFor is Orphan only for the exact Orphan annotation value', () => {
  const withAnnotation = (value?: string): KubeObject => ({
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: value === undefined ? { name: 'p' } : { name: 'p', annotations: { 'policysync.kuadrant.io/delete-option': value } },
  });
  assert.equal(deleteOptionFor(withAnnotation('Orphan')), 'Orphan');
  assert.equal(deleteOptionFor(withAnnotation('orphan')), 'Foreground');
  assert.equal(deleteOptionFor(withAnnotation('Foreground')), 'Foreground');
  assert.equal(deleteOptionFor(withAnnotation()), 'Foreground');
});

const policy: KubeObject = {
  apiVersion: 'kuadrant.io/v1',
  kind: 'AuthPolicy',
  metadata: { name: 'p', namespace: 'team-a', uid: 'uid-1' },
  spec: {},
};
const copy: KubeObject = {
  apiVersion: 'kuadrant.io/v1',
  kind: 'AuthPolicy',
  metadata: { name: 'p', namespace: 'kuadrant-team-a', annotations: { 'kuadrant.io/policy-synced': 'team-a/p' } },
  spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' } },
};

test('buildManifestWork builds the full desired ManifestWork', () => {
  const feedbackRules = feedbackRulesFor({ rawFeedback: false });
  const work = buildManifestWork({ gvr: auth, policy, cluster: 'c1', copy, feedbackRules, deleteOption: 'Foreground' });
  const labels = { 'app.kubernetes.io/managed-by': 'policy-sync', 'policysync.kuadrant.io/source': hash('kuadrant.io/authpolicies/team-a/p', 16) };
  const sourceRef = '{"group":"kuadrant.io","name":"p","namespace":"team-a","resource":"authpolicies","uid":"uid-1","version":"v1"}';
  const spec = {
    workload: { manifests: [copy] },
    deleteOption: { propagationPolicy: 'Foreground' },
    manifestConfigs: [
      {
        resourceIdentifier: { group: 'kuadrant.io', resource: 'authpolicies', name: 'p', namespace: 'kuadrant-team-a' },
        updateStrategy: { type: 'Update' },
        feedbackRules,
        feedbackScrapeType: 'Watch',
      },
    ],
  };
  const contentHash = specHash({ metadata: { labels, annotations: { 'policysync.kuadrant.io/source-ref': sourceRef } }, spec });
  assert.deepEqual(work, {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: {
      name: workName(auth, 'team-a', 'p'),
      namespace: 'c1',
      labels,
      annotations: { 'policysync.kuadrant.io/source-ref': sourceRef, 'policysync.kuadrant.io/spec-hash': contentHash },
    },
    spec,
  });
});

test('buildManifestWork spec-hash changes with the copy, the delete option and the source uid, not otherwise', () => {
  const base = { gvr: auth, policy, cluster: 'c1', copy, feedbackRules: feedbackRulesFor({ rawFeedback: false }), deleteOption: 'Foreground' as DeleteOption };
  const hashOf = (input: typeof base) => readSpecHash(buildManifestWork(input));
  assert.equal(hashOf(base), hashOf({ ...base, copy: structuredClone(copy) }));
  assert.notEqual(hashOf(base), hashOf({ ...base, copy: { ...copy, spec: { other: 1 } } }));
  assert.notEqual(hashOf(base), hashOf({ ...base, deleteOption: 'Orphan' }));
  assert.notEqual(hashOf(base), hashOf({ ...base, policy: { ...policy, metadata: { ...policy.metadata, uid: 'uid-2' } } }));
  assert.notEqual(hashOf(base), hashOf({ ...base, feedbackRules: feedbackRulesFor({ rawFeedback: true }) }));
});

test('the copy is applied with the Update strategy, whatever the policy, delete option or feedback: the agent creates it with its owner reference in one write', () => {
  // Under ServerSideApply the OCM agent v1.2.1 adds the owner reference by a second write right after the
  // create, which the Kuadrant operator's first status write can lose to (test/e2e/fresh-copy-status.test.ts).
  const labelled: KubeObject = { ...policy, metadata: { name: 'q', namespace: 'team-b', uid: 'uid-q', labels: { a: 'b' }, annotations: { x: 'y' } } };
  for (const input of [
    {},
    { policy: labelled, deleteOption: 'Orphan' as DeleteOption, crdUid: 'crd-1' },
    { feedbackRules: feedbackRulesFor({ rawFeedback: true }), gvr: { group: 'example.com', version: 'v2', resource: 'widgets' }, controller: 'abc' },
  ]) {
    const work = buildManifestWork({ gvr: auth, policy, cluster: 'c1', copy, feedbackRules: [], deleteOption: 'Foreground', ...input });
    assert.deepEqual(work.spec.manifestConfigs.map((c) => c.updateStrategy), [{ type: 'Update' }]);
  }
});

test('a kind whose status is not a subresource is applied by forced server-side apply (a whole write would replace its status)', () => {
  const work = buildManifestWork({ gvr: auth, policy, cluster: 'c1', copy, feedbackRules: [], deleteOption: 'Foreground', updateStrategy: 'ServerSideApply' });
  assert.deepEqual(work.spec.manifestConfigs.map((c) => c.updateStrategy), [{ type: 'ServerSideApply', serverSideApply: { force: true, fieldManager: 'work-agent-policy-sync' } }]);
  assert.notEqual(readSpecHash(work), readSpecHash(buildManifestWork({ gvr: auth, policy, cluster: 'c1', copy, feedbackRules: [], deleteOption: 'Foreground' })));
});

test('a work written under the ServerSideApply strategy gets another spec-hash, so the hub re-applies it once and no more', () => {
  // What earlier versions wrote: the same work but for the strategy. The changed hash makes the hub's plan
  // apply the work once (an apply, never a delete: the copy stays, and the agent converts it in place).
  const base = { gvr: auth, policy, cluster: 'c1', copy, feedbackRules: feedbackRulesFor({ rawFeedback: false }), deleteOption: 'Foreground' as DeleteOption };
  const current = buildManifestWork(base);
  const [config] = current.spec.manifestConfigs;
  const earlier = rehashWork({
    ...current,
    spec: { ...current.spec, manifestConfigs: [{ ...config!, updateStrategy: { type: 'ServerSideApply', serverSideApply: { force: true, fieldManager: 'work-agent-policy-sync' } } } as unknown as ManifestConfig] },
  });
  assert.notEqual(readSpecHash(earlier), readSpecHash(current));
  assert.equal(readSpecHash(buildManifestWork(base)), readSpecHash(current));
  assert.equal(current.metadata.name, earlier.metadata.name);
});

test('readSourceRef round-trips the source-ref annotation', () => {
  const work = buildManifestWork({ gvr: auth, policy, cluster: 'c1', copy, feedbackRules: [], deleteOption: 'Orphan' });
  assert.deepEqual(readSourceRef(work), { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', namespace: 'team-a', name: 'p', uid: 'uid-1' });
});

test('readSourceRef parses one text once for cached works (frozen annotations), and gives a work being built its own', () => {
  const work = buildManifestWork({ gvr: auth, policy, cluster: 'c1', copy, feedbackRules: [], deleteOption: 'Orphan' });
  // Two clusters' cached copies of one policy: one source-ref text, each its own annotations (spec-hash).
  const cachedOn = (hash: string): KubeObject => ({ ...work, metadata: { ...work.metadata, annotations: Object.freeze({ ...work.metadata.annotations, [SPEC_HASH_ANNOTATION]: hash }) } });
  const [a, b] = [readSourceRef(cachedOn('h1')), readSourceRef(cachedOn('h2'))];
  assert.ok(a !== undefined && Object.isFrozen(a));
  assert.equal(b, a, 'one parsed source for the policy\'s cached works');
  const building = readSourceRef({ ...work, metadata: { ...work.metadata, annotations: { ...work.metadata.annotations } } });
  assert.deepEqual(building, a);
  assert.ok(building !== a && !Object.isFrozen(building), 'a work that is not cached gets a value of its own');
  const other = readSourceRef(cachedOn('h3'));
  assert.equal(other, a);
  const malformed = { ...work, metadata: { ...work.metadata, annotations: Object.freeze({ 'policysync.kuadrant.io/source-ref': '{"group":1}' }) } };
  assert.equal(readSourceRef(malformed), undefined);
  assert.equal(readSourceRef({ ...malformed, metadata: { ...malformed.metadata, annotations: Object.freeze({ ...malformed.metadata.annotations }) } }), undefined, 'a malformed text is remembered as malformed');
});

test('readSourceRef returns undefined for a missing, non-JSON or wrongly shaped annotation', () => {
  const workWith = (annotations?: Record<string, string>): KubeObject => ({
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: annotations ? { name: 'w', annotations } : { name: 'w' },
  });
  assert.equal(readSourceRef(workWith()), undefined);
  assert.equal(readSourceRef(workWith({ 'policysync.kuadrant.io/source-ref': '{not json' })), undefined);
  assert.equal(readSourceRef(workWith({ 'policysync.kuadrant.io/source-ref': '{"group":"kuadrant.io"}' })), undefined);
  assert.deepEqual(
    readSourceRef(workWith({ 'policysync.kuadrant.io/source-ref': '{"group":"","version":"v1","resource":"r","namespace":"n","name":"x"}' })),
    { group: '', version: 'v1', resource: 'r', namespace: 'n', name: 'x' },
  );
});

test('workSizeBytes counts UTF-8 bytes of the JSON', () => {
  const work: KubeObject = { apiVersion: 'v1', kind: 'K', metadata: { name: 'é' } };
  assert.equal(workSizeBytes(work), JSON.stringify(work).length + 1);
  assert.equal(workSizeBytes(work), 55);
});

test('workSizeBytes of a work buildManifestWork made (taken from the text it hashed) is the UTF-8 size of its JSON, for any copy, names and cluster', (t) => {
  const text = fc.oneof(oddText({ maxLength: 12 }), fc.string({ maxLength: 8 }));
  const json = fc.jsonValue({ maxDepth: 3 });
  checkProperty(t, 300, [text, text, text, fc.dictionary(text, json, { maxKeys: 4 }), fc.boolean(), fc.boolean()], (name, ns, cluster, spec, uid, feedback) => {
    const source: KubeObject = { ...policy, metadata: { name, namespace: ns, ...(uid ? { uid: `u-${name}` } : {}) } };
    const made: KubeObject = { ...copy, metadata: { ...copy.metadata, name, annotations: { [name]: ns } }, spec };
    const feedbackRules = feedback ? feedbackRulesFor({ rawFeedback: false }) : [];
    const work = buildManifestWork({ gvr: auth, policy: source, cluster, copy: made, feedbackRules, deleteOption: 'Orphan', controller: controllerLabelValue(ns) });
    assert.equal(workSizeBytes(work), Buffer.byteLength(JSON.stringify(work), 'utf8'));
  });
});

test('buildManifestWork labels the work with its controller, so controllers sharing a hub keep apart', () => {
  const work = buildManifestWork({ gvr: auth, policy, cluster: 'c1', copy, feedbackRules: [], deleteOption: 'Foreground', controller: controllerLabelValue('example.com/other') });
  assert.equal(work.metadata.labels['policysync.kuadrant.io/controller'], hash('example.com/other', 16));
  assert.notEqual(controllerLabelValue('example.com/other'), controllerLabelValue('kuadrant.io/policy-sync-controller'));
  assert.match(controllerLabelValue('kuadrant.io/policy-sync-controller'), /^[0-9a-f]{16}$/);
});

/**
 * The paths a server-side apply owns one by one: map keys all the way down; a list is one field
 * (every list of a ManifestWork spec is atomic in its CRD).
 */
function fieldPaths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [prefix];
  return Object.entries(value).flatMap(([key, v]) => fieldPaths(v, `${prefix}.${key}`));
}

test('every ManifestWork of one controller carries the same fields, whatever its policy (a created work is later changed by apply)', () => {
  // A field an apply stops setting would stay on a work first written by a create (WorkApplier).
  const shape = (input: Partial<Parameters<typeof buildManifestWork>[0]>): string[] =>
    fieldPaths(buildManifestWork({ gvr: auth, policy, cluster: 'c1', copy, feedbackRules: [], deleteOption: 'Foreground', controller: 'abc', ...input })).sort();
  const plain = shape({});
  const labelled: KubeObject = { ...policy, metadata: { name: 'q', namespace: 'team-b', labels: { a: 'b' }, annotations: { x: 'y' } } };
  for (const other of [
    shape({ policy: labelled, copy: { ...copy, metadata: { ...copy.metadata, labels: { a: 'b' } }, spec: { rules: { deep: [1, 2] } } } }),
    shape({ deleteOption: 'Orphan', crdUid: 'crd-1' }),
    shape({ feedbackRules: feedbackRulesFor({ rawFeedback: true }), gvr: { group: 'example.com', version: 'v2', resource: 'widgets' } }),
  ]) {
    assert.deepEqual(other, plain);
  }
});

const built = () => buildManifestWork({ gvr: auth, policy, cluster: 'c1', copy, feedbackRules: [], deleteOption: 'Foreground', crdUid: 'crd-1' });
const renamed = (work: ManifestWork, name: string): ManifestWork => ({ ...work, metadata: { ...work.metadata, name } });

test('buildManifestWork names the work by workName', () => {
  assert.equal(built().metadata.name, workName(auth, 'team-a', 'p'));
});

test('workIdentity returns the source of a work built for it, under its current or its legacy name', () => {
  const source = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', namespace: 'team-a', name: 'p', uid: 'uid-1', crdUid: 'crd-1' };
  assert.deepEqual(workIdentity(built()), source);
  assert.deepEqual(workIdentity(renamed(built(), legacyWorkName(auth, 'team-a', 'p'))), source);
});

test('workIdentity refuses a work whose name, label or source-ref does not match the others', () => {
  const work = built();
  const withLabel = (value: string | undefined): ManifestWork => {
    const { 'policysync.kuadrant.io/source': _label, ...labels } = work.metadata.labels;
    return { ...work, metadata: { ...work.metadata, labels: value === undefined ? labels : { ...labels, 'policysync.kuadrant.io/source': value } } };
  };
  const withRef = (ref: string): ManifestWork => ({ ...work, metadata: { ...work.metadata, annotations: { ...work.metadata.annotations, 'policysync.kuadrant.io/source-ref': ref } } });
  // Another policy's name (what a crafted collision would give), a legacy name of another policy, a name of neither scheme.
  assert.equal(workIdentity(renamed(work, workName(auth, 'team-a', 'q'))), undefined);
  assert.equal(workIdentity(renamed(work, legacyWorkName(auth, 'team-b', 'p'))), undefined);
  assert.equal(workIdentity(renamed(work, 'authpolicies-team-a-p')), undefined);
  // The label of another policy, or none.
  assert.equal(workIdentity(withLabel(sourceHash(auth, 'team-a', 'q'))), undefined);
  assert.equal(workIdentity(withLabel(undefined)), undefined);
  // A source-ref naming another policy (the name and label then no longer match it), or none that parses.
  assert.equal(workIdentity(withRef('{"group":"kuadrant.io","version":"v1","resource":"authpolicies","namespace":"team-b","name":"p"}')), undefined);
  assert.equal(workIdentity(withRef('{not json')), undefined);
  // A source-ref of another group: the label and name were computed with the group.
  assert.equal(workIdentity(withRef('{"group":"example.com","version":"v1","resource":"authpolicies","namespace":"team-a","name":"p"}')), undefined);
});

test('workIdentity gives the same answers for a cached work (frozen, shared labels and annotations), also after a rename', () => {
  const work = built();
  const frozen: ManifestWork = { ...work, metadata: { ...work.metadata, labels: Object.freeze({ ...work.metadata.labels }), annotations: Object.freeze({ ...work.metadata.annotations }) } };
  assert.deepEqual(workIdentity(frozen), readSourceRef(work));
  assert.deepEqual(workIdentity(frozen), readSourceRef(work));
  // Same shared labels and annotations, another name: decided again, not taken from the cache.
  assert.equal(workIdentity(renamed(frozen, 'other')), undefined);
  assert.deepEqual(workIdentity(frozen), readSourceRef(work));
});

test('adoptLegacyName keeps the legacy name of the observed work of the same policy and cluster, and only that', () => {
  const desired = built();
  const legacy = renamed(desired, legacyWorkName(auth, 'team-a', 'p'));
  assert.equal(adoptLegacyName(desired, [legacy]).metadata.name, legacyWorkName(auth, 'team-a', 'p'));
  assert.equal(adoptLegacyName(desired, [legacy]).metadata.annotations, desired.metadata.annotations, 'the spec hash still holds');
  assert.equal(adoptLegacyName(desired, []), desired);
  assert.equal(adoptLegacyName(desired, [desired]), desired);
  // On another cluster, or a work with the legacy name whose label does not match: not adopted.
  assert.equal(adoptLegacyName(desired, [{ ...legacy, metadata: { ...legacy.metadata, namespace: 'c2' } }]), desired);
  const forged = { ...legacy, metadata: { ...legacy.metadata, labels: { ...legacy.metadata.labels, 'policysync.kuadrant.io/source': 'x' } } };
  assert.equal(adoptLegacyName(desired, [forged]), desired);
});
