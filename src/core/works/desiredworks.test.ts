import { test } from 'node:test';
import assert from 'node:assert/strict';
import { desiredWorksForPolicy, diffWorks, resolveCollisions } from './desiredworks.ts';
import { workKey, workKeyOf } from '../keys.ts';
import type { DesiredWorksInput, GatewayPlacement, PlacementCandidate } from './desiredworks.ts';
import { feedbackRulesFor } from './feedbackrules.ts';
import { withCopyDigest } from './copydigest.ts';
import { readSpecHash, workName, workSizeBytes } from './manifestwork.ts';
import type { ManifestWork } from './manifestwork.ts';
import type { KubeObject } from '../k8s/objects.ts';

const GW = 'gateway.networking.k8s.io';
const auth = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };

function gatewayRef(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { group: GW, kind: 'Gateway', name, ...extra };
}

function policy(spec: Record<string, unknown>, annotations: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { name: 'p', namespace: 'team-a', uid: 'u1', creationTimestamp: '2024-05-01T10:00:00Z', annotations },
    spec,
  };
}

function placement(clusters: string[], extra: Partial<GatewayPlacement> = {}): GatewayPlacement {
  return { managed: true, downstreamNamespaceTemplate: '{namespace}', clusters, kindAllowed: true, ...extra };
}

function input(p: KubeObject, gateways: Record<string, GatewayPlacement>, extra: Partial<DesiredWorksInput> = {}): DesiredWorksInput {
  return {
    gvr: auth,
    policy: p,
    gateways: (namespace, name) => gateways[`${namespace}/${name}`],
    rawFeedback: false,
    statusFeedback: [],
    maxWorkBytes: 500 * 1024,
    ...extra,
  };
}

function copyOf(work: ManifestWork | undefined): KubeObject | undefined {
  return work?.spec.workload.manifests[0];
}

test('desiredWorksForPolicy makes one work per cluster of the targeted Gateway, holding the rewritten copy', () => {
  const p = policy({ targetRef: gatewayRef('gw', { sectionName: 'https' }), rules: { r: 1 } });
  const result = desiredWorksForPolicy(
    input(p, { 'team-a/gw': placement(['c2', 'c1'], { downstreamNamespaceTemplate: 'kuadrant-{namespace}' }) }, {
      statusFeedback: [{ name: 'extra', path: '.status.extra' }],
    }),
  );
  assert.deepEqual([...result.works.keys()], ['c1', 'c2']);
  const work = result.works.get('c1');
  assert.equal(work?.metadata.name, workName(auth, 'team-a', 'p'));
  assert.equal(work?.metadata.namespace, 'c1');
  // The copy carries the digest of what it holds (copydigest.ts), computed here over the expected copy.
  assert.deepEqual(
    copyOf(work),
    withCopyDigest({
      apiVersion: 'kuadrant.io/v1',
      kind: 'AuthPolicy',
      metadata: {
        name: 'p',
        namespace: 'kuadrant-team-a',
        annotations: { 'kuadrant.io/policy-synced': 'team-a/p', 'kuadrant.io/origin-creation': '2024-05-01T10:00:00Z' },
      },
      spec: { targetRef: gatewayRef('gw', { sectionName: 'https' }), rules: { r: 1 } },
    }),
  );
  assert.deepEqual(
    work?.spec.manifestConfigs[0]?.feedbackRules,
    feedbackRulesFor({ rawFeedback: false, statusFeedback: [{ name: 'extra', path: '.status.extra' }], ancestorGateways: ['gw'] }),
  );
  assert.equal(work?.spec.deleteOption.propagationPolicy, 'Foreground');
  assert.deepEqual(result.targets, [
    {
      path: 'spec.targetRef',
      target: { group: GW, kind: 'Gateway', name: 'gw', sectionName: 'https' },
      state: 'syncable',
      gateway: { namespace: 'team-a', name: 'gw' },
      sectionName: 'https',
      downstreamNamespace: 'kuadrant-team-a',
      clusters: ['c1', 'c2'],
    },
  ]);
  assert.deepEqual([result.mismatches, result.tooLarge, result.noClusters], [[], [], false]);
});

