// The spoke report at scale, on the real plane (docs/design/tenancy.md#reports-are-evidence-not-orders): a real
// spoke agent on spoke-1 reports a namespace of many local AuthPolicies (50,000 with POLICY_SYNC_SCALE_LOCALS=50000;
// the suite runs 2,000 — the same condensed form: AuthPolicy's CRD validation makes each create cost, ~20 a second
// on a loaded 2-core machine; the unit tier builds and reads 50,000),
// the hub reads it back through the spoke-config work, refuses to place a copy over one of them (named in the
// report only by its hash) and places one whose name is free. Then what a heartbeat costs the hub: the
// spoke-config work, report and all, is not written again while the agent beats every second; only the small
// heartbeat work is.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { SPOKE_CONFIG_WORK_NAME, SPOKE_HEARTBEAT_WORK_NAME, readSpokeReport, spokeReportText } from '../../src/core/spoke/spokeconfig.ts';
import { occupantOf, reportedCount } from '../../src/core/spoke/reportquery.ts';
import type { PolicyStatus } from '../../src/core/status/policystatus.ts';
import { controllerLabelValue } from '../../src/core/works/manifestwork.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { collectionPath, RESOURCES } from '../../src/kube/resource.ts';
import { eventually } from '../../testkit/eventually.ts';
import { report } from '../../testkit/faults.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, list, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, spokeClients, startHub, startSpoke, testControllerName, uniqueName, type RunningHub, type RunningSpoke } from '../../testkit/hub.ts';
import { hubStatus } from '../../testkit/status.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';

const LOCALS = Number(process.env.POLICY_SYNC_SCALE_LOCALS ?? 2_000);
const SPOKE_CONFIG = { namespace: 'policy-sync-system', name: uniqueName('scale-config') };
const controllerName = testControllerName('scale');
const ns = uniqueName('scale');
const className = uniqueName('scale');
const KIND = 'authpolicies.kuadrant.io';
const HEARTBEAT_MS = 1_000;
const PURPOSES = ['auth', 'ratelimit', 'jwt', 'apikey', 'oidc'];

let sandbox: Sandbox;
let hub: KubeHttp;
let spoke1: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub | undefined;
let agent: RunningSpoke | undefined;

/** The i-th local AuthPolicy: names as teams write them; every 10th on a Gateway of the spoke's own, the rest on routes. */
function local(i: number): KubeObject {
  const name = `team-${i % 97}-svc-${Math.floor(i / 97)}-${PURPOSES[i % PURPOSES.length]}`;
  const onGateway = i % 10 === 0;
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { name, namespace: ns },
    spec: {
      targetRef: { group: 'gateway.networking.k8s.io', kind: onGateway ? 'Gateway' : 'HTTPRoute', name: onGateway ? `local-gw-${i % 4}` : `route-${i}` },
      rules: { authorization: { deny: { opa: { rego: 'allow = false' } } } },
    },
  };
}

/** Creates the locals on spoke-1 in parallel batches (POST, not apply: one write each, no managedFields merge). */
async function createLocals(count: number): Promise<number> {
  const started = performance.now();
  const parallel = 48;
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let i = next++; i < count; i = next++) await spoke1.request('POST', collectionPath(AUTH_POLICIES, ns), { body: local(i) });
    }),
  );
  return performance.now() - started;
}

async function spokeConfigWorks(): Promise<{ config?: KubeObject; heartbeat?: KubeObject }> {
  const works = await list(hub, RESOURCES.manifestWorks, 'spoke-1');
  const ours = works.filter((w) => w.metadata.labels?.['policysync.kuadrant.io/controller'] === controllerLabelValue(controllerName));
  return { config: ours.find((w) => w.metadata.name === SPOKE_CONFIG_WORK_NAME), heartbeat: ours.find((w) => w.metadata.name === SPOKE_HEARTBEAT_WORK_NAME) };
}

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value ?? {}));

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  spoke1 = spokes.get('spoke-1')!;
  for (const n of [SPOKE_CONFIG.namespace, ns]) await createNamespace(spoke1, n);
  await createNamespace(hub, ns);
  await apply(hub, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(hub, gateway(ns, 'gw', className, 'spoke-1'));
  await apply(hub, placementDecision(ns, 'spoke-1', ['spoke-1']));
  const createMs = await createLocals(LOCALS);
  report('spoke report at scale: locals created', { locals: LOCALS, createMs: Math.round(createMs) });
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG });
  agent = await startSpoke(sandbox.kubeConfig('spoke-1'), 'spoke-1', SPOKE_CONFIG, { reportHeartbeatMs: HEARTBEAT_MS });
});

after(async () => {
  await agent?.controller.stop();
  await controller?.stop();
  for (const w of await list(hub, RESOURCES.manifestWorks, undefined, `policysync.kuadrant.io/controller=${controllerLabelValue(controllerName)}`)) await remove(hub, w);
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }));
  await removeNamespace(hub, ns);
  // The namespace controller deletes the many locals in the background.
  await removeNamespace(spoke1, ns);
  for (const suffix of ['report', 'heartbeat']) await remove(spoke1, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: SPOKE_CONFIG.namespace, name: `${SPOKE_CONFIG.name}-${suffix}` } });
  for (const http of spokes.values()) http.destroy();
  hub.destroy();
});

