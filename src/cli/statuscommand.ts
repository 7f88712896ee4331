// `policy-sync status [target]` and `policy-sync explain <policy>`: the reading is status.ts, the renderings
// tableformat.ts (kubectl-style table, per-cluster rows, names, List) and statusformat.ts (explain).
import { Argument, Command, Option } from 'commander';
import type { KubeObject } from '../core/k8s/objects.ts';
import { Informer } from '../kube/informer.ts';
import type { KubeHttp } from '../kube/http.ts';
import { RESOURCES } from '../kube/resource.ts';
import { getObject } from '../kube/writes.ts';
import { groupResourceKey } from '../core/k8s/gvr.ts';
import { CONTROLLER_LABEL } from '../core/metadatakeys.ts';
import { workCopy } from '../core/works/revision.ts';
import { isSpokeConfigWork, spokeReportText } from '../core/spoke/spokeconfig.ts';
import { parseSpokeReport } from '../core/spoke/reportwire.ts';
import type { SpokeReport } from '../core/spoke/spokereport.ts';
import { unplacedCopies } from '../core/spoke/spoketruth.ts';
import { copyWorks } from '../core/works/bundle.ts';
import { controllerLabelValue, readSourceRef } from '../core/works/manifestwork.ts';
import { listAll } from './lists.ts';
import { CliError, hubOptions, namespaceOf, terminalWidth, withHub, type HubFlags } from './common.ts';
import { addDecisionOptions, type DecisionFlags } from './decisionflags.ts';
import {
  compareRows,
  isGatewayResource,
  isManagedGateway,
  isOurs,
  namedPolicyRow,
  parsePolicyReference,
  policyResource,
  policyRow,
  readPolicyRow,
  readPolicyRows,
  readNamedPolicy,
  readSyncedKinds,
  resolveKind,
  targetsGateway,
  withClusterDetail,
  type PolicyReference,
  type SyncedKind,
  type SyncedKinds,
} from './status.ts';
import { formatExplain, type PolicyRow } from './statusformat.ts';
import { explainVariants } from './variantfields.ts';
import { variantsItem } from './variantformat.ts';
import {
  clusterCells,
  clusterHeader,
  columnWidths,
  formatDocument,
  formatLingeringTable,
  type LingeringRow,
  formatNames,
  hasRollout,
  hasVariants,
  listOf,
  policyItem,
  renderLine,
  tableCells,
  tableHeader,
  type TableOptions,
} from './tableformat.ts';

export const OUTPUTS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
export type Output = (typeof OUTPUTS)[number];

interface StatusFlags extends HubFlags {
  output: Output;
  allNamespaces?: boolean;
  watch?: boolean;
  lingering?: boolean;
}

/** What `status [target]` lists, once the target is read. */
interface Selection {
  kinds: readonly SyncedKind[];
  /** Undefined: every namespace. */
  namespace: string | undefined;
  filter?: (policy: KubeObject) => boolean;
  /** One policy named: printed as itself (not a List), an error when missing. */
  single?: PolicyReference;
  /** `gateway/NS/NAME`: the per-cluster rows of every policy on it. */
  gateway?: { namespace: string; name: string };
}

