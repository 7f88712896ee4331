// Two hub replicas as real processes (`policy-sync hub --leader-elect`) on the real hub apiserver:
// the standby writes nothing; SIGKILL of the leader hands over within lease duration + renew deadline
// and a change made in the gap converges; SIGTERM during a burst of reconciles exits cleanly within the
// grace period and releases the lease.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { controllerLabelValue } from '../../src/core/works/manifestwork.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, objectPath } from '../../src/kube/resource.ts';
import { eventually } from '../../testkit/eventually.ts';
import { apply, authPolicy, createNamespace, gateway, gatewayClass, list, paramsConfigMap, patchData, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, testControllerName, uniqueName } from '../../testkit/hub.ts';
import { samples } from '../../testkit/metrics.ts';
import { electionArgs, isLeader as replicaLeads, logOf, metricsOf, startReplica as startReplicaProcess, writesOf, type Replica } from '../../testkit/replicas.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

const controllerName = testControllerName('failover');
const ns = uniqueName('failover');
const [c1, c2] = [`${ns}-c1`, `${ns}-c2`];
const className = uniqueName('class');
const LEASE = 'policy-sync-hub-failover';
const TIMING = { leaseMs: 4_000, renewMs: 3_000, retryMs: 500 };
const GRACE_MS = 10_000;

let sandbox: Sandbox;
let http: KubeHttp;
const replicas: Replica[] = [];

function startReplica(name: string): Promise<Replica> {
  return startReplicaProcess(sandbox, name, controllerName, electionArgs({ namespace: ns, name: LEASE }, TIMING)).then((r) => {
    replicas.push(r);
    return r;
  });
}

function isLeader(r: Replica): Promise<boolean> {
  return replicaLeads(r, LEASE);
}

async function lease(): Promise<{ holderIdentity?: string; leaseTransitions?: number } | undefined> {
  const l = await http.request<KubeObject>('GET', objectPath(RESOURCES.leases, ns, LEASE)).catch(() => undefined);
  return l?.spec;
}

async function regos(name: string): Promise<string[]> {
  const works = await list(http, RESOURCES.manifestWorks, undefined, `policysync.kuadrant.io/controller=${controllerLabelValue(controllerName)}`);
  return works
    .filter((w) => w.metadata.annotations?.['policysync.kuadrant.io/source-ref']?.includes(`"name":"${name}"`))
    .map((w) => {
      const copy = (w.spec as { workload: { manifests: { spec: { rules: { authorization: { deny: { opa: { rego: string } } } } } }[] } }).workload.manifests[0]!;
      return copy.spec.rules.authorization.deny.opa.rego;
    });
}

before(async () => {
  sandbox = await testSandbox();
  http = hubHttp(sandbox);
  for (const n of [ns, c1, c2]) await createNamespace(http, n);
  await apply(http, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  await apply(http, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(http, gateway(ns, 'gw', className, 'both'));
  await apply(http, placementDecision(ns, 'both', [c1, c2]));
  await apply(http, authPolicy(ns, 'p1', 'gw'));
});

after(async () => {
  for (const r of replicas) r.child.kill('SIGKILL');
  for (const w of await list(http, RESOURCES.manifestWorks, undefined, `policysync.kuadrant.io/controller=${controllerLabelValue(controllerName)}`)) await remove(http, w);
  await remove(http, gatewayClass(className, { namespace: ns, name: 'params' }));
  for (const n of [ns, c1, c2]) await removeNamespace(http, n);
  http.destroy();
});

let leader: Replica;
let standby: Replica;

test('one replica leads and syncs; the standby keeps warm caches and writes nothing', async () => {
  leader = await startReplica('replica-a');
  await eventually(() => isLeader(leader), { what: 'replica-a to lead', timeoutMs: 60_000, context: () => logOf(leader) });
  standby = await startReplica('replica-b');
  await eventually(async () => (await fetch(`http://127.0.0.1:${standby.port}/readyz`)).ok, { what: 'replica-b caches synced', timeoutMs: 60_000, context: () => logOf(standby) });
  await eventually(async () => (await regos('p1')).length === 2, { what: 'the leader to place p1 on both clusters' });
  // The standby has seen what it would act on — its GatewayClass reconciler ran (read-only) and p1's key
  // waits in its policy queue, which no worker drains on a standby — and has written nothing.
  await eventually(
    async () => {
      const text = await metricsOf(standby);
      const classReconciles = samples(text, 'controller_runtime_reconcile_total').filter((x) => x.labels.controller === 'gatewayclass').reduce((n, x) => n + x.value, 0);
      const waiting = samples(text, 'workqueue_depth').find((x) => x.labels.name === 'policy')?.value ?? 0;
      return classReconciles >= 1 && waiting >= 1;
    },
    { what: 'the standby to have the class reconciled and p1 queued', context: () => logOf(standby) },
  );
  assert.equal(await isLeader(standby), false);
  assert.equal(await writesOf(standby), 0, 'the standby wrote nothing');
  assert.ok((await writesOf(leader)) >= 2, 'the leader wrote the works');
});

test('SIGKILL of the leader: the standby takes over within lease duration + renew deadline and converges a change made in the gap', async (t) => {
  leader.child.kill('SIGKILL');
  const killed = performance.now();
  await patchData(http, authPolicy(ns, 'p1', 'gw'), { spec: { rules: { authorization: { deny: { opa: { rego: 'allow = input.changed' } } } } } });
  const writesBefore = await writesOf(standby);
  assert.equal(writesBefore, 0, 'no write from the standby before it leads');
  await eventually(() => isLeader(standby), { what: 'replica-b to take over', intervalMs: 50, timeoutMs: 30_000, context: () => logOf(standby) });
  const takeover = performance.now() - killed;
  t.diagnostic(`takeover ${takeover.toFixed(0)} ms after SIGKILL (lease ${TIMING.leaseMs} ms, renew deadline ${TIMING.renewMs} ms)`);
  assert.ok(takeover <= TIMING.leaseMs + TIMING.renewMs, `took over after ${takeover.toFixed(0)} ms`);
  await eventually(async () => (await regos('p1')).every((r) => r === 'allow = input.changed') || undefined, { what: 'the change made in the gap on both works' });
  assert.equal((await lease())?.leaseTransitions, 1);
});

test('SIGTERM during a burst of reconciles: clean exit within the grace period, lease released', async (t) => {
  for (let i = 0; i < 40; i++) await apply(http, authPolicy(ns, `burst-${i}`, 'gw'));
  await eventually(async () => (await regos('burst-0')).length > 0 || (await regos('burst-39')).length > 0, { what: 'the burst to be under way', intervalMs: 20 });
  const signalled = performance.now();
  standby.child.kill('SIGTERM');
  const { code, signal } = await standby.exit;
  const took = performance.now() - signalled;
  assert.equal(signal, null, logOf(standby));
  assert.equal(code, 0, logOf(standby));
  t.diagnostic(`exited ${took.toFixed(0)} ms after SIGTERM`);
  assert.ok(took < GRACE_MS, `exited after ${took.toFixed(0)} ms`);
  assert.equal((await lease())?.holderIdentity, '', 'the lease was released');
});
