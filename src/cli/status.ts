// `policy-sync status` and `policy-sync explain`: read the hub and show, per synced policy, where it is
// enforced, overridden, pending or failed — from the `policysync.kuadrant.io/status` annotation the hub
// controller keeps (docs/design/status.md#status-on-the-hub), or from the policy's ManifestWorks when that annotation was truncated.
// This file does the reading; the commands are statuscommand.ts and waitcommand.ts, the renderings
// tableformat.ts and statusformat.ts.
import { InvalidArgumentError } from 'commander';
import { readParamsRef, parseParamsObject } from '../core/params/classparams.ts';
import type { SyncParams } from '../core/params/params.ts';
import { workRevision } from '../core/works/revision.ts';
import { readClusterFeedback } from '../core/works/feedback.ts';
import { bundleSourceSelector, copyWorks } from '../core/works/bundle.ts';
import type { GroupVersionResource } from '../core/k8s/gvr.ts';
import { controllerLabelValue, readSourceRef, sourceHash } from '../core/works/manifestwork.ts';
import { CONTROLLER_LABEL, SOURCE_LABEL, STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { readPolicyStatus } from '../core/status/annotation.ts';
import { aggregatePolicyStatus, type ClusterInput, type PolicyStatus } from '../core/status/policystatus.ts';
import { classifyTargets, GATEWAY_GROUP, GATEWAY_KIND, readTargets } from '../core/targets/targetrefs.ts';
import type { KubeHttp } from '../kube/http.ts';
import { isNotFound } from '../kube/http.ts';
import { RESOURCES, collectionPath, groupVersionPath, type ResourceRef } from '../kube/resource.ts';
import { getObject } from '../kube/writes.ts';
import { CliError } from './common.ts';
import { listAll } from './lists.ts';
import type { PolicyRow } from './statusformat.ts';

export type { PolicyRow } from './statusformat.ts';


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
  /** The params of each configured class, by class name. */
  params: Map<string, SyncParams>;
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
  const listed = new Map<string, GroupVersionResource>();
  const paramsOf = new Map<string, SyncParams>();
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
    paramsOf.set(cls.metadata.name, parsed.params);
    // One entry per resource and group: two versions of a kind list the same objects.
    for (const k of parsed.params.policiesToSync) {
      const key = `${k.resource}.${k.group}`;
      if (!listed.has(key)) listed.set(key, { group: k.group, version: k.version, resource: k.resource });
    }
  }
  const kinds: SyncedKind[] = [];
  const discovery = new Map<string, Promise<ApiResource[] | undefined>>();
  for (const gvr of listed.values()) {
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
  return { classes: owned.sort(), configured: configured.sort(), kinds, params: paramsOf };
}

export function policyResource(kind: GroupVersionResource): ResourceRef {
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
   * the per-cluster rows, JSON, YAML and explain; the table needs the summary only).
   */
  clusterDetail: boolean;
  /** Only this namespace; undefined: all of them (`-A`). */
  namespace?: string;
  /** Only these kinds; default: every synced kind. */
  kinds?: readonly SyncedKind[];
  /** Only the policies this accepts (e.g. those targeting one Gateway). */
  filter?: (policy: KubeObject) => boolean;
}

/** Whether a Gateway is the hub controller's: its class is one of ours with params in force. */
export function isManagedGateway(gateway: KubeObject, synced: SyncedKinds): boolean {
  return synced.configured.includes((gateway.spec as { gatewayClassName?: string } | undefined)?.gatewayClassName ?? '');
}

/**
 * A policy is the controller's as the hub decides it (several controllers may share a hub): some target
 * is a Gateway of a configured class of ours, or is rejected for a reason of its own (e.g. cross-namespace)
 * rather than for being someone else's.
 */
export function isOurs(policy: KubeObject, managed: (namespace: string, name: string) => boolean): boolean {
  return classifyTargets(policy, managed).some((t) => t.state === 'syncable' || (t.reason !== 'GatewayNotManaged' && t.reason !== 'NotAGateway'));
}

/** The row of a policy that carries the hub's status annotation, or undefined. */
export function policyRow(kind: SyncedKind, policy: KubeObject): PolicyRow | undefined {
  const status = readPolicyStatus(policy.metadata.annotations?.[STATUS_ANNOTATION]);
  return status ? rowOf(kind, policy, status) : undefined;
}

export function compareRows(a: PolicyRow, b: PolicyRow): number {
  return a.kind.localeCompare(b.kind) || a.group.localeCompare(b.group) || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);
}

/**
 * Every policy of a synced kind that carries the hub's status annotation and is this controller's
 * (isOurs), sorted by kind, namespace, name.
 */
