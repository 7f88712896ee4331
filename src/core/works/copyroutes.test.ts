import assert from 'node:assert/strict';
import { test } from 'node:test';
import { authPolicy } from '../../../testkit/fixtures.ts';
import { worksFor } from '../../../testkit/world.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { workKeyOf, type WorkKey } from '../keys.ts';
import { copiesOf, packBundles, type BundleWork } from './bundle.ts';
import { routeCopies, type CopyRoutesInput, type WorkShape } from './copyroutes.ts';
import { controllerLabelValue, type ManifestWork } from './manifestwork.ts';

const CONTROLLER = 'example.com/policy-sync';

/** The copy works of policies `names` on cluster c1 (`edited`: with another spec). */
function copies(names: readonly string[], edited = false): ManifestWork[] {
  const policies = names.map((name) => ({ ...authPolicy('shop', name, 'gw', edited ? { rules: { authentication: { x: {} } } } : {}), metadata: { name, namespace: 'shop', uid: `uid-${name}`, generation: 1 } }));
  return worksFor(policies, 'shop', ['c1'], CONTROLLER);
}

/** As the works cache shows `works` carried by one bundle, created, the agent's Applied on every copy or none. */
function bundled(works: readonly ManifestWork[], applied: boolean): KubeObject[] {
  const [{ bundle }] = packBundles({ cluster: 'c1', namespace: 'shop', observed: [], put: works, drop: new Set(), capBytes: 64 * 1024, controller: controllerLabelValue(CONTROLLER) }).writes as [{ bundle: BundleWork }];
  const condition = { type: 'Applied', status: 'True', reason: 'Applied', message: '', observedGeneration: 1, lastTransitionTime: '2026-11-29T00:00:00Z' };
  const status = {
    conditions: [condition],
    resourceStatus: { manifests: bundle.spec.workload.manifests.map((m, ordinal) => ({ resourceMeta: { ordinal, group: 'kuadrant.io', version: 'v1', kind: m.kind, resource: 'authpolicies', name: m.metadata.name, namespace: m.metadata.namespace }, conditions: [condition] })) },
  };
  return [...copiesOf({ ...bundle, metadata: { ...bundle.metadata, uid: 'b', resourceVersion: '1', generation: 1 }, ...(applied ? { status } : {}) })];
}

/** A work of its own as the cache shows it: created and applied. */
const own = (work: ManifestWork): KubeObject => ({ ...work, metadata: { ...work.metadata, uid: `own-${work.metadata.name}`, resourceVersion: '3', generation: 1 } });

function route(shape: WorkShape, desired: readonly ManifestWork[], plan: Pick<CopyRoutesInput, 'create' | 'apply'>, carried: readonly KubeObject[]) {
  const carriers = (key: WorkKey) => carried.filter((c) => workKeyOf(c) === key);
  const out = routeCopies({ shape, desired: new Map(desired.map((w) => [workKeyOf(w), w])), ...plan, carriers });
  const names = (works: readonly KubeObject[]) => works.map((w) => w.metadata.name);
  return { create: names(out.create), apply: names(out.apply), put: names(out.put), retire: names(out.retire) };
}

const none = { create: [], apply: [], put: [], retire: [] };

test('per placement: copies of their own are written as their own works, new ones created', () => {
  const [a, b] = copies(['a', 'b']) as [ManifestWork, ManifestWork];
  const [b2] = copies(['b'], true) as [ManifestWork];
  assert.deepEqual(route('per-placement', [a, b2], { create: [a], apply: [b2] }, [own(b)]), { ...none, create: [a.metadata.name], apply: [b.metadata.name] });
});

test('bundled: a new copy is put into its bundle; a copy a bundle carries stays there whatever the shape', () => {
  const [a, b] = copies(['a', 'b']) as [ManifestWork, ManifestWork];
  const [b2] = copies(['b'], true) as [ManifestWork];
  assert.deepEqual(route('bundled', [a], { create: [a], apply: [] }, []), { ...none, put: [a.metadata.name] });
  for (const shape of ['bundled', 'per-placement'] as const) {
    assert.deepEqual(route(shape, [b2], { create: [], apply: [b2] }, bundled([b], true)), { ...none, put: [b.metadata.name] }, shape);
  }
});

test('bundled: a copy of its own moves — put into the bundle, its own work retired only once the bundle carries it applied and equal', () => {
  const [a] = copies(['a']) as [ManifestWork];
  assert.deepEqual(route('bundled', [a], { create: [], apply: [] }, [own(a)]), { ...none, put: [a.metadata.name] }, 'put, the own work stays');
  assert.deepEqual(route('bundled', [a], { create: [], apply: [] }, [own(a), ...bundled([a], false)]), none, 'put, not applied yet: both stay');
  assert.deepEqual(route('bundled', [a], { create: [], apply: [] }, [own(a), ...bundled([a], true)]), { ...none, retire: [a.metadata.name] }, 'applied in the bundle: the own work retired');
  assert.deepEqual(route('per-placement', [a], { create: [], apply: [] }, [own(a)]), none, 'per placement: it stays in its own work');
});

test('bundled: a copy edited while it moves is written to both its carriers, and nothing is retired until they agree', () => {
  const [a] = copies(['a']) as [ManifestWork];
  const [a2] = copies(['a'], true) as [ManifestWork];
  // The cache shows the own work (the bundle's not applied) with the old spec: the plan applies.
  assert.deepEqual(route('bundled', [a2], { create: [], apply: [a2] }, [own(a), ...bundled([a], false)]), { ...none, apply: [a.metadata.name], put: [a.metadata.name] });
  // The bundle already has the edit applied and the cache shows it; the own work still carries the old spec.
  assert.deepEqual(route('bundled', [a2], { create: [], apply: [] }, [own(a), ...bundled([a2], true)]), { ...none, apply: [a.metadata.name] });
  assert.deepEqual(route('bundled', [a2], { create: [], apply: [] }, [own(a2), ...bundled([a], true)]), { ...none, put: [a.metadata.name] });
});
