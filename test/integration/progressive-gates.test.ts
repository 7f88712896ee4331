// A kind a Progressive rollout cannot gate on (docs/design/rollout.md#rolling-out-a-change), against the real
// hub apiserver: a third-party policy CRD whose status has no field where its controller could say which
// generation it observed is named on a class rolling out Progressive (ProgressiveRolloutReady=False), and
// still synced; a Kuadrant kind (status.observedGeneration) and a kind whose status keeps unknown fields are
// not named; a class rolling out All has no such condition, and loses it when its params switch to All; a
// policy of such a kind whose annotation selects Progressive gets the problem NoObservedGeneration.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Condition } from '../../src/core/k8s/conditions.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { serverSideApply } from '../../src/kube/writes.ts';
import { eventually } from '../../testkit/eventually.ts';
import { STATUS_ANNOTATION } from '../../src/core/metadatakeys.ts';
import { readPolicyStatus } from '../../src/core/status/annotation.ts';
import { apply, createNamespace, gateway, gatewayClass, get, paramsConfigMap, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

const GROUP = 'gates.policysync.io';
const READY = 'ProgressiveRolloutReady';
const AUTH = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };
const SILENT = { group: GROUP, version: 'v1', resource: 'silentpolicies' };
const OPEN = { group: GROUP, version: 'v1', resource: 'openpolicies' };
const PROGRESSIVE = { type: 'Progressive', progressive: { maxConcurrency: '1' } };

let http: KubeHttp;
let hub: RunningHub;
const ns = uniqueName('gates');
const crds: KubeObject[] = [];
const classes: string[] = [];

/** A GEP-713 policy CRD whose status is `status` (a structural schema, or one keeping unknown fields). */
function policyCrd(plural: string, kind: string, status: Record<string, unknown>): KubeObject {
  const schema = {
    type: 'object',
    properties: {
      spec: { type: 'object', properties: { targetRef: { type: 'object', properties: { group: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' } } } } },
      status,
    },
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: schema } }],
    },
  };
}

before(async () => {
  const sandbox = await testSandbox();
  http = hubHttp(sandbox);
  await createNamespace(http, ns);
  // Conditions as many controllers write them, without observedGeneration; and a status left open.
  const conditions = { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' }, reason: { type: 'string' }, message: { type: 'string' } } } };
  crds.push(policyCrd('silentpolicies', 'SilentPolicy', { type: 'object', properties: { phase: { type: 'string' }, conditions } }));
  crds.push(policyCrd('openpolicies', 'OpenPolicy', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }));
  for (const crd of crds) {
    await serverSideApply(http, RESOURCES.crds, crd, { fieldManager: 'gates-test' });
    const plural = crd.metadata.name.split('.')[0]!;
    await eventually(async () => {
      const list = await http.request<{ resources: { name: string }[] }>('GET', `/apis/${GROUP}/v1`).catch(() => undefined);
      return list?.resources.some((r) => r.name === plural);
    }, { what: `${crd.metadata.name} served` });
  }
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName: testControllerName('gates') });
});

