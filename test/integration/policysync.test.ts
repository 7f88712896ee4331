// The policy reconciler against the real hub apiserver (no spokes needed: works are checked on the hub): the exact
// works for a placed policy, updates, cluster and kind removal, safety on corrupt params, deletion, and
// clean-up of a policy deleted while the controller was down.
import assert from 'node:assert/strict';
import { withCopyDigest } from '../../src/core/works/copydigest.ts';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { workName } from '../../src/core/works/manifestwork.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { eventually } from '../../testkit/eventually.ts';
import {
  AUTH_POLICIES,
  apply,
  authPolicy,
  createNamespace,
  gateway,
  gatewayClass,
  get,
  paramsConfigMap,
  patchData,
  placementDecision,
  RATE_LIMIT_POLICIES,
  rateLimitPolicy,
  remove,
  removeNamespace,
} from '../../testkit/fixtures.ts';
import { ourWorks } from '../../testkit/works.ts';
import { hubHttp, quiescent, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';
import { AuditCursor, describeWrite } from '../../testkit/audit.ts';

let sandbox: Sandbox;
let http: KubeHttp;
let hub: RunningHub | undefined;
const controllerName = testControllerName('sync');
const ns = uniqueName('sync');
const [c1, c2] = [`${ns}-c1`, `${ns}-c2`];
const className = uniqueName('class');
const AUTH = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };
const RLP = { group: 'kuadrant.io', version: 'v1', resource: 'ratelimitpolicies' };
const params = paramsConfigMap(ns, 'params', { policiesToSync: [AUTH, RLP] });

before(async () => {
  sandbox = await testSandbox();
  http = hubHttp(sandbox);
  for (const n of [ns, c1, c2]) await createNamespace(http, n);
  await apply(http, params);
  await apply(http, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(http, gateway(ns, 'gw', className, 'everywhere'));
  await apply(http, placementDecision(ns, 'everywhere', [c1, c2]));
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName });
});

after(async () => {
  // Works carry the OCM finalizer only once an agent has seen them; these never had one, so they go at once.
  for (const w of await ourWorks(http, { controllerName })) await remove(http, w);
  await hub?.stop();
  await remove(http, gatewayClass(className, { namespace: ns, name: 'params' }));
  for (const n of [ns, c1, c2]) await removeNamespace(http, n);
  http.destroy();
});

/** The works whose source-ref names the policy, by cluster. */
async function worksOf(resource: string, name: string): Promise<Map<string, KubeObject>> {
  const works = (await ourWorks(http, { controllerName })).filter((w) => {
    const ref = JSON.parse(w.metadata.annotations?.['policysync.kuadrant.io/source-ref'] ?? '{}') as { resource?: string; name?: string };
    return ref.resource === resource && ref.name === name;
  });
  return new Map(works.map((w) => [w.metadata.namespace ?? '', w]));
}

async function worksOn(resource: string, name: string, clusters: string[]): Promise<Map<string, KubeObject>> {
  return eventually(
    async () => {
      const works = await worksOf(resource, name);
      return [...works.keys()].sort().join(',') === [...clusters].sort().join(',') ? works : undefined;
    },
    { what: `works of ${resource} ${name} on exactly [${clusters.join(', ')}]`, timeoutMs: 30_000 },
  );
}

function copyOf(work: KubeObject | undefined): KubeObject {
  const manifests = (work?.spec as { workload: { manifests: KubeObject[] } } | undefined)?.workload.manifests;
  assert.equal(manifests?.length, 1, 'a work carries exactly the policy copy');
  return manifests[0]!;
}

