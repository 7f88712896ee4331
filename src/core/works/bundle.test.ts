import assert from 'node:assert/strict';
import { test } from 'node:test';
import { authPolicy } from '../../../testkit/fixtures.ts';
import { worksFor } from '../../../testkit/world.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { BUNDLE_COPIES_ANNOTATION, bundleIndex, bundleName, bundleOf, configFor, copiesOf, packBundles, preferredCopy, readEntries, sameCopy, unpackBundle, type BundleChanges, type BundleWork } from './bundle.ts';
import { readClusterFeedback } from './feedback.ts';
import { controllerLabelValue, type ManifestWork } from './manifestwork.ts';
import { workState } from './workstate.ts';
import { workCacheView } from './cacheview.ts';

const CONTROLLER = controllerLabelValue('example.com/policy-sync');
const CLUSTER = 'c1';

/** Today's copy works of `n` policies of namespace `ns` on CLUSTER, as the core builds them. */
function copies(n: number, ns = 'shop', extra: (i: number) => Record<string, unknown> = () => ({})): ManifestWork[] {
  const policies = Array.from({ length: n }, (_, i) => ({ ...authPolicy(ns, `p${String(i).padStart(3, '0')}`, 'gw', extra(i)), metadata: { name: `p${String(i).padStart(3, '0')}`, namespace: ns, uid: `uid-${i}`, generation: 1 } }));
  return worksFor(policies, ns, [CLUSTER], 'example.com/policy-sync');
}

function pack(changes: Partial<BundleChanges> & Pick<BundleChanges, 'put'>) {
  return packBundles({ cluster: CLUSTER, namespace: 'shop', observed: [], drop: new Set(), capBytes: 16 * 1024, controller: CONTROLLER, ...changes });
}

/** A bundle as the apiserver then holds it: created (generation 1), or updated (one more). */
function stored(bundle: BundleWork, observed?: KubeObject): KubeObject {
  const generation = observed ? (observed.metadata.generation ?? 0) + (JSON.stringify(observed.spec) === JSON.stringify(bundle.spec) ? 0 : 1) : 1;
  return { ...bundle, metadata: { ...bundle.metadata, uid: `uid-${bundle.metadata.name}`, resourceVersion: String(generation), generation }, ...(observed?.status ? { status: observed.status } : {}) };
}

const copyOf = (work: ManifestWork) => ({ name: work.metadata.name, labels: work.metadata.labels, annotations: work.metadata.annotations, spec: work.spec });

test('copies pack into bundles under the cap, and each unpacks into the very copy work the core built', () => {
  const works = copies(30);
  const { writes, deletes } = pack({ put: works, capBytes: 8 * 1024 });
  assert.deepEqual(deletes, []);
  assert.ok(writes.length > 1, 'split at the cap');
  assert.ok(writes.length < works.length / 2, 'several copies per bundle');
  const unpacked = writes.flatMap((w) => {
    assert.equal(w.observed, undefined, 'created');
    assert.equal(w.bundle.metadata.namespace, CLUSTER);
    assert.equal(bundleIndex(CONTROLLER, 'shop', w.bundle.metadata.name) !== undefined, true);
    const bytes = w.bundle.spec.workload.manifests.reduce((sum, m, i) => sum + Buffer.byteLength(JSON.stringify(m)) + Buffer.byteLength(JSON.stringify(readEntries(w.bundle)![i])), 0);
    assert.ok(bytes <= 8 * 1024, `${w.bundle.metadata.name} holds ${bytes} bytes`);
    // One wildcard config serves every copy of the kind: their rules are equal.
    assert.deepEqual(w.bundle.spec.manifestConfigs.map((c) => c.resourceIdentifier), [{ group: 'kuadrant.io', resource: 'authpolicies', name: '*', namespace: 'shop' }]);
    return unpackBundle(w.bundle)!;
  });
  assert.deepEqual(unpacked.map(copyOf).sort((a, b) => a.name.localeCompare(b.name)), works.map(copyOf).sort((a, b) => a.name.localeCompare(b.name)));
});

