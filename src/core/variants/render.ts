// One cluster's copy of a hub policy with the variants that select the cluster applied (docs/design/variants.md):
// each variant in name order, its entries in order, a later entry winning over an earlier one of the same variant;
// two variants setting one field of one cluster's copy are a conflict. The rendered copy is checked against the
// kind's schema before it is sent. A cluster whose copy cannot be rendered (a value missing, a conflict, a copy
// the schema refuses) gets no copy from here: the pipeline keeps the one it runs. Pure.
import { selectorMatches } from '../k8s/labelselector.ts';
import { canonicalJson, sharedCanonical } from '../k8s/canonical.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { REVISION_ANNOTATION, VARIANTS_ANNOTATION } from '../metadatakeys.ts';
import { formatRevisionAnnotation, parseRevisionAnnotation, revisionTag } from '../revisionannotation.ts';
import { formatFieldPath, pathsOverlap, setAtPath, type PathSegment } from './fieldpath.ts';
import { applyMergePatch } from './mergepatch.ts';
import { sourceText, type ClusterSelection, type PolicyVariant, type ValueSource } from './policyvariant.ts';
import { schemaAt, type OpenApiSchema, type SchemaCheck } from './schemacheck.ts';

/** What a variant may read of a cluster: its name, its ManagedCluster labels and ClusterClaims. */
export interface ClusterFacts {
  name: string;
  labels: Readonly<Record<string, string>>;
  claims: Readonly<Record<string, string>>;
}

/** One field a variant set in a cluster's copy, and from where (explain shows them). */
export interface AppliedField {
  path: string;
  value: unknown;
  variant: string;
  entry: number;
  /** `patch`, or the cluster fact the value was read from. */
  source: 'patch' | ValueSource;
  /** The value is the entry's default: the cluster lacks the label or claim. */
  defaulted?: boolean;
}

export type VariantFailureReason = 'InvalidVariant' | 'VariantValueMissing' | 'VariantConflict';

export type CopyRendering =
  /** No variant selects the cluster: the policy's copy as it is. */
  | { state: 'base' }
  | {
      state: 'rendered';
      copy: KubeObject;
      fields: AppliedField[];
      /** The variants applied, `name@generation`, in name order (the copy's VARIANTS_ANNOTATION). */
      carried: string[];
    }
  | { state: 'failed'; reason: VariantFailureReason; message: string; variants: string[] };

/** The kind's schema as the hub serves it, to convert values and check copies; or why it cannot be. */
export type KindSchema = { ok: true; schema: OpenApiSchema; check: SchemaCheck } | { ok: false; message: string };

export interface RenderInput {
  /** The policy's copy for the cluster, targets rewritten, as it goes out with no variant. */
  copy: KubeObject;
  cluster: ClusterFacts;
  /** The accepted variants of the policy, in name order. */
  variants: readonly PolicyVariant[];
  schema: KindSchema;
  /**
   * The copy the cluster runs (its work's), if any. When it carries the same variants and the same spec as the
   * rendering, its record of their generations is kept: an edit of a variant that changes nothing in this
   * cluster's copy writes nothing here.
   */
  running?: KubeObject;
}

/** Whether an entry's selection takes the cluster: every criterion given holds (none given: every cluster). */
export function selects(selection: ClusterSelection, cluster: ClusterFacts): boolean {
  if (selection.names && !selection.names.includes(cluster.name)) return false;
  if (selection.labelSelector && !selectorMatches(selection.labelSelector, cluster.labels)) return false;
  if (selection.claimSelector && !selectorMatches(selection.claimSelector, cluster.claims)) return false;
  return true;
}

/** Thrown inside renderCopy only, and caught there: the first thing that keeps a cluster's copy from rendering. */
class Failure extends Error {
  constructor(
    readonly reason: VariantFailureReason,
    message: string,
    readonly variants: string[],
  ) {
    super(message);
  }
}

