// The spoke agent's report is evidence, not orders (docs/architecture.md#reports-are-evidence-not-orders), on a real spoke apiserver: the agent runs
// in-process as a ServiceAccount of its own, with RBAC for one policy kind (a CRD of this test's own, so
// that no other test's watches are touched), and what it writes is read back from its ConfigMap.
// - A local policy that the test, acting as its controller, marks Accepted=False is reported rejected and
//   does not count; one marked Conflicted (GEP-713, Envoy Gateway's newer-of-two) still counts.
// - The kind's watch dies for real: the agent's list/watch grant is revoked, then the CRD's spec changes,
//   which makes the apiserver rebuild the kind's storage and end every open watch of it. The watch comes
//   back 403 and the kind leaves the report at once — not at the next heartbeat — and stays out while local
//   policies change unseen; once the grant is back, the kind returns with what changed meanwhile.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { POLICY_SYNCED_ANNOTATION } from '../../src/core/metadatakeys.ts';
import { localPoliciesIn, occupantOf, parseSpokeReport, spokeReportName, type SpokeReport } from '../../src/core/spoke/spokereport.ts';
import { isNotFound, KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, objectPath, type ResourceRef } from '../../src/kube/resource.ts';
import { mergePatch, serverSideApply } from '../../src/kube/writes.ts';
import { SpokeController } from '../../src/spoke/controller.ts';
import { eventually } from '../../testkit/eventually.ts';
import { createNamespace, get, removeNamespace } from '../../testkit/fixtures.ts';
import { uniqueName } from '../../testkit/hub.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

const SPOKE = 'spoke-1';
const ns = uniqueName('reports');
const GROUP = `${ns}.policy-sync.test`;
const POLICIES: ResourceRef = { group: GROUP, version: 'v1', resource: 'testpolicies', namespaced: true };
const KIND = `testpolicies.${GROUP}`;
const CRD_NAME = `testpolicies.${GROUP}`;
const SA = 'agent';
const GRANT = `${ns}-policies`;
const CONFIG = { namespace: ns, name: 'agent' };
const REPORT = spokeReportName(CONFIG.name);
/** Long: a kind that leaves the report sooner than this left it because its watch failed, not at a heartbeat. */
const HEARTBEAT_MS = 30_000;
const MANAGER = 'test-policy-controller';

const CLUSTER_ROLES: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', namespaced: false };
const CLUSTER_ROLE_BINDINGS: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', namespaced: false };
const ROLES: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', namespaced: true };
const ROLE_BINDINGS: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', namespaced: true };
const SERVICE_ACCOUNTS: ResourceRef = { group: '', version: 'v1', resource: 'serviceaccounts', namespaced: true };

let sandbox: Sandbox;
let admin: KubeHttp;
let agent: SpokeController | undefined;
const logs: string[] = [];

function crd(description: string): KubeObject {
  const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'testpolicies', singular: 'testpolicy', kind: 'TestPolicy', listKind: 'TestPolicyList' },
      versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', description, properties: { spec: open, status: open } } } }],
    },
  };
}

function grant(): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: GRANT },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: GRANT },
    subjects: [{ kind: 'ServiceAccount', name: SA, namespace: ns }],
  };
}

function policy(name: string, extra: { synced?: string; section?: string } = {}): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'TestPolicy',
    metadata: { name, namespace: ns, ...(extra.synced ? { annotations: { [POLICY_SYNCED_ANNOTATION]: extra.synced } } : {}) },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', ...(extra.section ? { sectionName: extra.section } : {}) } },
  };
}

async function create(object: KubeObject): Promise<void> {
  await serverSideApply(admin, POLICIES, object, { fieldManager: 'test' });
}

async function removePolicy(name: string): Promise<void> {
  await admin.request('DELETE', objectPath(POLICIES, ns, name));
}

/** Writes the status the policy's own controller would. */
async function writeStatus(name: string, status: unknown): Promise<void> {
  await mergePatch(admin, POLICIES, ns, name, { status }, { subresource: 'status', fieldManager: MANAGER });
}

async function report(): Promise<SpokeReport | undefined> {
  const cm = await get(admin, RESOURCES.configMaps, ns, REPORT);
  const text = (cm?.data as Record<string, string> | undefined)?.report;
  if (text === undefined) return undefined;
  const parsed = parseSpokeReport(text);
  assert.ok(parsed.ok, `the agent wrote a report the hub refuses: ${JSON.stringify(parsed)}`);
  return parsed.report;
}

