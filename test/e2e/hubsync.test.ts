// The hub half end to end: a Kuadrant AuthPolicy and RateLimitPolicy authored once on the hub appear on
// both spokes — through the hub controller, ManifestWorks and the real OCM work agents — in the
// downstream namespace, with the target rewritten and the sync annotations; deleting them on the hub
// removes them from both spokes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { eventually } from '../../testkit/eventually.ts';
import {
  AUTH_POLICIES,
  RATE_LIMIT_POLICIES,
  apply,
  authPolicy,
  createNamespace,
  gateway,
  gatewayClass,
  get,
  paramsConfigMap,
  placementDecision,
  rateLimitPolicy,
  remove,
  removeNamespace,
} from '../../testkit/fixtures.ts';
import { hubHttp, startHub, testControllerName, uniqueName, type RunningHub, releaseSpokes, spokeClients } from '../../testkit/hub.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub;
const controllerName = testControllerName('e2e');
const ns = uniqueName('e2e');
const downstream = `kuadrant-${ns}`;
const className = uniqueName('class');

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  // On each spoke: the downstream namespace and Gateway the copies attach to.
  for (const spoke of spokes.values()) {
    await createNamespace(spoke, downstream);
    await apply(spoke, gateway(downstream, 'gw', 'spoke-gateways'));
  }
  await createNamespace(hub, ns);
  await apply(hub, paramsConfigMap(ns, 'params', {
    policiesToSync: [
      { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' },
      { group: 'kuadrant.io', version: 'v1', resource: 'ratelimitpolicies' },
    ],
    downstreamNamespace: 'kuadrant-{namespace}',
  }));
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(hub, gateway(ns, 'gw', className, 'all-spokes'));
  await apply(hub, placementDecision(ns, 'all-spokes', sandbox.spokes.map((s) => s.name)));
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName });
});

after(async () => {
  await controller.stop();
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }));
  await removeNamespace(hub, ns);
  await releaseSpokes(spokes, downstream);
  hub.destroy();
});

const agentLogs = (): string => workAgentLogs(sandbox, 15);

for (const [kind, resource, build] of [
  ['AuthPolicy', AUTH_POLICIES, authPolicy],
  ['RateLimitPolicy', RATE_LIMIT_POLICIES, rateLimitPolicy],
] as const) {
  test(`${kind}: authored once on the hub, placed on both spokes rewritten, removed with it`, async () => {
    const name = uniqueName(kind.toLowerCase());
    await apply(hub, build(ns, name, 'gw'));
    const hubPolicy = (await get(hub, resource, ns, name))!;

    for (const [cluster, spoke] of spokes) {
      const copy: KubeObject = await eventually(async () => get(spoke, resource, downstream, name), {
        what: `${kind} ${downstream}/${name} on ${cluster}`,
        context: agentLogs,
      });
      assert.deepEqual((copy.spec as { targetRef: unknown }).targetRef, { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' });
      assert.equal(copy.metadata.annotations?.['kuadrant.io/policy-synced'], `${ns}/${name}`);
      assert.equal(copy.metadata.annotations?.['kuadrant.io/origin-creation'], hubPolicy.metadata.creationTimestamp);
      assert.equal(copy.metadata.annotations?.['kuadrant.io/policies-synced'], undefined, 'hub-only annotations stay on the hub');
      const { targetRef: _hubTarget, ...hubRest } = hubPolicy.spec as Record<string, unknown>;
      const { targetRef: _copyTarget, ...copyRest } = copy.spec as Record<string, unknown>;
      assert.deepEqual(copyRest, hubRest, 'the rest of the spec is carried over unchanged');
    }
    const synced = await eventually(async () => (await get(hub, resource, ns, name))?.metadata.annotations?.['kuadrant.io/policies-synced'], {
      what: 'kuadrant.io/policies-synced on the hub policy',
    });
    assert.deepEqual(JSON.parse(synced), sandbox.spokes.map((s) => ({ cluster: s.name, name, namespace: downstream })));

    await remove(hub, build(ns, name, 'gw'));
    for (const [cluster, spoke] of spokes) {
      await eventually(async () => (await get(spoke, resource, downstream, name)) === undefined, {
        what: `${kind} ${downstream}/${name} to be removed from ${cluster}`,
        context: agentLogs,
      });
    }
  });
}
