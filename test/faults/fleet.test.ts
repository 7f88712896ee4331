// The fleet's ordinary life (docs/reliability.md, scenarios h–k): events that happen every week in a fleet and
// must never switch a policy off. On the real plane with OCM's real registration (hub controller, one agent per
// spoke, leases of 5 s) and placement controller: a Placement over a ManagedClusterSet of spoke-1 and spoke-2,
// bound to the test's namespace, places a hub Gateway; an AuthPolicy on it is synced to both spokes by the real
// work agents. Each scenario asserts zero ManifestWork deletions (the hub's audit log), the spoke copies' uids
// unchanged, and convergence once the event is over.
//   h. spoke-2's registration agent stops: its lease expires, OCM marks it unavailable and taints it, the
//      Placement drops it — its work is kept and reported Unknown; the agent starts again and all converges.
//   i. the Placement is deleted (its PlacementDecisions go with it) and created again, as a GitOps tool does.
//   j. the decisions are split over one PlacementDecision per cluster (decision groups), then regrouped.
//   k. the GatewayClass is replaced (deleted, created again 8 s later, as `kubectl replace --force` does).
// Last, the rule's other side: spoke-2 deselected while healthy loses its work.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { registrationAgent } from '../../testkit/sandbox/registration.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { PLACEMENT_LABEL, clustersFromDecisions } from '../../src/core/fleet/placement.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, type ResourceRef } from '../../src/kube/resource.ts';
import { mergePatch, serverSideApply } from '../../src/kube/writes.ts';
import { eventually } from '../../testkit/eventually.ts';
import { copyUids, deletionWatch, report, timed } from '../../testkit/faults.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, list, paramsConfigMap, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { ourWorks } from '../../testkit/works.ts';
import { waitForClusterAvailability, waitForTaint } from '../../testkit/fleet.ts';
import { hubHttp, releaseSpokes, spokeClients, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';

const OCM = 'cluster.open-cluster-management.io';
const CLUSTER_SETS: ResourceRef = { group: OCM, version: 'v1beta2', resource: 'managedclustersets', namespaced: false };
const CLUSTER_SET_BINDINGS: ResourceRef = { group: OCM, version: 'v1beta2', resource: 'managedclustersetbindings', namespaced: true };
const FIELD_MANAGER = 'policy-sync-tests';

const controllerName = testControllerName('fleet');
const ns = uniqueName('faults-fleet');
const className = uniqueName('fleet');
const clusterSet = uniqueName('fleet');
/** The label that puts a ManagedCluster in this test's ManagedClusterSet. */
const MEMBER_LABEL = `policysync.kuadrant.io/test-${clusterSet}`;
const PLACEMENT = 'spokes';
const POLICY = 'auth';
/** From a stopped registration agent to the taint: 5 × its 5 s lease, plus the controller's resync. */
const UNAVAILABLE_WITHIN_MS = 90_000;

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub;

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  for (const spoke of spokes.values()) await createNamespace(spoke, ns);
  await createNamespace(hub, ns);
  for (const spoke of sandbox.spokes) await member(spoke.name, true);
  await serverSideApply(hub, CLUSTER_SETS, {
    apiVersion: `${OCM}/v1beta2`,
    kind: 'ManagedClusterSet',
    metadata: { name: clusterSet },
    spec: { clusterSelector: { selectorType: 'LabelSelector', labelSelector: { matchLabels: { [MEMBER_LABEL]: 'true' } } } },
  }, { fieldManager: FIELD_MANAGER });
  await serverSideApply(hub, CLUSTER_SET_BINDINGS, {
    apiVersion: `${OCM}/v1beta2`,
    kind: 'ManagedClusterSetBinding',
    metadata: { name: clusterSet, namespace: ns },
    spec: { clusterSet },
  }, { fieldManager: FIELD_MANAGER });
  await placement();
  await apply(hub, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(hub, gateway(ns, 'gw', className, PLACEMENT));
  await decided(['spoke-1', 'spoke-2']);
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName });
  await apply(hub, authPolicy(ns, POLICY, 'gw'));
  await copiesEverywhere();
});

after(async () => {
  // Registration back for the files after this one, whatever happened here.
  await sandbox.start(registrationAgent('spoke-2')).catch(() => undefined);
  await controller?.stop();
  for (const work of await ourWorks(hub, { controllerName })) await remove(hub, work);
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }));
  for (const spoke of sandbox.spokes) await member(spoke.name, false).catch(() => undefined);
  await hub.request('DELETE', `/apis/${OCM}/v1beta2/managedclustersets/${clusterSet}`).catch(() => undefined);
  await removeNamespace(hub, ns);
  await releaseSpokes(spokes, ns);
  hub.destroy();
});

