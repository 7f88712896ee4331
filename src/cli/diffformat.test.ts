// The renderings of `policy-sync diff` (diffformat.ts) and how it reads its file (diffcommand.ts
// parseDocuments). The reading of the hub is covered by test/integration/cli-diff.test.ts against the sandbox.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../core/k8s/objects.ts';
import { parseParams, type SyncParams } from '../core/params/params.ts';
import { decidePolicy } from '../core/pipeline/policypipeline.ts';
import { SnapshotView } from '../core/pipeline/snapshotview.ts';
import { previewRollout, type HubSnapshot } from '../core/pipeline/preview.ts';
import { desiredWorksForPolicy } from '../core/works/desiredworks.ts';
import { CliError } from './common.ts';
import { parseDocuments } from './diffcommand.ts';
import { clusterDiff, copyYaml, formatDiffsJson, formatPolicyDiff, NO_COPY, type PolicyDiff } from './diffformat.ts';

const GVR = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };

function params(doc: Record<string, unknown> = {}): SyncParams {
  const parsed = parseParams({ policiesToSync: [GVR], ...doc });
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  return parsed.params;
}

function policy(generation: number, rego: string): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { name: 'auth', namespace: 'payments', generation, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }, rules: { authorization: { deny: { opa: { rego } } } } },
  };
}

const placement = 'cluster.open-cluster-management.io/placement';
function snapshot(p: SyncParams): HubSnapshot {
  return {
    classes: new Map([['sync', p]]),
    gateways: [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: 'payments', labels: { [placement]: 'all' } }, spec: { gatewayClassName: 'sync' } }],
    placements: [],
    decisions: [{ apiVersion: 'cluster.open-cluster-management.io/v1beta1', kind: 'PlacementDecision', metadata: { name: 'all-1', namespace: 'payments', labels: { [placement]: 'all' } }, status: { decisions: [{ clusterName: 'spoke-1' }, { clusterName: 'spoke-2' }] } }],
    managedClusters: [{ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name: 'spoke-2', labels: { env: 'canary' } } }],
    clusterSets: [],
    bindings: [],
    trustDecisionLabels: true,
    reports: new Map(),
  };
}

function works(p: KubeObject): KubeObject[] {
  const gateways = (): { managed: boolean; downstreamNamespaceTemplate: string; clusters: string[]; kindAllowed: boolean } => ({ managed: true, downstreamNamespaceTemplate: '{namespace}', clusters: ['spoke-1', 'spoke-2'], kindAllowed: true });
  return [...desiredWorksForPolicy({ gvr: GVR, policy: p, gateways, rawFeedback: false, statusFeedback: [], maxWorkBytes: 1 << 20 }).works.values()];
}

function diffOf(p: KubeObject, hub: HubSnapshot, observed: KubeObject[], change: PolicyDiff['change']): PolicyDiff {
  const preview = previewRollout({ gvr: GVR, policy: p, hub, observed, controller: 'c', rawFeedback: false, maxWorkBytes: 1 << 20, now: 0 });
  return { ...GVR, kind: 'AuthPolicy', namespace: 'payments', name: 'auth', change, ...(change === 'new' ? {} : { hubRevision: 1 }), preview };
}

const PROGRESSIVE = params({ rolloutStrategy: { type: 'Progressive', progressive: { canary: { matchLabels: { env: 'canary' } }, maxConcurrency: '1' } } });

test('copyYaml: keys sorted at every level, as kubectl prints an object', () => {
  assert.equal(copyYaml({ kind: 'K', apiVersion: 'v1', spec: { b: 1, a: 2 }, metadata: { name: 'n' } }), 'apiVersion: v1\nkind: K\nmetadata:\n  name: n\nspec:\n  a: 2\n  b: 1\n');
  assert.equal(copyYaml(undefined), '');
});

test('a new policy: the clusters and waves, each copy against (no copy)', () => {
  const d = diffOf(policy(1, 'allow = false'), snapshot(PROGRESSIVE), [], 'new');
  const text = formatPolicyDiff(d);
  const lines = text.split('\n');
  assert.equal(lines[0], 'AuthPolicy payments/auth: new policy, revision 1');
  assert.ok(lines.includes('Waves:     1: spoke-2; 2: spoke-1'), text);
  assert.ok(lines.includes('Rollout:   Progressing wave 1/2'), text);
  const table = lines.slice(lines.indexOf('') + 1, lines.indexOf('') + 4).map((l) => l.split(/ {2,}/));
  assert.deepEqual(table, [
    ['CLUSTER', 'WAVE', 'ACTION', 'RUNS', 'MESSAGE'],
    ['spoke-2', '1/2', 'write', '-', 'gets revision 1 now (wave 1 is under way)'],
    ['spoke-1', '2/2', 'wait', '-', 'no copy until its wave'],
  ]);
  assert.ok(text.includes(`--- spoke-2/AuthPolicy/payments/auth\t${NO_COPY}\n+++ spoke-2/AuthPolicy/payments/auth\t(revision 1, written now)\n@@ -0,0 +1,19 @@\n+apiVersion: kuadrant.io/v1\n`), text);
  assert.ok(text.includes(`--- spoke-1/AuthPolicy/payments/auth\t${NO_COPY}\n`), text);
});

