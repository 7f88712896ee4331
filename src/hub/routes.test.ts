import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../core/k8s/objects.ts';
import { objectKey } from '../core/k8s/objects.ts';
import { desiredWorksForPolicy } from '../core/works/desiredworks.ts';
import { controllerLabelValue } from '../core/works/manifestwork.ts';
import {
  gatewayStatusOfClass,
  gatewayStatusOfCluster,
  gatewayStatusOfClusterSets,
  gatewayStatusOfGateway,
  gatewayStatusOfPlacement,
  gatewayStatusOfPolicy,
  gatewayStatusOnly,
  routeClusterSetChange,
  routeConfigChange,
  routeDecisionChange,
  routeGatewayChange,
  routeKindSynced,
  routeManagedClusterChange,
  routePlacementChange,
  routePolicyChange,
  routeReportChange,
  routeReportedCopies,
  routeVariantChange,
  routeWorkChange,
  type KindedPolicy,
} from './routes.ts';

const AUTH = { group: 'kuadrant.io', resource: 'authpolicies' };
const RLP = { group: 'kuadrant.io', resource: 'ratelimitpolicies' };
const obj = (namespace: string, name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'X', metadata: { namespace, name, ...extra } });
/** For changes that free no lane: no Gateway looked up. */
const NO_LOOKUPS = { sameNamedGateways: (): KubeObject[] => [], policiesTargeting: (): KindedPolicy[] => [] };

test('a policy change maps to itself and the possible rivals of its old and new versions, without version', () => {
  const rivals: Record<string, KubeObject[]> = { 'a/p:1': [obj('b', 'p')], 'a/p:2': [obj('c', 'p'), obj('b', 'p')] };
  const rivalsOf = (p: KubeObject): KubeObject[] => rivals[`${p.metadata.namespace}/${p.metadata.name}:${p.metadata.resourceVersion}`] ?? [];
  const before = obj('a', 'p', { resourceVersion: '1' });
  const after = obj('a', 'p', { resourceVersion: '2' });
  assert.deepEqual(routePolicyChange(AUTH, { old: before, object: after }, { rivalsOf: (_gr, p) => rivalsOf(p) }), [
    'authpolicies.kuadrant.io|a/p',
    'authpolicies.kuadrant.io|b/p',
    'authpolicies.kuadrant.io|c/p',
  ]);
  assert.deepEqual(routePolicyChange(AUTH, { object: obj('a', 'p', { resourceVersion: '3' }) }, { rivalsOf: (_gr, p) => rivalsOf(p) }), ['authpolicies.kuadrant.io|a/p'], 'no possible rival: itself only');
});

test('a Gateway change maps to the policies targeting it before and after (a rename of the Gateway key included)', () => {
  const targeting: Record<string, KindedPolicy[]> = {
    'ns/gw': [{ gr: AUTH, policy: obj('ns', 'auth') }],
    'ns/gw2': [{ gr: RLP, policy: obj('ns', 'rlp') }, { gr: AUTH, policy: obj('ns', 'auth') }],
  };
  const lookup = (key: string): KindedPolicy[] => targeting[key] ?? [];
  const none = (): KubeObject[] => [];
  assert.deepEqual(routeGatewayChange({ old: obj('ns', 'gw'), object: obj('ns', 'gw2') }, { policiesTargeting: (g) => lookup(objectKey(g)), sameNamedGateways: none }), [
    'authpolicies.kuadrant.io|ns/auth',
    'ratelimitpolicies.kuadrant.io|ns/rlp',
  ]);
  assert.deepEqual(routeGatewayChange({ object: obj('ns', 'other') }, { policiesTargeting: (g) => lookup(objectKey(g)), sameNamedGateways: none }), []);
  // Same-named Gateways elsewhere: their lanes may now conflict with this one's.
  const byName = (name: string): KubeObject[] => (name === 'gw' ? [obj('ns', 'gw'), obj('team-b', 'gw')] : []);
  const targetingB = (key: string): KindedPolicy[] => (key === 'team-b/gw' ? [{ gr: AUTH, policy: obj('team-b', 'b') }] : lookup(key));
  assert.deepEqual(routeGatewayChange({ object: obj('ns', 'gw') }, { policiesTargeting: (g) => targetingB(objectKey(g)), sameNamedGateways: byName }), ['authpolicies.kuadrant.io|ns/auth', 'authpolicies.kuadrant.io|team-b/b']);
});

