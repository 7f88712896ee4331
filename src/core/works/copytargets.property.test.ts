// Properties of targetRef rewriting (targets/targetrefs.ts, through desiredworks.ts and spokecopy.ts that use it,
// hence in works), for any policy spec — well-formed targets, malformed ones, cross-namespace ones, other kinds —
// and any hub Gateways: each cluster's copy targets exactly the synced targets there, renamed to their downstream
// Gateways with every other field kept, in a downstream namespace one of them renders; a target of another
// namespace's Gateway never reaches a copy; and the copy's metadata carries none of the hub's own keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkProperty, isObject, oddText } from '../../../testkit/arbitraries.ts';
import { isDns1123Label } from '../k8s/dns.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { canonicalJson } from '../k8s/canonical.ts';
import { DIGEST_ANNOTATION, LAST_APPLIED_ANNOTATION, OWN_KEY_PREFIX, POLICIES_SYNCED_ANNOTATION, POLICY_SYNCED_ANNOTATION, REVISION_ANNOTATION } from '../metadatakeys.ts';
import { renderDownstreamNamespace } from '../params/params.ts';
import { copyDigest } from './copydigest.ts';
import { desiredWorksForPolicy, type GatewayPlacement } from './desiredworks.ts';
import { rewriteTargets } from '../targets/targetrefs.ts';

const GW = 'gateway.networking.k8s.io';
const AUTH = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };
const NAMESPACES = ['team-a', 'team-b', 'shop'] as const;
const GATEWAYS = ['gw1', 'gw2', 'gw3'] as const;
const CLUSTERS = ['c1', 'c2', 'c3'] as const;

/** The hub Gateways: for each namespace/name, its class's settings and placement, or none (not a Gateway of ours, or absent). */
const gatewayWorld = fc.dictionary(
  fc.tuple(fc.constantFrom(...NAMESPACES), fc.constantFrom(...GATEWAYS)).map(([ns, name]) => `${ns}/${name}`),
  fc.record({
    managed: fc.boolean(),
    // With and without {namespace} (MGC's one namespace for all), and one that renders no valid namespace.
    downstreamNamespaceTemplate: fc.constantFrom('{namespace}', 'kuadrant-{namespace}', 'gateways', 'Bad_{namespace}'),
    clusters: fc.subarray([...CLUSTERS]),
    kindAllowed: fc.boolean(),
  }),
  { maxKeys: 9 },
);

/** A target as a user writes it: mostly a Gateway, in the policy's namespace or another, with or without section. */
const targetRaw = fc.oneof(
  { weight: 5, arbitrary: fc.record(
    {
      group: fc.oneof({ weight: 4, arbitrary: fc.constant(GW) }, { weight: 1, arbitrary: fc.constantFrom('', 'kuadrant.io', 42) }),
      kind: fc.oneof({ weight: 4, arbitrary: fc.constant('Gateway') }, { weight: 1, arbitrary: fc.constantFrom('HTTPRoute', '', 'gateway') }),
      name: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...GATEWAYS) }, { weight: 1, arbitrary: fc.constantFrom('', 'missing', null) }),
      namespace: fc.constantFrom(...NAMESPACES, '', null, 7),
      sectionName: fc.oneof(fc.constantFrom('https', 'http', '', null), oddText({ maxLength: 6 })),
      port: fc.integer({ min: 1, max: 65535 }),
      extra: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: ['group', 'kind', 'name'] },
  ) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
);

