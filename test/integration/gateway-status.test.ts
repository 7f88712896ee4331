// The hub Gateway's status (docs/design/status.md#gateway-status) against the real hub apiserver and the
// sandbox's two spokes with their OCM work agents: Accepted, Programmed and the policy conditions appear
// with observedGeneration; a new generation is observed; another writer's condition survives our server-
// side applies; a Gateway of a class we do not own gets nothing; a spoke's verdict flips PoliciesEnforced;
// nothing is written when nothing changed; and kubectl shows PROGRAMMED True.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Condition } from '../../src/core/k8s/conditions.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { readSourceRef } from '../../src/core/works/manifestwork.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { mergePatch, serverSideApply } from '../../src/kube/writes.ts';
import { delta, describe, snapshot, waitQuiet } from '../../testkit/counters.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, quiescent, releaseSpokes, spokeClients, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { kubectl } from '../../testkit/kubectl.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { writeSpokeStatus } from '../../testkit/status.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';
import { ourWorks } from '../../testkit/works.ts';

const controllerName = testControllerName('gwstatus');
const ns = uniqueName('gwstatus');
const className = uniqueName('class');
const foreignClass = uniqueName('foreign');
const AFFECTED = 'policysync.kuadrant.io/AuthPolicyAffected';
const ENFORCED = 'policysync.kuadrant.io/PoliciesEnforced';
const OURS = ['Accepted', 'Programmed', ENFORCED];
const STATUS_APPLY = 'APPLY gateway.networking.k8s.io/gateways/status';
/** Another controller's condition on our Gateway, written with its own field manager. */
const FOREIGN_TYPE = 'example.com/Inspected';

let sandbox: Sandbox;
let http: KubeHttp;
let spokes: Map<string, KubeHttp>;
let hub: RunningHub | undefined;
let clusters: string[];

before(async () => {
  sandbox = await testSandbox();
  http = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  clusters = sandbox.spokes.map((s) => s.name).sort();
  for (const spoke of spokes.values()) await createNamespace(spoke, ns);
  await createNamespace(http, ns);
  await apply(http, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  await apply(http, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  // A class of another controller: its Gateway is never ours to write.
  await apply(http, gatewayClass(foreignClass, { namespace: ns, name: 'params' }, testControllerName('someone-else')));
  await apply(http, gateway(ns, 'gw', className, 'all-spokes'));
  await apply(http, gateway(ns, 'theirs', foreignClass, 'all-spokes'));
  await apply(http, gateway(ns, 'classless', uniqueName('absent'), 'all-spokes'));
  await apply(http, placementDecision(ns, 'all-spokes', clusters));
  await apply(http, authPolicy(ns, 'auth', 'gw'));
  await apply(http, authPolicy(ns, 'auth-theirs', 'theirs'));
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName });
});

after(async () => {
  hub ??= await startHub(sandbox.kubeConfig('hub'), { controllerName });
  for (const name of ['auth', 'auth-theirs', 'auth-2']) await remove(http, authPolicy(ns, name, 'gw'));
  await eventually(async () => (await ourWorks(http, { controllerName })).every((w) => readSourceRef(w)?.namespace !== ns), { what: 'the works of the policies to go' }).catch(() => undefined);
  await hub.stop();
  for (const c of [className, foreignClass]) await remove(http, gatewayClass(c, { namespace: ns, name: 'params' }));
  await removeNamespace(http, ns);
  await releaseSpokes(spokes, ns);
  http.destroy();
});

async function gatewayObject(name = 'gw'): Promise<KubeObject> {
  const gw = await get(http, RESOURCES.gateways, ns, name);
  assert.ok(gw, `Gateway ${ns}/${name}`);
  return gw;
}

function conditionsOf(gw: KubeObject): Map<string, Condition> {
  const list = ((gw.status as { conditions?: Condition[] } | undefined)?.conditions ?? []);
  return new Map(list.map((c) => [c.type, c]));
}