test('desiredWorksForPolicy puts on each cluster only the targets whose Gateway is placed there', () => {
  const p = policy({ targetRefs: [gatewayRef('a'), gatewayRef('b', { namespace: 'team-a' })] });
  const result = desiredWorksForPolicy(input(p, { 'team-a/a': placement(['c1', 'c3']), 'team-a/b': placement(['c2', 'c3']) }));
  const targetsOn = (cluster: string) => copyOf(result.works.get(cluster))?.spec?.targetRefs;
  assert.deepEqual(targetsOn('c1'), [gatewayRef('a')]);
  assert.deepEqual(targetsOn('c2'), [gatewayRef('b')]);
  assert.deepEqual(targetsOn('c3'), [gatewayRef('a'), gatewayRef('b')]);
  assert.deepEqual(
    result.targets.map((t) => (t.state === 'syncable' ? t.clusters : t.reason)),
    [['c1', 'c3'], ['c2', 'c3']],
  );
});

test('desiredWorksForPolicy leaves out and reports every kind of unsyncable target', () => {
  const p = policy({
    targetRefs: [
      gatewayRef('ok'),
      gatewayRef('far', { namespace: 'other' }),
      { group: GW, kind: 'HTTPRoute', name: 'route' },
      gatewayRef('unknown'),
      gatewayRef('foreign'),
      gatewayRef('nokind'),
      gatewayRef('longns'),
      { kind: 'Gateway' },
    ],
  });
  const result = desiredWorksForPolicy(
    input(p, {
      'team-a/ok': placement(['c1']),
      'team-a/foreign': placement(['c1'], { managed: false }),
      'team-a/nokind': placement(['c1'], { kindAllowed: false }),
      'team-a/longns': placement(['c1'], { downstreamNamespaceTemplate: `${'x'.repeat(60)}-{namespace}` }),
    }),
  );
  assert.deepEqual(
    result.targets.map((t) => (t.state === 'syncable' ? 'syncable' : t.reason)),
    ['syncable', 'CrossNamespace', 'NotAGateway', 'GatewayNotManaged', 'GatewayNotManaged', 'KindNotSynced', 'InvalidDownstreamNamespace', 'Invalid'],
  );
  const kindNotSynced = result.targets[5];
  assert.equal(
    kindNotSynced?.state === 'rejected' ? kindNotSynced.message : '',
    'the GatewayClass of Gateway team-a/nokind does not list authpolicies.v1.kuadrant.io in policiesToSync',
  );
  const invalidNamespace = result.targets[6];
  assert.equal(
    invalidNamespace?.state === 'rejected' ? invalidNamespace.message : '',
    `downstream namespace "${'x'.repeat(60)}-team-a" (template "${'x'.repeat(60)}-{namespace}") of Gateway team-a/longns is not a valid DNS-1123 label`,
  );
  assert.deepEqual(copyOf(result.works.get('c1'))?.spec?.targetRefs, [gatewayRef('ok')]);
});

test('desiredWorksForPolicy with no syncable target wants no works and is not "no clusters"', () => {
  const p = policy({ targetRef: { group: GW, kind: 'HTTPRoute', name: 'r' } });
  const result = desiredWorksForPolicy(input(p, {}));
  assert.equal(result.works.size, 0);
  assert.equal(result.noClusters, false);
  assert.equal(result.targets[0]?.state, 'rejected');
});

test('desiredWorksForPolicy reports noClusters when the targeted Gateways have no placement decisions', () => {
  const result = desiredWorksForPolicy(input(policy({ targetRef: gatewayRef('gw') }), { 'team-a/gw': placement([]) }));
  assert.equal(result.works.size, 0);
  assert.equal(result.noClusters, true);
  assert.deepEqual(result.targets.map((t) => (t.state === 'syncable' ? t.clusters : t.reason)), [[]]);
});

