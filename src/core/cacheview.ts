// What the caches keep of an object: only what is read back (client-go's SetTransform). The apiserver
// sends every object whole; at 10k ManifestWorks their payloads and managedFields would be most of the
// controller's memory, and nothing reads them.
import { LAST_APPLIED_ANNOTATION } from './metadatakeys.ts';
import type { KubeObject, ObjectMeta } from './objects.ts';

/**
 * Any object: without managedFields and kubectl's last-applied annotation (a second copy of the spec,
 * never copied to a spoke). Everything else stays as sent.
 */
export function cachedObject<T extends KubeObject>(object: T): T {
  return { ...object, metadata: slimMetadata(object.metadata, false) };
}

/**
 * A ManifestWork as the hub reads it back: metadata (managedFields down to when and through which
 * subresource each manager wrote: feedback.ts dates an apply by it), status whole, and of the spec only
 * each manifest's identity and targets (feedback.ts matches ancestor entries to the copy's Gateways).
 * The copy's payload, the feedback rules and the delete option are known from the spec-hash annotation.
 */
export function cachedWork<T extends KubeObject>(work: T): T {
  const manifests = (work.spec as { workload?: { manifests?: unknown } } | undefined)?.workload?.manifests;
  const view: KubeObject = { apiVersion: work.apiVersion, kind: work.kind, metadata: slimMetadata(work.metadata, true) };
  if (Array.isArray(manifests)) view.spec = { workload: { manifests: manifests.map(manifestIdentity) } };
  if (work.status !== undefined) view.status = work.status;
  return view as T;
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
  return { ...(time === undefined ? {} : { time }), ...(subresource === undefined ? {} : { subresource }) };
}

function manifestIdentity(manifest: unknown): unknown {
  if (manifest === null || typeof manifest !== 'object') return manifest;
  const { apiVersion, kind, metadata, spec } = manifest as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown }; spec?: Record<string, unknown> };
  const identity: Record<string, unknown> = { apiVersion, kind, metadata: { name: metadata?.name, ...(metadata?.namespace === undefined ? {} : { namespace: metadata.namespace }) } };
  if (spec && typeof spec === 'object') {
    const targets: Record<string, unknown> = {};
    if (spec.targetRef !== undefined) targets.targetRef = spec.targetRef;
    if (spec.targetRefs !== undefined) targets.targetRefs = spec.targetRefs;
    identity.spec = targets;
  }
  return identity;
}