/** Waits until the Gateway's conditions pass `check` (which throws while they do not); returns them. */
async function conditionsWhen(check: (c: Map<string, Condition>, gw: KubeObject) => void, what: string, name = 'gw'): Promise<Map<string, Condition>> {
  let last = '';
  return eventually(
    async () => {
      const gw = await gatewayObject(name);
      const c = conditionsOf(gw);
      last = JSON.stringify([...c.values()], null, 1);
      try {
        check(c, gw);
        return c;
      } catch {
        return undefined;
      }
    },
    { what, timeoutMs: 90_000, intervalMs: 100, context: () => `last seen: ${last}\n${workAgentLogs(sandbox, 5)}` },
  );
}

function expect(c: Map<string, Condition>, type: string, status: string, reason: string): Condition {
  const condition = c.get(type);
  assert.ok(condition, type);
  assert.equal(condition.status, status, type);
  assert.equal(condition.reason, reason, type);
  return condition;
}

async function writesOf(what: () => Promise<void>): Promise<Map<string, number>> {
  const before = await snapshot(sandbox.kubeConfig('hub'));
  await what();
  const { snapshot: last, quiet } = await waitQuiet(sandbox.kubeConfig('hub'), { quietMs: 2_000, timeoutMs: 60_000 });
  assert.ok(quiet, `the counters kept moving: ${describe(last.writes)}`);
  return delta(before, last).writes;
}

test('Accepted, Programmed and the AuthPolicy condition appear, with observedGeneration', async () => {
  const c = await conditionsWhen((c, gw) => {
    expect(c, 'Accepted', 'True', 'Accepted');
    expect(c, 'Programmed', 'True', 'Programmed');
    expect(c, AFFECTED, 'True', 'Affected');
    expect(c, ENFORCED, 'False', 'Pending');
    for (const type of [...OURS, AFFECTED]) assert.equal(c.get(type)?.observedGeneration, gw.metadata.generation);
  }, 'the Gateway conditions');
  assert.equal(c.get('Accepted')?.message, `GatewayClass ${className}: params in force`);
  assert.equal(c.get('Programmed')?.message, `placed on 2 clusters: ${clusters.join(', ')}`);
  assert.equal(c.get(AFFECTED)?.message, `affected by AuthPolicy ${ns}/auth`);
  assert.match(c.get(ENFORCED)?.message ?? '', new RegExp(`^not enforced on 2 of 2 placed clusters: ${clusters[0]}: AuthPolicy ${ns}/auth Pending`));
  for (const condition of c.values()) assert.match(condition.lastTransitionTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});

test('a spoke status flips PoliciesEnforced to True', async () => {
  for (const [cluster, spoke] of spokes) {
    await eventually(() => get(spoke, AUTH_POLICIES, ns, 'auth'), { what: `the copy on ${cluster}`, timeoutMs: 60_000, context: () => workAgentLogs(sandbox, 10) });
    await writeSpokeStatus(spoke, AUTH_POLICIES, ns, 'auth', 'AuthPolicy has been successfully enforced');
  }
  const c = await conditionsWhen((c) => expect(c, ENFORCED, 'True', 'Enforced'), 'PoliciesEnforced True');
  assert.equal(c.get(ENFORCED)?.message, `1 policy enforced on every placed cluster (2: ${clusters.join(', ')})`);
});

test('no write when nothing changed: a resync-like touch and a restart make none; one real change makes one', async () => {
  assert.ok(hub);
  await quiescent(hub.controller, 'settled');
  // An edit of the policy that changes neither its targets nor its verdicts, and the Gateway applied unchanged.
  const idle = await writesOf(async () => {
    await mergePatch(http, AUTH_POLICIES, ns, 'auth', { metadata: { labels: { touched: 'yes' } } });
    await apply(http, gateway(ns, 'gw', className, 'all-spokes'));
    await quiescent(hub!.controller, 'after the touch');
  });
  assert.equal(idle.get(STATUS_APPLY) ?? 0, 0, `Gateway status writes: ${describe(idle)}`);
  const restart = await writesOf(async () => {
    await hub!.stop();
    hub = await startHub(sandbox.kubeConfig('hub'), { controllerName });
    await quiescent(hub.controller, 'the restart pass');
  });
  assert.equal(restart.get(STATUS_APPLY) ?? 0, 0, `Gateway status writes on restart: ${describe(restart)}`);
  // A new generation of the Gateway: exactly one write, observing it.
  const bumped = await writesOf(async () => {
    await mergePatch(http, RESOURCES.gateways, ns, 'gw', { spec: { listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] } });
    await conditionsWhen((c, gw) => assert.equal(c.get('Accepted')?.observedGeneration, gw.metadata.generation), 'the new generation observed');
    await quiescent(hub!.controller, 'after the new generation');
  });
  assert.equal(bumped.get(STATUS_APPLY), 1, `Gateway status writes for one new generation: ${describe(bumped)}`);
});