test('a PlacementDecision change maps to the policies on the Gateways of its Placement, old label included', () => {
  const label = (p: string): Partial<KubeObject['metadata']> => ({ labels: { 'cluster.open-cluster-management.io/placement': p } });
  const gateways: Record<string, KubeObject[]> = { 'ns/east': [obj('ns', 'gw-e')], 'ns/west': [obj('ns', 'gw-w')] };
  const policies: Record<string, KindedPolicy[]> = { 'ns/gw-e': [{ gr: AUTH, policy: obj('ns', 'e') }], 'ns/gw-w': [{ gr: AUTH, policy: obj('ns', 'w') }] };
  const keys = routeDecisionChange(
    { old: obj('ns', 'd', label('east')), object: obj('ns', 'd', label('west')) },
    { gatewaysOfPlacement: (p) => gateways[p] ?? [], policiesTargeting: (g) => policies[objectKey(g)] ?? [] },
  );
  assert.deepEqual(keys, ['authpolicies.kuadrant.io|ns/e', 'authpolicies.kuadrant.io|ns/w']);
  assert.deepEqual(routeDecisionChange({ object: obj('ns', 'd') }, { gatewaysOfPlacement: () => [obj('ns', 'gw-e')], policiesTargeting: () => [] }), [], 'no placement label: nothing');
});

