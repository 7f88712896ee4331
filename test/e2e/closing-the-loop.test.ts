// Closing the loop on the full plane: hub controller, both spoke agents (following the configuration the
// hub places on each spoke, reporting local policies back through it) and the real OCM work agents. Spoke
// status comes back to the hub annotation; a local policy on a spoke overrides the synced one there: the hub
// keeps the copy off that cluster and says so, and an agent that stops reporting withdraws nothing, nor is a
// copy it kept off placed again while its report is stale.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { eventually } from '../../testkit/eventually.ts';
import {
  AUTH_POLICIES,
  apply,
  authPolicy,
  createNamespace,
  gateway,
  gatewayClass,
  get,
  list,
  paramsConfigMap,
  placementDecision,
  remove,
  removeNamespace,
} from '../../testkit/fixtures.ts';
import { hubStatus, writeSpokeStatus } from '../../testkit/status.ts';
import { hubHttp, startHub, startSpoke, testControllerName, uniqueName, type RunningHub, type RunningSpoke, releaseSpokes, spokeClients } from '../../testkit/hub.ts';
import { metricsText, samples } from '../../testkit/metrics.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';
import { AuditCursor, describeWrite } from '../../testkit/audit.ts';
import { controllerLabelValue } from '../../src/core/works/manifestwork.ts';
import { readSpokeReport, SPOKE_CONFIG_WORK_NAME } from '../../src/core/spoke/spokeconfig.ts';
import { localPoliciesIn } from '../../src/core/spoke/reportquery.ts';

const SPOKE_CONFIG = { namespace: 'policy-sync-system', name: uniqueName('spoke-config') };
const controllerName = testControllerName('loop');
const ns = uniqueName('loop');
const className = uniqueName('class');
const POLICY = 'auth';
/** Short, so that the test of a stopped agent waits seconds, not minutes. */
const REPORT_HEARTBEAT_MS = 1_000;
const REPORT_STALE_MS = 5_000;

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub;
let agents: RunningSpoke[] = [];

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  for (const spoke of spokes.values()) {
    await createNamespace(spoke, SPOKE_CONFIG.namespace);
    await createNamespace(spoke, ns);
    const gw = gateway(ns, 'gw', 'spoke-gateways');
    (gw.spec as { listeners: unknown[] }).listeners.push({ name: 'https', port: 443, protocol: 'HTTPS' });
    await apply(spoke, gw);
  }
  await createNamespace(hub, ns);
  await apply(hub, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(hub, gateway(ns, 'gw', className, 'all-spokes'));
  await apply(hub, placementDecision(ns, 'all-spokes', sandbox.spokes.map((s) => s.name)));
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG, spokeReportStaleAfterMs: REPORT_STALE_MS });
  agents = await Promise.all(sandbox.spokes.map((s) => startAgent(s.name)));
});

after(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await remove(hub, authPolicy(ns, POLICY, 'gw'));
  await eventually(async () => (await get(spokes.get('spoke-1')!, AUTH_POLICIES, ns, POLICY)) === undefined, { what: 'the copy to go' }).catch(() => undefined);
  await controller.stop();
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }));
  await removeNamespace(hub, ns);
  await releaseSpokes(spokes, ns);
  hub.destroy();
});

const agentLogs = (): string => workAgentLogs(sandbox, 10);

function startAgent(cluster: string): Promise<RunningSpoke> {
  return startSpoke(sandbox.kubeConfig(cluster), cluster, SPOKE_CONFIG, { reportHeartbeatMs: REPORT_HEARTBEAT_MS });
}

async function copyOn(cluster: string): Promise<KubeObject | undefined> {
  return get(spokes.get(cluster)!, AUTH_POLICIES, ns, POLICY);
}

/**
 * The copy withdrawn from a cluster, for good: the hub's work for it gone, then the copy. OCM's work agent can
 * apply a terminating work once more from its cache after its finalizer removed the copy (CI saw the copy
 * re-created 270 ms after it went); that copy's owner, the AppliedManifestWork, is gone with the work, and the
 * spoke's garbage collector removes it, as on any cluster.
 */
async function withdrawnFrom(cluster: string): Promise<void> {
  await eventually(
    async () => {
      const works = await list(hub, RESOURCES.manifestWorks, cluster);
      const ours = works.some((w) => w.metadata.annotations?.['policysync.kuadrant.io/source-ref']?.includes(`"namespace":"${ns}"`));
      return !ours && (await copyOn(cluster)) === undefined;
    },
    { what: `the copy withdrawn from ${cluster}: its work gone from the hub, the copy from the spoke`, context: agentLogs },
  );
}

