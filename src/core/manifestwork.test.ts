import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sha256Hex, specHash } from './canonical.ts';
import { feedbackRulesFor } from './feedbackrules.ts';
import { isDns1123Subdomain } from './dns.ts';
import {
  MAX_WORK_NAME_LENGTH,
  buildManifestWork,
  controllerLabelValue,
  deleteOptionFor,
  manifestWorkName,
  readSourceRef,
  readSpecHash,
  sourceHash,
  workSizeBytes,
} from './manifestwork.ts';
import type { DeleteOption } from './manifestwork.ts';
import type { KubeObject } from './objects.ts';

const auth = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };

function hash(text: string, length: number): string {
  return sha256Hex(text).slice(0, length);
}

test('manifestWorkName is <resource>-<namespace>-<name>-<hash6 of group/resource/namespace/name>', () => {
  assert.equal(manifestWorkName(auth, 'team-a', 'p'), `authpolicies-team-a-p-${hash('kuadrant.io/authpolicies/team-a/p', 6)}`);
});

test('manifestWorkName is deterministic', () => {
  assert.equal(manifestWorkName(auth, 'ns', 'p'), manifestWorkName({ ...auth }, 'ns', 'p'));
});

test('manifestWorkName differs for the same resource name in another group, and ignores the version', () => {
  const other = { ...auth, group: 'example.com' };
  assert.notEqual(manifestWorkName(auth, 'ns', 'p'), manifestWorkName(other, 'ns', 'p'));
  assert.equal(manifestWorkName(auth, 'ns', 'p'), manifestWorkName({ ...auth, version: 'v1beta3' }, 'ns', 'p'));
});

test('manifestWorkName keeps names apart whose readable parts are equal', () => {
  // "a-b"/"c" and "a"/"b-c" both read authpolicies-a-b-c.
  assert.notEqual(manifestWorkName(auth, 'a-b', 'c'), manifestWorkName(auth, 'a', 'b-c'));
});

test('manifestWorkName lowercases and replaces characters a DNS subdomain cannot hold', () => {
  assert.equal(
    manifestWorkName(auth, 'ns', 'My_Policy..v2-.x'),
    `authpolicies-ns-my-policy.v2.x-${hash('kuadrant.io/authpolicies/ns/My_Policy..v2-.x', 6)}`,
  );
});

test('manifestWorkName truncates long names to fit the agent limit, still ending with the hash', () => {
  const longName = `${'p'.repeat(120)}.${'q'.repeat(120)}`;
  const name = manifestWorkName(auth, 'n'.repeat(63), longName);
  const suffix = hash(`kuadrant.io/authpolicies/${'n'.repeat(63)}/${longName}`, 6);
  assert.equal(name.length, MAX_WORK_NAME_LENGTH);
  assert.equal(MAX_WORK_NAME_LENGTH, 188);
  assert.equal(name, `authpolicies-${'n'.repeat(63)}-${'p'.repeat(188 - 7 - 13 - 64)}-${suffix}`);
  assert.equal(isDns1123Subdomain(name), true);
  // 64 hex characters and a dash of the agent's AppliedManifestWork prefix still fit 253.
  assert.ok(65 + name.length <= 253);
});

test('manifestWorkName trims a separator left at the truncation point', () => {
  // The readable part is cut right after a dot; the dot must not precede the hash dash.
  const namespace = 'n'.repeat(63);
  const name = `${'p'.repeat(103)}.rest-of-the-name`;
  const workName = manifestWorkName(auth, namespace, name);
  assert.equal(workName, `authpolicies-${namespace}-${'p'.repeat(103)}-${hash(`kuadrant.io/authpolicies/${namespace}/${name}`, 6)}`);
  assert.equal(isDns1123Subdomain(workName), true);
});

test('sourceHash is the first 16 hex of sha256(group/resource/namespace/name)', () => {
  assert.equal(sourceHash(auth, 'ns', 'p'), hash('kuadrant.io/authpolicies/ns/p', 16));
  assert.equal(manifestWorkName(auth, 'ns', 'p').slice(-6), sourceHash(auth, 'ns', 'p').slice(0, 6));
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
        updateStrategy: { type: 'ServerSideApply', serverSideApply: { force: true, fieldManager: 'work-agent-policy-sync' } },
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
      name: manifestWorkName(auth, 'team-a', 'p'),
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

test('readSourceRef round-trips the source-ref annotation', () => {
  const work = buildManifestWork({ gvr: auth, policy, cluster: 'c1', copy, feedbackRules: [], deleteOption: 'Orphan' });
  assert.deepEqual(readSourceRef(work), { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', namespace: 'team-a', name: 'p', uid: 'uid-1' });
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