test('a work change maps to its source policy by group+resource, or to the spoke configuration', () => {
  const ref = JSON.stringify({ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', namespace: 'ns', name: 'p' });
  const work = obj('c1', 'w', { annotations: { 'policysync.kuadrant.io/source-ref': ref } });
  assert.deepEqual(routeWorkChange({ object: work }, NO_LOOKUPS), { spokeConfig: false, policies: ['authpolicies.kuadrant.io|ns/p'] });
  assert.deepEqual(routeWorkChange({ object: obj('c1', 'w') }, NO_LOOKUPS), { spokeConfig: false, policies: [] }, 'a work without a source-ref maps to nothing');
  assert.deepEqual(routeWorkChange({ object: obj('c1', 's', { labels: { 'policysync.kuadrant.io/spoke-config': 'true' } }) }, NO_LOOKUPS), { spokeConfig: true, policies: [] });
});

test("a work that held a tenant lane, gone or moved off it: the policies on the same-named Gateways of other namespaces are looked at again (they may take the lane now)", () => {
  const policy: KubeObject = {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { namespace: 'team-b', name: 'p', uid: 'u', generation: 1 },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' } },
  };
  const workFor = (template: string): KubeObject =>
    desiredWorksForPolicy({
      gvr: { ...AUTH, version: 'v1' },
      policy,
      gateways: () => ({ managed: true, downstreamNamespaceTemplate: template, clusters: ['c1'], kindAllowed: true }),
      rawFeedback: false,
      statusFeedback: [],
      maxWorkBytes: 1 << 20,
      controller: controllerLabelValue('c'),
    }).works.get('c1')!;
  const held = workFor('gateways');
  const lookups = {
    sameNamedGateways: (name: string): KubeObject[] => (name === 'gw' ? [obj('team-a', 'gw'), obj('team-b', 'gw')] : []),
    policiesTargeting: (g: KubeObject): KindedPolicy[] => [{ gr: AUTH, policy: obj(g.metadata.namespace ?? '', `on-${g.metadata.namespace}`) }],
  };
  const own = 'authpolicies.kuadrant.io|team-b/p';
  assert.deepEqual(routeWorkChange({ old: held, object: held }, lookups).policies, [own, 'authpolicies.kuadrant.io|team-a/on-team-a'], 'deleted: team-a may take gateways/gw on c1');
  assert.deepEqual(routeWorkChange({ old: held, object: workFor('team-b-gateways') }, lookups).policies, [own, 'authpolicies.kuadrant.io|team-a/on-team-a'], 'moved to another downstream namespace');
  assert.deepEqual(routeWorkChange({ old: held, object: { ...held, status: { changed: true } } }, lookups).policies, [own], 'a status update frees nothing');
  assert.deepEqual(routeWorkChange({ object: held }, lookups).policies, [own], 'created: frees nothing');
});

test('a spoke configuration work wakes the syncer when what it wrote changed or the work goes, not on a status update (a report heartbeat)', () => {
  const config = (hash: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject =>
    ({ ...obj('c1', 's', { labels: { 'policysync.kuadrant.io/spoke-config': 'true' }, annotations: { 'policysync.kuadrant.io/spec-hash': hash }, ...extra }), status: { n: hash } });
  const before = config('h1');
  assert.equal(routeWorkChange({ old: before, object: { ...config('h1'), status: { heartbeat: 2 } } }, NO_LOOKUPS).spokeConfig, false);
  assert.equal(routeWorkChange({ old: before, object: config('h2') }, NO_LOOKUPS).spokeConfig, true);
  assert.equal(routeWorkChange({ old: before, object: config('h1', { deletionTimestamp: '2026-11-23T00:00:00Z' }) }, NO_LOOKUPS).spokeConfig, true);
  assert.equal(routeWorkChange({ old: before, object: before }, NO_LOOKUPS).spokeConfig, true, 'a delete (old and object the same) wakes it');
});

test('a Placement change maps to the policies on the Gateways it places', () => {
  const gateways: Record<string, KubeObject[]> = { 'ns/east': [obj('ns', 'gw-e')] };
  const policies: Record<string, KindedPolicy[]> = { 'ns/gw-e': [{ gr: AUTH, policy: obj('ns', 'e') }, { gr: RLP, policy: obj('ns', 'r') }] };
  assert.deepEqual(routePlacementChange({ object: obj('ns', 'east') }, { gatewaysOfPlacement: (p) => gateways[p] ?? [], policiesTargeting: (g) => policies[objectKey(g)] ?? [] }), [
    'authpolicies.kuadrant.io|ns/e',
    'ratelimitpolicies.kuadrant.io|ns/r',
  ]);
  assert.deepEqual(routePlacementChange({ object: obj('ns', 'west') }, { gatewaysOfPlacement: (p) => gateways[p] ?? [], policiesTargeting: (g) => policies[objectKey(g)] ?? [] }), []);
});

test('a ManagedCluster change maps to the policies with works there only when what OCM vouches for changed', () => {
  const cluster = (available: string, taints: unknown[] = [], resourceVersion = '1'): KubeObject => ({
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name: 'c2', resourceVersion },
    spec: { taints },
    status: { conditions: [{ type: 'ManagedClusterConditionAvailable', status: available, reason: 'R', message: '', lastTransitionTime: '2026-11-25T05:00:00Z' }] },
  });
  const ref = JSON.stringify({ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', namespace: 'ns', name: 'p' });
  const works = (name: string): KubeObject[] => (name === 'c2' ? [obj('c2', 'w', { annotations: { 'policysync.kuadrant.io/source-ref': ref } })] : []);
  const taint = { key: 'cluster.open-cluster-management.io/unreachable', effect: 'NoSelect' };
  const lookups = { worksOnCluster: works, allGateways: () => [], clustersDecidedFor: () => [], policiesTargeting: () => [], anyVariants: () => false };
  assert.deepEqual(routeManagedClusterChange({ old: cluster('True'), object: cluster('Unknown', [taint]) }, lookups, true), ['authpolicies.kuadrant.io|ns/p']);
  assert.deepEqual(routeManagedClusterChange({ old: cluster('True'), object: cluster('True', [], '2') }, lookups, true), [], 'a lease renewal: nothing');
  assert.deepEqual(routeManagedClusterChange({ object: cluster('True') }, lookups, true), ['authpolicies.kuadrant.io|ns/p'], 'added (or deleted): its works\' policies');
});

const sourceRef = (gr: { group: string; resource: string }, namespace: string, name: string): Partial<KubeObject['metadata']> => ({
  annotations: { 'policysync.kuadrant.io/source-ref': JSON.stringify({ ...gr, version: 'v1', namespace, name }) },
});

test('a ManagedCluster relabelled maps to the policies on the Gateways it is decided for, unless decisions are taken by their labels', () => {
  const cluster = (labels: Record<string, string>): KubeObject => ({ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name: 'c1', labels } });
  const gwA = obj('ns', 'a');
  const gwB = obj('ns', 'b');
  const lookups = {
    worksOnCluster: () => [],
    allGateways: () => [gwA, gwB],
    clustersDecidedFor: (g: KubeObject) => (g === gwA ? ['c1'] : ['c2']),
    policiesTargeting: (g: KubeObject) => (g === gwA ? [{ gr: AUTH, policy: obj('ns', 'pa') }] : [{ gr: AUTH, policy: obj('ns', 'pb') }]),
    anyVariants: () => false,
  };
  const moved = { old: cluster({ set: 'x' }), object: cluster({ set: 'y' }) };
  assert.deepEqual(routeManagedClusterChange(moved, lookups, false), ['authpolicies.kuadrant.io|ns/pa'], 'only the Gateway it is decided for');
  assert.deepEqual(routeManagedClusterChange(moved, lookups, true), [], 'labels trusted: set membership is not consulted');
  assert.deepEqual(routeManagedClusterChange({ old: cluster({ set: 'x' }), object: cluster({ set: 'x' }) }, lookups, false), [], 'same labels, same health: nothing');
});

test('with PolicyVariants, a relabelled cluster or one whose claims changed maps to the policies with works there and those decided for it, labels trusted or not', () => {
  const cluster = (labels: Record<string, string>, claims: { name: string; value: string }[] = []): KubeObject => ({
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name: 'c1', labels },
    status: { clusterClaims: claims },
  });
  const gwA = obj('ns', 'a');
  const lookups = {
    worksOnCluster: (name: string) => (name === 'c1' ? [obj('c1', 'w', sourceRef(AUTH, 'ns', 'placed'))] : []),
    allGateways: () => [gwA],
    clustersDecidedFor: () => ['c1'],
    policiesTargeting: () => [{ gr: AUTH, policy: obj('ns', 'waiting') }],
    anyVariants: () => true,
  };
  const both = ['authpolicies.kuadrant.io|ns/placed', 'authpolicies.kuadrant.io|ns/waiting'];
  assert.deepEqual(routeManagedClusterChange({ old: cluster({ geo: 'EU' }), object: cluster({ geo: 'US' }) }, lookups, true), both, 'relabelled');
  assert.deepEqual(routeManagedClusterChange({ old: cluster({}, [{ name: 'region', value: 'a' }]), object: cluster({}, [{ name: 'region', value: 'b' }]) }, lookups, true), both, 'a claim changed');
  assert.deepEqual(routeManagedClusterChange({ old: cluster({ geo: 'EU' }), object: cluster({ geo: 'EU' }) }, lookups, true), [], 'neither: nothing');
  assert.deepEqual(routeManagedClusterChange({ old: cluster({ geo: 'EU' }), object: cluster({ geo: 'US' }) }, { ...lookups, anyVariants: () => false }, true), [], 'no variants: labels trusted, nothing');
});

test('a PolicyVariant change maps to the policy it targets, before and after, of each watched kind of its group that has it', () => {
  const variant = (name: string, group = 'kuadrant.io'): KubeObject => ({ apiVersion: 'policysync.kuadrant.io/v1alpha1', kind: 'PolicyVariant', metadata: { name: 'v', namespace: 'ns' }, spec: { targetRef: { group, kind: 'AuthPolicy', name } } });
  const RLP = { group: 'kuadrant.io', resource: 'ratelimitpolicies' };
  const lookups = { watchedKinds: () => [AUTH, RLP, { group: 'other.io', resource: 'authpolicies' }], policyCached: (gr: { resource: string }, _ns: string, name: string) => gr.resource === 'authpolicies' && name !== 'missing' };
  assert.deepEqual(routeVariantChange({ old: variant('a'), object: variant('b') }, lookups), ['authpolicies.kuadrant.io|ns/a', 'authpolicies.kuadrant.io|ns/b']);
  assert.deepEqual(routeVariantChange({ object: variant('missing') }, lookups), [], 'no such policy cached');
  assert.deepEqual(routeVariantChange({ object: { ...variant('a'), spec: { targetRef: 'x' } } }, lookups), [], 'malformed: nothing');
});

test('a ManagedClusterSet or binding change maps to every Gateway\'s policies, or nothing when decisions are taken by their labels', () => {
  const lookups = { allGateways: () => [obj('ns', 'a'), obj('ns', 'b')], policiesTargeting: (g: KubeObject) => [{ gr: AUTH, policy: obj('ns', `p-${g.metadata.name}`) }] };
  assert.deepEqual(routeClusterSetChange(lookups, false), ['authpolicies.kuadrant.io|ns/p-a', 'authpolicies.kuadrant.io|ns/p-b']);
  assert.deepEqual(routeClusterSetChange(lookups, true), []);
});

test('a spoke report change maps to the policies of its kind in the hub namespaces rendering the changed downstream namespaces', () => {
  const policies: Record<string, KubeObject[]> = { 'team-a': [obj('team-a', 'p')], 'team-b': [obj('team-b', 'q')] };
  const lookups = {
    watchedKinds: () => [AUTH, RLP],
    policiesOfKind: () => [...(policies['team-a'] ?? []), ...(policies['team-b'] ?? [])],
    policiesInNamespace: (_gr: unknown, n: string) => policies[n] ?? [],
    downstreamTemplates: () => ['{namespace}'],
  };
  assert.deepEqual(routeReportChange([{ kind: 'authpolicies.kuadrant.io', namespace: 'team-a' }], lookups), ['authpolicies.kuadrant.io|team-a/p']);
  assert.deepEqual(routeReportChange([{ kind: 'ratelimitpolicies.kuadrant.io', namespace: 'team-b' }], lookups), ['ratelimitpolicies.kuadrant.io|team-b/q']);
  assert.deepEqual(routeReportChange([{ kind: 'dnspolicies.kuadrant.io', namespace: 'team-a' }], lookups), [], 'a kind not watched: nothing');
  const fixed = { ...lookups, downstreamTemplates: () => ['gateways'] };
  assert.deepEqual(routeReportChange([{ kind: 'authpolicies.kuadrant.io', namespace: 'gateways' }], fixed), ['authpolicies.kuadrant.io|team-a/p', 'authpolicies.kuadrant.io|team-b/q'], 'one downstream namespace for all: every hub namespace renders it');
});

test('a changed report maps to the policies whose copies it lists, gone from the hub or not, of the watched kinds only', () => {
  const lookups = { watchedKinds: () => [AUTH] };
  assert.deepEqual(
    routeReportedCopies([{ kind: 'authpolicies.kuadrant.io', source: 'team-a/gone' }, { kind: 'authpolicies.kuadrant.io', source: 'team-a/gone' }, { kind: 'dnspolicies.kuadrant.io', source: 'team-a/d' }], lookups),
    ['authpolicies.kuadrant.io|team-a/gone'],
  );
  assert.deepEqual(routeReportedCopies([{ kind: 'authpolicies.kuadrant.io', source: '' }], lookups), [], 'a copy of nothing leads nowhere');
});

test('a configuration change maps to every watched policy and the sources of every work, except works of a kind still listing', () => {
  const lookups = {
    watchedKinds: () => [AUTH],
    policiesOfKind: () => [obj('ns', 'p')],
    allWorks: () => [obj('c1', 'w1', sourceRef(AUTH, 'ns', 'gone')), obj('c1', 'w2', sourceRef(RLP, 'ns', 'listing')), obj('c1', 'w3', sourceRef(RLP, 'ns', 'unwatched'))],
    kindSynced: (gr: { resource: string }) => (gr.resource === 'ratelimitpolicies' ? false : undefined),
  };
  assert.deepEqual(routeConfigChange(lookups), ['authpolicies.kuadrant.io|ns/p', 'authpolicies.kuadrant.io|ns/gone']);
  const unwatchedKind = { ...lookups, kindSynced: () => undefined };
  assert.ok((routeConfigChange(unwatchedKind) as string[]).includes('ratelimitpolicies.kuadrant.io|ns/unwatched'), 'a kind no longer watched: its works are looked at (the deletion rule decides)');
});

test('a kind that listed maps to the sources of its works whose policy its cache does not hold', () => {
  const lookups = {
    allWorks: () => [obj('c1', 'w1', sourceRef(AUTH, 'ns', 'kept')), obj('c1', 'w2', sourceRef(AUTH, 'ns', 'gone')), obj('c1', 'w3', sourceRef(RLP, 'ns', 'gone'))],
    policyCached: (_gr: unknown, _ns: string, name: string) => name === 'kept',
  };
  assert.deepEqual(routeKindSynced(AUTH, lookups), ['authpolicies.kuadrant.io|ns/gone']);
});

// The hub Gateways' status.

const gw = (namespace: string, name: string, extra: Partial<KubeObject> = {}, meta: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { namespace, name, generation: 1, resourceVersion: '1', ...meta },
  spec: { gatewayClassName: 'gc' },
  ...extra,
});

test('a Gateway change: its own status always; a status-only change moves nothing the policies read', () => {
  const before = gw('ns', 'gw');
  const echoed = gw('ns', 'gw', { status: { conditions: [{ type: 'Accepted' }] } }, { resourceVersion: '2', managedFields: [{ manager: 'policy-sync' }] });
  assert.deepEqual(gatewayStatusOfGateway({ old: before, object: echoed }), ['ns/gw']);
  assert.equal(gatewayStatusOnly({ old: before, object: echoed }), true);
  assert.equal(gatewayStatusOnly({ old: before, object: gw('ns', 'gw', { spec: { gatewayClassName: 'other' } }, { generation: 2 }) }), false, 'its class');
  assert.equal(gatewayStatusOnly({ old: before, object: gw('ns', 'gw', {}, { labels: { 'cluster.open-cluster-management.io/placement': 'p' } }) }), false, 'its placement label');
  assert.equal(gatewayStatusOnly({ old: before, object: gw('ns', 'gw', {}, { deletionTimestamp: '2025-01-01T00:00:00Z' }) }), false, 'its deletion');
  assert.equal(gatewayStatusOnly({ object: before }), false, 'a new Gateway');
});

test('a GatewayClass change maps to its Gateways; a Placement or decision change to the Gateways of its Placement, old label included', () => {
  const ofClass: Record<string, KubeObject[]> = { gc: [gw('a', 'x'), gw('b', 'y')] };
  assert.deepEqual(gatewayStatusOfClass({ object: obj('', 'gc') }, { gatewaysOfClass: (n) => ofClass[n] ?? [] }), ['a/x', 'b/y']);
  const label = (p: string): Partial<KubeObject['metadata']> => ({ labels: { 'cluster.open-cluster-management.io/placement': p } });
  const ofPlacement: Record<string, KubeObject[]> = { 'ns/east': [gw('ns', 'e')], 'ns/west': [gw('ns', 'w')] };
  const l = { gatewaysOfPlacement: (p: string) => ofPlacement[p] ?? [] };
  assert.deepEqual(gatewayStatusOfPlacement({ old: obj('ns', 'd', label('east')), object: obj('ns', 'd', label('west')) }, l, true), ['ns/e', 'ns/w']);
  assert.deepEqual(gatewayStatusOfPlacement({ object: obj('ns', 'east') }, l, false), ['ns/e']);
});

test('a Gateway that stops being ours is looked at: moved to another class, its class deleted, or re-created naming another controller', () => {
  const moved = gw('ns', 'gw', { spec: { gatewayClassName: 'theirs' } }, { generation: 2, resourceVersion: '2' });
  assert.deepEqual(gatewayStatusOfGateway({ old: gw('ns', 'gw'), object: moved }), ['ns/gw']);
  assert.equal(gatewayStatusOnly({ old: gw('ns', 'gw'), object: moved }), false, 'its policies are looked at too');
  const cls = (controllerName: string, resourceVersion: string): KubeObject => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'gc', resourceVersion }, spec: { controllerName } });
  const ofClass = { gatewaysOfClass: (n: string) => (n === 'gc' ? [gw('ns', 'gw'), gw('other', 'gw')] : []) };
  // controllerName is immutable: it changes by a delete and a create, each an event of its own.
  assert.deepEqual(gatewayStatusOfClass({ old: cls('example.com/ours', '1'), object: cls('example.com/ours', '1') }, ofClass), ['ns/gw', 'other/gw'], 'deleted');
  assert.deepEqual(gatewayStatusOfClass({ object: cls('example.com/theirs', '2') }, ofClass), ['ns/gw', 'other/gw'], 're-created naming another controller');
});