export function renderCopy(input: RenderInput): CopyRendering {
  const { copy, cluster, schema } = input;
  let root: Record<string, unknown> = { spec: copy.spec ?? {} };
  const fields: AppliedField[] = [];
  const carried: string[] = [];
  const owners: { path: PathSegment[]; variant: string; entry: number }[] = [];
  const claim = (path: PathSegment[], variant: PolicyVariant, entry: number): void => {
    const other = owners.find((o) => o.variant !== variant.name && pathsOverlap(o.path, path));
    if (other) {
      throw new Failure(
        'VariantConflict',
        `variants ${other.variant} (entry ${other.entry}) and ${variant.name} (entry ${entry}) both set ${formatFieldPath(path)} on cluster ${cluster.name}: it keeps the copy it runs`,
        [other.variant, variant.name],
      );
    }
    owners.push({ path, variant: variant.name, entry });
  };
  try {
    for (const variant of input.variants) {
      let selected = false;
      for (const entry of variant.entries) {
        if (!selects(entry.clusters, cluster)) continue;
        selected = true;
        if (entry.patch) {
          for (const field of entry.patchFields) claim(field, variant, entry.index);
          root = applyMergePatch(root, entry.patch) as Record<string, unknown>;
          for (const field of entry.patchFields) fields.push({ path: formatFieldPath(field), value: valueAt(root, field) ?? null, variant: variant.name, entry: entry.index, source: 'patch' });
        }
        for (const value of entry.values) {
          const where = (): string => `variant ${variant.name} entry ${entry.index} (${formatFieldPath(value.path)})`;
          const read = readSource(value.source, cluster);
          const raw = read ?? value.default;
          if (raw === undefined) {
            throw new Failure('VariantValueMissing', `${where()}: ${sourceText(value.source)} is not set on cluster ${cluster.name} and the value has no default`, [variant.name]);
          }
          if (!schema.ok) throw new Failure('InvalidVariant', `${where()}: ${schema.message}`, [variant.name]);
          const at = schemaAt(schema.schema, value.path);
          if (!at.ok) throw new Failure('InvalidVariant', `${where()}: ${at.message}`, [variant.name]);
          const converted = convertValue(raw, at.schema);
          if (!converted.ok) {
            const what = read === undefined ? `the default "${raw}"` : `${sourceText(value.source)} = "${raw}" on cluster ${cluster.name}`;
            throw new Failure('InvalidVariant', `${where()}: ${what} is not ${converted.wanted}`, [variant.name]);
          }
          claim(value.path, variant, entry.index);
          const set = setAtPath(root, value.path, converted.value);
          if (!set.ok) throw new Failure('InvalidVariant', `${where()}: ${set.message}`, [variant.name]);
          root = set.value;
          fields.push({ path: formatFieldPath(value.path), value: converted.value, variant: variant.name, entry: entry.index, source: value.source, ...(read === undefined ? { defaulted: true } : {}) });
        }
      }
      if (selected) carried.push(`${variant.name}@${variant.generation}`);
    }
    if (carried.length === 0) return { state: 'base' };
    // Serialised once (and frozen): its tag, and the work's spec-hash, read the same text.
    const spec = sharedCanonical((root.spec ?? {}) as Record<string, unknown>);
    // The revision names the rendered spec too (core/revisionannotation.ts): a variant change or a label a variant
    // reads changes the copy at the same generation, and only the tag tells a verdict on it from one on the copy before.
    const tag = revisionTag(spec);
    const kept = sameRendering(input.running, carried, spec, tag);
    if (kept) carried.splice(0, carried.length, ...kept);
    const base = parseRevisionAnnotation(copy.metadata.annotations?.[REVISION_ANNOTATION]);
    const revision: Record<string, string> = base === undefined ? {} : { [REVISION_ANNOTATION]: formatRevisionAnnotation({ revision: base.revision, tag }) };
    const rendered: KubeObject = {
      ...copy,
      metadata: { ...copy.metadata, annotations: { ...copy.metadata.annotations, ...revision, [VARIANTS_ANNOTATION]: carried.join(',') } },
      spec,
    };
    if (!schema.ok) throw new Failure('InvalidVariant', `${cluster.name}: ${schema.message}`, carried.map(nameOf));
    // Only what the variants set can break a copy the hub's apiserver accepted as the policy.
    // The policy's copy is the base of every cluster's rendering of it: the rules that cannot tell them apart are
    // evaluated once for them all.
    const violations = schema.check(rendered, owners.map((o) => o.path), copy);
    if (violations.length > 0) {
      const first = violations[0]!;
      const owner = owners.find((o) => pathsOverlap(o.path, first.path));
      const by = owner ? `variant ${owner.variant} entry ${owner.entry}` : `variants ${carried.map(nameOf).join(', ')}`;
      const more = violations.length > 1 ? ` (and ${violations.length - 1} more)` : '';
      throw new Failure('InvalidVariant', `${by}: the copy for cluster ${cluster.name} does not validate: ${first.message}${more}`, owner ? [owner.variant] : carried.map(nameOf));
    }
    return { state: 'rendered', copy: rendered, fields, carried };
  } catch (err) {
    if (err instanceof Failure) return { state: 'failed', reason: err.reason, message: err.message, variants: [...new Set(err.variants)] };
    throw err;
  }
}

