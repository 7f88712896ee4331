// No evidence is not evidence of absence (docs/design/tenancy.md#reports-are-evidence-not-orders), on the full
// plane: hub controller, the spoke agents in-process (started late, stopped, started again) and the real OCM
// work agents. A cluster whose agent has not reported — not started yet, or restarting — gets no first copy:
// a spoke's own policy with the copy's name is never written nor owned (OCM's agent would merge the hub's rules
// into it and own it), a copy that local policies cover is never placed, and the hub policy says the cluster
// awaits its spoke's report. Once the report says the name is free, the cluster gets its copy. Works placed
// stay while the agent is away, and an edit of the policy still reaches them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { PolicyStatus } from '../../src/core/status/policystatus.ts';
import { formatExplain, formatRows } from '../../src/cli/statusformat.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { AuditCursor, describeWrite } from '../../testkit/audit.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, quiescent, releaseSpokes, spokeClients, startHub, startSpoke, testControllerName, uniqueName, type RunningHub, type RunningSpoke } from '../../testkit/hub.ts';
import { hubStatus } from '../../testkit/status.ts';
import { ourWorks } from '../../testkit/works.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';

const SPOKE_CONFIG = { namespace: 'policy-sync-system', name: uniqueName('spoke-config') };
const controllerName = testControllerName('awaiting');
const ns = uniqueName('awaiting');
const className = uniqueName('class');
/** A hub policy whose name spoke-2's team also gave a policy of their own, on one listener of gw. */
const SHARED_NAME = 'shop-auth';
/** A hub policy at gw2, which a local policy on spoke-1 covers whole. */
const COVERED = 'gw2-auth';
const REPORT_HEARTBEAT_MS = 1_000;
/** Short, so that a stopped agent's report goes stale in seconds. */
const REPORT_STALE_MS = 5_000;

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub;
const metrics = new Metrics({ defaultMetrics: false });
const agents = new Map<string, RunningSpoke>();

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  for (const spoke of spokes.values()) {
    for (const n of [SPOKE_CONFIG.namespace, ns]) await createNamespace(spoke, n);
    const gw = gateway(ns, 'gw', 'spoke-gateways');
    (gw.spec as { listeners: unknown[] }).listeners.push({ name: 'api', port: 8080, protocol: 'HTTP' });
    await apply(spoke, gw);
    await apply(spoke, gateway(ns, 'gw2', 'spoke-gateways'));
  }
  await createNamespace(hub, ns);
  await apply(hub, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  for (const gw of ['gw', 'gw2']) await apply(hub, gateway(ns, gw, className, 'all-spokes'));
  await apply(hub, placementDecision(ns, 'all-spokes', sandbox.spokes.map((s) => s.name)));
  // No agent runs yet: the clusters have just joined, as far as the hub can tell.
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG, spokeReportStaleAfterMs: REPORT_STALE_MS, metrics });
});

after(async () => {
  await Promise.all([...agents.values()].map((a) => a.stop()));
  for (const name of [SHARED_NAME, COVERED]) await remove(hub, authPolicy(ns, name, 'gw'));
  await eventually(async () => (await ourWorks(hub, { controllerName, sourceNamespace: ns })).length === 0, { what: 'the policies\' works to go' }).catch(() => undefined);
  await controller.stop();
  for (const work of await ourWorks(hub, { controllerName })) await remove(hub, work);
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }));
  await removeNamespace(hub, ns);
  await releaseSpokes(spokes, ns);
  hub.destroy();
});

const agentLogs = (): string => workAgentLogs(sandbox, 10);

async function startAgent(cluster: string): Promise<void> {
  agents.set(cluster, await startSpoke(sandbox.kubeConfig(cluster), cluster, SPOKE_CONFIG, { reportHeartbeatMs: REPORT_HEARTBEAT_MS }));
}

async function stopAgent(cluster: string): Promise<void> {
  await agents.get(cluster)?.stop();
  agents.delete(cluster);
}

function copyOn(cluster: string, name: string): Promise<KubeObject | undefined> {
  return get(spokes.get(cluster)!, AUTH_POLICIES, ns, name);
}

/** A copy of hub policy `name` on `cluster` (not a local policy of the same name). */
async function ourCopyOn(cluster: string, name: string): Promise<KubeObject | undefined> {
  const object = await copyOn(cluster, name);
  return object?.metadata.annotations?.['kuadrant.io/policy-synced'] === `${ns}/${name}` ? object : undefined;
}