export async function readPolicyRows(http: KubeHttp, controllerName: string, synced: SyncedKinds, options: ReadOptions): Promise<PolicyRow[]> {
  const kinds = options.kinds ?? synced.kinds;
  if (kinds.length === 0) return [];
  const gateways = await http.request<{ items: KubeObject[] }>('GET', collectionPath(RESOURCES.gateways));
  const managed = new Set(gateways.items.filter((g) => isManagedGateway(g, synced)).map((g) => `${g.metadata.namespace ?? ''}/${g.metadata.name}`));
  const rows: PolicyRow[] = [];
  for (const kind of kinds) {
    const list = await http.request<{ items: KubeObject[] }>('GET', collectionPath(policyResource(kind), options.namespace));
    for (const policy of list.items) {
      if (options.filter && !options.filter(policy)) continue;
      const row = policyRow(kind, policy);
      if (row && isOurs(policy, (namespace, name) => managed.has(`${namespace}/${name}`))) rows.push(row);
    }
  }
  rows.sort(compareRows);
  if (options.clusterDetail) {
    for (const [i, row] of rows.entries()) rows[i] = await withClusterDetail(http, controllerName, row);
  }
  return rows;
}

/** The row with its per-cluster part read from the works when the annotation holds the summary only. */
export async function withClusterDetail(http: KubeHttp, controllerName: string, row: PolicyRow): Promise<PolicyRow> {
  if (!row.status.summary.truncated && row.status.clusters !== undefined) return row;
  return { ...row, status: statusFromWorks(row.status, await readPolicyWorks(http, controllerName, row), Date.now()) };
}

/** The label selector of the works of one policy written by the controller `controllerName`. */
export function policyWorksSelector(controllerName: string, row: Pick<PolicyRow, 'group' | 'resource' | 'namespace' | 'name'>): string {
  return `${SOURCE_LABEL}=${sourceHash(row, row.namespace, row.name)},${CONTROLLER_LABEL}=${controllerLabelValue(controllerName)}`;
}

/** The label is a hash: the source-ref annotation says for sure. A work being deleted is no longer the policy's. */
export function isPolicyWork(work: KubeObject, row: Pick<PolicyRow, 'group' | 'resource' | 'namespace' | 'name'>): boolean {
  const source = readSourceRef(work);
  return source?.group === row.group && source.resource === row.resource && source.namespace === row.namespace && source.name === row.name && !work.metadata.deletionTimestamp;
}

/** The label selector of the bundles carrying a copy of one policy written by the controller `controllerName`. */
export function policyBundlesSelector(controllerName: string, row: Pick<PolicyRow, 'group' | 'resource' | 'namespace' | 'name'>): string {
  return `${bundleSourceSelector(sourceHash(row, row.namespace, row.name))},${CONTROLLER_LABEL}=${controllerLabelValue(controllerName)}`;
}

/**
 * The copy works of one policy written by the controller `controllerName`: its works of their own (by the source
 * and controller labels) and its copies in bundles (core/works/bundle.ts), one per cluster as the hub reads them.
 */
export async function readPolicyWorks(http: KubeHttp, controllerName: string, row: Pick<PolicyRow, 'group' | 'resource' | 'namespace' | 'name'>): Promise<KubeObject[]> {
  const [own, bundles] = await Promise.all([
    listAll(http, RESOURCES.manifestWorks, { labelSelector: policyWorksSelector(controllerName, row) }),
    listAll(http, RESOURCES.manifestWorks, { labelSelector: policyBundlesSelector(controllerName, row) }),
  ]);
  return policyCopies([...own, ...bundles], row);
}

/** Of works and bundles, the copy works of one policy. */
export function policyCopies(works: readonly KubeObject[], row: Pick<PolicyRow, 'group' | 'resource' | 'namespace' | 'name'>): KubeObject[] {
  return copyWorks(works).filter((work) => isPolicyWork(work, row));
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
  const rebuilt = aggregatePolicyStatus({ clusters, now }).clusters ?? {};
  // The revision each cluster runs is what its work's copy carries, as the hub reports it; its rollout phase
  // (Progressive) is the hub's alone and stays where the annotation kept it.
  for (const work of works) {
    const cluster = work.metadata.namespace ?? '';
    const revision = workRevision(work);
    const kept = status.clusters?.[cluster]?.rollout;
    if (rebuilt[cluster]) rebuilt[cluster] = { ...rebuilt[cluster], ...(revision === undefined ? {} : { revision }), ...(kept ? { rollout: kept } : {}) };
  }
  const merged = { ...status.clusters, ...rebuilt };
  return { ...status, clusters: Object.fromEntries(Object.keys(merged).sort().map((name) => [name, merged[name]!])) };
}

