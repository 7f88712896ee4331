// The spoke side installed from the hub as an OCM addon, with the real OCM addon manager, placement controller
// and work agents: `kubectl apply -k deploy/addon` on the hub and a ManagedCluster labelled into the addon's
// ManagedClusterSet put the spoke agent's namespace, ServiceAccount, RBAC, Deployment and the work agent's
// rights on that cluster (no command on the spoke); a cluster joining later gets them; an AddOnDeploymentConfig
// change (image, log level, tolerations) reaches the Deployment on every cluster; a cluster leaving the set
// loses them (its namespace stays); `kubectl delete -k deploy/addon` removes them everywhere.
// The Deployment gets no pods (the sandbox has no kubelet): the test asserts the objects the work agents apply.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  ADDON_DEPLOYMENT_CONFIGS,
  ADDON_NAME,
  ADDON_NAMESPACE,
  DEPLOY_WORK,
  MANAGED_CLUSTER_ADDONS,
  SPOKE_LABEL,
  agentObjects,
  describe,
  kubectlAddon,
  setMember,
} from '../../hack/addon.ts';
import { liveObjects } from '../../testkit/manifests.ts';
import { logTail } from '../../testkit/sandbox/processes.ts';
import { ADDON_MANAGER, type Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, type ResourceRef } from '../../src/kube/resource.ts';
import { mergePatch } from '../../src/kube/writes.ts';
import { eventually } from '../../testkit/eventually.ts';
import { get, list, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, spokeClients } from '../../testkit/hub.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';
import { readPackage } from '../../hack/gen-chart.ts';

const AGENT_NS = 'policy-sync-system';
// The release's image: package.json's version (hack/set-version.ts).
const DEFAULT_IMAGE = `ghcr.io/kuadrant/policy-sync:${readPackage().version}`;
const OVERRIDE_IMAGE = 'registry.example.com/platform/policy-sync:v0.1.0-e2e';
const APPLIED_WORKS: ResourceRef = { group: 'work.open-cluster-management.io', version: 'v1', resource: 'appliedmanifestworks', namespaced: false };
const PLACEMENT_DECISIONS = RESOURCES.placementDecisions;

interface Container {
  name: string;
  image?: string;
  args?: string[];
  env?: { name: string; value?: string }[];
}
interface PodSpec {
  containers: Container[];
  nodeSelector?: Record<string, string>;
  tolerations?: Record<string, string>[];
}

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let first: string;
let second: string;
const expected = agentObjects();
/** What goes when a cluster leaves: everything but the namespace, which the template orphans. */
const removable = expected.filter((o) => o.kind !== 'Namespace');
/** Spokes on which this file found no policy-sync-system namespace, so it removes the one the addon leaves. */
const createdNamespaceOn: string[] = [];

function spoke(name: string): KubeHttp {
  const http = spokes.get(name);
  assert.ok(http, `a client for ${name}`);
  return http;
}

function logs(): string {
  return `${ADDON_MANAGER}:\n${logTail(sandbox.logOf(ADDON_MANAGER), 20)}\n${workAgentLogs(sandbox, 10)}`;
}

/** The names of the expected objects missing on the cluster (none: the whole spoke side is there). */
async function missing(cluster: string, objects = expected): Promise<string[]> {
  const live = await liveObjects(spoke(cluster), objects);
  return objects.filter((_, i) => !live[i] || live[i].metadata.deletionTimestamp).map(describe);
}

async function waitInstalled(cluster: string, timeoutMs = 120_000): Promise<void> {
  let last: string[] = [];
  await eventually(
    async () => {
      last = await missing(cluster);
      return last.length === 0;
    },
    { what: `the addon's objects on ${cluster}`, timeoutMs, context: () => `still missing: ${last.join(', ')}\n${logs()}` },
  );
}

async function deployment(cluster: string): Promise<PodSpec> {
  const d = await get(spoke(cluster), { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true }, AGENT_NS, 'policy-sync-spoke');
  assert.ok(d, `Deployment ${AGENT_NS}/policy-sync-spoke on ${cluster}`);
  return (d.spec as { template: { spec: PodSpec } }).template.spec;
}

/** The clusters the addon's Placement decided, from its PlacementDecisions on the hub. */
async function decided(): Promise<string[]> {
  const decisions = await list(hub, PLACEMENT_DECISIONS, ADDON_NAMESPACE, `cluster.open-cluster-management.io/placement=${ADDON_NAME}`);
  return decisions.flatMap((d) => ((d.status as { decisions?: { clusterName: string }[] } | undefined)?.decisions ?? []).map((x) => x.clusterName)).sort();
}