test('desiredWorksForPolicy keeps the first Gateway by key when two on one cluster render different namespaces', () => {
  const p = policy({ targetRefs: [gatewayRef('zeta'), gatewayRef('alpha')] });
  const result = desiredWorksForPolicy(
    input(p, {
      'team-a/alpha': placement(['c1']),
      'team-a/zeta': placement(['c1', 'c2'], { downstreamNamespaceTemplate: 'kuadrant-{namespace}' }),
    }),
  );
  assert.equal(copyOf(result.works.get('c1'))?.metadata.namespace, 'team-a');
  assert.deepEqual(copyOf(result.works.get('c1'))?.spec?.targetRefs, [gatewayRef('alpha')]);
  assert.equal(copyOf(result.works.get('c2'))?.metadata.namespace, 'kuadrant-team-a');
  assert.deepEqual(copyOf(result.works.get('c2'))?.spec?.targetRefs, [gatewayRef('zeta')]);
  assert.deepEqual(result.mismatches, [
    {
      cluster: 'c1',
      path: 'spec.targetRefs[0]',
      gateway: { namespace: 'team-a', name: 'zeta' },
      downstreamNamespace: 'kuadrant-team-a',
      keptGateway: { namespace: 'team-a', name: 'alpha' },
      keptNamespace: 'team-a',
      message:
        'on cluster c1, Gateway team-a/zeta renders downstream namespace "kuadrant-team-a" but Gateway team-a/alpha renders "team-a"; one copy lives in one namespace',
    },
  ]);
  // Still placed on c2, so the target stays syncable there.
  assert.deepEqual(result.targets.map((t) => (t.state === 'syncable' ? t.clusters : t.reason)), [['c2'], ['c1']]);
});

test('desiredWorksForPolicy rejects a target as NamespaceMismatch when it is dropped on all its clusters', () => {
  const p = policy({ targetRefs: [gatewayRef('b'), gatewayRef('a')] });
  const result = desiredWorksForPolicy(
    input(p, { 'team-a/a': placement(['c1']), 'team-a/b': placement(['c1'], { downstreamNamespaceTemplate: 'other-{namespace}' }) }),
  );
  assert.deepEqual(result.targets[0], {
    path: 'spec.targetRefs[0]',
    target: { group: GW, kind: 'Gateway', name: 'b' },
    state: 'rejected',
    reason: 'NamespaceMismatch',
    message:
      'on cluster c1, Gateway team-a/b renders downstream namespace "other-team-a" but Gateway team-a/a renders "team-a"; one copy lives in one namespace',
  });
  assert.deepEqual(copyOf(result.works.get('c1'))?.spec?.targetRefs, [gatewayRef('a')]);
});

test('desiredWorksForPolicy leaves out works over maxWorkBytes and lists their clusters', () => {
  const p = policy({ targetRef: gatewayRef('gw'), big: 'x'.repeat(2000) });
  const gateways = { 'team-a/gw': placement(['c1', 'c2']) };
  const fitting = desiredWorksForPolicy(input(p, gateways)).works.get('c1');
  const size = fitting ? workSizeBytes(fitting) : 0;
  assert.ok(size > 2000);
  const atLimit = desiredWorksForPolicy(input(p, gateways, { maxWorkBytes: size }));
  assert.deepEqual([[...atLimit.works.keys()], atLimit.tooLarge], [['c1', 'c2'], []]);
  const overLimit = desiredWorksForPolicy(input(p, gateways, { maxWorkBytes: size - 1 }));
  assert.deepEqual([[...overLimit.works.keys()], overLimit.tooLarge], [[], ['c1', 'c2']]);
});