test('one copy changed rewrites its bundle alone; it is pending until the agent applied that generation, its neighbours stay applied', () => {
  const works = copies(6);
  const first = pack({ put: works, capBytes: 4 * 1024 }).writes.map((w) => stored(w.bundle));
  assert.ok(first.length >= 2);
  // The agent applied every bundle at generation 1 and fed back each copy's status.
  const applied = first.map((b) => withAgentStatus(b, 1));
  for (const copy of applied.flatMap((b) => unpackBundle(b)!)) assert.equal(workState(copy), 'applied');

  const edited = copies(6, 'shop', (i) => (i === 0 ? { edited: true } : {}));
  const { writes } = pack({ observed: applied, put: edited, capBytes: 4 * 1024 });
  assert.equal(writes.length, 1, 'only the bundle holding p000 is written');
  const [{ bundle, observed }] = writes as [(typeof writes)[number]];
  assert.equal(observed?.metadata.name, bundle.metadata.name, 'an update of the bundle it was in');
  const entries = readEntries(bundle)!;
  assert.equal(entries.find((e) => e.work === edited[0]!.metadata.name)!.since, 2);
  assert.ok(entries.filter((e) => e.work !== edited[0]!.metadata.name).every((e) => e.since === 1));

  // Written (generation 2), not yet applied by the agent: the edited copy is pending, its neighbours applied.
  const after = stored(bundle, observed);
  const byName = new Map(unpackBundle(after)!.map((c) => [c.metadata.name, c]));
  assert.equal(workState(byName.get(edited[0]!.metadata.name)!), 'pending');
  for (const [name, copy] of byName) if (name !== edited[0]!.metadata.name) assert.equal(workState(copy), 'applied', name);
  // Applied at generation 2: all applied, and the edited copy's feedback is its own.
  const reapplied = withAgentStatus(after, 2, edited[0]!.metadata.name);
  const copy = unpackBundle(reapplied)!.find((c) => c.metadata.name === edited[0]!.metadata.name)!;
  assert.equal(workState(copy), 'applied');
  assert.equal(readClusterFeedback(copy).generation, 7);
  assert.equal(readClusterFeedback(unpackBundle(reapplied)!.find((c) => c.metadata.name !== edited[0]!.metadata.name)!).generation, 1);
  // A neighbour's change leaves a copy's work as it was, but for the resourceVersion: nothing to reconcile for it.
  const withoutVersion = (c: ManifestWork) => ({ ...c, metadata: { ...c.metadata, resourceVersion: undefined } });
  const beforeEdit = new Map(unpackBundle(applied.find((b) => b.metadata.name === bundle.metadata.name)!)!.map((c) => [c.metadata.name, withoutVersion(c)]));
  for (const c of unpackBundle(reapplied)!) if (c.metadata.name !== edited[0]!.metadata.name) assert.deepEqual(withoutVersion(c), beforeEdit.get(c.metadata.name));
  const beforeCopies = new Map(unpackBundle(applied.find((b) => b.metadata.name === bundle.metadata.name)!)!.map((c) => [c.metadata.name, c]));
  for (const c of unpackBundle(reapplied)!) assert.equal(sameCopy(c, beforeCopies.get(c.metadata.name)!), c.metadata.name !== edited[0]!.metadata.name, c.metadata.name);

  // The same copies again: nothing to write.
  assert.deepEqual(pack({ observed: [...applied.filter((b) => b.metadata.name !== bundle.metadata.name), reapplied], put: edited, capBytes: 4 * 1024 }).writes, []);
});

