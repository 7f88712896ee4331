// A tenant lane belongs to whoever holds it first, from what the works show (docs/design/tenancy.md#tenant-lanes), on the
// full plane: hub controller, both spoke agents, the real OCM work agents and the real placement controller over
// ManagedClusterSets. Two hub namespaces whose Gateways of one name are one downstream Gateway (a
// `downstreamNamespace` without `{namespace}`): the newer tenant's Gateway is placed on spoke-1 first and its
// policy's copy runs there; then the older tenant's Placement grows onto spoke-1. The newer tenant keeps the lane
// (its work and its spoke copy are the same objects, never deleted and re-created), the older one's policy is
// not placed on spoke-1, and both policies say why. Before the lane went to its holder, the older Gateway took
// it and the newer tenant's copy on spoke-1 was deleted: its policy switched off there.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { eventually } from '../../testkit/eventually.ts';
import { PLACEMENT_LABEL, clustersFromDecisions } from '../../src/core/fleet/placement.ts';
import { mergePatch, serverSideApply } from '../../src/kube/writes.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, list, paramsConfigMap, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { ourWorks } from '../../testkit/works.ts';
import { hubHttp, releaseSpokes, spokeClients, startHub, startSpoke, testControllerName, uniqueName, type RunningHub, type RunningSpoke } from '../../testkit/hub.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';

const SPOKE_CONFIG = { namespace: 'policy-sync-system', name: uniqueName('spoke-config') };
const controllerName = testControllerName('lane-holder');
const paramsNs = uniqueName('lh-params');
const older = uniqueName('lh-older');
const newer = uniqueName('lh-newer');
/** One downstream namespace for every hub namespace's Gateways (MGC's convention). */
const shared = uniqueName('lh-gateways');
const sharedClass = uniqueName('lh-shared');
const OCM = 'cluster.open-cluster-management.io';
const FIELD_MANAGER = 'policy-sync-tests';
/** The label that puts a spoke in this file's ManagedClusterSets: its own name. */
const MEMBER_LABEL = `policysync.kuadrant.io/test-${sharedClass}`;
const SPOKE_1 = `${sharedClass}-spoke-1`;
const SPOKE_2 = `${sharedClass}-spoke-2`;

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
  for (const spoke of spokes.values()) for (const n of [SPOKE_CONFIG.namespace, shared]) await createNamespace(spoke, n);
  for (const n of [paramsNs, older, newer]) await createNamespace(hub, n);
  for (const spoke of sandbox.spokes) await mergePatch(hub, RESOURCES.managedClusters, undefined, spoke.name, { metadata: { labels: { [MEMBER_LABEL]: spoke.name } } }, { fieldManager: FIELD_MANAGER });
  await clusterSet(SPOKE_1, 'spoke-1');
  await clusterSet(SPOKE_2, 'spoke-2');
  // The older tenant may place on both spokes, but its Placement selects spoke-2 only at first; the newer one has spoke-1.
  for (const set of [SPOKE_1, SPOKE_2]) await bind(older, set);
  await bind(newer, SPOKE_1);
  await placement(older, 'gws', [SPOKE_2]);
  await placement(newer, 'gws', [SPOKE_1]);
  await apply(hub, paramsConfigMap(paramsNs, 'params', { policiesToSync: AUTH, downstreamNamespace: shared }));
  await apply(hub, gatewayClass(sharedClass, { namespace: paramsNs, name: 'params' }, controllerName));
  await apply(hub, gateway(older, 'gw', sharedClass, 'gws'));
  // Created a second later: the older tenant's Gateway is the older.
  await new Promise((r) => setTimeout(r, 1_100));
  await apply(hub, gateway(newer, 'gw', sharedClass, 'gws'));
  await decided(older, 'gws', ['spoke-2']);
  await decided(newer, 'gws', ['spoke-1']);
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG, trustDecisionLabels: false });
  agents = await Promise.all(sandbox.spokes.map((s) => startSpoke(sandbox.kubeConfig(s.name), s.name, SPOKE_CONFIG, { reportHeartbeatMs: 1_000 })));
});

after(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await controller.stop();
  for (const work of await ourWorks(hub, { controllerName })) await remove(hub, work);
  await remove(hub, gatewayClass(sharedClass, { namespace: paramsNs, name: 'params' }));
  for (const n of [paramsNs, older, newer]) await removeNamespace(hub, n);
  for (const set of [SPOKE_1, SPOKE_2]) await hub.request('DELETE', `/apis/${OCM}/v1beta2/managedclustersets/${set}`).catch(() => undefined);
  for (const spoke of sandbox.spokes) await mergePatch(hub, RESOURCES.managedClusters, undefined, spoke.name, { metadata: { labels: { [MEMBER_LABEL]: null } } }, { fieldManager: FIELD_MANAGER }).catch(() => undefined);
  await releaseSpokes(spokes, shared);
  hub.destroy();
});

const agentLogs = (): string => workAgentLogs(sandbox, 10);

