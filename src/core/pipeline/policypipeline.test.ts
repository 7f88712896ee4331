// The decision pipeline's own rules, over a SnapshotView (the hub's caches answer alike: cachedhubview.ts). The
// decisions it gathers are tested where they are made (core/works, core/spoke, core/rollout) and, through the
// preview, in core/pipeline/preview.test.ts; the hub and `diff` agreeing is test/e2e/diff-drift.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PLACEMENT_LABEL } from '../fleet/placement.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { REAPPLY_LABEL, ROLLOUT_STRATEGY_ANNOTATION, WITHDRAWN_BY_ANNOTATION } from '../metadatakeys.ts';
import { LINGER_GRACE_MS, lingerKey } from '../spoke/spoketruth.ts';
import { parseParams, type SyncParams } from '../params/params.ts';
import { ALL, toRolloutStrategy, type RolloutStrategy } from '../params/strategy.ts';
import { controllerLabelValue } from '../works/manifestwork.ts';
import { decidePolicy, strategyFor } from './policypipeline.ts';
import { SnapshotView, type HubSnapshot } from './snapshotview.ts';

const WIDGETS = { group: 'example.com', version: 'v1', resource: 'widgetpolicies' };
const UNGATED = { apiVersion: 'example.com/v1', kind: 'WidgetPolicy', name: 'widgetpolicies.v1.example.com' };

function params(rolloutStrategy?: RolloutStrategy): SyncParams {
  const parsed = parseParams({ policiesToSync: [WIDGETS] });
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  return { ...parsed.params, ...(rolloutStrategy ? { rolloutStrategy } : {}) };
}

function snapshot(classParams: SyncParams, extra: Partial<HubSnapshot> = {}): HubSnapshot {
  return {
    classes: new Map([['gc', classParams]]),
    gateways: [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { namespace: 'ns', name: 'gw', labels: { [PLACEMENT_LABEL]: 'all' } }, spec: { gatewayClassName: 'gc' } }],
    placements: [],
    decisions: [{ apiVersion: 'cluster.open-cluster-management.io/v1beta1', kind: 'PlacementDecision', metadata: { namespace: 'ns', name: 'all-1', labels: { [PLACEMENT_LABEL]: 'all' } }, status: { decisions: [{ clusterName: 'c1', reason: '' }] } }],
    managedClusters: [{ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name: 'c1' } }],
    clusterSets: [],
    bindings: [],
    trustDecisionLabels: true,
    reports: new Map(),
    ...extra,
  };
}

function widget(annotation?: string, apiVersion = 'example.com/v1'): KubeObject {
  return {
    apiVersion,
    kind: 'WidgetPolicy',
    metadata: { namespace: 'ns', name: 'w', generation: 2, ...(annotation === undefined ? {} : { annotations: { [ROLLOUT_STRATEGY_ANNOTATION]: annotation } }) },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' } },
  };
}

test('strategyFor: a policy whose annotation selects Progressive for a kind its controller cannot be gated on gets a problem naming the kind; the strategy stands', () => {
  const view = new SnapshotView(snapshot(params(ALL), { ungatedKinds: [UNGATED] }));
  for (const annotation of ['Progressive', '{"type":"Progressive","progressive":{"maxConcurrency":"1"}}']) {
    const { strategy, problem } = strategyFor(view, widget(annotation), ['gc']);
    assert.equal(strategy.type, 'Progressive', annotation);
    assert.equal(problem?.reason, 'NoObservedGeneration', annotation);
    assert.match(problem?.message ?? '', /^policysync\.kuadrant\.io\/rollout-strategy selects Progressive, but no cluster can succeed for widgetpolicies\.v1\.example\.com: its CRD has no status\.observedGeneration, /, annotation);
  }
  // All by annotation, no annotation (the class's own strategy: the class says so), another version of the kind: no problem.
  assert.deepEqual(strategyFor(view, widget('All'), ['gc']), { strategy: ALL });
  assert.deepEqual(strategyFor(view, widget(), ['gc']), { strategy: ALL });
  assert.equal(strategyFor(view, widget('Progressive', 'example.com/v2'), ['gc']).problem, undefined);
  // The kind fixed: nothing named.
  assert.equal(strategyFor(new SnapshotView(snapshot(params(ALL))), widget('Progressive'), ['gc']).problem, undefined);
});

test('strategyFor: the class rolling out Progressive itself gives the policy no problem of this kind (the class names it); an invalid annotation is one', () => {
  const progressive = toRolloutStrategy({ type: 'Progressive' });
  const view = new SnapshotView(snapshot(params(progressive), { ungatedKinds: [UNGATED] }));
  assert.deepEqual(strategyFor(view, widget(), ['gc']), { strategy: progressive });
  const bad = strategyFor(view, widget('Sometimes'), ['gc']);
  assert.equal(bad.problem?.reason, 'InvalidRolloutStrategy');
  assert.deepEqual(bad.strategy, progressive, 'the class default stays in force');
});

