// Labels and annotations removed from a hub policy leave its spoke copies (docs/design/works.md#manifestworks), on the
// full plane: hub controller, the spoke agents, the real OCM work agents (v1.2.1).
//  - Why not OCM's own removal marker: the work agent's Update strategy merges the copy's labels and annotations
//    into the spoke object (library-go MergeMap), removing a key only when sent as `<key>-`; the hub apiserver
//    refuses any ManifestWork whose manifest carries such a key (an embedded object's metadata is validated).
//  - A kind with the status subresource (AuthPolicy, applied by Update): the copy names the keys it dropped; a
//    restart of the hub on the unchanged world writes no work.
//  - A kind without it (applied by ServerSideApply, force, our field manager): the apiserver removes them itself.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { workName } from '../../src/core/works/manifestwork.ts';
import { ApiError, type KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, type ResourceRef } from '../../src/kube/resource.ts';
import { serverSideApply } from '../../src/kube/writes.ts';
import { AuditCursor, describeWrite } from '../../testkit/audit.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, quiescent, releaseSpokes, spokeClients, startHub, startSpoke, testControllerName, uniqueName, type RunningHub, type RunningSpoke } from '../../testkit/hub.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';
import { ourWorks } from '../../testkit/works.ts';

const SPOKE_CONFIG = { namespace: 'policy-sync-system', name: uniqueName('spoke-config') };
const controllerName = testControllerName('dropped');
const ns = uniqueName('dropped');
const className = uniqueName('dropped-class');
const GROUP = 'plain.policysync.io';
/** A third-party policy kind whose CRD has no status subresource: its copies are applied by ServerSideApply. */
const PLAIN: ResourceRef = { group: GROUP, version: 'v1', resource: 'plainpolicies', namespaced: true };
const FIELD_MANAGER = 'policy-sync-tests';
const LABEL = 'team';
const ANNOTATION = 'example.com/note';

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub | undefined;
let agents: RunningSpoke[] = [];

const plainCrd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${PLAIN.resource}.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: PLAIN.resource, singular: 'plainpolicy', kind: 'PlainPolicy', listKind: 'PlainPolicyList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { targetRef: { type: 'object', properties: { group: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' } } } } } } } } }],
  },
};

function labelled(resource: ResourceRef, kind: string, name: string, labels: Record<string, string>, annotations: Record<string, string>): KubeObject {
  const base = resource === AUTH_POLICIES ? authPolicy(ns, name, 'gw') : { apiVersion: `${GROUP}/v1`, kind, metadata: { name, namespace: ns }, spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' } } };
  return { ...base, metadata: { ...base.metadata, labels, annotations } };
}

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  for (const http of [hub, ...spokes.values()]) {
    await serverSideApply(http, RESOURCES.crds, plainCrd, { fieldManager: FIELD_MANAGER });
    const established = (crd: KubeObject | undefined): boolean =>
      ((crd?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
    await eventually(async () => established(await get(http, RESOURCES.crds, undefined, plainCrd.metadata.name)) || undefined, { what: 'the PlainPolicy CRD established' });
  }
  for (const spoke of spokes.values()) for (const n of [SPOKE_CONFIG.namespace, ns]) await createNamespace(spoke, n);
  await createNamespace(hub, ns);
  await apply(hub, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }, { group: GROUP, version: 'v1', resource: PLAIN.resource }] }));
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(hub, gateway(ns, 'gw', className, 'spoke-1'));
  await apply(hub, placementDecision(ns, 'spoke-1', ['spoke-1']));
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG });
  agents = await Promise.all(sandbox.spokes.map((s) => startSpoke(sandbox.kubeConfig(s.name), s.name, SPOKE_CONFIG, { reportHeartbeatMs: 1_000 })));
});

