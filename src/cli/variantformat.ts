// How `policy-sync explain` and `status` tell PolicyVariants (docs/concepts/variants.md): each field a variant set
// in a cluster's copy and from where, what became of each variant of a policy, and which variants a cluster's copy
// carries. Pure: the core's records in, phrases out (statusformat.ts and tableformat.ts lay them out).
import type { VariantOutcome } from '../core/pipeline/policypipeline.ts';
import { sourceText } from '../core/variants/policyvariant.ts';
import type { AppliedField } from '../core/variants/render.ts';
import type { ClusterStatus } from '../core/status/policystatus.ts';
import type { VariantFailure } from '../core/works/desiredworks.ts';

/** What one cluster's copy gets from the variants selecting it. */
export interface ClusterVariantFields {
  /** The variants applied, `name@generation` (what the copy carries once written). */
  carried: string[];
  fields: AppliedField[];
}

/** What the variants of a policy come to, as the hub decides it now. */
export interface VariantExplanation {
  /** Each PolicyVariant targeting the policy, as its status reports it. */
  variants: VariantOutcome[];
  /** By cluster; clusters no variant selects (the policy's own copy) are absent. */
  clusters: ReadonlyMap<string, ClusterVariantFields>;
  /** Clusters whose copy the variants cannot render, and why. */
  failures: VariantFailure[];
  /** The clusters the policy is placed on, as decided here (those absent from `clusters` get its own copy). */
  placed: ReadonlySet<string>;
}

/**
 * One field a variant set, as a person reads it:
 * `spec.loadBalancing.geo = "EU" from label kuadrant.io/lb-attribute-geo-code (variant geo, entry 0)`; a
 * default says so and what was missing; a patch's field `from patch`.
 */
export function fieldText(f: AppliedField): string {
  const from = f.source === 'patch' ? 'from patch' : f.defaulted ? `(default; ${sourceText(f.source)} not set)` : `from ${sourceText(f.source)}`;
  return `${f.path} = ${JSON.stringify(f.value)} ${from} (variant ${f.variant}, entry ${f.entry})`;
}

function clusterList(names: readonly string[], most = 5): string {
  return names.length <= most ? names.join(', ') : `${names.slice(0, most).join(', ')} and ${names.length - most} more`;
}

/**
 * What became of one variant of the policy: `geo@1: changes 2 clusters (c1, c2); fails on 1 (c3:
 * VariantValueMissing)`; a refused one with the field; entries that select none of the policy's clusters.
 */
export function variantOutcomeText(v: VariantOutcome): string {
  const name = `${v.name}@${v.generation}`;
  if (v.refused) return `${name}: refused: ${v.refused.field}: ${v.refused.message} (every cluster of the policy keeps the copy it runs)`;
  const parts = [v.applied.length === 0 ? 'changes no cluster' : `changes ${v.applied.length} ${v.applied.length === 1 ? 'cluster' : 'clusters'} (${clusterList(v.applied)})`];
  if (v.failing.length > 0) parts.push(`fails on ${v.failing.length} (${clusterList(v.failing.map((f) => `${f.cluster}: ${f.reason}`))})`);
  if (v.unmatched.length > 0) parts.push(`${v.unmatched.length === 1 ? 'entry' : 'entries'} ${v.unmatched.join(', ')} ${v.unmatched.length === 1 ? 'selects' : 'select'} none of the policy's clusters`);
  return `${name}: ${parts.join('; ')}`;
}

/** The VARIANTS cell of a cluster: the variants its copy carries (`geo@1,zone@2`), `-` when none. */
export function clusterVariantsCell(c: Pick<ClusterStatus, 'variants'> | undefined): string {
  return c?.variants && c.variants.length > 0 ? c.variants.join(',') : '-';
}

/** How many of a policy's clusters run a copy carrying a variant (the status table's VARIANTS count). */
export function clustersWithVariants(clusters: Readonly<Record<string, Pick<ClusterStatus, 'variants'>>> | undefined): number {
  return Object.values(clusters ?? {}).filter((c) => (c.variants?.length ?? 0) > 0).length;
}

/** `explain -o json|yaml`: the variants' outcomes, and per cluster what they set (clusters sorted). */
export function variantsItem(v: VariantExplanation): Record<string, unknown> {
  return {
    policyVariants: v.variants,
    clusters: Object.fromEntries([...v.clusters.keys()].sort().map((c) => [c, v.clusters.get(c)!])),
    failures: v.failures,
  };
}
