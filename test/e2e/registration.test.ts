// OCM's registration on the real plane: the sandbox runs the registration hub controller and an agent per spoke,
// so a spoke leaves the fleet the way it does in production. Stopping spoke-2's registration agent stops its lease
// renewals; the hub marks it Available=Unknown once the lease is LEASE_GRACE_FACTOR durations old, taints it
// `unreachable` (NoSelect), and the real placement controller drops it from a Placement that does not tolerate
// the taint. Starting the agent again makes it Available, removes the taint and brings it back into the decisions.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { LEASE_GRACE_MS, MANAGED_CLUSTER_LEASE_SECONDS, registrationAgent } from '../../testkit/sandbox/registration.ts';
import { logTail } from '../../testkit/sandbox/processes.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, type ResourceRef } from '../../src/kube/resource.ts';
import { deleteObject, mergePatch, serverSideApply } from '../../src/kube/writes.ts';
import { eventually } from '../../testkit/eventually.ts';
import { MANAGED_CLUSTERS, UNREACHABLE_TAINT, waitForClusterAvailability, waitForTaint } from '../../testkit/fleet.ts';
import { createNamespace, get, list, removeNamespace, PLACEMENT_LABEL } from '../../testkit/fixtures.ts';
import { hubHttp, uniqueName } from '../../testkit/hub.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

const OCM_CLUSTER = 'cluster.open-cluster-management.io';
const CLUSTER_SETS: ResourceRef = { group: OCM_CLUSTER, version: 'v1beta2', resource: 'managedclustersets', namespaced: false };
const CLUSTER_SET_BINDINGS: ResourceRef = { group: OCM_CLUSTER, version: 'v1beta2', resource: 'managedclustersetbindings', namespaced: true };
const PLACEMENTS: ResourceRef = { group: OCM_CLUSTER, version: 'v1beta1', resource: 'placements', namespaced: true };
const CLUSTER_SET_LABEL = `${OCM_CLUSTER}/clusterset`;
const FIELD_MANAGER = 'registration-e2e';

const SPOKES = ['spoke-1', 'spoke-2'];
const LEAVING = 'spoke-2';
const ns = uniqueName('registration');
/** The test's own ManagedClusterSet (cluster-scoped: named after the namespace, so unique to this run). */
const clusterSet = ns;
const placement = 'fleet';

let sandbox: Sandbox;
let hub: KubeHttp;
/** Each spoke's clusterset label before this file set it (undefined: none), restored afterwards. */
const previousSetLabel = new Map<string, string | undefined>();

function logs(): string {
  return ['registration-controller', registrationAgent(LEAVING), 'placement-controller'].map((n) => `${n}:\n${logTail(sandbox.logOf(n), 10)}`).join('\n');
}

async function decided(): Promise<string[]> {
  const decisions = await list(hub, RESOURCES.placementDecisions, ns, `${PLACEMENT_LABEL}=${placement}`);
  return decisions.flatMap((d) => ((d.status as { decisions?: { clusterName: string }[] } | undefined)?.decisions ?? []).map((x) => x.clusterName)).sort();
}

async function waitForDecisions(expected: string[], timeoutMs: number): Promise<void> {
  let last: string[] = [];
  await eventually(
    async () => {
      last = await decided();
      return last.join() === expected.join();
    },
    { what: `Placement ${ns}/${placement} to decide [${expected.join(', ')}]`, timeoutMs, intervalMs: 250, context: () => `last decided: [${last.join(', ')}]\n${logs()}` },
  );
}

before(async () => {
  sandbox = await testSandbox();
  assert.ok(sandbox.runsRegistration, 'the sandbox runs OCM registration (laid out with registration: false?)');
  hub = hubHttp(sandbox);
  await createNamespace(hub, ns);
  await serverSideApply(hub, CLUSTER_SETS, {
    apiVersion: `${OCM_CLUSTER}/v1beta2`,
    kind: 'ManagedClusterSet',
    metadata: { name: clusterSet },
    spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } },
  }, { fieldManager: FIELD_MANAGER });
  for (const spoke of SPOKES) {
    const cluster = await get(hub, MANAGED_CLUSTERS, undefined, spoke);
    assert.ok(cluster, `ManagedCluster ${spoke}`);
    previousSetLabel.set(spoke, cluster.metadata.labels?.[CLUSTER_SET_LABEL]);
    await mergePatch(hub, MANAGED_CLUSTERS, undefined, spoke, { metadata: { labels: { [CLUSTER_SET_LABEL]: clusterSet } } }, { fieldManager: FIELD_MANAGER });
  }
  await serverSideApply(hub, CLUSTER_SET_BINDINGS, {
    apiVersion: `${OCM_CLUSTER}/v1beta2`,
    kind: 'ManagedClusterSetBinding',
    metadata: { name: clusterSet, namespace: ns },
    spec: { clusterSet },
  }, { fieldManager: FIELD_MANAGER });
  // No tolerations: OCM's availability taints (NoSelect) take a cluster out of this Placement's decisions.
  await serverSideApply(hub, PLACEMENTS, {
    apiVersion: `${OCM_CLUSTER}/v1beta1`,
    kind: 'Placement',
    metadata: { name: placement, namespace: ns },
    spec: { clusterSets: [clusterSet] },
  }, { fieldManager: FIELD_MANAGER });
});