/** The addon's hub-side state for one cluster: its ManagedClusterAddOn and ManifestWork exist (or neither does). */
async function hubState(cluster: string): Promise<{ addon: boolean; work: boolean }> {
  const addon = await get(hub, MANAGED_CLUSTER_ADDONS, cluster, ADDON_NAME);
  const work = await get(hub, RESOURCES.manifestWorks, cluster, DEPLOY_WORK);
  return { addon: addon !== undefined, work: work !== undefined };
}

/** The cluster's work agent has finished with the addon's work: no AppliedManifestWork for it is left. */
async function noAppliedWork(cluster: string): Promise<boolean> {
  const applied = await list(spoke(cluster), APPLIED_WORKS);
  return !applied.some((a) => (a.spec as { manifestWorkName?: string } | undefined)?.manifestWorkName === DEPLOY_WORK);
}

before(async () => {
  sandbox = await testSandbox();
  try {
    sandbox.process(ADDON_MANAGER);
  } catch {
    assert.fail(`the sandbox at ${sandbox.layout.root} was laid out before it ran the OCM addon manager: stop it (npm run local-down -- --root ${sandbox.layout.root}) and start it again`);
  }
  assert.ok(sandbox.spokes.length >= 2, 'the test needs two spokes');
  [first, second] = sandbox.spokes.map((s) => s.name) as [string, string];
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  assert.ok(expected.some((o) => o.kind === 'Namespace' && o.metadata.name === AGENT_NS), 'the template carries the agent namespace');
  for (const [name, http] of spokes) {
    if (!(await get(http, RESOURCES.namespaces, undefined, AGENT_NS))) createdNamespaceOn.push(name);
  }
  // No cluster is a member before the test makes it one.
  for (const s of sandbox.spokes) await setMember(hub, s.name, false);
});

after(async () => {
  if (!hub) return;
  for (const s of sandbox.spokes) await setMember(hub, s.name, false).catch(() => undefined);
  await kubectlAddon('delete', sandbox.hub.kubeconfig, ['--ignore-not-found']);
  for (const s of sandbox.spokes) {
    await eventually(async () => (await noAppliedWork(s.name)) && (await missing(s.name, removable)).length === removable.length, {
      what: `the addon gone from ${s.name}`,
      timeoutMs: 120_000,
      context: logs,
    });
  }
  // The namespace the addon left behind goes where this file brought it, and fully, before the next file runs.
  for (const name of createdNamespaceOn) {
    await removeNamespace(spoke(name), AGENT_NS);
    await eventually(async () => !(await get(spoke(name), RESOURCES.namespaces, undefined, AGENT_NS)), { what: `${AGENT_NS} gone from ${name}`, timeoutMs: 60_000 });
  }
  for (const http of spokes.values()) http.destroy();
  hub.destroy();
});

