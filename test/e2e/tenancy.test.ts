// Tenants stay in their lane, and the sync never takes over what it did not create (docs/design/tenancy.md#tenant-lanes, #never-take-over), on the full
// plane: hub controller, both spoke agents reporting through the configuration the hub places, the real OCM
// work agents.
//  - A spoke's own AuthPolicy with the copy's name: the hub places nothing on that spoke (OCM's agent would
//    merge the hub's rules into it and own it, and the hub policy's deletion would delete it), says so, and
//    places the copy once the name is free.
//  - Two hub namespaces whose Gateways of one name are one downstream Gateway (`downstreamNamespace` without
//    `{namespace}`): the older Gateway keeps the lane, the other tenant's policy is not placed there, and
//    both Gateways and the refused policy hear of it.
//  - A tenant forging PlacementDecisions for a cluster outside its ManagedClusterSets: refused, reported,
//    nothing placed.
// The hub runs as in production (no --trust-decision-labels): real Placements decide, over ManagedClusterSets
// bound to each namespace — the owner namespace to both spokes, the tenants to spoke-1 only.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { readSpokeReport, SPOKE_CONFIG_WORK_NAME } from '../../src/core/spoke/spokeconfig.ts';
import { occupantOf } from '../../src/core/spoke/reportquery.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { AuditCursor, describeWrite } from '../../testkit/audit.ts';
import { eventually } from '../../testkit/eventually.ts';
import { PLACEMENT_LABEL, clustersFromDecisions } from '../../src/core/fleet/placement.ts';
import { mergePatch, serverSideApply } from '../../src/kube/writes.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, list, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { ourWorks } from '../../testkit/works.ts';
import { hubHttp, releaseSpokes, spokeClients, startHub, startSpoke, testControllerName, uniqueName, type RunningHub, type RunningSpoke } from '../../testkit/hub.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';

const SPOKE_CONFIG = { namespace: 'policy-sync-system', name: uniqueName('spoke-config') };
const controllerName = testControllerName('tenancy');
const ns = uniqueName('owned');
const teamA = uniqueName('team-a');
const teamB = uniqueName('team-b');
/** One downstream namespace for every hub namespace's Gateways (MGC's convention). */
const shared = uniqueName('gateways');
const className = uniqueName('class');
const sharedClass = uniqueName('shared');
const POLICY = 'shop-auth';
const OCM = 'cluster.open-cluster-management.io';
const FIELD_MANAGER = 'policy-sync-tests';
/** The label that puts a spoke in this file's ManagedClusterSets: its own name. */
const MEMBER_LABEL = `policysync.kuadrant.io/test-${className}`;
const ALL_SPOKES = `${className}-all`;
const SPOKE_1_ONLY = `${className}-spoke-1`;

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub;
let agents: RunningSpoke[] = [];

const AUTH = [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }];

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  for (const spoke of spokes.values()) {
    for (const n of [SPOKE_CONFIG.namespace, ns, shared]) await createNamespace(spoke, n);
    const gw = gateway(ns, 'gw', 'spoke-gateways');
    (gw.spec as { listeners: unknown[] }).listeners.push({ name: 'api', port: 8080, protocol: 'HTTP' });
    await apply(spoke, gw);
  }
  for (const n of [ns, teamA, teamB]) await createNamespace(hub, n);
  for (const spoke of sandbox.spokes) await mergePatch(hub, RESOURCES.managedClusters, undefined, spoke.name, { metadata: { labels: { [MEMBER_LABEL]: spoke.name } } }, { fieldManager: FIELD_MANAGER });
  await clusterSet(ALL_SPOKES, { matchExpressions: [{ key: MEMBER_LABEL, operator: 'Exists' }] });
  await clusterSet(SPOKE_1_ONLY, { matchLabels: { [MEMBER_LABEL]: 'spoke-1' } });
  await bind(ns, ALL_SPOKES);
  await placement(ns, 'all-spokes', ALL_SPOKES);
  for (const team of [teamA, teamB]) {
    await bind(team, SPOKE_1_ONLY);
    await placement(team, 'spoke-1', SPOKE_1_ONLY);
  }
  await apply(hub, paramsConfigMap(ns, 'params', { policiesToSync: AUTH }));
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(hub, paramsConfigMap(ns, 'shared-params', { policiesToSync: AUTH, downstreamNamespace: shared }));
  await apply(hub, gatewayClass(sharedClass, { namespace: ns, name: 'shared-params' }, controllerName));
  await apply(hub, gateway(ns, 'gw', className, 'all-spokes'));
  await decided(ns, 'all-spokes', ['spoke-1', 'spoke-2']);
  for (const team of [teamA, teamB]) await decided(team, 'spoke-1', ['spoke-1']);
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG, trustDecisionLabels: false });
  agents = await Promise.all(sandbox.spokes.map((s) => startSpoke(sandbox.kubeConfig(s.name), s.name, SPOKE_CONFIG, { reportHeartbeatMs: 1_000 })));
});

