// `policy-sync diff` promises the hub controller's own decisions (README, "diff"; issue 30). One regression test
// per class of decision the hub makes, on the real plane (the hub controller in-process with its spoke
// configuration placed and the default placement rules, no --trust-decision-labels; the spoke agents in-process on
// both spokes; the real OCM work agents and placement controller; `diff` is the CLI's own command, run in this
// process): for each, the hub converges, then `diff` of each policy as it is must predict no write anywhere; then
// an edit is previewed with `diff -f` BEFORE it is applied, applied, and the clusters `diff` said the hub writes
// (write, relabel, rollback, hold, remove, a withdrawal) must be exactly the clusters whose work of that policy
// the hub controller then wrote, read from the hub apiserver's audit log (the hub runs with a user agent of its
// own). A case records every divergence and goes on; it fails at its end if there was any.
//   - strategy per kind: an AuthPolicy (its CRD has the status subresource: works use `Update`) and a kind whose
//     CRD has none (`ServerSideApply`), with a cluster whose agent never reported (AwaitingSpokeReport); and a
//     kind whose CRD loses the status subresource while the hub is down (diff run before the hub starts again);
//   - a local policy on spoke-1 covering a copy (Overridden there);
//   - a work over --max-work-bytes (TooLarge) and back;
//   - tenant lanes: the newer tenant's Gateway holds the downstream Gateway on spoke-1 when the older one's
//     Placement grows onto it;
//   - same-named rivals: two tenants' policies of one name whose copies would be one spoke object;
//   - refused decisions: a forged PlacementDecision;
//   - Progressive, onFailure Rollback: waves, the halt that rolls the canary back (held RolledBack), a cluster
//     joining during the halted rollout (held Joined), and the edit back.
//   - PolicyVariants: `diff -f variant.yaml` previews the policy it targets with the file's variant in place of the
//     hub's: a variant added (one cluster's copy changes), then moved to another cluster by a label selector.
// The fake clusters (no agent serves them: their works only have to exist) are ManagedClusters of this file's own.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { Command } from 'commander';
import { stringify } from 'yaml';
import { diffCommand } from '../../src/cli/diffcommand.ts';
import { PLACEMENT_LABEL, clustersFromDecisions } from '../../src/core/fleet/placement.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { REVISION_ANNOTATION, SOURCE_REF_ANNOTATION } from '../../src/core/metadatakeys.ts';
import { rolloutHold } from '../../src/core/works/revision.ts';
import type { PolicyStatus } from '../../src/core/status/policystatus.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, type ResourceRef } from '../../src/kube/resource.ts';
import { mergePatch, serverSideApply } from '../../src/kube/writes.ts';
import { AuditCursor } from '../../testkit/audit.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, authPolicy, createNamespace, gateway, gatewayClass, get, list, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { quiescent, releaseSpokes, spokeClients, startHub, startSpoke, testControllerName, uniqueName, type RunningHub, type RunningSpoke } from '../../testkit/hub.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { reportNothingLocal } from '../../testkit/spokereport.ts';
import { hubStatus, writeSpokeStatus } from '../../testkit/status.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';
import { BENCH_TOLERATIONS } from '../../testkit/world.ts';
import { ourWorks } from '../../testkit/works.ts';

const FIELD_MANAGER = 'policy-sync-tests';
/** The in-process hub controller's user agent: its writes in the audit log are told from the test's by it. */
const HUB_AGENT = 'policy-sync-hub-diff-drift';
const OCM = 'cluster.open-cluster-management.io';
const SPOKE_CONFIG = { namespace: 'policy-sync-system', name: uniqueName('spoke-config') };
const controllerName = testControllerName('drift');
const run = uniqueName('drift');
/** The largest ManifestWork the hub writes; `diff` is given the same (as the hub's flag, README). */
const MAX_WORK_BYTES = 16 * 1024;

// A policy kind whose CRD has NO status subresource: the hub's works apply its copies with ServerSideApply.
const NS_GROUP = 'drift.policysync.test';
const NO_STATUS: ResourceRef = { group: NS_GROUP, version: 'v1', resource: 'nostatuspolicies', namespaced: true };
const NO_STATUS_CRD = `nostatuspolicies.${NS_GROUP}`;
/** A policy kind whose CRD loses its status subresource while the hub is down: the hub's strategy for it flips to ServerSideApply. */
const FLIP: ResourceRef = { group: NS_GROUP, version: 'v1', resource: 'flippolicies', namespaced: true };
const FLIP_CRD = `flippolicies.${NS_GROUP}`;
const AUTH_KIND = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };
const NO_STATUS_KIND = { group: NS_GROUP, version: 'v1', resource: 'nostatuspolicies' };
const FLIP_KIND = { group: NS_GROUP, version: 'v1', resource: 'flippolicies' };

/** Puts a cluster in this file's ManagedClusterSets: its value is the cluster's own name. */
const MEMBER_LABEL = `policysync.kuadrant.io/test-${run}`;
/** Puts a cluster in the Progressive namespace's set (a cluster joins the placement when it gets it). */
const ROLLOUT_LABEL = `policysync.kuadrant.io/test-${run}-rollout`;
/** Makes spoke-2 the canary of the Progressive class. */
const CANARY_LABEL = `policysync.kuadrant.io/test-${run}-canary`;
/** Clusters no agent serves: ManagedClusters with a namespace on the hub. FAKE_REPORTED's report says every name is free; FAKE_SILENT never reports. */
const FAKE_REPORTED = `${run}-c3`;
const FAKE_SILENT = `${run}-c4`;
const SPOKES = ['spoke-1', 'spoke-2'];

