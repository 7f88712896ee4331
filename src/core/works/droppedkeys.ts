// Labels and annotations the hub copy no longer carries, so that they leave the spoke copies
// (docs/design/works.md#manifestworks). Pure.
//
// OCM's work agent (v1.2.1, pkg/work/spoke/apply/update_apply.go) applies a copy under the `Update` strategy by
// merging the copy's labels and annotations into the spoke object (library-go resourcemerge.MergeMap): a key the
// hub copy dropped stays on the spoke copy. MergeMap removes a key only when it is sent as `<key>-`, and no such
// key can travel: the hub apiserver validates a ManifestWork's manifests as embedded objects
// (x-kubernetes-embedded-resource), and `<key>-` is no qualified name, so the whole work would be refused (422)
// and the policy stuck on every cluster. Under `ServerSideApply` the apiserver removes what our field manager no
// longer applies: nothing to do there.
//
// So under `Update` the copy names what it dropped, in one annotation of ours: every key the copy as last sent
// carried (or named as dropped already) that the new copy lacks. It is stable — kept while the key stays absent,
// so a restart on an unchanged world computes the same copy and writes nothing — and never names a key the sync
// writes on every copy. The spoke agent removes the named keys from the copy (spoke/droppedkeysreconciler.ts, with
// droppedKeysPatch): it patches the sync's own copies only, and only those keys.
import { canonicalJson } from '../k8s/canonical.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { parseJson } from '../k8s/parsejson.ts';
import { DIGEST_ANNOTATION, ORIGIN_CREATION_ANNOTATION, OWN_KEY_PREFIX, POLICY_SYNCED_ANNOTATION, REVISION_ANNOTATION } from '../metadatakeys.ts';
import { z } from 'zod';

/** On a spoke copy (Update strategy): canonical JSON `{annotations: [...], labels: [...]}` of the keys the hub copy dropped. */
export const DROPPED_KEYS_ANNOTATION = `${OWN_KEY_PREFIX}dropped-keys`;

export interface DroppedKeys {
  labels: string[];
  annotations: string[];
}

/** Keys the sync writes on every copy (or on none): never named as dropped, whatever an older copy carried. */
const SYNC_ANNOTATIONS: ReadonlySet<string> = new Set([POLICY_SYNCED_ANNOTATION, ORIGIN_CREATION_ANNOTATION, REVISION_ANNOTATION, DROPPED_KEYS_ANNOTATION, DIGEST_ANNOTATION]);

const droppedSchema = z.object({ labels: z.array(z.string()).default([]), annotations: z.array(z.string()).default([]) });

/** The keys a copy names as dropped; none when it names none or the annotation does not parse. */
export function readDroppedKeys(copy: KubeObject | undefined): DroppedKeys {
  const parsed = parseJson(copy?.metadata.annotations?.[DROPPED_KEYS_ANNOTATION], droppedSchema);
  return parsed ? { labels: parsed.labels, annotations: parsed.annotations } : { labels: [], annotations: [] };
}

/**
 * The keys `previous` (the copy as last sent to the cluster; undefined where none was) carried or named as
 * dropped, that `next` lacks: sorted, without the keys the sync writes itself.
 */
export function droppedKeys(previous: KubeObject | undefined, next: KubeObject): DroppedKeys {
  if (!previous) return { labels: [], annotations: [] };
  const before = readDroppedKeys(previous);
  const gone = (had: Iterable<string>, has: Record<string, unknown> | undefined, skip: (key: string) => boolean): string[] =>
    [...new Set(had)].filter((key) => !skip(key) && !Object.hasOwn(has ?? {}, key)).sort();
  return {
    labels: gone([...Object.keys(previous.metadata.labels ?? {}), ...before.labels], next.metadata.labels, () => false),
    annotations: gone([...Object.keys(previous.metadata.annotations ?? {}), ...before.annotations], next.metadata.annotations, (key) => SYNC_ANNOTATIONS.has(key)),
  };
}

/**
 * `copy` naming the keys `previous` had that it lacks (droppedKeys); `copy` itself when none and `previous` named
 * none. When `previous` named some and none is dropped now (a key put back), the copy names none explicitly: the
 * work agent merges annotations, so a copy without the annotation would leave the old list on the spoke, and the
 * spoke agent would remove the key put back (the seeded soak, seed 13, found a label removed that way). Never mutates.
 */
export function withDroppedKeys(copy: KubeObject, previous: KubeObject | undefined): KubeObject {
  const dropped = droppedKeys(previous, copy);
  const none = dropped.labels.length === 0 && dropped.annotations.length === 0;
  if (none && previous?.metadata.annotations?.[DROPPED_KEYS_ANNOTATION] === undefined) return copy;
  return { ...copy, metadata: { ...copy.metadata, annotations: { ...copy.metadata.annotations, [DROPPED_KEYS_ANNOTATION]: canonicalJson(dropped) } } };
}

/**
 * For the spoke agent: the JSON merge patch removing from a spoke copy the keys its dropped-keys annotation
 * names and it still carries, guarded by the object's resourceVersion (a copy the work agent rewrote meanwhile
 * is looked at again); undefined when there is nothing to remove. Only a copy of ours (kuadrant.io/policy-synced)
 * is ever touched.
 */
export function droppedKeysPatch(object: KubeObject): Record<string, unknown> | undefined {
  if (object.metadata.annotations?.[POLICY_SYNCED_ANNOTATION] === undefined) return undefined;
  const dropped = readDroppedKeys(object);
  const labels = dropped.labels.filter((key) => Object.hasOwn(object.metadata.labels ?? {}, key));
  const annotations = dropped.annotations.filter((key) => !SYNC_ANNOTATIONS.has(key) && Object.hasOwn(object.metadata.annotations ?? {}, key));
  if (labels.length === 0 && annotations.length === 0) return undefined;
  const metadata: Record<string, unknown> = {};
  if (object.metadata.resourceVersion !== undefined) metadata.resourceVersion = object.metadata.resourceVersion;
  if (labels.length > 0) metadata.labels = Object.fromEntries(labels.map((key) => [key, null]));
  if (annotations.length > 0) metadata.annotations = Object.fromEntries(annotations.map((key) => [key, null]));
  return { metadata };
}