async function worksOf(name: string): Promise<string[]> {
  const works = await ourWorks(hub, { controllerName, sourceNamespace: ns });
  return works.filter((w) => w.metadata.annotations?.['policysync.kuadrant.io/source-ref']?.includes(`"name":"${name}"`)).map((w) => w.metadata.namespace ?? '').sort();
}

async function statusWhere(name: string, what: string, ok: (s: PolicyStatus) => boolean): Promise<PolicyStatus> {
  let last: PolicyStatus | undefined;
  return eventually(async () => {
    last = await hubStatus(hub, AUTH_POLICIES, ns, name);
    return last && ok(last) ? last : undefined;
  }, { what: `hub status of ${name}: ${what}`, timeoutMs: 60_000, intervalMs: 20, context: () => `last seen: ${JSON.stringify(last)}\n${agentLogs()}` });
}

const reasonOn = (s: PolicyStatus, cluster: string): string | undefined => s.clusters?.[cluster]?.reason;

async function awaitingGauge(): Promise<number> {
  const line = (await metrics.scrape()).body.split('\n').find((l) => l.startsWith('policysync_clusters_awaiting_report '));
  return Number(line?.split(' ')[1]);
}

/** A spoke's own policy, as written and as it must stay: same object, same spec, owned by nothing, never written. */
class LocalPolicy {
  private constructor(
    readonly cluster: string,
    readonly object: KubeObject,
    private readonly created: KubeObject,
    private readonly writes: AuditCursor,
  ) {}

  static async create(cluster: string, object: KubeObject): Promise<LocalPolicy> {
    const created = await apply(spokes.get(cluster)!, object);
    return new LocalPolicy(cluster, object, created, AuditCursor.at(sandbox, cluster));
  }

  async assertUntouched(what: string): Promise<void> {
    const now = (await get(spokes.get(this.cluster)!, AUTH_POLICIES, ns, this.object.metadata.name))!;
    assert.equal(now.metadata.uid, this.created.metadata.uid, `${what}: the same object`);
    assert.equal(now.metadata.resourceVersion, this.created.metadata.resourceVersion, `${what}: never written`);
    assert.deepEqual(now.spec, this.created.spec, `${what}: its spec as its team wrote it`);
    assert.equal(now.metadata.ownerReferences, undefined, `${what}: owned by no AppliedManifestWork`);
    assert.equal(now.metadata.annotations?.['kuadrant.io/policy-synced'], undefined, `${what}: not marked as a copy`);
    const writes = this.writes.since().filter((w) => w.resource.startsWith('authpolicies') && w.namespace === ns && w.name === this.object.metadata.name);
    assert.deepEqual(writes.map(describeWrite), [], `${what}: no write of anyone (the work agent included) reached it`);
  }

  async remove(): Promise<void> {
    await this.assertUntouched('before its team deletes it');
    await remove(spokes.get(this.cluster)!, this.object);
  }
}

/** No write of a copy named `name` reached `cluster` since `cursor`. */
function noCopyWritten(cursor: AuditCursor, name: string, what: string): void {
  const writes = cursor.since().filter((w) => w.resource.startsWith('authpolicies') && w.namespace === ns && w.name === name);
  assert.deepEqual(writes.map(describeWrite), [], what);
}

