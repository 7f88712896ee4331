// hack/gen-addon.ts, without kubectl: what the AddOnTemplate adds to the rendered deploy/spoke objects, and the
// deletion-order rule for aggregated ClusterRoles it enforces.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DELETION_ORPHAN, LOG_LEVEL_ARG, addonTemplate, checkDeletionOrder } from '../../hack/gen-addon.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';

const aggregated = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'policy-sync-spoke-policies' },
  aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'policysync.kuadrant.io/aggregate-to-spoke': 'true' } }] },
} as KubeObject;
const part = (name: string): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name, labels: { 'policysync.kuadrant.io/aggregate-to-spoke': 'true' } },
});

test('an aggregated ClusterRole must sort before the ClusterRoles it aggregates', () => {
  assert.doesNotThrow(() => checkDeletionOrder([aggregated, part('policy-sync-spoke-policies-kuadrant-authpolicies')]));
  assert.throws(() => checkDeletionOrder([aggregated, part('policy-sync-spoke-kuadrant-authpolicies')]), /does not sort after it/);
  // Roles it does not select are not its parts, whatever their names.
  assert.doesNotThrow(() => checkDeletionOrder([aggregated, { ...part('policy-sync-a'), metadata: { name: 'policy-sync-a' } }]));
});

test('the template orphans the namespace and makes the log level a variable, and changes nothing else', () => {
  const namespace: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'policy-sync-system' } };
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'policy-sync-spoke', namespace: 'policy-sync-system' },
    spec: { template: { spec: { containers: [{ name: 'spoke', image: 'img', args: ['spoke', '--leader-elect'] }] } } },
  } as KubeObject;
  const template = addonTemplate([namespace, deployment]);
  const [ns, dep] = (template.spec as { agentSpec: { workload: { manifests: KubeObject[] } } }).agentSpec.workload.manifests;
  assert.deepEqual(ns?.metadata.annotations, { [DELETION_ORPHAN]: '' });
  assert.deepEqual((dep?.spec as { template: { spec: { containers: { args: string[] }[] } } }).template.spec.containers[0]?.args, ['spoke', '--leader-elect', LOG_LEVEL_ARG]);
  assert.equal(namespace.metadata.annotations, undefined, 'the source objects are not modified');
  assert.throws(() => addonTemplate([{ ...namespace, metadata: { name: '{{X}}' } }]), /variable/);
});