after(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await controller?.stop();
  for (const work of await ourWorks(hub, { controllerName })) await remove(hub, work);
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }));
  await removeNamespace(hub, ns);
  for (const http of [hub, ...spokes.values()]) await http.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${plainCrd.metadata.name}`).catch(() => undefined);
  await releaseSpokes(spokes, ns);
  hub.destroy();
});

const agentLogs = (): string => workAgentLogs(sandbox, 10);

test("OCM's removal marker cannot travel: the hub apiserver refuses a ManifestWork whose manifest has a label or annotation key ending in '-'", async () => {
  for (const metadata of [{ labels: { [`${LABEL}-`]: '' } }, { annotations: { [`${ANNOTATION}-`]: '' } }]) {
    const work = {
      apiVersion: 'work.open-cluster-management.io/v1',
      kind: 'ManifestWork',
      metadata: { name: uniqueName('marker'), namespace: 'spoke-1' },
      spec: { workload: { manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'marker', namespace: ns, ...metadata } }] } },
    };
    const refused = await hub.request('POST', '/apis/work.open-cluster-management.io/v1/namespaces/spoke-1/manifestworks', { body: work }).then(
      () => undefined,
      (err: unknown) => (err instanceof ApiError ? err : undefined),
    );
    if (refused === undefined) await hub.request('DELETE', `/apis/work.open-cluster-management.io/v1/namespaces/spoke-1/manifestworks/${work.metadata.name}`);
    assert.equal(refused?.status, 422, `refused: ${JSON.stringify(metadata)}`);
    assert.match(refused?.message ?? '', /spec\.workload\.manifests\[0\]\.metadata\.(labels|annotations)/);
  }
});

test('a kind applied by Update: the removed label and annotation are named on the copy, the spoke agent removes them from it (never from a team\'s policy), and a restart on the unchanged world writes no work', { timeout: 180_000 }, async () => {
  const spoke1 = spokes.get('spoke-1')!;
  await apply(hub, labelled(AUTH_POLICIES, 'AuthPolicy', 'auth', { [LABEL]: 'payments' }, { [ANNOTATION]: 'hello' }));
  const first = await eventually(async () => {
    const copy = await get(spoke1, AUTH_POLICIES, ns, 'auth');
    return copy?.metadata.labels?.[LABEL] === 'payments' && copy.metadata.annotations?.[ANNOTATION] === 'hello' ? copy : undefined;
  }, { what: 'the copy with the label and the annotation on spoke-1', context: agentLogs });

  await apply(hub, labelled(AUTH_POLICIES, 'AuthPolicy', 'auth', {}, {}));
  const name = workName({ group: 'kuadrant.io', resource: 'authpolicies' }, ns, 'auth');
  await eventually(async () => {
    const work = (await ourWorks(hub, { controllerName, namespace: 'spoke-1' })).find((w) => w.metadata.name === name);
    const copy = (work?.spec as { workload: { manifests: KubeObject[] } } | undefined)?.workload.manifests[0];
    return copy?.metadata.annotations?.['policysync.kuadrant.io/dropped-keys'] === `{"annotations":["${ANNOTATION}"],"labels":["${LABEL}"]}` || undefined;
  }, { what: 'the work naming the dropped label and annotation', context: agentLogs });
  const now = await eventually(async () => {
    const copy = await get(spoke1, AUTH_POLICIES, ns, 'auth');
    const named = copy?.metadata.annotations?.['policysync.kuadrant.io/dropped-keys'] !== undefined;
    return named && copy?.metadata.labels?.[LABEL] === undefined && copy.metadata.annotations?.[ANNOTATION] === undefined ? copy : undefined;
  }, { what: 'the copy on spoke-1 naming them, and without them', context: agentLogs });
  assert.equal(now.metadata.uid, first.metadata.uid, 'the same copy, updated in place');
  // A team's own policy naming keys as dropped (say, copied from a copy) is not the sync's: the agent leaves it whole.
  // (On a Gateway the hub policy does not target: it must not override the copy.)
  const teams = authPolicy(ns, 'teams-own', 'teams-gateway');
  const own = await apply(spoke1, { ...teams, metadata: { ...teams.metadata, labels: { [LABEL]: 'payments' }, annotations: { 'policysync.kuadrant.io/dropped-keys': `{"annotations":[],"labels":["${LABEL}"]}` } } });
  await quiescent(controller!.controller, 'the hub settled');
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const ownNow = await get(spoke1, AUTH_POLICIES, ns, 'teams-own');
  assert.equal(ownNow?.metadata.labels?.[LABEL], 'payments', "a team's own policy keeps its label");
  assert.equal(ownNow?.metadata.resourceVersion, own.metadata.resourceVersion, "a team's own policy is not written");
  await remove(spoke1, own);
  for (const key of [...Object.keys(now.metadata.labels ?? {}), ...Object.keys(now.metadata.annotations ?? {})]) assert.doesNotMatch(key, /-$/, 'no removal marker reached the spoke');

  // A restart on the unchanged world: the copy computed against what the work places names the same keys; no work is written.
  await quiescent(controller!.controller, 'the hub settled');
  await controller!.stop();
  const hubWrites = AuditCursor.at(sandbox, 'hub');
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG });
  await quiescent(controller.controller, 'the restarted hub settled');
  const writes = hubWrites.since().filter((w) => w.resource === 'manifestworks' && w.name === name);
  assert.deepEqual(writes.map(describeWrite), [], 'no write of the work after the restart');
});

test('a kind applied by ServerSideApply (no status subresource): the removed label and annotation leave the copy', { timeout: 120_000 }, async () => {
  const spoke1 = spokes.get('spoke-1')!;
  await serverSideApply(hub, PLAIN, labelled(PLAIN, 'PlainPolicy', 'plain', { [LABEL]: 'payments' }, { [ANNOTATION]: 'hello' }), { fieldManager: FIELD_MANAGER });
  let status: string | undefined;
  const first = await eventually(async () => {
    status = `${(await get(hub, PLAIN, ns, 'plain'))?.metadata.annotations?.['policysync.kuadrant.io/status']}; class: ${JSON.stringify((await get(hub, RESOURCES.gatewayClasses, undefined, className))?.status)}`;
    const copy = await get(spoke1, PLAIN, ns, 'plain');
    return copy?.metadata.labels?.[LABEL] === 'payments' && copy.metadata.annotations?.[ANNOTATION] === 'hello' ? copy : undefined;
  }, { what: 'the PlainPolicy copy with the label and the annotation on spoke-1', context: () => `hub status: ${status}\n${agentLogs()}` });
  await serverSideApply(hub, PLAIN, labelled(PLAIN, 'PlainPolicy', 'plain', {}, {}), { fieldManager: FIELD_MANAGER });
  const now = await eventually(async () => {
    const copy = await get(spoke1, PLAIN, ns, 'plain');
    return copy && copy.metadata.labels?.[LABEL] === undefined && copy.metadata.annotations?.[ANNOTATION] === undefined ? copy : undefined;
  }, { what: 'the label and the annotation gone from the PlainPolicy copy', context: agentLogs });
  assert.equal(now.metadata.uid, first.metadata.uid);
  assert.equal(now.metadata.annotations?.['policysync.kuadrant.io/dropped-keys'], undefined, 'nothing named under ServerSideApply');
});