// The hub namespaces: the owner's (All), the Progressive one, two tenants sharing one downstream namespace.
const nsAll = `${run}-all`;
const nsProg = `${run}-prog`;
const older = `${run}-older`;
const newer = `${run}-newer`;
/** One downstream namespace for the tenants' Gateways (MGC's convention): lanes and same-named rivals meet there. */
const shared = `${run}-gateways`;
const classAll = `${run}-all`;
const classProg = `${run}-prog`;
const classShared = `${run}-shared`;
const SET_ALL = `${run}-all`;
const SET_ROLLOUT = `${run}-rollout`;
const SET_S1 = `${run}-s1`;
const SET_S2 = `${run}-s2`;

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub;
let agents: RunningSpoke[] = [];
let dir: string;
/** Every divergence found, by case, for the closing diagnostic. */
const divergences: string[] = [];
/** What diff said and the hub did at each step, for the closing diagnostic. */
const observations: string[] = [];

const agentLogs = (): string => workAgentLogs(sandbox, 10);

/**
 * A policy kind of this file's own: a GEP-713 policy by its schema (spec.targetRef an object), the rest kept
 * open; `statusSubresource` false: status is part of the object (a whole write of it would clear what the
 * spoke's controller wrote there, so the hub's works apply its copies with ServerSideApply).
 */
