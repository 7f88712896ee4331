import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../k8s/objects.ts';
import { PLACEMENT_LABEL } from '../fleet/placement.ts';
import { ROLLOUT_STRATEGY_ANNOTATION, STATUS_ANNOTATION } from '../metadatakeys.ts';
import { parseParams, type SyncParams } from '../params/params.ts';
import { buildSpokeReport } from '../spoke/reportbuild.ts';
import { policyStatusAnnotation } from '../status/annotation.ts';
import { desiredWorksForPolicy } from '../works/desiredworks.ts';
import { controllerLabelValue, type ManifestWork } from '../works/manifestwork.ts';
import { decidePolicy } from './policypipeline.ts';
import { SnapshotView } from './snapshotview.ts';
import { previewRollout, type HubSnapshot, type PreviewInput } from './preview.ts';
import { copyRevision, workCopy, workPlacing } from '../works/revision.ts';
import { policySchema } from '../../../testkit/policyschema.ts';

const GVR = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };
const CONTROLLER = controllerLabelValue('kuadrant.io/policy-sync-controller');
const NS = 'payments';

function params(doc: Record<string, unknown> = {}): SyncParams {
  const parsed = parseParams({ policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }], ...doc });
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  return parsed.params;
}

const PROGRESSIVE = params({ rolloutStrategy: { type: 'Progressive', progressive: { canary: { matchLabels: { env: 'canary' } }, maxConcurrency: '1' } } });

function gateway(name: string, className: string, placement?: string): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace: NS, creationTimestamp: '2026-01-01T00:00:00Z', ...(placement ? { labels: { [PLACEMENT_LABEL]: placement } } : {}) },
    spec: { gatewayClassName: className },
  };
}

function decision(placement: string, clusters: string[]): KubeObject {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1beta1',
    kind: 'PlacementDecision',
    metadata: { name: `${placement}-1`, namespace: NS, labels: { [PLACEMENT_LABEL]: placement } },
    status: { decisions: clusters.map((clusterName) => ({ clusterName, reason: '' })) },
  };
}

function cluster(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name, labels } };
}

