import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLUSTER_SET_LABEL, boundSets, clustersBoundTo, setSelects } from './clustersets.ts';
import type { KubeObject } from '../k8s/objects.ts';

const cluster = (name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name, labels } });
const set = (name: string, clusterSelector?: unknown): KubeObject => ({ apiVersion: 'cluster.open-cluster-management.io/v1beta2', kind: 'ManagedClusterSet', metadata: { name }, spec: clusterSelector ? { clusterSelector } : {} });
const binding = (setName: string, bound: string): KubeObject => ({
  apiVersion: 'cluster.open-cluster-management.io/v1beta2',
  kind: 'ManagedClusterSetBinding',
  metadata: { name: setName, namespace: 'team-a' },
  spec: { clusterSet: setName },
  status: { conditions: [{ type: 'Bound', status: bound }] },
});

test('a set selects by its exclusive label (the default) or by a label selector', () => {
  assert.ok(setSelects(set('prod'), cluster('c1', { [CLUSTER_SET_LABEL]: 'prod' })));
  assert.ok(!setSelects(set('prod'), cluster('c1', { [CLUSTER_SET_LABEL]: 'dev' })));
  assert.ok(setSelects(set('global', { selectorType: 'LabelSelector', labelSelector: {} }), cluster('c1')));
  assert.ok(setSelects(set('eu', { selectorType: 'LabelSelector', labelSelector: { matchLabels: { region: 'eu' } } }), cluster('c1', { region: 'eu' })));
});

test('only bindings that are Bound count, and only clusters of bound sets may be placed on', () => {
  assert.deepEqual([...boundSets([binding('prod', 'True'), binding('dev', 'False')])], ['prod']);
  const clusters: Record<string, KubeObject> = { c1: cluster('c1', { [CLUSTER_SET_LABEL]: 'prod' }), c2: cluster('c2', { [CLUSTER_SET_LABEL]: 'other' }) };
  const sets: Record<string, KubeObject> = { prod: set('prod') };
  const result = clustersBoundTo('team-a', ['c1', 'c2', 'c3'], new Set(['prod']), (n) => clusters[n], (n) => sets[n]);
  assert.deepEqual(result, {
    allowed: ['c1'],
    refused: [
      { cluster: 'c2', message: 'cluster c2 is in no ManagedClusterSet bound to namespace team-a (bound: prod)' },
      { cluster: 'c3', message: 'cluster c3 has no ManagedCluster' },
    ],
  });
  // A binding to a set that does not exist binds nothing.
  assert.deepEqual(clustersBoundTo('team-a', ['c1'], new Set(['gone']), (n) => clusters[n], () => undefined).allowed, []);
});
