// The digest of what the hub sends in a spoke copy, carried on the copy itself (annotation DIGEST_ANNOTATION) so
// that the spoke agent can tell whether the copy that runs is the one sent (core/spoke/copydrift.ts) without the
// hub's content: one short hash of each top-level spec field, of the labels and of the annotations (but the digest
// itself), made by the code that makes a work's spec-hash (canonical JSON, specHash). Per field, so that a removal
// or a change no field manager owns is still named by the field it is in, in a few hundred bytes.
//
// The spec is hashed as the spoke apiserver stores it: with the defaults of the kind's schema applied (the hub
// serves the CRD the spokes run; a field the apiserver defaults is part of what runs). Pure.
import { canonicalJson, specHash } from '../k8s/canonical.ts';
import { withSchemaDefaults, type DefaultingSchema } from '../k8s/schemadefaults.ts';
import { DIGEST_ANNOTATION } from '../metadatakeys.ts';
import type { KubeObject } from '../k8s/objects.ts';

/** The digest as carried: canonical JSON of this. */
export interface CopyDigest {
  /** The hash of each top-level field of the spec, by name. */
  spec: Record<string, string>;
  labels: string;
  annotations: string;
}

/** Hex digits of each hash: 64 bits, a collision by chance is not a concern at this scale. */
const HASH_LENGTH = 16;

export function partHash(value: unknown): string {
  return specHash(value ?? null).slice(0, HASH_LENGTH);
}

/** The labels and annotations of a copy that the digest covers: every one but the digest. */
export function digestedAnnotations(annotations: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const { [DIGEST_ANNOTATION]: _self, ...rest } = annotations ?? {};
  return rest;
}

/** The digest of a copy's spec (defaulted by `specSchema`, the schema's `spec` property, when known), labels and annotations. */
export function copyDigest(copy: KubeObject, specSchema?: DefaultingSchema): CopyDigest {
  const raw = (copy as { spec?: unknown }).spec;
  const spec = specSchema && raw !== undefined ? withSchemaDefaults(raw, specSchema) : raw;
  const fields: Record<string, string> = {};
  if (spec !== null && typeof spec === 'object' && !Array.isArray(spec)) {
    for (const [key, value] of Object.entries(spec as Record<string, unknown>)) fields[key] = partHash(value);
  }
  return { spec: fields, labels: partHash(copy.metadata.labels ?? {}), annotations: partHash(digestedAnnotations(copy.metadata.annotations)) };
}

/** The copy with its digest annotation (re)computed: the last step before it goes into a work. */
export function withCopyDigest(copy: KubeObject, specSchema?: DefaultingSchema): KubeObject {
  const text = canonicalJson(copyDigest(copy, specSchema));
  if (copy.metadata.annotations?.[DIGEST_ANNOTATION] === text) return copy;
  return { ...copy, metadata: { ...copy.metadata, annotations: { ...copy.metadata.annotations, [DIGEST_ANNOTATION]: text } } };
}

/** The digest a copy carries; undefined when it carries none or one that does not read (an older hub's copy: unknown). */
export function readCopyDigest(copy: KubeObject): CopyDigest | undefined {
  const text = copy.metadata.annotations?.[DIGEST_ANNOTATION];
  if (text === undefined || text.length > 16_384) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const { spec, labels, annotations } = value as Record<string, unknown>;
  const hash = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{16}$/.test(v);
  if (!hash(labels) || !hash(annotations) || spec === null || typeof spec !== 'object' || Array.isArray(spec)) return undefined;
  const fields = Object.entries(spec as Record<string, unknown>);
  if (!fields.every(([, v]) => hash(v))) return undefined;
  return { spec: Object.fromEntries(fields) as Record<string, string>, labels, annotations };
}