/** A ManagedCluster OCM vouches for: Available since long before the preview. */
function available(name: string, labels: Record<string, string> = {}): KubeObject {
  return { ...cluster(name, labels), status: { conditions: [{ type: 'ManagedClusterConditionAvailable', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' }] } };
}

function policy(generation: number, rego: string, annotations: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { name: 'auth', namespace: NS, generation, uid: 'u-1', creationTimestamp: '2026-01-01T00:00:00Z', annotations },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }, rules: { authorization: { deny: { opa: { rego } } } } },
  };
}

function hub(classParams: SyncParams, extra: Partial<HubSnapshot> = {}): HubSnapshot {
  return {
    classes: new Map([['sync', classParams]]),
    gateways: [gateway('gw', 'sync', 'all')],
    placements: [],
    decisions: [decision('all', ['spoke-1', 'spoke-2'])],
    managedClusters: [cluster('spoke-1'), cluster('spoke-2', { env: 'canary' })],
    clusterSets: [],
    bindings: [],
    trustDecisionLabels: true,
    reports: new Map(),
    ...extra,
  };
}

/** The works the hub placed for `p` on `clusters` (as `All` writes them). */
function placed(p: KubeObject, clusters: string[]): ManifestWork[] {
  const desired = desiredWorksForPolicy({
    gvr: GVR,
    policy: p,
    gateways: () => ({ managed: true, downstreamNamespaceTemplate: '{namespace}', clusters, kindAllowed: true }),
    rawFeedback: false,
    statusFeedback: [],
    maxWorkBytes: 500 * 1024,
    controller: CONTROLLER,
  });
  return [...desired.works.values()];
}

function input(p: KubeObject, snapshot: HubSnapshot, observed: readonly KubeObject[] = []): PreviewInput {
  return { gvr: GVR, policy: p, hub: snapshot, observed, controller: CONTROLLER, rawFeedback: false, maxWorkBytes: 500 * 1024, now: Date.parse('2026-01-02T00:00:00Z') };
}

const summary = (p: ReturnType<typeof previewRollout>): [string, string, number | undefined][] => p.clusters.map((c) => [c.cluster, c.action, c.wave]);

test('a new policy under All: every placed cluster gets revision 1 now, from no copy', () => {
  const p = previewRollout(input(policy(1, 'allow = false'), hub(params())));
  assert.equal(p.revision, 1);
  assert.equal(p.strategy.type, 'All');
  assert.deepEqual(summary(p), [['spoke-1', 'write', undefined], ['spoke-2', 'write', undefined]]);
  for (const c of p.clusters) {
    assert.equal(c.current, undefined);
    assert.equal(copyRevision(c.desired), 1);
    assert.equal(c.desired?.metadata.namespace, NS);
  }
  assert.deepEqual(p.waves, []);
  assert.equal(p.rollout.state, 'Progressing');
});

test('a new policy under Progressive: the canary wave gets a copy now, the others wait with none', () => {
  const p = previewRollout(input(policy(1, 'allow = false'), hub(PROGRESSIVE)));
  assert.deepEqual(p.waves, [['spoke-2'], ['spoke-1']]);
  assert.deepEqual(summary(p), [['spoke-2', 'write', 1], ['spoke-1', 'wait', 2]]);
  assert.deepEqual([p.rollout.state, p.rollout.wave, p.rollout.waves], ['Progressing', 1, 2]);
  assert.equal(p.clusters[1]!.desired?.spec?.targetRef !== undefined, true, 'the copy it gets at its wave is shown');
});

test('an edit under Progressive: the canary wave is written, the rest keep revision 1 until their wave', () => {
  const v1 = policy(1, 'allow = false');
  const p = previewRollout(input(policy(2, 'allow = true'), hub(PROGRESSIVE), placed(v1, ['spoke-1', 'spoke-2'])));
  assert.equal(p.revision, 2);
  assert.deepEqual(summary(p), [['spoke-2', 'write', 1], ['spoke-1', 'keep', 2]]);
  for (const c of p.clusters) {
    assert.equal(copyRevision(c.current), 1);
    assert.equal(copyRevision(c.desired), 2);
    assert.deepEqual((c.desired?.spec as { rules: unknown }).rules, { authorization: { deny: { opa: { rego: 'allow = true' } } } });
  }
  assert.match(p.clusters[1]!.message, /runs revision 1 until its wave/);
});

test('the policy annotation overrides the class: All, and an invalid one is a problem with the class default in force', () => {
  const v1 = policy(1, 'allow = false');
  const all = previewRollout(input(policy(2, 'allow = true', { [ROLLOUT_STRATEGY_ANNOTATION]: 'All' }), hub(PROGRESSIVE), placed(v1, ['spoke-1', 'spoke-2'])));
  assert.deepEqual(summary(all), [['spoke-1', 'write', undefined], ['spoke-2', 'write', undefined]]);
  const bad = previewRollout(input(policy(2, 'allow = true', { [ROLLOUT_STRATEGY_ANNOTATION]: 'Sometimes' }), hub(PROGRESSIVE), placed(v1, ['spoke-1', 'spoke-2'])));
  assert.equal(bad.strategy.type, 'Progressive');
  assert.equal(bad.problems[0]?.reason, 'InvalidRolloutStrategy');
  assert.ok(bad.strategyError);
});

test('editing back is ungated: the reached cluster rolls back at once; a metadata-only change relabels', () => {
  const v1 = policy(1, 'allow = false');
  const v2 = policy(2, 'allow = true');
  const [w1a, w1b] = placed(v1, ['spoke-1', 'spoke-2']);
  // spoke-2 (the canary) runs revision 2, and recorded revision 1 as its previous copy; spoke-1 still runs 1.
  const [w2b] = placed(v2, ['spoke-2']);
  const reached = workPlacing(w2b!, workCopy(w2b)!, { previous: workCopy(w1b)! });
  const back = previewRollout(input(policy(3, 'allow = false'), hub(PROGRESSIVE), [w1a!, reached]));
  assert.deepEqual(summary(back), [['spoke-2', 'rollback', 1], ['spoke-1', 'relabel', 2]]);
  assert.equal(copyRevision(back.clusters[0]!.current), 2);
});

test('unchanged: the hub policy as it is, against works that already place it', () => {
  const v1 = policy(1, 'allow = false');
  const p = previewRollout(input(v1, hub(PROGRESSIVE), placed(v1, ['spoke-1', 'spoke-2'])));
  assert.deepEqual(summary(p).map(([c, a]) => [c, a]), [['spoke-2', 'unchanged'], ['spoke-1', 'unchanged']]);
});

test('clusters the change does not reach: local policies cover the copy, or the cluster left the placement', () => {
  const v1 = policy(1, 'allow = false');
  const local: KubeObject = { ...policy(1, 'allow = true'), metadata: { name: 'local', namespace: NS } };
  const { report } = buildSpokeReport(new Map([['authpolicies.kuadrant.io', [local]]]), new Date('2026-01-02T00:00:00Z'));
  const clusters = [available('spoke-1'), available('spoke-2', { env: 'canary' })];
  const snapshot = hub(params(), { decisions: [decision('all', ['spoke-2'])], reports: new Map([['spoke-2', report]]), managedClusters: clusters });
  const p = previewRollout(input(policy(2, 'allow = true'), snapshot, placed(v1, ['spoke-1', 'spoke-2'])));
  assert.deepEqual(summary(p).map(([c, a]) => [c, a]), [['spoke-1', 'remove'], ['spoke-2', 'skip']]);
  assert.match(p.clusters[0]!.message, /^NoLongerTargeted: .*: its ManifestWork is deleted$/);
  assert.match(p.clusters[1]!.message, /^Overridden: AuthPolicy is overridden by \[payments\/local\]: its copy is withdrawn$/);
  assert.equal(p.clusters[0]!.desired, undefined);
  assert.equal(copyRevision(p.clusters[0]!.current), 1);
});

test('a cluster that left the placement while OCM cannot vouch for it keeps its work, as the hub keeps it (the deletion rule, said with its reason): nothing is withdrawn there', () => {
  const v1 = policy(1, 'allow = false');
  // spoke-1 has no Available condition: OCM does not vouch for it.
  const snapshot = hub(params(), { decisions: [decision('all', ['spoke-2'])], managedClusters: [cluster('spoke-1'), available('spoke-2', { env: 'canary' })] });
  const p = previewRollout(input(v1, snapshot, placed(v1, ['spoke-1', 'spoke-2'])));
  const spoke1 = p.clusters.find((c) => c.cluster === 'spoke-1')!;
  assert.equal(spoke1.action, 'keep');
  assert.equal(spoke1.stays, true);
  assert.match(spoke1.message, /^no longer targeted there, but its work stays as it is: ClusterUnavailable: cluster spoke-1 is not available/);
});

test('a copy its status says lingers where the policy has no work is shown handed back (mend) once the rule knows it unwanted; one only being removed, or on a cluster in doubt, is not', () => {
  const v1 = policy(1, 'allow = false');
  const left: KubeObject = { ...v1, metadata: { name: 'auth', namespace: NS, annotations: { 'kuadrant.io/policy-synced': `${NS}/auth` }, ownerReferences: [{ apiVersion: 'work.open-cluster-management.io/v1', kind: 'AppliedManifestWork', name: 'h-w', uid: 'a-1' }] } };
  const { report } = buildSpokeReport(new Map([['authpolicies.kuadrant.io', [left]]]), new Date('2026-01-02T00:00:00Z'));
  const snapshot = (managed: KubeObject) => hub(params(), { decisions: [decision('all', ['spoke-2'])], reports: new Map([['spoke-1', report]]), spokeAgents: true, managedClusters: [managed, available('spoke-2', { env: 'canary' })] });
  const lingering = policyStatusAnnotation({
    summary: { clusters: 1, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 1, lingering: 1 },
    clusters: { 'spoke-1': { state: 'Failed', applied: false, available: false, enforced: 'Unknown', reason: 'Lingering', message: 'left', upToDate: false, lingering: [`${NS}/auth`] } },
  });
  const said = policy(1, 'allow = false', { [STATUS_ANNOTATION]: lingering });
  const mended = previewRollout(input(said, snapshot(available('spoke-1')), placed(v1, ['spoke-2'])));
  const spoke1 = mended.clusters.find((c) => c.cluster === 'spoke-1');
  assert.equal(spoke1?.action, 'mend');
  assert.match(spoke1?.message ?? '', /^Lingering: its copy payments\/auth still runs there, .* \(NoLongerTargeted\): handed back to OCM's work agent/);
  // Only being removed (the status does not say Lingering yet): the grace runs, nothing is shown.
  assert.equal(previewRollout(input(v1, snapshot(available('spoke-1')), placed(v1, ['spoke-2']))).clusters.find((c) => c.cluster === 'spoke-1'), undefined);
  // OCM cannot vouch for spoke-1: kept, nothing is shown handed back.
  assert.equal(previewRollout(input(said, snapshot(cluster('spoke-1')), placed(v1, ['spoke-2']))).clusters.find((c) => c.cluster === 'spoke-1'), undefined);
});

test('targets: a Gateway of a class that does not sync the kind is reported; no cluster is reached', () => {
  const other = params({ policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'ratelimitpolicies' }] });
  const p = previewRollout(input(policy(1, 'allow = false'), hub(other)));
  assert.deepEqual(p.clusters, []);
  assert.deepEqual(p.targets.map((t) => (t.state === 'rejected' ? t.reason : t.state)), ['KindNotSynced']);
});