const policyArb = fc.record({
  namespace: fc.constantFrom(...NAMESPACES),
  targetRef: fc.option(targetRaw, { nil: undefined }),
  targetRefs: fc.option(fc.oneof({ weight: 6, arbitrary: fc.array(targetRaw, { maxLength: 5 }) }, { weight: 1, arbitrary: targetRaw }), { nil: undefined }),
  rules: fc.jsonValue({ maxDepth: 2 }),
  labels: fc.dictionary(fc.constantFrom('app', 'team', `${OWN_KEY_PREFIX}x`), fc.oneof(oddText({ maxLength: 5 }), fc.constant(3 as unknown as string)), { maxKeys: 3 }),
  annotations: fc.dictionary(
    // DIGEST_ANNOTATION on the hub policy (copied by hand, or a stale one): the copy carries its own, never this.
    fc.constantFrom('note', LAST_APPLIED_ANNOTATION, POLICIES_SYNCED_ANNOTATION, `${OWN_KEY_PREFIX}status`, `${OWN_KEY_PREFIX}rollout-strategy`, POLICY_SYNCED_ANNOTATION, DIGEST_ANNOTATION),
    oddText({ maxLength: 8 }),
    { maxKeys: 4 },
  ),
  generation: fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
});

type PolicyInput = typeof policyArb extends fc.Arbitrary<infer T> ? T : never;

/** The hub policy as read from the apiserver (JSON: what fast-check builds without a prototype gets one). */
function hubPolicy(p: PolicyInput): KubeObject {
  return JSON.parse(JSON.stringify(policyObject(p))) as KubeObject;
}

function policyObject(p: PolicyInput): KubeObject {
  const spec: Record<string, unknown> = { rules: p.rules };
  if (p.targetRef !== undefined) spec.targetRef = p.targetRef;
  if (p.targetRefs !== undefined) spec.targetRefs = p.targetRefs;
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: {
      name: 'p',
      namespace: p.namespace,
      uid: 'u1',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: p.labels,
      annotations: p.annotations,
      ...(p.generation === undefined ? {} : { generation: p.generation }),
    },
    spec,
  };
}

/** A target the sync takes, by the rule in docs/design/configuration.md#which-targets-are-synced, decided here independently. */
interface Synced {
  /** The target as written (its index in spec order: targetRef first). */
  raw: Record<string, unknown>;
  order: number;
  gatewayKey: string;
  downstreamNamespace: string;
  clusters: readonly string[];
}

function syncedTargets(policy: KubeObject, world: Record<string, GatewayPlacement>): Synced[] {
  const ns = policy.metadata.namespace!;
  const spec = policy.spec as { targetRef?: unknown; targetRefs?: unknown };
  const written = [...(spec.targetRef === undefined ? [] : [spec.targetRef]), ...(Array.isArray(spec.targetRefs) ? (spec.targetRefs as unknown[]) : [])];
  const out: Synced[] = [];
  written.forEach((raw, order) => {
    if (!isObject(raw) || raw.group !== GW || raw.kind !== 'Gateway' || typeof raw.name !== 'string' || raw.name === '') return;
    // Well-formed: namespace and sectionName strings when set.
    if (![undefined, null].includes(raw.namespace as null) && typeof raw.namespace !== 'string') return;
    if (![undefined, null].includes(raw.sectionName as null) && typeof raw.sectionName !== 'string') return;
    // Another namespace's Gateway is another tenant's: never synced ('' and null mean the policy's own).
    if (typeof raw.namespace === 'string' && raw.namespace !== '' && raw.namespace !== ns) return;
    const gateway = world[`${ns}/${raw.name}`];
    if (!gateway?.managed || !gateway.kindAllowed) return;
    const downstreamNamespace = renderDownstreamNamespace(gateway.downstreamNamespaceTemplate, ns);
    if (!isDns1123Label(downstreamNamespace)) return;
    out.push({ raw, order, gatewayKey: `${ns}/${raw.name}`, downstreamNamespace, clusters: gateway.clusters });
  });
  return out;
}

/** The copy's targets in spec order (targetRef first), as written in it. */
function copyTargets(copy: KubeObject): unknown[] {
  const spec = copy.spec as { targetRef?: unknown; targetRefs?: unknown };
  return [...(spec.targetRef === undefined ? [] : [spec.targetRef]), ...(Array.isArray(spec.targetRefs) ? (spec.targetRefs as unknown[]) : [])];
}