function reference(text: string): PolicyReference {
  try {
    return parsePolicyReference(text);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

async function select(http: KubeHttp, flags: StatusFlags, synced: SyncedKinds, target: string | undefined): Promise<Selection> {
  const namespace = flags.allNamespaces ? undefined : namespaceOf(flags);
  if (target === undefined) return { kinds: synced.kinds, namespace };
  if (!target.includes('/')) {
    if (isGatewayResource(target)) throw new CliError(`name one Gateway: gateway/<namespace>/<name> or gateway/<name>; got "${target}"`);
    return { kinds: [resolveKind(synced, flags.controllerName, target)], namespace };
  }
  const ref = reference(target);
  const ns = ref.namespace ?? namespaceOf(flags);
  if (isGatewayResource(ref.resource)) {
    if (!(await getObject(http, RESOURCES.gateways, ns, ref.name))) throw new CliError(`Gateway ${ns}/${ref.name} not found`);
    // Every namespace: a policy elsewhere that names this Gateway is shown with its CrossNamespace problem.
    return { kinds: synced.kinds, namespace: undefined, filter: (p) => targetsGateway(p, ns, ref.name), gateway: { namespace: ns, name: ref.name } };
  }
  const kind = resolveKind(synced, flags.controllerName, ref.resource);
  return { kinds: [kind], namespace: ns, filter: (p) => p.metadata.name === ref.name, single: { ...ref, namespace: ns } };
}

/** Whether the rows are shown per cluster: `-o wide`, or a Gateway's view. */
function perCluster(flags: StatusFlags, selection: Selection): boolean {
  return flags.output === 'wide' || (selection.gateway !== undefined && flags.output === 'table');
}

function tableOptions(flags: StatusFlags, selection: Selection, rows: readonly PolicyRow[]): TableOptions {
  const width = terminalWidth();
  const namespaceColumn = selection.namespace === undefined && (selection.gateway === undefined || rows.some((r) => r.namespace !== selection.gateway!.namespace));
  return {
    namespaceColumn: namespaceColumn || flags.allNamespaces === true,
    wide: flags.output === 'wide',
    rolloutColumn: hasRollout(rows),
    variantsColumn: hasVariants(rows),
    ...(width === undefined ? {} : { width }),
  };
}

/**
 * The text for a set of rows, and for one row again when it changes (watch): the same columns, padded to
 * the widths the first print used (or wider, for a longer cell).
 */
interface Printer {
  all(rows: readonly PolicyRow[]): string;
  again(row: PolicyRow): string;
}

function printer(flags: StatusFlags, selection: Selection, watching: boolean): Printer {
  if (flags.output === 'name') return { all: formatNames, again: (row) => formatNames([row]) };
  if (flags.output === 'json' || flags.output === 'yaml') {
    const format = flags.output;
    // Watching, kubectl prints each object as it comes, not a List.
    const one = (row: PolicyRow): string => formatDocument(policyItem(row), format) + (format === 'yaml' ? '---\n' : '');
    if (watching) return { all: (rows) => rows.map(one).join(''), again: one };
    return { all: (rows) => formatDocument(selection.single ? policyItem(rows[0]!) : listOf(rows), format), again: one };
  }
  let widths: number[] = [];
  let options: TableOptions = { namespaceColumn: false };
  let unknown = false;
  const cells = (row: PolicyRow): string[][] => (perCluster(flags, selection) ? clusterCells(row, options) : [tableCells(row, options, unknown)]);
  const lines = (rows: readonly string[][]): string => rows.map((c) => `${renderLine(c, widths, options.width)}\n`).join('');
  return {
    all: (rows) => {
      options = tableOptions(flags, selection, rows);
      unknown = rows.some((r) => (r.status.summary.unknown ?? 0) > 0);
      const header = perCluster(flags, selection) ? clusterHeader(options) : tableHeader(rows, options);
      const body = rows.flatMap(cells);
      widths = columnWidths([header, ...body]);
      return lines([header, ...body]);
    },
    again: (row) => {
      const body = cells(row);
      widths = columnWidths([widths.map((w) => ' '.repeat(w)), ...body]);
      return lines(body);
    },
  };
}

function nothingFound(selection: Selection): string {
  if (selection.gateway) return `No synced policies target Gateway ${selection.gateway.namespace}/${selection.gateway.name}.`;
  return selection.namespace === undefined ? 'No synced policies found.' : `No synced policies found in ${selection.namespace} namespace.`;
}

async function runStatus(http: KubeHttp, target: string | undefined, flags: StatusFlags): Promise<string> {
  if (flags.lingering) {
    if (target !== undefined || flags.watch) throw new CliError('--lingering lists every copy of the hub; it takes no target and no --watch');
    return runLingering(http, flags);
  }
  const synced = await readSyncedKinds(http, flags.controllerName);
  if (synced.classes.length === 0 && (flags.output === 'table' || flags.output === 'wide')) {
    process.stderr.write(`warning: no GatewayClass has spec.controllerName ${flags.controllerName} (see --controller-name)\n`);
  }
  const selection = await select(http, flags, synced, target);
  const detail = flags.output !== 'table' || selection.gateway !== undefined;
  if (flags.watch) return watchStatus(http, flags, synced, selection, detail);
  let rows: PolicyRow[];
  if (selection.single) {
    rows = [await readPolicyRow(http, flags.controllerName, synced, selection.single, selection.namespace ?? '')];
  } else {
    rows = await readPolicyRows(http, flags.controllerName, synced, {
      clusterDetail: detail,
      kinds: selection.kinds,
      ...(selection.namespace === undefined ? {} : { namespace: selection.namespace }),
      ...(selection.filter ? { filter: selection.filter } : {}),
    });
  }
  if (rows.length === 0 && flags.output !== 'json' && flags.output !== 'yaml') {
    process.stderr.write(`${nothingFound(selection)}\n`);
    return '';
  }
  return printer(flags, selection, false).all(rows);
}

/**
 * `status --lingering`: every copy the spoke agents' last reports list where no work of its policy places it, by the
 * rule the hub applies (core/spoke/spoketruth.ts unplacedCopies), its policy gone from the hub or not. Reports are read
 * as last written (the CLI cannot tell their age: the hub says Lingering only from fresh ones, after a grace).
 */
async function runLingering(http: KubeHttp, flags: StatusFlags): Promise<string> {
  const controller = controllerLabelValue(flags.controllerName);
  const works = await listAll(http, RESOURCES.manifestWorks, { labelSelector: `${CONTROLLER_LABEL}=${controller}` });
  const reports = new Map<string, SpokeReport>();
  for (const work of works.filter(isSpokeConfigWork)) {
    const text = spokeReportText(work);
    const parsed = text === undefined ? undefined : parseSpokeReport(text);
    if (parsed?.ok) reports.set(work.metadata.namespace ?? '', parsed.report);
  }
  const placed = new Map<string, Map<string, KubeObject>>();
  for (const w of copyWorks(works.filter((w) => !isSpokeConfigWork(w)))) {
    const ref = readSourceRef(w);
    const copy = workCopy(w);
    if (!ref || !copy) continue;
    const key = `${groupResourceKey(ref)}|${ref.namespace}/${ref.name}`;
    const byCluster = placed.get(key) ?? new Map<string, KubeObject>();
    byCluster.set(w.metadata.namespace ?? '', copy);
    placed.set(key, byCluster);
  }
  const copies = unplacedCopies(reports, (kind, source) => placed.get(`${kind}|${source}`) ?? new Map(), new Map(), Date.now());
  const synced = copies.length > 0 ? await readSyncedKinds(http, flags.controllerName) : undefined;
  const exists = new Map<string, boolean>();
  const rows: LingeringRow[] = [];
  for (const c of copies) {
    const key = `${c.kind}|${c.source}`;
    if (!exists.has(key)) {
      const slash = c.source.indexOf('/');
      // A kind no longer synced is read at no version: its policy counts as gone from the sync.
      const kind = synced?.kinds.find((k) => groupResourceKey(k) === c.kind);
      exists.set(key, kind !== undefined && (await getObject(http, { ...kind, namespaced: true }, c.source.slice(0, slash), c.source.slice(slash + 1))) !== undefined);
    }
    rows.push({ cluster: c.cluster, kind: c.kind, namespace: c.namespace, name: c.name, source: c.source, policyExists: exists.get(key)! });
  }
  if (flags.output === 'json' || flags.output === 'yaml') return formatDocument({ apiVersion: 'v1', kind: 'List', items: rows }, flags.output);
  if (rows.length === 0) {
    process.stderr.write("no copy is reported where no ManifestWork of this hub places it\n");
    return '';
  }
  return `${formatLingeringTable(rows, terminalWidth()).join('\n')}\n`;
}

/**
 * `status -w`: the rows, then a policy's rows again each time what they show changes, until interrupted.
 * The hub is followed with the project's watcher (an informer per synced kind, and one of the Gateways,
 * which decide whose a policy is), not by polling.
 */
async function watchStatus(http: KubeHttp, flags: StatusFlags, synced: SyncedKinds, selection: Selection, detail: boolean): Promise<string> {
  const gateways = new Informer(http, RESOURCES.gateways);
  const policies = selection.kinds.map((kind) => ({
    kind,
    informer: new Informer(http, policyResource(kind), {
      ...(selection.namespace === undefined ? {} : { namespace: selection.namespace }),
      ...(selection.single ? { fieldSelector: `metadata.name=${selection.single.name}` } : {}),
    }),
  }));
  const informers = [gateways, ...policies.map((p) => p.informer)];
  const managed = (namespace: string, name: string): boolean => {
    const g = gateways.store.get(`${namespace}/${name}`);
    return g !== undefined && isManagedGateway(g, synced);
  };
  const rowOf = async (kind: SyncedKind, policy: KubeObject): Promise<PolicyRow | undefined> => {
    if (selection.filter && !selection.filter(policy)) return undefined;
    const row = policyRow(kind, policy);
    if (!row || !isOurs(policy, managed)) return undefined;
    return detail ? withClusterDetail(http, flags.controllerName, row) : row;
  };
  const print = printer(flags, selection, true);
  const shown = new Map<string, string>();
  let queue = Promise.resolve();
  let ready = false;
  const failed = new Promise<never>((_, reject) => {
    for (const { kind, informer } of policies) {
      informer.onChange((change) => {
        if (!ready) return;
        const key = `${kind.resource}.${kind.group}/${change.object.metadata.namespace ?? ''}/${change.object.metadata.name}`;
        queue = queue.then(async () => {
          if (change.type === 'DELETED') {
            shown.delete(key);
            return;
          }
          const row = await rowOf(kind, change.object);
          if (!row) return;
          const text = print.again(row);
          if (shown.get(key) === text) return;
          shown.set(key, text);
          process.stdout.write(text);
        }).catch(reject);
      });
    }
  });
  try {
    for (const i of informers) i.start();
    await Promise.race([Promise.all(informers.map((i) => i.waitForSync())), failed, firstFailure(informers)]);
    const rows: PolicyRow[] = [];
    for (const { kind, informer } of policies) {
      for (const policy of informer.store.list()) {
        const row = await rowOf(kind, policy);
        if (row) rows.push(row);
      }
    }
    rows.sort(compareRows);
    if (rows.length === 0 && (flags.output === 'table' || flags.output === 'wide')) process.stderr.write(`${nothingFound(selection)}\n`);
    else process.stdout.write(print.all(rows));
    // What each row shows now, to print it again only when that changes.
    for (const row of rows) shown.set(`${row.resource}.${row.group}/${row.namespace}/${row.name}`, print.again(row));
    ready = true;
    await failed;
    return '';
  } finally {
    await Promise.all(informers.map((i) => i.stop()));
  }
}

/** Rejects with the first list or watch failure before the caches are synced: an unreachable hub is an error, not a hang. */
function firstFailure(informers: readonly Informer[]): Promise<never> {
  return new Promise((_, reject) => {
    for (const i of informers) i.onFailure((err) => (i.synced ? undefined : reject(err)));
  });
}

export function statusCommand(): Command {
  return hubOptions(new Command('status'))
    .description('print, per synced policy, on how many clusters it is enforced, overridden, pending or failed')
    .addArgument(
      new Argument(
        '[target]',
        'gateway/[<namespace>/]<name>: every policy on that Gateway, per cluster; <resource>/[<namespace>/]<name>: one policy; <resource>: one kind (plural, singular, Kind or short name, optionally .group)',
      ),
    )
    .option('-A, --all-namespaces', 'list the policies of every namespace')
    .addOption(
      new Option('-o, --output <format>', 'table; wide: one line per policy per cluster; json or yaml: a v1 List; name: kind.group/name').choices(OUTPUTS).default('table'),
    )
    .option('-w, --watch', 'after listing, print a policy again each time what it shows changes (until interrupted)')
    .option('--lingering', "list the copies the spoke agents' reports show where no ManifestWork of this hub places them, the policy gone from the hub or not")
    .action(async (target: string | undefined, flags: StatusFlags) => {
      await withHub(flags, (http) => runStatus(http, target, flags));
    });
}

export function explainCommand(): Command {
  return addDecisionOptions(hubOptions(new Command('explain')), { for: 'preview' })
    .description(
      'show one synced policy per cluster: state, reason, message, overriding local policies, and each field its PolicyVariants set in the copy and from where (from the hub\'s own decision, as diff runs it)',
    )
    .addArgument(new Argument('<policy>', '<resource>/[<namespace>/]<name>; resource as plural (authpolicies), plural.group, Kind (AuthPolicy) or short name'))
    .addOption(
      new Option('-o, --output <format>', 'text; json or yaml: the policy as status -o json shows it, with its variants\' fields per cluster').choices(['text', 'json', 'yaml']).default('text'),
    )
    .action(async (policy: string, flags: HubFlags & DecisionFlags & { output: 'text' | 'json' | 'yaml' }) => {
      await withHub(flags, async (http) => {
        const ref = reference(policy);
        const synced = await readSyncedKinds(http, flags.controllerName);
        const named = await readNamedPolicy(http, flags.controllerName, synced, ref, namespaceOf(flags));
        const row = await namedPolicyRow(http, flags.controllerName, named);
        const variants = await explainVariants(http, flags, synced, named.kind, named.policy);
        if (flags.output === 'text') return formatExplain(row, variants);
        return formatDocument({ ...policyItem(row), ...(variants ? { variants: variantsItem(variants) } : {}) }, flags.output);
      });
    });
}