function policyCrd(kind: string, plural: string, statusSubresource: boolean): KubeObject {
  const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${NS_GROUP}` },
    spec: {
      group: NS_GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{
        name: 'v1',
        served: true,
        storage: true,
        ...(statusSubresource ? { subresources: { status: {} } } : {}),
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { ...open, properties: { targetRef: open } }, status: open } } },
      }],
    },
  };
}

function customPolicy(kind: 'NoStatusPolicy' | 'FlipPolicy', ns: string, name: string, gatewayName: string, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: `${NS_GROUP}/v1`,
    kind,
    metadata: { name, namespace: ns },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: gatewayName }, limit: 10, ...extra },
  };
}

const noStatusPolicy = (ns: string, name: string, gatewayName: string, extra: Record<string, unknown> = {}): KubeObject => customPolicy('NoStatusPolicy', ns, name, gatewayName, extra);

const rego = (text: string): Record<string, unknown> => ({ rules: { authorization: { deny: { opa: { rego: text } } } } });

function resourceOfPolicy(policy: KubeObject): ResourceRef {
  if (policy.kind === 'AuthPolicy') return AUTH_POLICIES;
  if (policy.kind === 'NoStatusPolicy') return NO_STATUS;
  if (policy.kind === 'FlipPolicy') return FLIP;
  throw new Error(`not a policy kind of this file: ${policy.kind}`);
}

async function ssa(http: KubeHttp, resource: ResourceRef, object: KubeObject): Promise<KubeObject> {
  const { status, ...rest } = object;
  const applied = await serverSideApply<KubeObject>(http, resource, rest, { fieldManager: FIELD_MANAGER });
  if (status === undefined) return applied;
  return serverSideApply(http, resource, { ...rest, status }, { fieldManager: FIELD_MANAGER, subresource: 'status' });
}

async function applyPolicy(http: KubeHttp, policy: KubeObject): Promise<void> {
  await ssa(http, resourceOfPolicy(policy), policy);
}

async function clusterSet(name: string, labelSelector: unknown): Promise<void> {
  await ssa(hub, RESOURCES.managedClusterSets, { apiVersion: `${OCM}/v1beta2`, kind: 'ManagedClusterSet', metadata: { name }, spec: { clusterSelector: { selectorType: 'LabelSelector', labelSelector } } });
}

async function bind(namespace: string, set: string): Promise<void> {
  await ssa(hub, RESOURCES.managedClusterSetBindings, { apiVersion: `${OCM}/v1beta2`, kind: 'ManagedClusterSetBinding', metadata: { name: set, namespace }, spec: { clusterSet: set } });
}

/** Placement `name` over `sets`; it tolerates the fake clusters' taints (no agent serves them). */
async function placement(namespace: string, name: string, sets: string[]): Promise<void> {
  await ssa(hub, RESOURCES.placements, { apiVersion: `${OCM}/v1beta1`, kind: 'Placement', metadata: { name, namespace }, spec: { clusterSets: sets, tolerations: BENCH_TOLERATIONS } });
}

async function decided(namespace: string, name: string, clusters: string[]): Promise<void> {
  const want = [...clusters].sort().join(',');
  let last = '';
  await eventually(async () => {
    last = clustersFromDecisions(await list(hub, RESOURCES.placementDecisions, namespace, `${PLACEMENT_LABEL}=${name}`)).join(',');
    return last === want || undefined;
  }, { what: `Placement ${namespace}/${name} to decide ${want}`, timeoutMs: 90_000, context: () => `decided: ${last}` });
}

async function labelCluster(cluster: string, labels: Record<string, string | null>): Promise<void> {
  await mergePatch(hub, RESOURCES.managedClusters, undefined, cluster, { metadata: { labels } }, { fieldManager: FIELD_MANAGER });
}

async function fakeCluster(name: string): Promise<void> {
  await createNamespace(hub, name);
  await ssa(hub, RESOURCES.managedClusters, { apiVersion: `${OCM}/v1`, kind: 'ManagedCluster', metadata: { name, labels: { [MEMBER_LABEL]: name } }, spec: { hubAcceptsClient: true } });
}

/** The hub controller as this file runs it. Reports are acted on for longer than the file runs: `diff` counts every readable report as fresh. */
function startHubController(): Promise<RunningHub> {
  return startHub(sandbox.kubeConfig('hub'), {
    controllerName,
    spokeConfig: SPOKE_CONFIG,
    spokeReportStaleAfterMs: 30 * 60_000,
    trustDecisionLabels: false,
    maxWorkBytes: MAX_WORK_BYTES,
    connection: { userAgent: HUB_AGENT },
  });
}

before(async () => {
  sandbox = await testSandbox();
  hub = new KubeHttp(sandbox.kubeConfig('hub'), { userAgent: 'policy-sync-tests' });
  spokes = spokeClients(sandbox);
  dir = mkdtempSync(join(tmpdir(), 'diff-drift-'));
  for (const http of [hub, ...spokes.values()]) {
    await ssa(http, RESOURCES.crds, policyCrd('NoStatusPolicy', 'nostatuspolicies', false));
    await ssa(http, RESOURCES.crds, policyCrd('FlipPolicy', 'flippolicies', true));
  }
  for (const [name, spoke] of spokes) {
    for (const n of [SPOKE_CONFIG.namespace, nsAll, nsProg, shared]) await createNamespace(spoke, n);
    for (const gw of ['gw', 'gw2']) await ssa(spoke, RESOURCES.gateways, gateway(nsAll, gw, 'spoke-gateways'));
    await ssa(spoke, RESOURCES.gateways, gateway(nsProg, 'gw', 'spoke-gateways'));
    await labelCluster(name, { [MEMBER_LABEL]: name, [ROLLOUT_LABEL]: 'true', ...(name === 'spoke-2' ? { [CANARY_LABEL]: 'true' } : {}) });
  }
  for (const n of [nsAll, nsProg, older, newer]) await createNamespace(hub, n);
  for (const c of [FAKE_REPORTED, FAKE_SILENT]) await fakeCluster(c);
  await clusterSet(SET_ALL, { matchExpressions: [{ key: MEMBER_LABEL, operator: 'Exists' }] });
  await clusterSet(SET_ROLLOUT, { matchExpressions: [{ key: ROLLOUT_LABEL, operator: 'Exists' }] });
  await clusterSet(SET_S1, { matchLabels: { [MEMBER_LABEL]: 'spoke-1' } });
  await clusterSet(SET_S2, { matchLabels: { [MEMBER_LABEL]: 'spoke-2' } });
  await bind(nsAll, SET_ALL);
  await placement(nsAll, 'all', [SET_ALL]);
  await bind(nsProg, SET_ROLLOUT);
  await placement(nsProg, 'ring', [SET_ROLLOUT]);
  // The older tenant may place on both spokes but selects spoke-2 alone at first (and spoke-1 for its rival's
  // Gateway); the newer one has spoke-1.
  for (const set of [SET_S1, SET_S2]) await bind(older, set);
  await bind(newer, SET_S1);
  await placement(older, 'gws', [SET_S2]);
  await placement(older, 'rivals', [SET_S1]);
  await placement(newer, 'gws', [SET_S1]);

  await ssa(hub, RESOURCES.configMaps, paramsConfigMap(nsAll, 'params', { policiesToSync: [AUTH_KIND, NO_STATUS_KIND, FLIP_KIND] }));
  await ssa(hub, RESOURCES.gatewayClasses, gatewayClass(classAll, { namespace: nsAll, name: 'params' }, controllerName));
  await ssa(hub, RESOURCES.configMaps, paramsConfigMap(nsAll, 'shared-params', { policiesToSync: [AUTH_KIND], downstreamNamespace: shared }));
  await ssa(hub, RESOURCES.gatewayClasses, gatewayClass(classShared, { namespace: nsAll, name: 'shared-params' }, controllerName));
  await ssa(hub, RESOURCES.configMaps, paramsConfigMap(nsProg, 'params', {
    policiesToSync: [AUTH_KIND],
    rolloutStrategy: { type: 'Progressive', progressive: { canary: { matchLabels: { [CANARY_LABEL]: 'true' } }, maxConcurrency: '1', onFailure: 'Rollback' } },
  }));
  await ssa(hub, RESOURCES.gatewayClasses, gatewayClass(classProg, { namespace: nsProg, name: 'params' }, controllerName));
  for (const gw of ['gw', 'gw2']) await ssa(hub, RESOURCES.gateways, gateway(nsAll, gw, classAll, 'all'));
  await ssa(hub, RESOURCES.gateways, gateway(nsProg, 'gw', classProg, 'ring'));
  // The older tenant's Gateways first: one lane (`gw`, both tenants) and one Gateway each for the rivals.
  await ssa(hub, RESOURCES.gateways, gateway(older, 'gw', classShared, 'gws'));
  await ssa(hub, RESOURCES.gateways, gateway(older, 'rival-gw-a', classShared, 'rivals'));
  await sleep(1_100);
  await ssa(hub, RESOURCES.gateways, gateway(newer, 'gw', classShared, 'gws'));
  await ssa(hub, RESOURCES.gateways, gateway(newer, 'rival-gw-b', classShared, 'gws'));

  await decided(nsAll, 'all', [...SPOKES, FAKE_REPORTED, FAKE_SILENT]);
  await decided(nsProg, 'ring', SPOKES);
  await decided(older, 'gws', ['spoke-2']);
  await decided(older, 'rivals', ['spoke-1']);
  await decided(newer, 'gws', ['spoke-1']);
  controller = await startHubController();
  agents = await Promise.all(sandbox.spokes.map((s) => startSpoke(sandbox.kubeConfig(s.name), s.name, SPOKE_CONFIG, { reportHeartbeatMs: 1_000 })));
  await reportNothingLocal(hub, FAKE_REPORTED, { controllerName, configMap: SPOKE_CONFIG, kinds: [`authpolicies.kuadrant.io`, NO_STATUS_CRD, FLIP_CRD] });
});

after(async () => {
  process.stderr.write(`diff-drift observations:\n${observations.map((d) => `  ${d}`).join('\n')}\n`);
  if (divergences.length > 0) process.stderr.write(`diff-drift divergences:\n${divergences.map((d) => `  ${d}`).join('\n')}\n`);
  await Promise.all(agents.map((a) => a.stop()));
  await controller?.stop();
  for (const work of await ourWorks(hub, { controllerName })) await remove(hub, work);
  for (const [c, n] of [[classAll, nsAll], [classShared, nsAll], [classProg, nsProg]] as const) await remove(hub, gatewayClass(c, { namespace: n, name: 'params' }));
  for (const n of [nsAll, nsProg, older, newer, FAKE_REPORTED, FAKE_SILENT]) await removeNamespace(hub, n);
  for (const c of [FAKE_REPORTED, FAKE_SILENT]) await hub.request('DELETE', `/apis/${OCM}/v1/managedclusters/${c}`).catch(() => undefined);
  for (const set of [SET_ALL, SET_ROLLOUT, SET_S1, SET_S2]) await hub.request('DELETE', `/apis/${OCM}/v1beta2/managedclustersets/${set}`).catch(() => undefined);
  for (const s of SPOKES) await labelCluster(s, { [MEMBER_LABEL]: null, [ROLLOUT_LABEL]: null, [CANARY_LABEL]: null }).catch(() => undefined);
  for (const spoke of spokes.values()) await removeNamespace(spoke, shared).catch(() => undefined);
  for (const spoke of spokes.values()) await removeNamespace(spoke, nsProg).catch(() => undefined);
  await releaseSpokes(spokes, nsAll);
  hub.destroy();
});

// ---- policy-sync diff, as a person runs it ----

interface DiffCluster {
  cluster: string;
  action: string;
  message: string;
  wave?: number;
  revision?: number;
}
interface DiffItem {
  policy: { kind: string; namespace: string; name: string; resource: string; group: string };
  change: string;
  revision: number;
  clusters: DiffCluster[];
  problems: { reason: string; message: string }[];
}

/**
 * `policy-sync diff … -o json` in this process: the CLI's own command (src/cli/diffcommand.ts), its output taken
 * from stdout while it runs (a child process of the binary costs seconds of a loaded machine's CPU per run).
 */
async function diff(...args: string[]): Promise<DiffItem[]> {
  const argv = ['diff', ...args, '-o', 'json', '--kubeconfig', sandbox.hub.kubeconfig, '--controller-name', controllerName, '--max-work-bytes', String(MAX_WORK_BYTES)];
  const out: string[] = [];
  const err: string[] = [];
  const write = { stdout: process.stdout.write.bind(process.stdout), stderr: process.stderr.write.bind(process.stderr) };
  const exitCode = process.exitCode;
  process.exitCode = undefined;
  process.stdout.write = ((chunk: string | Uint8Array) => out.push(String(chunk)) > 0);
  process.stderr.write = ((chunk: string | Uint8Array) => err.push(String(chunk)) > 0);
  let code: number | string | undefined;
  try {
    await new Command('policy-sync').exitOverride().addCommand(diffCommand()).parseAsync(argv, { from: 'user' });
  } finally {
    process.stdout.write = write.stdout;
    process.stderr.write = write.stderr;
    code = process.exitCode;
    process.exitCode = exitCode;
  }
  assert.ok(code === undefined || code === 0, `policy-sync ${argv.slice(0, -6).join(' ')} failed (${code}): ${err.join('')}`);
  return (JSON.parse(out.join('')) as { items: DiffItem[] }).items;
}

const policyRef = (p: KubeObject): string => `${resourceOfPolicy(p).resource}.${resourceOfPolicy(p).group}/${p.metadata.namespace}/${p.metadata.name}`;
const keyOf = (p: { namespace?: string; name: string }): string => `${p.namespace}/${p.name}`;

/**
 * What `diff` says the hub writes on a cluster now: a work written (its copy, an earlier revision held, a
 * relabel or rollback), or deleted (no longer targeted, or withdrawn under local policies).
 */
function writes(c: DiffCluster): boolean {
  return predictedWrite(c) !== undefined;
}

/** A write to a cluster's work: its work written (created or changed), or deleted. */
type WorkWrite = 'write' | 'delete';

function predictedWrite(c: DiffCluster): WorkWrite | undefined {
  if (['write', 'relabel', 'rollback', 'hold'].includes(c.action)) return 'write';
  if (c.action === 'remove' || (c.action === 'skip' && c.message.endsWith('its copy is withdrawn'))) return 'delete';
  return undefined;
}

/** By cluster: what diff says the hub writes to its work. */
function predictedWrites(item: DiffItem): Map<string, WorkWrite> {
  return new Map(item.clusters.flatMap((c) => {
    const w = predictedWrite(c);
    return w ? [[c.cluster, w] as const] : [];
  }));
}

/** Where `said` (diff) and `did` (the hub) differ, each said in words. */
function compareWrites(what: string, item: DiffItem, said: ReadonlyMap<string, WorkWrite>, did: ReadonlyMap<string, WorkWrite>): string[] {
  const found: string[] = [];
  const name = `${item.policy.kind} ${keyOf(item.policy)}`;
  for (const cluster of new Set([...said.keys(), ...did.keys()])) {
    if (said.get(cluster) === did.get(cluster)) continue;
    const entry = item.clusters.find((c) => c.cluster === cluster);
    const hub = did.get(cluster) === 'write' ? 'wrote its work' : did.get(cluster) === 'delete' ? 'deleted its work' : 'wrote nothing';
    found.push(`${what}: ${name}: diff said ${entry ? describe(entry) : 'nothing of that cluster'}; the hub ${hub} on ${cluster}`);
  }
  return found;
}

const listWrites = (writes: ReadonlyMap<string, WorkWrite>): string => [...writes].sort().map(([c, w]) => `${c}:${w}`).join(' ') || 'nothing';

const describe = (c: DiffCluster): string => `${c.cluster}=${c.action}${c.revision === undefined ? '' : `@${c.revision}`} (${c.message})`;

/**
 * Once the hub has converged: `diff` of each policy as it is predicts no write on any cluster (and the actions
 * `expected`, by policy and cluster). Divergences are recorded, so that the case goes on to its edit; the case
 * fails on them at its end (noDivergenceSince).
 */
async function assertConverged(what: string, policies: KubeObject[], expected: Record<string, Record<string, string>> = {}): Promise<void> {
  await settle(what);
  const found: string[] = [];
  for (const p of policies) {
    const [item] = await diff(policyRef(p));
    const key = keyOf(p.metadata);
    observations.push(`${what}: ${key} as it is: ${item!.clusters.map((c) => `${c.cluster}=${c.action}`).join(' ') || 'no cluster'}`);
    for (const c of item!.clusters) {
      if (writes(c)) found.push(`${what}: ${p.kind} ${key} converged, yet diff says ${describe(c)}`);
    }
    for (const [cluster, action] of Object.entries(expected[key] ?? {})) {
      const got = item!.clusters.find((c) => c.cluster === cluster);
      if (got?.action !== action) found.push(`${what}: ${p.kind} ${key}: diff says ${got ? describe(got) : `nothing of ${cluster}`}, expected ${cluster}=${action}`);
    }
  }
  divergences.push(...found);
}

/** A case's end: no divergence recorded since `from` (divergences.length when it began). */
function noDivergenceSince(from: number): void {
  const found = divergences.slice(from);
  assert.deepEqual(found, [], `diff and the hub controller diverge:\n${found.join('\n')}`);
}

/** The works of hub policy `key` (`namespace/name`), by cluster: their names. */
async function workNames(): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  for (const w of await ourWorks(hub, { controllerName })) {
    const ref = w.metadata.annotations?.[SOURCE_REF_ANNOTATION];
    if (!ref) continue;
    const source = JSON.parse(ref) as { namespace: string; name: string; resource?: string };
    const key = keyOf(source);
    const here = out.get(key) ?? new Map<string, string>();
    here.set(w.metadata.namespace ?? '', w.metadata.name);
    out.set(key, here);
  }
  return out;
}

/** The hub controller has nothing to do, and still nothing a moment later (a watch event in flight is seen). */
async function settle(what: string): Promise<void> {
  await quiescent(controller.controller, what);
  await sleep(1_500);
  await quiescent(controller.controller, what);
}

/** By policy, the clusters whose work the hub controller wrote (created, patched, updated) or deleted since `cursor`; a deletion wins. */
function hubWrites(cursor: AuditCursor, names: ReadonlyMap<string, ReadonlyMap<string, string>>): Map<string, Map<string, WorkWrite>> {
  const byWork = new Map<string, string>();
  for (const [key, clusters] of names) for (const [cluster, name] of clusters) byWork.set(`${cluster}/${name}`, key);
  const out = new Map<string, Map<string, WorkWrite>>();
  for (const w of cursor.since()) {
    if (w.userAgent !== HUB_AGENT || w.resource !== 'manifestworks' || w.code >= 300) continue;
    if (!['create', 'update', 'patch', 'delete'].includes(w.verb)) continue;
    const key = byWork.get(`${w.namespace}/${w.name}`);
    if (key === undefined) continue;
    const here = out.get(key) ?? new Map<string, WorkWrite>();
    if (here.get(w.namespace ?? '') !== 'delete') here.set(w.namespace ?? '', w.verb === 'delete' ? 'delete' : 'write');
    out.set(key, here);
  }
  return out;
}

/**
 * Previews `edits` with `diff -f` before they are applied, applies them, and checks that the clusters `diff` said
 * the hub writes are exactly those whose works the hub wrote (divergences recorded, as assertConverged's).
 * Returns the preview, by policy.
 */
async function assertEditPredicted(what: string, edits: KubeObject[]): Promise<Map<string, DiffItem>> {
  await settle(`${what}: before the edit`);
  const path = join(dir, `${uniqueName('edit')}.yaml`);
  writeFileSync(path, edits.map((e) => stringify(e)).join('---\n'));
  const items = await diff('-f', path);
  const predicted = new Map(items.map((i) => [keyOf(i.policy), i]));
  const before = await workNames();
  const cursor = AuditCursor.at(sandbox, 'hub');
  for (const e of edits) await applyPolicy(hub, e);
  await settle(`${what}: after the edit`);
  const afterNames = await workNames();
  const names = new Map(before);
  for (const [key, clusters] of afterNames) names.set(key, new Map([...(names.get(key) ?? []), ...clusters]));
  const written = hubWrites(cursor, names);
  const found: string[] = [];
  for (const e of edits) {
    const key = keyOf(e.metadata);
    const item = predicted.get(key);
    assert.ok(item, `diff previewed ${key}`);
    const did = written.get(key) ?? new Map<string, WorkWrite>();
    observations.push(`${what}: ${key} edited: diff ${item.clusters.map((c) => `${c.cluster}=${c.action}`).join(' ') || 'no cluster'}; the hub: ${listWrites(did)}`);
    found.push(...compareWrites(what, item, predictedWrites(item), did));
  }
  divergences.push(...found);
  return predicted;
}

/**
 * As assertEditPredicted, for a PolicyVariant: `diff -f` of the variant previews the policy it targets (`policy`)
 * with it in place of the hub's; the variant is applied, and the clusters diff said the hub writes must be exactly
 * those whose work of that policy the hub wrote.
 */
async function assertVariantPredicted(what: string, variant: KubeObject, policy: KubeObject): Promise<DiffItem> {
  await settle(`${what}: before the variant`);
  const path = join(dir, `${uniqueName('variant')}.yaml`);
  writeFileSync(path, stringify(variant));
  const items = await diff('-f', path);
  const key = keyOf(policy.metadata);
  const item = items.find((i) => keyOf(i.policy) === key);
  assert.ok(item, `diff previewed ${key}: ${JSON.stringify(items.map((i) => keyOf(i.policy)))}`);
  const before = await workNames();
  const cursor = AuditCursor.at(sandbox, 'hub');
  await ssa(hub, RESOURCES.policyVariants, variant);
  await settle(`${what}: after the variant`);
  const names = new Map(before);
  for (const [k, clusters] of await workNames()) names.set(k, new Map([...(names.get(k) ?? []), ...clusters]));
  const did = hubWrites(cursor, names).get(key) ?? new Map<string, WorkWrite>();
  observations.push(`${what}: ${key}: diff ${item.clusters.map((c) => `${c.cluster}=${c.action}`).join(' ') || 'no cluster'}; the hub: ${listWrites(did)}`);
  divergences.push(...compareWrites(what, item, predictedWrites(item), did));
  return item;
}

/** Until hub policy `key` has works on exactly `clusters`. */
async function worksOn(p: KubeObject, clusters: string[]): Promise<void> {
  const want = [...clusters].sort().join(',');
  let last = '';
  let status: PolicyStatus | undefined;
  await eventually(async () => {
    last = [...((await workNames()).get(keyOf(p.metadata))?.keys() ?? [])].sort().join(',');
    status = await hubStatus(hub, resourceOfPolicy(p), p.metadata.namespace!, p.metadata.name);
    return last === want || undefined;
  }, { what: `${p.kind} ${keyOf(p.metadata)}'s works on ${want}`, timeoutMs: 60_000, context: () => `works on: ${last}\nhub status: ${JSON.stringify(status)}\n${agentLogs()}` });
}