interface HubStatus {
  summary: Record<string, number | boolean>;
  clusters: Record<string, { state: string; enforced: string; reason: string; message: string; upToDate: boolean; applied: boolean; available: boolean; revision?: number; overriddenBy?: string[] }>;
}

async function hubStatusWhere(what: string, ok: (s: HubStatus) => boolean): Promise<HubStatus> {
  let last: HubStatus | undefined;
  return eventually(async () => {
    last = await hubStatus<HubStatus>(hub, AUTH_POLICIES, ns, POLICY);
    return last && ok(last) ? last : undefined;
  }, { what: `hub status: ${what}`, timeoutMs: 60_000, intervalMs: 10, context: () => `last seen: ${JSON.stringify(last)}\n${agentLogs()}` });
}

function enforcedEntry(message: string): HubStatus['clusters'][string] {
  // Revision 1: the hub policy's generation, as created (and created again) here.
  return { state: 'Enforced', applied: true, available: true, enforced: 'True', reason: 'Enforced', message, upToDate: true, revision: 1 };
}

test('the spoke agents follow the kinds the hub places on each spoke', async () => {
  for (const agent of agents) {
    await eventually(() => Promise.resolve(agent.controller.watchedKinds().join() === 'authpolicies.v1.kuadrant.io'), {
      what: `${agent.cluster}'s agent to watch authpolicies`,
      context: agentLogs,
    });
  }
});

test('spoke status flows back: 2 of 2 enforced', async () => {
  await apply(hub, authPolicy(ns, POLICY, 'gw'));
  for (const [cluster, spoke] of spokes) {
    await eventually(async () => get(spoke, AUTH_POLICIES, ns, POLICY), { what: `the copy on ${cluster}`, context: agentLogs });
    await writeSpokeStatus(spokes.get(cluster)!, AUTH_POLICIES, ns, POLICY, 'AuthPolicy has been successfully enforced');
  }
  const status = await hubStatusWhere('2 of 2 enforced', (s) => s.summary.enforced === 2 && Object.values(s.clusters).every((c) => c.upToDate));
  assert.deepEqual(status, {
    summary: { clusters: 2, applied: 2, enforced: 2, overridden: 0, pending: 0, failed: 0 },
    clusters: { 'spoke-1': enforcedEntry('AuthPolicy has been successfully enforced'), 'spoke-2': enforcedEntry('AuthPolicy has been successfully enforced') },
  });
});

const OVERRIDDEN_ON_SPOKE_2: HubStatus = {
  summary: { clusters: 2, applied: 1, enforced: 1, overridden: 1, pending: 0, failed: 0 },
  clusters: {
    'spoke-1': enforcedEntry('AuthPolicy has been successfully enforced'),
    'spoke-2': {
      state: 'Overridden', applied: false, available: false, enforced: 'False', reason: 'Overridden',
      message: `AuthPolicy is overridden by [${ns}/local-auth]`, upToDate: true, overriddenBy: [`${ns}/local-auth`],
    },
  },
};

/** The copy is back on spoke-2: its controller (played here) reports on the new copy; the hub says enforced on both. */
async function restoredOnSpoke2(): Promise<void> {
  await eventually(() => copyOn('spoke-2'), { what: 'the copy back on spoke-2', context: agentLogs });
  await writeSpokeStatus(spokes.get('spoke-2')!, AUTH_POLICIES, ns, POLICY, 'AuthPolicy has been successfully enforced');
  const restored = await hubStatusWhere('spoke-2 enforced again', (s) => s.summary.enforced === 2 && Object.values(s.clusters).every((c) => c.upToDate));
  assert.deepEqual(restored, {
    summary: { clusters: 2, applied: 2, enforced: 2, overridden: 0, pending: 0, failed: 0 },
    clusters: { 'spoke-1': enforcedEntry('AuthPolicy has been successfully enforced'), 'spoke-2': enforcedEntry('AuthPolicy has been successfully enforced') },
  });
}

test('a local policy on spoke-2 overrides the synced one there, and only there: the copy is withdrawn; deleting the local one restores it', async () => {
  const spoke2 = spokes.get('spoke-2')!;
  const local: KubeObject = authPolicy(ns, 'local-auth', 'gw');
  await apply(spoke2, local);
  const overridden = await hubStatusWhere('spoke-2 overridden', (s) => s.clusters['spoke-2']?.state === 'Overridden');
  assert.deepEqual(overridden, OVERRIDDEN_ON_SPOKE_2);
  await withdrawnFrom('spoke-2');
  assert.ok(await copyOn('spoke-1'), 'spoke-1 keeps its copy');
  const localAfter = (await get(spoke2, AUTH_POLICIES, ns, 'local-auth'))!;
  assert.equal(localAfter.metadata.annotations, undefined, 'the local policy is never modified');
  assert.equal(localAfter.status, undefined, 'the local policy is never modified');

  await remove(spoke2, local);
  await restoredOnSpoke2();
});