test('a copy leaves only when dropped; a bundle goes only when every copy of it was dropped', () => {
  const works = copies(6);
  const observed = pack({ put: works, capBytes: 4 * 1024 }).writes.map((w) => stored(w.bundle));
  const held = (bundles: readonly KubeObject[]) => new Set(bundles.flatMap((b) => unpackBundle(b)!.map((c) => c.metadata.name)));

  // Nothing put, nothing dropped: nothing written (no evidence of absence is a reason to leave).
  assert.deepEqual(pack({ observed, put: [] }), { writes: [], deletes: [] });
  // One dropped: its bundle is rewritten without it, every other copy stays.
  const gone = works[2]!.metadata.name;
  const one = pack({ observed, put: [], drop: new Set([gone]) });
  assert.equal(one.writes.length, 1);
  assert.deepEqual(one.deletes, []);
  const next = observed.map((b) => (b.metadata.name === one.writes[0]!.bundle.metadata.name ? stored(one.writes[0]!.bundle, b) : b));
  assert.deepEqual([...held(next)].sort(), works.map((w) => w.metadata.name).filter((n) => n !== gone).sort());
  // Every copy of a bundle dropped: that bundle is deleted, as observed (its uid and resourceVersion the fence).
  const first = unpackBundle(observed[0]!)!.map((c) => c.metadata.name);
  const all = pack({ observed, put: [], drop: new Set(first) });
  assert.deepEqual(all.deletes, [observed[0]]);
  assert.deepEqual(all.writes, []);
});

test('a copy that grows past the cap stays in its bundle; a new copy goes to the first with room, else a new one', () => {
  const works = copies(4);
  const observed = pack({ put: works, capBytes: 64 * 1024 }).writes.map((w) => stored(w.bundle));
  assert.equal(observed.length, 1);
  const big = copies(4, 'shop', (i) => (i === 1 ? { padding: 'x'.repeat(70 * 1024) } : {}));
  const grown = pack({ observed, put: big, capBytes: 64 * 1024 });
  assert.equal(grown.writes.length, 1);
  assert.equal(grown.writes[0]!.bundle.metadata.name, observed[0]!.metadata.name, 'rewritten in place, past the cap');
  const more = copies(5).slice(4);
  const stored2 = [stored(grown.writes[0]!.bundle, observed[0])];
  const added = pack({ observed: stored2, put: more, capBytes: 64 * 1024 });
  assert.deepEqual(added.writes.map((w) => [w.bundle.metadata.name, w.observed === undefined]), [[bundleName(CONTROLLER, 'shop', 1), true]]);
});

test('Orphan is per copy: SelectivelyOrphan names the copies whose policy asks it, and they unpack as Orphan', () => {
  const works = copies(3).map((w, i) => (i === 1 ? { ...w, spec: { ...w.spec, deleteOption: { propagationPolicy: 'Orphan' as const } } } : w));
  const [{ bundle }] = pack({ put: works }).writes as [{ bundle: BundleWork }];
  assert.deepEqual(bundle.spec.deleteOption, {
    propagationPolicy: 'SelectivelyOrphan',
    selectivelyOrphans: { orphaningRules: [{ group: 'kuadrant.io', resource: 'authpolicies', name: works[1]!.spec.workload.manifests[0]!.metadata.name, namespace: 'shop' }] },
  });
  assert.deepEqual(unpackBundle(bundle)!.map((c) => c.spec.deleteOption.propagationPolicy), ['Foreground', 'Orphan', 'Foreground']);
});

test('copies whose rules differ get exact configs before the wildcard, and the agent finds each its own', () => {
  const works = copies(3).map((w, i) =>
    i === 2 ? { ...w, spec: { ...w.spec, manifestConfigs: [{ ...w.spec.manifestConfigs[0]!, feedbackRules: [{ type: 'JSONPaths' as const, jsonPaths: [{ name: 'x', path: '.status.x' }] }] }] } } : w,
  );
  const [{ bundle }] = pack({ put: works }).writes as [{ bundle: BundleWork }];
  assert.deepEqual(bundle.spec.manifestConfigs.map((c) => c.resourceIdentifier.name), [works[2]!.spec.workload.manifests[0]!.metadata.name, '*']);
  for (const w of works) {
    const m = w.spec.workload.manifests[0]!;
    assert.deepEqual(configFor(bundle.spec.manifestConfigs, 'kuadrant.io', 'authpolicies', 'shop', m.metadata.name)!.feedbackRules, w.spec.manifestConfigs[0]!.feedbackRules);
  }
  assert.deepEqual(unpackBundle(bundle)!.map((c) => c.spec.manifestConfigs), works.map((w) => w.spec.manifestConfigs));
});

