// The real spoke policy controllers on the sandbox's spokes, on their own (no hub sync): what the Kuadrant
// operator v1.2.0 and Envoy Gateway v1.5.0, built by hack/build-components.sh, write on the policies the hub
// will read back — Kuadrant's Accepted/Enforced conditions and precedence (newer wins), Envoy Gateway's
// GEP-713 ancestors and precedence (oldest wins). Runs on a sandbox of its own, started with
// `spokeControllers` (Envoy Gateway needs root) and stopped and deleted afterwards.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { repoRoot } from '../../hack/sandbox/layout.ts';
import { logTail } from '../../hack/sandbox/processes.ts';
import { Sandbox } from '../../hack/sandbox/sandbox.ts';
import { ENVOY_GATEWAY_CONTROLLER_NAME, ENVOY_GATEWAY_SPOKE, KUADRANT_NAMESPACE } from '../../hack/sandbox/spokecontrollers.ts';
import type { KubeObject } from '../../src/core/objects.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, type ResourceRef } from '../../src/kube/resource.ts';
import { deleteObject, getObject, serverSideApply } from '../../src/kube/writes.ts';
import { eventually } from '../support/eventually.ts';
import { AUTH_POLICIES, authPolicy, createNamespace, gateway } from '../support/fixtures.ts';
import { uniqueName } from '../support/hub.ts';

const root = join(repoRoot, '.local', 'spoke-controllers-sandbox');
const FIELD_MANAGER = 'policy-sync-tests';
const HTTP_ROUTES: ResourceRef = { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'httproutes', namespaced: true };
const KUADRANTS: ResourceRef = { group: 'kuadrant.io', version: 'v1beta1', resource: 'kuadrants', namespaced: true };
const BACKEND_TRAFFIC_POLICIES: ResourceRef = { group: 'gateway.envoyproxy.io', version: 'v1alpha1', resource: 'backendtrafficpolicies', namespaced: true };
/** The spoke without Envoy Gateway, where no Kuadrant CR is ever created. */
const BARE_SPOKE = 'spoke-2';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
}
interface AncestorStatus {
  ancestorRef: { group?: string; kind?: string; name: string; namespace?: string };
  controllerName: string;
  conditions: Condition[];
}
interface PolicyStatus {
  conditions?: Condition[];
  ancestors?: AncestorStatus[];
}
type Policy = KubeObject & { status?: PolicyStatus };

let sandbox: Sandbox;
const clients = new Map<string, KubeHttp>();

before(async () => {
  sandbox = await Sandbox.up({ root, spokeControllers: ['kuadrant', 'envoy-gateway'], log: () => undefined, timeoutMs: 180_000 });
  for (const spoke of sandbox.spokes) clients.set(spoke.name, new KubeHttp(sandbox.kubeConfig(spoke.name)));
});

after(async () => {
  for (const http of clients.values()) http.destroy();
  await sandbox?.down({ purge: true });
});

function spoke(name: string): KubeHttp {
  const http = clients.get(name);
  assert.ok(http, `a client for ${name}`);
  return http;
}

function logs(component: string): () => string {
  return () => `${component} log (${sandbox.logOf(component)}):\n${logTail(sandbox.logOf(component), 20)}`;
}

function apply(http: KubeHttp, resource: ResourceRef, object: KubeObject): Promise<KubeObject> {
  return serverSideApply(http, resource, object, { fieldManager: FIELD_MANAGER });
}

async function read(http: KubeHttp, resource: ResourceRef, namespace: string, name: string): Promise<Policy> {
  const object = await getObject<Policy>(http, resource, namespace, name);
  assert.ok(object, `${resource.resource} ${namespace}/${name} exists`);
  return object;
}

function condition(policy: Policy, type: string): Condition | undefined {
  return policy.status?.conditions?.find((c) => c.type === type);
}

/** Condition fields that say what the controller decided (times and generations left out). */
function verdict(c: Condition | undefined): Pick<Condition, 'status' | 'reason' | 'message'> | undefined {
  return c && { status: c.status, reason: c.reason, message: c.message };
}

/**
 * Both controllers order policies by creationTimestamp, which has one-second resolution (ties broken by name):
 * waits until the apiserver's clock, this machine's, is past the second `object` was created in.
 */