test('a ManagedCluster change maps to the Gateways decided onto it, only when its health or (unless trusted) its labels moved', () => {
  const available = (status: string, labels: Record<string, string> = {}): KubeObject => ({
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name: 'c1', labels },
    status: { conditions: [{ type: 'ManagedClusterConditionAvailable', status, lastTransitionTime: '2025-01-01T00:00:00Z' }] },
  });
  const l = { allGateways: () => [gw('ns', 'on'), gw('ns', 'off')], clustersDecidedFor: (g: KubeObject) => (g.metadata.name === 'on' ? ['c1'] : ['c2']) };
  assert.deepEqual(gatewayStatusOfCluster({ old: available('True'), object: available('False') }, l, false), ['ns/on']);
  assert.deepEqual(gatewayStatusOfCluster({ old: available('True'), object: available('True') }, l, false), [], 'a lease renewal');
  assert.deepEqual(gatewayStatusOfCluster({ old: available('True'), object: available('True', { env: 'prod' }) }, l, false), ['ns/on']);
  assert.deepEqual(gatewayStatusOfCluster({ old: available('True'), object: available('True', { env: 'prod' }) }, l, true), [], 'labels do not matter to trusted decisions');
  assert.deepEqual(gatewayStatusOfClusterSets(l, false), ['ns/on', 'ns/off']);
  assert.deepEqual(gatewayStatusOfClusterSets(l, true), []);
});

test('a policy change maps to the Gateways it targets before and after, only when its targets, verdicts or existence moved', () => {
  const policy = (target: string, status?: string, rv = '1'): KubeObject => ({
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { namespace: 'ns', name: 'p', resourceVersion: rv, ...(status ? { annotations: { 'policysync.kuadrant.io/status': status } } : {}) },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: target }, rules: { rv } },
  });
  assert.deepEqual(gatewayStatusOfPolicy({ object: policy('a') }), ['ns/a'], 'created (or deleted)');
  assert.deepEqual(gatewayStatusOfPolicy({ old: policy('a'), object: policy('b') }), ['ns/a', 'ns/b'], 'retargeted');
  assert.deepEqual(gatewayStatusOfPolicy({ old: policy('a'), object: policy('a', '{"summary":{}}') }), ['ns/a'], 'its verdicts reported');
  assert.deepEqual(gatewayStatusOfPolicy({ old: policy('a', 'x'), object: policy('a', 'x', '2') }), [], 'a spec edit keeping its targets: its status will tell');
});