after(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await controller.stop();
  for (const work of await ourWorks(hub, { controllerName })) await remove(hub, work);
  for (const c of [className, sharedClass]) await remove(hub, gatewayClass(c, { namespace: ns, name: 'params' }));
  for (const n of [ns, teamA, teamB]) await removeNamespace(hub, n);
  for (const set of [ALL_SPOKES, SPOKE_1_ONLY]) await hub.request('DELETE', `/apis/${OCM}/v1beta2/managedclustersets/${set}`).catch(() => undefined);
  for (const spoke of sandbox.spokes) await mergePatch(hub, RESOURCES.managedClusters, undefined, spoke.name, { metadata: { labels: { [MEMBER_LABEL]: null } } }, { fieldManager: FIELD_MANAGER }).catch(() => undefined);
  await releaseSpokes(spokes, ns);
  hub.destroy();
});

const agentLogs = (): string => workAgentLogs(sandbox, 10);

async function clusterSet(name: string, labelSelector: unknown): Promise<void> {
  await serverSideApply(hub, RESOURCES.managedClusterSets, {
    apiVersion: `${OCM}/v1beta2`,
    kind: 'ManagedClusterSet',
    metadata: { name },
    spec: { clusterSelector: { selectorType: 'LabelSelector', labelSelector } },
  }, { fieldManager: FIELD_MANAGER });
}

async function bind(namespace: string, set: string): Promise<void> {
  await serverSideApply(hub, RESOURCES.managedClusterSetBindings, {
    apiVersion: `${OCM}/v1beta2`,
    kind: 'ManagedClusterSetBinding',
    metadata: { name: set, namespace },
    spec: { clusterSet: set },
  }, { fieldManager: FIELD_MANAGER });
}

async function placement(namespace: string, name: string, set: string): Promise<void> {
  await serverSideApply(hub, RESOURCES.placements, {
    apiVersion: `${OCM}/v1beta1`,
    kind: 'Placement',
    metadata: { name, namespace },
    spec: { clusterSets: [set] },
  }, { fieldManager: FIELD_MANAGER });
}

async function decided(namespace: string, name: string, clusters: string[]): Promise<void> {
  let last = '';
  await eventually(async () => {
    last = clustersFromDecisions(await list(hub, RESOURCES.placementDecisions, namespace, `${PLACEMENT_LABEL}=${name}`)).join(',');
    return last === clusters.join(',') || undefined;
  }, { what: `Placement ${namespace}/${name} to decide ${clusters.join(', ')}`, timeoutMs: 90_000, context: () => `decided: ${last}` });
}

/** The works written for hub policy `namespace/name`, by cluster. */
async function worksOf(namespace: string, name: string): Promise<Map<string, KubeObject>> {
  const works = (await ourWorks(hub, { controllerName })).filter((w) => {
    const ref = w.metadata.annotations?.['policysync.kuadrant.io/source-ref'];
    const source = ref ? (JSON.parse(ref) as { namespace: string; name: string }) : undefined;
    return source?.namespace === namespace && source.name === name;
  });
  return new Map(works.map((w) => [w.metadata.namespace ?? '', w]));
}

interface ClusterEntry {
  state: string;
  reason: string;
  message: string;
}
interface HubStatus {
  summary: Record<string, number>;
  clusters?: Record<string, ClusterEntry>;
  problems?: { reason: string; message: string }[];
}