test('desiredWorksForPolicy: clusters sharing a copy get equal works but for the namespace, each sized with its own name', () => {
  const p = policy({ targetRef: gatewayRef('gw'), big: 'x'.repeat(2000) });
  const long = `c-${'l'.repeat(60)}`;
  const gateways = { 'team-a/gw': placement(['c1', 'c2', long]) };
  const all = desiredWorksForPolicy(input(p, gateways));
  for (const [cluster, work] of all.works) {
    // As if built for that cluster alone.
    const alone = desiredWorksForPolicy(input(p, { 'team-a/gw': placement([cluster]) })).works.get(cluster);
    assert.deepEqual(work, alone);
  }
  const short = workSizeBytes(all.works.get('c1')!);
  assert.equal(workSizeBytes(all.works.get(long)!), short + long.length - 'c1'.length);
  const limited = desiredWorksForPolicy(input(p, gateways, { maxWorkBytes: short }));
  assert.deepEqual([[...limited.works.keys()], limited.tooLarge], [['c1', 'c2'], [long]]);
});

test('desiredWorksForPolicy honours the Orphan delete option and raw feedback', () => {
  const p = policy({ targetRef: gatewayRef('gw') }, { 'policysync.kuadrant.io/delete-option': 'Orphan' });
  const work = desiredWorksForPolicy(input(p, { 'team-a/gw': placement(['c1']) }, { rawFeedback: true })).works.get('c1');
  assert.equal(work?.spec.deleteOption.propagationPolicy, 'Orphan');
  assert.deepEqual(work?.spec.manifestConfigs[0]?.feedbackRules, feedbackRulesFor({ rawFeedback: true, ancestorGateways: ['gw'] }));
});

test('desiredWorksForPolicy gives each copy ancestor rules for its own Gateways, in name order', () => {
  const p = policy({ targetRefs: [gatewayRef('b'), gatewayRef('a'), gatewayRef('b', { sectionName: 'https' })] });
  const result = desiredWorksForPolicy(input(p, { 'team-a/a': placement(['c1', 'c3']), 'team-a/b': placement(['c2', 'c3']) }));
  const ancestorNames = (cluster: string) =>
    (result.works.get(cluster)?.spec.manifestConfigs[0]?.feedbackRules[0]?.jsonPaths ?? [])
      .filter((rule) => rule.name.endsWith('Status') && rule.name.startsWith('ancestor'))
      .map((rule) => rule.path);
  const statusPath = (gateway: string) => `.status.ancestors[?(@.ancestorRef.name=="${gateway}")].conditions[?(@.type=="Accepted")].status`;
  assert.deepEqual(ancestorNames('c1'), [statusPath('a')]);
  assert.deepEqual(ancestorNames('c2'), [statusPath('b')]);
  assert.deepEqual(ancestorNames('c3'), [statusPath('a'), statusPath('b')]);
  assert.deepEqual(
    result.works.get('c3')?.spec.manifestConfigs[0]?.feedbackRules,
    feedbackRulesFor({ rawFeedback: false, ancestorGateways: ['a', 'b'] }),
  );
});

test('desiredWorksForPolicy: reordering the targets changes the copy but not the ancestor rules', () => {
  const gateways = { 'team-a/a': placement(['c1']), 'team-a/b': placement(['c1']) };
  const rulesOf = (targetRefs: unknown[]) => desiredWorksForPolicy(input(policy({ targetRefs }), gateways)).works.get('c1')?.spec.manifestConfigs[0]?.feedbackRules;
  assert.deepEqual(rulesOf([gatewayRef('a'), gatewayRef('b')]), rulesOf([gatewayRef('b'), gatewayRef('a')]));
});

test('desiredWorksForPolicy is deterministic and does not modify the policy', () => {
  const p = policy({ targetRefs: [gatewayRef('a'), gatewayRef('b')] });
  const before = structuredClone(p);
  const gateways = { 'team-a/a': placement(['c2', 'c1', 'c1']), 'team-a/b': placement(['c1']) };
  const first = desiredWorksForPolicy(input(p, gateways));
  const second = desiredWorksForPolicy(input(p, gateways));
  assert.deepEqual(first, second);
  assert.deepEqual(p, before);
  assert.deepEqual([...first.works.keys()], ['c1', 'c2']);
});