async function pastCreationSecond(object: KubeObject): Promise<void> {
  const created = new Date(object.metadata.creationTimestamp ?? NaN).getTime();
  assert.ok(Number.isFinite(created), `${object.metadata.name} has a creationTimestamp`);
  await eventually(() => Promise.resolve(Date.now() >= created + 1000), { what: `the second after ${new Date(created).toISOString()}`, intervalMs: 50 });
}

function gatewayClass(name: string): KubeObject {
  return { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name }, spec: { controllerName: ENVOY_GATEWAY_CONTROLLER_NAME } };
}

function httpRoute(ns: string, name: string, gatewayName: string): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace: ns },
    spec: { parentRefs: [{ name: gatewayName }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }] }] },
  };
}

function backendTrafficPolicy(ns: string, name: string, gatewayName: string | undefined, connectTimeout: string): KubeObject {
  return {
    apiVersion: 'gateway.envoyproxy.io/v1alpha1',
    kind: 'BackendTrafficPolicy',
    metadata: { name, namespace: ns },
    spec: {
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: gatewayName }],
      timeout: { tcp: { connectTimeout } },
    },
  };
}

test('the sandbox runs the Kuadrant operator on every spoke and Envoy Gateway on spoke-1', async (t) => {
  assert.deepEqual(sandbox.spokeControllers, ['kuadrant', 'envoy-gateway']);
  const controllers = (await sandbox.status()).filter((s) => s.name.startsWith('kuadrant-operator/') || s.name.startsWith('envoy-gateway/'));
  for (const s of controllers) t.diagnostic(`${s.name}: pid ${s.pid} ${s.ready ? 'ready' : 'NOT READY'} at ${s.endpoint}`);
  assert.deepEqual(
    controllers.map((s) => s.name).sort(),
    [...sandbox.spokes.map((s) => `kuadrant-operator/${s.name}`), `envoy-gateway/${ENVOY_GATEWAY_SPOKE}`].sort(),
  );
  for (const s of controllers) assert.ok(s.ready, `${s.name} is ready (log: ${s.log})`);
});

test('Kuadrant operator: an AuthPolicy on a Gateway is Accepted and, with no Kuadrant CR, Enforced=False MissingResource; one on a missing Gateway is TargetNotFound', async (t) => {
  const http = spoke(BARE_SPOKE);
  const ns = uniqueName('kuadrant-status');
  const className = uniqueName('eg');
  await createNamespace(http, ns);
  await apply(http, RESOURCES.gatewayClasses, gatewayClass(className));
  await apply(http, RESOURCES.gateways, gateway(ns, 'shop', className));
  await apply(http, AUTH_POLICIES, authPolicy(ns, 'shop-auth', 'shop'));
  await apply(http, AUTH_POLICIES, authPolicy(ns, 'nowhere-auth', 'nowhere'));

  const context = logs(`kuadrant-operator/${BARE_SPOKE}`);
  const accepted = await eventually(async () => {
    const p = await read(http, AUTH_POLICIES, ns, 'shop-auth');
    return condition(p, 'Accepted') && condition(p, 'Enforced') && p;
  }, { what: `the Kuadrant operator's status on ${ns}/shop-auth`, context });
  t.diagnostic(`shop-auth status: ${JSON.stringify(accepted.status)}`);
  assert.deepEqual(verdict(condition(accepted, 'Accepted')), { status: 'True', reason: 'Accepted', message: 'AuthPolicy has been accepted' });
  assert.deepEqual(verdict(condition(accepted, 'Enforced')), { status: 'False', reason: 'MissingResource', message: 'kuadrant is not installed, please create resource' });

  const missing = await eventually(async () => {
    const p = await read(http, AUTH_POLICIES, ns, 'nowhere-auth');
    return condition(p, 'Accepted') && p;
  }, { what: `the Kuadrant operator's status on ${ns}/nowhere-auth`, context });
  t.diagnostic(`nowhere-auth status: ${JSON.stringify(missing.status)}`);
  assert.deepEqual(verdict(condition(missing, 'Accepted')), { status: 'False', reason: 'TargetNotFound', message: 'AuthPolicy target nowhere was not found' });
  // The whole status is written at once: a policy that is not accepted gets no Enforced condition at all.
  assert.equal(condition(missing, 'Enforced'), undefined);
});