/** Puts the cluster in (or out of) this test's ManagedClusterSet. */
async function member(cluster: string, yes: boolean): Promise<void> {
  await mergePatch(hub, RESOURCES.managedClusters, undefined, cluster, { metadata: { labels: { [MEMBER_LABEL]: yes ? 'true' : null } } }, { fieldManager: FIELD_MANAGER });
}

async function placement(decisionStrategy?: unknown): Promise<void> {
  await serverSideApply(hub, RESOURCES.placements, {
    apiVersion: `${OCM}/v1beta1`,
    kind: 'Placement',
    metadata: { name: PLACEMENT, namespace: ns },
    spec: { clusterSets: [clusterSet], ...(decisionStrategy ? { decisionStrategy } : {}) },
  }, { fieldManager: FIELD_MANAGER, force: true });
}

async function decisionObjects(): Promise<KubeObject[]> {
  return list(hub, RESOURCES.placementDecisions, ns, `${PLACEMENT_LABEL}=${PLACEMENT}`);
}

/** Until the placement controller decided exactly `clusters`; resolves with the PlacementDecisions. */
async function decided(clusters: string[], what = `Placement ${PLACEMENT} to decide ${clusters.join(', ') || 'nothing'}`): Promise<KubeObject[]> {
  let last = '';
  return eventually(async () => {
    const decisions = await decisionObjects();
    last = clustersFromDecisions(decisions).join(',');
    return last === clusters.join(',') ? decisions : undefined;
  }, { what, timeoutMs: UNAVAILABLE_WITHIN_MS, context: () => `decided: ${last}` });
}

async function workUids(): Promise<Map<string, string | undefined>> {
  return new Map((await ourWorks(hub, { controllerName })).map((w) => [w.metadata.namespace ?? '', w.metadata.uid]));
}

async function copiesEverywhere(): Promise<Map<string, string | undefined>> {
  return eventually(async () => {
    const uids = await copyUids(spokes, AUTH_POLICIES, ns, POLICY);
    return [...uids.values()].every((u) => u !== undefined) ? uids : undefined;
  }, { what: 'the copy on both spokes', context: () => workAgentLogs(sandbox) });
}

interface ClusterEntry {
  state: string;
  reason: string;
  message: string;
}

async function clusterStatus(cluster: string): Promise<ClusterEntry | undefined> {
  const text = (await get(hub, AUTH_POLICIES, ns, POLICY))?.metadata.annotations?.['policysync.kuadrant.io/status'];
  return text === undefined ? undefined : (JSON.parse(text) as { clusters?: Record<string, ClusterEntry> }).clusters?.[cluster];
}

/** Everything is as it was: both works and both copies with their uids, and neither cluster Unknown. */
async function unchanged(what: string, workBefore: Map<string, string | undefined>, copiesBefore: Map<string, string | undefined>): Promise<void> {
  assert.deepEqual(await workUids(), workBefore, `${what}: the works kept their uids`);
  assert.deepEqual(await copyUids(spokes, AUTH_POLICIES, ns, POLICY), copiesBefore, `${what}: the spoke copies kept their uids`);
}

test('h. a spoke whose registration agent stops is tainted and dropped by its Placement: its work is kept, reported Unknown, and all converges when it is back', async () => {
  const workBefore = await workUids();
  const copiesBefore = await copiesEverywhere();
  const deletions = deletionWatch(sandbox);
  await sandbox.stop(registrationAgent('spoke-2'));
  const stoppedAt = performance.now();
  const health = await waitForTaint(hub, 'spoke-2', true, UNAVAILABLE_WITHIN_MS);
  const taintedMs = Math.round(performance.now() - stoppedAt);
  await decided(['spoke-1'], 'the Placement to drop the tainted spoke-2');
  const droppedMs = Math.round(performance.now() - stoppedAt);
  const unknown = await eventually(async () => {
    const s = await clusterStatus('spoke-2');
    return s?.state === 'Unknown' ? s : undefined;
  }, { what: 'spoke-2 reported Unknown on the hub policy' });
  assert.match(unknown.message, /OCM marks cluster spoke-2 unreachable .* its ManifestWork is kept as it was/);
  // Kept while it stays away: the hub is idle and has deleted nothing.
  await new Promise((r) => setTimeout(r, 10_000));
  const keptMs = Math.round(performance.now() - stoppedAt);
  await unchanged('while spoke-2 is unreachable', workBefore, copiesBefore);

  await sandbox.start(registrationAgent('spoke-2'));
  const convergeMs = await timed(async () => {
    await waitForClusterAvailability(hub, 'spoke-2', 'True', UNAVAILABLE_WITHIN_MS);
    await waitForTaint(hub, 'spoke-2', false, UNAVAILABLE_WITHIN_MS);
    await decided(['spoke-1', 'spoke-2'], 'the Placement to take spoke-2 back');
    await eventually(async () => (await clusterStatus('spoke-2'))?.state !== 'Unknown' || undefined, { what: 'spoke-2 known again on the hub policy' });
  });
  await deletions.assertNone('a spoke unreachable, tainted and dropped by its Placement, then back');
  await unchanged('after spoke-2 came back', workBefore, copiesBefore);
  report('h (spoke unreachable: registration agent stopped)', { taintedMs, droppedMs, keptMs, deletions: 0, convergeMs, reason: health.reason ?? '' });
});

