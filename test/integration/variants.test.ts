// PolicyVariants against the real hub apiserver and the kinds' real CRDs (kuadrant-operator's DNSPolicy and
// RateLimitPolicy): each cluster's copy gets its own values, checked against the schema the hub serves before it
// is written; a cluster that cannot be rendered keeps the work it runs; a label a variant reads rewrites that
// cluster's work only; the variant's status says what it came to. Works are checked on the hub (no spokes).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Condition } from '../../src/core/k8s/conditions.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { workCopy } from '../../src/core/works/revision.ts';
import type { PolicyStatus } from '../../src/core/status/policystatus.ts';
import { ApiError, type KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { eventually } from '../../testkit/eventually.ts';
import { apply, createNamespace, gateway, gatewayClass, get, paramsConfigMap, placementDecision, rateLimitPolicy, remove, removeNamespace, resourceOf } from '../../testkit/fixtures.ts';
import { hubHttp, quiescent, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { hubStatus } from '../../testkit/status.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';
import { ourWorks } from '../../testkit/works.ts';

const DNS = { group: 'kuadrant.io', version: 'v1', resource: 'dnspolicies' };
const RLP = { group: 'kuadrant.io', version: 'v1', resource: 'ratelimitpolicies' };
const GEO_LABEL = 'kuadrant.io/lb-attribute-geo-code';
const WEIGHT_LABEL = 'kuadrant.io/lb-attribute-custom-weight';

let http: KubeHttp;
let hub: RunningHub;
const controllerName = testControllerName('variants');
const ns = uniqueName('variants');
const [c1, c2, c3] = [`${ns}-c1`, `${ns}-c2`, `${ns}-c3`];
const className = uniqueName('class');
const created: KubeObject[] = [];

function managedCluster(name: string, labels: Record<string, string>, claims: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name, labels },
    spec: { hubAcceptsClient: false },
    status: { clusterClaims: Object.entries(claims).map(([n, value]) => ({ name: n, value })) },
  };
}

function dnsPolicy(name: string): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'DNSPolicy',
    metadata: { namespace: ns, name },
    spec: {
      targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' },
      providerRefs: [{ name: 'dns-provider' }],
      loadBalancing: { geo: 'US', weight: 120, defaultGeo: false },
    },
  };
}

function variant(name: string, targetKind: string, target: string, entries: unknown[]): KubeObject {
  return { apiVersion: 'policysync.kuadrant.io/v1alpha1', kind: 'PolicyVariant', metadata: { namespace: ns, name }, spec: { targetRef: { group: 'kuadrant.io', kind: targetKind, name: target }, entries } };
}

async function put(object: KubeObject): Promise<void> {
  await apply(http, object);
  if (!created.includes(object)) created.push(object);
}

before(async () => {
  const sandbox = await testSandbox();
  http = hubHttp(sandbox);
  for (const n of [ns, c1, c2, c3]) await createNamespace(http, n);
  await put(managedCluster(c1, { [GEO_LABEL]: 'EU', [WEIGHT_LABEL]: '150' }, { 'region.open-cluster-management.io': 'eu-west-1' }));
  await put(managedCluster(c2, { [GEO_LABEL]: 'NA' }));
  await put(managedCluster(c3, {}));
  await apply(http, paramsConfigMap(ns, 'params', { policiesToSync: [DNS, RLP] }));
  await apply(http, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(http, gateway(ns, 'gw', className, 'everywhere'));
  await apply(http, placementDecision(ns, 'everywhere', [c1, c2, c3]));
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName });
});

after(async () => {
  for (const w of await ourWorks(http, { controllerName })) await remove(http, w);
  await hub.stop();
  for (const o of created.reverse()) await remove(http, o);
  await remove(http, gatewayClass(className, { namespace: ns, name: 'params' }));
  for (const n of [ns, c1, c2, c3]) await removeNamespace(http, n);
  http.destroy();
});

/** The policy's works, by cluster. */
async function worksOf(resource: string, name: string): Promise<Map<string, KubeObject>> {
  const works = (await ourWorks(http, { controllerName })).filter((w) => {
    const ref = JSON.parse(w.metadata.annotations?.['policysync.kuadrant.io/source-ref'] ?? '{}') as { resource?: string; name?: string };
    return ref.resource === resource && ref.name === name;
  });
  return new Map(works.map((w) => [w.metadata.namespace ?? '', w]));
}

function spec(work: KubeObject | undefined): Record<string, unknown> {
  return workCopy(work)?.spec ?? {};
}

interface VariantStatus {
  clusters?: number;
  failing?: number;
  failures?: { cluster: string; reason: string }[];
  conditions?: Condition[];
}

async function variantStatus(name: string): Promise<VariantStatus | undefined> {
  const status: unknown = (await get(http, RESOURCES.policyVariants, ns, name))?.status;
  return status as VariantStatus | undefined;
}

function condition(status: { conditions?: Condition[] } | undefined, type: string): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

