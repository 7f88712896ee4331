// Renderings of `policy-sync diff` (diffcommand.ts): what the hub would do with a policy as edited —
// a headline, the strategy and waves, one line per cluster (its wave, what is written now, the revision it
// runs), then per cluster a unified diff of the spoke copy (YAML, keys sorted as kubectl prints objects)
// against the copy its ManifestWork places now; and the same as JSON for scripts. Pure: previews in, text out.
import { DIGEST_ANNOTATION } from '../core/metadatakeys.ts';
import { createTwoFilesPatch } from 'diff';
import { stringify } from 'yaml';
import type { KubeObject } from '../core/k8s/objects.ts';
import { copyRevision } from '../core/works/revision.ts';
import type { ClusterPreview, RolloutPreview } from '../core/pipeline/preview.ts';
import { describeStrategy } from '../core/params/strategy.ts';
import type { PreviewVariant } from './filevariants.ts';
import { rolloutState, stableJson, wrap } from './statusformat.ts';
import { columnWidths, renderLine } from './tableformat.ts';

/** The label of a side with no copy (the cluster runs none, or would run none). */
export const NO_COPY = '(no copy)';

/** How the previewed policy relates to the hub's. */
export type PolicyChange =
  /** Not on the hub yet: revision 1. */
  | 'new'
  /** Its spec changes: the next revision. */
  | 'spec'
  /** Only its metadata changes: the same revision. */
  | 'metadata'
  /** Compared as it is on the hub (no file). */
  | 'none';

export interface PolicyDiff {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespace: string;
  name: string;
  change: PolicyChange;
  /** The hub policy's generation now; absent for a new policy. */
  hubRevision?: number;
  /** What the preview could not take into account. */
  notes?: string[];
  /** The PolicyVariants of the policy the preview renders its copies with (the file's in place of the hub's). */
  variants?: PreviewVariant[];
  preview: RolloutPreview;
}

/** A copy as YAML with every key sorted (kubectl's order for such objects): equal copies, equal text. */
export function copyYaml(copy: KubeObject | undefined): string {
  if (copy === undefined) return '';
  return stringify(JSON.parse(stableJson(withoutDigest(copy))), { lineWidth: 0 });
}

/** The copy without its digest (core/works/copydigest.ts): a hash of the rest, which the diff already shows. */
function withoutDigest(copy: KubeObject): KubeObject {
  const annotations = copy.metadata.annotations;
  if (annotations?.[DIGEST_ANNOTATION] === undefined) return copy;
  const { [DIGEST_ANNOTATION]: _digest, ...rest } = annotations;
  const metadata = { ...copy.metadata };
  if (Object.keys(rest).length > 0) metadata.annotations = rest;
  else delete metadata.annotations;
  return { ...copy, metadata };
}

function side(copy: KubeObject | undefined, what: string): string {
  if (copy === undefined) return NO_COPY;
  const r = copyRevision(copy);
  return `(revision ${r === undefined ? 'unrecorded' : r}, ${what})`;
}

/** The copy a cluster gets in the end: the new revision's, or none (removed, not placed). */
function target(c: ClusterPreview): KubeObject | undefined {
  return c.desired;
}

/** When the cluster gets the new revision's copy, by what the hub would do now. */
function when(c: ClusterPreview): string {
  switch (c.action) {
    case 'write':
    case 'relabel':
    case 'rollback':
      return 'written now';
    case 'keep':
    case 'wait':
      return c.wave === undefined ? 'later' : `at wave ${c.wave}`;
    case 'hold':
      return 'once the rollout completes';
    default:
      return 'after the change';
  }
}

/**
 * The unified diff of a cluster's copy: what its work places now (`(no copy)` when none) against the copy of
 * the new revision rendered for it (`(no copy)` where none would be placed). Empty when they are the same.
 */
export function clusterDiff(d: Pick<PolicyDiff, 'kind' | 'namespace' | 'name'>, c: ClusterPreview): string {
  // Not written (too large, its variants do not render): the copy it runs stays, unchanged.
  if (c.stays) return '';
  const before = copyYaml(c.current);
  const after = copyYaml(target(c));
  if (before === after) return '';
  const file = `${c.cluster}/${d.kind}/${d.namespace}/${d.name}`;
  const patch = createTwoFilesPatch(file, file, before, after, side(c.current, 'running now'), side(target(c), when(c)), {
    context: 3,
    headerOptions: { includeIndex: false, includeUnderline: false, includeFileHeaders: true },
  });
  return patch.endsWith('\n') ? patch : `${patch}\n`;
}

function headline(d: PolicyDiff): string {
  const what = `${d.kind} ${d.namespace}/${d.name}`;
  const r = d.preview.revision;
  switch (d.change) {
    case 'new':
      return `${what}: new policy, revision ${r}`;
    case 'spec':
      return `${what}: revision ${r} (its spec changes; the hub's is revision ${d.hubRevision ?? '-'})`;
    case 'metadata':
      return `${what}: revision ${r} (its spec does not change: metadata only)`;
    case 'none':
      return `${what}: revision ${r}, as on the hub`;
  }
}