test('agents not started yet: no first copy anywhere, the clusters await their reports; then each gets what its report allows', async (t) => {
  // spoke-2's team wrote their own shop-auth (one listener); spoke-1's a policy taking gw2 whole.
  const ownName = authPolicy(ns, SHARED_NAME, 'gw', { rules: { authorization: { 'local-rule': { opa: { rego: 'allow = true' } } } } });
  (ownName.spec as { targetRef: Record<string, unknown> }).targetRef.sectionName = 'api';
  const sameName = await LocalPolicy.create('spoke-2', ownName);
  const cover = await LocalPolicy.create('spoke-1', authPolicy(ns, 'local-gw2', 'gw2'));
  const spoke1Writes = AuditCursor.at(sandbox, 'spoke-1');

  await apply(hub, authPolicy(ns, SHARED_NAME, 'gw', { rules: { authorization: { 'hub-rule': { opa: { rego: 'allow = false' } } } } }));
  await apply(hub, authPolicy(ns, COVERED, 'gw2'));
  for (const name of [SHARED_NAME, COVERED]) {
    const waiting = await statusWhere(name, 'both clusters awaiting their reports', (s) => ['spoke-1', 'spoke-2'].every((c) => reasonOn(s, c) === 'AwaitingSpokeReport'));
    for (const c of ['spoke-1', 'spoke-2']) {
      assert.equal(waiting.clusters?.[c]?.state, 'Pending');
      assert.equal(waiting.clusters?.[c]?.applied, false);
      assert.equal(waiting.clusters?.[c]?.message, `no report from the spoke agent yet; AuthPolicy ${ns}/${name} is placed once a fresh report shows the name free there`);
    }
  }
  await quiescent(controller.controller, 'with no agent reporting');
  assert.equal(await awaitingGauge(), 4, 'policysync_clusters_awaiting_report: 2 policies × 2 clusters');
  for (const name of [SHARED_NAME, COVERED]) assert.deepEqual(await worksOf(name), [], `no work for ${name} anywhere`);
  const status = (await hubStatus(hub, AUTH_POLICIES, ns, SHARED_NAME))!;
  const row = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', kind: 'AuthPolicy', namespace: ns, name: SHARED_NAME, status };
  assert.match(formatRows([row], false).replace(/\n {4}/g, ' '), new RegExp(`! AuthPolicy/${ns}/${SHARED_NAME}: AwaitingSpokeReport \\(spoke-1, spoke-2\\)`), 'policy-sync status names the clusters');
  assert.match(formatExplain(row), /reason:\s+AwaitingSpokeReport\n\s+message:\s+no report from the spoke agent yet/, 'policy-sync explain names the evidence missing');

  // spoke-1's agent starts: its report shows shop-auth's name free, and gw2 taken whole by local-gw2.
  const started = performance.now();
  await startAgent('spoke-1');
  await eventually(() => ourCopyOn('spoke-1', SHARED_NAME), { what: 'shop-auth on spoke-1 once its agent reported', timeoutMs: 60_000, context: agentLogs });
  const firstCopyMs = performance.now() - started;
  t.diagnostic(`spoke-1: agent start -> first copy on the spoke: ${firstCopyMs.toFixed(0)} ms (report heartbeat ${REPORT_HEARTBEAT_MS} ms)`);
  const covered = await statusWhere(COVERED, 'spoke-1 overridden', (s) => s.clusters?.['spoke-1']?.state === 'Overridden');
  assert.equal(reasonOn(covered, 'spoke-2'), 'AwaitingSpokeReport', 'spoke-2 still waits');
  assert.deepEqual(await worksOf(COVERED), [], 'the covered copy is placed nowhere');

  // spoke-2's agent starts: its report shows shop-auth held by the cluster's own policy.
  await startAgent('spoke-2');
  const conflicted = await statusWhere(SHARED_NAME, 'spoke-2 conflicted', (s) => reasonOn(s, 'spoke-2') === 'Conflicted');
  assert.match(conflicted.clusters?.['spoke-2']?.message ?? '', /is the cluster's own policy, not a copy of this one/);
  await eventually(() => ourCopyOn('spoke-2', COVERED), { what: 'gw2-auth on spoke-2, its name free there', context: agentLogs });
  await quiescent(controller.controller, 'with both agents reporting');
  assert.equal(await awaitingGauge(), 0, 'nothing awaits a report any more');
  assert.deepEqual(await worksOf(SHARED_NAME), ['spoke-1'], 'no work of shop-auth for spoke-2');
  assert.equal(await copyOn('spoke-1', COVERED), undefined, 'the covered copy never reached spoke-1');
  noCopyWritten(spoke1Writes, COVERED, 'no write of the covered copy ever reached spoke-1');
  await sameName.assertUntouched('while the hub policy of its name was held, then refused');

  // The local policies go: each cluster gets its copy once its report says the name is free.
  const freed = performance.now();
  await sameName.remove();
  await cover.remove();
  await eventually(() => ourCopyOn('spoke-2', SHARED_NAME), { what: 'shop-auth on spoke-2 once the name is free', timeoutMs: 60_000, context: agentLogs });
  await eventually(() => ourCopyOn('spoke-1', COVERED), { what: 'gw2-auth on spoke-1 once nothing covers it', timeoutMs: 60_000, context: agentLogs });
  t.diagnostic(`local policies deleted -> both copies placed: ${(performance.now() - freed).toFixed(0)} ms`);
  for (const name of [SHARED_NAME, COVERED]) assert.deepEqual(await worksOf(name), ['spoke-1', 'spoke-2']);
});

test('an agent restarting: what is placed stays and takes edits; nothing new is placed on its stale report, not even a copy local policies kept off', async () => {
  // Before the agent stops: a local policy takes gw2 on spoke-2, and the copy there is withdrawn.
  const cover = await LocalPolicy.create('spoke-2', authPolicy(ns, 'local-gw2', 'gw2'));
  await statusWhere(COVERED, 'spoke-2 overridden', (s) => s.clusters?.['spoke-2']?.state === 'Overridden');
  await eventually(async () => (await copyOn('spoke-2', COVERED)) === undefined, { what: 'gw2-auth withdrawn from spoke-2', context: agentLogs });

  await stopAgent('spoke-2');
  const stale = await statusWhere(COVERED, 'spoke-2 awaiting, its report stale', (s) => reasonOn(s, 'spoke-2') === 'AwaitingSpokeReport');
  assert.match(stale.clusters?.['spoke-2']?.message ?? '', /^the spoke agent's report is stale since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(hub time\); /);
  const spoke2Writes = AuditCursor.at(sandbox, 'spoke-2');

  // An edit of each policy meanwhile: shop-auth's copy on spoke-2 (placed: this policy's own) takes it; the
  // copy local policies kept off stays off.
  const edited = { rules: { authorization: { 'hub-rule-2': { opa: { rego: 'allow = true' } } } } };
  await apply(hub, authPolicy(ns, SHARED_NAME, 'gw', edited));
  await apply(hub, authPolicy(ns, COVERED, 'gw2', edited));
  await eventually(async () => JSON.stringify((await ourCopyOn('spoke-2', SHARED_NAME))?.spec).includes('hub-rule-2') || undefined, {
    what: "the edit on spoke-2's copy while its agent is down",
    context: agentLogs,
  });
  await eventually(async () => JSON.stringify((await ourCopyOn('spoke-1', COVERED))?.spec).includes('hub-rule-2') || undefined, { what: 'the edit of gw2-auth on spoke-1' });
  await quiescent(controller.controller, 'the edits made, spoke-2 silent');
  // Eventually, not at once: the agent's last heartbeat can reach the hub through the work agent's status feedback
  // after the report went stale (a loaded machine), and that fresh report says Overridden again for a while.
  await statusWhere(COVERED, 'spoke-2 awaiting after the edit', (s) => reasonOn(s, 'spoke-2') === 'AwaitingSpokeReport');
  noCopyWritten(spoke2Writes, COVERED, 'gw2-auth was not placed again on spoke-2 for want of a report');

  // shop-auth deleted (its copies go: that is known), spoke-2's team writes their own shop-auth again, and the
  // hub policy comes back: spoke-1 gets it, spoke-2 (stale) does not.
  await remove(hub, authPolicy(ns, SHARED_NAME, 'gw'));
  await eventually(async () => (await copyOn('spoke-1', SHARED_NAME)) === undefined && (await copyOn('spoke-2', SHARED_NAME)) === undefined, { what: "shop-auth's copies to go", context: agentLogs });
  const sameName = await LocalPolicy.create('spoke-2', authPolicy(ns, SHARED_NAME, 'gw'));
  await apply(hub, authPolicy(ns, SHARED_NAME, 'gw', edited));
  await eventually(() => ourCopyOn('spoke-1', SHARED_NAME), { what: 'shop-auth back on spoke-1', context: agentLogs });
  const held = await statusWhere(SHARED_NAME, 'spoke-2 awaiting', (s) => reasonOn(s, 'spoke-2') === 'AwaitingSpokeReport');
  assert.match(held.clusters?.['spoke-2']?.message ?? '', /report is stale since/);
  await quiescent(controller.controller, 'shop-auth re-created, spoke-2 silent');
  assert.deepEqual(await worksOf(SHARED_NAME), ['spoke-1'], 'no work of shop-auth for spoke-2 while its report is stale');
  await sameName.assertUntouched('while the agent was down');

  // The agent is back: its report says who holds what.
  await startAgent('spoke-2');
  await statusWhere(SHARED_NAME, 'spoke-2 conflicted', (s) => reasonOn(s, 'spoke-2') === 'Conflicted');
  await statusWhere(COVERED, 'spoke-2 overridden again', (s) => s.clusters?.['spoke-2']?.state === 'Overridden');
  await quiescent(controller.controller, 'the agent back');
  await sameName.assertUntouched('once the agent reported it');
  noCopyWritten(spoke2Writes, COVERED, 'gw2-auth never placed again on spoke-2');

  await sameName.remove();
  await cover.remove();
  await eventually(() => ourCopyOn('spoke-2', SHARED_NAME), { what: 'shop-auth on spoke-2 once the name is free', timeoutMs: 60_000, context: agentLogs });
  await eventually(() => ourCopyOn('spoke-2', COVERED), { what: 'gw2-auth on spoke-2 once nothing covers it', timeoutMs: 60_000, context: agentLogs });
});