test('a DNSPolicy whose geo and weight come from each cluster\'s labels: its own values on each cluster; a cluster without the geo label gets no copy and says why', async () => {
  await put(dnsPolicy('dns'));
  await put(
    variant('geo', 'DNSPolicy', 'dns', [
      {
        values: [
          { path: 'spec.loadBalancing.geo', valueFrom: { clusterLabel: { key: GEO_LABEL } } },
          { path: 'spec.loadBalancing.weight', valueFrom: { clusterLabel: { key: WEIGHT_LABEL } }, default: '120' },
        ],
      },
    ]),
  );
  const works = await eventually(
    async () => {
      const w = await worksOf('dnspolicies', 'dns');
      return w.size === 2 && spec(w.get(c1)).loadBalancing !== undefined && workCopy(w.get(c1))?.metadata.annotations?.['policysync.kuadrant.io/variants'] === 'geo@1' ? w : undefined;
    },
    { what: 'the DNSPolicy works on c1 and c2, with the variant', timeoutMs: 30_000 },
  );
  assert.deepEqual(spec(works.get(c1)).loadBalancing, { geo: 'EU', weight: 150, defaultGeo: false });
  assert.deepEqual(spec(works.get(c2)).loadBalancing, { geo: 'NA', weight: 120, defaultGeo: false });
  assert.equal(works.has(c3), false, 'c3 lacks the geo label: no copy, never one with an empty geo');

  const status = await eventually(
    async () => {
      const s = await variantStatus('geo');
      return condition(s, 'Applied') ? s : undefined;
    },
    { what: 'the status of PolicyVariant geo', timeoutMs: 30_000 },
  );
  assert.equal(condition(status, 'Accepted')?.status, 'True');
  assert.equal(condition(status, 'Resolved')?.status, 'True');
  assert.deepEqual([condition(status, 'Applied')?.status, condition(status, 'Applied')?.reason], ['False', 'VariantValueMissing']);
  assert.match(condition(status, 'Applied')?.message ?? '', new RegExp(`${c3} keeps the copy it runs: variant geo entry 0 \\(spec\\.loadBalancing\\.geo\\): label ${GEO_LABEL.replaceAll('.', '\\.')} is not set`));
  assert.deepEqual([status?.clusters, status?.failing], [2, 1]);

  const policyStatus = await eventually(
    async () => {
      const s = await hubStatus<PolicyStatus>(http, resourceOf(dnsPolicy('dns')), ns, 'dns');
      return s?.clusters?.[c3] ? s : undefined;
    },
    { what: 'the DNSPolicy status naming c3', timeoutMs: 30_000 },
  );
  assert.deepEqual([policyStatus.clusters?.[c3]?.state, policyStatus.clusters?.[c3]?.reason], ['Failed', 'VariantValueMissing']);
  assert.deepEqual(policyStatus.clusters?.[c1]?.variants, ['geo@1'], 'the per-cluster status names the variant and its generation');
});

test('labelling the cluster writes its work and no other', async () => {
  await quiescent(hub.controller, 'before the label');
  const before = await worksOf('dnspolicies', 'dns');
  await put(managedCluster(c3, { [GEO_LABEL]: 'SA' }));
  const works = await eventually(
    async () => {
      const w = await worksOf('dnspolicies', 'dns');
      return w.has(c3) ? w : undefined;
    },
    { what: 'the work on c3 once it has its geo label', timeoutMs: 30_000 },
  );
  assert.deepEqual(spec(works.get(c3)).loadBalancing, { geo: 'SA', weight: 120, defaultGeo: false });
  await quiescent(hub.controller, 'after the label');
  const after = await worksOf('dnspolicies', 'dns');
  for (const c of [c1, c2]) assert.equal(after.get(c)?.metadata.resourceVersion, before.get(c)?.metadata.resourceVersion, `${c} not written`);
  await eventually(async () => (await variantStatus('geo'))?.failing === 0 && condition(await variantStatus('geo'), 'Applied')?.status === 'True', { what: 'Applied=True once every cluster renders', timeoutMs: 30_000 });
});