/** `<resource>/[<namespace>/]<name>` as typed for `explain`, `wait` and `status`; no namespace: `-n`'s. */
export interface PolicyReference {
  resource: string;
  namespace?: string;
  name: string;
}

const REFERENCE_FORM = '<resource>/<namespace>/<name> or <resource>/<name>, e.g. authpolicy/payments/payments-auth';

export function parsePolicyReference(value: string): PolicyReference {
  const parts = value.split('/');
  if (parts.some((p) => p === '') || parts.length < 2 || parts.length > 3) {
    throw new InvalidArgumentError(`expected ${REFERENCE_FORM}; got "${value}"`);
  }
  const [resource, a, b] = parts as [string, string, string | undefined];
  return b === undefined ? { resource, name: a } : { resource, namespace: a, name: b };
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

/** The one kind `resource` names among the synced ones; CliError when none or several. */
export function resolveKind(synced: SyncedKinds, controllerName: string, resource: string): SyncedKind {
  const matches = matchKinds(resource, synced.kinds);
  if (matches.length === 0) {
    throw new CliError(`"${resource}" is not a policy kind synced by ${controllerName} (synced: ${kindList(synced.kinds)})${noClassHint(synced, controllerName)}`);
  }
  if (matches.length > 1) {
    throw new CliError(`"${resource}" is ambiguous: ${kindList(matches)}; qualify it with its group, e.g. ${matches[0]!.resource}.${matches[0]!.group}`);
  }
  return matches[0]!;
}

/** A policy named on the command line, read from the hub (undefined status: the hub has not reported on it). */
export interface NamedPolicy {
  kind: SyncedKind;
  policy: KubeObject;
  status: PolicyStatus | undefined;
}

/** The policy `ref` names, in `namespace` unless the reference has one; CliError when the kind is not synced or the policy is missing. */
export async function readNamedPolicy(http: KubeHttp, controllerName: string, synced: SyncedKinds, ref: PolicyReference, namespace: string): Promise<NamedPolicy> {
  const kind = resolveKind(synced, controllerName, ref.resource);
  const ns = ref.namespace ?? namespace;
  const policy = await getObject(http, policyResource(kind), ns, ref.name);
  if (!policy) throw new CliError(`${kind.kind} ${ns}/${ref.name} not found (${kind.resource}.${kind.group})`);
  return { kind, policy, status: readPolicyStatus(policy.metadata.annotations?.[STATUS_ANNOTATION]) };
}

/** The one policy `ref` names, with its status; CliError when the kind is not synced, or the policy is missing or has no status. */
export async function readPolicyRow(http: KubeHttp, controllerName: string, synced: SyncedKinds, ref: PolicyReference, namespace: string): Promise<PolicyRow> {
  return namedPolicyRow(http, controllerName, await readNamedPolicy(http, controllerName, synced, ref, namespace));
}

/** The row of a policy read by readNamedPolicy; CliError when it has no status. */
export async function namedPolicyRow(http: KubeHttp, controllerName: string, { kind, policy, status }: NamedPolicy): Promise<PolicyRow> {
  if (!status) {
    const what = `${kind.kind} ${policy.metadata.namespace ?? ''}/${policy.metadata.name}`;
    throw new CliError(
      policy.metadata.annotations?.[STATUS_ANNOTATION] === undefined
        ? `${what} has no ${STATUS_ANNOTATION} annotation: it is not synced (no target is a Gateway of a GatewayClass of ${controllerName}), or the hub controller has not processed it yet`
        : `${what} has an unreadable ${STATUS_ANNOTATION} annotation`,
    );
  }
  return withClusterDetail(http, controllerName, rowOf(kind, policy, status));
}

function noClassHint(synced: SyncedKinds, controllerName: string): string {
  return synced.classes.length === 0 ? `; no GatewayClass has spec.controllerName ${controllerName} (see --controller-name)` : '';
}

/** How `gateway/NS/NAME` may name the Gateway kind, as kubectl would (plural, singular, Kind, qualified). */
export function isGatewayResource(resource: string): boolean {
  const names = ['gateway', 'gateways'];
  const q = resource.toLowerCase();
  return names.some((n) => q === n || q === `${n}.${GATEWAY_GROUP}` || q === `${n}.v1.${GATEWAY_GROUP}`);
}

/** Whether a target of `policy` names the Gateway `namespace/name` (a targetRef without namespace means the policy's). */
export function targetsGateway(policy: KubeObject, namespace: string, name: string): boolean {
  return readTargets(policy).some(
    (t) => t.group === GATEWAY_GROUP && t.kind === GATEWAY_KIND && t.name === name && (t.namespace ?? policy.metadata.namespace) === namespace,
  );
}
