// The spoke agent's report is evidence, not orders (docs/design/tenancy.md#reports-are-evidence-not-orders), on a real spoke apiserver: the agent runs
// in-process as a ServiceAccount of its own, with RBAC for one policy kind (a CRD of this test's own, so
// that no other test's watches are touched), and what it writes is read back from its ConfigMap.
// - A local policy that the test, acting as its controller, marks Accepted=False is reported rejected and
//   does not count; one marked Conflicted (GEP-713, Envoy Gateway's newer-of-two) still counts.
// - A watch gap is doubt (docs/design/tenancy.md#reports-are-evidence-not-orders): the agent reaches its
//   apiserver through a CONNECT proxy of the test's own (kubeconfig proxy-url), which resets every
//   connection at once, as a network blip does, or slows what the apiserver sends back so that a watch
//   catching up delivers its events seconds apart. Every version of the report is recorded (a watch of its
//   ConfigMap), so no report between two of them escapes the test.
//   - A watch reset with nothing to catch up: the kind leaves the report at once and is back within a
//     couple of seconds (the state taken afresh), not at the resumed watch's first bookmark a minute on.
//   - The kind's watch dies for real: the agent's list/watch grant is revoked, then the watch is cut (or
//     the CRD's spec changes, which makes the apiserver rebuild the kind's storage and end every open watch
//     of it; a watch resumed from before that is answered 410 Gone). The watch comes back 403 and the kind
//     leaves the report at once — not at the next heartbeat — and stays out while local policies change
//     unseen. Once the grant is back, the first report with the kind again is exactly what the apiserver
//     holds: never the cache from before the gap, nor one half caught up with it.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { POLICY_SYNCED_ANNOTATION } from '../../src/core/metadatakeys.ts';
import { spokeHeartbeatName } from '../../src/core/spoke/spokeheartbeat.ts';
import { localPoliciesIn, occupantOf } from '../../src/core/spoke/reportquery.ts';
import { parseSpokeReport } from '../../src/core/spoke/reportwire.ts';
import { spokeReportName, type SpokeReport } from '../../src/core/spoke/spokereport.ts';
import { ApiError, isNotFound, KubeHttp } from '../../src/kube/http.ts';
import { Informer } from '../../src/kube/informer.ts';
import { RESOURCES, collectionPath, objectPath, type ResourceRef } from '../../src/kube/resource.ts';
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
/**
 * A watch reset with nothing to catch up: how soon the kind must be back — measured 1.2–1.4 s, 2.9 s on two
 * cores at load 39 (its first bookmark, which it waited for before: about a minute).
 */
const BACK_WITHIN_MS = 6_000;
/** Slowed, the proxy passes this many bytes from the apiserver every 50 ms: a watch event takes a few hundred ms. */
const TRICKLE_BYTES = 100;

const CLUSTER_ROLES: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', namespaced: false };
const CLUSTER_ROLE_BINDINGS: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', namespaced: false };
const ROLES: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', namespaced: true };
const ROLE_BINDINGS: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', namespaced: true };
const SERVICE_ACCOUNTS: ResourceRef = { group: '', version: 'v1', resource: 'serviceaccounts', namespaced: true };

let sandbox: Sandbox;
let admin: KubeHttp;
let agent: SpokeController | undefined;
const logs: string[] = [];

interface Tunnel {
  client: Duplex;
  upstream: Socket;
  /** What the apiserver sent that the client has not been given yet. */
  pending: Buffer[];
  upstreamEnded: boolean;
}

/**
 * The agent's way to its apiserver: an HTTP CONNECT proxy that the test can cut — every connection through
 * it reset at once — or slow: what the apiserver sends back trickles at TRICKLE_BYTES every 50 ms (TLS is
 * passed through untouched; the client decrypts each record once it is whole).
 */
class AgentProxy {
  private readonly server: Server = createServer();
  private readonly tunnels = new Set<Tunnel>();
  private trickle: NodeJS.Timeout | undefined;