test('property: each copy targets exactly the synced targets on its cluster, renamed, other fields kept, never another namespace\'s Gateway', (t) => {
  checkProperty(t, 2500, [policyArb, gatewayWorld], (p, world) => {
    const policy = hubPolicy(p);
    const before = structuredClone(policy);
    const desired = desiredWorksForPolicy({
      gvr: AUTH,
      policy,
      gateways: (namespace, name) => world[`${namespace}/${name}`],
      rawFeedback: false,
      statusFeedback: [],
      maxWorkBytes: 10 * 1024 * 1024,
    });
    assert.deepEqual(policy, before, 'the hub policy is not modified');
    const synced = syncedTargets(policy, world);
    const hubSpec = policy.spec as Record<string, unknown>;

    const placedOn = new Set(synced.flatMap((s) => s.clusters));
    assert.deepEqual([...desired.works.keys()].sort(), [...placedOn].sort(), 'a copy where a synced target is placed, and nowhere else');
    for (const [cluster, work] of desired.works) {
      const copy = work.spec.workload.manifests[0]!;
      const here = synced.filter((s) => s.clusters.includes(cluster));
      // One copy, one namespace: the first target by Gateway key chooses it (desiredworks.ts splitByNamespace).
      const chosen = [...here].sort((a, b) => (a.gatewayKey < b.gatewayKey ? -1 : a.gatewayKey > b.gatewayKey ? 1 : a.order - b.order))[0]!;
      assert.equal(copy.metadata.namespace, chosen.downstreamNamespace);
      const kept = here.filter((s) => s.downstreamNamespace === chosen.downstreamNamespace).sort((a, b) => a.order - b.order);
      const expected = kept.map((s) => {
        const { namespace: _dropped, ...rest } = s.raw;
        return { ...rest, name: s.raw.name };
      });
      assert.deepEqual(copyTargets(copy), expected, `${cluster}: the synced targets, renamed to the downstream Gateways (same name), namespace dropped`);

      // Shapes kept: targetRef an object (or gone), targetRefs a list.
      const spec = copy.spec as Record<string, unknown>;
      if ('targetRef' in spec) assert.ok(isObject(spec.targetRef), 'targetRef stays an object');
      if ('targetRefs' in spec) assert.ok(Array.isArray(spec.targetRefs), `targetRefs stays a list, got ${JSON.stringify(spec.targetRefs)}`);
      const kinds = (which: 'targetRef' | 'targetRefs') => kept.filter((s) => (s.order === 0 && hubSpec.targetRef !== undefined) === (which === 'targetRef')).length;
      if (kinds('targetRef') === 0) assert.equal(spec.targetRef, undefined, 'an unsynced targetRef is removed');
      // Nothing else of the spec changes.
      for (const key of new Set([...Object.keys(hubSpec), ...Object.keys(spec)])) {
        if (key !== 'targetRef' && key !== 'targetRefs') assert.deepEqual(spec[key], hubSpec[key], `spec.${key} kept`);
      }

      // The copy's metadata: the hub's name, none of the hub's own keys, and the marks of a copy.
      assert.equal(copy.metadata.name, policy.metadata.name);
      const annotations = copy.metadata.annotations ?? {};
      for (const key of Object.keys(annotations)) {
        const ours = key === POLICY_SYNCED_ANNOTATION || key === REVISION_ANNOTATION || key === DIGEST_ANNOTATION || key === 'kuadrant.io/origin-creation';
        assert.ok(ours || !(key.startsWith(OWN_KEY_PREFIX) || key === LAST_APPLIED_ANNOTATION || key === POLICIES_SYNCED_ANNOTATION), `hub-only annotation ${key} on the copy`);
        if (!ours) assert.equal(annotations[key], p.annotations[key]);
      }
      assert.equal(annotations[POLICY_SYNCED_ANNOTATION], `${p.namespace}/p`);
      assert.equal(annotations[REVISION_ANNOTATION], p.generation === undefined ? undefined : String(p.generation));
      // The digest is of the copy as sent (its spec, labels and every other annotation), whatever the hub policy carried.
      assert.equal(annotations[DIGEST_ANNOTATION], canonicalJson(copyDigest(copy)), 'the copy carries the digest of itself');
      for (const [key, value] of Object.entries(copy.metadata.labels ?? {})) assert.equal(value, p.labels[key], `label ${key}`);
    }
  });
});

