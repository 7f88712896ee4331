// Fault l (docs/reliability.md): a spoke whose clock is an hour ahead or an hour behind. The spoke agent's
// report carries a heartbeat in the spoke's clock; the hub judges freshness on its own clock (when it saw the
// report change), never on that heartbeat. On the real plane: the real spoke agent on spoke-1, its wall clock an
// hour off, reports a real local AuthPolicy covering the copy; then the agent dies (stopped):
//  - behind by an hour: the report still counts while fresh on the hub's clock — the local policy it names
//    keeps the copy off the cluster (judged on the spoke's clock it was stale on arrival: overrides ignored);
//  - ahead by an hour: once the report stops changing it goes stale after the hub's stale limit, and the hub
//    says the cluster awaits its report (judged on the spoke's clock it would have stayed fresh for an hour).
// A stale report places nothing (no evidence is not evidence of absence): the copy the local policy kept off
// stays off, and the cluster is Pending, AwaitingSpokeReport, naming since when the report is stale.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { controllerLabelValue } from '../../src/core/works/manifestwork.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { readSpokeReport, SPOKE_CONFIG_WORK_NAME, SPOKE_HEARTBEAT_WORK_NAME, spokeHeartbeatText } from '../../src/core/spoke/spokeconfig.ts';
import { spokeReportName } from '../../src/core/spoke/spokereport.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import type { PolicyStatus } from '../../src/core/status/policystatus.ts';
import { eventually } from '../../testkit/eventually.ts';
import { hubStatus } from '../../testkit/status.ts';
import { report, timed } from '../../testkit/faults.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, list, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, releaseSpokes, spokeClients, startHub, startSpoke, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';
import { CapturedLog } from '../../testkit/capturedlog.ts';

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
/** The hub's log: what it saw of spoke-1's reports and heartbeats, for a failure message. */
const hubLog = new CapturedLog();
const reportTrail = (): string =>
  hubLog.lines
    .filter((l) => l.includes('"spoke agent report') || l.includes('"spoke agent heartbeat'))
    .slice(-30)
    .join('');

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
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG, spokeReportStaleAfterMs: STALE_MS, logger: hubLog.logger('debug') });
  await apply(hub, authPolicy(ns, POLICY, 'gw'));
  // The first copy needs a report that shows its name free: an agent in step with the hub, stopped once it is placed.
  const agent = await startSpoke(sandbox.kubeConfig('spoke-1'), 'spoke-1', SPOKE_CONFIG, { reportHeartbeatMs: 1_000 });
  try {
    await eventually(() => copy(), { what: 'the copy on spoke-1', context: () => workAgentLogs(sandbox) });
  } finally {
    await agent.stop();
  }
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

/** The hub says spoke-1 awaits its agent's report (it went stale on the hub's clock). */
async function awaitingStaleReport(): Promise<void> {
  let last: string | undefined;
  await eventually(async () => {
    const entry = (await hubStatus<PolicyStatus>(hub, AUTH_POLICIES, ns, POLICY))?.clusters?.['spoke-1'];
    last = JSON.stringify(entry);
    return (entry?.reason === 'AwaitingSpokeReport' && entry.message.startsWith("the spoke agent's report is stale since")) || undefined;
  }, { what: 'spoke-1 awaiting its report, stale on the hub clock', timeoutMs: STALE_MS + 30_000, context: () => `last seen: ${last}\n${workAgentLogs(sandbox)}` });
}

/**
 * spoke-1's own AuthPolicy `localName` on the whole Gateway, reported by the real agent running with its wall
 * clock `skewMs` off until the hub has read a report stamped with that clock; then the agent dies (stopped).
 */
async function reportedBySkewedAgent(skewMs: number, localName: string): Promise<void> {
  await apply(spokes.get('spoke-1')!, authPolicy(ns, localName, 'gw'));
  const agent = await startSpoke(sandbox.kubeConfig('spoke-1'), 'spoke-1', SPOKE_CONFIG, { reportHeartbeatMs: 1_000, now: () => Date.now() + skewMs });
  const ourWork = async (name: string) =>
    (await list(hub, RESOURCES.manifestWorks, 'spoke-1')).find((w) => w.metadata.name === name && w.metadata.labels?.['policysync.kuadrant.io/controller'] === controllerLabelValue(controllerName));
  const reportOnHub = async () => {
    const work = await ourWork(SPOKE_CONFIG_WORK_NAME);
    return work && readSpokeReport(work);
  };
  const heartbeatOnHub = async () => {
    const work = await ourWork(SPOKE_HEARTBEAT_WORK_NAME);
    return work && spokeHeartbeatText(work, SPOKE_CONFIG);
  };
  try {
    await eventually(async () => {
      const report = await reportOnHub();
      const heartbeat = report ? Date.parse(report.heartbeat) : NaN;
      const stamped = Math.abs(heartbeat - (Date.now() + skewMs)) < 60_000;
      return (stamped && report?.objects['authpolicies.kuadrant.io']?.[ns]?.some((o) => o.name === localName)) || undefined;
    }, { what: `the hub to read the agent's report of ${localName}, stamped an hour off`, context: () => workAgentLogs(sandbox) });
    await eventually(async () => (await hubStatus<PolicyStatus>(hub, AUTH_POLICIES, ns, POLICY))?.clusters?.['spoke-1']?.state === 'Overridden' || undefined, {
      what: 'spoke-1 Overridden: the local policy counts',
      context: () => workAgentLogs(sandbox),
    });
    await eventually(async () => (await copy()) === undefined || undefined, { what: 'the copy withdrawn: the local policy counts', context: () => workAgentLogs(sandbox) });
    // The agent dies right after the hub has seen a new heartbeat, so that the report's staleness runs from its death:
    // the work agent's feedback can stall for seconds on a loaded machine (CI saw the report stale 29 ms after it).
    const seen = await heartbeatOnHub();
    await eventually(async () => ((await heartbeatOnHub()) ?? seen) !== seen || undefined, { what: 'a new heartbeat on the hub before the agent dies', intervalMs: 100, context: () => workAgentLogs(sandbox) });
  } finally {
    await agent.stop();
  }
  // Gone with its agent's report, not with the policy: the local policy stays (the agent died, not the policy).
  assert.ok(await get(spokes.get('spoke-1')!, AUTH_POLICIES, ns, localName));
}

test('l. a spoke clock an hour behind: its report still counts while fresh on the hub clock, then stops counting', async () => {
  const withdrawnMs = await timed(() => reportedBySkewedAgent(-HOUR_MS, 'local-behind'));
  const staleMs = await timed(() => awaitingStaleReport());
  assert.ok(staleMs >= STALE_MS / 2, `the report counted for a while (${staleMs} ms) before it went stale; what the hub saw of spoke-1's reports and heartbeats:\n${reportTrail()}`);
  assert.equal(await copy(), undefined, 'the stale report places nothing: the copy the local policy kept off stays off');
  report('l (spoke clock an hour behind)', { withdrawnMs, staleMs });
  await remove(spokes.get('spoke-1')!, authPolicy(ns, 'local-behind', 'gw'));
});

test('l. a spoke clock an hour ahead: a report that stops changing goes stale after the hub\'s limit, not an hour later', async () => {
  await reportedBySkewedAgent(HOUR_MS, 'local-ahead');
  const staleMs = await timed(() => awaitingStaleReport());
  assert.equal(await copy(), undefined, 'the stale report places nothing');
  report('l (spoke clock an hour ahead)', { staleMs, staleAfterMs: STALE_MS });
});
