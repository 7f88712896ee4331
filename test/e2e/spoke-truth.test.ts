// What each spoke really runs, told and mended (docs/design/tenancy.md#what-runs-on-a-spoke), on the full plane: the
// hub controller, the spoke agents and the real OCM work agents (v1.2.1).
//  - Drift: a copy edited on its spoke by another field manager is reported Drifted on the hub from the spoke
//    agent's fresh report, naming that manager and the field; under `drift: Report` it is left as it is; under
//    `drift: Correct` (the default) the hub labels the work and the work agent puts the copy back at once, not at its
//    4–6 minute resync.
//  - Lingering: a copy left on its spoke after its work went (the end state of the work agent's race: the
//    terminating work's finalizer dropped while its AppliedManifestWork stays) is reported Lingering, and handed
//    back to OCM's own machinery: nothing the sync did not create is deleted (audit log).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { REAPPLY_LABEL } from '../../src/core/metadatakeys.ts';
import type { PolicyStatus } from '../../src/core/status/policystatus.ts';
import { workName } from '../../src/core/works/manifestwork.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { mergePatch } from '../../src/kube/writes.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, releaseSpokes, spokeClients, startHub, startSpoke, testControllerName, uniqueName, type RunningHub, type RunningSpoke } from '../../testkit/hub.ts';
import { report } from '../../testkit/faults.ts';
import { hubStatus, writeSpokeStatus } from '../../testkit/status.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

const SPOKE_CONFIG = { namespace: 'policy-sync-system', name: uniqueName('spoke-config') };
const controllerName = testControllerName('truth');
const ns = uniqueName('truth');
const className = uniqueName('truth-class');
/** Another hand on the spoke: `kubectl edit` would be `kubectl-edit`; a GitOps tool its own name. */
const OTHER = 'other-tool';

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub | undefined;
let agents: RunningSpoke[] = [];

function params(drift: 'Correct' | 'Report'): KubeObject {
  return paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }], drift });
}

const rego = (copy: KubeObject | undefined): unknown =>
  (copy?.spec as { rules?: { authorization?: { deny?: { opa?: { rego?: unknown } } } } } | undefined)?.rules?.authorization?.deny?.opa?.rego;

async function clusterStatus(name: string, cluster: string): Promise<NonNullable<PolicyStatus['clusters']>[string] | undefined> {
  return (await hubStatus(hub, AUTH_POLICIES, ns, name))?.clusters?.[cluster];
}

/** Edits the copy on spoke-1 as another field manager would: the rego rule the hub sent. */
async function editOnSpoke(name: string, value: string): Promise<void> {
  await mergePatch(spokes.get('spoke-1')!, AUTH_POLICIES, ns, name, { spec: { rules: { authorization: { deny: { opa: { rego: value } } } } } }, { fieldManager: OTHER });
}

async function hubEvents(name: string): Promise<KubeObject[]> {
  const list = await hub.request<{ items: KubeObject[] }>('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name}`)}`);
  return list.items;
}

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  for (const spoke of spokes.values()) for (const n of [SPOKE_CONFIG.namespace, ns]) await createNamespace(spoke, n);
  await createNamespace(hub, ns);
  await apply(hub, params('Report'));
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(hub, gateway(ns, 'gw', className, 'spoke-1'));
  await apply(hub, placementDecision(ns, 'spoke-1', ['spoke-1']));
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG, workShape: 'per-placement' });
  agents = await Promise.all(sandbox.spokes.map((s) => startSpoke(sandbox.kubeConfig(s.name), s.name, SPOKE_CONFIG, { reportHeartbeatMs: 1_000 })));
});

after(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await controller?.stop();
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName)).catch(() => undefined);
  await releaseSpokes(spokes, ns);
  await removeNamespace(hub, ns);
});

