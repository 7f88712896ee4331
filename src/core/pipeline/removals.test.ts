// The removal stage: the one deletion rule (core/works/removal.ts) asked per observed work and per lingering copy,
// over a SnapshotView (the hub's caches answer alike: src/hub/cachedhubview.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AVAILABLE_CONDITION, RECOVERY_GRACE_MS } from '../fleet/clusterhealth.ts';
import { PLACEMENT_LABEL } from '../fleet/placement.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { workKey } from '../keys.ts';
import { parseParams, type SyncParams } from '../params/params.ts';
import type { LingeringCopy } from '../spoke/spoketruth.ts';
import type { ManifestWork } from '../works/manifestwork.ts';
import { decideRemovals, type RemovalStageInput } from './removals.ts';
import { SnapshotView, type HubSnapshot } from './snapshotview.ts';

const WIDGETS = { group: 'example.com', version: 'v1', resource: 'widgetpolicies' };
const NOW = Date.parse('2026-12-02T06:00:00Z');

function params(): SyncParams {
  const parsed = parseParams({ policiesToSync: [WIDGETS] });
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  return parsed.params;
}

function cluster(name: string, availableSince?: number): KubeObject {
  const conditions = availableSince === undefined ? [] : [{ type: AVAILABLE_CONDITION, status: 'True', lastTransitionTime: new Date(availableSince).toISOString().replace(/\.\d+Z$/, 'Z') }];
  return { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name }, status: { conditions } };
}

function snapshot(extra: Partial<HubSnapshot> = {}): HubSnapshot {
  return {
    classes: new Map([['gc', params()]]),
    gateways: [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { namespace: 'ns', name: 'gw', labels: { [PLACEMENT_LABEL]: 'p' } }, spec: { gatewayClassName: 'gc' } }],
    placements: [],
    // Decisions no Placement owns: taken as they are (settled).
    decisions: [{ apiVersion: 'cluster.open-cluster-management.io/v1beta1', kind: 'PlacementDecision', metadata: { namespace: 'ns', name: 'p-1', labels: { [PLACEMENT_LABEL]: 'p' } }, status: { decisions: [{ clusterName: 'c1', reason: '' }] } }],
    managedClusters: [cluster('c1', 0), cluster('c2', 0), cluster('c3')],
    clusterSets: [],
    bindings: [],
    trustDecisionLabels: true,
    reports: new Map(),
    ...extra,
  };
}

const policy: KubeObject = { apiVersion: 'example.com/v1', kind: 'WidgetPolicy', metadata: { namespace: 'ns', name: 'w' }, spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' } } };

function work(cluster: string): ManifestWork {
  return { apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork', metadata: { namespace: cluster, name: 'w-work' }, spec: { workload: { manifests: [] } } } as unknown as ManifestWork;
}

function input(extra: Partial<RemovalStageInput> = {}): RemovalStageInput {
  return {
    gr: WIDGETS,
    policy,
    observed: [work('c1'), work('c2'), work('c3')],
    desired: new Map([['c1', work('c1')]]),
    retain: new Set(),
    targetClasses: ['gc'],
    overridden: new Map(),
    lingering: [],
    now: NOW,
    ...extra,
  };
}

test('decideRemovals: every observed work neither desired nor retained gets the rule\'s decision; a cluster OCM vouches for goes, one it cannot is kept with its doubt', () => {
  const r = decideRemovals(new SnapshotView(snapshot()), input());
  assert.deepEqual(r.works.map((w) => [w.work, w.decision.action, w.decision.action === 'keep' ? w.decision.reason : w.decision.action === 'delete' ? w.decision.reason : '']), [
    ['c2/w-work', 'delete', 'NoLongerTargeted'],
    ['c3/w-work', 'keep', 'ClusterUnavailable'],
  ]);
  assert.equal(r.works[1]!.doubt?.cluster, 'c3');
  assert.match(r.works[1]!.doubt?.message ?? '', /cluster c3 is not available/);
  assert.equal(r.works[0]!.doubt, undefined);
  // Retained works are not asked about.
  assert.deepEqual(decideRemovals(new SnapshotView(snapshot()), input({ retain: new Set([workKey('c2', 'w-work'), workKey('c3', 'w-work')]) })).works, []);
});

test('decideRemovals: a cluster just back keeps its work through the recovery grace, and says when to decide again', () => {
  const back = NOW - 1_000;
  const r = decideRemovals(new SnapshotView(snapshot({ managedClusters: [cluster('c1', 0), cluster('c2', back), cluster('c3', 0)] })), input());
  const c2 = r.works.find((w) => w.cluster === 'c2')!;
  assert.equal(c2.decision.action, 'keep');
  assert.equal(c2.doubt?.reason, 'ClusterRecovering');
  assert.equal(r.recheckAt, back + RECOVERY_GRACE_MS);
});

test('decideRemovals: local policies covering the copy withdraw it whatever OCM says of the cluster (LocallyOverridden, by whom)', () => {
  const r = decideRemovals(new SnapshotView(snapshot()), input({ overridden: new Map([['c3', 'overridden by [ns/local]']]) }));
  const c3 = r.works.find((w) => w.cluster === 'c3')!;
  assert.deepEqual(c3.decision, { action: 'delete', reason: 'LocallyOverridden' });
  assert.equal(c3.overriddenBy, 'overridden by [ns/local]');
});

test('decideRemovals: an owned class whose params are not known, or a class a Gateway names that does not exist, keeps every work', () => {
  const unknown = decideRemovals(new SnapshotView(snapshot({ classes: new Map(), ownedClasses: ['gc'] })), input());
  assert.deepEqual(unknown.works.map((w) => w.decision.action === 'keep' && w.decision.reason), ['ClassConfigurationUnknown', 'ClassConfigurationUnknown']);
  const absent = decideRemovals(new SnapshotView(snapshot({ classNames: new Set(['other']) })), input());
  assert.deepEqual(absent.works.map((w) => w.decision.action === 'keep' && w.decision.reason), ['ClassAbsent', 'ClassAbsent']);
});

test('decideRemovals: a lingering copy is decided only past its grace and where the policy writes no work; by the same rule', () => {
  const copy = (cluster: string, lingering: boolean): LingeringCopy => ({ cluster, kind: 'widgetpolicies.example.com', namespace: 'ns', name: 'w', seenSince: NOW - 40_000, lingering });
  const r = decideRemovals(new SnapshotView(snapshot()), input({ observed: [work('c1')], lingering: [copy('c1', true), copy('c2', true), copy('c3', true), copy('c4', false)] }));
  assert.deepEqual(r.lingering.map((l) => [l.copy.cluster, l.decision.action]), [['c2', 'delete'], ['c3', 'keep']]);
});
