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
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { POLICIES_SYNCED_ANNOTATION, REAPPLY_LABEL, STATUS_ANNOTATION, WITHDRAWN_BY_ANNOTATION } from '../../src/core/metadatakeys.ts';
import { occupantOf } from '../../src/core/spoke/reportquery.ts';
import { SPOKE_CONFIG_WORK_NAME, spokeReportText } from '../../src/core/spoke/spokeconfig.ts';
import { parseSpokeReport } from '../../src/core/spoke/reportwire.ts';
import { LINGER_GRACE_MS } from '../../src/core/spoke/spoketruth.ts';
import { readConditions } from '../../src/core/k8s/conditions.ts';
import { POLICIES_ENFORCED } from '../../src/core/status/gatewaystatus.ts';
import type { PolicyStatus } from '../../src/core/status/policystatus.ts';
import { controllerLabelValue, workName } from '../../src/core/works/manifestwork.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { mergePatch } from '../../src/kube/writes.ts';
import { startAgentPlane, otherDeletions, type AgentPlane } from '../../testkit/agentplane.ts';
import { AuditCursor, describeWrite } from '../../testkit/audit.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, get, paramsConfigMap, placementDecision, remove } from '../../testkit/fixtures.ts';
import { hubHttp, spokeClients, testControllerName, uniqueName } from '../../testkit/hub.ts';
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
let plane: AgentPlane | undefined;

function params(drift: 'Correct' | 'Report'): KubeObject {
  return paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }], drift });
}

const rego = (copy: KubeObject | undefined): unknown =>
  (copy?.spec as { rules?: { authorization?: { deny?: { opa?: { rego?: unknown } } } } } | undefined)?.rules?.authorization?.deny?.opa?.rego;

const priority = (copy: KubeObject | undefined): unknown =>
  (copy?.spec as { rules?: { authorization?: { deny?: { priority?: unknown } } } } | undefined)?.rules?.authorization?.deny?.priority;

async function clusterStatus(name: string, cluster: string): Promise<NonNullable<PolicyStatus['clusters']>[string] | undefined> {
  return (await hubStatus(hub, AUTH_POLICIES, ns, name))?.clusters?.[cluster];
}

/** Edits the copy on spoke-1 as another field manager would: the rego rule the hub sent. */
async function editOnSpoke(name: string, value: string): Promise<void> {
  await mergePatch(spokes.get('spoke-1')!, AUTH_POLICIES, ns, name, { spec: { rules: { authorization: { deny: { opa: { rego: value } } } } } }, { fieldManager: OTHER });
}

/** The real CLI, as a child process, against the sandbox hub with this test's controller name; its stdout. */
function cli(...args: string[]): Promise<string> {
  const argv = [join(import.meta.dirname, '..', '..', 'bin', 'policy-sync.js'), ...args, '--kubeconfig', sandbox.hub.kubeconfig, '--controller-name', controllerName];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, argv, { timeout: 60_000, env: { ...process.env, KUBECONFIG: '' } }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(stdout)));
  });
}

async function hubEvents(name: string): Promise<KubeObject[]> {
  const list = await hub.request<{ items: KubeObject[] }>('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name}`)}`);
  return list.items;
}

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  plane = await startAgentPlane(sandbox, hub, spokes, { ns, className, controllerName, spokeConfig: SPOKE_CONFIG, params: params('Report'), cluster: 'spoke-1' });
});

after(async () => {
  await plane?.stop();
});

