import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, specHash } from '../k8s/canonical.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { PREVIOUS_COPY_ANNOTATION, REVISION_ANNOTATION, ROLLOUT_HOLD_ANNOTATION, SPEC_HASH_ANNOTATION } from '../metadatakeys.ts';
import { ancestorFeedbackGateways, feedbackRulesFor } from './feedbackrules.ts';
import { buildManifestWork, readSpecHash, type ManifestWork } from './manifestwork.ts';
import { buildSpokeCopy } from './spokecopy.ts';
import { copyRevision, copyRevisionTag, previousCopy, revisionText, rolloutHold, sameSpec, workCopy, workPlacing, workRevision } from './revision.ts';

const GW = 'gateway.networking.k8s.io';
const gvr = { group: 'gateway.envoyproxy.io', version: 'v1alpha1', resource: 'backendtrafficpolicies' };

function hubPolicy(generation: number | undefined, spec: Record<string, unknown>, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'gateway.envoyproxy.io/v1alpha1',
    kind: 'BackendTrafficPolicy',
    metadata: { name: 'p', namespace: 'shop', uid: 'u1', labels, ...(generation === undefined ? {} : { generation }) },
    spec,
  };
}

/** The copy of `policy` on a cluster whose Gateways are `gateways` (targets rewritten as desiredworks.ts does). */
function copyOf(policy: KubeObject, gateways: string[]): KubeObject {
  const { targetRefs: _refs, ...rest } = policy.spec ?? {};
  return buildSpokeCopy(policy, { downstreamNamespace: 'shop', spec: { ...rest, targetRefs: gateways.map((name) => ({ group: GW, kind: 'Gateway', name })) } });
}

function workOf(policy: KubeObject, copy: KubeObject, cluster = 'c1'): ManifestWork {
  const feedbackRules = feedbackRulesFor({ rawFeedback: false, ancestorGateways: ancestorFeedbackGateways(copy) });
  return buildManifestWork({ gvr, policy, cluster, copy, feedbackRules, deleteOption: 'Foreground' });
}

const spec1 = { targetRefs: [{ group: GW, kind: 'Gateway', name: 'a' }], timeout: { http: { requestTimeout: '5s' } } };
const spec2 = { targetRefs: [{ group: GW, kind: 'Gateway', name: 'a' }], timeout: { http: { requestTimeout: '9s' } } };
const v1 = hubPolicy(1, spec1);
const v2 = hubPolicy(2, spec2, { team: 'shop' });

