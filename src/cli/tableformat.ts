// kubectl-style renderings of synced policies for `policy-sync status`: the table (one row per policy),
// the per-cluster rows (`-o wide`, `status gateway/NS/NAME`), `-o name`, and `-o json|yaml` as a
// Kubernetes List. Pure: rows in, text out. Like kubectl, the table is as wide as its content; on a
// terminal (`width` given) only the MESSAGE column is cut to fit, never a name.
import { stringify } from 'yaml';
import type { ClusterStatus } from '../core/status/policystatus.ts';
import { ellipsize, rolloutState, stableJson, type PolicyRow } from './statusformat.ts';
import { clusterVariantsCell, clustersWithVariants } from './variantformat.ts';

export interface TableOptions {
  /** A NAMESPACE column first (`-A`, or rows from several namespaces). */
  namespaceColumn: boolean;
  /** The terminal's width: the last column is cut to fit it. Undefined when stdout is not a terminal. */
  width?: number;
  /** `-o wide`: the per-cluster rows add REVISION (and ROLLOUT, see `rolloutColumn`). */
  wide?: boolean;
  /** A ROLLOUT column: some policy shown rolls out Progressive. Decided once, from the first rows. */
  rolloutColumn?: boolean;
  /**
   * A VARIANTS column: some cluster shown runs a copy carrying PolicyVariants (the table: how many clusters of
   * the policy do; `-o wide`: which variants, `geo@1`). Decided once, from the first rows.
   */
  variantsColumn?: boolean;
}

/** The last column is never cut narrower than this, even when the names leave less room. */
const MIN_MESSAGE_WIDTH = 10;
const GAP = '   ';

/** `authpolicy.kuadrant.io/name`: how kubectl names an object of a group (`-o name`, NAME with several kinds). */
export function qualifiedName(row: Pick<PolicyRow, 'kind' | 'group' | 'name'>): string {
  const kind = row.kind.toLowerCase();
  return `${row.group === '' ? kind : `${kind}.${row.group}`}/${row.name}`;
}

function cellWidth(text: string): number {
  return Array.from(text).length;
}

/** Column widths of a table (header included). */
export function columnWidths(rows: readonly (readonly string[])[]): number[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cellWidth(cell))));
  return widths;
}

/**
 * Cells padded to `widths` and joined by three spaces (kubectl's tabwriter padding), trailing blanks
 * trimmed; with `width`, the last cell is cut with `…` so that the line fits (never below MIN_MESSAGE_WIDTH).
 */
export function renderLine(cells: readonly string[], widths: readonly number[], width?: number): string {
  const head = cells.slice(0, -1).map((c, i) => c + ' '.repeat(Math.max(0, widths[i]! - cellWidth(c))) + GAP).join('');
  let last = cells[cells.length - 1] ?? '';
  if (width !== undefined) last = ellipsize(last, Math.max(MIN_MESSAGE_WIDTH, width - cellWidth(head)));
  return (head + last).trimEnd();
}

function render(header: readonly string[], rows: readonly (readonly string[])[], width?: number): string[] {
  const widths = columnWidths([header, ...rows]);
  return [header, ...rows].map((cells) => renderLine(cells, widths, width));
}

/** Whether any row has clusters OCM cannot vouch for: only then is there an UNKNOWN column. */
function hasUnknown(rows: readonly PolicyRow[]): boolean {
  return rows.some((r) => (r.status.summary.unknown ?? 0) > 0);
}

/** Whether any row rolls out Progressive (its status has a rollout block): only then is there a ROLLOUT column. */
export function hasRollout(rows: readonly PolicyRow[]): boolean {
  return rows.some((r) => r.status.rollout !== undefined || Object.values(r.status.clusters ?? {}).some((c) => c.rollout !== undefined));
}

/** Whether some cluster of some row runs a copy carrying a variant: only then is there a VARIANTS column. */
export function hasVariants(rows: readonly PolicyRow[]): boolean {
  return rows.some((r) => clustersWithVariants(r.status.clusters) > 0);
}