test('a copy edited on its spoke by another field manager is reported Drifted, naming the manager and the field; under drift: Report it is left, under Correct put back at once', async (t) => {
  const name = 'edited';
  t.after(async () => {
    await remove(hub, authPolicy(ns, name, 'gw'));
    // Its copy gone before the next test reads spoke-1's audit log.
    await eventually(async () => (await get(spokes.get('spoke-1')!, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: 'the edited copy gone' });
  });
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

  // A second edit, under Correct from the start, of another field by the same hand (the same fields by the same hand
  // within ten seconds are one drift: spoketruth.ts driftToken): put back within seconds.
  const hubAudit = AuditCursor.at(sandbox, 'hub');
  const again = Date.now();
  await mergePatch(spoke, AUTH_POLICIES, ns, name, { spec: { rules: { authorization: { deny: { priority: 7 } } } } }, { fieldManager: OTHER });
  await eventually(async () => priority(await get(spoke, AUTH_POLICIES, ns, name)) !== 7 || undefined, { what: 'the second edit put back', timeoutMs: 30_000, intervalMs: 50 });
  const toPutBack = Date.now() - again;
  const reapplied = await get(hub, RESOURCES.manifestWorks, 'spoke-1', workName(AUTH_POLICIES, ns, name));
  assert.ok(reapplied?.metadata.labels?.[REAPPLY_LABEL], 'the work carries the token of the drift put back');
  // Said before it is put back (the soak, seed 4401): a leader killed between the two writes must leave the drift said,
  // so the hub's audit log shows the policy's status written before the work's relabel.
  const hubWrites = hubAudit.since().filter((w) => w.code < 300 && w.namespace !== undefined);
  const statusAt = hubWrites.findIndex((w) => w.resource === 'authpolicies' && w.namespace === ns && w.name === name);
  const relabelAt = hubWrites.findIndex((w) => w.resource === 'manifestworks' && w.namespace === 'spoke-1' && w.name === workName(AUTH_POLICIES, ns, name));
  assert.ok(relabelAt >= 0, `the work relabelled: ${hubWrites.map(describeWrite).join('; ')}`);
  assert.ok(statusAt >= 0 && statusAt < relabelAt, `the status written before the relabel: ${hubWrites.map(describeWrite).join('; ')}`);
  report('drift', { 'edit to Drifted on the hub (ms)': toDrifted, 'drift: Correct to copy put back (ms)': toPutBackAfterSwitch, 'edit to copy put back, Correct (ms)': toPutBack });
  assert.ok(toPutBack < 30_000);
});

/**
 * The end state of the work agent's race (docs/reliability.md, seeds 22, 25, 28, 29): a work, terminating, loses the
 * agent's finalizer while its AppliedManifestWork stays. The agent is stopped so that its finalizer stays on while the
 * hub deletes the works (`act`); the finalizers are then dropped as the agent's finalize controller does on its cache
 * miss, and the agent started again: it keeps the AppliedManifestWorks (evicting them after an hour), and the copies
 * with them. `whileDown` runs before the agent starts again. When the works went (ms since the epoch).
 */
async function leaveBehind(works: readonly string[], act: () => Promise<void>, whileDown: () => Promise<void>): Promise<number> {
  await sandbox.stop('work-agent/spoke-1');
  try {
    await act();
    for (const w of works) {
      await eventually(async () => (await get(hub, RESOURCES.manifestWorks, 'spoke-1', w))?.metadata.deletionTimestamp, { what: `the hub deleting ${w} (the agent keeps its finalizer on)`, timeoutMs: 60_000 });
      await mergePatch(hub, RESOURCES.manifestWorks, 'spoke-1', w, { metadata: { finalizers: null } });
      await eventually(async () => (await get(hub, RESOURCES.manifestWorks, 'spoke-1', w)) === undefined || undefined, { what: `${w} gone from the hub` });
    }
    const gone = Date.now();
    await whileDown();
    return gone;
  } finally {
    await sandbox.start('work-agent/spoke-1');
  }
}

/** `policy-sync status --lingering -o json`, until it lists the copy `name` on spoke-1: [source, policyExists]. */
async function listedLingering(name: string): Promise<[string, boolean]> {
  return eventually(async () => {
    const out = await cli('status', '--lingering', '-o', 'json');
    const items = (JSON.parse(out) as { items: { cluster: string; name: string; source: string; policyExists: boolean }[] }).items;
    const item = items.find((i) => i.cluster === 'spoke-1' && i.name === name);
    if (!item) throw new Error(`not listed: ${out}`);
    return [item.source, item.policyExists] as [string, boolean];
  }, { what: `status --lingering listing ${name}`, timeoutMs: 60_000 });
}

test('a copy left on its spoke after its work went is reported Removing, then Lingering from the fresh report, and handed back to OCM: the work agent deletes it, and nothing else', async (t) => {
  const name = 'left';
  t.after(async () => {
    // The policy first, then spoke-1 placed again: the other order places the copy anew, and its deletion would land
    // in the next test's audit window.
    await remove(hub, authPolicy(ns, name, 'gw'));
    await eventually(async () => (await get(hub, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: 'the policy gone from the hub' });
    await apply(hub, placementDecision(ns, 'spoke-1', ['spoke-1']));
    await eventually(async () => (await get(spokes.get('spoke-1')!, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: 'the left copy gone', timeoutMs: 90_000 });
  });
  const work = workName(AUTH_POLICIES, ns, name);
  const spoke = spokes.get('spoke-1')!;
  await apply(hub, authPolicy(ns, name, 'gw'));
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, name)) ?? undefined, { what: 'the copy on spoke-1', timeoutMs: 60_000 });
  const copyUid = (await get(spoke, AUTH_POLICIES, ns, name))!.metadata.uid;
  const spokeAudit = AuditCursor.at(sandbox, 'spoke-1');
  let listed: [string, boolean] = ['', false];
  // The policy no longer targets spoke-1: the hub deletes its work there, and the race leaves the copy.
  const gone = await leaveBehind([work], async () => {
    await apply(hub, placementDecision(ns, 'spoke-1', []));
  }, async () => {
    // While the agent is down nothing can remove it: `policy-sync status --lingering` lists it, by the hub's own rule.
    listed = await listedLingering(name);
  });
  assert.deepEqual(listed, [`${ns}/${name}`, true]);
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal((await get(spoke, AUTH_POLICIES, ns, name))?.metadata.uid, copyUid, 'the agent left the copy behind');

  const removing = await eventually(async () => {
    const c = await clusterStatus(name, 'spoke-1');
    return c?.reason === 'Removing' || c?.reason === 'Lingering' ? c : undefined;
  }, { what: 'spoke-1 Removing (or Lingering) on the hub', timeoutMs: 30_000 });
  const toSeen = Date.now() - gone;
  assert.deepEqual(removing.lingering, [`${ns}/${name}`]);
  // Past the grace it lingers, said as such (and as an Event) before it is mended.
  // The status says it until the mending is done (which can be 50 ms on), the Event stays: either is the record.
  const said = await eventually(async () => {
    const status = await hubStatus(hub, AUTH_POLICIES, ns, name);
    const c = status?.clusters?.['spoke-1'];
    if (c?.reason === 'Lingering') return { settled: c, summary: status!.summary };
    const event = (await hubEvents(name)).find((e) => (e as { reason?: string }).reason === 'Lingering');
    return event ? { settled: undefined, summary: undefined } : undefined;
  }, { what: 'spoke-1 Lingering', timeoutMs: LINGER_GRACE_MS + 30_000, intervalMs: 100 });
  const toLingering = Date.now() - gone;
  if (said.settled) {
    assert.equal(said.settled.state, 'Failed');
    assert.match(said.settled.message, /still runs on the cluster, though no ManifestWork of this hub places it/);
    assert.equal(said.summary?.lingering, 1);
  }
  const event = await eventually(async () => (await hubEvents(name)).find((e) => (e as { reason?: string }).reason === 'Lingering'), { what: 'a Lingering Event on the hub policy' });
  assert.match((event as { message?: string }).message ?? '', /^cluster spoke-1: Lingering: .* still runs on the cluster, though no ManifestWork of this hub places it/);
  // Then it is handed back: a mending work of the lost work's name, which the agent takes up, deleting the copy.
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: 'the lingering copy removed', timeoutMs: 90_000 });
  const toGone = Date.now() - gone;
  await eventually(async () => (await get(hub, RESOURCES.manifestWorks, 'spoke-1', work)) === undefined || undefined, { what: 'the mending work deleted once applied', timeoutMs: 30_000 });
  await eventually(async () => (await clusterStatus(name, 'spoke-1')) === undefined || undefined, { what: 'spoke-1 no longer in the policy status', timeoutMs: 30_000 });
  assert.deepEqual(otherDeletions(spokeAudit, ns, SPOKE_CONFIG, [name]), [], 'nothing else deleted on spoke-1');
  report('lingering', { 'work gone to Removing on the hub (ms)': toSeen, 'work gone to Lingering (ms)': toLingering, 'work gone to copy removed (ms)': toGone, 'linger grace (ms)': LINGER_GRACE_MS });
});