test('decidePolicy: the copy is applied as the kind allows (Update with the status subresource, else ServerSideApply), with the CRD uid in its source-ref', () => {
  const decide = (kinds?: HubSnapshot['kinds']) =>
    decidePolicy(new SnapshotView(snapshot(params(), kinds ? { kinds } : {})), { gvr: WIDGETS, policy: widget(), observed: [], controller: controllerLabelValue('c'), rawFeedback: false, maxWorkBytes: 1 << 20, now: 0 });
  const strategyOf = (d: ReturnType<typeof decide>): unknown => d.desired.works.get('c1')?.spec.manifestConfigs[0]?.updateStrategy?.type;
  assert.equal(strategyOf(decide()), 'Update');
  const ssa = decide(new Map([['widgetpolicies.example.com', { statusSubresource: false, crdUid: 'crd-1' }]]));
  assert.equal(strategyOf(ssa), 'ServerSideApply');
  assert.match(ssa.desired.works.get('c1')?.metadata.annotations['policysync.kuadrant.io/source-ref'] ?? '', /"crdUid":"crd-1"/);
});

test('decidePolicy: with spoke agents a first copy waits for a report (AwaitingSpokeReport) and is kept out of the works and the retained set; no-agent mode places it', () => {
  const input = { gvr: WIDGETS, policy: widget(), observed: [], controller: controllerLabelValue('c'), rawFeedback: false, maxWorkBytes: 1 << 20, now: 0 };
  const withAgents = decidePolicy(new SnapshotView(snapshot(params(), { spokeAgents: true })), input);
  assert.deepEqual(withAgents.awaiting.map((a) => a.cluster), ['c1']);
  assert.deepEqual([...withAgents.desired.works.keys()], []);
  assert.deepEqual([...withAgents.revisionWorks.keys()], []);
  const noAgent = decidePolicy(new SnapshotView(snapshot(params())), input);
  assert.deepEqual(noAgent.awaiting, []);
  assert.deepEqual([...noAgent.desired.works.keys()], ['c1']);
});

test('decidePolicy: a kind listed in params but not served is not in force: its targets report the kind not synced, no work', () => {
  const d = decidePolicy(new SnapshotView(snapshot(params(), { servedKinds: new Set() })), { gvr: WIDGETS, policy: widget(), observed: [], controller: controllerLabelValue('c'), rawFeedback: false, maxWorkBytes: 1 << 20, now: 0 });
  assert.deepEqual([...d.desired.works.keys()], []);
  assert.equal(d.desired.targets[0]?.state, 'rejected');
});

test('decidePolicy: a copy reported where no work of the policy places it lingers only for a policy of this controller (an owned class targeted, or a work of ours); another controller\'s policy has none', () => {
  const report = { version: 4 as const, heartbeat: '2026-12-02T00:00:00Z', objects: { 'widgetpolicies.example.com': { ns: [{ name: 'w', synced: 'ns/w' }] } } };
  const input = { gvr: WIDGETS, policy: widget(), observed: [], controller: controllerLabelValue('c'), rawFeedback: false, maxWorkBytes: 1 << 20, now: 1_000 };
  // spoke-9 is no cluster of the policy's Gateway: its copy runs where the hub places none.
  const ownedView = new SnapshotView(snapshot(params(), { spokeAgents: true, reports: new Map([['spoke-9', report]]) }));
  assert.deepEqual(decidePolicy(ownedView, input).truth.lingering.map((l) => [l.cluster, l.name, l.seenSince]), [['spoke-9', 'w', 1_000]]);
  // The Gateway's class is not ours (no params in force here): nothing of it is this hub's to call lingering.
  const foreign = snapshot(params(), { spokeAgents: true, reports: new Map([['spoke-9', report]]) });
  const notOurs = new SnapshotView({ ...foreign, classes: new Map() });
  assert.deepEqual(decidePolicy(notOurs, input).truth.lingering, []);
});

