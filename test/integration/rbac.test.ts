// RBAC for real: deploy/hub's ServiceAccount, ClusterRoles, bindings and Role are applied to the sandbox
// hub, and the hub controller runs in-process with a token minted for that ServiceAccount (TokenRequest
// API) — so every request it makes is authorised by the apiserver exactly as in a cluster. A policy kind
// it has not been granted is reported `Forbidden` on the GatewayClass and nothing is placed; once the
// small labelled ClusterRole for it is added, the ClusterRole aggregation controller folds it into
// policy-sync-hub-policies and the kind syncs. At no point may the controller meet a 403.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import { LeaderElector } from '../../src/kube/leaderelection.ts';
import { RESOURCES, collectionPath, type ResourceRef } from '../../src/kube/resource.ts';
import { deleteObject } from '../../src/kube/writes.ts';
import { CapturedLog } from '../../testkit/capturedlog.ts';
import { eventually } from '../../testkit/eventually.ts';
import { serviceAccountKubeConfig, whoAmI } from '../../testkit/serviceaccount.ts';
import { reportNothingLocal } from '../../testkit/spokereport.ts';
import { SPOKE_CONFIG_WORK_NAME } from '../../src/core/spoke/spokeconfig.ts';
import { holdExclusive } from '../../testkit/exclusive.ts';
import {
  AUTH_POLICIES,
  apply,
  authPolicy,
  createNamespace,
  gateway,
  gatewayClass,
  get,
  list,
  paramsConfigMap,
  patchData,
  placementDecision,
  remove,
  removeNamespace,
} from '../../testkit/fixtures.ts';
import { ourWorks } from '../../testkit/works.ts';
import { deletionWatch } from '../../testkit/faults.ts';
import { hubHttp, quiescent, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { find, kubectl, kustomize, toYaml } from '../../testkit/kubectl.ts';
import { metricsText, samples } from '../../testkit/metrics.ts';
import { testSandbox, testSandboxRoot } from '../../testkit/test-sandbox.ts';

const SYSTEM_NS = 'policy-sync-system';
const SERVICE_ACCOUNT = 'policy-sync-hub';
const USER = `system:serviceaccount:${SYSTEM_NS}:${SERVICE_ACCOUNT}`;
const RBAC_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
const GRANT = 'policy-sync-hub-kuadrant-authpolicies';
const CLUSTER_ROLES: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', namespaced: false };
const EVENTS: ResourceRef = RESOURCES.coreEvents;
const AUTH = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };

let sandbox: Sandbox;
let admin: KubeHttp;
let release: (() => void) | undefined;
let hub: RunningHub | undefined;
let asHub: KubeHttp | undefined;
let rbacYaml = '';
let grantYaml = '';
let createdSystemNs = false;
let forbiddenBefore = 0;
/** Where the controller (and the elector) log: kept for the assertions. */
const log = new CapturedLog();
const controllerName = testControllerName('rbac');
const ns = uniqueName('rbac');
const [c1, c2] = [`${ns}-c1`, `${ns}-c2`];
const className = uniqueName('rbac-class');
const params = paramsConfigMap(ns, 'params', { policiesToSync: [AUTH] });

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

async function classCondition(type: string): Promise<Condition | undefined> {
  const cls = await get(admin, RESOURCES.gatewayClasses, undefined, className);
  return (cls?.status as { conditions?: Condition[] } | undefined)?.conditions?.find((c) => c.type === type);
}

async function worksOfPolicy(): Promise<KubeObject[]> {
  return (await ourWorks(admin, { controllerName })).filter((w) => {
    const ref = JSON.parse(w.metadata.annotations?.['policysync.kuadrant.io/source-ref'] ?? '{}') as { resource?: string; name?: string };
    return ref.resource === 'authpolicies' && ref.name === 'auth';
  });
}

/** Requests the apiserver refused for lack of permission (RBAC answers "no opinion", the request is then forbidden). */
async function forbiddenCount(): Promise<number> {
  const text = await metricsText(sandbox.kubeConfig('hub'));
  return samples(text, 'authorization_attempts_total')
    .filter((s) => s.labels.result === 'no-opinion' || s.labels.result === 'denied')
    .reduce((sum, s) => sum + s.value, 0);
}


/** What the controller logged about a 403 answer (the ApiError text is `<METHOD> <path>: 403 Forbidden: …`). */
function forbiddenLogLines(): string[] {
  return log.lines.filter((l) => l.includes(': 403 '));
}

/** SelfSubjectAccessReview with the controller's own credentials, as its kind check does. */
async function mayI(verb: string): Promise<boolean> {
  const review = await asHub!.request<{ status?: { allowed?: boolean } }>('POST', collectionPath(RESOURCES.selfSubjectAccessReviews), {
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { ...AUTH, verb } } },
  });
  return review.status?.allowed === true;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}; controller log:\n${log.recent()}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

