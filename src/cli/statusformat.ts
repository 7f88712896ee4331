// Text and JSON renderings of hub policy status for `policy-sync status` and `policy-sync explain`
// (docs/architecture.md#components, #status-on-the-hub). Pure: rows in, text out; status.ts does the reading. Every line fits 80 columns for
// ordinary names: long policy names are cut with `…`, long messages are wrapped.
import { canonicalJson } from '../core/k8s/canonical.ts';
import type { RolloutStatus } from '../core/status/rolloutstatus.ts';
import { AWAITING_SPOKE_REPORT, type ClusterStatus, type PolicyStatus } from '../core/status/policystatus.ts';
import { fieldText, variantOutcomeText, type VariantExplanation } from './variantformat.ts';

/** What the table and the matrix need of one policy. */
export interface PolicyRowView {
  kind: string;
  namespace: string;
  name: string;
  status: PolicyStatus;
}

/** One synced policy as read from the hub. */
export interface PolicyRow extends PolicyRowView {
  group: string;
  version: string;
  /** Plural resource name, e.g. `authpolicies`. */
  resource: string;
}

export const LINE_WIDTH = 80;
const GAP = '  ';
/** The policy column is cut no narrower than this (or its content, when shorter). */
const MIN_POLICY_WIDTH = 24;
/** Cluster names in matrix headers are cut past this. */
const MAX_CLUSTER_HEADER = 20;
/** When the clusters are split over blocks, the policy column is cut past this. */
const MAX_BLOCKED_POLICY_WIDTH = 44;

/** Length in code points: what a terminal shows for the (mostly ASCII) names and `…`. */
function width(text: string): number {
  return Array.from(text).length;
}

/** `text` cut to at most `max` code points, `…` marking the cut. */
export function ellipsize(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  if (max <= 1) return '…'.slice(0, max);
  return `${chars.slice(0, max - 1).join('')}…`;
}

function pad(text: string, size: number): string {
  return text + ' '.repeat(Math.max(0, size - width(text)));
}

/** Cells padded to their column widths, joined by two spaces, trailing blanks trimmed. */
function line(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((c, i) => (i === cells.length - 1 ? c : pad(c, widths[i]!)))
    .join(GAP)
    .trimEnd();
}

/**
 * Greedy word wrap: the first line starts with `first`, the others with `rest` (usually blanks of the
 * same width). A word longer than a whole line is split.
 */
export function wrap(text: string, first: string, rest: string, lineWidth = LINE_WIDTH): string[] {
  return wrapTokens(text.split(/\s+/), first, rest, lineWidth);
}

/** As wrap, with the units to keep together given (e.g. `Enf = Enforced,`): lines break between tokens only. */
export function wrapTokens(tokens: readonly string[], first: string, rest: string, lineWidth = LINE_WIDTH): string[] {
  const out: string[] = [];
  let current = first;
  let empty = true;
  const room = (prefix: string): number => Math.max(1, lineWidth - width(prefix));
  for (const word of tokens.filter((w) => w !== '')) {
    let chunk = word;
    for (;;) {
      const candidate = empty ? current + chunk : `${current} ${chunk}`;
      if (width(candidate) <= lineWidth) {
        current = candidate;
        empty = false;
        break;
      }
      if (!empty) {
        out.push(current);
        current = rest;
        empty = true;
        continue;
      }
      // A word wider than the line: as much as fits here, the remainder on the next line.
      const fit = room(current);
      const chars = Array.from(chunk);
      out.push(current + chars.slice(0, fit).join(''));
      chunk = chars.slice(fit).join('');
      current = rest;
      if (chunk === '') break;
    }
  }
  if (!empty || out.length === 0) out.push(current.trimEnd());
  return out;
}

/**
 * Where a policy's rollout stands, in one phrase: `Progressing wave 1/3`, `Halted: <cluster>: <reason>:
 * <message>` (the first failed cluster, in its controller's words), `Complete`.
 */
export function rolloutState(rollout: RolloutStatus): string {
  switch (rollout.state) {
    case 'Halted': {
      const h = rollout.halted;
      return h ? `Halted: ${h.cluster}: ${h.reason}: ${h.message}` : `Halted: ${rollout.message}`;
    }
    case 'Progressing':
      return rollout.wave === undefined || rollout.waves === undefined ? 'Progressing' : `Progressing wave ${rollout.wave}/${rollout.waves}`;
    case 'Complete':
      return 'Complete';
  }
}

