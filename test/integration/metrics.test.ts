// Metrics and probes of the hub controller against the real hub apiserver (no spokes, so works never
// get a status): /readyz before and after the caches sync, and the controller-runtime, workqueue and
// policysync_* series on /metrics for a world of 2 AuthPolicies placed on 2 clusters.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { HubController } from '../../src/hub/controller.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { ProbeServer } from '../../src/runtime/probeserver.ts';
import { eventually } from '../../testkit/eventually.ts';
import { apply, authPolicy, createNamespace, gateway, gatewayClass, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { ourWorks } from '../../testkit/works.ts';
import { hubHttp, testControllerName, testHubOptions, uniqueName } from '../../testkit/hub.ts';
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
      last = await scrape();
      const settled =
        controller!.idle() &&
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
  assert.equal(value(text, 'controller_runtime_active_workers', { controller: 'policy' }), 0);
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