test('decidePolicy: a policy this controller withdrew (its mark) has its left copies witnessed and handed to the deletion rule while it targets no other controller\'s Gateway; another mark, no agents, or another controller\'s Gateway: none', () => {
  const report = { version: 4 as const, heartbeat: '2026-12-02T00:00:00Z', objects: { 'widgetpolicies.example.com': { ns: [{ name: 'w', synced: 'ns/w' }] } } };
  const ours = controllerLabelValue('c');
  const marked = (by: string, gateway = 'gone'): KubeObject => ({ ...widget(), metadata: { ...widget().metadata, annotations: { [WITHDRAWN_BY_ANNOTATION]: by } }, spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: gateway } } });
  // Seen lingering past the grace: the deletion rule has its word on it.
  const now = Date.parse('2026-12-02T00:00:00Z');
  const lingerSeen = new Map([[lingerKey('c1', 'widgetpolicies.example.com', 'ns', 'w'), now - LINGER_GRACE_MS - 1]]);
  const input = (policy: KubeObject) => ({ gvr: WIDGETS, policy, observed: [], controller: ours, rawFeedback: false, maxWorkBytes: 1 << 20, lingerSeen, now });
  // c1 available, as OCM judges it: its standing is no doubt.
  const available = { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name: 'c1' }, status: { conditions: [{ type: 'ManagedClusterConditionAvailable', status: 'True', lastTransitionTime: '2026-12-01T00:00:00Z' }] } };
  const view = new SnapshotView(snapshot(params(), { spokeAgents: true, reports: new Map([['c1', report]]), managedClusters: [available] }));
  // Its Gateway deleted (it names one the hub does not have): nothing targeted, nothing placed — and still witnessed.
  const withdrawn = decidePolicy(view, input(marked(ours)));
  assert.equal(withdrawn.truth.withdrawn, true);
  assert.deepEqual([...withdrawn.desired.works.keys()], []);
  assert.deepEqual(withdrawn.truth.lingering.map((l) => [l.cluster, l.lingering]), [['c1', true]]);
  assert.deepEqual(withdrawn.removals.lingering.map((l) => [l.copy.cluster, l.decision.action]), [['c1', 'delete']], 'the policy no longer targets c1: knowledge, not doubt');
  // Without the mark (or with another controller's) the policy is nobody's here: nothing of it is called lingering.
  for (const policy of [widget(), marked(controllerLabelValue('other'))]) {
    const none = { ...input(policy), policy: { ...policy, spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gone' } } } };
    assert.deepEqual(decidePolicy(view, none).truth.lingering, [], JSON.stringify(policy.metadata.annotations));
    assert.notEqual(decidePolicy(view, none).truth.withdrawn, true);
  }
  // No spoke agents: no witness, no mark honoured.
  assert.deepEqual(decidePolicy(new SnapshotView(snapshot(params(), { reports: new Map([['c1', report]]) })), input(marked(ours))).truth.lingering, []);
  // Retargeted to a Gateway of a class another controller owns (it exists, it is not ours): that controller's business.
  const foreign: KubeObject = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { namespace: 'ns', name: 'theirs' }, spec: { gatewayClassName: 'their-class' } };
  const shared = new SnapshotView(snapshot(params(), { spokeAgents: true, reports: new Map([['c1', report]]), gateways: [...snapshot(params()).gateways, foreign], classNames: new Set(['gc', 'their-class']) }));
  const retargeted = decidePolicy(shared, input(marked(ours, 'theirs')));
  assert.deepEqual(retargeted.truth.lingering, []);
  assert.notEqual(retargeted.truth.withdrawn, true);
});

test('decidePolicy: a drifted copy is put back by relabelling its work only where the work is otherwise the one in place; a new revision written now overwrites the drift itself, unlabelled', () => {
  const clean = { version: 4 as const, heartbeat: '2026-12-02T00:00:00Z', objects: { 'widgetpolicies.example.com': { ns: [{ name: 'w', synced: 'ns/w' }] } } };
  const drift = { fields: ['spec.extra'], managers: [{ manager: 'kubectl-edit', operation: 'Update', time: '2026-12-02T00:00:01Z' }], since: '2026-12-02T00:00:01Z' };
  const drifted = { ...clean, objects: { 'widgetpolicies.example.com': { ns: [{ name: 'w', synced: 'ns/w', drift }] } } };
  const viewOf = (report: typeof clean) => new SnapshotView(snapshot(params(), { spokeAgents: true, reports: new Map([['c1', report]]) }));
  const input = (policy: KubeObject, observed: KubeObject[]) => ({ gvr: WIDGETS, policy, observed, controller: controllerLabelValue('c'), rawFeedback: false, maxWorkBytes: 1 << 20, now: 0 });
  const placed = decidePolicy(viewOf(clean), input(widget(), [])).desired.works.get('c1');
  assert.ok(placed, 'the copy placed on c1');
  const labelOf = (d: ReturnType<typeof decidePolicy>) => d.desired.works.get('c1')?.metadata.labels[REAPPLY_LABEL];
  assert.equal(labelOf(decidePolicy(viewOf(drifted), input(widget(), [placed]))) !== undefined, true, 'the same revision: relabelled, the agent applies it again at once');
  const edited: KubeObject = { ...widget(), metadata: { ...widget().metadata, generation: 3 }, spec: { ...widget().spec, extra: 'new' } };
  const revised = decidePolicy(viewOf(drifted), input(edited, [placed]));
  assert.equal(labelOf(revised), undefined, 'a new revision: written as it is');
  assert.notEqual(revised.desired.works.get('c1')?.metadata.annotations['policysync.kuadrant.io/spec-hash'], placed.metadata.annotations['policysync.kuadrant.io/spec-hash']);
});
