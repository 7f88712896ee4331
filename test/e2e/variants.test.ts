// PolicyVariants end to end on the real plane: OCM's registration agents report the spokes' ClusterClaims into
// their ManagedClusters on the hub, the hub renders each cluster's copy with the variants reading those claims and
// the ManagedCluster labels, and OCM's work agents apply the copies to the spokes' apiservers, whose real CRDs
// (kuadrant-operator's RateLimitPolicy and DNSPolicy) accept them. A claim changed on a spoke rewrites that
// cluster's copy only.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, type ResourceRef } from '../../src/kube/resource.ts';
import { deleteObject, mergePatch, serverSideApply } from '../../src/kube/writes.ts';
import { eventually } from '../../testkit/eventually.ts';
import { RATE_LIMIT_POLICIES, apply, createNamespace, gateway, gatewayClass, get, paramsConfigMap, placementDecision, rateLimitPolicy, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, releaseSpokes, spokeClients, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';

const CLUSTER_CLAIMS: ResourceRef = { group: 'cluster.open-cluster-management.io', version: 'v1alpha1', resource: 'clusterclaims', namespaced: false };
const DNS_POLICIES: ResourceRef = { group: 'kuadrant.io', version: 'v1', resource: 'dnspolicies', namespaced: true };
const FIELD_MANAGER = 'policy-sync-tests';
const GEO_LABEL = 'kuadrant.io/lb-attribute-geo-code';
/** multicluster-gateway-controller's weight label: a string on the ManagedCluster, an integer in the copy. */
const WEIGHT_LABEL = 'kuadrant.io/lb-attribute-custom-weight';

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub;
const controllerName = testControllerName('variants-e2e');
const ns = uniqueName('variants-e2e');
const className = uniqueName('class');
/** A claim of this run's own (cluster-scoped on each spoke), and the spoke that makes it. */
const CLAIM = `${ns}.limit.example.com`;
const CLAIMING = 'spoke-2';
const OTHER = 'spoke-1';

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  for (const spoke of spokes.values()) {
    await createNamespace(spoke, ns);
    await apply(spoke, gateway(ns, 'gw', 'spoke-gateways'));
  }
  await createNamespace(hub, ns);
  await apply(
    hub,
    paramsConfigMap(ns, 'params', {
      policiesToSync: [
        { group: 'kuadrant.io', version: 'v1', resource: 'ratelimitpolicies' },
        { group: 'kuadrant.io', version: 'v1', resource: 'dnspolicies' },
      ],
    }),
  );
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(hub, gateway(ns, 'gw', className, 'all-spokes'));
  await apply(hub, placementDecision(ns, 'all-spokes', sandbox.spokes.map((s) => s.name)));
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName });
});

after(async () => {
  await controller.stop();
  await deleteObject(spoke(CLAIMING), CLUSTER_CLAIMS, undefined, CLAIM).catch(() => undefined);
  for (const s of sandbox.spokes) await mergePatch(hub, RESOURCES.managedClusters, undefined, s.name, { metadata: { labels: { [GEO_LABEL]: null, [WEIGHT_LABEL]: null } } }).catch(() => undefined);
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }));
  await removeNamespace(hub, ns);
  await releaseSpokes(spokes, ns);
  hub.destroy();
});

function spoke(name: string): KubeHttp {
  const http = spokes.get(name);
  assert.ok(http, `a client for ${name}`);
  return http;
}

const agentLogs = (): string => workAgentLogs(sandbox, 15);

async function claim(value: string): Promise<void> {
  await serverSideApply(spoke(CLAIMING), CLUSTER_CLAIMS, { apiVersion: 'cluster.open-cluster-management.io/v1alpha1', kind: 'ClusterClaim', metadata: { name: CLAIM }, spec: { value } }, { fieldManager: FIELD_MANAGER });
}

function variant(name: string, kind: string, target: string, entries: unknown[]): KubeObject {
  return { apiVersion: 'policysync.kuadrant.io/v1alpha1', kind: 'PolicyVariant', metadata: { namespace: ns, name }, spec: { targetRef: { group: 'kuadrant.io', kind, name: target }, entries } };
}

const limitOf = (copy: KubeObject | undefined): unknown => ((copy?.spec as { limits?: { global?: { rates?: { limit?: unknown }[] } } } | undefined)?.limits?.global?.rates ?? [])[0]?.limit;