test('a copy left behind as its policy stops targeting any Gateway of ours (its Gateway deleted) is still witnessed by the withdrawal mark: said Lingering on the policy, handed back, and the mark then removed', async (t) => {
  const name = 'withdrawn';
  const spoke = spokes.get('spoke-1')!;
  const work = workName(AUTH_POLICIES, ns, name);
  t.after(async () => {
    await remove(hub, authPolicy(ns, name, 'gw'));
    await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: 'the left copy gone', timeoutMs: 90_000 });
  });
  const annotationsOf = async () => (await get(hub, AUTH_POLICIES, ns, name))?.metadata.annotations ?? {};
  await apply(hub, authPolicy(ns, name, 'gw'));
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, name)) ?? undefined, { what: 'the copy on spoke-1', timeoutMs: 60_000 });
  const copyUid = (await get(spoke, AUTH_POLICIES, ns, name))!.metadata.uid;
  const spokeAudit = AuditCursor.at(sandbox, 'spoke-1');
  // It now names a Gateway the hub does not have (as after its Gateway's deletion): none of ours, its works go, and
  // nothing of ours is left on it but the mark — the soak (seed 4612) saw such copies run on, nobody's to witness.
  let mark: string | undefined;
  await leaveBehind([work], () => apply(hub, authPolicy(ns, name, 'deleted-gateway')).then(() => undefined), async () => {
    mark = await eventually(async () => (await annotationsOf())[WITHDRAWN_BY_ANNOTATION], { what: 'the withdrawal mark on the hub policy' });
  });
  assert.equal(mark, controllerLabelValue(controllerName));
  assert.equal((await get(spoke, AUTH_POLICIES, ns, name))?.metadata.uid, copyUid, 'the agent left the copy behind');
  // Said Lingering before it is mended: on the policy's status (while it lasts) or its Event.
  const said = await eventually(async () => {
    const c = await clusterStatus(name, 'spoke-1');
    if (c?.reason === 'Lingering') return c.message;
    const event = (await hubEvents(name)).find((e) => (e as { reason?: string }).reason === 'Lingering');
    return (event as { message?: string } | undefined)?.message;
  }, { what: 'spoke-1 Lingering on the withdrawn policy', timeoutMs: LINGER_GRACE_MS + 30_000, intervalMs: 100 });
  assert.match(said, /still runs on the cluster, though no ManifestWork of this hub places it/);
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: 'the lingering copy removed', timeoutMs: 90_000 });
  await eventually(async () => (await get(hub, RESOURCES.manifestWorks, 'spoke-1', work)) === undefined || undefined, { what: 'the mending work deleted once applied', timeoutMs: 30_000 });
  // No report shows a copy any more: the mark goes, and the status with it (the policy is nobody's here now).
  const left = await eventually(async () => {
    const a = await annotationsOf();
    return a[WITHDRAWN_BY_ANNOTATION] === undefined && a[STATUS_ANNOTATION] === undefined ? a : undefined;
  }, { what: 'the withdrawal mark and the status removed', timeoutMs: 60_000 });
  assert.equal(left[POLICIES_SYNCED_ANNOTATION], undefined);
  assert.deepEqual(otherDeletions(spokeAudit, ns, SPOKE_CONFIG, [name]), [], 'nothing else deleted on spoke-1');
});