async function statusWhere(p: KubeObject, what: string, ok: (s: PolicyStatus) => boolean): Promise<PolicyStatus> {
  let last: PolicyStatus | undefined;
  return eventually(async () => {
    last = await hubStatus(hub, resourceOfPolicy(p), p.metadata.namespace!, p.metadata.name);
    return last && ok(last) ? last : undefined;
  }, { what: `hub status of ${keyOf(p.metadata)}: ${what}`, timeoutMs: 90_000, context: () => `last seen: ${JSON.stringify(last)}\n${agentLogs()}` });
}

/** The update strategy a work applies its copy with. */
function updateStrategyOf(work: KubeObject): string {
  return String((work.spec as { manifestConfigs?: { updateStrategy?: { type?: string } }[] }).manifestConfigs?.[0]?.updateStrategy?.type);
}

/** Where the policy's rollout stands, as the hub's status says. */
const rolloutOf = (s: PolicyStatus): { state?: string; revision?: number } | undefined => (s as { rollout?: { state?: string; revision?: number } }).rollout;

// The clusters of the owner's namespace: the two spokes, the fake cluster that reported, and the one that never did.
const PLACED_ALL = [...SPOKES, FAKE_REPORTED];
const awaiting = (p: KubeObject): Record<string, Record<string, string>> => ({ [keyOf(p.metadata)]: { [FAKE_SILENT]: 'skip' } });