after(async () => {
  await hub.stop();
  for (const c of classes) await remove(http, gatewayClass(c, { namespace: ns, name: c }));
  for (const crd of crds) await http.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`).catch(() => undefined);
  await removeNamespace(http, ns);
  http.destroy();
});

async function classWithParams(params: unknown): Promise<string> {
  const name = uniqueName('class');
  classes.push(name);
  await apply(http, paramsConfigMap(ns, name, params));
  await apply(http, gatewayClass(name, { namespace: ns, name }, hub.controllerName));
  return name;
}

/** The class's conditions once `check` holds (the class reconciler wrote them for its generation). */
async function conditionsWhen(name: string, check: (c: Map<string, Condition>) => boolean, what: string): Promise<Map<string, Condition>> {
  let last = '';
  return eventually(
    async () => {
      const cls = await get(http, RESOURCES.gatewayClasses, undefined, name);
      const c = new Map(((cls?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).map((x) => [x.type, x]));
      last = JSON.stringify([...c.values()]);
      return c.get('PoliciesSynced')?.reason !== 'Pending' && c.has('PoliciesSynced') && check(c) ? c : undefined;
    },
    { what, timeoutMs: 30_000, context: () => `last seen: ${last}` },
  );
}

test('a Progressive class names the kind whose CRD has no observedGeneration, and syncs it all the same', async () => {
  const name = await classWithParams({ policiesToSync: [AUTH, SILENT, OPEN], rolloutStrategy: PROGRESSIVE });
  const c = await conditionsWhen(name, (c) => c.has(READY), `${READY} on ${name}`);
  assert.deepEqual(
    [c.get('Accepted')?.reason, c.get('PoliciesSynced')?.status, c.get('PoliciesSynced')?.reason, c.get('PoliciesSynced')?.message],
    ['Accepted', 'True', 'AllKindsValid', '3 policy kinds synced'],
  );
  const ready = c.get(READY)!;
  assert.equal(ready.status, 'False');
  assert.equal(ready.reason, 'NoObservedGeneration');
  assert.equal(ready.observedGeneration, 1);
  assert.match(ready.message, /^under the Progressive rolloutStrategy no cluster can succeed for silentpolicies\.v1\.gates\.policysync\.io: its CRD has no status\.observedGeneration, status\.conditions\[\]\.observedGeneration or status\.ancestors\[\]\.conditions\[\]\.observedGeneration, /);
  assert.doesNotMatch(ready.message, /authpolicies|openpolicies/, 'a kind reporting its generation, or whose status is open, is not named');
  for (const kind of [AUTH, SILENT, OPEN]) assert.ok(hub.controller.configs.kind(name, kind), `${kind.resource} in force`);
});

test('a Progressive class whose kinds all report their generation says so; switched to All, the condition goes', async () => {
  const name = await classWithParams({ policiesToSync: [AUTH], rolloutStrategy: PROGRESSIVE });
  const c = await conditionsWhen(name, (c) => c.has(READY), `${READY} on ${name}`);
  assert.deepEqual([c.get(READY)?.status, c.get(READY)?.reason], ['True', 'GenerationsReported']);
  await apply(http, paramsConfigMap(ns, name, { policiesToSync: [AUTH, SILENT] }));
  const all = await conditionsWhen(name, (c) => !c.has(READY), `${READY} removed from ${name}`);
  assert.equal(all.get('PoliciesSynced')?.message, '2 policy kinds synced');
  assert.equal(all.get('Accepted')?.status, 'True');
});

test('a policy of such a kind selecting Progressive by annotation gets the problem NoObservedGeneration; All by annotation, none', async () => {
  const name = await classWithParams({ policiesToSync: [SILENT] });
  await conditionsWhen(name, (c) => c.get('PoliciesSynced')?.reason === 'AllKindsValid', `${name} synced`);
  await apply(http, gateway(ns, 'gw', name));
  const silent = { ...SILENT, namespaced: true };
  const policy = (annotation: string): KubeObject => ({
    apiVersion: `${GROUP}/v1`,
    kind: 'SilentPolicy',
    metadata: { namespace: ns, name: 'silent', annotations: { 'policysync.kuadrant.io/rollout-strategy': annotation } },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' } },
  });
  const problems = async (): Promise<{ reason: string; message: string }[] | undefined> => {
    const p = await get(http, silent, ns, 'silent');
    return readPolicyStatus(p?.metadata.annotations?.[STATUS_ANNOTATION])?.problems;
  };
  await serverSideApply(http, silent, policy('Progressive'), { fieldManager: 'gates-test' });
  const found = await eventually(async () => (await problems())?.find((p) => p.reason === 'NoObservedGeneration'), { what: 'the problem NoObservedGeneration', timeoutMs: 30_000 });
  assert.match(found.message, /^policysync\.kuadrant\.io\/rollout-strategy selects Progressive, but no cluster can succeed for silentpolicies\.v1\.gates\.policysync\.io: /);
  await serverSideApply(http, silent, policy('All'), { fieldManager: 'gates-test' });
  await eventually(async () => ((await problems()) ?? []).every((p) => p.reason !== 'NoObservedGeneration') || undefined, { what: 'the problem gone under All', timeoutMs: 30_000 });
  await http.request('DELETE', `/apis/${GROUP}/v1/namespaces/${ns}/silentpolicies/silent`);
});