test('a local policy created before the hub policy: the copy is never placed there', async () => {
  const spoke2 = spokes.get('spoke-2')!;
  await remove(hub, authPolicy(ns, POLICY, 'gw'));
  await eventually(async () => (await copyOn('spoke-1')) === undefined && (await copyOn('spoke-2')) === undefined, { what: 'both copies to go', context: agentLogs });
  const local = authPolicy(ns, 'local-auth', 'gw');
  await apply(spoke2, local);
  // The agent's report has reached the hub (the spoke-config work's feedback) before the hub policy exists.
  await eventually(async () => {
    const work = (await list(hub, RESOURCES.manifestWorks, 'spoke-2')).find((w) => w.metadata.name === SPOKE_CONFIG_WORK_NAME && w.metadata.labels?.['policysync.kuadrant.io/controller'] === controllerLabelValue(controllerName));
    const report = work && readSpokeReport(work);
    return report && localPoliciesIn(report, 'authpolicies.kuadrant.io', ns)?.some((l) => l.key === `${ns}/local-auth`);
  }, { what: "spoke-2's report of local-auth on the hub", context: agentLogs });
  const spoke2Writes = AuditCursor.at(sandbox, 'spoke-2');
  await apply(hub, authPolicy(ns, POLICY, 'gw'));
  await eventually(() => copyOn('spoke-1'), { what: 'the copy on spoke-1', context: agentLogs });
  await writeSpokeStatus(spokes.get('spoke-1')!, AUTH_POLICIES, ns, POLICY, 'AuthPolicy has been successfully enforced');
  const overridden = await hubStatusWhere('spoke-2 overridden', (s) => s.summary.enforced === 1 && s.clusters['spoke-2']?.state === 'Overridden');
  assert.deepEqual(overridden, OVERRIDDEN_ON_SPOKE_2);
  assert.equal(await copyOn('spoke-2'), undefined, 'never placed on spoke-2');
  const copyWrites = spoke2Writes.since().filter((w) => w.resource.startsWith('authpolicies') && w.namespace === ns && w.name === POLICY);
  assert.deepEqual(copyWrites.map(describeWrite), [], 'the copy was never written on spoke-2');
  await remove(spoke2, local);
  await restoredOnSpoke2();
});