test(`a real agent reports ${LOCALS} local objects of a kind; the hub refuses a copy over one of them and places one whose name is free`, async () => {
  const started = performance.now();
  const work = await eventually(async () => {
    const { config } = await spokeConfigWorks();
    const r = config && readSpokeReport(config);
    return r && Object.hasOwn(r.objects, KIND) && reportedCount(r) >= LOCALS ? config : undefined;
  }, { what: `the hub to read spoke-1's report of ${LOCALS} AuthPolicies`, timeoutMs: 180_000, context: () => workAgentLogs(sandbox) });
  const text = spokeReportText(work)!;
  const read = readSpokeReport(work)!;
  assert.ok(read.condensed?.[KIND]?.[ns], 'the namespace is condensed');
  report('spoke report at scale: on the hub', { locals: LOCALS, reportBytes: Buffer.byteLength(text), configWorkBytes: bytesOf(work), bytesPerObject: (Buffer.byteLength(text) / LOCALS).toFixed(2), sinceAgentStartMs: Math.round(performance.now() - started) });

  // A hub policy named like a local one that the report names only in its hashed set (it targets a route).
  const taken = local(LOCALS - 1);
  assert.deepEqual(occupantOf(read, KIND, ns, taken.metadata.name), { state: 'local', hashed: true });
  const before = await get(spoke1, AUTH_POLICIES, ns, taken.metadata.name);
  await apply(hub, authPolicy(ns, taken.metadata.name, 'gw'));
  await apply(hub, authPolicy(ns, 'hub-auth', 'gw'));
  await eventually(() => get(spoke1, AUTH_POLICIES, ns, 'hub-auth'), { what: 'the copy whose name is free placed on spoke-1', timeoutMs: 60_000, context: () => workAgentLogs(sandbox) });
  let last: PolicyStatus | undefined;
  const status = await eventually(async () => {
    last = await hubStatus(hub, AUTH_POLICIES, ns, taken.metadata.name);
    return last?.clusters?.['spoke-1']?.state === 'Failed' ? last : undefined;
  }, { what: 'spoke-1 refused for the taken name', timeoutMs: 60_000, context: () => JSON.stringify(last) });
  assert.equal(status.clusters?.['spoke-1']?.reason, 'Conflicted');
  assert.match(status.clusters?.['spoke-1']?.message ?? '', /is the cluster's own policy, not a copy of this one/);
  const after = await get(spoke1, AUTH_POLICIES, ns, taken.metadata.name);
  assert.equal(after?.metadata.uid, before?.metadata.uid);
  assert.equal(after?.metadata.resourceVersion, before?.metadata.resourceVersion, 'the local policy is not written');
  const works = (await list(hub, RESOURCES.manifestWorks, 'spoke-1')).filter((w) => w.metadata.annotations?.['policysync.kuadrant.io/source-ref']?.includes(`"${taken.metadata.name}"`));
  assert.deepEqual(works, [], 'no work for the taken name');
});

test('a heartbeat costs the hub one small status write of the heartbeat work; the spoke-config work and its report are not written again', async (t) => {
  // The report settled (the copy placed above is in it): watch both works over a dozen heartbeats.
  await eventually(async () => {
    const { config } = await spokeConfigWorks();
    const r = config && readSpokeReport(config);
    return r && occupantOf(r, KIND, ns, 'hub-auth').state === 'synced';
  }, { what: 'the report to list the placed copy', timeoutMs: 60_000 });
  await new Promise((r) => setTimeout(r, 3 * HEARTBEAT_MS));
  const seen = { config: new Map<string, number>(), heartbeat: new Map<string, number>() };
  const { heartbeat: sample } = await spokeConfigWorks();
  const { managedFields, ...meta } = sample?.metadata ?? {};
  t.diagnostic(`the heartbeat work: metadata ${bytesOf(meta)} bytes, managedFields ${bytesOf(managedFields)}, spec ${bytesOf(sample?.spec)}, status ${bytesOf(sample?.status)}`);
  const until = Date.now() + 12 * HEARTBEAT_MS;
  while (Date.now() < until) {
    const { config, heartbeat } = await spokeConfigWorks();
    if (config?.metadata.resourceVersion) seen.config.set(config.metadata.resourceVersion, bytesOf(config));
    if (heartbeat?.metadata.resourceVersion) seen.heartbeat.set(heartbeat.metadata.resourceVersion, bytesOf(heartbeat));
    await new Promise((r) => setTimeout(r, HEARTBEAT_MS / 5));
  }
  const configWrites = seen.config.size - 1;
  const heartbeatWrites = seen.heartbeat.size - 1;
  const heartbeatBytes = Math.max(...seen.heartbeat.values());
  const configBytes = Math.max(...seen.config.values());
  t.diagnostic(`over 12 heartbeats: the spoke-config work written ${configWrites} times (${configBytes} bytes), the heartbeat work ${heartbeatWrites} times (${heartbeatBytes} bytes each)`);
  report('spoke report at scale: hub bytes per heartbeat', { locals: LOCALS, configWrites, configWorkBytes: configBytes, heartbeatWrites, heartbeatWorkBytes: heartbeatBytes, beforeBytesPerHeartbeat: configBytes, afterBytesPerHeartbeat: heartbeatBytes });
  assert.equal(configWrites, 0, 'no heartbeat rewrites the report');
  // Under load the work agent's status sync may fold a few heartbeats together: some must reach the hub.
  assert.ok(heartbeatWrites >= 3, `${heartbeatWrites} heartbeats reached the hub`);
  assert.ok(heartbeatBytes < 8 * 1024, `${heartbeatBytes} bytes a heartbeat`);
});