async function clusterSet(name: string, member: string): Promise<void> {
  await serverSideApply(hub, RESOURCES.managedClusterSets, {
    apiVersion: `${OCM}/v1beta2`,
    kind: 'ManagedClusterSet',
    metadata: { name },
    spec: { clusterSelector: { selectorType: 'LabelSelector', labelSelector: { matchLabels: { [MEMBER_LABEL]: member } } } },
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

async function placement(namespace: string, name: string, sets: string[]): Promise<void> {
  await serverSideApply(hub, RESOURCES.placements, {
    apiVersion: `${OCM}/v1beta1`,
    kind: 'Placement',
    metadata: { name, namespace },
    spec: { clusterSets: sets },
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

interface HubStatus {
  clusters?: Record<string, { state: string; reason: string; message: string }>;
  problems?: { reason: string; message: string }[];
}

async function statusWhere(namespace: string, name: string, what: string, ok: (s: HubStatus) => boolean): Promise<HubStatus> {
  let last: HubStatus | undefined;
  return eventually(async () => {
    const text = (await get(hub, AUTH_POLICIES, namespace, name))?.metadata.annotations?.['policysync.kuadrant.io/status'];
    last = text === undefined ? undefined : (JSON.parse(text) as HubStatus);
    return last && ok(last) ? last : undefined;
  }, { what: `hub status of ${namespace}/${name}: ${what}`, timeoutMs: 90_000, context: () => `last seen: ${JSON.stringify(last)}\n${agentLogs()}` });
}

const laneProblem = (s: HubStatus): { reason: string; message: string } | undefined => (s.problems ?? []).find((p) => p.reason === 'DownstreamGatewayConflict');

test("an older tenant's Placement growing onto a cluster where a newer tenant holds the lane: the holder keeps it, the newcomer is refused there", { timeout: 240_000 }, async () => {
  await apply(hub, authPolicy(older, 'a-auth', 'gw'));
  await apply(hub, authPolicy(newer, 'b-auth', 'gw'));
  const spoke1 = spokes.get('spoke-1')!;
  const held = await eventually(async () => (await worksOf(newer, 'b-auth')).get('spoke-1'), { what: "the newer tenant's work on spoke-1", context: agentLogs });
  const copy = await eventually(() => get(spoke1, AUTH_POLICIES, shared, 'b-auth'), { what: "the newer tenant's copy on spoke-1", context: agentLogs });
  await eventually(async () => (await worksOf(older, 'a-auth')).has('spoke-2') || undefined, { what: "the older tenant's work on spoke-2" });

  // The older tenant's Placement grows onto spoke-1, where the newer tenant's copy runs.
  await placement(older, 'gws', [SPOKE_2, SPOKE_1]);
  await decided(older, 'gws', ['spoke-1', 'spoke-2']);
  const conflict = await statusWhere(older, 'a-auth', 'the lane conflict on spoke-1 reported', (s) => laneProblem(s) !== undefined);
  await statusWhere(newer, 'b-auth', 'the holder told of the conflict too', (s) => laneProblem(s) !== undefined);
  // Several reconciles later (the agents' report heartbeats and the work agents' status keep them coming): the holder's work and copy are the same objects.
  await new Promise((r) => setTimeout(r, 5_000));
  const work = (await worksOf(newer, 'b-auth')).get('spoke-1');
  assert.equal(work?.metadata.uid, held.metadata.uid, "the newer tenant's work on spoke-1 is never deleted for the newcomer");
  assert.equal(work?.metadata.deletionTimestamp, undefined);
  const now = await get(spoke1, AUTH_POLICIES, shared, 'b-auth');
  assert.equal(now?.metadata.uid, copy.metadata.uid, "the newer tenant's copy on spoke-1 is the same object");
  assert.equal(now?.metadata.deletionTimestamp, undefined);
  assert.match(
    laneProblem(conflict)!.message,
    new RegExp(`on cluster spoke-1, hub Gateways ${newer}/gw and ${older}/gw are both the downstream Gateway ${shared}/gw: ${newer}/gw \\(its policies' copies are there already\\) keeps it, the policies of ${older}/gw are not placed there`),
  );
  assert.deepEqual([...(await worksOf(older, 'a-auth')).keys()], ['spoke-2'], "the older tenant's policy is not placed on spoke-1");
  assert.equal(await get(spoke1, AUTH_POLICIES, shared, 'a-auth'), undefined, "no copy of the older tenant's policy on spoke-1");

  // The holder's policy deleted: its work goes, the lane is free, and the older tenant's policy takes it.
  await remove(hub, authPolicy(newer, 'b-auth', 'gw'));
  await eventually(async () => (await worksOf(older, 'a-auth')).has('spoke-1') || undefined, { what: "the older tenant's work on spoke-1 once the lane is free", context: agentLogs });
  await eventually(() => get(spoke1, AUTH_POLICIES, shared, 'a-auth'), { what: "the older tenant's copy on spoke-1", context: agentLogs });
});