test('an edit: the spec diff per cluster, the canary wave written now, the other kept', () => {
  const d = diffOf(policy(2, 'allow = true'), snapshot(PROGRESSIVE), works(policy(1, 'allow = false')), 'spec');
  const text = formatPolicyDiff(d);
  assert.equal(text.split('\n')[0], "AuthPolicy payments/auth: revision 2 (its spec changes; the hub's is revision 1)");
  const diff = clusterDiff(d, d.preview.clusters[0]!);
  assert.ok(diff.startsWith('--- spoke-2/AuthPolicy/payments/auth\t(revision 1, running now)\n+++ spoke-2/AuthPolicy/payments/auth\t(revision 2, written now)\n'), diff);
  assert.ok(diff.includes('-    policysync.kuadrant.io/revision: "1"\n+    policysync.kuadrant.io/revision: "2"\n'), diff);
  assert.ok(diff.includes('-          rego: allow = false\n+          rego: allow = true\n'), diff);
  assert.deepEqual(d.preview.clusters.map((c) => [c.cluster, c.action]), [['spoke-2', 'write'], ['spoke-1', 'keep']]);
});

test('no change: no diff, and it says so', () => {
  const p = policy(1, 'allow = false');
  const d = diffOf(p, snapshot(params()), works(p), 'none');
  assert.deepEqual(d.preview.clusters.map((c) => clusterDiff(d, c)), ['', '']);
  const text = formatPolicyDiff(d);
  assert.ok(text.endsWith('\nNo copy changes.\n'), text);
  assert.ok(text.includes('Rollout:   every cluster at once: spoke-1, spoke-2'), text);
});