test('a copy work without its manifest or config is refused, not written into a bundle it would make unreadable', () => {
  const [work] = copies(1) as [ManifestWork];
  assert.throws(() => pack({ put: [{ ...work, spec: { ...work.spec, manifestConfigs: [] } }] }), /one manifest with its config/);
  assert.throws(() => pack({ put: [{ ...work, spec: { ...work.spec, workload: { manifests: [] } } }] }), /one manifest with its config/);
});

test('a bundle whose entries do not parse or do not align is nobody’s: not unpacked, never rewritten or reused', () => {
  const [{ bundle }] = pack({ put: copies(2) }).writes as [{ bundle: BundleWork }];
  const broken = stored({ ...bundle, metadata: { ...bundle.metadata, annotations: { ...bundle.metadata.annotations, [BUNDLE_COPIES_ANNOTATION]: '[{"work":1}]' } } });
  const misaligned = stored({ ...bundle, spec: { ...bundle.spec, workload: { manifests: bundle.spec.workload.manifests.slice(1) } } });
  for (const b of [broken, misaligned]) {
    assert.equal(unpackBundle(b), undefined);
    const { writes, deletes } = pack({ observed: [b], put: copies(3).slice(2) });
    assert.deepEqual(deletes, []);
    assert.deepEqual(writes.map((w) => w.bundle.metadata.name), [bundleName(CONTROLLER, 'shop', 1)], 'a new bundle, not the one in place');
  }
});

test('what a work carries: a work of its own is its own copy; a bundle its copies; a copy on the move is read from its own work until the bundle has it applied', () => {
  const works = copies(2);
  assert.deepEqual(copiesOf(works[0]!), [works[0]]);
  assert.equal(bundleOf(works[0]!), undefined);
  const [{ bundle }] = pack({ put: works }).writes as [{ bundle: BundleWork }];
  const created = stored(bundle);
  const carried = copiesOf(created);
  assert.deepEqual(carried.map((c) => c.metadata.name), works.map((w) => w.metadata.name));
  assert.equal(bundleOf(carried[0]!), bundle.metadata.name);
  assert.deepEqual(copiesOf({ ...created, metadata: { ...created.metadata, annotations: { [BUNDLE_COPIES_ANNOTATION]: 'not json' } } }), [], 'a bundle that does not parse carries nothing');

  const own = { ...works[0]!, metadata: { ...works[0]!.metadata, uid: 'own', resourceVersion: '7' } };
  const pending = carried[0]!;
  assert.equal(preferredCopy([pending, own]), own, 'not applied in the bundle yet: its own work');
  const applied = copiesOf(withAgentStatus(created, 1))[0]!;
  assert.equal(preferredCopy([own, applied]), applied, 'applied in the bundle: the bundle');
  assert.equal(preferredCopy([pending]), pending);
});

/** The status OCM's agent writes once it applied `bundle` at `generation`: each manifest's conditions and feedback. */
function withAgentStatus(bundle: KubeObject, generation: number, editedWork?: string): KubeObject {
  const entries = readEntries(bundle)!;
  const spec = bundle.spec as BundleWork['spec'];
  const condition = (type: string) => ({ type, status: 'True', reason: type, message: '', observedGeneration: generation, lastTransitionTime: '2026-11-29T00:00:00Z' });
  return {
    ...bundle,
    status: {
      conditions: [condition('Applied'), condition('Available')],
      resourceStatus: {
        // Reversed: the status is matched by identity, not by ordinal.
        manifests: spec.workload.manifests
          .map((m, ordinal) => ({
            resourceMeta: { ordinal, group: 'kuadrant.io', version: 'v1', kind: m.kind, resource: 'authpolicies', name: m.metadata.name, namespace: m.metadata.namespace },
            conditions: [condition('Applied'), condition('Available'), condition('StatusFeedbackSynced')],
            statusFeedback: { values: [{ name: 'generation', fieldValue: { type: 'Integer', integer: entries[ordinal]!.work === editedWork ? 7 : 1 } }] },
          }))
          .reverse(),
      },
    },
  };
}