export function policyLabel(row: Pick<PolicyRowView, 'kind' | 'namespace' | 'name'>): string {
  return `${row.kind}/${row.namespace}/${row.name}`;
}

// ---------------------------------------------------------------------------------------------
// The table: one line per policy with its counts.

const TABLE_HEADER = ['POLICY', 'ENFORCED', 'OVERRIDDEN', 'PENDING', 'FAILED'] as const;

/**
 * The default table: per policy, `<Kind>/<namespace>/<name>`, enforced out of its clusters, and the
 * overridden / pending / failed counts; then a `!` line per policy with problems. `wide` adds the
 * policy × cluster matrix (formatMatrix).
 */
export function formatRows(rows: readonly PolicyRowView[], wide: boolean): string {
  if (rows.length === 0) return 'no synced policies\n';
  const out = formatTable(rows);
  if (wide) out.push('', ...formatMatrix(rows));
  return `${out.join('\n')}\n`;
}

export function formatTable(rows: readonly PolicyRowView[]): string[] {
  // UNKNOWN (clusters whose works are kept while OCM cannot vouch for them) only when some policy has one.
  const withUnknown = rows.some((r) => (r.status.summary.unknown ?? 0) > 0);
  const header = withUnknown ? [...TABLE_HEADER, 'UNKNOWN'] : TABLE_HEADER;
  const cells = rows.map((r) => {
    const s = r.status.summary;
    return [policyLabel(r), `${s.enforced}/${s.clusters}`, String(s.overridden), String(s.pending), String(s.failed), ...(withUnknown ? [String(s.unknown ?? 0)] : [])];
  });
  const widths = header.map((h, i) => Math.max(width(h), ...cells.map((c) => width(c[i]!))));
  const rest = widths.slice(1).reduce((sum, w) => sum + GAP.length + w, 0);
  widths[0] = Math.max(Math.min(widths[0]!, MIN_POLICY_WIDTH), Math.min(widths[0]!, LINE_WIDTH - rest));
  const out = [line(header, widths)];
  for (const c of cells) out.push(line([ellipsize(c[0]!, widths[0]), ...c.slice(1)], widths));
  const troubled = rows.filter((r) => (r.status.problems ?? []).length > 0 || awaitingReport(r).length > 0);
  if (troubled.length > 0) {
    out.push('');
    for (const r of troubled) {
      const reasons = [...new Set((r.status.problems ?? []).map((p) => p.reason))];
      // A Pending count alone would not tell a cluster held for want of its spoke's report from one applying.
      const awaiting = awaitingReport(r);
      if (awaiting.length > 0) reasons.push(`${AWAITING_SPOKE_REPORT} (${awaiting.length <= 3 ? awaiting.join(', ') : `${awaiting.length} clusters`})`);
      out.push(...wrap(`${policyLabel(r)}: ${reasons.join(', ')}`, '! ', '    '));
    }
  }
  return out;
}

/** The clusters of the policy that get no first copy until their spoke agent's report vouches for it. */
function awaitingReport(r: PolicyRowView): string[] {
  return Object.entries(r.status.clusters ?? {}).flatMap(([name, c]) => (c.reason === AWAITING_SPOKE_REPORT ? [name] : []));
}

// ---------------------------------------------------------------------------------------------
// The matrix: one row per policy, one column per cluster.

type Cell = 'Enforced' | 'Partial' | 'Overridden' | 'Pending' | 'Failed' | 'Unknown' | 'None';

const FULL: Record<Cell, string> = {
  Enforced: 'Enforced',
  Partial: 'Partial',
  Overridden: 'Overridden',
  Pending: 'Pending',
  Failed: 'Failed',
  Unknown: 'Unknown',
  None: '-',
};
const SHORT: Record<Cell, string> = { Enforced: 'Enf', Partial: 'Part', Overridden: 'Ovr', Pending: 'Pend', Failed: 'Fail', Unknown: 'Unkn', None: '-' };
const MEANING: Record<Cell, string> = {
  Enforced: 'Enforced',
  Partial: 'PartiallyEnforced',
  Overridden: 'Overridden',
  Pending: 'Pending',
  Failed: 'Failed',
  Unknown: 'Unknown (OCM cannot vouch for the cluster: its ManifestWork is kept)',
  None: 'not synced to that cluster',
};
const CELL_ORDER: readonly Cell[] = ['Enforced', 'Partial', 'Overridden', 'Pending', 'Failed', 'Unknown', 'None'];