test('i. the Placement deleted (its decisions with it) and created again: nothing is deleted', async () => {
  const workBefore = await workUids();
  const copiesBefore = await copiesEverywhere();
  const deletions = deletionWatch(sandbox);
  await hub.request('DELETE', `/apis/${OCM}/v1beta1/namespaces/${ns}/placements/${PLACEMENT}`);
  await eventually(async () => (await decisionObjects()).length === 0 || undefined, { what: 'the PlacementDecisions gone with the Placement' });
  await new Promise((r) => setTimeout(r, 3_000));
  await unchanged('while the Placement is gone', workBefore, copiesBefore);
  const convergeMs = await timed(async () => {
    await placement();
    await decided(['spoke-1', 'spoke-2']);
  });
  await new Promise((r) => setTimeout(r, 2_000));
  await deletions.assertNone('Placement deleted and re-created');
  await unchanged('after the Placement is back', workBefore, copiesBefore);
  report('i (Placement deleted and re-created)', { deletions: 0, convergeMs });
});

test('j. the decisions split over one PlacementDecision per cluster, then regrouped: nothing is deleted', async () => {
  const workBefore = await workUids();
  const copiesBefore = await copiesEverywhere();
  const deletions = deletionWatch(sandbox);
  await placement({ groupStrategy: { clustersPerDecisionGroup: 1 } });
  const split = await eventually(async () => {
    const decisions = await decisionObjects();
    return decisions.length === 2 && clustersFromDecisions(decisions).length === 2 ? decisions : undefined;
  }, { what: 'two PlacementDecisions, one cluster each' });
  await placement({ groupStrategy: { clustersPerDecisionGroup: '100%' } });
  const regrouped = await eventually(async () => {
    const decisions = await decisionObjects();
    return decisions.length === 1 && clustersFromDecisions(decisions).length === 2 ? decisions : undefined;
  }, { what: 'one PlacementDecision again' });
  await new Promise((r) => setTimeout(r, 2_000));
  await deletions.assertNone('decisions split and regrouped');
  await unchanged('after the regrouping', workBefore, copiesBefore);
  report('j (decisions split and regrouped)', { deletions: 0, split: split.length, regrouped: regrouped.length });
});

test('k. the GatewayClass replaced (deleted, created again 8 s later): nothing is deleted', async () => {
  const workBefore = await workUids();
  const copiesBefore = await copiesEverywhere();
  const deletions = deletionWatch(sandbox);
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }));
  await new Promise((r) => setTimeout(r, 8_000));
  await unchanged('while the GatewayClass is gone', workBefore, copiesBefore);
  const convergeMs = await timed(async () => {
    await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
    await eventually(async () => {
      const conditions = ((await get(hub, RESOURCES.gatewayClasses, undefined, className))?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
      return conditions?.some((c) => c.type === 'Accepted' && c.status === 'True') || undefined;
    }, { what: 'the class accepted again' });
  });
  // A change after the class is back reaches both spokes again.
  await apply(hub, authPolicy(ns, POLICY, 'gw', { rules: { authorization: { replaced: { opa: { rego: 'allow = false' } } } } }));
  await eventually(async () => {
    for (const spoke of spokes.values()) {
      const copy = await get(spoke, AUTH_POLICIES, ns, POLICY);
      if (!(copy?.spec as { rules?: { authorization?: Record<string, unknown> } } | undefined)?.rules?.authorization?.replaced) return undefined;
    }
    return true;
  }, { what: 'the edit on both spokes', context: () => workAgentLogs(sandbox) });
  await deletions.assertNone('GatewayClass replaced');
  await unchanged('after the class is back', workBefore, copiesBefore);
  report('k (GatewayClass replaced)', { deletions: 0, convergeMs });
});

test('a spoke deselected while healthy loses its work: the rule still removes what is known to be unwanted', async () => {
  await member('spoke-2', false);
  await decided(['spoke-1'], 'the Placement to deselect the healthy spoke-2');
  await eventually(async () => !(await workUids()).has('spoke-2') || undefined, { what: "spoke-2's work deleted" });
  await eventually(async () => (await get(spokes.get('spoke-2')!, AUTH_POLICIES, ns, POLICY)) === undefined, { what: "spoke-2's copy removed by its work agent", context: () => workAgentLogs(sandbox) });
  assert.ok(await get(spokes.get('spoke-1')!, AUTH_POLICIES, ns, POLICY), 'spoke-1 keeps its copy');
});
