// Fault l (docs/reliability.md): a spoke whose clock is an hour ahead or an hour behind. The spoke agent's
// report carries a heartbeat in the spoke's clock; the hub judges freshness on its own clock (when it saw the
// report change), never on that heartbeat. Played on the real plane by writing the report ConfigMap on spoke-1
// exactly as an agent with a skewed clock would (core/spokereport.ts builds it), then no more (the agent died):
//  - behind by an hour: the report still counts while fresh on the hub's clock — the local policy it names
//    keeps the copy off the cluster (judged on the spoke's clock it was stale on arrival: overrides ignored);
//  - ahead by an hour: once the report stops changing it goes stale after the hub's stale limit and the copy is
//    placed again (judged on the spoke's clock it would have stayed fresh for an hour: copies withdrawn).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../hack/sandbox/sandbox.ts';
import { controllerLabelValue } from '../../src/core/manifestwork.ts';
import type { KubeObject } from '../../src/core/objects.ts';
import { readSpokeReport, SPOKE_CONFIG_WORK_NAME } from '../../src/core/spokeconfig.ts';
import { buildSpokeReport, serializeSpokeReport, spokeReportName, SPOKE_REPORT_KEY } from '../../src/core/spokereport.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { serverSideApply } from '../../src/kube/writes.ts';
import { eventually } from '../support/eventually.ts';
import { report, timed } from '../support/faults.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, list, paramsConfigMap, placementDecision, remove, removeNamespace } from '../support/fixtures.ts';
import { hubHttp, releaseSpokes, spokeClients, startHub, testControllerName, uniqueName, type RunningHub } from '../support/hub.ts';
import { testSandbox, workAgentLogs } from '../support/sandbox.ts';

const SPOKE_CONFIG = { namespace: 'policy-sync-system', name: uniqueName('spoke-config') };
const controllerName = testControllerName('skew');
const ns = uniqueName('faults-skew');
const className = uniqueName('skew');
const POLICY = 'auth';
const STALE_MS = 8_000;
const HOUR_MS = 3_600_000;

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub;

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  for (const spoke of spokes.values()) {
    await createNamespace(spoke, SPOKE_CONFIG.namespace);
    await createNamespace(spoke, ns);
  }
  await createNamespace(hub, ns);
  await apply(hub, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(hub, gateway(ns, 'gw', className, 'spoke-1'));
  await apply(hub, placementDecision(ns, 'spoke-1', ['spoke-1']));
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG, spokeReportStaleAfterMs: STALE_MS });
  await apply(hub, authPolicy(ns, POLICY, 'gw'));
  await eventually(() => copy(), { what: 'the copy on spoke-1', context: () => workAgentLogs(sandbox) });
});

after(async () => {
  await controller.stop();
  for (const w of await list(hub, RESOURCES.manifestWorks, undefined, `policysync.kuadrant.io/controller=${controllerLabelValue(controllerName)}`)) await remove(hub, w);
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }));
  await removeNamespace(hub, ns);
  await remove(spokes.get('spoke-1')!, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: SPOKE_CONFIG.namespace, name: spokeReportName(SPOKE_CONFIG.name) } });
  await releaseSpokes(spokes, ns);
  hub.destroy();
});

function copy(): Promise<KubeObject | undefined> {
  return get(spokes.get('spoke-1')!, AUTH_POLICIES, ns, POLICY);
}

/** The report an agent on spoke-1 with its clock `skewMs` off would write: one local policy on the whole Gateway. */
async function writeSkewedReport(skewMs: number, localName: string): Promise<string> {
  const local = authPolicy(ns, localName, 'gw');
  const { report: built } = buildSpokeReport(new Map([['authpolicies.kuadrant.io', [local]]]), new Date(Date.now() + skewMs));
  await serverSideApply(spokes.get('spoke-1')!, RESOURCES.configMaps, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: spokeReportName(SPOKE_CONFIG.name), namespace: SPOKE_CONFIG.namespace },
    data: { [SPOKE_REPORT_KEY]: serializeSpokeReport(built) },
  }, { fieldManager: 'policy-sync-spoke', force: true });
  return built.heartbeat;
}

/** The hub has read the report with this heartbeat back through the spoke-config work's feedback. */
async function hubRead(heartbeat: string): Promise<void> {
  await eventually(async () => {
    const work = (await list(hub, RESOURCES.manifestWorks, 'spoke-1')).find((w) => w.metadata.name === SPOKE_CONFIG_WORK_NAME && w.metadata.labels?.['policysync.kuadrant.io/controller'] === controllerLabelValue(controllerName));
    return (work && readSpokeReport(work)?.heartbeat === heartbeat) || undefined;
  }, { what: `the hub to read the report of ${heartbeat}`, context: () => workAgentLogs(sandbox) });
}

test('l. a spoke clock an hour behind: its report still counts while fresh on the hub clock, then stops counting', async () => {
  const heartbeat = await writeSkewedReport(-HOUR_MS, 'local-behind');
  await hubRead(heartbeat);
  const withdrawnMs = await timed(() => eventually(async () => (await copy()) === undefined || undefined, { what: 'the copy withdrawn: the local policy counts', context: () => workAgentLogs(sandbox) }));
  const backMs = await timed(() => eventually(() => copy(), { what: 'the copy back once the report is stale on the hub clock', timeoutMs: STALE_MS + 30_000, context: () => workAgentLogs(sandbox) }));
  assert.ok(backMs >= STALE_MS / 2, `the report counted for a while (${backMs} ms) before it went stale`);
  report('l (spoke clock an hour behind)', { withdrawnMs, backMs });
});

test('l. a spoke clock an hour ahead: a report that stops changing goes stale after the hub\'s limit, not an hour later', async () => {
  const heartbeat = await writeSkewedReport(HOUR_MS, 'local-ahead');
  await hubRead(heartbeat);
  await eventually(async () => (await copy()) === undefined || undefined, { what: 'the copy withdrawn: the local policy counts', context: () => workAgentLogs(sandbox) });
  const backMs = await timed(() => eventually(() => copy(), { what: 'the copy back once the report is stale on the hub clock', timeoutMs: STALE_MS + 30_000, context: () => workAgentLogs(sandbox) }));
  report('l (spoke clock an hour ahead)', { backMs, staleAfterMs: STALE_MS });
});
