// Where each copy write goes, once a plan (desiredworks.ts diffWorks) says per copy what changes: into a work of
// its own, as always, or into its cluster's bundle (bundle.ts, docs/design/fleet.md#the-shape). Pure: the applier
// (hub/workapplier.ts) calls it with what the works cache says carries each copy.
//
// - A copy a bundle carries stays in bundles: its changes are put there, whatever the shape.
// - A new copy goes where the shape says.
// - A copy in a work of its own moves into a bundle when the shape is `bundled`, without a spoke DELETE: it is put
//   into its bundle while its own work stays; once the agent reports it Applied there (the bundle's
//   AppliedManifestWork owns the copy too), the own work is retired — deleted, and the agent only takes that work's
//   owner reference off the copy (bundle-agent.test.ts proves it on OCM's agent). While both carry it, both carry
//   the same copy: a change is written to both, so that the two agents' applies never disagree.
// - The other way (bundles back to works of their own) is not taken: a copy in a bundle stays there.
import type { KubeObject } from '../k8s/objects.ts';
import { workKeyOf, type WorkKey } from '../keys.ts';
import { bundleOf } from './bundle.ts';
import { readSpecHash, type ManifestWork } from './manifestwork.ts';
import { workState } from './workstate.ts';

/** Where new copies go: one ManifestWork per copy (today's), or bundles. */
export type WorkShape = 'per-placement' | 'bundled';
export const WORK_SHAPES: readonly WorkShape[] = ['per-placement', 'bundled'];

export interface CopyRoutesInput {
  shape: WorkShape;
  /** Every desired copy, by key. */
  desired: ReadonlyMap<WorkKey, ManifestWork>;
  /** The plan's writes (diffWorks over what the cache shows of each copy). */
  create: readonly ManifestWork[];
  apply: readonly ManifestWork[];
  /** Every work carrying the copy of `key`: its own work, a bundle's entry, or both while it moves. */
  carriers: (key: WorkKey) => readonly KubeObject[];
}

export interface CopyRoutes {
  /** Works of their own to create or apply. */
  create: ManifestWork[];
  apply: ManifestWork[];
  /** Copies to put into their bundles. */
  put: ManifestWork[];
  /** Works of their own whose copy a bundle now carries applied, equal: deleted without a copy deleted. */
  retire: KubeObject[];
}

export function routeCopies(input: CopyRoutesInput): CopyRoutes {
  const out: CopyRoutes = { create: [], apply: [], put: [], retire: [] };
  const written = new Set<WorkKey>();
  const carried = (key: WorkKey) => {
    const carriers = input.carriers(key);
    return { own: carriers.find((c) => bundleOf(c) === undefined), bundled: carriers.find((c) => bundleOf(c) !== undefined) };
  };
  const toBundle = (bundled: KubeObject | undefined) => bundled !== undefined || input.shape === 'bundled';

  for (const [writes, created] of [[input.create, true], [input.apply, false]] as const) {
    for (const work of writes) {
      const key = workKeyOf(work);
      written.add(key);
      const { own, bundled } = carried(key);
      if (!toBundle(bundled)) {
        (created ? out.create : out.apply).push(work);
        continue;
      }
      out.put.push(work);
      // Moving: its own work carries the same copy as the bundle until retired.
      if (own && readSpecHash(own) !== readSpecHash(work)) out.apply.push(work);
    }
  }
  // Copies the plan leaves as they are (the cache shows them equal), in a work of their own and to move, or moving.
  for (const [key, work] of input.desired) {
    if (written.has(key)) continue;
    const { own, bundled } = carried(key);
    if (!own || !toBundle(bundled)) continue;
    const hash = readSpecHash(work);
    if (readSpecHash(own) !== hash) out.apply.push(work);
    if (!bundled || readSpecHash(bundled) !== hash) out.put.push(work);
    else if (readSpecHash(own) === hash && workState(bundled) === 'applied') out.retire.push(own);
  }
  return out;
}
