// Configuration faults on the real plane (hub, two spokes, real OCM work agents), each asserting zero
// ManifestWork deletions no user asked for, spoke copies never re-created, and convergence after:
//  a. one of two owned GatewayClasses sharing a kind has missing, then invalid, params when the
//     controller starts;
//  b. a kind's version switched in policiesToSync (a third-party policy kind served at two versions);
//  c. a kind's CRD deleted and re-created on the hub, its policies re-applied as a GitOps tool would.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, type ResourceRef } from '../../src/kube/resource.ts';
import { serverSideApply } from '../../src/kube/writes.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { ourWorks } from '../../testkit/works.ts';
import { hubHttp, quiescent, releaseSpokes, spokeClients, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';
import { copyUids, deletionWatch, report, timed } from '../../testkit/faults.ts';

const GROUP = 'faults.policysync.io';
let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let running: RunningHub | undefined;
const controllerName = testControllerName('faults-config');
const ns = uniqueName('faults');
const clusters = ['spoke-1', 'spoke-2'];
const created: [KubeHttp, ResourceRef, KubeObject][] = [];

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  await createNamespace(hub, ns);
  for (const spoke of spokes.values()) await createNamespace(spoke, ns);
  await apply(hub, placementDecision(ns, 'everywhere', clusters));
});

after(async () => {
  await running?.stop();
  for (const w of await ourWorks(hub, { sourceNamespace: ns })) await remove(hub, w);
  for (const [http, resource, o] of created.reverse()) await http.request('DELETE', `${collectionOf(resource)}/${o.metadata.name}`).catch(() => undefined);
  await removeNamespace(hub, ns);
  await releaseSpokes(spokes, ns);
  hub.destroy();
});

function collectionOf(r: ResourceRef): string {
  return r.group === '' ? `/api/${r.version}/${r.resource}` : `/apis/${r.group}/${r.version}/${r.resource}`;
}

/** The works of one hub policy (by resource and name), by cluster. */
async function worksOf(resource: string, name: string): Promise<Map<string, KubeObject>> {
  const works = (await ourWorks(hub, { sourceNamespace: ns })).filter((w) => {
    const ref = JSON.parse(w.metadata.annotations?.['policysync.kuadrant.io/source-ref'] ?? '{}') as { resource?: string; name?: string };
    return ref.resource === resource && ref.name === name;
  });
  return new Map(works.map((w) => [w.metadata.namespace ?? '', w]));
}

/** Every work of the policy applied by the agent at its current generation, with `check` true of it. */
async function appliedEverywhere(resource: string, name: string, check: (work: KubeObject) => boolean = () => true): Promise<void> {
  await eventually(
    async () => {
      const works = await worksOf(resource, name);
      return (
        clusters.every((c) => {
          const w = works.get(c);
          const applied = (w?.status as { conditions?: { type: string; status: string; observedGeneration?: number }[] } | undefined)?.conditions?.find((x) => x.type === 'Applied');
          return w && check(w) && applied?.status === 'True' && applied.observedGeneration === w.metadata.generation;
        }) || undefined
      );
    },
    { what: `the works of ${resource} ${name} applied on ${clusters.join(', ')}`, timeoutMs: 90_000, context: () => workAgentLogs(sandbox) },
  );
}

async function restartController(): Promise<void> {
  await running?.stop();
  running = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: undefined });
}

async function classCondition(name: string, type: string): Promise<{ status: string; reason: string; message: string } | undefined> {
  const cls = await get(hub, RESOURCES.gatewayClasses, undefined, name);
  return (cls?.status as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions?.find((c) => c.type === type);
}

/** A GEP-713-shaped policy CRD of our own, served at `versions` (`storage` stores). */
function policyCrd(plural: string, kind: string, versions: string[], storage: string): KubeObject {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          targetRef: { type: 'object', properties: { group: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' }, sectionName: { type: 'string' } } },
          rules: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
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
      versions: versions.map((name) => ({ name, served: true, storage: name === storage, subresources: { status: {} }, schema: { openAPIV3Schema: schema } })),
    },
  };
}

async function installCrd(http: KubeHttp, crd: KubeObject): Promise<void> {
  await serverSideApply(http, RESOURCES.crds, crd, { fieldManager: 'faults-test' });
  created.push([http, RESOURCES.crds, crd]);
  const plural = crd.metadata.name.split('.')[0]!;
  const version = (crd.spec as { versions: { name: string }[] }).versions[0]!.name;
  await eventually(async () => {
    const list = await http.request<{ resources: { name: string }[] }>('GET', `/apis/${GROUP}/${version}`).catch(() => undefined);
    return list?.resources.some((r) => r.name === plural);
  }, { what: `${crd.metadata.name} served` });
}

function thirdPartyPolicy(plural: string, kind: string, version: string, name: string, gatewayName: string): { resource: ResourceRef; object: KubeObject } {
  return {
    resource: { group: GROUP, version, resource: plural, namespaced: true },
    object: {
      apiVersion: `${GROUP}/${version}`,
      kind,
      metadata: { name, namespace: ns },
      spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: gatewayName }, rules: { limit: 10 } },
    },
  };
}