test('a policy targeting a Gateway placed on 2 clusters gets exactly 2 works with the expected content', async () => {
  await apply(http, { ...authPolicy(ns, 'auth-a', 'gw'), metadata: { name: 'auth-a', namespace: ns, labels: { team: 'a' }, annotations: { note: 'kept' } } });
  const works = await worksOn('authpolicies', 'auth-a', [c1, c2]);
  const hubPolicy = (await get(http, AUTH_POLICIES, ns, 'auth-a'))!;
  const crd = (await get(http, RESOURCES.crds, undefined, 'authpolicies.kuadrant.io'))!;
  for (const cluster of [c1, c2]) {
    const work = works.get(cluster)!;
    assert.equal(work.metadata.name, workName(AUTH_POLICIES, ns, 'auth-a'));
    assert.match(work.metadata.name, /^authpolicies-[a-z0-9-]+-auth-a-[0-9a-f]{32}$/);
    assert.equal(work.metadata.labels?.['app.kubernetes.io/managed-by'], 'policy-sync');
    assert.match(work.metadata.labels?.['policysync.kuadrant.io/source'] ?? '', /^[0-9a-f]{16}$/);
    assert.deepEqual(JSON.parse(work.metadata.annotations?.['policysync.kuadrant.io/source-ref'] ?? ''), {
      group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', namespace: ns, name: 'auth-a', uid: hubPolicy.metadata.uid, crdUid: crd.metadata.uid,
    });
    assert.match(work.metadata.annotations?.['policysync.kuadrant.io/spec-hash'] ?? '', /^[0-9a-f]{64}$/);
    const spec = work.spec as Record<string, unknown>;
    assert.deepEqual(spec.deleteOption, { propagationPolicy: 'Foreground' });
    // With the digest of what is sent (core/works/copydigest.ts): the spoke agent reads the copy against it.
    assert.deepEqual(copyOf(work), withCopyDigest({
      apiVersion: 'kuadrant.io/v1',
      kind: 'AuthPolicy',
      metadata: {
        name: 'auth-a',
        namespace: ns, // downstreamNamespace defaults to {namespace}
        labels: { team: 'a' },
        annotations: {
          note: 'kept',
          'kuadrant.io/policy-synced': `${ns}/auth-a`,
          'kuadrant.io/origin-creation': String(hubPolicy.metadata.creationTimestamp),
          // The revision the copy carries: the hub policy's generation.
          'policysync.kuadrant.io/revision': String(hubPolicy.metadata.generation),
        },
      },
      spec: { ...hubPolicy.spec, targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' } },
    }));
    const [config] = spec.manifestConfigs as Record<string, unknown>[];
    assert.deepEqual(config?.resourceIdentifier, { group: 'kuadrant.io', resource: 'authpolicies', name: 'auth-a', namespace: ns });
    assert.deepEqual(config?.updateStrategy, { type: 'Update' });
    assert.equal(config?.feedbackScrapeType, 'Watch');
  }
  const annotated = await eventually(
    async () => (await get(http, AUTH_POLICIES, ns, 'auth-a'))?.metadata.annotations?.['kuadrant.io/policies-synced'],
    { what: 'the kuadrant.io/policies-synced annotation' },
  );
  assert.equal(annotated, JSON.stringify([c1, c2].sort().map((cluster) => ({ cluster, name: 'auth-a', namespace: ns }))));
});

test('editing the policy spec updates both works', async () => {
  await apply(http, authPolicy(ns, 'auth-b', 'gw'));
  await worksOn('authpolicies', 'auth-b', [c1, c2]);
  await patchData(http, authPolicy(ns, 'auth-b', 'gw'), { spec: { rules: { authorization: { deny: { opa: { rego: 'allow = true' } } } } } });
  await eventually(
    async () => {
      const works = await worksOf('authpolicies', 'auth-b');
      const regos = [...works.values()].map((w) => (copyOf(w).spec as { rules: { authorization: { deny: { opa: { rego: string } } } } }).rules.authorization.deny.opa.rego);
      return regos.length === 2 && regos.every((r) => r === 'allow = true');
    },
    { what: 'both works to carry the edited spec' },
  );
});

test('a decision dropping a cluster deletes that work only', async () => {
  await apply(http, gateway(ns, 'gw-drop', className, 'drop'));
  await apply(http, placementDecision(ns, 'drop', [c1, c2]));
  await apply(http, authPolicy(ns, 'auth-drop', 'gw-drop'));
  const before = await worksOn('authpolicies', 'auth-drop', [c1, c2]);
  await apply(http, placementDecision(ns, 'drop', [c1]));
  const afterDrop = await worksOn('authpolicies', 'auth-drop', [c1]);
  assert.equal(afterDrop.get(c1)?.metadata.uid, before.get(c1)?.metadata.uid, 'the remaining work is kept, not recreated');
});

test('corrupting the params deletes nothing; removing a kind from valid params deletes its works', async () => {
  await apply(http, rateLimitPolicy(ns, 'rlp', 'gw'));
  await apply(http, authPolicy(ns, 'auth-keep', 'gw'));
  await worksOn('ratelimitpolicies', 'rlp', [c1, c2]);
  await worksOn('authpolicies', 'auth-keep', [c1, c2]);

  await patchData(http, params, { data: { params: '{"policiesToSync": "corrupt' } });
  await eventually(async () => {
    const cls = await get(http, RESOURCES.gatewayClasses, undefined, className);
    return (cls?.status as { conditions?: { type: string; reason: string }[] })?.conditions?.some((c) => c.type === 'Accepted' && c.reason === 'InvalidParameters');
  }, { what: 'the class to report InvalidParameters' });
  await quiescent(hub!.controller, 'after the params turned corrupt');
  assert.equal((await worksOf('ratelimitpolicies', 'rlp')).size, 2, 'corrupt params delete nothing');
  // The harder case: a controller starting while the params are corrupt has no last good configuration
  // at all, sees every work of a kind it does not watch, and still must delete nothing.
  await hub!.stop();
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName });
  await quiescent(hub.controller, 'after a start on corrupt params');
  assert.equal((await worksOf('ratelimitpolicies', 'rlp')).size, 2, 'a restart on corrupt params deletes nothing');
  assert.equal((await worksOf('authpolicies', 'auth-keep')).size, 2);

  const reported = async (): Promise<Record<string, string>> => {
    const annotations = (await get(http, RATE_LIMIT_POLICIES, ns, 'rlp'))?.metadata.annotations ?? {};
    return Object.fromEntries(Object.entries(annotations).filter(([k]) => k === 'kuadrant.io/policies-synced' || k === 'policysync.kuadrant.io/status'));
  };
  const syncedOn = (value: string | undefined): string[] => (JSON.parse(value ?? '[]') as { cluster: string }[]).map((e) => e.cluster).sort();
  await eventually(async () => syncedOn((await reported())['kuadrant.io/policies-synced']).join() === [c1, c2].sort().join(), { what: 'rlp reported synced on both clusters' });

  await patchData(http, params, { data: { params: JSON.stringify({ policiesToSync: [AUTH] }) } });
  await worksOn('ratelimitpolicies', 'rlp', []);
  assert.equal((await worksOf('authpolicies', 'auth-keep')).size, 2, 'the kind still listed keeps its works');
  // Its kind no longer watched, nothing would correct what the hub wrote on it: it says nothing any more.
  assert.deepEqual(await reported(), {}, 'no policies-synced naming clusters whose copy is gone, no status');
  await patchData(http, params, { data: { params: JSON.stringify({ policiesToSync: [AUTH, RLP] }) } });
  await worksOn('ratelimitpolicies', 'rlp', [c1, c2]);
});