function candidate(policyKey: string, creationTimestamp: string | Date | undefined, extra: Partial<PlacementCandidate> = {}): PlacementCandidate {
  const c: PlacementCandidate = { cluster: 'c1', copyNamespace: 'kuadrant', copyName: 'p', policyKey, group: 'kuadrant.io', resource: 'authpolicies', ...extra };
  if (creationTimestamp !== undefined) c.creationTimestamp = creationTimestamp;
  return c;
}

test('resolveCollisions lets the older policy keep the spoke object and names it on the loser', () => {
  const losses = resolveCollisions([candidate('ns2/p', '2024-01-02T00:00:00Z'), candidate('ns1/p', new Date('2024-01-01T00:00:00Z'))]);
  assert.deepEqual(losses, [
    {
      cluster: 'c1',
      group: 'kuadrant.io',
      resource: 'authpolicies',
      copyNamespace: 'kuadrant',
      copyName: 'p',
      policyKey: 'ns2/p',
      winner: 'ns1/p',
      message: 'on cluster c1, authpolicies.kuadrant.io kuadrant/p is already synced from the older policy ns1/p',
    },
  ]);
});

test('resolveCollisions breaks equal ages by namespace, then name, and a missing timestamp loses', () => {
  const t = '2024-01-01T00:00:00Z';
  // "a-b" < "a" as joined keys ("a-b/p" vs "a/p"), but namespace "a" < "a-b".
  assert.deepEqual(resolveCollisions([candidate('a-b/p', t), candidate('a/p', t)]).map((l) => [l.policyKey, l.winner]), [['a-b/p', 'a/p']]);
  assert.deepEqual(resolveCollisions([candidate('a/z', t), candidate('a/y', t)]).map((l) => [l.policyKey, l.winner]), [['a/z', 'a/y']]);
  assert.deepEqual(resolveCollisions([candidate('a/p', undefined), candidate('z/p', t)]).map((l) => [l.policyKey, l.winner]), [['a/p', 'z/p']]);
});

test('resolveCollisions finds no collision across clusters, kinds, names or for a policy listed twice', () => {
  const t = '2024-01-01T00:00:00Z';
  assert.deepEqual(
    resolveCollisions([
      candidate('a/p', t),
      candidate('b/p', t, { cluster: 'c2' }),
      candidate('c/p', t, { resource: 'ratelimitpolicies' }),
      candidate('d/p', t, { group: 'other.io' }),
      candidate('e/q', t, { copyName: 'q' }),
      candidate('f/p', t, { copyNamespace: 'other' }),
      candidate('a/p', t),
    ]),
    [],
  );
});

test('resolveCollisions with three policies on one slot reports both losers, sorted', () => {
  const losses = resolveCollisions([
    candidate('z/p', '2024-01-03T00:00:00Z'),
    candidate('y/p', '2024-01-01T00:00:00Z'),
    candidate('x/p', '2024-01-02T00:00:00Z'),
  ]);
  assert.deepEqual(losses.map((l) => [l.policyKey, l.winner]), [['x/p', 'y/p'], ['z/p', 'y/p']]);
});

function work(cluster: string, name: string, hash: string): ManifestWork {
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name, namespace: cluster, labels: {}, annotations: { 'policysync.kuadrant.io/spec-hash': hash } },
    spec: { workload: { manifests: [] }, deleteOption: { propagationPolicy: 'Foreground' }, manifestConfigs: [] },
  };
}

test('diffWorks makes no writes when every desired work is observed with the same spec-hash', () => {
  const desired = new Map([[workKey('c1', 'w'), work('c1', 'w', 'h1')]]);
  assert.deepEqual(diffWorks(desired, new Map([[workKey('c1', 'w'), { specHash: 'h1' }]])), { create: [], apply: [], delete: [] });
});