function cellOf(cluster: ClusterStatus | undefined): Cell {
  if (cluster === undefined) return 'None';
  if (cluster.state === 'Enforced' && cluster.reason === 'PartiallyEnforced') return 'Partial';
  return cluster.state;
}

/**
 * The policy × cluster matrix. Cells are the cluster's state (`Partial` for PartiallyEnforced, `-`
 * where the policy is not synced); when full words do not fit 80 columns they are abbreviated, then
 * long policy names are cut, then the clusters are split over several blocks. A legend explains
 * every symbol that is not a state's own name.
 */
export function formatMatrix(rows: readonly PolicyRowView[]): string[] {
  const clusters = [...new Set(rows.flatMap((r) => Object.keys(r.status.clusters ?? {})))].sort();
  const cells = rows.map((r) => clusters.map((c) => cellOf(Object.hasOwn(r.status.clusters ?? {}, c) ? r.status.clusters?.[c] : undefined)));
  const used = new Set(cells.flat());
  const headers = clusters.map((c) => ellipsize(c, MAX_CLUSTER_HEADER));
  const labels = rows.map(policyLabel);
  const policyWidth = Math.max(width('POLICY'), ...labels.map(width));

  const columnWidths = (names: Record<Cell, string>): number[] =>
    clusters.map((_, j) => Math.max(width(headers[j]!), ...cells.map((row) => width(names[row[j]!]))));
  const total = (policy: number, columns: readonly number[]): number => policy + columns.reduce((s, w) => s + GAP.length + w, 0);

  let names = FULL;
  let columns = columnWidths(FULL);
  if (total(policyWidth, columns) > LINE_WIDTH) {
    names = SHORT;
    columns = columnWidths(SHORT);
  }
  const minPolicy = Math.min(policyWidth, MIN_POLICY_WIDTH);
  // One block, cutting long policy names if need be; else blocks of as many clusters as fit beside a
  // policy column of a width that leaves most of the line to the clusters.
  const all = clusters.map((_, j) => j);
  let blocks: number[][];
  let policyColumn: number;
  if (total(minPolicy, columns) <= LINE_WIDTH) {
    blocks = [all];
    policyColumn = Math.max(minPolicy, Math.min(policyWidth, LINE_WIDTH - total(0, columns)));
  } else {
    policyColumn = Math.min(policyWidth, Math.max(minPolicy, MAX_BLOCKED_POLICY_WIDTH));
    blocks = [];
    let block: number[] = [];
    for (const j of all) {
      if (block.length > 0 && total(policyColumn, [...block, j].map((k) => columns[k]!)) > LINE_WIDTH) {
        blocks.push(block);
        block = [];
      }
      block.push(j);
    }
    blocks.push(block);
  }

  const out: string[] = [];
  for (const [b, indexes] of blocks.entries()) {
    if (b > 0) out.push('');
    const widths = [policyColumn, ...indexes.map((j) => columns[j]!)];
    out.push(line(['POLICY', ...indexes.map((j) => headers[j]!)], widths));
    rows.forEach((_, i) => {
      out.push(line([ellipsize(labels[i]!, policyColumn), ...indexes.map((j) => names[cells[i]![j]!])], widths));
    });
  }

  const legend = CELL_ORDER.filter((c) => used.has(c) && names[c] !== MEANING[c]).map((c) => `${names[c]} = ${MEANING[c]}`);
  if (legend.length > 0) out.push('', ...wrapTokens(legend.map((l, i) => (i < legend.length - 1 ? `${l},` : l)), 'legend: ', '        '));
  return out;
}

// ---------------------------------------------------------------------------------------------
// explain: one policy in detail.

const TOP_LABEL = 12; // `Resource:` and friends, padded
const FIELD_INDENT = '    ';
const FIELD_LABEL = 16; // `overridden by:` and friends, padded

function field(label: string, value: string, indent: string, labelWidth: number): string[] {
  const first = indent + pad(`${label}:`, labelWidth);
  return wrap(value === '' ? '-' : value, first, ' '.repeat(width(first)));
}