test('-o json: items with the plan, each cluster with its copies and diff, keys sorted', () => {
  const d = diffOf(policy(2, 'allow = true'), snapshot(PROGRESSIVE), works(policy(1, 'allow = false')), 'spec');
  const doc = JSON.parse(formatDiffsJson([d])) as { items: Record<string, unknown>[] };
  const item = doc.items[0]!;
  assert.deepEqual(item.policy, { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', kind: 'AuthPolicy', namespace: 'payments', name: 'auth' });
  assert.deepEqual([item.change, item.revision, item.hubRevision], ['spec', 2, 1]);
  assert.deepEqual(item.waves, [['spoke-2'], ['spoke-1']]);
  const clusters = item.clusters as { cluster: string; action: string; wave: number; revision: number; diff: string; desired: KubeObject }[];
  assert.deepEqual(clusters.map((c) => [c.cluster, c.action, c.wave, c.revision]), [['spoke-2', 'write', 1, 1], ['spoke-1', 'keep', 2, 1]]);
  assert.match(clusters[0]!.diff, /^--- spoke-2\//);
  assert.equal(clusters[0]!.desired.metadata.annotations?.['policysync.kuadrant.io/revision'], '2');
  assert.equal((item.strategy as { description: string }).description.startsWith('Progressive'), true);
});

test('parseDocuments: several documents and Lists; errors name the file, the document and the field', () => {
  const two = parseDocuments('apiVersion: kuadrant.io/v1\nkind: AuthPolicy\nmetadata: {name: a}\n---\n---\n{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"kuadrant.io/v1","kind":"AuthPolicy","metadata":{"name":"b"}}]}\n', 'f.yaml');
  assert.deepEqual(two.map((d) => [d.object.metadata.name, d.where]), [['a', 'f.yaml (document 1)'], ['b', 'f.yaml (document 3) items[0]']]);
  const error = (text: string): string => {
    try {
      parseDocuments(text, 'p.yaml');
    } catch (err) {
      assert.ok(err instanceof CliError);
      assert.equal(err.exitCode, 2);
      return err.message;
    }
    assert.fail('no error');
  };
  assert.match(error('kind: [unclosed'), /^p\.yaml: not valid YAML or JSON: /);
  assert.equal(error('apiVersion: kuadrant.io/v1\nmetadata: {name: a}\n'), 'p.yaml: kind: required');
  assert.equal(error('apiVersion: kuadrant.io/v1\nkind: AuthPolicy\nmetadata: {}\n'), 'p.yaml: metadata.name: required');
  assert.equal(error('apiVersion: kuadrant.io/v1\nkind: AuthPolicy\nmetadata: {name: a, annotations: {x: 1}}\n'), 'p.yaml: metadata.annotations: must map strings to strings');
  assert.equal(error('apiVersion: kuadrant.io/v1\nkind: AuthPolicy\nmetadata: {name: a}\nspec: [1]\n'), 'p.yaml: spec: must be an object');
  assert.equal(error(''), 'p.yaml: holds no object');
  assert.equal(error('- 1\n'), 'p.yaml: not an object');
});

test('a variant edit: the Variants line names the file\'s; the cluster whose copy changes gets its diff; a cluster the variant cannot render is skip with the reason and no diff (its copy stays)', () => {
  const schema = {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { rules: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
    },
  };
  const variant = (generation: number, key: string): KubeObject => ({
    apiVersion: 'policysync.kuadrant.io/v1alpha1',
    kind: 'PolicyVariant',
    metadata: { namespace: 'payments', name: 'rego', generation },
    spec: { targetRef: { group: 'kuadrant.io', kind: 'AuthPolicy', name: 'auth' }, entries: [{ values: [{ path: 'spec.rules.authorization.deny.opa.rego', valueFrom: { clusterLabel: { key } } }] }] },
  });
  const p = policy(1, 'allow = false');
  const clusters = (labels: Record<string, Record<string, string>>): KubeObject[] => Object.entries(labels).map(([name, l]) => ({ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name, labels: l } }));
  const hub = (v: KubeObject, mc: KubeObject[]): HubSnapshot => ({ ...snapshot(params()), managedClusters: mc, kinds: new Map([['authpolicies.kuadrant.io', { statusSubresource: true, schema }]]), variants: [v] });
  const running = clusters({ 'spoke-1': { a: 'allow = true' }, 'spoke-2': { a: 'allow = true' } });
  // What runs: the hub's own works for the variant at generation 1.
  const observed = [...decidePolicy(new SnapshotView(hub(variant(1, 'a'), running)), { gvr: GVR, policy: p, observed: [], controller: 'c', rawFeedback: false, maxWorkBytes: 1 << 20, now: 0 }).desired.works.values()];
  assert.equal(observed.length, 2);
  // Edited to read label `b`: spoke-1 has it, spoke-2 does not.
  const edited = clusters({ 'spoke-1': { a: 'allow = true', b: 'allow = maybe' }, 'spoke-2': { a: 'allow = true' } });
  const preview = previewRollout({ gvr: GVR, policy: p, hub: hub(variant(2, 'b'), edited), observed, controller: 'c', rawFeedback: false, maxWorkBytes: 1 << 20, now: 0 });
  const d: PolicyDiff = { ...GVR, kind: 'AuthPolicy', namespace: 'payments', name: 'auth', change: 'none', hubRevision: 1, variants: [{ name: 'rego', generation: 2, change: 'spec' }], preview };
  const text = formatPolicyDiff(d);
  assert.ok(text.includes('\nVariants:  rego@2 (edited, from the file)\n'), text);
  assert.deepEqual(preview.clusters.map((c) => [c.cluster, c.action]), [['spoke-1', 'write'], ['spoke-2', 'skip']]);
  const [one, two] = preview.clusters.map((c) => clusterDiff(d, c));
  assert.ok(one!.includes('-          rego: allow = true\n+          rego: allow = maybe\n'), one);
  // The revision annotation of a copy rendered with variants is `<generation>/<tag>` (core/revisionannotation.ts):
  // the tag changes with the rendered spec; the diff's header tells the generation alone.
  assert.match(one!, /\n- {4}policysync\.kuadrant\.io\/revision: 1\/([0-9a-f]{10})\n- {4}policysync\.kuadrant\.io\/variants: rego@1\n\+ {4}policysync\.kuadrant\.io\/revision: 1\/(?!\1)[0-9a-f]{10}\n\+ {4}policysync\.kuadrant\.io\/variants: rego@2\n/);
  assert.ok(one!.includes('\t(revision 1, running now)\n') && one!.includes('\t(revision 1, written now)\n'), one);
  assert.equal(two, '', 'the copy spoke-2 runs stays: no diff, never a removal');
  assert.match(text, /spoke-2 +- +skip +1 +VariantValueMissing: variant rego entry 0 \(spec\.rules\.authorization\.deny\.opa\.rego\): label b is not set on cluster spoke-2/);
  const json = JSON.parse(formatDiffsJson([d])) as { items: { variants: unknown }[] };
  assert.deepEqual(json.items[0]!.variants, [{ change: 'spec', generation: 2, name: 'rego' }]);
});
