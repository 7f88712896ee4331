// PolicyVariants through the decision pipeline (the hub and `diff` both call it): each cluster's copy rendered
// with the variants selecting it, a cluster that cannot be rendered kept as it runs, and a variant change rolled
// out like an edit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PLACEMENT_LABEL } from '../fleet/placement.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { ROLLOUT_STRATEGY_ANNOTATION, VARIANTS_ANNOTATION } from '../metadatakeys.ts';
import { parseParams } from '../params/params.ts';
import { workCopy } from '../works/revision.ts';
import { controllerLabelValue, type ManifestWork } from '../works/manifestwork.ts';
import { decidePolicy, type PolicyDecision } from './policypipeline.ts';
import { SnapshotView, type HubSnapshot } from './snapshotview.ts';
import { policySchema } from '../../../testkit/policyschema.ts';

const DNS = { group: 'kuadrant.io', version: 'v1', resource: 'dnspolicies' };
const SCHEMA = policySchema({
  type: 'object',
  properties: {
    targetRef: { type: 'object', properties: { group: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' } } },
    loadBalancing: { type: 'object', required: ['geo', 'weight', 'defaultGeo'], properties: { geo: { type: 'string' }, weight: { type: 'integer' }, defaultGeo: { type: 'boolean' } } },
  },
});
const GEO_LABEL = 'kuadrant.io/lb-attribute-geo-code';
const WEIGHT_LABEL = 'kuadrant.io/lb-attribute-custom-weight';

function cluster(name: string, labels: Record<string, string>): KubeObject {
  return { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name, labels } };
}

function snapshot(clusters: KubeObject[], variants: KubeObject[]): HubSnapshot {
  const parsed = parseParams({ policiesToSync: [DNS] });
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  return {
    classes: new Map([['gc', parsed.params]]),
    gateways: [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { namespace: 'ns', name: 'gw', labels: { [PLACEMENT_LABEL]: 'all' } }, spec: { gatewayClassName: 'gc' } }],
    placements: [],
    decisions: [
      {
        apiVersion: 'cluster.open-cluster-management.io/v1beta1',
        kind: 'PlacementDecision',
        metadata: { namespace: 'ns', name: 'all-1', labels: { [PLACEMENT_LABEL]: 'all' } },
        status: { decisions: clusters.map((c) => ({ clusterName: c.metadata.name, reason: '' })) },
      },
    ],
    managedClusters: clusters,
    clusterSets: [],
    bindings: [],
    trustDecisionLabels: true,
    reports: new Map(),
    kinds: new Map([['dnspolicies.kuadrant.io', { statusSubresource: true, schema: SCHEMA }]]),
    variants,
  };
}

function policy(annotations: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'DNSPolicy',
    metadata: { namespace: 'ns', name: 'dns', generation: 3, annotations },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }, loadBalancing: { geo: 'US', weight: 120, defaultGeo: false } },
  };
}

function variant(name: string, spec: Record<string, unknown>, generation = 1): KubeObject {
  return { apiVersion: 'policysync.kuadrant.io/v1alpha1', kind: 'PolicyVariant', metadata: { namespace: 'ns', name, generation }, spec: { targetRef: { group: 'kuadrant.io', kind: 'DNSPolicy', name: 'dns' }, ...spec } };
}

const GEO = variant('geo', {
  entries: [
    {
      values: [
        { path: 'spec.loadBalancing.geo', valueFrom: { clusterLabel: { key: GEO_LABEL } } },
        { path: 'spec.loadBalancing.weight', valueFrom: { clusterLabel: { key: WEIGHT_LABEL } }, default: '120' },
      ],
    },
  ],
});

function decide(snap: HubSnapshot, observed: readonly KubeObject[] = [], p = policy()): PolicyDecision {
  return decidePolicy(new SnapshotView(snap), { gvr: DNS, policy: p, observed, controller: controllerLabelValue('c'), rawFeedback: false, maxWorkBytes: 1 << 20, now: 0 });
}

function lb(work: ManifestWork | KubeObject | undefined): unknown {
  return (workCopy(work)?.spec as { loadBalancing?: unknown } | undefined)?.loadBalancing;
}