  async listen(): Promise<string> {
    this.server.on('connect', (req, client: Duplex, head: Buffer) => {
      const [host, port] = (req.url ?? '').split(':');
      const upstream = connect(Number(port), host);
      const tunnel: Tunnel = { client, upstream, pending: [], upstreamEnded: false };
      this.tunnels.add(tunnel);
      const close = (): void => {
        client.destroy();
        upstream.destroy();
        this.tunnels.delete(tunnel);
      };
      upstream.on('connect', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        client.pipe(upstream);
      });
      upstream.on('data', (chunk: Buffer) => {
        tunnel.pending.push(chunk);
        if (!this.trickle) this.pass(tunnel, Infinity);
      });
      upstream.on('end', () => {
        tunnel.upstreamEnded = true;
        if (!this.trickle) this.pass(tunnel, Infinity);
      });
      upstream.on('error', close);
      client.on('error', close);
      client.on('close', close);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resets every connection open through the proxy (new ones go through). */
  cut(): void {
    for (const t of [...this.tunnels]) {
      t.client.destroy();
      t.upstream.destroy();
    }
    this.tunnels.clear();
  }

  /** Slows (true) or frees (false) what every connection, open or new, carries from the apiserver. */
  slow(on: boolean): void {
    clearInterval(this.trickle);
    this.trickle = undefined;
    if (on) this.trickle = setInterval(() => this.tunnels.forEach((t) => this.pass(t, TRICKLE_BYTES)), 50);
    else this.tunnels.forEach((t) => this.pass(t, Infinity));
  }

  close(): void {
    this.slow(false);
    this.cut();
    this.server.close();
  }

  /** Gives the client up to `budget` bytes of what the apiserver sent. */
  private pass(t: Tunnel, budget: number): void {
    while (budget > 0 && t.pending.length > 0) {
      const chunk = t.pending[0]!;
      const part = chunk.subarray(0, Math.min(chunk.length, budget));
      t.client.write(part);
      budget -= part.length;
      if (part.length === chunk.length) t.pending.shift();
      else t.pending[0] = chunk.subarray(part.length);
    }
    if (t.pending.length === 0 && t.upstreamEnded) t.client.end();
  }
}

const proxy = new AgentProxy();

/** Every version of the report ConfigMap, in order, with when the test saw it. */
interface ReportVersion {
  at: number;
  report: SpokeReport;
}
const reports: ReportVersion[] = [];
let reportWatch: Informer | undefined;

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

const hasKind = (r: SpokeReport): boolean => Object.hasOwn(r.objects, KIND);

/** The first report version from index `from` on that `match`es. */
async function nextReport(from: number, match: (r: SpokeReport) => boolean, what: string, timeoutMs = HEARTBEAT_MS): Promise<ReportVersion & { index: number }> {
  return eventually(() => {
    const index = reports.findIndex((v, i) => i >= from && match(v.report));
    return Promise.resolve(index >= 0 && { ...reports[index]!, index });
  }, { what, timeoutMs, intervalMs: 20, context: agentLogs });
}

/** Waits until the report has the kind, with these objects (a test starts from where the one before left it). */
async function reported(expected: string[]): Promise<void> {
  await eventually(async () => {
    const seen = await report();
    return seen && hasKind(seen) && JSON.stringify(names(seen)) === JSON.stringify(expected);
  }, { what: `the kind reported with ${expected.join(', ')}`, timeoutMs: 90_000, intervalMs: 100, context: agentLogs });
}

/** Revokes the agent's list/watch of the kind, and waits until the apiserver refuses it. */
async function revokeGrant(sa: KubeHttp): Promise<void> {
  await admin.request('DELETE', objectPath(CLUSTER_ROLE_BINDINGS, undefined, GRANT));
  await eventually(async () => {
    try {
      await sa.request('GET', collectionPath(POLICIES, ns), { query: { limit: 1 } });
      return false;
    } catch (err) {
      return err instanceof ApiError && err.status === 403;
    }
  }, { what: 'the agent refused the kind', intervalMs: 50 });
}

/** Every report version from `from` on, the kind's objects by name, for failure messages. */
function reportHistory(from: number, t0: number): string {
  return reports.slice(from).map((v) => `${(v.at - t0).toFixed(0).padStart(6)} ms ${hasKind(v.report) ? JSON.stringify(names(v.report)) : '(kind left out)'}`).join('\n');
}

async function serviceAccountKubeConfig(proxyUrl?: string): Promise<KubeConfig> {
  const adminConfig = sandbox.kubeConfig(SPOKE);
  const cluster = adminConfig.getCurrentCluster();
  assert.ok(cluster?.caData, 'the sandbox admin kubeconfig carries the spoke CA');
  const token = await admin.request<{ status: { token: string } }>('POST', `${objectPath(SERVICE_ACCOUNTS, ns, SA)}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: SPOKE, server: cluster.server, caData: cluster.caData, skipTLSVerify: false, ...(proxyUrl ? { proxyUrl } : {}) }],
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
      { apiGroups: [''], resources: ['configmaps'], resourceNames: [REPORT, spokeHeartbeatName(CONFIG.name)], verbs: ['create', 'get', 'patch', 'update'] },
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

  reportWatch = new Informer(admin, RESOURCES.configMaps, { namespace: ns, fieldSelector: `metadata.name=${REPORT}` }).onChange((change) => {
    const text = (change.object.data as Record<string, string> | undefined)?.report;
    if (change.type === 'DELETED' || text === undefined) return;
    const parsed = parseSpokeReport(text);
    if (parsed.ok) reports.push({ at: performance.now(), report: parsed.report });
  });
  reportWatch.start();
  await reportWatch.waitForSync();

  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(line) });
  agent = new SpokeController({
    kubeConfig: await serviceAccountKubeConfig(await proxy.listen()),
    logger,
    policies: [{ group: GROUP, version: 'v1', resource: 'testpolicies' }],
    configMap: CONFIG,
    reportHeartbeatMs: HEARTBEAT_MS,
  });
  await agent.start();
});

after(async () => {
  await agent?.stop();
  proxy.close();
  await reportWatch?.stop();
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
    // Made by hand here, not by OCM's work agent: no AppliedManifestWork owns it (it lingers nowhere, whatever the hub has).
    { name: 'copy', synced: 'hub-ns/copy', unowned: true },
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

test('a watch reset with nothing to catch up: the kind leaves the report and is back within a couple of seconds, with the state taken afresh — not at the first bookmark, a minute on', async (t) => {
  const before = names((await report())!);
  const from = reports.length;
  const cut = performance.now();
  proxy.cut();
  const left = await nextReport(from, (r) => !hasKind(r), 'the kind to leave the report');
  const back = await nextReport(left.index, hasKind, 'the kind back in the report', 60_000);
  t.diagnostic(`the kind left the report ${(left.at - cut).toFixed(0)} ms after the reset and was back ${(back.at - cut).toFixed(0)} ms after it`);
  assert.ok(back.at - cut < BACK_WITHIN_MS, `back ${(back.at - cut).toFixed(0)} ms after the reset (within ${BACK_WITHIN_MS} ms)\n${reportHistory(from, cut)}`);
  assert.deepEqual(names(back.report), before, 'nothing changed meanwhile');
});

test('a kind whose watch dies leaves the report at once and stays out while local policies change; back, its first report is what changed meanwhile, never half of it', async (t) => {
  const sa = new KubeHttp(await serviceAccountKubeConfig());
  t.after(() => sa.destroy());
  await reported(['conflicted', 'copy', 'local-a', 'rejected']);
  await revokeGrant(sa);
  const from = reports.length;
  const cut = performance.now();
  proxy.cut();
  const left = await nextReport(from, (r) => !hasKind(r), 'the kind to leave the report');
  t.diagnostic(`the kind left the report ${(left.at - cut).toFixed(0)} ms after its watch was cut`);

  // Unseen by the agent, one local policy is made and another deleted: a resumed watch has two events to catch up.
  await create(policy('local-b'));
  await removePolicy('local-a');
  // What the apiserver sends back trickles: those events reach the agent hundreds of ms apart.
  proxy.slow(true);
  t.after(() => proxy.slow(false));
  await serverSideApply(admin, CLUSTER_ROLE_BINDINGS, grant(), { fieldManager: 'test' });
  const restored = performance.now();
  const back = await nextReport(left.index, hasKind, 'the kind back in the report', 90_000);
  t.diagnostic(`the kind was back ${(back.at - restored).toFixed(0)} ms after the grant returned (the apiserver's answers slowed)`);
  assert.deepEqual(names(back.report), ['conflicted', 'copy', 'local-b', 'rejected'], `the first report with the kind again is the state after the gap\n${reportHistory(from, cut)}`);
});

test('a kind whose watch dies across a rebuild of its storage (where a watch resumed from before the gap is answered 410 Gone) comes back with what changed meanwhile, never its cache from before', async (t) => {
  const sa = new KubeHttp(await serviceAccountKubeConfig());
  t.after(() => sa.destroy());
  await reported(['conflicted', 'copy', 'local-b', 'rejected']);
  // The grant goes; the open watch would run on until its server timeout (5-10 min), so the CRD's spec
  // changes: the apiserver rebuilds the kind's storage and ends its watches. The next one is refused; and
  // the new storage's watch cache starts after every resourceVersion the agent has seen.
  await revokeGrant(sa);
  const from = reports.length;
  const cut = performance.now();
  await serverSideApply(admin, RESOURCES.crds, crd('two'), { fieldManager: 'test' });
  const left = await nextReport(from, (r) => !hasKind(r), 'the kind to leave the report');
  t.diagnostic(`the kind left the report ${(left.at - cut).toFixed(0)} ms after its watch was ended (heartbeat ${HEARTBEAT_MS} ms)`);
  assert.ok(left.at - cut < HEARTBEAT_MS / 2, 'written when the watch failed, not at a heartbeat');
  assert.ok(logs.some((l) => l.includes('watch of a policy kind failing')), 'the agent says why the kind is gone');

  // Local policies change while the agent cannot see them: the report never claims to know the kind.
  await create(policy('local-c'));
  await removePolicy('local-b');
  const until = Date.now() + 5_000;
  let reads = 0;
  while (Date.now() < until) {
    const seen = await report();
    assert.ok(seen && !hasKind(seen), `read ${reads}: the kind is reported while its watch is dead: ${JSON.stringify(seen?.objects[KIND])}`);
    reads++;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(localPoliciesIn((await report())!, KIND, ns), undefined, 'unknown, not none');

  // A state taken afresh trickles in over seconds: a report written meanwhile would be seen.
  proxy.slow(true);
  t.after(() => proxy.slow(false));
  await serverSideApply(admin, CLUSTER_ROLE_BINDINGS, grant(), { fieldManager: 'test' });
  const restored = performance.now();
  const back = await nextReport(left.index, hasKind, 'the kind back in the report', 90_000);
  t.diagnostic(`the kind was back ${(back.at - restored).toFixed(0)} ms after the grant returned (the apiserver's answers slowed)`);
  assert.deepEqual(names(back.report), ['conflicted', 'copy', 'local-c', 'rejected'], `back with what changed while it was out: local-c made, local-b gone\n${reportHistory(from, cut)}`);
});

test('a kind whose CRD is deleted leaves the report', async () => {
  await admin.request('DELETE', objectPath(RESOURCES.crds, undefined, CRD_NAME));
  await eventually(async () => {
    const seen = await report();
    return seen && !Object.hasOwn(seen.objects, KIND);
  }, { what: 'the kind to leave the report', timeoutMs: 60_000, intervalMs: 100, context: agentLogs });
});
