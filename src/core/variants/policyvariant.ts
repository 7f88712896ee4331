// The PolicyVariant resource (crds/policysync.kuadrant.io_policyvariants.yaml): per-cluster values for one hub
// policy in its namespace, as an ordered list of entries, each selecting clusters and saying what changes in their
// copy (a JSON merge patch of fixed values, and values read from the cluster). Parsed here once, with errors that
// name the field, since they are shown on the variant's status (docs/design/variants.md). Pure.
import { z } from 'zod';
import { labelSelectorSchema, type LabelSelector } from '../k8s/labelselector.ts';
import type { GroupVersionResource } from '../k8s/gvr.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { formatFieldPath, parseFieldPath, pathsOverlap, type PathSegment } from './fieldpath.ts';
import { mergePatchFields } from './mergepatch.ts';

export const POLICY_VARIANTS: GroupVersionResource = { group: 'policysync.kuadrant.io', version: 'v1alpha1', resource: 'policyvariants' };
export const POLICY_VARIANT_KIND = 'PolicyVariant';

/** Most entries of one variant, values of one entry, cluster names of one selection (also the CRD's maxItems). */
export const MAX_VARIANT_ENTRIES = 64;
export const MAX_ENTRY_VALUES = 32;
export const MAX_SELECTED_NAMES = 256;
/** Most bytes of one entry's patch, as JSON: the patch reaches every copy it selects. */
export const MAX_PATCH_BYTES = 16_384;

const valueFromSchema = z
  .strictObject({
    clusterName: z.strictObject({}).optional(),
    clusterLabel: z.strictObject({ key: z.string().min(1).max(317) }).optional(),
    clusterClaim: z.strictObject({ name: z.string().min(1).max(253) }).optional(),
  })
  .refine((v) => [v.clusterName, v.clusterLabel, v.clusterClaim].filter((s) => s !== undefined).length === 1, 'names exactly one of clusterName, clusterLabel, clusterClaim');

const entrySchema = z.strictObject({
  clusters: z
    .strictObject({
      names: z.array(z.string().min(1).max(253)).max(MAX_SELECTED_NAMES).optional(),
      labelSelector: labelSelectorSchema.optional(),
      claimSelector: labelSelectorSchema.optional(),
    })
    .optional(),
  patch: z.record(z.string(), z.unknown()).optional(),
  values: z
    .array(
      z.strictObject({
        path: z.string().min(1).max(1024),
        valueFrom: valueFromSchema,
        default: z.string().max(4096).optional(),
      }),
    )
    .max(MAX_ENTRY_VALUES)
    .optional(),
});

const specSchema = z.strictObject({
  targetRef: z.strictObject({ group: z.string().max(253), kind: z.string().min(1).max(63), name: z.string().min(1).max(253) }),
  entries: z.array(entrySchema).min(1).max(MAX_VARIANT_ENTRIES),
});

export type ValueSource = { from: 'clusterName' } | { from: 'clusterLabel'; key: string } | { from: 'clusterClaim'; name: string };

export interface VariantValue {
  path: PathSegment[];
  source: ValueSource;
  default?: string;
}

export interface ClusterSelection {
  names?: readonly string[];
  labelSelector?: LabelSelector;
  claimSelector?: LabelSelector;
}

export interface VariantEntry {
  /** Its index in spec.entries. */
  index: number;
  clusters: ClusterSelection;
  /** A JSON merge patch of the copy (only `spec`). */
  patch?: Record<string, unknown>;
  /** The fields the patch sets or removes. */
  patchFields: PathSegment[][];
  values: VariantValue[];
}

export interface PolicyVariant {
  namespace: string;
  name: string;
  generation: number;
  target: { group: string; kind: string; name: string };
  entries: VariantEntry[];
}

export type ParsedVariant = { ok: true; variant: PolicyVariant } | { ok: false; field: string; message: string };

/** The fields of a policy that are the hub's to decide: a variant changing them would move the copy to other Gateways. */
const TARGET_FIELDS: PathSegment[][] = [
  ['spec', 'targetRef'],
  ['spec', 'targetRefs'],
];