test('strategy per kind: an AuthPolicy (status subresource: Update) and a kind whose CRD has none (ServerSideApply); a cluster awaiting its report', async () => {
  const from = divergences.length;
  const auth = authPolicy(nsAll, 'auth', 'gw');
  const noStatus = noStatusPolicy(nsAll, 'no-status', 'gw');
  for (const p of [auth, noStatus]) await applyPolicy(hub, p);
  for (const p of [auth, noStatus]) await worksOn(p, PLACED_ALL);
  await statusWhere(auth, `${FAKE_SILENT} awaits its report`, (s) => s.clusters?.[FAKE_SILENT]?.reason === 'AwaitingSpokeReport');
  await assertConverged('converged', [auth], awaiting(auth));
  await assertConverged('converged (no status subresource)', [noStatus], awaiting(noStatus));
  await assertEditPredicted('a spec edit', [authPolicy(nsAll, 'auth', 'gw', rego('allow = true')), noStatusPolicy(nsAll, 'no-status', 'gw', { limit: 20 })]);
  await assertConverged('converged after the edit', [auth, noStatus]);
  const strategies = async (p: KubeObject): Promise<string[]> =>
    [...new Set((await ourWorks(hub, { controllerName, sourceNamespace: nsAll })).filter((w) => w.metadata.annotations?.[SOURCE_REF_ANNOTATION]?.includes(`"name":"${p.metadata.name}"`)).map(updateStrategyOf))];
  assert.deepEqual(await strategies(auth), ['Update'], 'the AuthPolicy\'s works apply its copies with Update');
  assert.deepEqual(await strategies(noStatus), ['ServerSideApply'], 'the works of the kind without the status subresource apply with ServerSideApply');
  noDivergenceSince(from);
});