before(async () => {
  sandbox = await testSandbox();
  admin = hubHttp(sandbox);
  // deploy.test.ts dry-runs deploy/hub in the same namespace: one of the two at a time.
  release = await holdExclusive(testSandboxRoot, 'hub-policy-sync-system');

  const hubRender = await kustomize('deploy/hub');
  assert.equal(hubRender.code, 0, hubRender.stderr);
  const rbac = hubRender.objects.filter((o) => RBAC_KINDS.has(o.kind));
  assert.ok(find(rbac, 'ClusterRole', 'policy-sync-hub-policies') && find(rbac, 'ServiceAccount', SERVICE_ACCOUNT));
  rbacYaml = toYaml(rbac);
  const kuadrant = await kustomize('deploy/hub/kuadrant');
  assert.equal(kuadrant.code, 0, kuadrant.stderr);
  const grant = find(kuadrant.objects, 'ClusterRole', GRANT);
  assert.ok(grant, `${GRANT} in deploy/hub/kuadrant`);
  grantYaml = toYaml([grant]);

  const existing = await get(admin, RESOURCES.namespaces, undefined, SYSTEM_NS);
  if (existing?.metadata.deletionTimestamp) {
    await eventually(async () => !(await get(admin, RESOURCES.namespaces, undefined, SYSTEM_NS)), { what: `the terminating ${SYSTEM_NS} to go`, timeoutMs: 60_000 });
  }
  createdSystemNs = !existing || existing.metadata.deletionTimestamp !== undefined;
  if (createdSystemNs) await createNamespace(admin, SYSTEM_NS);
  const applied = await kubectl(['apply', '-f', '-'], { kubeconfig: sandbox.hub.kubeconfig, input: rbacYaml });
  assert.equal(applied.code, 0, `kubectl apply of deploy/hub's RBAC failed:\n${applied.stderr}`);

  // The world: a class listing authpolicies, a Gateway placed on two clusters, an AuthPolicy at it.
  for (const n of [ns, c1, c2]) await createNamespace(admin, n);
  await apply(admin, params);
  await apply(admin, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(admin, gateway(ns, 'gw', className, 'both'));
  await apply(admin, placementDecision(ns, 'both', [c1, c2]));
  await apply(admin, authPolicy(ns, 'auth', 'gw'));
  // And one at a Gateway placed nowhere: reported with a `NoClusters` Event (the events grant, exercised).
  await apply(admin, gateway(ns, 'gw-nowhere', className));
  await apply(admin, authPolicy(ns, 'auth-nowhere', 'gw-nowhere'));

  const kubeConfig = await serviceAccountKubeConfig(sandbox, admin, SYSTEM_NS, SERVICE_ACCOUNT);
  asHub = new KubeHttp(kubeConfig);
  assert.equal(await whoAmI(asHub), USER, 'the controller authenticates as the ServiceAccount, not as the sandbox admin');

  forbiddenBefore = await forbiddenCount();
  // As the CLI runs it by default: with the spoke configuration placed (ManifestWorks too).
  hub = await withTimeout(
    startHub(kubeConfig, { controllerName, logger: log.logger(), spokeConfig: { namespace: SYSTEM_NS, name: 'policy-sync-spoke' } }),
    30_000,
    'the hub caches to sync with the ServiceAccount\'s permissions',
  );
});

after(async () => {
  await hub?.stop();
  asHub?.destroy();
  if (admin) {
    for (const w of await ourWorks(admin, { controllerName })) await remove(admin, w);
    await remove(admin, gatewayClass(className, { namespace: ns, name: 'params' }));
    for (const n of [ns, c1, c2]) await removeNamespace(admin, n);
    await deleteObject(admin, RESOURCES.leases, SYSTEM_NS, 'policy-sync-hub');
    for (const yaml of [grantYaml, rbacYaml]) {
      if (!yaml) continue;
      const deleted = await kubectl(['delete', '--ignore-not-found', '-f', '-'], { kubeconfig: sandbox.hub.kubeconfig, input: yaml });
      assert.equal(deleted.code, 0, deleted.stderr);
    }
    if (createdSystemNs) {
      await removeNamespace(admin, SYSTEM_NS);
      await eventually(async () => !(await get(admin, RESOURCES.namespaces, undefined, SYSTEM_NS)), { what: `namespace ${SYSTEM_NS} to be gone`, timeoutMs: 60_000 });
    }
    admin.destroy();
  }
  release?.();
});

test('with deploy/hub\'s RBAC only, the policy kind is Forbidden on the GatewayClass and nothing is placed', async () => {
  const synced = await eventually(
    async () => {
      const c = await classCondition('PoliciesSynced');
      return c?.status === 'False' ? c : undefined;
    },
    { what: 'PoliciesSynced=False on the GatewayClass', timeoutMs: 30_000, context: () => log.recent() },
  );
  assert.equal(synced.reason, 'InvalidPolicyKinds');
  assert.match(synced.message, /authpolicies\.v1\.kuadrant\.io: Forbidden/);
  assert.equal((await classCondition('Accepted'))?.status, 'True', 'the params themselves are fine');
  assert.equal(await mayI('list'), false, 'the ServiceAccount may not list authpolicies yet');

  // What the base role does allow is written: the spoke configuration, one ManifestWork per cluster (and its
  // heartbeat work, labelled alike).
  await eventually(
    async () => {
      const clusters = (await ourWorks(admin, { controllerName })).filter((w) => w.metadata.name === SPOKE_CONFIG_WORK_NAME && w.metadata.labels?.['policysync.kuadrant.io/spoke-config'] === 'true').map((w) => w.metadata.namespace).sort();
      return clusters.join() === [c1, c2].sort().join();
    },
    { what: 'the spoke configuration works on both clusters', timeoutMs: 30_000 },
  );
  await quiescent(hub!.controller, 'with authpolicies not granted');
  assert.deepEqual(await worksOfPolicy(), [], 'no ManifestWork for a policy of a kind the controller may not read');
  const policy = await get(admin, AUTH_POLICIES, ns, 'auth');
  assert.equal(policy?.metadata.annotations?.['kuadrant.io/policies-synced'], undefined);
  assert.deepEqual(forbiddenLogLines(), [], 'the kind check asks (SelfSubjectAccessReview) instead of running into a 403');
});

test('adding the labelled authpolicies ClusterRole grants the kind through aggregation: AllKindsValid and exactly 2 works', async () => {
  const granted = await kubectl(['apply', '-f', '-'], { kubeconfig: sandbox.hub.kubeconfig, input: grantYaml });
  assert.equal(granted.code, 0, granted.stderr);
  // The ClusterRole aggregation controller (kube-controller-manager) copies the rules into the bound role.
  await eventually(
    async () => {
      const role = (await get(admin, CLUSTER_ROLES, undefined, 'policy-sync-hub-policies')) as { rules?: { resources?: string[] }[] } | undefined;
      return role?.rules?.some((r) => r.resources?.includes('authpolicies'));
    },
    {
      what: 'policy-sync-hub-policies to aggregate the authpolicies rule',
      timeoutMs: 30_000,
      context: () => 'the sandbox runs the aggregation controller in kube-controller-manager since it gained one: a sandbox planned before needs `npm run local-down` (or `down --root …`) and up again',
    },
  );
  await eventually(async () => (await mayI('list')) && (await mayI('watch')) && (await mayI('patch')), { what: 'the ServiceAccount to be allowed list, watch and patch on authpolicies' });

  // The class re-checks invalid kinds every 30 s on its own; an edit of its params re-checks at once.
  await patchData(admin, params, { metadata: { annotations: { 'test.policy-sync.io/touched': new Date().toISOString() } } });
  const synced = await eventually(
    async () => {
      const c = await classCondition('PoliciesSynced');
      return c?.status === 'True' ? c : undefined;
    },
    { what: 'PoliciesSynced=True on the GatewayClass', timeoutMs: 20_000, context: () => log.recent() },
  );
  assert.equal(synced.reason, 'AllKindsValid');

  // Each cluster's spoke agent reports the names free there (these clusters have no spoke: the test writes what
  // the work agent would), without which no first copy is placed.
  for (const cluster of [c1, c2]) await reportNothingLocal(admin, cluster, { controllerName, configMap: { namespace: SYSTEM_NS, name: 'policy-sync-spoke' }, kinds: ['authpolicies.kuadrant.io'] });
  const works = await eventually(
    async () => {
      const w = await worksOfPolicy();
      return w.length === 2 ? w : undefined;
    },
    { what: 'the ManifestWorks of the AuthPolicy', timeoutMs: 30_000, context: () => log.recent() },
  );
  assert.deepEqual(works.map((w) => w.metadata.namespace).sort(), [c1, c2].sort());
  // The annotation patch on the policy is allowed too.
  // The reports above arrive one cluster at a time, so a first annotation may name one cluster only: wait for the
  // status pass that follows the second copy.
  const clustersAnnotated = async () => {
    const annotation = (await get(admin, AUTH_POLICIES, ns, 'auth'))?.metadata.annotations?.['kuadrant.io/policies-synced'];
    return annotation === undefined ? [] : (JSON.parse(annotation) as { cluster: string }[]).map((e) => e.cluster);
  };
  await eventually(async () => (await clustersAnnotated()).length === 2, {
    what: 'the kuadrant.io/policies-synced annotation on the hub policy to name both clusters',
    context: () => log.recent(),
  });
  assert.deepEqual(await clustersAnnotated(), [c1, c2].sort());
  // Events are recorded on hub policies.
  const event = await eventually(
    async () => (await list(admin, EVENTS, ns)).find((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === 'auth-nowhere'),
    { what: 'an Event on the policy whose Gateway is placed nowhere', context: () => log.recent() },
  );
  assert.equal((event as { reason?: string }).reason, 'NoClusters');
  await quiescent(hub!.controller, 'after the kind was granted');
  assert.equal((await worksOfPolicy()).length, 2, 'still exactly 2');
});

test('leader election: the ServiceAccount creates, renews and releases its Lease in policy-sync-system', async () => {
  const lease = { namespace: SYSTEM_NS, name: 'policy-sync-hub' }; // the hub's --leader-election-id default
  const identity = uniqueName('rbac-elector');
  let leading!: () => void;
  const started = new Promise<void>((resolve) => (leading = resolve));
  const elector = new LeaderElector({
    http: asHub!,
    lease,
    identity,
    leaseDurationMs: 3_000,
    renewDeadlineMs: 2_000,
    retryPeriodMs: 500,
    onStartedLeading: () => leading(),
    onStoppedLeading: () => assert.fail('lost a lease nobody else wants'),
    logger: log.logger(),
  });
  elector.start();
  try {
    await withTimeout(started, 10_000, 'the elector to take the Lease');
    const holder = async (): Promise<Record<string, unknown> | undefined> => (await get(admin, RESOURCES.leases, lease.namespace, lease.name))?.spec;
    const first = await holder();
    assert.equal(first?.holderIdentity, identity);
    await eventually(async () => String((await holder())?.renewTime) > String(first?.renewTime), { what: 'a renewal of the Lease (update)', timeoutMs: 5_000 });
  } finally {
    await elector.release();
  }
  const released = (await get(admin, RESOURCES.leases, lease.namespace, lease.name))?.spec;
  assert.ok(!released?.holderIdentity, 'released: no holder');
  assert.deepEqual(log.lines.filter((l) => l.includes('lease update failed') || l.includes('could not release')), []);
});

test('the controller never met a 403: not on ManifestWork writes, not anywhere', async () => {
  assert.deepEqual(forbiddenLogLines(), []);
  assert.deepEqual(log.lines.filter((l) => /ManifestWork (apply|delete) failed|spoke configuration .*failed|could not record event/.test(l)), []);
  assert.equal(await forbiddenCount(), forbiddenBefore, 'the hub apiserver refused no request for lack of permission while the controller ran');
});

// Fault-injection scenario d (docs/reliability.md), here because it needs this file's ServiceAccount set-up;
// after the 403 audit above, since a revoked grant may meet one.
test('fault d: the kind\'s grant revoked then restored: no work deleted; the class reports Forbidden, keeping the last good entry', async () => {
  const deletions = deletionWatch(sandbox);
  const touch = (): Promise<void> => patchData(admin, params, { metadata: { annotations: { 'test.policy-sync.io/touched': new Date().toISOString() } } });
  const revoked = await kubectl(['delete', '-f', '-'], { kubeconfig: sandbox.hub.kubeconfig, input: grantYaml });
  assert.equal(revoked.code, 0, revoked.stderr);
  await eventually(async () => !(await mayI('list')) || undefined, { what: 'the ServiceAccount to lose list on authpolicies', timeoutMs: 30_000 });
  await touch();
  const kept = await eventually(
    async () => {
      const c = await classCondition('PoliciesSynced');
      return c?.status === 'False' && /Forbidden/.test(c.message) ? c : undefined;
    },
    { what: 'PoliciesSynced=False naming Forbidden', timeoutMs: 30_000, context: () => log.recent() },
  );
  assert.match(kept.message, /authpolicies\.v1\.kuadrant\.io: Forbidden \(the last good configuration, version v1, stays in force\)/);
  await quiescent(hub!.controller, 'with the grant revoked');
  assert.equal((await worksOfPolicy()).length, 2, 'the works stay while the grant is gone');
  await deletions.assertNone('grant revoked');

  const restored = await kubectl(['apply', '-f', '-'], { kubeconfig: sandbox.hub.kubeconfig, input: grantYaml });
  assert.equal(restored.code, 0, restored.stderr);
  await eventually(async () => (await mayI('list')) && (await mayI('watch')), { what: 'the grant back', timeoutMs: 30_000 });
  await touch();
  await eventually(async () => (await classCondition('PoliciesSynced'))?.status === 'True' || undefined, { what: 'PoliciesSynced=True again', timeoutMs: 30_000, context: () => log.recent() });
  await quiescent(hub!.controller, 'with the grant restored');
  assert.equal((await worksOfPolicy()).length, 2);
  await deletions.assertNone('grant restored');
});