/**
 * A PolicyVariant as the pipeline uses it, or the first thing wrong with it, naming the field. A variant read
 * from the apiserver (it has a resourceVersion) is parsed once per object: the policy's reconcile and the
 * variant's status both read it, and a cached object is replaced, never changed.
 */
export function parseVariant(object: KubeObject): ParsedVariant {
  const resourceVersion = object.metadata.resourceVersion;
  if (resourceVersion === undefined) return parseVariantSpec(object);
  const known = parsedVariants.get(object);
  if (known?.resourceVersion === resourceVersion) return known.parsed;
  const parsed = parseVariantSpec(object);
  parsedVariants.set(object, { resourceVersion, parsed });
  return parsed;
}
const parsedVariants = new WeakMap<KubeObject, { resourceVersion: string; parsed: ParsedVariant }>();

function parseVariantSpec(object: KubeObject): ParsedVariant {
  const parsed = specSchema.safeParse(object.spec);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = ['spec', ...issue.path.map((p) => (typeof p === 'number' ? p : String(p)))];
    return { ok: false, field: formatFieldPath(field), message: issue.message };
  }
  const entries: VariantEntry[] = [];
  for (const [index, entry] of parsed.data.entries.entries()) {
    const at = `spec.entries[${index}]`;
    let patchFields: PathSegment[][] = [];
    if (entry.patch !== undefined) {
      const keys = Object.keys(entry.patch);
      const spec = entry.patch.spec;
      if (keys.some((k) => k !== 'spec') || spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
        return { ok: false, field: `${at}.patch`, message: 'a patch changes the policy\'s spec only: {"spec": {…}}' };
      }
      if (JSON.stringify(entry.patch).length > MAX_PATCH_BYTES) return { ok: false, field: `${at}.patch`, message: `larger than ${MAX_PATCH_BYTES} bytes` };
      patchFields = mergePatchFields(entry.patch);
      const target = patchFields.find((f) => TARGET_FIELDS.some((t) => pathsOverlap(f, t)));
      if (target) return { ok: false, field: `${at}.patch`, message: `${formatFieldPath(target)}: the policy's targets are the hub's, a variant does not change them` };
    }
    const values: VariantValue[] = [];
    for (const [i, value] of (entry.values ?? []).entries()) {
      const field = `${at}.values[${i}].path`;
      const path = parseFieldPath(value.path);
      if (!path.ok) return { ok: false, field, message: path.message };
      if (TARGET_FIELDS.some((t) => pathsOverlap(path.segments, t))) return { ok: false, field, message: "the policy's targets are the hub's, a variant does not change them" };
      const { valueFrom } = value;
      const source: ValueSource = valueFrom.clusterLabel ? { from: 'clusterLabel', key: valueFrom.clusterLabel.key } : valueFrom.clusterClaim ? { from: 'clusterClaim', name: valueFrom.clusterClaim.name } : { from: 'clusterName' };
      values.push({ path: path.segments, source, ...(value.default === undefined ? {} : { default: value.default }) });
    }
    if (patchFields.length === 0 && values.length === 0) return { ok: false, field: at, message: 'changes nothing: give a patch or values' };
    const c = entry.clusters ?? {};
    const clusters: ClusterSelection = {
      ...(c.names ? { names: c.names } : {}),
      ...(c.labelSelector ? { labelSelector: c.labelSelector } : {}),
      ...(c.claimSelector ? { claimSelector: c.claimSelector } : {}),
    };
    entries.push({ index, clusters, ...(entry.patch ? { patch: entry.patch } : {}), patchFields, values });
  }
  const { targetRef } = parsed.data;
  return {
    ok: true,
    variant: {
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name,
      generation: object.metadata.generation ?? 0,
      target: { group: targetRef.group, kind: targetRef.kind, name: targetRef.name },
      entries,
    },
  };
}

/** What a value source is, as a person reads it: `label kuadrant.io/lb-attribute-geo-code`. */
export function sourceText(source: ValueSource): string {
  switch (source.from) {
    case 'clusterName':
      return 'the cluster name';
    case 'clusterLabel':
      return `label ${source.key}`;
    case 'clusterClaim':
      return `claim ${source.name}`;
  }
}