test('diffWorks creates missing works and applies works whose hash differs or is unknown', () => {
  const a = work('c1', 'a', 'h1');
  const b = work('c1', 'b', 'h2');
  const c = work('c2', 'c', 'h3');
  const desired = new Map([[workKeyOf(c), c], [workKeyOf(b), b], [workKeyOf(a), a]]);
  const plan = diffWorks(desired, new Map([[workKey('c1', 'b'), { specHash: 'old' }], [workKey('c2', 'c'), {}]]));
  assert.deepEqual(plan, { create: [a], apply: [b, c], delete: [] });
});

test('diffWorks deletes observed works that are not desired, except retained ones', () => {
  const desired = new Map([[workKey('c1', 'a'), work('c1', 'a', 'h')]]);
  const observed = new Map([[workKey('c1', 'a'), { specHash: 'h' }], [workKey('c2', 'gone'), { specHash: 'x' }], [workKey('c1', 'big'), { specHash: 'y' }], [workKey('c0', 'old'), {}]]);
  assert.deepEqual(diffWorks(desired, observed), { create: [], apply: [], delete: [workKey('c0', 'old'), workKey('c1', 'big'), workKey('c2', 'gone')] });
  assert.deepEqual(diffWorks(desired, observed, new Set([workKey('c1', 'big')])), { create: [], apply: [], delete: [workKey('c0', 'old'), workKey('c2', 'gone')] });
});

test('diffWorks over desiredWorksForPolicy output is a no-op against its own hashes', () => {
  const result = desiredWorksForPolicy(input(policy({ targetRef: gatewayRef('gw') }), { 'team-a/gw': placement(['c1', 'c2']) }));
  const desired = new Map([...result.works.values()].map((w) => [workKeyOf(w), w]));
  const observed = new Map([...desired].map(([key, w]) => [key, { specHash: readSpecHash(w) }]));
  assert.deepEqual(diffWorks(desired, observed), { create: [], apply: [], delete: [] });
  assert.deepEqual(diffWorks(desired, new Map()), { create: [...desired.values()], apply: [], delete: [] });
});

test('workKey is cluster/name and workKeyOf reads it from a work', () => {
  assert.equal(workKey('c1', 'w'), workKey('c1', 'w'));
  assert.equal(workKeyOf(work('c9', 'x', 'h')), workKey('c9', 'x'));
});

test('under Update each cluster\'s copy names the keys its own last copy had and the new one lacks; under ServerSideApply none', () => {
  const p: KubeObject = { ...policy({ targetRef: gatewayRef('gw') }), metadata: { ...policy({}).metadata, labels: { keep: '1' } } };
  const before = (labels: Record<string, string>): KubeObject => ({ apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { name: 'p', namespace: 'team-a', labels, annotations: {} }, spec: {} });
  const sent: Record<string, KubeObject> = { c1: before({ keep: '1', team: 'a' }), c2: before({ keep: '1' }) };
  const gateways = { 'team-a/gw': placement(['c1', 'c2', 'c3']) };
  const update = desiredWorksForPolicy(input(p, gateways, { sentCopy: (cluster) => sent[cluster] }));
  const named = (cluster: string, works = update.works): string | undefined => copyOf(works.get(cluster))?.metadata.annotations?.['policysync.kuadrant.io/dropped-keys'];
  assert.equal(named('c1'), '{"annotations":[],"labels":["team"]}');
  assert.equal(named('c2'), undefined);
  assert.equal(named('c3'), undefined, 'a cluster with no copy yet names nothing');
  assert.notEqual(readSpecHash(update.works.get('c1')!), readSpecHash(update.works.get('c2')!));
  assert.equal(readSpecHash(update.works.get('c2')!), readSpecHash(update.works.get('c3')!), 'alike clusters still share one build');
  const ssa = desiredWorksForPolicy(input(p, gateways, { sentCopy: (cluster) => sent[cluster], updateStrategy: 'ServerSideApply' }));
  assert.equal(named('c1', ssa.works), undefined);
});