/**
 * The running copy's record of the variants it carries, when it names the same variants and has the same spec:
 * told by the tag its revision names (`tag`, the rendered spec's), else by the specs themselves.
 */
function sameRendering(running: KubeObject | undefined, carried: readonly string[], spec: unknown, tag: string): string[] | undefined {
  const record = running?.metadata.annotations?.[VARIANTS_ANNOTATION]?.split(',');
  if (!record || record.length !== carried.length || !record.every((r, i) => nameOf(r) === nameOf(carried[i]!))) return undefined;
  const runningTag = parseRevisionAnnotation(running?.metadata.annotations?.[REVISION_ANNOTATION])?.tag;
  const same = runningTag !== undefined ? runningTag === tag : canonicalJson(running?.spec ?? {}) === canonicalJson(spec);
  return same ? record : undefined;
}

function nameOf(carried: string): string {
  return carried.slice(0, carried.lastIndexOf('@'));
}

/** What a fact of the cluster says; an empty label or claim is no value (never an empty string sent). */
function readSource(source: ValueSource, cluster: ClusterFacts): string | undefined {
  const value = source.from === 'clusterName' ? cluster.name : source.from === 'clusterLabel' ? cluster.labels[source.key] : cluster.claims[source.name];
  return value === undefined || value === '' ? undefined : value;
}

function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let node = root;
  for (const segment of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
}

const INTEGER = /^[+-]?[0-9]+$/;
const NUMBER = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/;

/** A cluster fact (text) as the type the schema gives the field: a label "120" is the integer 120 for `weight`. */
export function convertValue(raw: string, schema: OpenApiSchema | undefined): { ok: true; value: unknown } | { ok: false; wanted: string } {
  if (schema === undefined) return { ok: true, value: raw };
  if (schema['x-kubernetes-int-or-string'] === true) return { ok: true, value: INTEGER.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : raw };
  switch (schema.type) {
    case 'integer':
      return INTEGER.test(raw) && Number.isSafeInteger(Number(raw)) ? { ok: true, value: Number(raw) } : { ok: false, wanted: 'an integer' };
    case 'number':
      return NUMBER.test(raw) && Number.isFinite(Number(raw)) ? { ok: true, value: Number(raw) } : { ok: false, wanted: 'a number' };
    case 'boolean':
      return raw === 'true' || raw === 'false' ? { ok: true, value: raw === 'true' } : { ok: false, wanted: 'true or false' };
    case 'object':
    case 'array': {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch {
        return { ok: false, wanted: `JSON of an ${schema.type}` };
      }
      const fits = schema.type === 'array' ? Array.isArray(value) : value !== null && typeof value === 'object' && !Array.isArray(value);
      return fits ? { ok: true, value } : { ok: false, wanted: `JSON of an ${schema.type}` };
    }
    default:
      return { ok: true, value: raw };
  }
}

/** A key for what a rendering changes: clusters whose copies render alike from one base share one work build. */
export function renderingKey(rendering: CopyRendering): string {
  return rendering.state === 'rendered' ? canonicalJson([rendering.carried, rendering.fields.map((f) => [f.path, f.value])]) : '';
}