test("a copy of a policy deleted on the hub, left behind, is handed back once a live read confirms the policy gone: no policy carries its status, the hub Gateway it targeted says it, and status --lingering lists it", async () => {
  const name = 'deleted';
  const work = workName(AUTH_POLICIES, ns, name);
  const spoke = spokes.get('spoke-1')!;
  const said = `AuthPolicy ${ns}/${name} on spoke-1`;
  const enforcedOnGateway = async () => readConditions((await get(hub, RESOURCES.gateways, ns, 'gw')) ?? {}).find((c) => c.type === POLICIES_ENFORCED);
  await apply(hub, authPolicy(ns, name, 'gw'));
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, name)) ?? undefined, { what: 'the copy on spoke-1', timeoutMs: 60_000 });
  const spokeAudit = AuditCursor.at(sandbox, 'spoke-1');
  let listed: [string, boolean] = ['', true];
  let onGateway: { reason?: string; message?: string } = {};
  const gone = await leaveBehind([work], () => remove(hub, authPolicy(ns, name, 'gw')), async () => {
    listed = await listedLingering(name);
    // The work agent is down, so nothing mends it yet: past the grace, the Gateway it attached to says it lingers.
    onGateway = await eventually(async () => {
      const c = await enforcedOnGateway();
      return c?.message?.includes(`copies of policies deleted from the hub still run: ${said}`) ? c : undefined;
    }, { what: `the hub Gateway's ${POLICIES_ENFORCED} naming ${said}`, timeoutMs: LINGER_GRACE_MS + 30_000 });
  });
  assert.deepEqual(listed, [`${ns}/${name}`, false], 'listed, its policy gone from the hub');
  assert.equal(onGateway.reason, 'Lingering');
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: "the deleted policy's lingering copy removed", timeoutMs: LINGER_GRACE_MS + 60_000 });
  const toGone = Date.now() - gone;
  await eventually(async () => ((await enforcedOnGateway())?.message?.includes(said) === false) || undefined, { what: `the hub Gateway no longer naming ${said}`, timeoutMs: 30_000 });
  await eventually(async () => (await get(hub, RESOURCES.manifestWorks, 'spoke-1', work)) === undefined || undefined, { what: 'the mending work deleted once applied', timeoutMs: 30_000 });
  assert.deepEqual(otherDeletions(spokeAudit, ns, SPOKE_CONFIG, [name]), [], 'nothing else deleted on spoke-1');
  report('lingering, policy deleted', { 'work gone to copy removed (ms)': toGone, 'linger grace (ms)': LINGER_GRACE_MS });
});