test('placement: without trusted labels, only clusters of sets bound to the namespace count; the others are refused', () => {
  const set: KubeObject = { apiVersion: 'cluster.open-cluster-management.io/v1beta2', kind: 'ManagedClusterSet', metadata: { name: 'fleet' }, spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } } };
  const binding: KubeObject = {
    apiVersion: 'cluster.open-cluster-management.io/v1beta2',
    kind: 'ManagedClusterSetBinding',
    metadata: { name: 'fleet', namespace: NS },
    spec: { clusterSet: 'fleet' },
    status: { conditions: [{ type: 'Bound', status: 'True' }] },
  };
  const placement: KubeObject = { apiVersion: 'cluster.open-cluster-management.io/v1beta1', kind: 'Placement', metadata: { name: 'all', namespace: NS, uid: 'pl-1' } };
  const owned = { ...decision('all', ['spoke-1', 'spoke-2']), metadata: { ...decision('all', []).metadata, ownerReferences: [{ apiVersion: 'cluster.open-cluster-management.io/v1beta1', kind: 'Placement', name: 'all', uid: 'pl-1', controller: true }] } };
  const snapshot = hub(params(), {
    trustDecisionLabels: false,
    placements: [placement],
    decisions: [owned],
    clusterSets: [set],
    bindings: [binding],
    managedClusters: [cluster('spoke-1', { 'cluster.open-cluster-management.io/clusterset': 'fleet' }), cluster('spoke-2')],
  });
  const p = previewRollout(input(policy(1, 'allow = false'), snapshot));
  assert.deepEqual(summary(p).map(([c]) => c), ['spoke-1']);
  assert.equal(p.problems[0]?.reason, 'PlacementRefused');
  assert.match(p.problems[0].message, /spoke-2 is in no ManagedClusterSet bound to namespace payments/);
});