test('deleting the policy deletes its works', async () => {
  await apply(http, authPolicy(ns, 'auth-del', 'gw'));
  await worksOn('authpolicies', 'auth-del', [c1, c2]);
  await remove(http, authPolicy(ns, 'auth-del', 'gw'));
  await worksOn('authpolicies', 'auth-del', []);
});

// Seed 21 of the soak (issue 29): a policy's Gateway deleted, the leader deleted its works and was killed before
// it cleared the policy's report annotations; the next leader found a policy not ours with no works of ours, left
// its annotations alone, and `policies-synced` named two clusters whose copy was gone, for good. The annotations
// now go first: a crash between leaves the works, and whoever reconciles next clears and deletes again.
test('a policy whose Gateway is deleted loses our report annotations before its works go', async () => {
  await apply(http, gateway(ns, 'gw-gone', className, 'everywhere'));
  await apply(http, authPolicy(ns, 'auth-gone', 'gw-gone'));
  await worksOn('authpolicies', 'auth-gone', [c1, c2]);
  const reported = async (): Promise<string | undefined> => (await get(http, AUTH_POLICIES, ns, 'auth-gone'))?.metadata.annotations?.['kuadrant.io/policies-synced'];
  await eventually(async () => (await reported())?.includes(c2), { what: 'auth-gone reported synced' });
  const audit = AuditCursor.at(sandbox, 'hub');
  await remove(http, gateway(ns, 'gw-gone', className, 'everywhere'));
  await worksOn('authpolicies', 'auth-gone', []);
  await eventually(async () => (await reported()) === undefined, { what: 'auth-gone no longer reported synced' });
  const writes = audit.since().filter((w) => w.code < 300);
  const cleared = writes.find((w) => w.verb === 'patch' && w.resource === 'authpolicies' && w.namespace === ns && w.name === 'auth-gone');
  // Whatever the work shape: its own work deleted, or its bundle rewritten without it (or deleted, empty).
  const ownWork = workName({ group: 'kuadrant.io', resource: 'authpolicies' }, ns, 'auth-gone');
  const deletions = writes.filter((w) => w.resource === 'manifestworks' && [c1, c2].includes(w.namespace ?? '') && (w.verb === 'delete' ? w.name === ownWork || w.name?.startsWith('ps-') : w.verb === 'update' && w.name?.startsWith('ps-')));
  assert.ok(cleared, `the hub cleared the annotations: ${writes.map(describeWrite).join('\n')}`);
  assert.deepEqual([...new Set(deletions.map((d) => d.namespace))].sort(), [c1, c2].sort(), writes.map(describeWrite).join('\n'));
  for (const d of deletions) assert.ok(cleared.at < d.at, `the annotations were cleared (${cleared.at}) before the work on ${d.namespace} was deleted (${d.at})`);
});

test('a policy deleted while the controller was down is cleaned up after restart', async () => {
  await apply(http, authPolicy(ns, 'auth-offline', 'gw'));
  await worksOn('authpolicies', 'auth-offline', [c1, c2]);
  await hub!.stop();
  hub = undefined;
  await remove(http, authPolicy(ns, 'auth-offline', 'gw'));
  assert.equal((await worksOf('authpolicies', 'auth-offline')).size, 2, 'nothing removes them while the controller is down');
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName });
  await worksOn('authpolicies', 'auth-offline', []);
  assert.equal((await worksOf('authpolicies', 'auth-a')).size, 2, 'the start-up clean-up leaves live policies alone');
});
