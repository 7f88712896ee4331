import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from './objects.ts';
import { PLACEMENT_LABEL, clustersFromDecisions } from './placement.ts';

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