test('a change of generation updates observedGeneration on every condition, keeping lastTransitionTime', async () => {
  const before = conditionsOf(await gatewayObject());
  await mergePatch(http, RESOURCES.gateways, ns, 'gw', { spec: { listeners: [{ name: 'http', port: 8081, protocol: 'HTTP' }] } });
  const generation = (await gatewayObject()).metadata.generation;
  const after = await conditionsWhen((c) => {
    for (const type of [...OURS, AFFECTED]) assert.equal(c.get(type)?.observedGeneration, generation, type);
  }, `observedGeneration ${generation}`);
  for (const type of [...OURS, AFFECTED]) assert.equal(after.get(type)?.lastTransitionTime, before.get(type)?.lastTransitionTime, `${type}: same status, same transition time`);
});

test('a condition type of another field manager survives our applies, and ours go when no longer wanted', async () => {
  const foreign: Condition = { type: FOREIGN_TYPE, status: 'True', reason: 'Looked', message: 'by another controller', lastTransitionTime: '2025-01-01T00:00:00Z' };
  await serverSideApply(http, RESOURCES.gateways, { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { namespace: ns, name: 'gw' }, status: { conditions: [foreign] } }, { subresource: 'status', fieldManager: 'another-controller' });
  // A second policy: our conditions change (two policies now), the foreign one stays.
  await apply(http, authPolicy(ns, 'auth-2', 'gw'));
  await conditionsWhen((c) => {
    assert.equal(c.get(AFFECTED)?.message, `affected by AuthPolicy ${ns}/auth, ${ns}/auth-2`);
    assert.deepEqual(c.get(FOREIGN_TYPE), foreign);
  }, 'both policies named, the foreign condition kept');
  // No policy left: the Affected condition is ours alone, so it goes; PoliciesEnforced says so; theirs stays.
  await remove(http, authPolicy(ns, 'auth-2', 'gw'));
  await remove(http, authPolicy(ns, 'auth', 'gw'));
  await conditionsWhen((c) => {
    assert.equal(c.has(AFFECTED), false);
    expect(c, ENFORCED, 'False', 'NoPolicies');
    expect(c, 'Programmed', 'True', 'Programmed');
    assert.deepEqual(c.get(FOREIGN_TYPE), foreign);
  }, 'the Affected condition removed, the foreign one kept');
});

test('a Gateway of a class we do not own, or of an absent class, gets nothing', async () => {
  assert.ok(hub);
  await quiescent(hub.controller, 'settled');
  for (const name of ['theirs', 'classless']) {
    const c = conditionsOf(await gatewayObject(name));
    // The CRD's defaults, untouched.
    assert.deepEqual([...c.keys()].sort(), ['Accepted', 'Programmed'], name);
    for (const condition of c.values()) assert.deepEqual([condition.status, condition.reason, condition.message], ['Unknown', 'Pending', 'Waiting for controller'], name);
  }
});

test('kubectl get gateway -A shows PROGRAMMED True for our Gateway', async () => {
  const run = await kubectl(['get', 'gateway', '-A'], { kubeconfig: sandbox.hub.kubeconfig });
  assert.equal(run.code, 0, run.stderr);
  // Columns are aligned (ADDRESS is empty here): each cell starts where its header does.
  const [header = '', ...rows] = run.stdout.trimEnd().split('\n');
  const at = header.indexOf('PROGRAMMED');
  assert.ok(at > 0, `a PROGRAMMED column: ${run.stdout}`);
  const cell = (line: string): string => line.slice(at).split(/\s+/)[0] ?? '';
  const row = (name: string): string | undefined => {
    const line = rows.find((r) => { const [namespace, gatewayName] = r.split(/\s+/); return namespace === ns && gatewayName === name; });
    return line === undefined ? undefined : cell(line);
  };
  assert.equal(row('gw'), 'True', run.stdout);
  assert.equal(row('theirs'), 'Unknown', run.stdout);
});