test('Kuadrant operator: of two AuthPolicies on one Gateway the newer wins; the older is Enforced=False Overridden, until the newer goes', async (t) => {
  const http = spoke(ENVOY_GATEWAY_SPOKE);
  const ns = uniqueName('kuadrant-precedence');
  const className = uniqueName('eg');
  await createNamespace(http, ns);
  // Kuadrant computes Enforced only through routes whose listener is Programmed and which the Gateway's
  // controller Accepted: Envoy Gateway does both here, with no pods. The Kuadrant CR makes the operator go
  // past MissingResource (it creates Authorino, Limitador, an AuthConfig, an EnvoyPatchPolicy and an
  // EnvoyExtensionPolicy, which no pods ever make ready).
  await apply(http, RESOURCES.gatewayClasses, gatewayClass(className));
  await apply(http, RESOURCES.gateways, gateway(ns, 'shop', className));
  await apply(http, HTTP_ROUTES, httpRoute(ns, 'shop', 'shop'));
  await apply(http, KUADRANTS, { apiVersion: 'kuadrant.io/v1beta1', kind: 'Kuadrant', metadata: { name: 'kuadrant', namespace: KUADRANT_NAMESPACE }, spec: {} });

  const context = logs(`kuadrant-operator/${ENVOY_GATEWAY_SPOKE}`);
  const withEnforced = (name: string) => async (): Promise<Policy | undefined> => {
    const p = await read(http, AUTH_POLICIES, ns, name);
    return condition(p, 'Enforced') ? p : undefined;
  };
  const older = await apply(http, AUTH_POLICIES, authPolicy(ns, 'older', 'shop'));
  // Alone, it waits for the components that pods would make ready: Enforced=False, reason Unknown.
  const alone = await eventually(async () => {
    const p = await withEnforced('older')();
    return p && condition(p, 'Enforced')?.message.includes('waiting for the following components to sync') && p;
  }, { what: `${ns}/older waiting for components`, context, timeoutMs: 90_000 });
  t.diagnostic(`older, alone: ${JSON.stringify(alone.status)}`);
  assert.equal(condition(alone, 'Enforced')?.reason, 'Unknown');

  await pastCreationSecond(older);
  await apply(http, AUTH_POLICIES, authPolicy(ns, 'newer', 'shop'));
  const overridden = await eventually(async () => {
    const p = await withEnforced('older')();
    return p && condition(p, 'Enforced')?.reason === 'Overridden' && p;
  }, { what: `${ns}/older overridden by ${ns}/newer`, context });
  t.diagnostic(`older, with newer: ${JSON.stringify(overridden.status)}`);
  assert.deepEqual(verdict(condition(overridden, 'Accepted')), { status: 'True', reason: 'Accepted', message: 'AuthPolicy has been accepted' });
  assert.deepEqual(verdict(condition(overridden, 'Enforced')), { status: 'False', reason: 'Overridden', message: `AuthPolicy is overridden by [${ns}/newer]` });

  // The winner: Accepted, and Enforced=False only because Authorino, its AuthConfig, the EnvoyPatchPolicy
  // and the EnvoyExtensionPolicy are not ready — their pods would make them so, and this plane runs none.
  // Enforced=True is not observable here without playing those components.
  const newer = await eventually(withEnforced('newer'), { what: `the Kuadrant operator's status on ${ns}/newer`, context });
  t.diagnostic(`newer: ${JSON.stringify(newer.status)}`);
  assert.deepEqual(verdict(condition(newer, 'Accepted')), { status: 'True', reason: 'Accepted', message: 'AuthPolicy has been accepted' });
  assert.equal(condition(newer, 'Enforced')?.status, 'False');
  assert.equal(condition(newer, 'Enforced')?.reason, 'Unknown');
  assert.match(condition(newer, 'Enforced')?.message ?? '', /^AuthPolicy waiting for the following components to sync: \[.*Authorino.*EnvoyPatchPolicy.*EnvoyExtensionPolicy/);

  const gw = await getObject<Policy>(http, RESOURCES.gateways, ns, 'shop');
  const affected = gw && condition(gw, 'kuadrant.io/AuthPolicyAffected');
  t.diagnostic(`Gateway kuadrant.io/AuthPolicyAffected: ${JSON.stringify(affected)}`);
  assert.equal(affected?.status, 'True');

  // The newer gone, the older is no longer overridden: it waits for its components again.
  await deleteObject(http, AUTH_POLICIES, ns, 'newer');
  const restored = await eventually(async () => {
    const p = await withEnforced('older')();
    return p && condition(p, 'Enforced')?.reason !== 'Overridden' && p;
  }, { what: `${ns}/older no longer overridden once ${ns}/newer is deleted`, context });
  t.diagnostic(`older, newer deleted: ${JSON.stringify(restored.status)}`);
  assert.equal(condition(restored, 'Enforced')?.reason, 'Unknown');
});

test('Envoy Gateway: a BackendTrafficPolicy on a Gateway gets an Accepted ancestor; of two, the older keeps it and the newer is Conflicted', async (t) => {
  const http = spoke(ENVOY_GATEWAY_SPOKE);
  const ns = uniqueName('eg-precedence');
  const className = uniqueName('eg');
  await createNamespace(http, ns);
  await apply(http, RESOURCES.gatewayClasses, gatewayClass(className));
  await apply(http, RESOURCES.gateways, gateway(ns, 'shop', className));
  // Created first: by the time a later policy has its status, Envoy Gateway has translated this one too.
  await apply(http, BACKEND_TRAFFIC_POLICIES, backendTrafficPolicy(ns, 'nowhere', 'nowhere', '3s'));
  const olderCreated = await apply(http, BACKEND_TRAFFIC_POLICIES, backendTrafficPolicy(ns, 'older', 'shop', '5s'));

  const context = logs(`envoy-gateway/${ENVOY_GATEWAY_SPOKE}`);
  const ancestors = (name: string) => async (): Promise<AncestorStatus[] | undefined> => {
    const p = await read(http, BACKEND_TRAFFIC_POLICIES, ns, name);
    return p.status?.ancestors?.length ? p.status.ancestors : undefined;
  };
  const gatewayAncestor = { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'shop', namespace: ns };
  const olderAlone = await eventually(ancestors('older'), { what: `Envoy Gateway's status on ${ns}/older`, context, timeoutMs: 90_000 });
  t.diagnostic(`older: ${JSON.stringify(olderAlone)}`);
  assert.equal(olderAlone.length, 1);
  assert.deepEqual(olderAlone[0]!.ancestorRef, gatewayAncestor);
  assert.equal(olderAlone[0]!.controllerName, ENVOY_GATEWAY_CONTROLLER_NAME);
  assert.deepEqual(olderAlone[0]!.conditions.map(verdict), [{ status: 'True', reason: 'Accepted', message: 'Policy has been accepted.' }]);
  assert.equal(olderAlone[0]!.conditions[0]!.observedGeneration, 1);
  // A policy whose target does not exist gets no status at all (the hub must not wait for one for ever).
  assert.equal((await read(http, BACKEND_TRAFFIC_POLICIES, ns, 'nowhere')).status?.ancestors, undefined);

  await pastCreationSecond(olderCreated);
  await apply(http, BACKEND_TRAFFIC_POLICIES, backendTrafficPolicy(ns, 'newer', 'shop', '6s'));
  const newer = await eventually(ancestors('newer'), { what: `Envoy Gateway's status on ${ns}/newer`, context });
  t.diagnostic(`newer: ${JSON.stringify(newer)}`);
  assert.equal(newer.length, 1);
  assert.deepEqual(newer[0]!.ancestorRef, gatewayAncestor);
  assert.equal(newer[0]!.controllerName, ENVOY_GATEWAY_CONTROLLER_NAME);
  assert.deepEqual(newer[0]!.conditions.map(verdict), [
    { status: 'False', reason: 'Conflicted', message: 'Unable to target Gateway shop, another BackendTrafficPolicy has already attached to it' },
  ]);
  // Written in the same translation as the newer's: the older keeps the Gateway.
  const olderAfter = await ancestors('older')();
  t.diagnostic(`older, with newer: ${JSON.stringify(olderAfter)}`);
  assert.deepEqual(olderAfter?.map((a) => a.conditions.map(verdict)), [[{ status: 'True', reason: 'Accepted', message: 'Policy has been accepted.' }]]);
});