test('an agent that stops reporting withdraws nothing and places nothing: a copy local policies kept off stays off on its stale report; back, its report decides', async () => {
  const spoke2 = spokes.get('spoke-2')!;
  const local = authPolicy(ns, 'local-auth', 'gw');
  await apply(spoke2, local);
  await hubStatusWhere('spoke-2 overridden', (s) => s.clusters['spoke-2']?.state === 'Overridden');
  // The hub says Overridden as it deletes the work; the agent removes the copy a moment later (CI saw it 6 ms on).
  await withdrawnFrom('spoke-2');
  const agent = agents.find((a) => a.cluster === 'spoke-2')!;
  await agent.stop();
  agents = agents.filter((a) => a !== agent);
  try {
    const spoke2Writes = AuditCursor.at(sandbox, 'spoke-2');
    // No evidence is not evidence of absence: the stale report does not say local-auth went, so the copy it kept
    // off is not placed again, and the cluster says what it waits for.
    const waiting = await hubStatusWhere('spoke-2 awaiting its report', (s) => s.clusters['spoke-2']?.reason === 'AwaitingSpokeReport');
    assert.equal(waiting.clusters['spoke-2']?.state, 'Pending');
    assert.match(waiting.clusters['spoke-2']?.message ?? '', /^the spoke agent's report is stale since .* \(hub time\); AuthPolicy .* is placed once a fresh report shows the name free there$/);
    assert.ok(await copyOn('spoke-1'), 'spoke-1 keeps its copy');
    await new Promise((r) => setTimeout(r, 2 * REPORT_STALE_MS));
    assert.equal(await copyOn('spoke-2'), undefined, 'not placed again on the stale report');
    const copyWrites = spoke2Writes.since().filter((w) => w.resource.startsWith('authpolicies') && w.namespace === ns && w.name === POLICY);
    assert.deepEqual(copyWrites.map(describeWrite), [], 'the copy was not written on spoke-2 while its agent was away');
  } finally {
    // Started again however this test ends: the tests after it need spoke-2's reports.
    agents.push(await startAgent('spoke-2'));
  }
  await hubStatusWhere('spoke-2 overridden again', (s) => s.clusters['spoke-2']?.state === 'Overridden');
  assert.equal(await copyOn('spoke-2'), undefined);
  await remove(spoke2, local);
  await restoredOnSpoke2();
});

test('a local policy on one listener only: PartiallyEnforced', async () => {
  const spoke2 = spokes.get('spoke-2')!;
  const local = authPolicy(ns, 'local-https', 'gw');
  (local.spec as { targetRef: Record<string, string> }).targetRef.sectionName = 'https';
  await apply(spoke2, local);
  const partial = await hubStatusWhere('spoke-2 partially enforced', (s) => s.clusters['spoke-2']?.reason === 'PartiallyEnforced');
  assert.deepEqual(partial, {
    summary: { clusters: 2, applied: 2, enforced: 2, overridden: 0, pending: 0, failed: 0 },
    clusters: {
      'spoke-1': enforcedEntry('AuthPolicy has been successfully enforced'),
      'spoke-2': {
        state: 'Enforced', applied: true, available: true, enforced: 'True', reason: 'PartiallyEnforced',
        message: `AuthPolicy is partially overridden: listener "https" of Gateway gw by [${ns}/local-https]`, upToDate: true, revision: 1,
        overriddenBy: [`${ns}/local-https`],
      },
    },
  });
  await remove(spoke2, local);
  await hubStatusWhere('spoke-2 fully enforced again', (s) => s.clusters['spoke-2']?.reason === 'Enforced');
});

test('feedback latency and hub writes per spoke status change (measured over 10 changes)', async (t) => {
  const patches = async (): Promise<number> =>
    samples(await metricsText(sandbox.kubeConfig('hub')), 'apiserver_request_total')
      .filter((s) => s.labels.resource === 'authpolicies' && s.labels.verb === 'PATCH')
      .reduce((sum, s) => sum + s.value, 0);
  const workFeedback = async (): Promise<string | undefined> => {
    const works = await list(hub, RESOURCES.manifestWorks, 'spoke-1');
    const work = works.find((w) => w.metadata.annotations?.['policysync.kuadrant.io/source-ref']?.includes(`"namespace":"${ns}"`));
    const values = (work?.status as { resourceStatus?: { manifests?: { statusFeedback?: { values?: { name: string; fieldValue: { string?: string } }[] } }[] } } | undefined)
      ?.resourceStatus?.manifests?.[0]?.statusFeedback?.values;
    return values?.find((v) => v.name === 'enforcedMessage')?.fieldValue.string;
  };
  const total: number[] = [];
  const ocm: number[] = [];
  const before = await patches();
  for (let i = 1; i <= 10; i++) {
    // Isolated changes: past the coalescing window of the previous write, as a single change would be.
    await new Promise((r) => setTimeout(r, 300));
    const message = `AuthPolicy has been successfully enforced (change ${i})`;
    const start = performance.now();
    await writeSpokeStatus(spokes.get('spoke-1')!, AUTH_POLICIES, ns, POLICY, message);
    let atWork: number | undefined;
    await eventually(async () => {
      if (atWork === undefined && (await workFeedback()) === message) atWork = performance.now();
      return (await hubStatus<HubStatus>(hub, AUTH_POLICIES, ns, POLICY))?.clusters['spoke-1']?.message === message;
    }, { what: `change ${i} on the hub`, intervalMs: 5, timeoutMs: 30_000 });
    total.push(performance.now() - start);
    ocm.push((atWork ?? performance.now()) - start);
  }
  const writes = (await patches()) - before;
  const stats = (xs: number[]): string => {
    const sorted = [...xs].sort((a, b) => a - b);
    return `median ${((sorted[4]! + sorted[5]!) / 2).toFixed(0)} ms, max ${sorted[9]!.toFixed(0)} ms`;
  };
  t.diagnostic(`spoke status change -> hub annotation: ${stats(total)} (10 isolated changes, 5 ms polling)`);
  t.diagnostic(`  of which spoke change -> ManifestWork status (OCM): ${stats(ocm)}; ManifestWork status -> annotation (policy-sync): ${stats(total.map((x, i) => x - ocm[i]!))}`);
  t.diagnostic(`hub annotation writes: ${writes} for 10 changes`);
  assert.equal(writes, 10, 'exactly one hub annotation write per spoke status change');
});