/**
 * `policy-sync explain`: the policy, its summary, its problems, and per cluster its state, reason,
 * message, the overriding local policies (the status's overriddenBy: the hub's finding from the spoke agent's report),
 * upToDate, applied, available, and the kind's own statusFeedback values. With `variants` (the hub's decision
 * for the policy's PolicyVariants, variantfields.ts): what became of each variant, and per cluster each field
 * they set in its copy and from where.
 */
export function formatExplain(row: PolicyRow, variants?: VariantExplanation): string {
  const { status } = row;
  const s = status.summary;
  const top = (label: string, value: string): string[] => field(label, value, '', TOP_LABEL);
  const out: string[] = [];
  out.push(...top('Policy', `${row.kind} ${row.namespace}/${row.name}`));
  out.push(...top('Resource', `${row.group === '' ? row.resource : `${row.resource}.${row.group}`} (${row.version})`));
  out.push(
    ...top(
      'Summary',
      `${s.clusters} ${s.clusters === 1 ? 'cluster' : 'clusters'}: ${s.enforced} enforced, ${s.overridden} overridden, ` +
        `${s.pending} pending, ${s.failed} failed${s.unknown ? `, ${s.unknown} unknown` : ''}; ${s.applied} applied`,
    ),
  );
  if (status.rollout) {
    const r = status.rollout;
    out.push(...top('Rollout', `${r.strategy}, revision ${r.revision}: ${rolloutState(r)}`));
    if (r.message !== '' && r.state !== 'Halted') out.push(...wrap(r.message, ' '.repeat(TOP_LABEL), ' '.repeat(TOP_LABEL)));
    else if (r.state === 'Halted') out.push(...wrap(haltHint(r), ' '.repeat(TOP_LABEL), ' '.repeat(TOP_LABEL)));
  }
  if (s.truncated) {
    out.push(...top('Note', 'the status annotation was cut short (too large); per-cluster detail is read from the ManifestWorks'));
  }
  const problems = status.problems ?? [];
  if (problems.length === 0) {
    out.push(...top('Problems', 'none'));
  } else {
    out.push('Problems:');
    for (const p of problems) out.push(...wrap(`${p.reason}: ${p.message}`, '  ', FIELD_INDENT));
  }
  if (variants && variants.variants.length > 0) {
    out.push('Variants:');
    for (const v of variants.variants) out.push(...wrap(variantOutcomeText(v), '  ', FIELD_INDENT));
  }
  const clusters = Object.entries(status.clusters ?? {});
  if (clusters.length === 0) {
    out.push(...top('Clusters', 'none'));
  } else {
    out.push('Clusters:');
    for (const [name, c] of clusters) {
      out.push(`  ${name}:`);
      const f = (label: string, value: string): string[] => field(label, value, FIELD_INDENT, FIELD_LABEL);
      out.push(...f('state', c.state), ...f('reason', c.reason), ...f('message', c.message));
      // Absent from an annotation an older hub wrote (its message still names them) and where the spoke's own
      // controller says overridden: nothing is parsed out of a message.
      if (c.overriddenBy !== undefined && c.overriddenBy.length > 0) {
        const by = c.overriddenByMore ? [...c.overriddenBy, `and ${c.overriddenByMore} more`] : c.overriddenBy;
        const lead = FIELD_INDENT + pad('overridden by:', FIELD_LABEL);
        by.forEach((text, i) => out.push(...wrap(text, i === 0 ? lead : ' '.repeat(width(lead)), ' '.repeat(width(lead) + 2))));
      }
      // What the spoke agent reported runs there (docs/concepts/status.md#what-runs-on-a-spoke).
      if (c.drift) {
        const d = c.drift;
        out.push(...f('drifted', `${d.fields.join(', ')}${d.more ? ` and ${d.more} more` : ''}`));
        const by = d.managers.map((m) => `${m.manager}${m.operation ? ` (${m.operation})` : ''}${m.time ? ` at ${m.time}` : ''}`);
        out.push(...f('changed by', by.length > 0 ? by.join(', ') : 'no field manager (a removal, or a schema default)'));
        if (d.since) out.push(...f('since', d.since));
      }
      if (c.lingering && c.lingering.length > 0) out.push(...f(c.reason === 'Removing' ? 'removing' : 'lingering', c.lingering.join(', ')));
      out.push(...f('upToDate', String(c.upToDate)), ...f('applied', String(c.applied)), ...f('available', String(c.available)));
      if (c.revision !== undefined) out.push(...f('revision', String(c.revision)));
      if (c.rollout) out.push(...f('rollout', c.rollout.message ? `${c.rollout.phase}: ${c.rollout.message}` : c.rollout.phase));
      out.push(...variantLines(name, c, variants));
      out.push(...statusFeedbackLines(c.statusFeedback ?? {}));
    }
  }
  return `${out.join('\n')}\n`;
}