test('property: rewriteTargets never throws, keeps every non-target field, keeps only the paths asked for, and modifies nothing', (t) => {
  const spec = fc.dictionary(fc.constantFrom('targetRef', 'targetRefs', 'rules', 'defaults', 'overrides'), fc.oneof(targetRaw, fc.array(targetRaw, { maxLength: 4 }), fc.jsonValue({ maxDepth: 2 })), { maxKeys: 5 });
  const paths = fc.subarray(['spec.targetRef', 'spec.targetRefs', ...[0, 1, 2, 3].map((i) => `spec.targetRefs[${i}]`)]);
  checkProperty(t, 2500, [spec, paths], (generated, keep) => {
    const raw = JSON.parse(JSON.stringify(generated)) as Record<string, unknown>;
    const policy: KubeObject = { apiVersion: 'x/v1', kind: 'X', metadata: { name: 'p', namespace: 'ns' }, spec: raw };
    const before = structuredClone(policy);
    const out = rewriteTargets(policy, keep.map((path) => ({ path })), (target) => `down-${target.name}`);
    assert.deepEqual(policy, before);
    for (const key of Object.keys(raw)) if (key !== 'targetRef' && key !== 'targetRefs') assert.deepEqual(out[key], raw[key]);
    if ('targetRef' in out) {
      assert.ok(keep.includes('spec.targetRef') && isObject(out.targetRef));
      assert.equal((out.targetRef as { name?: unknown }).name, `down-${String((raw.targetRef as { name: string }).name)}`);
      assert.equal('namespace' in (out.targetRef as object), false);
    }
    if ('targetRefs' in out) {
      assert.ok(Array.isArray(out.targetRefs), `targetRefs stays a list, got ${JSON.stringify(out.targetRefs)}`);
      const kept = (raw.targetRefs as unknown[]).filter((_, i) => keep.includes(`spec.targetRefs[${i}]`));
      assert.ok(out.targetRefs.length <= kept.length);
      for (const ref of out.targetRefs as Record<string, unknown>[]) assert.ok(String(ref.name).startsWith('down-') && !('namespace' in ref));
    }
  });
});

// Found by the first property: a `targetRefs` that is not a list (a user's indentation slip, in a kind whose CRD
// does not say it is a list) went to the copy verbatim — not renamed, and with its namespace: a target of
// another namespace's Gateway on the spoke. Its entries are not read as targets, so none of it is synced.
test('regression: a targetRefs that is not a list is left out of the copy, even beside a synced targetRef', () => {
  const policy: KubeObject = {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { name: 'p', namespace: 'shop' },
    spec: {
      targetRef: { group: GW, kind: 'Gateway', name: 'gw1' },
      targetRefs: { group: GW, kind: 'Gateway', name: 'gw2', namespace: 'team-b' },
      rules: {},
    },
  };
  const desired = desiredWorksForPolicy({
    gvr: AUTH,
    policy,
    gateways: (namespace, name) => (namespace === 'shop' && name === 'gw1' ? { managed: true, downstreamNamespaceTemplate: '{namespace}', clusters: ['c1'], kindAllowed: true } : undefined),
    rawFeedback: false,
    statusFeedback: [],
    maxWorkBytes: 1024 * 1024,
  });
  assert.deepEqual(desired.works.get('c1')?.spec.workload.manifests[0]?.spec, { targetRef: { group: GW, kind: 'Gateway', name: 'gw1' }, rules: {} });
  for (const targetRefs of [0, null, 'gw1', { name: 'x' }]) {
    assert.deepEqual(rewriteTargets({ ...policy, spec: { targetRefs, rules: {} } }, [], (t) => t.name), { rules: {} }, JSON.stringify(targetRefs));
  }
});