test("a copy left behind where a spoke's own policy now overrides the hub's is said Lingering, Overridden beside it, and handed back: the spoke's own policy stays", async (t) => {
  const name = 'overridden';
  const spoke = spokes.get('spoke-1')!;
  // The spoke team's own policy, for the whole Gateway: it covers the hub policy's copy there (local policies win).
  const own = authPolicy(ns, 'own-auth', 'gw', { rules: { authorization: { 'local-rule': { opa: { rego: 'allow = true' } } } } });
  t.after(async () => {
    await remove(hub, authPolicy(ns, name, 'gw'));
    await eventually(async () => (await get(hub, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: 'the policy gone from the hub' });
    await remove(spoke, own);
    await apply(hub, placementDecision(ns, 'spoke-1', ['spoke-1']));
    await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: 'the left copy gone', timeoutMs: 90_000 });
  });
  const work = workName(AUTH_POLICIES, ns, name);
  await apply(hub, authPolicy(ns, name, 'gw'));
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, name)) ?? undefined, { what: 'the copy on spoke-1', timeoutMs: 60_000 });
  const copyUid = (await get(spoke, AUTH_POLICIES, ns, name))!.metadata.uid;
  const spokeAudit = AuditCursor.at(sandbox, 'spoke-1');
  // The copy left behind (its cluster no longer placed), and the spoke's own policy written meanwhile.
  let ownUid: string | undefined;
  await leaveBehind([work], async () => {
    await apply(hub, placementDecision(ns, 'spoke-1', []));
  }, async () => {
    ownUid = (await apply(spoke, own)).metadata.uid;
  });
  // The agent back, its first report on the hub lists both: the copy, with no work, on its way out (Removing) — and
  // within its grace spoke-1 is placed again. The hub now has a say there, Overridden, and places nothing; the copy
  // still runs. (Placed again before that report, the hub would place the copy anew, taking the left one up.)
  await eventually(async () => {
    const text = await get(hub, RESOURCES.manifestWorks, 'spoke-1', SPOKE_CONFIG_WORK_NAME).then((w) => w && spokeReportText(w, SPOKE_CONFIG));
    const parsed = text === undefined ? undefined : parseSpokeReport(text);
    const local = parsed?.ok === true && occupantOf(parsed.report, 'authpolicies.kuadrant.io', ns, 'own-auth').state === 'local';
    return (local && (await clusterStatus(name, 'spoke-1'))?.reason === 'Removing') || undefined;
  }, { what: "spoke-1's own policy in the report on the hub, and spoke-1 Removing", timeoutMs: 60_000, intervalMs: 100 });
  await apply(hub, placementDecision(ns, 'spoke-1', ['spoke-1']));
  let last: NonNullable<PolicyStatus['clusters']>[string] | undefined;
  let copyThere: string | undefined;
  // Said `Lingering` on the status, and as an Event, before it is mended: the status says it only until the mending is
  // done (on CI the work agent took the mending work up and deleted the copy 50 ms after the status write, between
  // two looks), the Event stays.
  const said = await eventually(async () => {
    last = await clusterStatus(name, 'spoke-1');
    copyThere = (await get(spoke, AUTH_POLICIES, ns, name))?.metadata.uid;
    if (last?.reason === 'Lingering') return { message: last.message, overriddenBy: last.overriddenBy, copy: copyThere };
    const event = (await hubEvents(name)).find((e) => (e as { reason?: string }).reason === 'Lingering');
    const message = (event as { message?: string } | undefined)?.message;
    return message?.startsWith('cluster spoke-1: Lingering: ') ? { message, overriddenBy: undefined, copy: undefined } : undefined;
  }, { what: 'spoke-1 Lingering, with the local policy overriding the hub\'s there', timeoutMs: LINGER_GRACE_MS + 30_000, intervalMs: 100, context: () => `spoke-1 now: ${JSON.stringify(last)}; the copy on spoke-1: ${copyThere === undefined ? 'gone' : copyThere === copyUid ? 'the one left' : `another (${copyThere})`}` });
  if (said.copy !== undefined) assert.equal(said.copy, copyUid, 'the copy said Lingering is the one left behind');
  assert.match(said.message, /still runs on the cluster, though no ManifestWork of this hub places it \(Overridden: /);
  if (said.overriddenBy !== undefined) assert.deepEqual(said.overriddenBy, [`${ns}/own-auth`]);
  else assert.match(said.message, new RegExp(`${ns}/own-auth`), 'the Event names the local policy');
  // Handed back to the work agent, which deletes it; the spoke's own policy is left as its team wrote it.
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: 'the lingering copy removed', timeoutMs: 90_000 });
  await eventually(async () => (await get(hub, RESOURCES.manifestWorks, 'spoke-1', work)) === undefined || undefined, { what: 'the mending work deleted once applied', timeoutMs: 30_000 });
  await eventually(async () => ((await clusterStatus(name, 'spoke-1'))?.state === 'Overridden') || undefined, { what: 'spoke-1 Overridden once the copy is gone', timeoutMs: 30_000 });
  assert.equal((await get(spoke, AUTH_POLICIES, ns, 'own-auth'))?.metadata.uid, ownUid, "the spoke's own policy stays");
  assert.deepEqual(otherDeletions(spokeAudit, ns, SPOKE_CONFIG, [name]), [], 'nothing else deleted on spoke-1');
});