test('each cluster gets its own geo and weight from its labels; a cluster without the geo label and no default gets no work and keeps the one it runs', () => {
  const clusters = [cluster('c1', { [GEO_LABEL]: 'EU', [WEIGHT_LABEL]: '150' }), cluster('c2', { [GEO_LABEL]: 'NA' }), cluster('c3', {})];
  const first = decide(snapshot(clusters.slice(0, 2).concat(cluster('c3', { [GEO_LABEL]: 'SA' })), [GEO]));
  const runningOnC3 = first.desired.works.get('c3')!;
  assert.deepEqual(lb(runningOnC3), { geo: 'SA', weight: 120, defaultGeo: false });

  const d = decide(snapshot(clusters, [GEO]), [...first.desired.works.values()]);
  assert.deepEqual(lb(d.desired.works.get('c1')), { geo: 'EU', weight: 150, defaultGeo: false });
  assert.deepEqual(lb(d.desired.works.get('c2')), { geo: 'NA', weight: 120, defaultGeo: false });
  assert.equal(workCopy(d.desired.works.get('c1'))?.metadata.annotations?.[VARIANTS_ANNOTATION], 'geo@1');
  assert.equal(d.desired.works.has('c3'), false, 'no new write');
  assert.ok([...d.retain].some((k) => k.startsWith('c3/')), 'the work c3 runs is kept, never deleted for it');
  assert.deepEqual(d.variantFailures, [{ cluster: 'c3', reason: 'VariantValueMissing', message: `variant geo entry 0 (spec.loadBalancing.geo): label ${GEO_LABEL} is not set on cluster c3 and the value has no default`, variants: ['geo'] }]);
  assert.deepEqual(d.variants, [{ namespace: 'ns', name: 'geo', generation: 1, applied: ['c1', 'c2'], failing: d.variantFailures, unmatched: [] }]);
});

test('a variant that does not parse: every cluster keeps the copy it runs, the policy says which variant and field', () => {
  const clusters = [cluster('c1', { [GEO_LABEL]: 'EU' })];
  const first = decide(snapshot(clusters, []));
  const bad = variant('bad', { entries: [{ values: [{ path: 'metadata.labels.x', valueFrom: { clusterName: {} } }] }] });
  const d = decide(snapshot(clusters, [bad]), [...first.desired.works.values()]);
  assert.equal(d.desired.works.size, 0);
  assert.equal(d.retain.size, 1);
  assert.equal(d.variantFailures[0]?.reason, 'InvalidVariant');
  assert.match(d.problems.find((p) => p.reason === 'InvalidVariant')?.message ?? '', /PolicyVariant bad: spec\.entries\[0\]\.values\[0\]\.path: a path starts with spec\./);
  assert.deepEqual(d.variants[0]?.refused, { field: 'spec.entries[0].values[0].path', message: 'a path starts with spec. and names a field under it' });
});

test('a variant whose entry selects none of the policy\'s clusters is named; a variant of another policy or namespace is not read', () => {
  const clusters = [cluster('c1', { [GEO_LABEL]: 'EU' })];
  const none = variant('none', { entries: [{ clusters: { names: ['elsewhere'] }, patch: { spec: { loadBalancing: { geo: 'X' } } } }] });
  const other = { ...variant('other', { entries: [{ patch: { spec: { loadBalancing: { geo: 'X' } } } }] }), metadata: { namespace: 'tenant-b', name: 'other', generation: 1 } };
  const d = decide(snapshot(clusters, [none, other]));
  assert.deepEqual(lb(d.desired.works.get('c1')), { geo: 'US', weight: 120, defaultGeo: false }, 'the base copy');
  assert.deepEqual(d.variants.map((v) => [v.name, v.unmatched]), [['none', [0]]]);
});