async function statusWhere(namespace: string, name: string, what: string, ok: (s: HubStatus) => boolean): Promise<HubStatus> {
  let last: HubStatus | undefined;
  return eventually(async () => {
    const text = (await get(hub, AUTH_POLICIES, namespace, name))?.metadata.annotations?.['policysync.kuadrant.io/status'];
    last = text === undefined ? undefined : (JSON.parse(text) as HubStatus);
    return last && ok(last) ? last : undefined;
  }, { what: `hub status of ${namespace}/${name}: ${what}`, timeoutMs: 60_000, context: () => `last seen: ${JSON.stringify(last)}\n${agentLogs()}` });
}

test("a spoke's own policy with the copy's name is neither merged into nor deleted: nothing is placed there until the name is free", async () => {
  const spoke2 = spokes.get('spoke-2')!;
  // spoke-2's own policy of the same namespace and name, for one listener, as its team wrote it.
  const own = authPolicy(ns, POLICY, 'gw', { rules: { authorization: { 'local-rule': { opa: { rego: 'allow = true' } } } } });
  (own.spec as { targetRef: Record<string, unknown> }).targetRef.sectionName = 'api';
  const created = await apply(spoke2, own);
  // The agent's report of it has reached the hub before the hub policy exists.
  await eventually(async () => {
    const work = (await ourWorks(hub, { controllerName, namespace: 'spoke-2' })).find((w) => w.metadata.name === SPOKE_CONFIG_WORK_NAME);
    const report = work && readSpokeReport(work);
    return report && occupantOf(report, 'authpolicies.kuadrant.io', ns, POLICY).state === 'local';
  }, { what: `spoke-2's report of its own ${ns}/${POLICY} on the hub`, context: agentLogs });

  const spokeWrites = AuditCursor.at(sandbox, 'spoke-2');
  await apply(hub, authPolicy(ns, POLICY, 'gw', { rules: { authorization: { 'hub-rule': { opa: { rego: 'allow = false' } } } } }));
  await eventually(() => get(spokes.get('spoke-1')!, AUTH_POLICIES, ns, POLICY), { what: 'the copy on spoke-1', context: agentLogs });
  const status = await statusWhere(ns, POLICY, 'spoke-2 refused', (s) => s.clusters?.['spoke-2']?.state === 'Failed');
  assert.equal(status.clusters?.['spoke-2']?.reason, 'Conflicted');
  assert.match(status.clusters?.['spoke-2']?.message ?? '', /is the cluster's own policy, not a copy of this one: nothing is placed there until the name is free/);
  assert.deepEqual([...(await worksOf(ns, POLICY)).keys()], ['spoke-1'], 'no work for spoke-2');

  const untouched = async (what: string): Promise<void> => {
    const now = (await get(spoke2, AUTH_POLICIES, ns, POLICY))!;
    assert.equal(now.metadata.uid, created.metadata.uid, `${what}: the same object`);
    assert.deepEqual(now.spec, created.spec, `${what}: its spec as its team wrote it`);
    assert.equal(now.metadata.ownerReferences, undefined, `${what}: owned by no AppliedManifestWork`);
    assert.equal(now.metadata.annotations?.['kuadrant.io/policy-synced'], undefined, `${what}: not marked as a copy`);
  };
  await untouched('after the hub policy was authored');

  // Deleting the hub policy deletes spoke-1's copy and nothing on spoke-2.
  await remove(hub, authPolicy(ns, POLICY, 'gw'));
  await eventually(async () => (await get(spokes.get('spoke-1')!, AUTH_POLICIES, ns, POLICY)) === undefined, { what: "spoke-1's copy to go", context: agentLogs });
  await eventually(async () => (await worksOf(ns, POLICY)).size === 0 || undefined, { what: 'no work left for the policy' });
  await untouched('after the hub policy was deleted');
  const writes = spokeWrites.since().filter((w) => w.resource.startsWith('authpolicies') && w.namespace === ns && w.name === POLICY);
  assert.deepEqual(writes.map(describeWrite), [], "nothing wrote spoke-2's own policy while the hub policy lived");

  // The name freed on spoke-2: the hub policy is placed there like anywhere else.
  await remove(spoke2, own);
  await apply(hub, authPolicy(ns, POLICY, 'gw'));
  await eventually(async () => (await get(spoke2, AUTH_POLICIES, ns, POLICY))?.metadata.annotations?.['kuadrant.io/policy-synced'] === `${ns}/${POLICY}` || undefined, {
    what: 'the copy on spoke-2 once the name is free',
    timeoutMs: 60_000,
    context: agentLogs,
  });
  await remove(hub, authPolicy(ns, POLICY, 'gw'));
});

test("two tenants' Gateways that are one downstream Gateway: the older keeps the lane, the other's policy is refused there and both are told", async () => {
  await apply(hub, gateway(teamA, 'gw', sharedClass, 'spoke-1'));
  // Created a second later: team-a's Gateway is the older.
  await new Promise((r) => setTimeout(r, 1_100));
  await apply(hub, gateway(teamB, 'gw', sharedClass, 'spoke-1'));
  await apply(hub, authPolicy(teamA, 'a-auth', 'gw'));
  await apply(hub, authPolicy(teamB, 'b-auth', 'gw'));

  await eventually(async () => (await worksOf(teamA, 'a-auth')).has('spoke-1') || undefined, { what: "team-a's policy placed on spoke-1" });
  const refused = await statusWhere(teamB, 'b-auth', 'the lane conflict reported', (s) => (s.problems ?? []).some((p) => p.reason === 'DownstreamGatewayConflict'));
  const problem = refused.problems!.find((p) => p.reason === 'DownstreamGatewayConflict')!;
  assert.match(problem.message, new RegExp(`hub Gateways ${teamA}/gw and ${teamB}/gw are both the downstream Gateway ${shared}/gw: ${teamA}/gw \\(the older\\) keeps it`));
  assert.equal((await worksOf(teamB, 'b-auth')).size, 0, "team-b's policy is placed nowhere");
  const kept = await statusWhere(teamA, 'a-auth', 'the lane conflict reported to the keeper too', (s) => (s.problems ?? []).some((p) => p.reason === 'DownstreamGatewayConflict'));
  assert.ok(kept.clusters?.['spoke-1'], "team-a's policy keeps spoke-1");

  // Both Gateways hear of it where their admins look.
  for (const team of [teamA, teamB]) {
    await eventually(async () => {
      const events = await list(hub, RESOURCES.coreEvents, team);
      return events.some((e) => (e.involvedObject as { kind?: string; name?: string }).kind === 'Gateway' && e.reason === 'DownstreamGatewayConflict') || undefined;
    }, { what: `a DownstreamGatewayConflict Event on ${team}/gw` });
  }

  // team-b moves to a lane of its own (a class with {namespace}): refused no more.
  await apply(hub, gateway(teamB, 'gw', className, 'spoke-1'));
  await eventually(async () => (await worksOf(teamB, 'b-auth')).has('spoke-1') || undefined, { what: "team-b's policy placed once its Gateway has a lane of its own" });
  const copy = (await worksOf(teamB, 'b-auth')).get('spoke-1')!;
  const manifest = (copy.spec as { workload: { manifests: KubeObject[] } }).workload.manifests[0]!;
  assert.equal(manifest.metadata.namespace, teamB);
});

test('a tenant forging PlacementDecisions places nothing with them, and is told', async () => {
  // No Placement `forged` exists: OCM would never decide for it, nor clean up what is labelled for it.
  await apply(hub, gateway(teamB, 'forged-gw', className, 'forged'));
  await apply(hub, placementDecision(teamB, 'forged', ['spoke-1', 'spoke-2']));
  await apply(hub, authPolicy(teamB, 'forger', 'forged-gw'));
  const status = await statusWhere(teamB, 'forger', 'the forged decision refused', (s) => (s.problems ?? []).some((p) => p.reason === 'PlacementRefused'));
  const refusal = status.problems!.find((p) => p.reason === 'PlacementRefused')!;
  assert.equal(refusal.message, `Gateway ${teamB}/forged-gw: PlacementDecision ${teamB}/forged-decision-1 is not owned by Placement ${teamB}/forged: its decisions do not count`);
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal((await worksOf(teamB, 'forger')).size, 0, 'nothing placed anywhere');
});