test('strategy per kind, changed: the kind\'s CRD loses its status subresource while the hub is down; diff before the hub starts again', async () => {
  const from = divergences.length;
  const flip = customPolicy('FlipPolicy', nsAll, 'flip', 'gw');
  await applyPolicy(hub, flip);
  await worksOn(flip, PLACED_ALL);
  await assertConverged('converged under Update', [flip], awaiting(flip));
  await controller.stop();
  let item: DiffItem | undefined;
  let names: Map<string, Map<string, string>>;
  let cursor: AuditCursor;
  try {
    await ssa(hub, RESOURCES.crds, policyCrd('FlipPolicy', 'flippolicies', false));
    await eventually(async () => {
      const crd = await get(hub, RESOURCES.crds, undefined, FLIP_CRD);
      return (crd?.spec as { versions: { subresources?: unknown }[] } | undefined)?.versions[0]?.subresources === undefined || undefined;
    }, { what: `${FLIP_CRD} without the status subresource` });
    [item] = await diff(policyRef(flip));
  } finally {
    names = await workNames();
    cursor = AuditCursor.at(sandbox, 'hub');
    controller = await startHubController();
  }
  await settle('the hub started again');
  const did = hubWrites(cursor, names).get(keyOf(flip.metadata)) ?? new Map<string, WorkWrite>();
  observations.push(`the CRD lost its status subresource: ${keyOf(flip.metadata)}: diff ${item!.clusters.map((c) => `${c.cluster}=${c.action}`).join(' ')}; the hub: ${listWrites(did)}`);
  divergences.push(...compareWrites('the CRD lost its status subresource, the hub started again', item!, predictedWrites(item!), did));
  await assertConverged('converged under ServerSideApply', [flip], awaiting(flip));
  noDivergenceSince(from);
});