test('a copy edited on its spoke by another field manager is reported Drifted, naming the manager and the field; under drift: Report it is left, under Correct put back at once', async () => {
  const name = 'edited';
  await apply(hub, authPolicy(ns, name, 'gw'));
  const spoke = spokes.get('spoke-1')!;
  await eventually(async () => rego(await get(spoke, AUTH_POLICIES, ns, name)) === 'allow = false' || undefined, { what: 'the copy on spoke-1', timeoutMs: 60_000 });
  // The spoke's controller enforces it (written as the Kuadrant operator would, through the status subresource:
  // a status write by another manager is not drift).
  await writeSpokeStatus(spoke, AUTH_POLICIES, ns, name, 'AuthPolicy has been successfully enforced');
  await eventually(async () => (await clusterStatus(name, 'spoke-1'))?.state === 'Enforced' || undefined, { what: 'spoke-1 Enforced', timeoutMs: 60_000 });

  // drift: Report — told, left.
  const edited = Date.now();
  await editOnSpoke(name, 'allow = true');
  const drifted = await eventually(async () => {
    const c = await clusterStatus(name, 'spoke-1');
    return c?.reason === 'Drifted' ? c : undefined;
  }, { what: 'spoke-1 Drifted', timeoutMs: 30_000 });
  const toDrifted = Date.now() - edited;
  assert.equal(drifted.state, "Failed");
  assert.ok(drifted.drift, 'the cluster names what drifted');
  assert.deepEqual(drifted.drift.fields, ['spec.rules.authorization.deny.opa.rego']);
  assert.deepEqual(drifted.drift.managers.map((m) => [m.manager, m.operation]), [[OTHER, 'Update']]);
  assert.ok(drifted.drift.since, 'since when');
  assert.match(drifted.message, /left as it is \(drift: Report\)/);
  const summary = (await hubStatus(hub, AUTH_POLICIES, ns, name))!.summary;
  assert.equal(summary.drifted, 1);
  const event = await eventually(async () => (await hubEvents(name)).find((e) => (e as { reason?: string }).reason === 'Drifted'), { what: 'a Drifted Event on the hub policy' });
  assert.match((event as { message?: string }).message ?? '', new RegExp(OTHER));
  // Left as it is: a few seconds on, the copy still runs what the other hand wrote, and the work has no reapply label.
  await new Promise((r) => setTimeout(r, 5_000));
  assert.equal(rego(await get(spoke, AUTH_POLICIES, ns, name)), 'allow = true');
  const work = await get(hub, RESOURCES.manifestWorks, 'spoke-1', workName(AUTH_POLICIES, ns, name));
  assert.equal(work?.metadata.labels?.[REAPPLY_LABEL], undefined);

  // drift: Correct — put back at once (the work agent's own resync would take 4–6 minutes).
  const switched = Date.now();
  await apply(hub, params('Correct'));
  await eventually(async () => rego(await get(spoke, AUTH_POLICIES, ns, name)) === 'allow = false' || undefined, { what: 'the copy put back after drift: Correct', timeoutMs: 30_000 });
  const toPutBackAfterSwitch = Date.now() - switched;
  await eventually(async () => {
    const c = await clusterStatus(name, 'spoke-1');
    return c?.reason !== 'Drifted' && c?.drift === undefined ? c : undefined;
  }, { what: 'spoke-1 no longer Drifted', timeoutMs: 30_000 });

  // A second edit, under Correct from the start: put back within seconds.
  const again = Date.now();
  await editOnSpoke(name, 'allow = maybe');
  await eventually(async () => rego(await get(spoke, AUTH_POLICIES, ns, name)) === 'allow = false' || undefined, { what: 'the second edit put back', timeoutMs: 30_000, intervalMs: 50 });
  const toPutBack = Date.now() - again;
  const reapplied = await get(hub, RESOURCES.manifestWorks, 'spoke-1', workName(AUTH_POLICIES, ns, name));
  assert.ok(reapplied?.metadata.labels?.[REAPPLY_LABEL], 'the work carries the token of the drift put back');
  report('drift', { 'edit to Drifted on the hub (ms)': toDrifted, 'drift: Correct to copy put back (ms)': toPutBackAfterSwitch, 'edit to copy put back, Correct (ms)': toPutBack });
  assert.ok(toPutBack < 30_000);
  await remove(hub, authPolicy(ns, name, 'gw'));
});
