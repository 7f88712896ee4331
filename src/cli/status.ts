// `policy-sync status` and `policy-sync explain`: read the hub and show, per synced policy, where it is
// enforced, overridden, pending or failed — from the `policysync.kuadrant.io/status` annotation the hub
// controller keeps (docs/architecture.md#status-on-the-hub), or from the policy's ManifestWorks when that annotation was truncated.
// The formatting is in statusformat.ts; this file does the reading.
import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import { readParamsRef, parseParamsObject } from '../core/params/classparams.ts';
import { readClusterFeedback } from '../core/works/feedback.ts';
import type { GroupVersionResource } from '../core/k8s/gvr.ts';
import { controllerLabelValue, readSourceRef, sourceHash } from '../core/works/manifestwork.ts';
import { CONTROLLER_LABEL, SOURCE_LABEL, STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { readPolicyStatus } from '../core/status/annotation.ts';
import { aggregatePolicyStatus, type ClusterInput, type PolicyStatus } from '../core/status/policystatus.ts';
import { classifyTargets } from '../core/targets/targetrefs.ts';
import { isNotFound, KubeHttp } from '../kube/http.ts';
import { RESOURCES, collectionPath, groupVersionPath, type ResourceRef } from '../kube/resource.ts';
import { getObject } from '../kube/writes.ts';
import { DEFAULT_CONTROLLER_NAME } from '../hub/assembly.ts';
import { loadKubeConfig } from '../kube/kubeconfig.ts';
import { formatExplain, formatExplainJson, formatRows, formatRowsJson, type PolicyRow } from './statusformat.ts';

export type { PolicyRow } from './statusformat.ts';

/** A mistake of the person at the terminal: printed as `error: <message>`, exit code 1, no stack. */
export class CliError extends Error {}

/** A policy kind listed by an owned GatewayClass, as the hub serves it. */
export interface SyncedKind extends GroupVersionResource {
  kind: string;
  singular: string;
  shortNames: string[];
}

export interface SyncedKinds {
  /** Names of the GatewayClasses whose spec.controllerName is ours. */
  classes: string[];
  /** Those of them whose params are in force: their Gateways are the hub controller's. */
  configured: string[];
  /** The kinds their valid params list and the hub serves, by `resource.group`. */
  kinds: SyncedKind[];
}

interface ApiResource {
  name: string;
  kind: string;
  singularName?: string;
  shortNames?: string[];
}

/** The policy kinds of every GatewayClass with our controllerName whose params parse. */
export async function readSyncedKinds(http: KubeHttp, controllerName: string): Promise<SyncedKinds> {
  const classes = await http.request<{ items: KubeObject[] }>('GET', collectionPath(RESOURCES.gatewayClasses));
  const owned: string[] = [];
  const configured: string[] = [];
  const wanted = new Map<string, GroupVersionResource>();
  for (const cls of classes.items) {
    if ((cls.spec as { controllerName?: string } | undefined)?.controllerName !== controllerName) continue;
    owned.push(cls.metadata.name);
    const ref = readParamsRef(cls);
    if (!ref.ok) continue;
    const resource = ref.ref.kind === 'ConfigMap' ? RESOURCES.configMaps : RESOURCES.policySyncParams;
    const params = await getObject(http, resource, ref.ref.namespace, ref.ref.name);
    const parsed = params ? parseParamsObject(ref.ref.kind, params) : undefined;
    if (!parsed?.ok) continue;
    configured.push(cls.metadata.name);
    // One entry per resource and group: two versions of a kind list the same objects.
    for (const k of parsed.params.policiesToSync) {
      const key = `${k.resource}.${k.group}`;
      if (!wanted.has(key)) wanted.set(key, { group: k.group, version: k.version, resource: k.resource });
    }
  }
  const kinds: SyncedKind[] = [];
  const discovery = new Map<string, Promise<ApiResource[] | undefined>>();
  for (const gvr of wanted.values()) {
    const gv = `${gvr.group}/${gvr.version}`;
    let list = discovery.get(gv);
    if (!list) {
      list = http.request<{ resources: ApiResource[] }>('GET', groupVersionPath(gvr)).then(
        (l) => l.resources,
        (err: unknown) => {
          if (isNotFound(err)) return undefined;
          throw err;
        },
      );
      discovery.set(gv, list);
    }
    // A kind listed in params but not served is skipped: the GatewayClass status says so.
    const served = (await list)?.find((r) => r.name === gvr.resource);
    if (!served) continue;
    kinds.push({ ...gvr, kind: served.kind, singular: served.singularName || served.kind.toLowerCase(), shortNames: served.shortNames ?? [] });
  }
  kinds.sort((a, b) => a.kind.localeCompare(b.kind) || a.group.localeCompare(b.group));
  return { classes: owned.sort(), configured: configured.sort(), kinds };
}

function policyResource(kind: GroupVersionResource): ResourceRef {
  return { group: kind.group, version: kind.version, resource: kind.resource, namespaced: true };
}

function rowOf(kind: SyncedKind, policy: KubeObject, status: PolicyStatus): PolicyRow {
  return {
    group: kind.group,
    version: kind.version,
    resource: kind.resource,
    kind: kind.kind,
    namespace: policy.metadata.namespace ?? '',
    name: policy.metadata.name,
    status,
  };
}

export interface ReadOptions {
  /**
   * Rebuild the per-cluster part from the ManifestWorks where the annotation was truncated (for
   * the matrix, JSON and explain; the table needs the summary only).
   */
  clusterDetail: boolean;
}

/**
 * Every policy of a synced kind that carries the hub's status annotation and is this controller's,
 * sorted by kind, namespace, name. A policy is the controller's as the hub decides it (several
 * controllers may share a hub): some target is a Gateway of a configured class of ours, or is
 * rejected for a reason of its own (e.g. cross-namespace) rather than for being someone else's.
 */
export async function readPolicyRows(http: KubeHttp, controllerName: string, synced: SyncedKinds, options: ReadOptions): Promise<PolicyRow[]> {
  if (synced.kinds.length === 0) return [];
  const classes = new Set(synced.configured);
  const gateways = await http.request<{ items: KubeObject[] }>('GET', collectionPath(RESOURCES.gateways));
  const managed = new Set(
    gateways.items
      .filter((g) => classes.has((g.spec as { gatewayClassName?: string } | undefined)?.gatewayClassName ?? ''))
      .map((g) => `${g.metadata.namespace ?? ''}/${g.metadata.name}`),
  );
  const ours = (policy: KubeObject): boolean =>
    classifyTargets(policy, (namespace, name) => managed.has(`${namespace}/${name}`)).some(
      (t) => t.state === 'syncable' || (t.reason !== 'GatewayNotManaged' && t.reason !== 'NotAGateway'),
    );
  const rows: PolicyRow[] = [];
  for (const kind of synced.kinds) {
    const list = await http.request<{ items: KubeObject[] }>('GET', collectionPath(policyResource(kind)));
    for (const policy of list.items) {
      const status = readPolicyStatus(policy.metadata.annotations?.[STATUS_ANNOTATION]);
      if (status && ours(policy)) rows.push(rowOf(kind, policy, status));
    }
  }
  rows.sort((a, b) => a.kind.localeCompare(b.kind) || a.group.localeCompare(b.group) || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  if (options.clusterDetail) {
    for (const [i, row] of rows.entries()) rows[i] = await withClusterDetail(http, controllerName, row);
  }
  return rows;
}

/** The row with its per-cluster part read from the works when the annotation holds the summary only. */
async function withClusterDetail(http: KubeHttp, controllerName: string, row: PolicyRow): Promise<PolicyRow> {
  if (!row.status.summary.truncated && row.status.clusters !== undefined) return row;
  return { ...row, status: statusFromWorks(row.status, await readPolicyWorks(http, controllerName, row), Date.now()) };
}

/** The works of one policy written by the controller `controllerName` (by the source and controller labels). */
export async function readPolicyWorks(http: KubeHttp, controllerName: string, row: PolicyRow): Promise<KubeObject[]> {
  const labelSelector = `${SOURCE_LABEL}=${sourceHash(row, row.namespace, row.name)},${CONTROLLER_LABEL}=${controllerLabelValue(controllerName)}`;
  const list = await http.request<{ items: KubeObject[] }>('GET', collectionPath(RESOURCES.manifestWorks), { query: { labelSelector } });
  return list.items.filter((work) => {
    const source = readSourceRef(work);
    // The label is a hash: the source-ref annotation says for sure.
    return (
      source?.group === row.group &&
      source.resource === row.resource &&
      source.namespace === row.namespace &&
      source.name === row.name &&
      !work.metadata.deletionTimestamp
    );
  });
}

/**
 * The annotation's status with its per-cluster part rebuilt from the policy's works, as the hub
 * does (readClusterFeedback + aggregatePolicyStatus, at `now`); a work without status yet is Pending.
 * The summary (with `truncated: true`) and problems stay the hub's: they also count what works cannot
 * show — and so do the annotation's own entries for clusters without a work (lost to a conflict), when
 * only the statusFeedback values were left out of it.
 */
export function statusFromWorks(status: PolicyStatus, works: readonly KubeObject[], now: number): PolicyStatus {
  const clusters: Record<string, ClusterInput> = {};
  for (const work of works) {
    const cluster = work.metadata.namespace ?? '';
    clusters[cluster] = work.status === undefined ? { state: 'pending' } : { state: 'work', feedback: readClusterFeedback(work) };
  }
  const merged = { ...status.clusters, ...aggregatePolicyStatus({ clusters, now }).clusters };
  return { ...status, clusters: Object.fromEntries(Object.keys(merged).sort().map((name) => [name, merged[name]!])) };
}

/** `<resource>/<namespace>/<name>` as typed for `explain`. */
export interface PolicyReference {
  resource: string;
  namespace: string;
  name: string;
}

export function parsePolicyReference(value: string): PolicyReference {
  const [resource, namespace, name, ...rest] = value.split('/');
  if (!resource || !namespace || !name || rest.length > 0) {
    throw new InvalidArgumentError(`expected <resource>/<namespace>/<name>, e.g. authpolicies/payments/payments-auth; got "${value}"`);
  }
  return { resource, namespace, name };
}

/**
 * The synced kinds `text` names, case-insensitively, as kubectl would: plural (`authpolicies`),
 * singular, Kind (`AuthPolicy`) or a short name, each optionally qualified by `.group` or
 * `.version.group` (`authpolicies.kuadrant.io`, `authpolicies.v1.kuadrant.io`).
 */
export function matchKinds(text: string, kinds: readonly SyncedKind[]): SyncedKind[] {
  const q = text.toLowerCase();
  return kinds.filter((k) => {
    const names = [k.resource, k.singular, k.kind, ...k.shortNames].map((n) => n.toLowerCase());
    const group = k.group.toLowerCase();
    return names.some((n) => q === n || (group !== '' && (q === `${n}.${group}` || q === `${n}.${k.version.toLowerCase()}.${group}`)));
  });
}

function kindList(kinds: readonly SyncedKind[]): string {
  return kinds.length === 0 ? 'none' : kinds.map((k) => (k.group === '' ? k.resource : `${k.resource}.${k.group}`)).join(', ');
}

/** The one policy `ref` names, with its status; CliError when the kind is not synced, or the policy is missing or has no status. */
export async function readPolicyRow(http: KubeHttp, controllerName: string, synced: SyncedKinds, ref: PolicyReference): Promise<PolicyRow> {
  const matches = matchKinds(ref.resource, synced.kinds);
  if (matches.length === 0) {
    throw new CliError(
      `"${ref.resource}" is not a policy kind synced by ${controllerName} (synced: ${kindList(synced.kinds)})${noClassHint(synced, controllerName)}`,
    );
  }
  if (matches.length > 1) {
    throw new CliError(`"${ref.resource}" is ambiguous: ${kindList(matches)}; qualify it with its group, e.g. ${matches[0]!.resource}.${matches[0]!.group}`);
  }
  const kind = matches[0]!;
  const what = `${kind.kind} ${ref.namespace}/${ref.name}`;
  const policy = await getObject(http, policyResource(kind), ref.namespace, ref.name);
  if (!policy) throw new CliError(`${what} not found (${kind.resource}.${kind.group})`);
  const text = policy.metadata.annotations?.[STATUS_ANNOTATION];
  const status = readPolicyStatus(text);
  if (!status) {
    throw new CliError(
      text === undefined
        ? `${what} has no ${STATUS_ANNOTATION} annotation: it is not synced (no target is a Gateway of a GatewayClass of ${controllerName}), or the hub controller has not processed it yet`
        : `${what} has an unreadable ${STATUS_ANNOTATION} annotation`,
    );
  }
  return withClusterDetail(http, controllerName, rowOf(kind, policy, status));
}

function noClassHint(synced: SyncedKinds, controllerName: string): string {
  return synced.classes.length === 0 ? `; no GatewayClass has spec.controllerName ${controllerName} (see --controller-name)` : '';
}

interface CommonFlags {
  kubeconfig?: string;
  controllerName: string;
}

function commonOptions(command: Command): Command {
  return command
    .option('--kubeconfig <path>', 'kubeconfig of the hub (default: $KUBECONFIG or ~/.kube/config)')
    .option('--controller-name <name>', 'GatewayClass spec.controllerName of the hub controller', DEFAULT_CONTROLLER_NAME);
}

/** Runs `body` with a hub client; a failure is printed as one `error:` line and gives exit code 1. */
async function withHub(flags: CommonFlags, body: (http: KubeHttp) => Promise<string>): Promise<void> {
  let http: KubeHttp | undefined;
  try {
    http = new KubeHttp(loadKubeConfig(flags.kubeconfig));
    process.stdout.write(await body(http));
  } catch (err) {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  } finally {
    http?.destroy();
  }
}

export function statusCommand(): Command {
  return commonOptions(new Command('status'))
    .description('print, per synced policy, on how many clusters it is enforced, overridden, pending or failed')
    .addOption(
      new Option('-o, --output <format>', 'table; wide adds the policy × cluster matrix; json for scripts').choices(['table', 'wide', 'json']).default('table'),
    )
    .action(async (flags: CommonFlags & { output: 'table' | 'wide' | 'json' }) => {
      await withHub(flags, async (http) => {
        const synced = await readSyncedKinds(http, flags.controllerName);
        if (synced.classes.length === 0 && flags.output !== 'json') {
          process.stderr.write(`warning: no GatewayClass has spec.controllerName ${flags.controllerName} (see --controller-name)\n`);
        }
        const rows = await readPolicyRows(http, flags.controllerName, synced, { clusterDetail: flags.output !== 'table' });
        return flags.output === 'json' ? formatRowsJson(rows) : formatRows(rows, flags.output === 'wide');
      });
    });
}

export function explainCommand(): Command {
  return commonOptions(new Command('explain'))
    .description('show one synced policy per cluster: state, reason, message, overriding local policies')
    .addArgument(
      new Argument('<policy>', '<resource>/<namespace>/<name>; resource as plural (authpolicies), plural.group or Kind (AuthPolicy)').argParser(
        parsePolicyReference,
      ),
    )
    .addOption(new Option('-o, --output <format>', 'text, or json for scripts').choices(['text', 'json']).default('text'))
    .action(async (ref: PolicyReference, flags: CommonFlags & { output: 'text' | 'json' }) => {
      await withHub(flags, async (http) => {
        const synced = await readSyncedKinds(http, flags.controllerName);
        const row = await readPolicyRow(http, flags.controllerName, synced, ref);
        return flags.output === 'json' ? formatExplainJson(row) : formatExplain(row);
      });
    });
}