test(`a ClusterClaim made on ${CLAIMING} reaches the hub through its registration agent, and a variant reading it gives that cluster's copy its own rate limit, as an integer the spoke's CRD accepts`, async () => {
  await claim('42');
  await eventually(
    async () => {
      const cluster = await get(hub, RESOURCES.managedClusters, undefined, CLAIMING);
      return ((cluster?.status as { clusterClaims?: { name: string; value: string }[] } | undefined)?.clusterClaims ?? []).some((c) => c.name === CLAIM && c.value === '42');
    },
    { what: `the claim ${CLAIM} in ManagedCluster ${CLAIMING}'s status (the registration agent's report)`, timeoutMs: 60_000 },
  );
  await apply(hub, rateLimitPolicy(ns, 'rl', 'gw'));
  await apply(hub, variant('limits', 'RateLimitPolicy', 'rl', [{ clusters: { claimSelector: { matchExpressions: [{ key: CLAIM, operator: 'Exists' }] } }, values: [{ path: 'spec.limits.global.rates[0].limit', valueFrom: { clusterClaim: { name: CLAIM } } }] }]));

  const claimed = await eventually(async () => {
    const copy = await get(spoke(CLAIMING), RATE_LIMIT_POLICIES, ns, 'rl');
    return limitOf(copy) === 42 ? copy : undefined;
  }, { what: `the copy on ${CLAIMING} at limit 42`, context: agentLogs, timeoutMs: 60_000 });
  assert.equal(claimed.metadata.annotations?.['policysync.kuadrant.io/variants'], 'limits@1');
  const other = await eventually(async () => get(spoke(OTHER), RATE_LIMIT_POLICIES, ns, 'rl'), { what: `the copy on ${OTHER}`, context: agentLogs });
  assert.equal(limitOf(other), 10, `${OTHER} makes no claim: the policy's own limit`);

  // The claim changed on the spoke: that cluster's copy follows; the other's is not written.
  const otherVersion = other.metadata.resourceVersion;
  await claim('7');
  await eventually(async () => limitOf(await get(spoke(CLAIMING), RATE_LIMIT_POLICIES, ns, 'rl')) === 7 || undefined, { what: `the copy on ${CLAIMING} at limit 7`, context: agentLogs, timeoutMs: 60_000 });
  assert.equal((await get(spoke(OTHER), RATE_LIMIT_POLICIES, ns, 'rl'))?.metadata.resourceVersion, otherVersion, `${OTHER}'s copy untouched`);
});

test('a DNSPolicy (the real CRD on every spoke) whose copies carry each cluster\'s geo and weight from its ManagedCluster labels (multicluster-gateway-controller\'s own), the weight an integer', async () => {
  const wanted = { [OTHER]: { geo: 'EU', weight: 200 }, [CLAIMING]: { geo: 'NA', weight: 50 } };
  for (const [cluster, { geo, weight }] of Object.entries(wanted)) {
    await mergePatch(hub, RESOURCES.managedClusters, undefined, cluster, { metadata: { labels: { [GEO_LABEL]: geo, [WEIGHT_LABEL]: String(weight) } } });
  }
  await apply(hub, {
    apiVersion: 'kuadrant.io/v1',
    kind: 'DNSPolicy',
    metadata: { namespace: ns, name: 'dns' },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }, providerRefs: [{ name: 'dns-provider' }], loadBalancing: { geo: 'US', weight: 120, defaultGeo: false } },
  });
  await apply(
    hub,
    variant('geo', 'DNSPolicy', 'dns', [
      {
        values: [
          { path: 'spec.loadBalancing.geo', valueFrom: { clusterLabel: { key: GEO_LABEL } } },
          { path: 'spec.loadBalancing.weight', valueFrom: { clusterLabel: { key: WEIGHT_LABEL } } },
        ],
      },
    ]),
  );
  for (const [cluster, { geo, weight }] of Object.entries(wanted)) {
    const copy = await eventually(async () => {
      const c = await get(spoke(cluster), DNS_POLICIES, ns, 'dns');
      return (c?.spec as { loadBalancing?: { geo?: string } } | undefined)?.loadBalancing?.geo === geo ? c : undefined;
    }, { what: `the DNSPolicy copy on ${cluster} with geo ${geo}`, context: agentLogs, timeoutMs: 60_000 });
    assert.deepEqual((copy.spec as { loadBalancing?: unknown }).loadBalancing, { geo, weight, defaultGeo: false });
  }
});