test('a copy is dated by its own entry, not by its bundle: a neighbour’s edit leaves it the same copy work, the edited one dated anew', () => {
  const written = (bundle: BundleWork, observed: KubeObject | undefined, time: string): KubeObject => {
    const s = stored(bundle, observed);
    return { ...s, metadata: { ...s.metadata, managedFields: [{ manager: 'policy-sync', operation: 'Update', time }] } };
  };
  const [{ bundle }] = pack({ put: copies(2), now: '2026-11-29T08:00:00Z' }).writes as [{ bundle: BundleWork }];
  const first = written(bundle, undefined, '2026-11-29T08:00:00Z');
  const edited = copies(2, 'shop', (i) => (i === 1 ? { rules: { authentication: { other: {} } } } : {}));
  const [{ bundle: next }] = pack({ observed: [first], put: edited, now: '2026-11-29T09:00:00Z' }).writes as [{ bundle: BundleWork }];
  const second = written(next, first, '2026-11-29T09:00:00Z');
  const [a0, a1] = unpackBundle(first)!;
  const [b0, b1] = unpackBundle(second)!;
  assert.ok(sameCopy(a0!, b0!), 'the neighbour is the same copy work: no change to reconcile');
  assert.ok(!sameCopy(a1!, b1!));
  assert.deepEqual(b0!.metadata.managedFields, [{ manager: 'policy-sync', operation: 'Update', time: '2026-11-29T08:00:00Z' }]);
  assert.deepEqual(b1!.metadata.managedFields, [{ manager: 'policy-sync', operation: 'Update', time: '2026-11-29T09:00:00Z' }]);
});

test('copies unpacked through a cache’s view: one policy’s copies on two clusters share what they hold alike, and every reader answers as on the plain copies', () => {
  const view = workCacheView();
  const bundlesOf = (cluster: string) => {
    const works = worksFor(
      Array.from({ length: 3 }, (_, i) => ({ ...authPolicy('shop', `p${i}`, 'gw'), metadata: { name: `p${i}`, namespace: 'shop', uid: `uid-${i}`, generation: 1 } })),
      'shop',
      [cluster],
      'example.com/policy-sync',
    );
    const [{ bundle }] = packBundles({ cluster, namespace: 'shop', observed: [], put: works, drop: new Set(), capBytes: 16 * 1024, controller: CONTROLLER, now: '2026-11-29T08:00:00Z' }).writes as [{ bundle: BundleWork }];
    // As the watcher hands it over: parsed, nothing frozen or shared yet.
    return JSON.parse(JSON.stringify(withAgentStatus(stored(bundle), 1))) as KubeObject;
  };
  // The first cluster's objects hold strings the table meets for the first time: kept, not shared (intern.ts).
  copiesOf(view(bundlesOf('c0')), view);
  const [c1, c2] = [bundlesOf('c1'), bundlesOf('c2')];
  const plain = copiesOf(c1);
  const kept1 = copiesOf(view(c1), view);
  const kept2 = copiesOf(view(c2), view);
  assert.equal(kept1.length, 3);
  kept1.forEach((kept, i) => {
    const other = kept2[i]!;
    assert.equal(kept.spec, other.spec, 'one spec object for the policy’s copies on both clusters');
    assert.equal(kept.metadata.labels, other.metadata.labels);
    assert.equal(kept.status, other.status, 'alike status, held once');
    assert.ok(Object.isFrozen(kept.spec));
    assert.equal(bundleOf(kept), c1.metadata.name, 'still known as carried by its bundle');
    const whole = plain[i]!;
    assert.equal(workState(kept), workState(whole));
    assert.deepEqual(readClusterFeedback(kept), readClusterFeedback(whole));
    assert.deepEqual(kept.spec!.workload, whole.spec!.workload);
    assert.deepEqual(kept.metadata.annotations, whole.metadata.annotations);
    assert.equal(kept.metadata.generation, whole.metadata.generation);
  });
});