test('a. a class whose params are missing, then invalid, at start-up keeps its works; valid again, it converges', async () => {
  const AUTH = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };
  const [classA, classB] = [uniqueName('class-a'), uniqueName('class-b')];
  const paramsB = paramsConfigMap(ns, 'params-b', { policiesToSync: [AUTH] });
  await apply(hub, paramsConfigMap(ns, 'params-a', { policiesToSync: [AUTH] }));
  await apply(hub, paramsB);
  for (const [cls, params, gw] of [[classA, 'params-a', 'gw-a'], [classB, 'params-b', 'gw-b']] as const) {
    const gc = gatewayClass(cls, { namespace: ns, name: params }, controllerName);
    await apply(hub, gc);
    created.push([hub, RESOURCES.gatewayClasses, gc]);
    await apply(hub, gateway(ns, gw, cls, 'everywhere'));
  }
  await apply(hub, authPolicy(ns, 'auth-a', 'gw-a'));
  await apply(hub, authPolicy(ns, 'auth-b', 'gw-b'));
  await restartController();
  await appliedEverywhere('authpolicies', 'auth-a');
  await appliedEverywhere('authpolicies', 'auth-b');
  const uids = await copyUids(spokes, AUTH_POLICIES, ns, 'auth-b');
  assert.ok([...uids.values()].every(Boolean), 'auth-b is on both spokes');

  // The controller restarts while class B's params are missing: B is unknown, its works must stay.
  await running!.stop();
  running = undefined;
  await remove(hub, paramsB);
  const deletions = deletionWatch(sandbox);
  await restartController();
  const missing = await eventually(async () => {
    const c = await classCondition(classB, 'Accepted');
    return c?.status === 'False' && /not found/.test(c.message) ? c : undefined;
  }, { what: 'class B to report its missing params' });
  assert.match(missing.message, /existing ManifestWorks are kept/);
  await quiescent(running!.controller, 'after a start with class B unknown');
  assert.equal((await worksOf('authpolicies', 'auth-b')).size, 2, 'the works of the unknown class stay');
  await deletions.assertNone('class B params missing at start-up');

  // Invalid params, from a restart again: still unknown.
  await apply(hub, paramsConfigMap(ns, 'params-b', '{"policiesToSync": ['));
  await restartController();
  await eventually(async () => (await classCondition(classB, 'Accepted'))?.reason === 'InvalidParameters' || undefined, { what: 'class B to report invalid params' });
  await quiescent(running!.controller, 'after a start with class B invalid');
  assert.equal((await worksOf('authpolicies', 'auth-b')).size, 2);
  await deletions.assertNone('class B params invalid at start-up');

  // Valid again: converged, nothing re-created.
  const ms = await timed(async () => {
    await apply(hub, paramsB);
    await eventually(async () => (await classCondition(classB, 'Accepted'))?.status === 'True' || undefined, { what: 'class B accepted' });
    await quiescent(running!.controller, 'after class B became valid');
    await appliedEverywhere('authpolicies', 'auth-b');
  });
  await deletions.assertNone('class B params valid again');
  assert.deepEqual(await copyUids(spokes, AUTH_POLICIES, ns, 'auth-b'), uids, 'the spoke copies were never re-created');
  report('a (class params missing then invalid at start-up)', { deletions: 0, convergeMs: ms });
});

