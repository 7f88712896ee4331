// Properties of packing (bundle.ts) over generated histories of puts and drops on one cluster and namespace, each
// step's writes stored as the apiserver would (a spec change moves the generation by one): a copy is carried by
// exactly one bundle from its first put until it is dropped — never lost, never moved, never in two — a dropped
// copy is carried by none, a bundle takes a new copy only with room for it (or empty), and unpacking gives every
// carried copy back as last put.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { checkProperty } from '../../../testkit/arbitraries.ts';
import { authPolicy } from '../../../testkit/fixtures.ts';
import { worksFor } from '../../../testkit/world.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { packBundles, readEntries, unpackBundle } from './bundle.ts';
import { controllerLabelValue, type ManifestWork } from './manifestwork.ts';

const CONTROLLER = controllerLabelValue('example.com/policy-sync');
const POLICIES = 12;

function copyWork(i: number, version: number, padding: number): ManifestWork {
  const name = `p${i}`;
  const policy = { ...authPolicy('shop', name, 'gw', version > 0 ? { version, padding: 'x'.repeat(padding) } : {}), metadata: { name, namespace: 'shop', uid: `uid-${i}`, generation: version + 1 } };
  return worksFor([policy], 'shop', ['c1'], 'example.com/policy-sync')[0]!;
}

type Step = { put: { i: number; version: number; padding: number }[]; drop: number[] };
const step: fc.Arbitrary<Step> = fc.record({
  put: fc.array(fc.record({ i: fc.nat(POLICIES - 1), version: fc.nat(3), padding: fc.constantFrom(0, 200, 3000) }), { maxLength: 6 }),
  drop: fc.array(fc.nat(POLICIES - 1), { maxLength: 3 }),
});

test('packing never loses, moves or doubles a copy, and fills bundles only with room', (t) => {
  checkProperty(t, 150, [fc.array(step, { minLength: 1, maxLength: 12 }), fc.constantFrom(2048, 4096, 16384)], (steps, capBytes) => {
    let bundles = new Map<string, KubeObject>();
    const home = new Map<string, string>(); // copy work name → bundle name
    const last = new Map<string, ManifestWork>();
    for (const { put, drop } of steps) {
      const works = put.map((p) => copyWork(p.i, p.version, p.padding));
      const dropped = new Set(drop.map((i) => copyWork(i, 0, 0).metadata.name));
      const observed = [...bundles.values()];
      const { writes, deletes } = packBundles({ cluster: 'c1', namespace: 'shop', observed, put: works, drop: dropped, capBytes, controller: CONTROLLER });
      for (const d of deletes) bundles.delete(d.metadata.name);
      for (const { bundle, observed: before } of writes) {
        assert.equal(before === undefined, !bundles.has(bundle.metadata.name), 'an update of what is observed, a create of what is not');
        const generation = before ? (before.metadata.generation ?? 0) + (JSON.stringify(before.spec) === JSON.stringify(bundle.spec) ? 0 : 1) : 1;
        // Copies new to a bundle came in only with room for them, or alone.
        const entries = readEntries(bundle)!;
        const newcomers = entries.filter((e) => !home.has(e.work));
        if (newcomers.length > 0 && entries.length > 1) assert.ok(bytesOf(bundle) <= capBytes, `${bundle.metadata.name} took a copy it had no room for`);
        bundles.set(bundle.metadata.name, { ...bundle, metadata: { ...bundle.metadata, generation, resourceVersion: String(generation) } });
      }
      bundles = new Map([...bundles].filter(([, b]) => b.spec !== undefined));
      for (const name of dropped) {
        home.delete(name);
        last.delete(name);
      }
      for (const w of works) {
        if (dropped.has(w.metadata.name)) continue;
        last.set(w.metadata.name, w);
      }
      // Where each copy is now: exactly one bundle, the one it was in before if any.
      const carriers = new Map<string, string[]>();
      for (const b of bundles.values()) for (const c of unpackBundle(b)!) carriers.set(c.metadata.name, [...(carriers.get(c.metadata.name) ?? []), b.metadata.name]);
      assert.deepEqual([...carriers.keys()].sort(), [...last.keys()].sort(), 'carried: every copy put and not dropped since, and no other');
      for (const [name, where] of carriers) {
        assert.equal(where.length, 1, `${name} in ${where.join(', ')}`);
        if (home.has(name)) assert.equal(where[0], home.get(name), `${name} moved`);
        home.set(name, where[0]!);
      }
      for (const b of bundles.values()) {
        for (const c of unpackBundle(b)!) {
          const want = last.get(c.metadata.name)!;
          assert.deepEqual(c.spec, want.spec);
          assert.deepEqual(c.metadata.annotations, want.metadata.annotations);
        }
      }
    }
  });
});

/** The bytes packing counts for a bundle: each entry's manifest and record. */
function bytesOf(bundle: KubeObject): number {
  const entries = readEntries(bundle)!;
  const manifests = (bundle.spec as { workload: { manifests: KubeObject[] } }).workload.manifests;
  return manifests.reduce((sum, m, i) => sum + Buffer.byteLength(JSON.stringify(m)) + Buffer.byteLength(JSON.stringify(entries[i])), 0);
}
