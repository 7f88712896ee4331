// GatewayClass params reconciler against the real hub apiserver: every kind of params yields exactly the
// conditions docs/design/configuration.md#params-validation names, and the params object is watched.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Condition } from '../../src/core/k8s/conditions.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { eventually } from '../../testkit/eventually.ts';
import { apply, createNamespace, gatewayClass, get, paramsConfigMap, patchData, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

let http: KubeHttp;
let hub: RunningHub;
const ns = uniqueName('gwc');
const created: KubeObject[] = [];

before(async () => {
  const sandbox = await testSandbox();
  http = hubHttp(sandbox);
  await createNamespace(http, ns);
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName: testControllerName('gwc') });
});

after(async () => {
  await hub.stop();
  for (const o of created.reverse()) await remove(http, o);
  await removeNamespace(http, ns);
  http.destroy();
});

const AUTH = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };

async function classWithParams(params: unknown): Promise<string> {
  const name = uniqueName('class');
  const cm = paramsConfigMap(ns, name, params);
  const cls = gatewayClass(name, { namespace: ns, name }, hub.controllerName);
  created.push(cm, cls);
  await apply(http, cm);
  await apply(http, cls);
  return name;
}

type Written = Pick<Condition, 'type' | 'status' | 'reason' | 'message' | 'observedGeneration'>;

/** Waits until the class has our two conditions and returns them without their timestamps. */
async function conditionsOf(name: string, until: (c: Written[]) => boolean = () => true): Promise<Written[]> {
  return eventually(
    async () => {
      const cls = await get(http, RESOURCES.gatewayClasses, undefined, name);
      const conditions = ((cls?.status as { conditions?: Condition[] } | undefined)?.conditions ?? [])
        .filter((c) => c.type === 'Accepted' || c.type === 'PoliciesSynced')
        .map(({ type, status, reason, message, observedGeneration }) => ({ type, status, reason, message, observedGeneration }));
      return conditions.length === 2 && conditions.every((c) => c.reason !== 'Pending') && until(conditions) ? conditions : undefined;
    },
    { what: `conditions on GatewayClass ${name}`, timeoutMs: 30_000 },
  );
}

test('valid params: Accepted=True and PoliciesSynced=True/AllKindsValid', async () => {
  const name = await classWithParams({ policiesToSync: [AUTH] });
  assert.deepEqual(await conditionsOf(name), [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'params are valid', observedGeneration: 1 },
    { type: 'PoliciesSynced', status: 'True', reason: 'AllKindsValid', message: '1 policy kinds synced', observedGeneration: 1 },
  ]);
});

test('params that are not JSON: Accepted=False/InvalidParameters naming the problem', async () => {
  const name = await classWithParams('{"policiesToSync": [');
  const [accepted, synced] = await conditionsOf(name);
  assert.equal(accepted?.status, 'False');
  assert.equal(accepted?.reason, 'InvalidParameters');
  assert.match(accepted?.message ?? '', /^params is not valid JSON: /);
  assert.deepEqual(synced, { type: 'PoliciesSynced', status: 'False', reason: 'InvalidParameters', message: 'params are invalid', observedGeneration: 1 });
});

test('an unknown key: Accepted=False naming the key', async () => {
  const name = await classWithParams({ policiesToSync: [AUTH], colour: 'blue' });
  const [accepted] = await conditionsOf(name);
  assert.equal(accepted?.reason, 'InvalidParameters');
  assert.match(accepted?.message ?? '', /unrecognized key "colour"/);
});

test('an unknown GVR and a non-policy GVR: PoliciesSynced=False, one line per bad entry, valid entries still synced', async () => {
  const name = await classWithParams({
    policiesToSync: [AUTH, { group: 'kuadrant.io', version: 'v1', resource: 'nosuchpolicies' }, { group: '', version: 'v1', resource: 'configmaps' }],
  });
  assert.deepEqual(await conditionsOf(name), [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'params are valid', observedGeneration: 1 },
    {
      type: 'PoliciesSynced',
      status: 'False',
      reason: 'InvalidPolicyKinds',
      message: 'nosuchpolicies.v1.kuadrant.io: NotFound\nconfigmaps.v1: NotAPolicy',
      observedGeneration: 1,
    },
  ]);
  assert.ok(hub.controller.configs.kind(name, AUTH), 'the valid entry is in force');
});

test('a missing params object, then created: the params object is watched and the class recovers', async () => {
  const name = uniqueName('class');
  const cls = gatewayClass(name, { namespace: ns, name }, hub.controllerName);
  created.push(cls);
  await apply(http, cls);
  const [accepted] = await conditionsOf(name);
  assert.equal(accepted?.message, `ConfigMap ${ns}/${name} (spec.parametersRef) not found; nothing is synced until the params are valid, and existing ManifestWorks are kept`);
  const cm = paramsConfigMap(ns, name, { policiesToSync: [AUTH] });
  created.push(cm);
  await apply(http, cm);
  const [recovered] = await conditionsOf(name, (c) => c[0]?.status === 'True');
  assert.equal(recovered?.reason, 'Accepted');
});

test('params turning invalid keep the last valid configuration in force, and say so', async () => {
  const name = await classWithParams({ policiesToSync: [AUTH] });
  await conditionsOf(name);
  await patchData(http, paramsConfigMap(ns, name, {}), { data: { params: 'not json' } });
  const [accepted] = await conditionsOf(name, (c) => c[0]?.status === 'False');
  assert.match(accepted?.message ?? '', /the last valid configuration stays in force$/);
  assert.ok(hub.controller.configs.kind(name, AUTH), 'the last valid configuration is still in force');
});