test('a local policy on spoke-1 covers the copy: Overridden there, nothing placed; an edit reaches the other clusters only', async () => {
  const from = divergences.length;
  const spoke1 = spokes.get('spoke-1')!;
  const local = authPolicy(nsAll, 'local-gw2', 'gw2');
  await ssa(spoke1, AUTH_POLICIES, local);
  const covered = authPolicy(nsAll, 'covered', 'gw2');
  await applyPolicy(hub, covered);
  await statusWhere(covered, 'spoke-1 Overridden', (s) => s.clusters?.['spoke-1']?.state === 'Overridden');
  await worksOn(covered, ['spoke-2', FAKE_REPORTED]);
  await assertConverged('overridden on spoke-1', [covered], { [keyOf(covered.metadata)]: { 'spoke-1': 'skip', [FAKE_SILENT]: 'skip' } });
  await assertEditPredicted('an edit of the overridden policy', [authPolicy(nsAll, 'covered', 'gw2', rego('allow = input.x'))]);
  await assertConverged('overridden, after the edit', [covered]);
  noDivergenceSince(from);
});

test('TooLarge: an edit over --max-work-bytes is written nowhere (the last work stays), and the edit back is written everywhere', async () => {
  const from = divergences.length;
  const small = authPolicy(nsAll, 'large', 'gw');
  await applyPolicy(hub, small);
  await worksOn(small, PLACED_ALL);
  await assertConverged('small', [small], awaiting(small));
  const large = authPolicy(nsAll, 'large', 'gw', rego(`allow = false # ${'x'.repeat(MAX_WORK_BYTES + 2_000)}`));
  await assertEditPredicted('an edit over the limit', [large]);
  await statusWhere(small, 'TooLarge on the spokes', (s) => s.clusters?.['spoke-1']?.reason === 'TooLarge');
  await assertConverged('too large', [large]);
  await assertEditPredicted('the edit back under the limit', [authPolicy(nsAll, 'large', 'gw', rego('allow = 1 == 2'))]);
  await assertConverged('small again', [small]);
  noDivergenceSince(from);
});

test('tenant lanes: the newer tenant holds the downstream Gateway on spoke-1 when the older tenant\'s Placement grows onto it', async () => {
  const from = divergences.length;
  const a = authPolicy(older, 'lane-a', 'gw');
  const b = authPolicy(newer, 'lane-b', 'gw');
  for (const p of [a, b]) await applyPolicy(hub, p);
  await worksOn(a, ['spoke-2']);
  await worksOn(b, ['spoke-1']);
  await assertConverged('each tenant on its own cluster', [a, b]);
  // The older tenant's Gateway now is placed on spoke-1 too, where the newer tenant's works hold the lane.
  await placement(older, 'gws', [SET_S1, SET_S2]);
  await decided(older, 'gws', SPOKES);
  await statusWhere(a, 'the lane conflict reported', (s) => (s.problems ?? []).some((p) => p.reason === 'DownstreamGatewayConflict'));
  await worksOn(a, ['spoke-2']);
  await worksOn(b, ['spoke-1']);
  await assertConverged('the holder keeps the lane', [a, b]);
  await assertEditPredicted('an edit of both tenants\' policies', [authPolicy(older, 'lane-a', 'gw', rego('allow = true')), authPolicy(newer, 'lane-b', 'gw', rego('allow = true'))]);
  await assertConverged('the holder keeps the lane, after the edit', [a, b]);
  noDivergenceSince(from);
});

test('same-named rivals: two tenants\' policies of one name are one spoke object on spoke-1; the older keeps it', async () => {
  const from = divergences.length;
  const first = authPolicy(older, 'rival', 'rival-gw-a');
  await applyPolicy(hub, first);
  await worksOn(first, ['spoke-1']);
  await sleep(1_100);
  const second = authPolicy(newer, 'rival', 'rival-gw-b');
  await applyPolicy(hub, second);
  await statusWhere(second, 'Conflicted on spoke-1', (s) => s.clusters?.['spoke-1']?.reason === 'Conflicted');
  await worksOn(second, []);
  await assertConverged('the older rival keeps the name', [first, second], { [keyOf(second.metadata)]: { 'spoke-1': 'skip' } });
  await assertEditPredicted('an edit of both rivals', [authPolicy(older, 'rival', 'rival-gw-a', rego('allow = true')), authPolicy(newer, 'rival', 'rival-gw-b', rego('allow = true'))]);
  await assertConverged('the older rival keeps the name, after the edit', [first, second]);
  noDivergenceSince(from);
});

test('refused decisions: a PlacementDecision no Placement owns places nothing, and diff says nothing is written', async () => {
  const from = divergences.length;
  await ssa(hub, RESOURCES.gateways, gateway(newer, 'forged-gw', classShared, 'forged'));
  await ssa(hub, RESOURCES.placementDecisions, placementDecision(newer, 'forged', SPOKES));
  const forger = authPolicy(newer, 'forger', 'forged-gw');
  await applyPolicy(hub, forger);
  await statusWhere(forger, 'the forged decision refused', (s) => (s.problems ?? []).some((p) => p.reason === 'PlacementRefused'));
  await worksOn(forger, []);
  await assertConverged('forged decision refused', [forger]);
  const preview = await assertEditPredicted('an edit of the forger', [authPolicy(newer, 'forger', 'forged-gw', rego('allow = true'))]);
  assert.ok(preview.get(keyOf(forger.metadata))!.problems.some((p) => p.reason === 'PlacementRefused'), 'diff names the refusal');
  noDivergenceSince(from);
});

