// What the caches keep of an object: only what is read back (client-go's SetTransform). The apiserver
// sends every object whole; at 10k ManifestWorks their payloads and managedFields would be most of the
// controller's memory, and nothing reads them.
import { Interner } from '../k8s/intern.ts';
import { LAST_APPLIED_ANNOTATION, POLICY_SYNCED_ANNOTATION } from '../metadatakeys.ts';
import { isBundle } from './bundle.ts';
import type { KubeObject, ObjectMeta } from '../k8s/objects.ts';

/**
 * Any object: without managedFields and kubectl's last-applied annotation (a second copy of the spec,
 * never copied to a spoke). Everything else stays as sent.
 */
export function cachedObject<T extends KubeObject>(object: T): T {
  return { ...object, metadata: slimMetadata(object.metadata, false) };
}

/**
 * The transform of the spoke agent's caches of the synced kinds: as cachedObject, but a synced copy keeps who wrote
 * which of its fields (managedFields: manager, operation, time, subresource, fieldsV1), which the agent reads to
 * say what drifted and who changed it (core/spoke/copydrift.ts). Copies are few on a spoke; local policies many.
 */
export function spokeObjectView<T extends KubeObject>(object: T): T {
  const slim = cachedObject(object);
  const managedFields = object.metadata.managedFields;
  if (object.metadata.annotations?.[POLICY_SYNCED_ANNOTATION] === undefined || !Array.isArray(managedFields)) return slim;
  slim.metadata.managedFields = managedFields.map(fieldsEntry);
  return slim;
}

function fieldsEntry(entry: unknown): Record<string, unknown> {
  if (entry === null || typeof entry !== 'object') return {};
  const { manager, operation, time, subresource, fieldsV1 } = entry as Record<string, unknown>;
  return Object.fromEntries(Object.entries({ manager, operation, time, subresource, fieldsV1 }).filter(([, v]) => v !== undefined));
}

/**
 * The transform of a ManifestWork cache: each work as the hub reads it back — metadata (managedFields down
 * to when and through which subresource each manager wrote: feedback.ts dates an apply by it), status
 * whole, and of the spec only the copy each manifest places (manifestIdentity). The feedback rules and the
 * delete option are known from the spec-hash annotation. A bundle (works/bundle.ts) keeps its spec whole:
 * its copies are read from it, and a change to one copy is written by packing over the others.
 *
 * What the works of one cache hold alike (all but uid and resourceVersion) is shared between them through
 * one table, `interner`, frozen (intern.ts): the 20 works of a policy on 20 clusters share its labels,
 * annotations and spec, and all policies' works their condition and feedback names. The transform takes
 * over the parts of each work it keeps (the watcher hands over what it parsed): they are frozen, and those
 * equal to shared ones replaced by them in place.
 */
export function workCacheView(interner = new Interner()): <T extends KubeObject>(work: T) => T {
  return <T extends KubeObject>(work: T): T => {
    const manifests = (work.spec as { workload?: { manifests?: unknown } } | undefined)?.workload?.manifests;
    const spec = isBundle(work) ? interner.value(work.spec as Record<string, unknown>) : Array.isArray(manifests) ? interner.value({ workload: { manifests: manifests.map(manifestIdentity) } }) : undefined;
    const status = work.status === undefined ? undefined : interner.value(work.status);
    return workView(interner.value(work.apiVersion), interner.value(work.kind), workMetadata(work.metadata, interner), spec, status) as T;
  };
}

/** What is a work's own: equal to no other's (in the table, it would only push out what is shared). */
const OWN_FIELDS: ReadonlySet<string> = new Set(['uid', 'resourceVersion']);

function workMetadata(metadata: ObjectMeta, interner: Interner): ObjectMeta {
  const slim = slimMetadata(metadata, true);
  for (const key of Object.keys(slim)) if (!OWN_FIELDS.has(key)) slim[key] = interner.value(slim[key]);
  return slim;
}

/** One literal per shape: a property added to an object literal later goes to a separate backing store. */
function workView(apiVersion: string, kind: string, metadata: ObjectMeta, spec: Record<string, unknown> | undefined, status: unknown): KubeObject {
  if (spec === undefined) return status === undefined ? { apiVersion, kind, metadata } : { apiVersion, kind, metadata, status };
  return status === undefined ? { apiVersion, kind, metadata, spec } : { apiVersion, kind, metadata, spec, status };
}

function slimMetadata(metadata: ObjectMeta, keepWriteTimes: boolean): ObjectMeta {
  const { managedFields, ...rest } = metadata;
  const slim: ObjectMeta = rest;
  if (keepWriteTimes && Array.isArray(managedFields)) slim.managedFields = managedFields.map(writeTime);
  if (rest.annotations && LAST_APPLIED_ANNOTATION in rest.annotations) {
    const { [LAST_APPLIED_ANNOTATION]: _dropped, ...annotations } = rest.annotations;
    slim.annotations = annotations;
  }
  return slim;
}

function writeTime(entry: unknown): { time?: unknown; subresource?: unknown } {
  if (entry === null || typeof entry !== 'object') return {};
  const { time, subresource } = entry as { time?: unknown; subresource?: unknown };
  if (subresource === undefined) return time === undefined ? {} : { time };
  return time === undefined ? { subresource } : { time, subresource };
}

/**
 * The copy a work places, as the hub reads it back: its identity, targets and revision (feedback.ts, the
 * status), and its whole spec and metadata, which a Progressive rollout compares and keeps to roll back to
 * (core/rollout). The works of one policy on many clusters hold one copy alike: the interner keeps it once.
 */
function manifestIdentity(manifest: unknown): unknown {
  if (manifest === null || typeof manifest !== 'object') return manifest;
  const { apiVersion, kind, metadata, spec } = manifest as { apiVersion?: unknown; kind?: unknown; metadata?: Record<string, unknown>; spec?: unknown };
  const { name, namespace, labels, annotations } = metadata ?? {};
  const meta: Record<string, unknown> = { name };
  if (namespace !== undefined) meta.namespace = namespace;
  if (labels !== undefined) meta.labels = labels;
  if (annotations !== undefined) meta.annotations = annotations;
  const identity: Record<string, unknown> = { apiVersion, kind, metadata: meta };
  if (spec !== undefined) identity.spec = spec;
  return identity;
}