test('b. switching a kind\'s version in params re-applies in place: no deletion, same spoke objects', async () => {
  const crd = policyCrd('switchpolicies', 'SwitchPolicy', ['v1alpha1', 'v1beta1'], 'v1alpha1');
  for (const http of [hub, ...spokes.values()]) await installCrd(http, crd);
  const cls = uniqueName('class-switch');
  const params = paramsConfigMap(ns, 'params-switch', { policiesToSync: [{ group: GROUP, version: 'v1alpha1', resource: 'switchpolicies' }] });
  await apply(hub, params);
  const gc = gatewayClass(cls, { namespace: ns, name: 'params-switch' }, controllerName);
  await apply(hub, gc);
  created.push([hub, RESOURCES.gatewayClasses, gc]);
  await apply(hub, gateway(ns, 'gw-switch', cls, 'everywhere'));
  const policy = thirdPartyPolicy('switchpolicies', 'SwitchPolicy', 'v1alpha1', 'switched', 'gw-switch');
  await serverSideApply(hub, policy.resource, policy.object, { fieldManager: 'faults-test' });
  if (!running) await restartController();
  const copyApiVersion = (w: KubeObject): string | undefined => (w.spec as { workload: { manifests: KubeObject[] } }).workload.manifests[0]?.apiVersion;
  await appliedEverywhere('switchpolicies', 'switched', (w) => copyApiVersion(w) === `${GROUP}/v1alpha1`);
  const resource = { group: GROUP, version: 'v1alpha1', resource: 'switchpolicies', namespaced: true };
  const uids = await copyUids(spokes, resource, ns, 'switched');
  assert.ok([...uids.values()].every(Boolean), 'the copy is on both spokes');

  const deletions = deletionWatch(sandbox);
  const ms = await timed(async () => {
    await apply(hub, paramsConfigMap(ns, 'params-switch', { policiesToSync: [{ group: GROUP, version: 'v1beta1', resource: 'switchpolicies' }] }));
    await appliedEverywhere('switchpolicies', 'switched', (w) => copyApiVersion(w) === `${GROUP}/v1beta1`);
  });
  await quiescent(running!.controller, 'after the version switch');
  await deletions.assertNone('version switched');
  assert.deepEqual(await copyUids(spokes, resource, ns, 'switched'), uids, 'the spoke copies are the same objects');
  report('b (kind version switched)', { deletions: 0, convergeMs: ms });
});

test('c. a CRD deleted and re-created on the hub, its policies re-applied: no deletion, same spoke objects', async () => {
  const crd = policyCrd('reinstalledpolicies', 'ReinstalledPolicy', ['v1'], 'v1');
  for (const http of [hub, ...spokes.values()]) await installCrd(http, crd);
  const cls = uniqueName('class-crd');
  await apply(hub, paramsConfigMap(ns, 'params-crd', { policiesToSync: [{ group: GROUP, version: 'v1', resource: 'reinstalledpolicies' }] }));
  const gc = gatewayClass(cls, { namespace: ns, name: 'params-crd' }, controllerName);
  await apply(hub, gc);
  created.push([hub, RESOURCES.gatewayClasses, gc]);
  await apply(hub, gateway(ns, 'gw-crd', cls, 'everywhere'));
  const policy = thirdPartyPolicy('reinstalledpolicies', 'ReinstalledPolicy', 'v1', 'restored', 'gw-crd');
  await serverSideApply(hub, policy.resource, policy.object, { fieldManager: 'faults-test' });
  if (!running) await restartController();
  await appliedEverywhere('reinstalledpolicies', 'restored');
  const uids = await copyUids(spokes, policy.resource, ns, 'restored');
  const before = (await get(hub, policy.resource, ns, 'restored'))!.metadata.uid;

  const deletions = deletionWatch(sandbox);
  await hub.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
  await eventually(async () => (await get(hub, RESOURCES.crds, undefined, crd.metadata.name)) === undefined || undefined, { what: 'the CRD gone from the hub', timeoutMs: 60_000 });
  await quiescent(running!.controller, 'after the CRD and its policies went');
  assert.equal((await worksOf('reinstalledpolicies', 'restored')).size, 2, 'works whose policies went with their CRD stay');
  await deletions.assertNone('CRD deleted');

  const ms = await timed(async () => {
    await installCrd(hub, crd);
    await serverSideApply(hub, policy.resource, policy.object, { fieldManager: 'faults-test' });
    const restored = (await get(hub, policy.resource, ns, 'restored'))!.metadata.uid;
    assert.notEqual(restored, before);
    await appliedEverywhere('reinstalledpolicies', 'restored', (w) => (JSON.parse(w.metadata.annotations?.['policysync.kuadrant.io/source-ref'] ?? '{}') as { uid?: string }).uid === restored);
  });
  await deletions.assertNone('CRD re-created and policies re-applied');
  assert.deepEqual(await copyUids(spokes, policy.resource, ns, 'restored'), uids, 'the spoke copies are the same objects');
  report('c (CRD deleted and re-created on the hub)', { deletions: 0, convergeMs: ms });
});