/** The table's VARIANTS cell: how many of the policy's clusters run a copy carrying a variant; `?` when its per-cluster status was cut short. */
export function variantsCountCell(row: PolicyRow): string {
  if (row.status.clusters === undefined) return row.status.summary.truncated ? '?' : '0';
  return String(clustersWithVariants(row.status.clusters));
}

/**
 * What the table's MESSAGE says of a policy: why its rollout halted (`Halted: cluster: Reason: message`), its
 * problems (`Reason: message`), then each cluster that is pending, failed or unknown (`cluster: State Reason`);
 * empty when all is well.
 */
export function policyMessage(row: PolicyRow): string {
  const halted = row.status.rollout?.state === 'Halted' ? [rolloutState(row.status.rollout)] : [];
  const parts = [...halted, ...(row.status.problems ?? []).map((p) => `${p.reason}: ${p.message}`)];
  for (const [cluster, c] of Object.entries(row.status.clusters ?? {})) {
    if (c.state !== 'Enforced' && c.state !== 'Overridden') parts.push(`${cluster}: ${c.state} ${c.reason}`);
  }
  return parts.join('; ');
}

/** The header and cells of the policy table, for one row or many (watch prints rows one at a time). */
/** The ROLLOUT cell of a policy: `Progressing wave 1/3`, `Halted wave 1/3`, `Complete`; `-` when it rolls out All. */
export function rolloutCell(row: PolicyRow): string {
  const r = row.status.rollout;
  if (!r) return '-';
  return r.state === 'Complete' || r.wave === undefined || r.waves === undefined ? r.state : `${r.state} wave ${r.wave}/${r.waves}`;
}

export function tableHeader(rows: readonly PolicyRow[], options: TableOptions): string[] {
  return [
    ...(options.namespaceColumn ? ['NAMESPACE'] : []),
    'NAME',
    'ENFORCED',
    'OVERRIDDEN',
    'PENDING',
    'FAILED',
    ...(hasUnknown(rows) ? ['UNKNOWN'] : []),
    ...(options.rolloutColumn ? ['ROLLOUT'] : []),
    ...(options.variantsColumn ? ['VARIANTS'] : []),
    'MESSAGE',
  ];
}

export function tableCells(row: PolicyRow, options: TableOptions, unknownColumn: boolean): string[] {
  const s = row.status.summary;
  return [
    ...(options.namespaceColumn ? [row.namespace] : []),
    qualifiedName(row),
    `${s.enforced}/${s.clusters}`,
    String(s.overridden),
    String(s.pending),
    String(s.failed),
    ...(unknownColumn ? [String(s.unknown ?? 0)] : []),
    ...(options.rolloutColumn ? [rolloutCell(row)] : []),
    ...(options.variantsColumn ? [variantsCountCell(row)] : []),
    policyMessage(row),
  ];
}

/**
 * `status`: one line per policy, its enforced count out of its clusters, the other counts, where its rollout
 * stands (when some policy rolls out Progressive), and a message.
 */
export function formatPolicyTable(rows: readonly PolicyRow[], options: TableOptions): string[] {
  const unknown = hasUnknown(rows);
  const withRollout = { ...options, rolloutColumn: options.rolloutColumn ?? hasRollout(rows), variantsColumn: options.variantsColumn ?? hasVariants(rows) };
  return render(tableHeader(rows, withRollout), rows.map((r) => tableCells(r, withRollout, unknown)), options.width);
}

export const CLUSTER_HEADER = ['NAME', 'CLUSTER', 'STATE', 'REASON', 'UPTODATE', 'MESSAGE'] as const;

export function clusterHeader(options: TableOptions): string[] {
  const wide = options.wide ? ['REVISION', ...(options.rolloutColumn ? ['ROLLOUT'] : []), ...(options.variantsColumn ? ['VARIANTS'] : [])] : [];
  return [...(options.namespaceColumn ? ['NAMESPACE'] : []), ...CLUSTER_HEADER.slice(0, -1), ...wide, 'MESSAGE'];
}

/**
 * The per-cluster cells of one policy: one row per cluster (state, reason, upToDate, with `wide` the revision
 * it runs, its rollout phase and the variants its copy carries, message); a policy on no cluster gets one row, `<none>`, with its first problem.
 */