test('copyRevision: the revision annotation of a copy, digits only', () => {
  assert.equal(copyRevision(copyOf(v1, ['a'])), 1);
  assert.equal(copyRevision(copyOf(hubPolicy(123456789012345, spec1), ['a'])), 123456789012345);
  assert.equal(copyRevision(copyOf(hubPolicy(undefined, spec1), ['a'])), undefined, 'a copy written before revisions were recorded');
  assert.equal(copyRevision(undefined), undefined);
  const withRevision = (value: string): KubeObject => ({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x', annotations: { [REVISION_ANNOTATION]: value } } });
  for (const bad of ['', 'abc', '-1', '1.0', '1e3', ' 1', '0x1', '1234567890123456']) assert.equal(copyRevision(withRevision(bad)), undefined, bad);
  assert.equal(copyRevision(withRevision('0')), 0);
  for (const bad of ['1/', '1/ABC', '1/g', '1/0/1', `1/${'0'.repeat(65)}`]) assert.equal(copyRevision(withRevision(bad)), undefined, bad);
});

test('copyRevision and copyRevisionTag: a copy rendered with variants carries `<generation>/<tag>`, the revision is the generation', () => {
  const withRevision = (value: string): KubeObject => ({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x', annotations: { [REVISION_ANNOTATION]: value } } });
  assert.equal(copyRevision(withRevision('3/0123456789')), 3);
  assert.equal(copyRevisionTag(withRevision('3/0123456789')), '0123456789');
  assert.equal(copyRevisionTag(withRevision('3')), undefined, 'a copy no variant changes');
  assert.equal(copyRevisionTag(withRevision('3/XYZ')), undefined);
  assert.equal(copyRevisionTag(undefined), undefined);
  assert.equal(revisionText(withRevision('3/0123456789')), '3', 'told to a person as the generation');
  assert.equal(workRevision(workOf(v1, withRevision('3/0123456789'))), 3);
});

test('workCopy and workRevision: the work\'s only manifest, when it is an object with apiVersion, kind and a name', () => {
  const copy = copyOf(v2, ['a']);
  const work = workOf(v2, copy);
  assert.equal(workCopy(work), copy);
  assert.equal(workRevision(work), 2);
  assert.equal(workCopy(undefined), undefined);
  assert.equal(workRevision(undefined), undefined);
  const withManifests = (manifests: unknown): KubeObject => ({ apiVersion: 'v1', kind: 'ManifestWork', metadata: { name: 'w' }, spec: { workload: { manifests } } });
  assert.equal(workCopy({ apiVersion: 'v1', kind: 'ManifestWork', metadata: { name: 'w' } }), undefined);
  for (const bad of [undefined, 'x', {}, [], [null], ['copy'], [{ kind: 'X', metadata: { name: 'x' } }], [{ apiVersion: 'v1', kind: 'X', metadata: {} }], [{ apiVersion: 'v1', kind: 'X' }]]) {
    assert.equal(workCopy(withManifests(bad)), undefined, JSON.stringify(bad));
  }
  // As the work cache keeps it (cacheview.ts): the copy's identity, metadata and spec only, frozen.
  const cached = Object.freeze({ ...work, spec: Object.freeze({ workload: Object.freeze({ manifests: Object.freeze([copy]) }) }) });
  assert.equal(workCopy(cached), copy);
});

test('previousCopy reads back the copy workPlacing records, and nothing from a malformed record', () => {
  const previous = copyOf(v1, ['a']);
  const desired = workOf(v2, copyOf(v2, ['a']));
  const placed = workPlacing(desired, copyOf(v2, ['a']), { previous });
  assert.deepEqual(previousCopy(placed), previous);
  assert.equal(placed.metadata.annotations[PREVIOUS_COPY_ANNOTATION], canonicalJson(previous));
  assert.equal(previousCopy(desired), undefined);
  assert.equal(previousCopy(undefined), undefined);
  const annotated = (value: string): KubeObject => ({ ...desired, metadata: { ...desired.metadata, annotations: { [PREVIOUS_COPY_ANNOTATION]: value } } });
  for (const bad of ['', 'not json', '{"apiVersion":"v1"}', '[]', '{"apiVersion":"v1","kind":"X","metadata":{}}', 'null']) {
    assert.equal(previousCopy(annotated(bad)), undefined, bad);
  }
  assert.deepEqual(previousCopy(annotated('{"apiVersion":"v1","kind":"X","metadata":{"name":"x"},"spec":{"y":1},"extra":true}')), {
    apiVersion: 'v1',
    kind: 'X',
    metadata: { name: 'x' },
    spec: { y: 1 },
    extra: true,
  });
});

test('rolloutHold reads back the hold workPlacing records; a malformed one is none', () => {
  const desired = workOf(v2, copyOf(v2, ['a']));
  const joined = workPlacing(desired, copyOf(v1, ['a']), { hold: { revision: 2, cause: 'Joined' } });
  assert.deepEqual(rolloutHold(joined), { revision: 2, cause: 'Joined' });
  assert.equal(joined.metadata.annotations[ROLLOUT_HOLD_ANNOTATION], '{"cause":"Joined","revision":2}');
  const halt = { cluster: 'c1', reason: 'TargetNotFound', message: 'target a was not found' };
  const rolledBack = workPlacing(desired, copyOf(v1, ['a']), { hold: { revision: 2, cause: 'RolledBack', halt } });
  assert.deepEqual(rolloutHold(rolledBack), { revision: 2, cause: 'RolledBack', halt });
  assert.equal(rolloutHold(desired), undefined);
  assert.equal(rolloutHold(undefined), undefined);
  const annotated = (value: string): KubeObject => ({ ...desired, metadata: { ...desired.metadata, annotations: { [ROLLOUT_HOLD_ANNOTATION]: value } } });
  for (const bad of ['', '{', '{"revision":2}', '{"revision":"2","cause":"Joined"}', '{"revision":2.5,"cause":"Joined"}', '{"revision":2,"cause":"Paused"}', '{"revision":2,"cause":"RolledBack","halt":{"cluster":"c1"}}']) {
    assert.equal(rolloutHold(annotated(bad)), undefined, bad);
  }
  assert.deepEqual(rolloutHold(annotated('{"revision":3,"cause":"Joined","by":"someone"}')), { revision: 3, cause: 'Joined' }, 'unknown fields are not kept');
});

test('sameSpec compares what a spoke controller judges: the spec, whatever the metadata and key order', () => {
  const a = copyOf(v1, ['a']);
  assert.equal(sameSpec(a, copyOf(hubPolicy(7, spec1, { other: 'label' }), ['a'])), true, 'relabel and a new revision: same spec');
  assert.equal(sameSpec(a, copyOf(v2, ['a'])), false);
  assert.equal(sameSpec(a, copyOf(v1, ['b'])), false, 'other targets, another spec');
  const reordered: KubeObject = { ...a, spec: { timeout: { http: { requestTimeout: '5s' } }, targetRefs: [{ name: 'a', kind: 'Gateway', group: GW }] } };
  assert.equal(sameSpec(a, reordered), true);
  assert.equal(sameSpec(a, undefined), false);
  assert.equal(sameSpec(undefined, a), false);
  assert.equal(sameSpec(undefined, undefined), false);
  const bare: KubeObject = { apiVersion: 'v1', kind: 'X', metadata: { name: 'x' } };
  assert.equal(sameSpec(bare, { ...bare, spec: {} }), true, 'no spec is an empty one');
});

test('workPlacing with the desired copy and no records is the desired work: the spec-hash agrees with buildManifestWork', () => {
  const desired = workOf(v2, copyOf(v2, ['a', 'b']));
  const placed = workPlacing(desired, workCopy(desired)!, {});
  assert.deepEqual(placed, desired);
  assert.equal(readSpecHash(placed), readSpecHash(desired));
});

test('workPlacing with another copy is the work buildManifestWork makes for that copy (same identity and rules)', () => {
  const desired = workOf(v2, copyOf(v2, ['a']));
  const earlier = copyOf(v1, ['a']);
  const placed = workPlacing(desired, earlier, {});
  assert.deepEqual(placed, workOf(v2, earlier));
  assert.notEqual(readSpecHash(placed), readSpecHash(desired));
});

test('workPlacing records the previous copy and the hold as annotations, covered by the spec-hash; the desired work is untouched', () => {
  const desired = workOf(v2, copyOf(v2, ['a']));
  const before = structuredClone(desired);
  const previous = copyOf(v1, ['a']);
  const hold = { revision: 2, cause: 'RolledBack' as const, halt: { cluster: 'c1', reason: 'TargetNotFound', message: 'gone' } };
  const placed = workPlacing(desired, previous, { previous, hold });
  assert.deepEqual(desired, before);
  const { [SPEC_HASH_ANNOTATION]: hash, ...annotations } = placed.metadata.annotations;
  assert.deepEqual(annotations, {
    ...Object.fromEntries(Object.entries(desired.metadata.annotations).filter(([k]) => k !== SPEC_HASH_ANNOTATION)),
    [PREVIOUS_COPY_ANNOTATION]: canonicalJson(previous),
    [ROLLOUT_HOLD_ANNOTATION]: canonicalJson(hold),
  });
  assert.equal(hash, specHash({ metadata: { labels: placed.metadata.labels, annotations }, spec: placed.spec }));
  // Each record changes the hash: a work whose records changed is written again.
  const hashes = new Set([desired, workPlacing(desired, previous, {}), workPlacing(desired, previous, { previous }), workPlacing(desired, previous, { hold }), placed].map(readSpecHash));
  assert.equal(hashes.size, 5);
  // The same records give the same work: planning again writes nothing.
  assert.deepEqual(workPlacing(desired, previous, { previous: previousCopy(placed)!, hold: rolloutHold(placed)! }), placed);
  assert.deepEqual(placed.spec.manifestConfigs, desired.spec.manifestConfigs);
  assert.deepEqual(placed.spec.deleteOption, desired.spec.deleteOption);
  assert.equal(placed.metadata.name, desired.metadata.name);
  assert.deepEqual(placed.metadata.labels, desired.metadata.labels);
});

test('workPlacing replaces the first manifest only', () => {
  const desired = workOf(v2, copyOf(v2, ['a']));
  const extra: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'shop' } };
  const two: ManifestWork = { ...desired, spec: { ...desired.spec, workload: { manifests: [workCopy(desired)!, extra] } } };
  const placed = workPlacing(two, copyOf(v1, ['a']), {});
  assert.deepEqual(placed.spec.workload.manifests, [copyOf(v1, ['a']), extra]);
});
