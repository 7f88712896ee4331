import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../core/k8s/objects.ts';
import { ROLLOUT_STRATEGY_ANNOTATION } from '../core/metadatakeys.ts';
import { ALL, toRolloutStrategy, type RolloutStrategy } from '../core/rollout/strategy.ts';
import { Store } from '../kube/store.ts';
import { ClassConfigs } from './classconfigs.ts';
import { Rollouts } from './rollouts.ts';
import { UngatedKinds } from './ungatedkinds.ts';

const WIDGETS = { group: 'example.com', version: 'v1', resource: 'widgetpolicies' };

function rollouts(classStrategy: RolloutStrategy, ungated: UngatedKinds): Rollouts {
  const configs = new ClassConfigs();
  configs.setValid('gc', { params: { policiesToSync: [{ ...WIDGETS, statusFeedback: [] }], downstreamNamespace: '{namespace}', rolloutStrategy: classStrategy }, kinds: new Map() });
  return new Rollouts({ configs, managedClusters: { store: new Store() }, maxWorkBytes: 100_000, ungatedKinds: ungated });
}

function widget(annotation?: string, apiVersion = 'example.com/v1'): KubeObject {
  return { apiVersion, kind: 'WidgetPolicy', metadata: { namespace: 'ns', name: 'w', generation: 2, ...(annotation === undefined ? {} : { annotations: { [ROLLOUT_STRATEGY_ANNOTATION]: annotation } }) } };
}

test('strategyFor: a policy whose annotation selects Progressive for a kind its controller cannot be gated on gets a problem naming the kind; the strategy stands', () => {
  const ungated = new UngatedKinds();
  ungated.set('gc', [{ apiVersion: 'example.com/v1', kind: 'WidgetPolicy', name: 'widgetpolicies.v1.example.com' }]);
  const r = rollouts(ALL, ungated);
  for (const annotation of ['Progressive', '{"type":"Progressive","progressive":{"maxConcurrency":"1"}}']) {
    const { strategy, problem } = r.strategyFor(widget(annotation), ['gc']);
    assert.equal(strategy.type, 'Progressive', annotation);
    assert.equal(problem?.reason, 'NoObservedGeneration', annotation);
    assert.match(problem?.message ?? '', /^policysync\.kuadrant\.io\/rollout-strategy selects Progressive, but no cluster can succeed for widgetpolicies\.v1\.example\.com: its CRD has no status\.observedGeneration, /, annotation);
  }
  // All by annotation, no annotation (the class's own strategy: the class says so), another version of the kind: no problem.
  assert.deepEqual(r.strategyFor(widget('All'), ['gc']), { strategy: ALL });
  assert.deepEqual(r.strategyFor(widget(), ['gc']), { strategy: ALL });
  assert.equal(r.strategyFor(widget('Progressive', 'example.com/v2'), ['gc']).problem, undefined);
  // The class no longer ours, or the kind fixed: nothing named.
  ungated.set('gc', []);
  assert.equal(r.strategyFor(widget('Progressive'), ['gc']).problem, undefined);
});

test('strategyFor: the class rolling out Progressive itself gives the policy no problem of this kind (the class names it)', () => {
  const ungated = new UngatedKinds();
  ungated.set('gc', [{ apiVersion: 'example.com/v1', kind: 'WidgetPolicy', name: 'widgetpolicies.v1.example.com' }]);
  const progressive = toRolloutStrategy({ type: 'Progressive' });
  assert.deepEqual(rollouts(progressive, ungated).strategyFor(widget(), ['gc']), { strategy: progressive });
  ungated.remove('gc');
  assert.equal(ungated.find('example.com/v1', 'WidgetPolicy'), undefined);
});