function names(r: SpokeReport): string[] {
  return (r.objects[KIND]?.[ns] ?? []).map((e) => e.name);
}

const agentLogs = (): string => logs.slice(-15).join('');

async function serviceAccountKubeConfig(): Promise<KubeConfig> {
  const adminConfig = sandbox.kubeConfig(SPOKE);
  const cluster = adminConfig.getCurrentCluster();
  assert.ok(cluster?.caData, 'the sandbox admin kubeconfig carries the spoke CA');
  const token = await admin.request<{ status: { token: string } }>('POST', `${objectPath(SERVICE_ACCOUNTS, ns, SA)}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: SPOKE, server: cluster.server, caData: cluster.caData, skipTLSVerify: false }],
    users: [{ name: SA, token: token.status.token }],
    contexts: [{ name: SPOKE, cluster: SPOKE, user: SA }],
    currentContext: SPOKE,
  });
  return kc;
}

before(async () => {
  sandbox = await testSandbox();
  admin = new KubeHttp(sandbox.kubeConfig(SPOKE));
  await serverSideApply(admin, RESOURCES.crds, crd('one'), { fieldManager: 'test' });
  await eventually(async () => {
    const c = await get(admin, RESOURCES.crds, undefined, CRD_NAME);
    return (c?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
  }, { what: 'the test CRD established' });
  await createNamespace(admin, ns);
  await serverSideApply(admin, SERVICE_ACCOUNTS, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SA, namespace: ns } }, { fieldManager: 'test' });
  // What deploy/spoke grants the agent: its report ConfigMap in its namespace, list/watch of a policy kind.
  await serverSideApply(admin, ROLES, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: SA, namespace: ns },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: [REPORT], verbs: ['create', 'get', 'patch', 'update'] },
    ],
  }, { fieldManager: 'test' });
  await serverSideApply(admin, ROLE_BINDINGS, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: SA, namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: SA },
    subjects: [{ kind: 'ServiceAccount', name: SA, namespace: ns }],
  }, { fieldManager: 'test' });
  await serverSideApply(admin, CLUSTER_ROLES, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: GRANT },
    rules: [{ apiGroups: [GROUP], resources: ['testpolicies'], verbs: ['list', 'watch'] }],
  }, { fieldManager: 'test' });
  await serverSideApply(admin, CLUSTER_ROLE_BINDINGS, grant(), { fieldManager: 'test' });

  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(line) });
  agent = new SpokeController({
    kubeConfig: await serviceAccountKubeConfig(),
    logger,
    policies: [{ group: GROUP, version: 'v1', resource: 'testpolicies' }],
    configMap: CONFIG,
    reportHeartbeatMs: HEARTBEAT_MS,
  });
  await agent.start();
});

after(async () => {
  await agent?.stop();
  for (const [resource, name] of [[CLUSTER_ROLE_BINDINGS, GRANT], [CLUSTER_ROLES, GRANT], [RESOURCES.crds, CRD_NAME]] as const) {
    await admin.request('DELETE', objectPath(resource, undefined, name)).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }
  await removeNamespace(admin, ns);
  admin.destroy();
});

test('every object of the kind is reported: a local policy its controller rejected is marked so and does not count; a Conflicted one counts; a synced copy names its source', async () => {
  await create(policy('local-a'));
  await create(policy('rejected'));
  await create(policy('conflicted', { section: 'https' }));
  await create(policy('copy', { synced: 'hub-ns/copy' }));
  await writeStatus('rejected', { conditions: [{ type: 'Accepted', status: 'False', reason: 'Invalid', message: 'spec is invalid', lastTransitionTime: '2026-11-23T10:00:00Z' }] });
  await writeStatus('conflicted', {
    ancestors: [{
      ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', namespace: ns, sectionName: 'https' },
      controllerName: 'gateway.envoyproxy.io/gatewayclass-controller',
      conditions: [{ type: 'Accepted', status: 'False', reason: 'Conflicted', message: 'conflicts with an older policy', lastTransitionTime: '2026-11-23T10:00:00Z' }],
    }],
  });
  const r = await eventually(async () => {
    const seen = await report();
    const entries = seen?.objects[KIND]?.[ns] ?? [];
    const rejected = entries.find((e) => e.name === 'rejected');
    const conflicted = entries.find((e) => e.name === 'conflicted');
    return entries.length === 4 && rejected && 'rejected' in rejected && conflicted && 'targets' in conflicted && seen;
  }, { what: 'the report of the four objects, the rejection seen', context: agentLogs });
  assert.deepEqual(r.objects[KIND]?.[ns], [
    { name: 'conflicted', targets: [{ gateway: 'gw', sectionName: 'https' }] },
    { name: 'copy', synced: 'hub-ns/copy' },
    { name: 'local-a', targets: [{ gateway: 'gw' }] },
    { name: 'rejected', targets: [{ gateway: 'gw' }], rejected: true },
  ]);
  assert.deepEqual(localPoliciesIn(r, KIND, ns)?.map((l) => l.key), [`${ns}/conflicted`, `${ns}/local-a`], 'the rejected one does not count');
  assert.deepEqual(occupantOf(r, KIND, ns, 'rejected'), { state: 'local' }, 'rejected, it still holds its name');
  assert.deepEqual(occupantOf(r, KIND, ns, 'copy'), { state: 'synced', source: 'hub-ns/copy' });
  assert.deepEqual(occupantOf(r, KIND, ns, 'nothing-here'), { state: 'free' });

  // Its controller accepts it: it counts.
  await writeStatus('rejected', { conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'ok', lastTransitionTime: '2026-11-23T10:01:00Z' }] });
  await eventually(async () => {
    const seen = await report();
    return seen && localPoliciesIn(seen, KIND, ns)?.some((l) => l.key === `${ns}/rejected`);
  }, { what: 'the accepted policy to count', context: agentLogs });
});

test('a kind whose watch dies leaves the report at once and stays out while local policies change; back, it reports what changed meanwhile', async (t) => {
  assert.ok(names((await report())!).includes('local-a'));
  // The grant goes; the open watch would run on until its server timeout (5-10 min), so the CRD's spec
  // changes: the apiserver rebuilds the kind's storage and ends its watches. The next one is refused.
  await admin.request('DELETE', objectPath(CLUSTER_ROLE_BINDINGS, undefined, GRANT));
  const cut = performance.now();
  await serverSideApply(admin, RESOURCES.crds, crd('two'), { fieldManager: 'test' });
  await eventually(async () => {
    const seen = await report();
    return seen && !Object.hasOwn(seen.objects, KIND);
  }, { what: 'the kind to leave the report', timeoutMs: HEARTBEAT_MS, intervalMs: 50, context: agentLogs });
  const dropped = performance.now() - cut;
  t.diagnostic(`the kind left the report ${dropped.toFixed(0)} ms after its watch was ended (heartbeat ${HEARTBEAT_MS} ms)`);
  assert.ok(dropped < HEARTBEAT_MS / 2, 'written when the watch failed, not at a heartbeat');
  assert.ok(logs.some((l) => l.includes('watch of a policy kind failing')), 'the agent says why the kind is gone');

  // Local policies change while the agent cannot see them: the report never claims to know the kind.
  await create(policy('local-b'));
  await removePolicy('local-a');
  const until = Date.now() + 5_000;
  let reads = 0;
  while (Date.now() < until) {
    const seen = await report();
    assert.ok(seen && !Object.hasOwn(seen.objects, KIND), `read ${reads}: the kind is reported while its watch is dead: ${JSON.stringify(seen?.objects[KIND])}`);
    reads++;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(localPoliciesIn((await report())!, KIND, ns), undefined, 'unknown, not none');

  await serverSideApply(admin, CLUSTER_ROLE_BINDINGS, grant(), { fieldManager: 'test' });
  const restored = performance.now();
  const back = await eventually(async () => {
    const seen = await report();
    return seen && Object.hasOwn(seen.objects, KIND) && seen;
  }, { what: 'the kind back in the report', timeoutMs: 90_000, intervalMs: 100, context: agentLogs });
  t.diagnostic(`the kind was back ${(performance.now() - restored).toFixed(0)} ms after the grant returned`);
  assert.deepEqual(names(back), ['conflicted', 'copy', 'local-b', 'rejected'], 'back with what changed while it was out: local-b made, local-a gone');
});

test('a kind whose CRD is deleted leaves the report', async () => {
  await admin.request('DELETE', objectPath(RESOURCES.crds, undefined, CRD_NAME));
  await eventually(async () => {
    const seen = await report();
    return seen && !Object.hasOwn(seen.objects, KIND);
  }, { what: 'the kind to leave the report', timeoutMs: 60_000, intervalMs: 100, context: agentLogs });
});