test('a halt the hub reported on the policy stands in the preview of that revision, not of a new edit', () => {
  const v1 = policy(1, 'allow = false');
  const v2 = policy(2, 'allow = true');
  const [w1a] = placed(v1, ['spoke-1']);
  const [w2b] = placed(v2, ['spoke-2']);
  const halt = { cluster: 'spoke-2', reason: 'TargetNotFound', message: 'gateway not found' };
  const reported = { strategy: 'Progressive' as const, revision: 2, state: 'Halted' as const, wave: 1, waves: 2, halted: { ...halt, rolledBack: false }, message: 'halted' };
  // The hub's status on the policy (its annotation stays whatever an edit says) records the halt.
  const withStatus = (p: KubeObject): KubeObject => ({
    ...p,
    metadata: { ...p.metadata, annotations: { ...p.metadata.annotations, [STATUS_ANNOTATION]: policyStatusAnnotation({ summary: { clusters: 2, applied: 2, enforced: 1, overridden: 0, pending: 0, failed: 1 }, rollout: reported }) } },
  });
  const same = previewRollout(input(withStatus(v2), hub(PROGRESSIVE), [w1a!, w2b!]));
  assert.equal(same.rollout.state, 'Halted');
  assert.deepEqual(same.rollout.halted && { cluster: same.rollout.halted.cluster, reason: same.rollout.halted.reason }, { cluster: 'spoke-2', reason: 'TargetNotFound' });
  assert.deepEqual(summary(same).map(([c, a]) => [c, a]), [['spoke-2', 'unchanged'], ['spoke-1', 'keep']]);
  const next = previewRollout(input(withStatus(policy(3, 'allow = maybe')), hub(PROGRESSIVE), [w1a!, w2b!]));
  assert.equal(next.rollout.state, 'Progressing');
  assert.deepEqual(summary(next).map(([c, a]) => [c, a]), [['spoke-2', 'write'], ['spoke-1', 'keep']]);
});

