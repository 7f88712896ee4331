// Which tenant lanes a ManifestWork holds on its cluster (docs/design/tenancy.md#tenant-lanes): the downstream
// Gateways its copy targets, each held by the hub Gateway of that name in the source policy's namespace (a copy
// targets only Gateways of its policy's own namespace, renamed to nothing: the downstream Gateway has the hub
// Gateway's name). What the works show is who holds a lane first; core/targets/lanes.ts decides with it. Pure.
import { Generations } from '../k8s/intern.ts';
import { namespacedKey, type KubeObject } from '../k8s/objects.ts';
import { GATEWAY_GROUP, GATEWAY_KIND, readTargets } from '../targets/targetrefs.ts';
import { workIdentity } from './manifestwork.ts';

/** A downstream Gateway (`namespace/name` on the cluster) and the hub Gateway (`namespace/name`) holding it. */
export interface HeldLane {
  downstream: string;
  holder: string;
}

/** The lanes a work of a policy holds on its cluster; none for a work that is nobody's (workIdentity) or carries no copy. */
export function heldLanes(work: KubeObject): readonly HeldLane[] {
  const known = cache.get(work);
  if (known) return known;
  const source = workIdentity(work);
  const copy = (work.spec as { workload?: { manifests?: unknown[] } } | undefined)?.workload?.manifests?.[0] as KubeObject | undefined;
  const lanes: HeldLane[] = [];
  if (source && copy?.metadata && typeof copy.metadata.namespace === 'string') {
    for (const target of readTargets(copy)) {
      if (target.group !== GATEWAY_GROUP || target.kind !== GATEWAY_KIND) continue;
      const lane = { downstream: namespacedKey(copy.metadata.namespace, target.name), holder: namespacedKey(source.namespace, target.name) };
      if (!lanes.some((l) => l.downstream === lane.downstream && l.holder === lane.holder)) lanes.push(lane);
    }
  }
  // A cached work (its spec frozen and shared, cacheview.ts) is never mutated: read once each, and the
  // common answer (one lane) kept once for all the works of the policies on that downstream Gateway.
  if (work.spec !== undefined && Object.isFrozen(work.spec)) {
    const kept = lanes.length === 0 ? NO_LANES : lanes.length === 1 ? oneLane(lanes[0]!) : Object.freeze(lanes);
    cache.set(work, kept);
    return kept;
  }
  return lanes;
}
const cache = new WeakMap<object, readonly HeldLane[]>();
const NO_LANES: readonly HeldLane[] = Object.freeze([]);
const oneLanes = new Generations<string, readonly HeldLane[]>(4096, 1 << 16);

function oneLane(lane: HeldLane): readonly HeldLane[] {
  const key = `${lane.downstream}\n${lane.holder}`;
  const known = oneLanes.get(key);
  if (known) return known;
  const made = Object.freeze([Object.freeze(lane)]);
  oneLanes.set(key, made);
  return made;
}

/** The hub Gateways holding `downstream` among `works` (the works on one cluster). */
export function holdersOf(works: readonly KubeObject[], downstream: string): string[] {
  const holders = new Set<string>();
  for (const work of works) for (const lane of heldLanes(work)) if (lane.downstream === downstream) holders.add(lane.holder);
  return [...holders].sort();
}