export function clusterCells(row: PolicyRow, options: TableOptions): string[][] {
  const lead = [...(options.namespaceColumn ? [row.namespace] : []), qualifiedName(row)];
  const wide = (c: ClusterStatus | undefined): string[] =>
    options.wide
      ? [c?.revision === undefined ? '-' : String(c.revision), ...(options.rolloutColumn ? [c?.rollout?.phase ?? '-'] : []), ...(options.variantsColumn ? [clusterVariantsCell(c)] : [])]
      : [];
  const clusters = Object.entries(row.status.clusters ?? {});
  if (clusters.length === 0) {
    const problem = row.status.problems?.[0];
    const rest = (row.status.problems ?? []).slice(1).map((p) => p.reason);
    const message = problem ? `${problem.message}${rest.length > 0 ? ` (also: ${rest.join(', ')})` : ''}` : '';
    return [[...lead, '<none>', '-', problem?.reason ?? '-', '-', ...wide(undefined), message]];
  }
  return clusters.map(([cluster, c]: [string, ClusterStatus]) => [...lead, cluster, c.state, c.reason, String(c.upToDate), ...wide(c), c.message]);
}

/** `status -o wide` and `status gateway/NS/NAME`: one line per policy per cluster. */
export function formatClusterTable(rows: readonly PolicyRow[], options: TableOptions): string[] {
  const withRollout = { ...options, rolloutColumn: options.rolloutColumn ?? hasRollout(rows), variantsColumn: options.variantsColumn ?? hasVariants(rows) };
  return render(clusterHeader(withRollout), rows.flatMap((r) => clusterCells(r, withRollout)), options.width);
}

/** `-o name`: `authpolicy.kuadrant.io/name` per line, as kubectl prints it. */
export function formatNames(rows: readonly PolicyRow[]): string {
  return rows.map((r) => `${qualifiedName(r)}\n`).join('');
}

/**
 * One policy as a Kubernetes object: its apiVersion, kind, namespace and name, and under `syncStatus` the
 * hub's status of it (the `policysync.kuadrant.io/status` annotation, per-cluster part read from the
 * ManifestWorks when the annotation was cut short).
 */
export function policyItem(row: PolicyRow): Record<string, unknown> {
  return {
    apiVersion: row.group === '' ? row.version : `${row.group}/${row.version}`,
    kind: row.kind,
    metadata: { name: row.name, namespace: row.namespace },
    syncStatus: row.status,
  };
}

/** The rows as `kubectl get -o json|yaml` prints several objects: a `v1` `List`. */
export function listOf(rows: readonly PolicyRow[]): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'List', items: rows.map(policyItem), metadata: { resourceVersion: '' } };
}

/** JSON with sorted keys, or YAML of the same (sorted) document. */
export function formatDocument(value: unknown, format: 'json' | 'yaml'): string {
  const json = stableJson(value);
  return format === 'json' ? json : stringify(JSON.parse(json), { lineWidth: 0 });
}

/** A row of `status --lingering`: a copy a spoke agent reports where no work of this hub places it. */
export interface LingeringRow {
  cluster: string;
  /** `resource.group` of the copy. */
  kind: string;
  namespace: string;
  name: string;
  /** The hub policy it copies, `namespace/name`, and whether it still exists on the hub. */
  source: string;
  policyExists: boolean;
}

/** `status --lingering` as a table: one line per copy, sorted by cluster, kind, namespace and name. */
export function formatLingeringTable(rows: readonly LingeringRow[], width?: number): string[] {
  const header = ['CLUSTER', 'KIND', 'COPY', 'POLICY'];
  const cells = [...rows]
    .sort((a, b) => (a.cluster + a.kind + a.namespace + a.name < b.cluster + b.kind + b.namespace + b.name ? -1 : 1))
    .map((r) => [r.cluster, r.kind, `${r.namespace}/${r.name}`, r.policyExists ? r.source : `${r.source} (gone from the hub)`]);
  return render(header, cells, width);
}