test('a label change a variant reads is a change of that cluster\'s copy only; under Progressive it waits for its wave like an edit', () => {
  const before = [cluster('c1', { [GEO_LABEL]: 'EU' }), cluster('c2', { [GEO_LABEL]: 'NA' })];
  const after = [cluster('c1', { [GEO_LABEL]: 'EU' }), cluster('c2', { [GEO_LABEL]: 'SA' })];
  const running = [...decide(snapshot(before, [GEO])).desired.works.values()];
  // All: c2's copy is rewritten at once, c1's is the one it runs.
  const all = decide(snapshot(after, [GEO]), running);
  assert.deepEqual(lb(all.desired.works.get('c2')), { geo: 'SA', weight: 120, defaultGeo: false });
  assert.deepEqual(all.desired.works.get('c1'), running[0], 'c1 unchanged: no write');
  // Progressive, one cluster a wave: c1 (wave 1) has not succeeded at this rollout, so c2 (wave 2) keeps its copy.
  const progressive = policy({ [ROLLOUT_STRATEGY_ANNOTATION]: '{"type":"Progressive","progressive":{"maxConcurrency":"1"}}' });
  const gated = decide(snapshot(after, [GEO]), running, progressive);
  assert.ok(gated.rollout?.keep.has('c2'), 'c2 waits for its wave');
  assert.equal(gated.rollout?.status.variants !== undefined, true, 'the rollout names what the copies carry');
  assert.deepEqual(lb(gated.revisionWorks.get('c2')), { geo: 'SA', weight: 120, defaultGeo: false }, 'what it will get');
  // The same labels again: nothing to roll out, the rollout identity is the one of the copies in place.
  const same = decide(snapshot(before, [GEO]), running, progressive);
  assert.equal(same.rollout?.keep.size, 0);
});

test('under Progressive, a rollout is not Complete while a cluster its variants cannot be rendered for keeps an older copy', () => {
  const progressive = policy({ [ROLLOUT_STRATEGY_ANNOTATION]: '{"type":"Progressive","progressive":{"maxConcurrency":"1"}}' });
  const labelled = [cluster('c1', { [GEO_LABEL]: 'EU' }), cluster('c2', { [GEO_LABEL]: 'NA' })];
  const running = [...decide(snapshot(labelled, [GEO])).desired.works.values()];
  // Both clusters lose the geo label: neither can be sent the revision, both keep the copy they run.
  const d = decide(snapshot([cluster('c1', {}), cluster('c2', {})], [GEO]), running, progressive);
  assert.equal(d.desired.works.size, 0, 'nothing written');
  assert.equal(d.rollout?.status.state, 'Progressing', 'not Complete: the revision is on no cluster');
  assert.match(d.rollout?.status.message ?? '', /not sent to c1 \(VariantValueMissing\), c2 \(VariantValueMissing\), which keep the copy they run/);
});

test('a variant edit that changes one cluster\'s copy writes that one work: the others keep their record of the generation whose content they run', () => {
  const clusters = [cluster('c1', { [GEO_LABEL]: 'EU' }), cluster('c2', { [GEO_LABEL]: 'NA' })];
  const v1 = variant('geo', { entries: [{ values: [{ path: 'spec.loadBalancing.geo', valueFrom: { clusterLabel: { key: GEO_LABEL } } }] }] }, 1);
  const running = [...decide(snapshot(clusters, [v1])).desired.works.values()];
  // Generation 2 adds an entry giving c2 a weight of its own.
  const v2 = variant('geo', { entries: [{ values: [{ path: 'spec.loadBalancing.geo', valueFrom: { clusterLabel: { key: GEO_LABEL } } }] }, { clusters: { names: ['c2'] }, patch: { spec: { loadBalancing: { weight: 7 } } } }] }, 2);
  const d = decide(snapshot(clusters, [v2]), running);
  assert.deepEqual(d.desired.works.get('c1'), running.find((w) => w.metadata.namespace === 'c1'), 'c1: the very work it runs, nothing to write');
  assert.equal(workCopy(d.desired.works.get('c1'))?.metadata.annotations?.[VARIANTS_ANNOTATION], 'geo@1');
  assert.equal(workCopy(d.desired.works.get('c2'))?.metadata.annotations?.[VARIANTS_ANNOTATION], 'geo@2');
  assert.deepEqual(lb(d.desired.works.get('c2')), { geo: 'NA', weight: 7, defaultGeo: false });
  assert.deepEqual(d.variants[0]?.applied, ['c1', 'c2'], 'it applies to both');
});
