// A progressDeadline that fails every cluster at once, or before its success may count, is refused with the
// field named (docs/design/configuration.md#params-validation), against the real hub apiserver: the PolicySyncParams
// CRD refuses a bare "0" at admission; the hub refuses "0s" and a deadline below minSuccessTime, in a
// PolicySyncParams or a ConfigMap, as InvalidParameters on the class; None stays allowed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Condition } from '../../src/core/k8s/conditions.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { ApiError, type KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { eventually } from '../../testkit/eventually.ts';
import { apply, createNamespace, gatewayClass, get, paramsConfigMap, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

const AUTH = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };
const FIELD = 'rolloutStrategy.progressive.progressDeadline';

let http: KubeHttp;
let hub: RunningHub;
const ns = uniqueName('deadline');
const classes: string[] = [];

before(async () => {
  const sandbox = await testSandbox();
  http = hubHttp(sandbox);
  await createNamespace(http, ns);
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName: testControllerName('deadline') });
});

after(async () => {
  await hub.stop();
  for (const c of classes) await remove(http, gatewayClass(c, { namespace: ns, name: c }));
  await removeNamespace(http, ns);
  http.destroy();
});

function params(name: string, progressive: Record<string, string>): KubeObject {
  return {
    apiVersion: 'policysync.kuadrant.io/v1alpha1',
    kind: 'PolicySyncParams',
    metadata: { namespace: ns, name },
    spec: { policiesToSync: [AUTH], rolloutStrategy: { type: 'Progressive', progressive } },
  };
}

async function classOf(paramsObject: KubeObject): Promise<string> {
  const name = paramsObject.metadata.name;
  classes.push(name);
  await apply(http, paramsObject);
  const cls = gatewayClass(name, { namespace: ns, name }, hub.controllerName);
  if (paramsObject.kind === 'PolicySyncParams') (cls.spec as { parametersRef: Record<string, string> }).parametersRef = { group: 'policysync.kuadrant.io', kind: 'PolicySyncParams', name, namespace: ns };
  await apply(http, cls);
  return name;
}

async function accepted(name: string): Promise<Condition> {
  return eventually(
    async () => {
      const cls = await get(http, RESOURCES.gatewayClasses, undefined, name);
      const c = ((cls?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((x) => x.type === 'Accepted');
      return c && c.reason !== 'Pending' ? c : undefined;
    },
    { what: `Accepted on ${name}`, timeoutMs: 30_000 },
  );
}

test('the PolicySyncParams CRD refuses progressDeadline "0" at admission, naming the field', async () => {
  const err = await apply(http, params(uniqueName('zero'), { progressDeadline: '0' })).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError, `refused: ${String(err)}`);
  assert.equal(err.status, 422);
  assert.match(err.message, /spec\.rolloutStrategy\.progressive\.progressDeadline/);
});

test('the hub refuses progressDeadline "0s", and one below minSuccessTime, as InvalidParameters naming the field', async () => {
  const zero = await accepted(await classOf(params(uniqueName('zero-s'), { progressDeadline: '0s' })));
  assert.deepEqual([zero.status, zero.reason], ['False', 'InvalidParameters']);
  assert.match(zero.message, new RegExp(`^${FIELD.replaceAll('.', '\\.')}: must be above 0 \\(0s fails every cluster as soon as its copy is written\\)`));
  const below = await accepted(await classOf(paramsConfigMap(ns, uniqueName('below'), { policiesToSync: [AUTH], rolloutStrategy: { type: 'Progressive', progressive: { progressDeadline: '1m', minSuccessTime: '5m' } } })));
  assert.deepEqual([below.status, below.reason], ['False', 'InvalidParameters']);
  assert.match(below.message, new RegExp(`^${FIELD.replaceAll('.', '\\.')}: 1m is below minSuccessTime 5m`));
});

test('None, and a deadline equal to minSuccessTime, are accepted', async () => {
  for (const progressive of [{ progressDeadline: 'None', minSuccessTime: '1h' }, { progressDeadline: '5m', minSuccessTime: '5m' }]) {
    const c = await accepted(await classOf(params(uniqueName('fine'), progressive)));
    assert.deepEqual([c.status, c.reason], ['True', 'Accepted'], JSON.stringify(progressive));
  }
});