/**
 * What the hub says a halted rollout does and how to go on: its message after the cause (`…; the clusters
 * reached keep it, … (edit the policy back to roll back, or annotate it … to resume)`), or all of it.
 */
function haltHint(r: RolloutStatus): string {
  const h = r.halted;
  const cause = h ? `${h.cluster}: ${h.reason}: ${h.message}; ` : '';
  const at = r.message.indexOf(cause);
  const rest = cause !== '' && at >= 0 ? r.message.slice(at + cause.length) : r.message;
  const wave = r.wave !== undefined && r.waves !== undefined ? `at wave ${r.wave}/${r.waves}: ` : '';
  return `${wave}${rest}`;
}

/**
 * A cluster's variants: those its copy carries (the status), what the hub renders for it now when that is other
 * (a change on its way), and each field they set, one per line.
 */
function variantLines(cluster: string, c: ClusterStatus, variants: VariantExplanation | undefined): string[] {
  const out: string[] = [];
  const f = (label: string, value: string): string[] => field(label, value, FIELD_INDENT, FIELD_LABEL);
  const runs = c.variants ?? [];
  if (runs.length > 0) out.push(...f('variants', runs.join(', ')));
  if (!variants) return out;
  const rendered = variants.clusters.get(cluster);
  const failing = variants.failures.some((x) => x.cluster === cluster);
  if (rendered && rendered.carried.join(',') !== runs.join(',')) out.push(...f('renders now', `${rendered.carried.join(', ')} (not yet the copy it runs)`));
  if (rendered && rendered.fields.length > 0) {
    const lead = FIELD_INDENT + pad('variant fields:', FIELD_LABEL);
    const indent = ' '.repeat(width(lead));
    rendered.fields.forEach((x, i) => out.push(...wrap(fieldText(x), i === 0 ? lead : indent, `${indent}  `)));
  } else if (!rendered && !failing && runs.length > 0) {
    out.push(
      ...(variants.placed.has(cluster)
        ? f('renders now', "the policy's own copy: no variant selects the cluster now (not yet the copy it runs)")
        : // The copy carries variants, and the hub's decision as read here does not place the policy there.
          f('variant fields', "not known here: the decision read here does not place the policy on this cluster (give explain the hub controller's --trust-decision-labels if it runs with it)")),
    );
  }
  return out;
}

/** The kind's own statusFeedback values, one `name: value` per line under one label, sorted by name. */
function statusFeedbackLines(values: Readonly<Record<string, string | number | boolean>>): string[] {
  const lead = FIELD_INDENT + pad('statusFeedback:', FIELD_LABEL);
  const indent = ' '.repeat(width(lead));
  return Object.keys(values)
    .sort()
    .flatMap((name, i) => wrap(`${name}: ${String(values[name])}`, i === 0 ? lead : indent, `${indent}  `));
}

// ---------------------------------------------------------------------------------------------
// JSON: for scripts.

/** Canonical JSON (core/k8s/canonical.ts) with a two-space indent: the same status gives the same text. */
export function stableJson(value: unknown): string {
  return `${canonicalJson(value, 2)}\n`;
}

/** `status -o json`: the rows, each {group, kind, name, namespace, resource, status, version}. */
export function formatRowsJson(rows: readonly PolicyRow[]): string {
  return stableJson(rows.map(rowJson));
}

/** `explain -o json`: the one row, as in `status -o json`. */
export function formatExplainJson(row: PolicyRow): string {
  return stableJson(rowJson(row));
}

function rowJson(row: PolicyRow): Record<string, unknown> {
  return {
    group: row.group,
    version: row.version,
    resource: row.resource,
    kind: row.kind,
    namespace: row.namespace,
    name: row.name,
    status: row.status,
  };
}
