// Metrics and probes of the hub controller against the real hub apiserver (no spokes, so works never
// get a status): /readyz before and after the caches sync, and the controller-runtime, workqueue and
// policysync_* series on /metrics for a world of 2 AuthPolicies placed on 2 clusters. Then a second hub
// placing on the real spoke-1, with its OCM work agent and a spoke agent: the spoke report age of spoke-1
// (gone with the cluster), the feedback latency of the spoke's status reaching the hub annotation, and the
// apiserver request latency by verb, resource and status class.
import assert from 'node:assert/strict';
import { WITNESS_AFTER_WORKS_MS } from '../../src/hub/spokeconfigsyncer.ts';
import { LINGER_GRACE_MS } from '../../src/core/spoke/spoketruth.ts';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { HubController } from '../../src/hub/controller.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { ProbeServer } from '../../src/runtime/probeserver.ts';
import { eventually } from '../../testkit/eventually.ts';
import { apply, authPolicy, createNamespace, gateway, gatewayClass, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { ourWorks } from '../../testkit/works.ts';
import { hubHttp, startHub, startSpoke, testControllerName, testHubOptions, uniqueName, type RunningHub, type RunningSpoke } from '../../testkit/hub.ts';
import { AUTH_POLICIES, get } from '../../testkit/fixtures.ts';
import { hubStatus, writeSpokeStatus } from '../../testkit/status.ts';
import { samples } from '../../testkit/metrics.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

let sandbox: Sandbox;
let http: KubeHttp;
let controller: HubController | undefined;
let probes: ProbeServer | undefined;
let base = '';
const metrics = new Metrics();
const controllerName = testControllerName('metrics');
const ns = uniqueName('metrics');
const [c1, c2] = [`${ns}-c1`, `${ns}-c2`];
const className = uniqueName('class');
const AUTH = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };

before(async () => {
  sandbox = await testSandbox();
  http = hubHttp(sandbox);
  for (const n of [ns, c1, c2]) await createNamespace(http, n);
  await apply(http, paramsConfigMap(ns, 'params', { policiesToSync: [AUTH] }));
  await apply(http, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(http, gateway(ns, 'gw', className, 'everywhere'));
  await apply(http, placementDecision(ns, 'everywhere', [c1, c2]));
});

after(async () => {
  await probes?.stop();
  await controller?.stop();
  if (!http) return; // the sandbox did not come up: nothing was created
  for (const w of await ourWorks(http, { controllerName })) await remove(http, w);
  await remove(http, gatewayClass(className, { namespace: ns, name: 'params' }));
  for (const n of [ns, c1, c2]) await removeNamespace(http, n);
  http.destroy();
});

async function scrape(): Promise<string> {
  const res = await fetch(`${base}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  return res.text();
}

/** The value of the one sample of `name` with exactly these labels; undefined when there is none. */
function value(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  const found = samples(text, name).filter((s) => JSON.stringify(Object.entries(s.labels).sort()) === want);
  assert.ok(found.length <= 1, `one sample of ${name} ${want}`);
  return found[0]?.value;
}

test('/readyz answers 503 before the caches have synced and 200 after', async () => {
  controller = new HubController(testHubOptions(sandbox.kubeConfig('hub'), { controllerName, metrics }));
  const running = controller;
  probes = new ProbeServer({ address: '127.0.0.1:0', ready: () => running.cachesSynced, metrics: () => metrics.scrape() });
  base = `http://127.0.0.1:${(await probes.start()).port}`;

  // Constructed, not started: no cache has synced, and the endpoints already answer.
  assert.equal((await fetch(`${base}/healthz`)).status, 200);
  const notReady = await fetch(`${base}/readyz`);
  assert.equal(notReady.status, 503);
  assert.equal(await notReady.text(), 'caches not synced\n');
  assert.ok((await scrape()).includes('workqueue_depth{name="policy"} 0'), '/metrics is served before the start');

  await running.start();
  // start() resolves once the fixed informers synced; the policy kind watches follow from the class params.
  await eventually(async () => (await fetch(`${base}/readyz`)).status === 200, { what: '/readyz to answer 200', timeoutMs: 30_000 });
  assert.equal(running.cachesSynced, true);
});

test('after convergence /metrics shows the reconciles, an idle policy queue, 4 pending works and 4 pending clusters', async () => {
  await apply(http, authPolicy(ns, 'auth-a', 'gw'));
  await apply(http, authPolicy(ns, 'auth-b', 'gw'));
  await eventually(async () => (await ourWorks(http, { controllerName })).length === 4, { what: '4 works (2 policies × 2 clusters)', timeoutMs: 30_000 });

  // Converged: nothing queued or in flight, and the gauges computed from the caches caught up.
  let last = '';
  const text = await eventually(
    async () => {
      // Settled means the scrape itself shows no active worker: idle() alone, read after the scrape, misses a status
      // write's reconcile that ran during it (CI saw controller_runtime_active_workers 1 with idle() true).
      last = await scrape();
      const settled =
        controller!.idle() &&
        value(last, 'controller_runtime_active_workers', { controller: 'policy' }) === 0 &&
        value(last, 'workqueue_depth', { name: 'policy' }) === 0 &&
        value(last, 'policysync_works', { state: 'pending' }) === 4 &&
        value(last, 'policysync_clusters', { status: 'pending' }) === 4;
      return settled ? last : undefined;
    },
    { what: 'the hub to settle with 4 pending works', timeoutMs: 30_000, context: () => last.split('\n').filter((l) => /^(policysync|workqueue_depth)/.test(l)).join('\n') },
  );

  assert.ok(value(text, 'controller_runtime_reconcile_total', { controller: 'policy', result: 'success' })! > 0, 'policy reconciles succeeded');
  // The class reconciler asks for a periodic re-check (result requeue_after): count every result.
  const classReconciles = samples(text, 'controller_runtime_reconcile_total').filter((s) => s.labels.controller === 'gatewayclass');
  assert.equal(classReconciles.length, 4, 'one series per result');
  assert.ok(classReconciles.reduce((sum, s) => sum + s.value, 0) > 0, 'the class was reconciled');
  assert.ok(value(text, 'controller_runtime_reconcile_time_seconds_count', { controller: 'policy' })! > 0);
  assert.ok(value(text, 'workqueue_adds_total', { name: 'policy' })! > 0, 'policy keys were queued');
  assert.ok(value(text, 'workqueue_work_duration_seconds_count', { name: 'policy' })! > 0);
  assert.equal(value(text, 'workqueue_depth', { name: 'policy' }), 0);

  // No agent runs on these "clusters": the works never get a status, so they are all pending.
  assert.equal(value(text, 'policysync_works', { state: 'pending' }), 4);
  assert.equal(value(text, 'policysync_works', { state: 'applied' }), 0);
  assert.equal(value(text, 'policysync_works', { state: 'failed' }), 0);
  assert.equal(value(text, 'policysync_watched_kinds'), 1);
  // Each policy's aggregated status: 2 clusters Pending; summed over the 2 policies.
  assert.equal(value(text, 'policysync_clusters', { status: 'pending' }), 4);
  for (const status of ['enforced', 'overridden', 'failed']) assert.equal(value(text, 'policysync_clusters', { status }), 0, status);
  assert.ok(samples(text, 'process_resident_memory_bytes').length === 1, 'process metrics are exposed');
});

test('deleting a policy removes its works and its clusters from the gauges', async () => {
  await remove(http, authPolicy(ns, 'auth-b', 'gw'));
  let last = '';
  await eventually(
    async () => {
      last = await scrape();
      return value(last, 'policysync_works', { state: 'pending' }) === 2 && value(last, 'policysync_clusters', { status: 'pending' }) === 2;
    },
    { what: 'the gauges to count the remaining policy only', timeoutMs: 30_000, context: () => last.split('\n').filter((l) => l.startsWith('policysync')).join('\n') },
  );
});

// The second hub: placing on the real spoke-1, whose work agent applies the copy and brings its status back.
const loop = {
  metrics: new Metrics(),
  controllerName: testControllerName('metrics-loop'),
  ns: uniqueName('metrics-loop'),
  className: uniqueName('class'),
  hub: undefined as RunningHub | undefined,
  agent: undefined as RunningSpoke | undefined,
  spoke: undefined as KubeHttp | undefined,
  probes: undefined as ProbeServer | undefined,
};
const SPOKE = 'spoke-1';

after(async () => {
  await loop.agent?.stop();
  await loop.probes?.stop();
  if (!http) return;
  // The works go with the policy and the placement while the controller runs; what is left, by hand.
  await remove(http, authPolicy(loop.ns, 'auth', 'gw')).catch(() => undefined);
  if (loop.hub) {
    await eventually(async () => (await ourWorks(http, { controllerName: loop.controllerName })).length === 0, { what: 'the loop hub works to go', timeoutMs: 30_000 }).catch(() => undefined);
    await loop.hub.stop();
  }
  for (const w of await ourWorks(http, { controllerName: loop.controllerName })) await remove(http, w);
  await remove(http, gatewayClass(loop.className, { namespace: loop.ns, name: 'params' }));
  await removeNamespace(http, loop.ns);
  if (loop.spoke) {
    await removeNamespace(loop.spoke, loop.ns);
    loop.spoke.destroy();
  }
});

test('a hub placing on a real spoke: spoke report age per cluster, feedback latency to the annotation, request latency by verb, resource and code class', async () => {
  const { ns } = loop;
  loop.spoke = new KubeHttp(sandbox.kubeConfig(SPOKE));
  const spoke = loop.spoke;
  await createNamespace(spoke, ns);
  await createNamespace(http, ns);
  await apply(http, paramsConfigMap(ns, 'params', { policiesToSync: [AUTH] }));
  await apply(http, gatewayClass(loop.className, { namespace: ns, name: 'params' }, loop.controllerName));
  await apply(http, gateway(ns, 'gw', loop.className, 'spoke'));
  await apply(http, placementDecision(ns, 'spoke', [SPOKE]));
  const spokeConfig = { namespace: ns, name: 'agent' };
  loop.hub = await startHub(sandbox.kubeConfig('hub'), { controllerName: loop.controllerName, metrics: loop.metrics, spokeConfig });
  loop.agent = await startSpoke(sandbox.kubeConfig(SPOKE), SPOKE, spokeConfig, { reportHeartbeatMs: 1_000 });
  const running = loop.hub.controller;
  loop.probes = new ProbeServer({ address: '127.0.0.1:0', ready: () => running.cachesSynced, metrics: () => loop.metrics.scrape() });
  const url = `http://127.0.0.1:${(await loop.probes.start()).port}/metrics`;
  const scrapeLoop = async (): Promise<string> => (await fetch(url)).text();
  let last = '';
  const until = <T>(what: string, probe: (text: string) => T | undefined, timeoutMs?: number): Promise<T> =>
    eventually(
      async () => {
        last = await scrapeLoop();
        return probe(last);
      },
      { what, timeoutMs: timeoutMs ?? 60_000, context: () => last.split('\n').filter((l) => /^(policysync_spoke|policysync_feedback_latency_seconds_count|rest_client_request_duration_seconds_count)/.test(l)).join('\n') },
    );

  // The agent's report comes back through the spoke-config work's feedback, heartbeat after heartbeat.
  const age = await until('the report age of spoke-1', (t) => value(t, 'policysync_spoke_report_age_seconds', { cluster: SPOKE }));
  assert.ok(age >= 0 && age < 30, `a live agent's report is young: ${age} s`);
  assert.deepEqual(samples(last, 'policysync_spoke_report_age_seconds').map((s) => s.labels.cluster), [SPOKE], 'one series, of the one cluster placed');

  // The copy is applied on the spoke; the work's status (Applied) comes back and is reported.
  await apply(http, authPolicy(ns, 'auth', 'gw'));
  await eventually(async () => get(spoke, AUTH_POLICIES, ns, 'auth'), { what: 'the copy on spoke-1', timeoutMs: 60_000 });
  await eventually(async () => (await hubStatus<{ clusters?: Record<string, { applied?: boolean }> }>(http, AUTH_POLICIES, ns, 'auth'))?.clusters?.[SPOKE]?.applied === true, {
    what: 'the hub to show the copy applied on spoke-1',
    timeoutMs: 60_000,
  });
  await eventually(() => Promise.resolve(running.idle()), { what: 'the hub to settle', timeoutMs: 30_000 });
  const before = value(await scrapeLoop(), 'policysync_feedback_latency_seconds_count') ?? 0;

  // The spoke's controller judges the copy: its status reaches the hub annotation, and that is timed.
  await writeSpokeStatus(spoke, AUTH_POLICIES, ns, 'auth', 'enforced by the test');
  await eventually(async () => (await hubStatus<{ summary?: { enforced?: number } }>(http, AUTH_POLICIES, ns, 'auth'))?.summary?.enforced === 1, {
    what: 'the hub to show the copy enforced',
    timeoutMs: 60_000,
  });
  const timed = await until('the feedback to be timed', (t) => {
    const count = value(t, 'policysync_feedback_latency_seconds_count') ?? 0;
    return count > before ? count : undefined;
  });
  assert.ok(timed > before);
  const inf = value(last, 'policysync_feedback_latency_seconds_bucket', { le: '+Inf' });
  assert.equal(inf, timed, 'every observation lands in a bucket');
  assert.ok(value(last, 'policysync_feedback_latency_seconds_sum')! > 0);

  // Requests timed by verb, resource and code class: the works created, the annotations patched.
  // The copy's work is new (created); the spoke-config work of spoke-1 may be left by an earlier test of the
  // same sandbox (its name is fixed per cluster), and is then applied (a patch) instead.
  const workWrites = (verb: string): number => value(last, 'rest_client_request_duration_seconds_count', { verb, resource: 'manifestworks', code: '2xx' }) ?? 0;
  assert.ok(workWrites('create') >= 1, 'the copy\'s work created');
  assert.ok(workWrites('create') + workWrites('patch') >= 2, 'the copy and the spoke-config works written');
  assert.ok(value(last, 'rest_client_request_duration_seconds_count', { verb: 'patch', resource: 'authpolicies', code: '2xx' })! >= 1, 'the status annotations');
  const requestSeries = samples(last, 'rest_client_request_duration_seconds_count');
  for (const s of requestSeries) {
    assert.deepEqual(Object.keys(s.labels).sort(), ['code', 'resource', 'verb']);
    assert.ok(!Object.values(s.labels).some((v) => v.includes(ns) || v.includes(SPOKE)), `no namespace or name in ${JSON.stringify(s.labels)}`);
  }

  // spoke-1 leaves the placement: the copy goes, and once its report has stayed a witness for WITNESS_AFTER_WORKS_MS
  // (a copy the work agent left would show there), the spoke configuration and the age series with it. A copy an
  // earlier test of this sandbox left behind on spoke-1 (the agent's race: docs/reliability.md) is one this hub sees
  // lingering too: it keeps the witness through the grace and its mending, and the window starts again after that.
  // The first hub's Gateway (another controller's) stays, its Placement deciding clusters that are no ManagedClusters
  // (refused, so never settled): no doubt of this hub's, whose own Gateways alone say where its copies may be.
  await remove(http, authPolicy(ns, 'auth', 'gw'));
  await apply(http, placementDecision(ns, 'spoke', []));
  await until('the report age of spoke-1 to go', (t) => (samples(t, 'policysync_spoke_report_age_seconds').length === 0 ? true : undefined), LINGER_GRACE_MS + WITNESS_AFTER_WORKS_MS + 90_000);
});