after(async () => {
  if (!sandbox) return;
  // Whatever happened above, the spoke goes back on the hub for the files after this one.
  await sandbox.start(registrationAgent(LEAVING));
  if (!hub) return;
  for (const [spoke, label] of previousSetLabel) {
    await mergePatch(hub, MANAGED_CLUSTERS, undefined, spoke, { metadata: { labels: { [CLUSTER_SET_LABEL]: label ?? null } } }, { fieldManager: FIELD_MANAGER });
  }
  await removeNamespace(hub, ns);
  await deleteObject(hub, CLUSTER_SETS, undefined, clusterSet);
  await waitForClusterAvailability(hub, LEAVING, 'True', 60_000);
  hub.destroy();
});

test('both spokes are Available with live leases while their registration agents run', async () => {
  for (const spoke of SPOKES) {
    const health = await waitForClusterAvailability(hub, spoke, 'True', 60_000);
    assert.deepEqual(health.taints, [], `${spoke} carries no availability taint`);
    const cluster = (await get(hub, MANAGED_CLUSTERS, undefined, spoke)) as KubeObject;
    assert.equal(cluster.spec?.leaseDurationSeconds, MANAGED_CLUSTER_LEASE_SECONDS, `${spoke}'s lease duration`);
    // The agent renews the lease every lease duration (jittered up to 25 %): it is never much older than that.
    const renewed = await eventually(
      async () => {
        const lease = await get(hub, RESOURCES.leases, spoke, 'managed-cluster-lease');
        const renewTime = (lease?.spec as { renewTime?: string } | undefined)?.renewTime;
        return renewTime !== undefined && Date.now() - Date.parse(renewTime) < 2 * MANAGED_CLUSTER_LEASE_SECONDS * 1000 ? renewTime : undefined;
      },
      { what: `a lease of ${spoke} renewed within ${2 * MANAGED_CLUSTER_LEASE_SECONDS} s`, timeoutMs: 30_000, context: logs },
    );
    assert.ok(renewed);
  }
  await waitForDecisions(SPOKES, 60_000);
});

test(`stopping ${LEAVING}'s registration agent makes it unreachable and the Placement drops it; starting it brings it back`, async (t) => {
  await waitForDecisions(SPOKES, 60_000);
  const stoppedAt = Date.now();
  await sandbox.stop(registrationAgent(LEAVING));

  const unknown = await waitForClusterAvailability(hub, LEAVING, 'Unknown', LEASE_GRACE_MS + 30_000);
  const toUnknownMs = Date.now() - stoppedAt;
  assert.equal(unknown.reason, 'ManagedClusterLeaseUpdateStopped');
  // The lease expired, nothing else: its last renewal was at most one jittered lease duration before the stop.
  assert.ok(toUnknownMs >= LEASE_GRACE_MS - 2 * MANAGED_CLUSTER_LEASE_SECONDS * 1000, `Available=Unknown ${toUnknownMs} ms after the stop, not before the lease's grace (${LEASE_GRACE_MS} ms) could run out`);
  const tainted = await waitForTaint(hub, LEAVING, true, 15_000);
  const toTaintMs = Date.now() - stoppedAt;
  assert.deepEqual(tainted.taints, [UNREACHABLE_TAINT]);
  await waitForDecisions(['spoke-1'], 30_000);
  const toDroppedMs = Date.now() - stoppedAt;
  const stayed = await waitForClusterAvailability(hub, 'spoke-1', 'True', 1_000);
  assert.deepEqual(stayed.taints, [], 'spoke-1, whose agent runs, stays untainted');

  const startedAt = Date.now();
  await sandbox.start(registrationAgent(LEAVING));
  await waitForClusterAvailability(hub, LEAVING, 'True', 60_000);
  const toAvailableMs = Date.now() - startedAt;
  await waitForTaint(hub, LEAVING, false, 15_000);
  const toUntaintedMs = Date.now() - startedAt;
  await waitForDecisions(SPOKES, 30_000);
  const toDecidedMs = Date.now() - startedAt;
  t.diagnostic(`after the stop: Available=Unknown ${toUnknownMs} ms, tainted ${toTaintMs} ms, dropped from the Placement ${toDroppedMs} ms (lease ${MANAGED_CLUSTER_LEASE_SECONDS} s, grace ${LEASE_GRACE_MS} ms)`);
  t.diagnostic(`after the start: Available=True ${toAvailableMs} ms, untainted ${toUntaintedMs} ms, decided again ${toDecidedMs} ms`);
});
