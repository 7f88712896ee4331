// A hub Gateway that stops being ours (docs/design/status.md#gateway-status), against the real hub apiserver:
// moved to a class of another controller, or its class re-created naming another controller, it loses
// the conditions this controller wrote and keeps every other writer's; while its class is absent (doubt:
// the class may come back), what it has stays; and another hub controller sharing the hub, which applies
// with the same field manager, never removes conditions that are not its own.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Condition } from '../../src/core/k8s/conditions.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { mergePatch, serverSideApply } from '../../src/kube/writes.ts';
import { eventually } from '../../testkit/eventually.ts';
import { apply, createNamespace, gateway, gatewayClass, get, paramsConfigMap, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, quiescent, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

const ours = testControllerName('release');
const theirs = testControllerName('release-other');
const ns = uniqueName('gwrelease');
const ENFORCED = 'policysync.kuadrant.io/PoliciesEnforced';
/** Another controller's condition on the Gateway, written with its own field manager. */
const FOREIGN: Condition = { type: 'example.com/Inspected', status: 'True', reason: 'Looked', message: 'by another controller', lastTransitionTime: '2025-01-01T00:00:00Z' };

let http: KubeHttp;
let hub: RunningHub;
const classes: string[] = [];

before(async () => {
  const sandbox = await testSandbox();
  http = hubHttp(sandbox);
  await createNamespace(http, ns);
  await apply(http, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName: ours });
});

after(async () => {
  await hub.stop();
  for (const c of classes) await remove(http, gatewayClass(c, { namespace: ns, name: 'params' }));
  await removeNamespace(http, ns);
  http.destroy();
});

async function newClass(controllerName: string, name = uniqueName('class')): Promise<string> {
  classes.push(name);
  await apply(http, gatewayClass(name, { namespace: ns, name: 'params' }, controllerName));
  return name;
}

async function conditionsOf(name: string): Promise<Map<string, Condition>> {
  const gw = await get(http, RESOURCES.gateways, ns, name);
  assert.ok(gw, `Gateway ${ns}/${name}`);
  return new Map(((gw.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).map((c) => [c.type, c]));
}

async function until(name: string, check: (c: Map<string, Condition>) => boolean, what: string): Promise<Map<string, Condition>> {
  let last = '';
  return eventually(
    async () => {
      const c = await conditionsOf(name);
      last = JSON.stringify([...c.values()]);
      return check(c) ? c : undefined;
    },
    { what, timeoutMs: 60_000, intervalMs: 100, context: () => `last seen: ${last}` },
  );
}

const written = (c: Map<string, Condition>): boolean => c.get('Accepted')?.reason === 'Accepted' && c.get(ENFORCED) !== undefined;

/** A Gateway of `className` with our conditions written, and another writer's condition beside them. */
async function ourGateway(className: string): Promise<string> {
  const name = uniqueName('gw');
  await apply(http, gateway(ns, name, className));
  await until(name, written, `our conditions on ${name}`);
  const status = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { namespace: ns, name }, status: { conditions: [FOREIGN] } };
  await serverSideApply(http, RESOURCES.gateways, status, { subresource: 'status', fieldManager: 'another-controller' });
  return name;
}

/** Ours gone: none of our types, no True Accepted; the other writer's condition as it was. */
function released(c: Map<string, Condition>): boolean {
  const ourTypes = [...c.keys()].filter((t) => t.startsWith('policysync.kuadrant.io/'));
  const accepted = c.get('Accepted');
  return ourTypes.length === 0 && (accepted === undefined || accepted.status === 'Unknown') && c.get(FOREIGN.type)?.message === FOREIGN.message;
}

test('a Gateway moved to a class of another controller loses our conditions and keeps the other writer\'s', async () => {
  const mine = await newClass(ours);
  const other = await newClass(theirs);
  const name = await ourGateway(mine);
  await mergePatch(http, RESOURCES.gateways, ns, name, { spec: { gatewayClassName: other } });
  const c = await until(name, released, 'our conditions removed');
  assert.deepEqual(c.get(FOREIGN.type), FOREIGN);
});

test('a class deleted keeps our conditions (doubt); re-created naming another controller, they go', async () => {
  const cls = await newClass(ours);
  const name = await ourGateway(cls);
  await remove(http, gatewayClass(cls, { namespace: ns, name: 'params' }));
  await eventually(async () => (await get(http, RESOURCES.gatewayClasses, undefined, cls)) === undefined || undefined, { what: `class ${cls} gone` });
  await quiescent(hub.controller, 'the class gone');
  const kept = await conditionsOf(name);
  assert.equal(kept.get('Accepted')?.status, 'True', 'an absent class may come back: what the Gateway has stays');
  assert.ok(kept.get(ENFORCED));
  await newClass(theirs, cls);
  const c = await until(name, released, 'our conditions removed once the class names another controller');
  assert.deepEqual(c.get(FOREIGN.type), FOREIGN);
});

test('another hub controller sharing the hub never removes conditions it did not write', async () => {
  // Our hub holds a Gateway; a second controller, owning other classes, runs beside it with the same field manager.
  const mine = await newClass(ours);
  const name = await ourGateway(mine);
  const second = await startHub((await testSandbox()).kubeConfig('hub'), { controllerName: theirs });
  try {
    await newClass(theirs);
    await quiescent(second.controller, 'the second controller settled');
    await quiescent(hub.controller, 'ours settled');
    const c = await conditionsOf(name);
    assert.equal(c.get('Accepted')?.status, 'True');
    assert.ok(c.get(ENFORCED), 'our conditions stay: the Gateway is not the second controller\'s');
  } finally {
    await second.stop();
  }
});