test('Progressive, onFailure Rollback: waves, a halt rolling the canary back (held), a cluster joining the halted rollout (held Joined), the edit back', async () => {
  const from = divergences.length;
  const ENFORCED = 'AuthPolicy has been successfully enforced';
  const p = (text: string): KubeObject => authPolicy(nsProg, 'canaried', 'gw', rego(text));
  const v1 = p('allow = false');
  const copyAt = async (cluster: string, revision: number): Promise<void> => {
    await eventually(async () => (await get(spokes.get(cluster)!, AUTH_POLICIES, nsProg, 'canaried'))?.metadata.annotations?.[REVISION_ANNOTATION] === String(revision) || undefined, {
      what: `revision ${revision} on ${cluster}`,
      timeoutMs: 60_000,
      context: agentLogs,
    });
  };
  const enforce = async (cluster: string, revision: number): Promise<void> => {
    await copyAt(cluster, revision);
    await writeSpokeStatus(spokes.get(cluster)!, AUTH_POLICIES, nsProg, 'canaried', ENFORCED);
  };
  /** The cause of the rollout hold on the policy's work on `cluster`, if any. */
  const holdOn = async (cluster: string): Promise<string | undefined> => {
    const work = (await ourWorks(hub, { controllerName, sourceNamespace: nsProg, namespace: cluster }))[0];
    return rolloutHold(work)?.cause;
  };
  await applyPolicy(hub, v1);
  await enforce('spoke-2', 1);
  await enforce('spoke-1', 1);
  await statusWhere(v1, 'revision 1 Complete', (s) => rolloutOf(s)?.state === 'Complete' && rolloutOf(s)?.revision === 1);
  await assertConverged('revision 1 complete', [v1]);

  // Revision 2: the canary's wave only.
  const preview = await assertEditPredicted('revision 2', [p('allow = true')]);
  assert.deepEqual(preview.get(keyOf(v1.metadata))!.clusters.map((c) => [c.cluster, c.action]), [['spoke-2', 'write'], ['spoke-1', 'keep']]);
  await assertConverged('revision 2 in the canary wave', [v1]);

  // The canary's controller refuses revision 2: halted, the canary rolled back to revision 1 (held RolledBack).
  await copyAt('spoke-2', 2);
  const copy = (await get(spokes.get('spoke-2')!, AUTH_POLICIES, nsProg, 'canaried'))!;
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await mergePatch(spokes.get('spoke-2')!, AUTH_POLICIES, nsProg, 'canaried', {
    status: {
      observedGeneration: copy.metadata.generation,
      conditions: ['Accepted', 'Enforced'].map((type) => ({ type, status: 'False', reason: 'Invalid', message: 'the rego does not compile', observedGeneration: copy.metadata.generation, lastTransitionTime: now })),
    },
  }, { subresource: 'status', fieldManager: 'kuadrant-policy-controller' });
  await statusWhere(v1, 'revision 2 Halted', (s) => rolloutOf(s)?.state === 'Halted' && rolloutOf(s)?.revision === 2);
  await copyAt('spoke-2', 1);
  assert.equal(await holdOn('spoke-2'), 'RolledBack', "spoke-2's work is held RolledBack");
  await assertConverged('halted, the canary rolled back', [v1]);

  // A cluster joins the placement during the halted rollout: it gets the last completed revision, held Joined.
  await labelCluster(FAKE_REPORTED, { [ROLLOUT_LABEL]: 'true' });
  await decided(nsProg, 'ring', [...SPOKES, FAKE_REPORTED]);
  await worksOn(v1, [...SPOKES, FAKE_REPORTED]);
  assert.equal(await holdOn(FAKE_REPORTED), 'Joined', `${FAKE_REPORTED}'s work is held Joined`);
  await assertConverged('halted, a cluster joined', [v1]);

  // The edit back to revision 1's spec: ungated, on every cluster at once.
  await assertEditPredicted('the edit back', [v1]);
  await assertConverged('after the edit back', [v1]);
  noDivergenceSince(from);
});

test('PolicyVariants: a variant added changes the copy of the cluster it selects only; edited to select another cluster by its label, both are written', async () => {
  const from = divergences.length;
  const varied = authPolicy(nsAll, 'varied', 'gw');
  await applyPolicy(hub, varied);
  await worksOn(varied, PLACED_ALL);
  await assertConverged('before the variant', [varied], awaiting(varied));
  const variant = (clusters: Record<string, unknown>): KubeObject => ({
    apiVersion: 'policysync.kuadrant.io/v1alpha1',
    kind: 'PolicyVariant',
    metadata: { namespace: nsAll, name: 'varied-rego' },
    spec: { targetRef: { group: 'kuadrant.io', kind: 'AuthPolicy', name: 'varied' }, entries: [{ clusters, patch: { spec: rego('allow = true') } }] },
  });
  const added = await assertVariantPredicted('a variant added', variant({ names: ['spoke-2'] }), varied);
  assert.deepEqual([...predictedWrites(added).keys()], ['spoke-2'], `diff: ${added.clusters.map(describe).join('; ')}`);
  await statusWhere(varied, 'spoke-2 runs the variant', (s) => (s.clusters?.['spoke-2']?.variants ?? []).length > 0);
  await assertConverged('the variant in place', [varied], awaiting(varied));
  const moved = await assertVariantPredicted('the variant selects spoke-1 by its label instead', variant({ labelSelector: { matchLabels: { [MEMBER_LABEL]: 'spoke-1' } } }), varied);
  assert.deepEqual([...predictedWrites(moved).keys()].sort(), ['spoke-1', 'spoke-2'], `diff: ${moved.clusters.map(describe).join('; ')}`);
  await assertConverged('the variant moved', [varied], awaiting(varied));
  await hub.request('DELETE', `/apis/policysync.kuadrant.io/v1alpha1/namespaces/${nsAll}/policyvariants/varied-rego`).catch(() => undefined);
  noDivergenceSince(from);
});