test('a RateLimitPolicy with one cluster\'s limit changed; a value the schema refuses is never written, the cluster keeps its copy; deleting the variant returns it to the base copy', async () => {
  await put(rateLimitPolicy(ns, 'rl', 'gw'));
  const base = await eventually(
    async () => {
      const w = await worksOf('ratelimitpolicies', 'rl');
      return w.size === 3 ? w : undefined;
    },
    { what: 'the RateLimitPolicy on the three clusters', timeoutMs: 30_000 },
  );
  const rates = (work: KubeObject | undefined): unknown => (spec(work).limits as { global?: { rates?: unknown } } | undefined)?.global?.rates;
  assert.deepEqual(rates(base.get(c2)), [{ limit: 10, window: '1m' }]);

  // A string where the schema wants an integer: refused on the hub, nothing written.
  const broken = variant('c2-limit', 'RateLimitPolicy', 'rl', [{ clusters: { names: [c2] }, patch: { spec: { limits: { global: { rates: [{ limit: '50', window: '1m' }] } } } } }]);
  await put(broken);
  const refused = await eventually(
    async () => {
      const s = await variantStatus('c2-limit');
      return condition(s, 'Applied')?.reason === 'InvalidVariant' ? s : undefined;
    },
    { what: 'InvalidVariant on the schema-breaking variant', timeoutMs: 30_000 },
  );
  assert.match(condition(refused, 'Applied')?.message ?? '', /spec\.limits\.global\.rates\[0\]\.limit: must be integer/);
  await quiescent(hub.controller, 'after the broken variant');
  assert.equal((await worksOf('ratelimitpolicies', 'rl')).get(c2)?.metadata.resourceVersion, base.get(c2)?.metadata.resourceVersion, 'c2 keeps the work it runs');

  // Fixed: c2 alone gets 50.
  await put(variant('c2-limit', 'RateLimitPolicy', 'rl', [{ clusters: { names: [c2] }, patch: { spec: { limits: { global: { rates: [{ limit: 50, window: '1m' }] } } } } }]));
  const changed = await eventually(
    async () => {
      const w = await worksOf('ratelimitpolicies', 'rl');
      return (rates(w.get(c2)) as { limit: number }[] | undefined)?.[0]?.limit === 50 ? w : undefined;
    },
    { what: 'c2 at limit 50', timeoutMs: 30_000 },
  );
  for (const c of [c1, c3]) assert.equal(changed.get(c)?.metadata.resourceVersion, base.get(c)?.metadata.resourceVersion, `${c} not written`);

  // A second variant setting the same field of c2: a conflict; c2 keeps what it runs.
  await put(variant('c2-other', 'RateLimitPolicy', 'rl', [{ clusters: { names: [c2] }, patch: { spec: { limits: { global: { rates: [{ limit: 70, window: '1m' }] } } } } }]));
  const conflict = await eventually(
    async () => {
      const s = await variantStatus('c2-other');
      return condition(s, 'Applied')?.reason === 'VariantConflict' ? s : undefined;
    },
    { what: 'VariantConflict on the second variant', timeoutMs: 30_000 },
  );
  assert.match(condition(conflict, 'Applied')?.message ?? '', /variants c2-limit \(entry 0\) and c2-other \(entry 0\) both set spec\.limits\.global\.rates/);
  await eventually(async () => condition(await variantStatus('c2-limit'), 'Applied')?.reason === 'VariantConflict', { what: 'the conflict on the first variant too', timeoutMs: 30_000 });
  await quiescent(hub.controller, 'after the conflict');
  assert.equal((rates((await worksOf('ratelimitpolicies', 'rl')).get(c2)) as { limit: number }[])[0]?.limit, 50, 'c2 keeps the copy it runs');

  // Both removed: c2 back to the base copy (a change, never a removal).
  await remove(http, variant('c2-other', 'RateLimitPolicy', 'rl', []));
  await remove(http, variant('c2-limit', 'RateLimitPolicy', 'rl', []));
  await eventually(
    async () => {
      const w = await worksOf('ratelimitpolicies', 'rl');
      return w.size === 3 && (rates(w.get(c2)) as { limit: number }[] | undefined)?.[0]?.limit === 10 && workCopy(w.get(c2))?.metadata.annotations?.['policysync.kuadrant.io/variants'] === undefined;
    },
    { what: 'c2 back to the base copy', timeoutMs: 30_000 },
  );
});

test('a variant of a policy that does not exist, and one of a kind no class syncs, say so', async () => {
  await put(variant('nobody', 'RateLimitPolicy', 'missing', [{ patch: { spec: { limits: {} } } }]));
  await put({ ...variant('unsynced', 'AuthPolicy', 'auth', [{ patch: { spec: { rules: {} } } }]) });
  const missing = await eventually(async () => condition(await variantStatus('nobody'), 'Resolved'), { what: 'Resolved on nobody', timeoutMs: 30_000 });
  assert.deepEqual([missing.status, missing.reason], ['False', 'TargetNotFound']);
  const unsynced = await eventually(async () => condition(await variantStatus('unsynced'), 'Resolved'), { what: 'Resolved on unsynced', timeoutMs: 30_000 });
  assert.equal(unsynced.status, 'False');
});

test('the PolicyVariant CRD refuses at admission what the hub would refuse, naming the field: no entries, a value from two sources, an unknown operator', async () => {
  const cases: [unknown[], RegExp][] = [
    [[], /spec\.entries/],
    [[{ values: [{ path: 'spec.x', valueFrom: { clusterName: {}, clusterLabel: { key: 'a' } } }] }], /spec\.entries\[0\]\.values\[0\]\.valueFrom/],
    [[{ clusters: { labelSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } }, patch: { spec: {} } }], /spec\.entries\[0\]\.clusters\.labelSelector\.matchExpressions\[0\]\.operator/],
  ];
  for (const [entries, field] of cases) {
    const err = await apply(http, variant(uniqueName('bad'), 'RateLimitPolicy', 'rl', entries)).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiError, `refused: ${JSON.stringify(entries)}: ${String(err)}`);
    assert.equal(err.status, 422);
    assert.match(err.message, field);
  }
});
