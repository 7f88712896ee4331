import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../k8s/objects.ts';
import { PLACEMENT_LABEL, clustersFromDecisions, ownedDecisions, placedClusters, placementState } from './placement.ts';

function decision(name: string, status: unknown): KubeObject {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1beta1',
    kind: 'PlacementDecision',
    metadata: { name, namespace: 'ns', labels: { [PLACEMENT_LABEL]: 'pl' } },
    status,
  };
}

test('clustersFromDecisions unions clusterName over all decisions, sorted and deduplicated', () => {
  const decisions = [
    decision('pl-decision-1', { decisions: [{ clusterName: 'c3', reason: '' }, { clusterName: 'c1', reason: '' }] }),
    decision('pl-decision-2', { decisions: [{ clusterName: 'c2' }, { clusterName: 'c1' }] }),
  ];
  assert.deepEqual(clustersFromDecisions(decisions), ['c1', 'c2', 'c3']);
});

test('clustersFromDecisions skips empty names and decisions without status', () => {
  const decisions = [
    decision('a', undefined),
    decision('b', {}),
    decision('c', { decisions: [{ clusterName: '' }, {}, null, { clusterName: 7 }, { clusterName: 'c1' }] }),
  ];
  assert.deepEqual(clustersFromDecisions(decisions), ['c1']);
  assert.deepEqual(clustersFromDecisions([]), []);
});

function owned(d: KubeObject): KubeObject {
  return { ...d, metadata: { ...d.metadata, ownerReferences: [{ apiVersion: 'cluster.open-cluster-management.io/v1beta1', kind: 'Placement', name: 'pl', uid: 'u1', controller: true }] } };
}

function placement(selected: number, groups: string[][] = [['pl-decision-1']], deleting = false): KubeObject {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1beta1',
    kind: 'Placement',
    metadata: { name: 'pl', namespace: 'ns', uid: 'u1', ...(deleting ? { deletionTimestamp: '2026-11-25T05:00:00Z' } : {}) },
    status: { numberOfSelectedClusters: selected, decisionGroups: groups.map((decisions, i) => ({ decisionGroupIndex: i, decisions, clustersCount: 0 })) },
  };
}

const entries = (...clusters: string[]) => ({ decisions: clusters.map((clusterName) => ({ clusterName, reason: '' })) });

test('a Placement whose decisions hold what its status says it selected is settled', () => {
  assert.deepEqual(placementState('ns/pl', placement(2), [owned(decision('pl-decision-1', entries('c1', 'c2')))]), { state: 'settled' });
  // Decision groups over two PlacementDecisions.
  const split = [owned(decision('pl-decision-1', entries('c1'))), owned(decision('pl-decision-2', entries('c2')))];
  assert.deepEqual(placementState('ns/pl', placement(2, [['pl-decision-1'], ['pl-decision-2']]), split), { state: 'settled' });
});

test('decisions being rewritten (a cluster moved between PlacementDecisions, a decision not cached yet) are not settled', () => {
  // OCM wrote decision-1 without c2 and has not written decision-2 yet: 1 held of 2 selected.
  const moving = placementState('ns/pl', placement(2, [['pl-decision-1'], ['pl-decision-2']]), [owned(decision('pl-decision-1', entries('c1')))]);
  assert.deepEqual(moving, { state: 'unsettled', reason: 'DecisionsUpdating', message: 'Placement ns/pl selected 2 clusters, its PlacementDecisions hold 1' });
  const unseen = placementState('ns/pl', placement(1, [['pl-decision-1', 'pl-decision-2']]), [owned(decision('pl-decision-1', entries('c1')))]);
  assert.deepEqual(unseen, { state: 'unsettled', reason: 'DecisionsUpdating', message: 'Placement ns/pl names PlacementDecisions not seen yet: pl-decision-2' });
});

test('a Placement deleted (its decisions left to the garbage collector, or gone) or being deleted is not settled', () => {
  assert.equal(placementState('ns/pl', undefined, [owned(decision('pl-decision-1', entries('c1')))]).state, 'unsettled');
  assert.equal(placementState('ns/pl', undefined, []).state, 'unsettled');
  assert.equal(placementState('ns/pl', placement(1, [['pl-decision-1']], true), [owned(decision('pl-decision-1', entries('c1')))]).state, 'unsettled');
  // Created again, not decided yet: no status, no decisions.
  const fresh: KubeObject = { ...placement(0), status: undefined };
  assert.deepEqual(placementState('ns/pl', fresh, []), { state: 'unsettled', reason: 'DecisionsUpdating', message: 'Placement ns/pl has not decided yet' });
});

test('PlacementDecisions written on their own (no Placement owns them) are taken as they are', () => {
  assert.deepEqual(placementState('ns/pl', undefined, [decision('pl-decision-1', entries('c1'))]), { state: 'settled' });
});

test('ownedDecisions: only the decisions whose owner reference names the Placement by uid', () => {
  const forged = decision('pl-forged', entries('c9'));
  const stale = { ...decision('pl-old', entries('c1')), metadata: { ...decision('pl-old', {}).metadata, ownerReferences: [{ kind: 'Placement', name: 'pl', uid: 'old-uid' }] } };
  const mine = owned(decision('pl-decision-1', entries('c1')));
  assert.deepEqual(ownedDecisions(placement(1), [forged, stale, mine]).map((d) => d.metadata.name), ['pl-decision-1']);
  assert.deepEqual(ownedDecisions(undefined, [mine]), []);
});

test('placedClusters: by label alone when trusted; otherwise owned decisions and bound clusters only, the rest said', () => {
  const mine = owned(decision('pl-decision-1', entries('c1', 'c2')));
  const forged = decision('pl-forged', entries('c9'));
  const bind = (clusters: readonly string[]) => ({ allowed: clusters.filter((c) => c !== 'c2'), refused: clusters.filter((c) => c === 'c2').map((cluster) => ({ cluster, message: `cluster ${cluster} is in no ManagedClusterSet bound to namespace ns` })) });
  const trusted = placedClusters({ placementKey: 'ns/pl', placement: placement(2), decisions: [mine, forged], trustDecisionLabels: true, bind });
  assert.deepEqual(trusted.clusters, ['c1', 'c2', 'c9']);
  const strict = placedClusters({ placementKey: 'ns/pl', placement: placement(2), decisions: [mine, forged], trustDecisionLabels: false, bind });
  assert.deepEqual(strict.clusters, ['c1']);
  assert.deepEqual(strict.refused, [
    { message: 'PlacementDecision ns/pl-forged is not owned by Placement ns/pl: its decisions do not count' },
    { cluster: 'c2', message: 'cluster c2 is in no ManagedClusterSet bound to namespace ns' },
  ]);
  // OCM decides c2 but the bindings do not allow it: no new copy there, and what runs there is kept.
  assert.deepEqual(strict.state, { state: 'unsettled', reason: 'ClustersRefused', message: 'Placement ns/pl decides clusters its namespace is not bound to: c2' });
  const bound = placedClusters({ placementKey: 'ns/pl', placement: placement(2), decisions: [mine], trustDecisionLabels: false, bind: (clusters) => ({ allowed: [...clusters], refused: [] }) });
  assert.deepEqual(bound.state, { state: 'settled' }, 'the owned decisions hold what the Placement selected');
  // No Placement at all: a forged decision places nothing.
  assert.deepEqual(placedClusters({ placementKey: 'ns/pl', placement: undefined, decisions: [forged], trustDecisionLabels: false, bind }).clusters, []);
});