test("tenant lanes as the hub decides them: where a newer tenant's works hold the shared downstream Gateway, the older one's policy is not placed", () => {
  const shared = params({ downstreamNamespace: 'gateways' });
  const theirs: KubeObject = {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'team-b', creationTimestamp: '2026-06-01T00:00:00Z', labels: { [PLACEMENT_LABEL]: 'b' } },
    spec: { gatewayClassName: 'sync' },
  };
  const theirDecision: KubeObject = { ...decision('b', ['spoke-1']), metadata: { name: 'b-1', namespace: 'team-b', labels: { [PLACEMENT_LABEL]: 'b' } } };
  const theirPolicy: KubeObject = { ...policy(1, 'allow = true'), metadata: { ...policy(1, 'allow = true').metadata, namespace: 'team-b', uid: 'u-b' } };
  const theirWorks = desiredWorksForPolicy({
    gvr: GVR,
    policy: theirPolicy,
    gateways: () => ({ managed: true, downstreamNamespaceTemplate: 'gateways', clusters: ['spoke-1'], kindAllowed: true }),
    rawFeedback: false,
    statusFeedback: [],
    maxWorkBytes: 500 * 1024,
    controller: CONTROLLER,
  }).works;
  const snapshot = (works?: KubeObject[]): HubSnapshot =>
    hub(shared, { gateways: [gateway('gw', 'sync', 'all'), theirs], decisions: [decision('all', ['spoke-1', 'spoke-2']), theirDecision], ...(works ? { works } : {}) });
  // No works hold the lane: the older Gateway (ours, payments/gw) takes spoke-1.
  assert.deepEqual(summary(previewRollout(input(policy(1, 'allow = false'), snapshot()))).map(([c]) => c), ['spoke-1', 'spoke-2']);
  // team-b's works hold it there: ours is refused on spoke-1 only, and told why.
  const p = previewRollout(input(policy(1, 'allow = false'), snapshot([...theirWorks.values()])));
  assert.deepEqual(summary(p).map(([c, a]) => [c, a]), [['spoke-2', 'write'], ['spoke-1', 'skip']]);
  assert.match(p.clusters[1]!.message, /^DownstreamGatewayConflict: .*team-b\/gw/);
  const lane = p.problems.find((x) => x.reason === 'DownstreamGatewayConflict');
  assert.match(lane?.message ?? '', /team-b\/gw \(its policies' copies are there already\) keeps it, the policies of payments\/gw are not placed there/);
});

test("a label and an annotation removed from the policy: the preview's copies name them as dropped exactly as the hub's desired works do, and an unchanged world previews unchanged", () => {
  const labelled = (generation: number, extra: Record<string, string>): KubeObject => {
    const p = policy(generation, 'allow = false');
    return { ...p, metadata: { ...p.metadata, labels: extra, annotations: { 'example.com/note': 'x' } } };
  };
  const v1 = labelled(1, { team: 'payments' });
  const bare = policy(1, 'allow = false');
  const sent = placed(v1, ['spoke-1', 'spoke-2']);
  // What the hub wants for the edited policy, from the same core: its copies measured against what its works place.
  const hubDesired = desiredWorksForPolicy({
    gvr: GVR,
    policy: bare,
    gateways: () => ({ managed: true, downstreamNamespaceTemplate: '{namespace}', clusters: ['spoke-1', 'spoke-2'], kindAllowed: true }),
    rawFeedback: false,
    statusFeedback: [],
    maxWorkBytes: 500 * 1024,
    controller: CONTROLLER,
    updateStrategy: 'Update',
    sentCopy: (cluster) => workCopy(sent.find((w) => w.metadata.namespace === cluster)),
  }).works;
  const hubCopy = workCopy(hubDesired.get('spoke-1'));
  assert.equal(hubCopy?.metadata.annotations?.['policysync.kuadrant.io/dropped-keys'], '{"annotations":["example.com/note"],"labels":["team"]}');
  const p = previewRollout(input(bare, hub(params()), sent));
  assert.deepEqual(summary(p), [['spoke-1', 'write', undefined], ['spoke-2', 'write', undefined]]);
  for (const c of p.clusters) assert.deepEqual(c.desired, workCopy(hubDesired.get(c.cluster)));
  // Once the hub wrote them: nothing more to write, the dropped keys still named (stable).
  const again = previewRollout(input(bare, hub(params()), [...hubDesired.values()]));
  assert.deepEqual(summary(again), [['spoke-1', 'unchanged', undefined], ['spoke-2', 'unchanged', undefined]]);
  // A kind applied by ServerSideApply (no status subresource): nothing named, the apiserver removes them itself.
  const ssa = previewRollout(input(bare, hub(params(), { kinds: new Map([['authpolicies.kuadrant.io', { statusSubresource: false }]]) }), sent));
  assert.equal(ssa.clusters[0]?.desired?.metadata.annotations?.['policysync.kuadrant.io/dropped-keys'], undefined);
});

test('spoke agents: as the hub, a first copy waits for a report that vouches for its name; a placed copy is not held; no-agent mode places', () => {
  const v1 = policy(1, 'allow = false');
  const { report } = buildSpokeReport(new Map([['authpolicies.kuadrant.io', []]]), new Date('2026-01-02T00:00:00Z'));
  const withAgents = hub(params(), { spokeAgents: true, reports: new Map([['spoke-1', report]]) });
  const first = previewRollout(input(v1, withAgents));
  assert.deepEqual(summary(first).map(([c, a]) => [c, a]), [['spoke-1', 'write'], ['spoke-2', 'skip']]);
  assert.match(first.clusters[1]!.message, /^AwaitingSpokeReport: no report from the spoke agent yet; AuthPolicy payments\/\S+ is placed once a fresh report shows the name free there$/);
  // A cluster whose work already places the copy takes the edit: it is this policy's copy there already.
  const edit = previewRollout(input(policy(2, 'allow = true'), withAgents, placed(v1, ['spoke-1', 'spoke-2'])));
  assert.deepEqual(summary(edit).map(([c, a]) => [c, a]), [['spoke-1', 'write'], ['spoke-2', 'write']]);
  // No spoke configuration placed: no agent will ever report, and nothing waits.
  assert.deepEqual(summary(previewRollout(input(v1, hub(params())))).map(([c, a]) => [c, a]), [['spoke-1', 'write'], ['spoke-2', 'write']]);
});

// PolicyVariants: the preview renders each cluster's copy with them, as the hub does (core/pipeline).
const VARIANT_SCHEMA = policySchema({
  type: 'object',
  properties: {
    targetRef: { type: 'object', properties: { group: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' } } },
    rules: { type: 'object', properties: { authorization: { type: 'object', properties: { deny: { type: 'object', properties: { opa: { type: 'object', properties: { rego: { type: 'string' } } } } } } } } },
  },
});

function regoVariant(generation: number, entries: unknown[]): KubeObject {
  return {
    apiVersion: 'policysync.kuadrant.io/v1alpha1',
    kind: 'PolicyVariant',
    metadata: { namespace: NS, name: 'rego', generation },
    spec: { targetRef: { group: 'kuadrant.io', kind: 'AuthPolicy', name: 'auth' }, entries },
  };
}

const fromLabel = (key: string): unknown[] => [{ values: [{ path: 'spec.rules.authorization.deny.opa.rego', valueFrom: { clusterLabel: { key } } }] }];

test('a variant edit: only the clusters whose copy changes are written; a cluster whose copy cannot render is skipped with the reason and keeps the copy it runs (no diff, never a removal)', () => {
  const v1 = policy(1, 'allow = false');
  const clusters = [cluster('spoke-1', { rego: 'allow = true' }), cluster('spoke-2', { env: 'canary', rego: 'allow = false' })];
  const kinds = new Map([['authpolicies.kuadrant.io', { statusSubresource: true, schema: VARIANT_SCHEMA }]]);
  // What runs: the variant at generation 1 read label `rego` on both clusters.
  const works = [...decidePolicy(new SnapshotView(hub(params(), { managedClusters: clusters, kinds, variants: [regoVariant(1, fromLabel('rego'))] })), input(v1, hub(params()))).desired.works.values()];
  assert.equal(works.length, 2);
  // Still the same: nothing to write.
  const same = previewRollout(input(v1, hub(params(), { managedClusters: clusters, kinds, variants: [regoVariant(1, fromLabel('rego'))] }), works));
  assert.deepEqual(same.clusters.map((c) => [c.cluster, c.action]), [['spoke-1', 'unchanged'], ['spoke-2', 'unchanged']]);

  // Edited to read `other`, which spoke-1 has and spoke-2 lacks: spoke-1 is written, spoke-2 skipped as it runs.
  const edited = [cluster('spoke-1', { rego: 'allow = true', other: 'allow = false' }), clusters[1]!];
  const p = previewRollout(input(v1, hub(params(), { managedClusters: edited, kinds, variants: [regoVariant(2, fromLabel('other'))] }), works));
  assert.deepEqual(p.clusters.map((c) => [c.cluster, c.action]), [['spoke-1', 'write'], ['spoke-2', 'skip']]);
  assert.equal(p.clusters[0]!.desired?.metadata.annotations?.['policysync.kuadrant.io/variants'], 'rego@2');
  const skipped = p.clusters[1]!;
  assert.match(skipped.message, /^VariantValueMissing: variant rego entry 0 \(spec\.rules\.authorization\.deny\.opa\.rego\): label other is not set on cluster spoke-2 and the value has no default \(nothing is written: the copy it runs stays\)$/);
  assert.equal(skipped.stays, true);
  assert.equal(skipped.desired, undefined);
  assert.ok(skipped.current, 'the copy it runs is shown');
});

test('a variant failing on a cluster with no copy yet: skipped, no copy placed until it renders', () => {
  const kinds = new Map([['authpolicies.kuadrant.io', { statusSubresource: true, schema: VARIANT_SCHEMA }]]);
  const p = previewRollout(input(policy(1, 'allow = false'), hub(params(), { kinds, variants: [regoVariant(1, fromLabel('rego'))] })));
  assert.deepEqual(p.clusters.map((c) => [c.cluster, c.action]), [['spoke-1', 'skip'], ['spoke-2', 'skip']]);
  assert.match(p.clusters[0]!.message, /\(no copy is placed until it renders\)$/);
});

test('a variant edit under Progressive: the clusters whose copy changes, in the policy\'s waves (the canary first); the same generation of the policy', () => {
  const v1 = policy(1, 'allow = false');
  const clusters = [cluster('spoke-1', { rego: 'allow = true', other: 'allow = 1' }), cluster('spoke-2', { env: 'canary', rego: 'allow = true', other: 'allow = 2' })];
  const kinds = new Map([['authpolicies.kuadrant.io', { statusSubresource: true, schema: VARIANT_SCHEMA }]]);
  const complete = { [STATUS_ANNOTATION]: policyStatusAnnotation({ summary: { clusters: 2, applied: 2, enforced: 2, overridden: 0, pending: 0, failed: 0 }, rollout: { strategy: 'Progressive', revision: 1, state: 'Complete', message: '' } }) };
  const running = [...decidePolicy(new SnapshotView(hub(params(), { managedClusters: clusters, kinds, variants: [regoVariant(1, fromLabel('rego'))] })), input(v1, hub(params()))).desired.works.values()];
  const p = previewRollout(input(policy(1, 'allow = false', complete), hub(PROGRESSIVE, { managedClusters: clusters, kinds, variants: [regoVariant(2, fromLabel('other'))] }), running));
  assert.equal(p.revision, 1);
  assert.deepEqual(p.waves, [['spoke-2'], ['spoke-1']]);
  assert.deepEqual(summary(p), [['spoke-2', 'write', 1], ['spoke-1', 'keep', 2]]);
  assert.equal((p.clusters[0]!.desired?.spec as { rules: { authorization: { deny: { opa: { rego: string } } } } }).rules.authorization.deny.opa.rego, 'allow = 2');
  assert.equal(p.clusters[1]!.current?.metadata.annotations?.['policysync.kuadrant.io/variants'], 'rego@1', 'spoke-1 keeps the copy of the variant it runs until its wave');
});