test('kubectl apply -k deploy/addon and a cluster joining the set install the whole spoke side on it, through its work agent', async () => {
  const applied = await kubectlAddon('apply', sandbox.hub.kubeconfig);
  assert.equal(applied.code, 0, `kubectl apply -k deploy/addon:\n${applied.output}`);
  await setMember(hub, first, true);

  await waitInstalled(first);
  const spec = await deployment(first);
  const agent = spec.containers.find((c) => c.name === 'spoke');
  assert.ok(agent);
  assert.equal(agent.image, DEFAULT_IMAGE);
  assert.deepEqual(agent.args?.filter((a) => a.startsWith('--log-level')), ['--log-level=info'], 'LOG_LEVEL from the AddOnDeploymentConfig');
  assert.deepEqual(spec.nodeSelector, { 'kubernetes.io/os': 'linux' }, 'the node selector from the AddOnDeploymentConfig');
  assert.ok(agent.env?.some((e) => e.name === 'CLUSTER_NAME' && e.value === first), 'the addon manager tells the agent its cluster name');
  const workRights = await get(spoke(first), { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', namespaced: false }, undefined, 'policy-sync-work-agent-kuadrant');
  assert.equal(workRights?.metadata.labels?.['open-cluster-management.io/aggregate-to-work'], 'true', "the work agent's rights on the synced kinds");

  // The other cluster is not in the set: the Placement decided the first alone, and the addon manager made a
  // ManagedClusterAddOn and a ManifestWork for it only — so nothing reaches the second.
  assert.deepEqual(await decided(), [first]);
  assert.deepEqual(await hubState(first), { addon: true, work: true });
  assert.deepEqual(await hubState(second), { addon: false, work: false });
  assert.deepEqual(await missing(second, removable), removable.map(describe), `nothing of the addon on ${second}`);
});

test('a cluster that joins the ManagedClusterSet later gets the spoke side too', async () => {
  await setMember(hub, second, true);
  await waitInstalled(second);
  assert.deepEqual(await decided(), [first, second].sort());
  assert.equal((await deployment(second)).containers[0]?.image, DEFAULT_IMAGE);
});

test('an image, log level and toleration change in the AddOnDeploymentConfig reaches the Deployment on every cluster', async () => {
  const toleration = { key: 'dedicated', operator: 'Equal', value: 'platform', effect: 'NoSchedule' };
  await mergePatch(hub, ADDON_DEPLOYMENT_CONFIGS, ADDON_NAMESPACE, ADDON_NAME, {
    spec: {
      registries: [{ source: DEFAULT_IMAGE, mirror: OVERRIDE_IMAGE }],
      customizedVariables: [{ name: 'LOG_LEVEL', value: 'debug' }],
      nodePlacement: { nodeSelector: { 'kubernetes.io/os': 'linux' }, tolerations: [toleration] },
    },
  }, { fieldManager: 'policy-sync-e2e' });
  for (const cluster of [first, second]) {
    const spec = await eventually(
      async () => {
        const s = await deployment(cluster);
        return s.containers[0]?.image === OVERRIDE_IMAGE ? s : undefined;
      },
      { what: `the image override on ${cluster}`, timeoutMs: 120_000, context: logs },
    );
    assert.deepEqual(spec.containers[0]?.args?.filter((a) => a.startsWith('--log-level')), ['--log-level=debug']);
    assert.deepEqual(spec.tolerations, [toleration]);
  }
});

test('a cluster that leaves the ManagedClusterSet loses the spoke side, keeps its namespace, and the others keep theirs', async () => {
  await setMember(hub, first, false);
  // The Placement drops it, the addon manager deletes its ManagedClusterAddOn (and, by owner reference, the
  // ManifestWork), and the work agent deletes what it applied: when no AppliedManifestWork is left, it is done.
  await eventually(async () => (await decided()).join() === second, { what: `${first} dropped from the decisions`, context: logs });
  await eventually(async () => {
    const s = await hubState(first);
    return !s.addon && !s.work;
  }, { what: `the ManagedClusterAddOn and ManifestWork of ${first} gone from the hub`, timeoutMs: 120_000, context: logs });
  await eventually(() => noAppliedWork(first), { what: `the work agent of ${first} done with the addon's work`, timeoutMs: 120_000, context: logs });

  assert.deepEqual(await missing(first, removable), removable.map(describe), `every agent object gone from ${first}`);
  const ns = await get(spoke(first), RESOURCES.namespaces, undefined, AGENT_NS);
  assert.ok(ns && !ns.metadata.deletionTimestamp, `the orphaned namespace ${AGENT_NS} stays on ${first}`);
  assert.deepEqual(await missing(second), [], `${second} keeps the spoke side`);
  assert.deepEqual(await hubState(second), { addon: true, work: true });
});

test('kubectl delete -k deploy/addon removes the spoke side from every cluster', async () => {
  const deleted = await kubectlAddon('delete', sandbox.hub.kubeconfig);
  assert.equal(deleted.code, 0, `kubectl delete -k deploy/addon:\n${deleted.output}`);
  await eventually(async () => {
    const s = await hubState(second);
    return !s.addon && !s.work;
  }, { what: `the ManagedClusterAddOn and ManifestWork of ${second} gone from the hub`, timeoutMs: 120_000, context: logs });
  await eventually(() => noAppliedWork(second), { what: `the work agent of ${second} done with the addon's work`, timeoutMs: 120_000, context: logs });
  assert.deepEqual(await missing(second, removable), removable.map(describe));
  const labelled = (await list(hub, { group: 'cluster.open-cluster-management.io', version: 'v1', resource: 'managedclusters', namespaced: false }, undefined, SPOKE_LABEL)).map((c) => c.metadata.name);
  assert.deepEqual(labelled, [second], 'membership is the admin\'s label: uninstalling the addon leaves it');
});