const TOP = 11; // `Strategy:` and friends, padded

function top(label: string, value: string): string[] {
  const first = `${label}:`.padEnd(TOP);
  return wrap(value, first, ' '.repeat(TOP));
}

function waveCell(p: RolloutPreview, c: ClusterPreview): string {
  if (c.wave === undefined) return '-';
  return `${c.wave}/${p.waves.length}`;
}

function runsCell(c: ClusterPreview): string {
  if (!c.current) return '-';
  const r = copyRevision(c.current);
  return r === undefined ? '?' : String(r);
}

const VARIANT_CHANGE = { new: 'new, from the file', spec: 'edited, from the file', metadata: 'from the file, its spec as on the hub' } as const;

/** `geo@2 (edited, from the file)`, `zone@1`: a variant the copies are rendered with, and whether it is the file's. */
export function variantText(v: PreviewVariant): string {
  return `${v.name}@${v.generation}${v.change ? ` (${VARIANT_CHANGE[v.change]})` : ''}`;
}

/** What `diff` prints for one policy. `width`: the terminal's, to cut the MESSAGE column (as `status`). */
export function formatPolicyDiff(d: PolicyDiff, width?: number): string {
  const p = d.preview;
  const out: string[] = [headline(d)];
  out.push(...top('Strategy', `${describeStrategy(p.strategy)}${p.classes.length > 0 ? `; GatewayClass ${p.classes.join(', ')}` : ''}`));
  const placed = p.clusters.filter((c) => c.desired !== undefined);
  if (p.strategy.type === 'Progressive') {
    const waves = p.waves.map((w, i) => `${i + 1}: ${w.join(', ')}`).join('; ');
    out.push(...top('Waves', waves === '' ? 'none' : waves));
    out.push(...top('Rollout', rolloutState(p.rollout)));
  } else {
    out.push(...top('Rollout', placed.length === 0 ? 'reaches no cluster' : `every cluster at once: ${placed.map((c) => c.cluster).join(', ')}`));
  }
  const rejected = p.targets.flatMap((t) => (t.state === 'rejected' ? [`${t.path}: ${t.reason}: ${t.message}`] : []));
  const problems = [...p.problems.map((x) => `${x.reason}: ${x.message}`), ...rejected];
  for (const line of problems) out.push(...wrap(line, '! ', '    '));
  if (d.variants) out.push(...top('Variants', d.variants.map(variantText).join(', ')));
  for (const note of d.notes ?? []) out.push(...wrap(note, 'note: ', '      '));
  out.push('');
  if (p.clusters.length === 0) {
    out.push('No cluster: the change reaches none.');
  } else {
    const header = ['CLUSTER', 'WAVE', 'ACTION', 'RUNS', 'MESSAGE'];
    const rows = p.clusters.map((c) => [c.cluster, waveCell(p, c), c.action, runsCell(c), c.message]);
    const widths = columnWidths([header, ...rows]);
    for (const cells of [header, ...rows]) out.push(renderLine(cells, widths, width));
  }
  const diffs = p.clusters.map((c) => clusterDiff(d, c)).filter((t) => t !== '');
  const text = `${out.join('\n')}\n`;
  return diffs.length === 0 ? `${text}\nNo copy changes.\n` : `${text}\n${diffs.join('')}`;
}

/** Every policy's preview, one after another. */
export function formatDiffs(diffs: readonly PolicyDiff[], width?: number): string {
  return diffs.map((d) => formatPolicyDiff(d, width)).join('\n');
}

/** One policy's preview for scripts: the plan, and per cluster its copies and their diff. */
export function diffItem(d: PolicyDiff): Record<string, unknown> {
  const p = d.preview;
  return {
    policy: { group: d.group, version: d.version, resource: d.resource, kind: d.kind, namespace: d.namespace, name: d.name },
    change: d.change,
    revision: p.revision,
    ...(d.hubRevision === undefined ? {} : { hubRevision: d.hubRevision }),
    ...(d.notes ? { notes: d.notes } : {}),
    ...(d.variants ? { variants: d.variants } : {}),
    strategy: { ...p.strategy, description: describeStrategy(p.strategy) },
    ...(p.strategyError === undefined ? {} : { strategyError: p.strategyError }),
    gatewayClasses: p.classes,
    rollout: p.rollout,
    waves: p.waves,
    clusters: p.clusters.map((c) => {
      const revision = copyRevision(c.current);
      return {
        ...c,
        ...(revision === undefined ? {} : { revision }),
        diff: clusterDiff(d, c),
      };
    }),
    targets: p.targets,
    problems: p.problems,
  };
}

/** `diff -o json`: `{"items": [...]}`, one item per policy previewed, keys sorted. */
export function formatDiffsJson(diffs: readonly PolicyDiff[]): string {
  return stableJson({ items: diffs.map(diffItem) });
}
