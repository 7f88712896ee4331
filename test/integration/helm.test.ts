// The Helm chart (charts/policy-sync) with the real helm, built from its Go module by hack/build-components.sh:
// the chart is what hack/gen-chart.ts generates from the kustomize bases; `helm lint` passes, strict too;
// `helm template` with the default values renders exactly the objects `kubectl kustomize` renders (but for
// Helm's labels, the namespace left to --create-namespace and the two flags the chart always passes), and
// values reach the objects; `helm install` on the sandbox hub, in policy-sync-system, then the basic flow with
// the hub controller running in-process as the chart's ServiceAccount (its token minted by the TokenRequest
// API): the GatewayClass the chart rendered from gatewayClass.params is accepted and a hub AuthPolicy gets
// its ManifestWorks; `helm uninstall` removes what the install created.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { CHART_DIR, DEFAULT_CONTROLLER_NAME, HUB_DEPLOYMENT, SYSTEM_NAMESPACE, readPackage, staleFiles } from '../../hack/gen-chart.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { deleteObject } from '../../src/kube/writes.ts';
import { CapturedLog } from '../../testkit/capturedlog.ts';
import { eventually } from '../../testkit/eventually.ts';
import { holdExclusive } from '../../testkit/exclusive.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, get, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, quiescent, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { kubectl, kustomize, runProcess, type Run } from '../../testkit/kubectl.ts';
import { binDir, repoRoot } from '../../testkit/sandbox/layout.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { serviceAccountKubeConfig, whoAmI } from '../../testkit/serviceaccount.ts';
import { testSandbox, testSandboxRoot } from '../../testkit/test-sandbox.ts';
import { reportNothingLocal } from '../../testkit/spokereport.ts';
import { ourWorks } from '../../testkit/works.ts';

const helmPath = join(binDir, 'helm');
const RELEASE = 'policy-sync';
const SERVICE_ACCOUNT = 'policy-sync-hub';
/** Labels the chart adds to every top-level object (templates/_helpers.tpl). */
const HELM_LABELS = ['helm.sh/chart', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/instance', 'app.kubernetes.io/version'];
const AUTH = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };
const version = readPackage().version;
const CLUSTER_ROLES = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', namespaced: false };
const quietFor = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let sandbox: Sandbox;
let admin: KubeHttp;
let release: (() => void) | undefined;
let helmHome = '';
let hub: RunningHub | undefined;
let installed = false;
let createdSystemNs = false;
/** Where the controller (and the elector) log: kept for the assertions. */
const log = new CapturedLog();
const controllerName = testControllerName('helm');
const className = uniqueName('helm-class');
const ns = uniqueName('helm');
const [c1, c2] = [`${ns}-c1`, `${ns}-c2`];

/** The repository's helm, with its config, cache and data kept apart from the user's. */
function helm(args: string[]): Promise<Run> {
  if (!existsSync(helmPath)) return Promise.reject(new Error(`${helmPath} is missing: run \`bash hack/build-components.sh helm\``));
  const env: NodeJS.ProcessEnv = { ...process.env, HELM_CONFIG_HOME: join(helmHome, 'config'), HELM_CACHE_HOME: join(helmHome, 'cache'), HELM_DATA_HOME: join(helmHome, 'data') };
  delete env.KUBECONFIG;
  return runProcess(helmPath, args, { env });
}

/** The objects of a YAML stream, a `kind: List`'s items as objects (as Helm and kubectl apply them). */
function parseObjects(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as (KubeObject & { items?: KubeObject[] }) | null)
    .filter((o): o is KubeObject & { items?: KubeObject[] } => o !== null)
    .flatMap((o) => (o.kind === 'List' ? (o.items ?? []) : [o]));
}

/** `helm template` in policy-sync-system with `--set` values, the CRDs included; fails the test on an error. */
async function template(set: string[] = [], extra: string[] = []): Promise<KubeObject[]> {
  const run = await helm(['template', RELEASE, CHART_DIR, '--namespace', SYSTEM_NAMESPACE, '--include-crds', ...set.flatMap((s) => ['--set', s]), ...extra]);
  assert.equal(run.code, 0, `helm template ${set.join(' ')} failed:\n${run.stderr}`);
  return parseObjects(run.stdout);
}

const keyOf = (o: KubeObject): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

function byKey(objects: KubeObject[]): Map<string, KubeObject> {
  const map = new Map(objects.map((o) => [keyOf(o), o]));
  assert.equal(map.size, objects.length, 'no object twice');
  return map;
}

function one(objects: KubeObject[], kind: string, name: string): KubeObject {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `${kind}/${name} rendered`);
  return o;
}

/** The chart's object without Helm's labels, which the kustomize bases do not have. */
function withoutHelmLabels(o: KubeObject): KubeObject {
  const c = structuredClone(o);
  for (const label of HELM_LABELS) delete c.metadata.labels?.[label];
  return c;
}

type Container = { name: string; image?: string; imagePullPolicy?: string; args?: string[]; resources?: unknown };
const hubContainer = (objects: KubeObject[]): Container =>
  (one(objects, 'Deployment', HUB_DEPLOYMENT).spec as { template: { spec: { containers: Container[] } } }).template.spec.containers[0]!;

/** Objects rendered by kustomize from `dirs`, as the chart's default values should render them. */
async function kustomized(dirs: string[]): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  for (const dir of dirs) {
    const r = await kustomize(dir);
    assert.equal(r.code, 0, r.stderr);
    objects.push(...r.objects);
  }
  return objects;
}


before(async () => {
  sandbox = await testSandbox();
  admin = hubHttp(sandbox);
  helmHome = mkdtempSync(join(testSandboxRoot, 'helm-'));
});

after(async () => {
  await hub?.stop();
  if (admin) {
    for (const w of await ourWorks(admin, { controllerName })) await remove(admin, w);
    for (const n of [ns, c1, c2]) await removeNamespace(admin, n);
    await deleteObject(admin, RESOURCES.leases, SYSTEM_NAMESPACE, 'policy-sync-hub');
    if (installed) await helm(['uninstall', RELEASE, '--namespace', SYSTEM_NAMESPACE, '--kubeconfig', sandbox.hub.kubeconfig]);
    if (createdSystemNs) {
      await removeNamespace(admin, SYSTEM_NAMESPACE);
      await eventually(async () => !(await get(admin, RESOURCES.namespaces, undefined, SYSTEM_NAMESPACE)), { what: `namespace ${SYSTEM_NAMESPACE} to be gone`, timeoutMs: 60_000 });
    }
    admin.destroy();
  }
  release?.();
  if (helmHome) rmSync(helmHome, { recursive: true, force: true });
});

test('charts/policy-sync is what hack/gen-chart.ts generates from the kustomize bases and package.json', () => {
  assert.deepEqual(staleFiles(), [], 'charts/policy-sync is out of date: run `npx tsx hack/gen-chart.ts`');
});

test('helm lint passes, --strict too, with the default values and with a GatewayClass; a bad value is refused by the schema', async () => {
  for (const args of [[], ['--strict'], ['--strict', '--set', 'gatewayClass.params.downstreamNamespace=x', '--set', 'monitoring.enabled=true']]) {
    const run = await helm(['lint', CHART_DIR, ...args]);
    assert.equal(run.code, 0, `helm lint ${args.join(' ')}:\n${run.stdout}${run.stderr}`);
    assert.match(run.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  }
  const bad = await helm(['template', RELEASE, CHART_DIR, '--set', 'hub.logLevel=loud']);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /logLevel/);
});

test('helm template with the default values renders what kubectl kustomize renders from deploy/hub, deploy/hub/kuadrant and deploy/addon', async () => {
  const chart = (await template()).map(withoutHelmLabels);
  for (const o of await template()) {
    if (o.kind === 'CustomResourceDefinition') continue; // crds/ is not templated
    assert.deepEqual(
      HELM_LABELS.map((l) => o.metadata.labels?.[l]),
      [`policy-sync-${version}`, 'Helm', RELEASE, version],
      `${keyOf(o)} carries Helm's labels`,
    );
  }
  const expected = (await kustomized(['deploy/hub', 'deploy/hub/kuadrant', 'deploy/addon']))
    // The release's namespace is Helm's to create (--create-namespace): the chart has no object for it.
    .filter((o) => !(o.kind === 'Namespace' && o.metadata.name === SYSTEM_NAMESPACE))
    .map((o) => {
      if (o.kind !== 'Deployment' || o.metadata.name !== HUB_DEPLOYMENT) return o;
      const d = structuredClone(o);
      const c = hubContainer([d]);
      // What the chart passes always, at their defaults (the program's defaults), and its pull policy.
      c.args = [...(c.args ?? []), '--log-level=info', `--controller-name=${DEFAULT_CONTROLLER_NAME}`];
      c.imagePullPolicy = 'IfNotPresent';
      return d;
    });
  const [want, got] = [byKey(expected), byKey(chart)];
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), 'the same objects');
  for (const [key, o] of want) assert.deepEqual(got.get(key), o, key);
  assert.equal(hubContainer(chart).image, `ghcr.io/kuadrant/policy-sync:${version}`, 'the image tag defaults to the appVersion, the version');
  assert.ok(!chart.some((o) => o.kind === 'ServiceMonitor' || o.kind === 'PrometheusRule' || o.kind === 'GatewayClass'), 'no monitoring, no GatewayClass by default');
});

test('values reach the objects: image, replicas, log level, extra flags, addon image and cluster set, optional parts off', async () => {
  const objects = await template([
    'image.repository=registry.example.com/policy-sync',
    'image.tag=9.9.9-rc.1',
    'image.pullPolicy=Always',
    'hub.replicas=3',
    'hub.logLevel=debug',
    'hub.extraArgs={--concurrency=8}',
    'hub.resources.limits.memory=1Gi',
    'controllerName=example.com/mine',
    'addon.logLevel=warn',
    'addon.clusterSet.name=fleet',
    'addon.clusterSet.create=false',
    'kuadrant.enabled=false',
    'monitoring.enabled=false',
  ]);
  const deployment = one(objects, 'Deployment', HUB_DEPLOYMENT);
  assert.equal((deployment.spec as { replicas: number }).replicas, 3);
  const c = hubContainer(objects);
  assert.equal(c.image, 'registry.example.com/policy-sync:9.9.9-rc.1');
  assert.equal(c.imagePullPolicy, 'Always');
  assert.deepEqual(c.args?.slice(-3), ['--log-level=debug', '--controller-name=example.com/mine', '--concurrency=8']);
  assert.deepEqual((c.resources as { limits: unknown }).limits, { memory: '1Gi' });
  const config = one(objects, 'AddOnDeploymentConfig', 'policy-sync').spec as { registries: { source: string; mirror: string }[]; customizedVariables: { name: string; value: string }[] };
  assert.deepEqual(config.registries, [{ source: `ghcr.io/kuadrant/policy-sync:${version}`, mirror: 'registry.example.com/policy-sync:9.9.9-rc.1' }]);
  assert.deepEqual(config.customizedVariables, [{ name: 'LOG_LEVEL', value: 'warn' }]);
  assert.ok(!objects.some((o) => o.kind === 'ManagedClusterSet'), 'an existing set: none created');
  assert.equal((one(objects, 'ManagedClusterSetBinding', 'fleet').spec as { clusterSet: string }).clusterSet, 'fleet');
  assert.deepEqual((one(objects, 'Placement', 'policy-sync').spec as { clusterSets: string[] }).clusterSets, ['fleet']);
  assert.ok(!objects.some((o) => o.metadata.name.startsWith('policy-sync-hub-kuadrant-')), 'no Kuadrant grants');
  assert.ok(!objects.some((o) => o.kind === 'ServiceMonitor'), 'monitoring off: no ServiceMonitor');
  // The addon manager's own variable survives Helm's templating.
  const template_ = one(objects, 'AddOnTemplate', 'policy-sync');
  assert.match(JSON.stringify(template_), /--log-level=\{\{LOG_LEVEL\}\}/);

  const noAddon = await template(['addon.enabled=false']);
  assert.ok(!noAddon.some((o) => o.apiVersion.startsWith('addon.open-cluster-management.io') || o.metadata.namespace === 'policy-sync-addon'), 'addon off: no addon objects');
});

test('gatewayClass.params renders a PolicySyncParams in the release namespace and a GatewayClass owned by the controller', async () => {
  const objects = await template(['gatewayClass.name=edge', 'controllerName=example.com/mine'], [
    '--set-json',
    `gatewayClass.params.policiesToSync=${JSON.stringify([AUTH])}`,
    '--set-json',
    'gatewayClass.params.downstreamNamespace="{namespace}"',
  ]);
  const params = one(objects, 'PolicySyncParams', 'edge');
  assert.equal(params.metadata.namespace, SYSTEM_NAMESPACE);
  assert.deepEqual(params.spec, { downstreamNamespace: '{namespace}', policiesToSync: [AUTH] });
  assert.deepEqual(one(objects, 'GatewayClass', 'edge').spec, {
    controllerName: 'example.com/mine',
    parametersRef: { group: 'policysync.kuadrant.io', kind: 'PolicySyncParams', name: 'edge', namespace: SYSTEM_NAMESPACE },
  });
});

test('monitoring on renders deploy/monitoring in the release namespace (once it exists), off renders none of it', async () => {
  const off = await template();
  const on = await template(['monitoring.enabled=true']);
  const added = on.filter((o) => !off.some((x) => keyOf(x) === keyOf(o))).map(withoutHelmLabels);
  if (!existsSync(join(CHART_DIR, 'templates', 'monitoring.yaml'))) {
    assert.ok(!existsSync(join(repoRoot, 'deploy/monitoring/kustomization.yaml')), 'deploy/monitoring exists but the chart has no monitoring template: run `npx tsx hack/gen-chart.ts`');
    assert.deepEqual(added, []);
    return;
  }
  const expected = (await kustomized(['deploy/monitoring'])).filter((o) => !(o.kind === 'Namespace' && o.metadata.name === SYSTEM_NAMESPACE));
  assert.ok(expected.length > 0);
  assert.deepEqual(byKey(added), byKey(expected));
  assert.ok(added.some((o) => o.kind === 'ServiceMonitor'), 'a ServiceMonitor when on');
});

test('helm install in policy-sync-system on the sandbox hub, then a hub policy gets its ManifestWorks from a controller running as the chart\'s ServiceAccount', async () => {
  // rbac.test.ts and deploy.test.ts apply deploy/hub's objects under the same names: one at a time.
  release = await holdExclusive(testSandboxRoot, 'hub-policy-sync-system');
  const existing = await get(admin, RESOURCES.namespaces, undefined, SYSTEM_NAMESPACE);
  if (existing?.metadata.deletionTimestamp) {
    await eventually(async () => !(await get(admin, RESOURCES.namespaces, undefined, SYSTEM_NAMESPACE)), { what: `the terminating ${SYSTEM_NAMESPACE} to go`, timeoutMs: 60_000 });
  }
  createdSystemNs = !existing || existing.metadata.deletionTimestamp !== undefined;

  const values = join(helmHome, 'values.yaml');
  writeFileSync(values, stringify({ controllerName, gatewayClass: { name: className, params: { policiesToSync: [AUTH] } } }));
  // No --wait: the sandbox runs no pods, the Deployment never becomes ready.
  const install = await helm(['install', RELEASE, CHART_DIR, '--namespace', SYSTEM_NAMESPACE, '--create-namespace', '--values', values, '--kubeconfig', sandbox.hub.kubeconfig]);
  assert.equal(install.code, 0, `helm install failed:\n${install.stderr}`);
  installed = true;
  assert.match(install.stdout, /STATUS: deployed/);
  const status = await helm(['status', RELEASE, '--namespace', SYSTEM_NAMESPACE, '--kubeconfig', sandbox.hub.kubeconfig, '-o', 'json']);
  assert.equal((JSON.parse(status.stdout) as { info: { status: string } }).info.status, 'deployed');
  const manifest = await helm(['get', 'manifest', RELEASE, '--namespace', SYSTEM_NAMESPACE, '--kubeconfig', sandbox.hub.kubeconfig]);
  const objects = parseObjects(manifest.stdout);
  const present = await kubectl(['get', '-f', '-', '-o', 'name'], { kubeconfig: sandbox.hub.kubeconfig, input: manifest.stdout });
  assert.equal(present.code, 0, present.stderr);
  assert.equal(present.stdout.trim().split('\n').length, objects.length, 'every object of the release exists on the hub');
  const deployment = await get(admin, { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true }, SYSTEM_NAMESPACE, HUB_DEPLOYMENT);
  assert.equal(deployment?.metadata.labels?.['app.kubernetes.io/managed-by'], 'Helm');

  // The chart's Kuadrant grants, aggregated into the role bound to its ServiceAccount by kube-controller-manager.
  await eventually(
    async () => {
      const role = (await get(admin, CLUSTER_ROLES, undefined, 'policy-sync-hub-policies')) as { rules?: { resources?: string[] }[] } | undefined;
      return role?.rules?.some((r) => r.resources?.includes('authpolicies'));
    },
    { what: 'policy-sync-hub-policies to aggregate the chart\'s authpolicies grant', timeoutMs: 30_000 },
  );

  // The world: a Gateway of the chart's class placed on two clusters, an AuthPolicy at it.
  for (const n of [ns, c1, c2]) await createNamespace(admin, n);
  await apply(admin, gateway(ns, 'gw', className, 'both'));
  await apply(admin, placementDecision(ns, 'both', [c1, c2]));
  await apply(admin, authPolicy(ns, 'auth', 'gw'));

  const kubeConfig = await serviceAccountKubeConfig(sandbox, admin, SYSTEM_NAMESPACE, SERVICE_ACCOUNT);
  const asHub = new KubeHttp(kubeConfig);
  try {
    assert.equal(await whoAmI(asHub), `system:serviceaccount:${SYSTEM_NAMESPACE}:${SERVICE_ACCOUNT}`, 'the controller authenticates as the chart\'s ServiceAccount');
  } finally {
    asHub.destroy();
  }
  hub = await startHub(kubeConfig, { controllerName, logger: log.logger(), spokeConfig: { namespace: SYSTEM_NAMESPACE, name: 'policy-sync-spoke' } });

  const conditions = await eventually(
    async () => {
      const cls = await get(admin, RESOURCES.gatewayClasses, undefined, className);
      const cs = (cls?.status as { conditions?: { type: string; status: string; reason: string }[] } | undefined)?.conditions ?? [];
      return cs.find((c) => c.type === 'PoliciesSynced')?.status === 'True' ? cs : undefined;
    },
    { what: 'the chart\'s GatewayClass Accepted with its kinds synced', timeoutMs: 30_000, context: () => log.recent() },
  );
  assert.equal(conditions.find((c) => c.type === 'Accepted')?.status, 'True');
  // Each cluster's spoke agent reports the names free there (these clusters have no spoke: the test writes what
  // the work agent would), without which no first copy is placed.
  for (const cluster of [c1, c2]) await reportNothingLocal(admin, cluster, { controllerName, configMap: { namespace: SYSTEM_NAMESPACE, name: 'policy-sync-spoke' }, kinds: ['authpolicies.kuadrant.io'] });
  const works = await eventually(
    async () => {
      const w = (await ourWorks(admin, { controllerName })).filter((x) => x.metadata.labels?.['policysync.kuadrant.io/spoke-config'] !== 'true');
      return w.length === 2 ? w : undefined;
    },
    { what: 'the AuthPolicy\'s ManifestWorks on both clusters', timeoutMs: 30_000, context: () => log.recent() },
  );
  assert.deepEqual(works.map((w) => w.metadata.namespace).sort(), [c1, c2].sort());
  // The reports reach the hub one cluster at a time: the annotation may first name one cluster, then both.
  const placedOn = (text: string | undefined): string[] => (text ? (JSON.parse(text) as { cluster: string }[]).map((e) => e.cluster) : []);
  const annotated = await eventually(
    async () => {
      const text = (await get(admin, AUTH_POLICIES, ns, 'auth'))?.metadata.annotations?.['kuadrant.io/policies-synced'];
      return placedOn(text).length === 2 ? text : undefined;
    },
    { what: 'the kuadrant.io/policies-synced annotation on the hub policy, naming both clusters', context: () => log.recent() },
  );
  assert.deepEqual(placedOn(annotated), [c1, c2].sort());
  await quiescent(hub.controller, 'with the chart installed');
  assert.deepEqual(log.lines.filter((l) => l.includes(': 403 ')), [], 'the chart\'s RBAC lets the controller do all it does');
});

test('helm uninstall removes every object the install created (the CRD stays, as Helm keeps crds/)', async () => {
  assert.ok(installed, 'installed by the previous test');
  await hub?.stop();
  hub = undefined;
  for (const w of await ourWorks(admin, { controllerName })) await remove(admin, w);
  for (const n of [ns, c1, c2]) await removeNamespace(admin, n);
  const manifest = await helm(['get', 'manifest', RELEASE, '--namespace', SYSTEM_NAMESPACE, '--kubeconfig', sandbox.hub.kubeconfig]);
  assert.equal(manifest.code, 0, manifest.stderr);
  const uninstall = await helm(['uninstall', RELEASE, '--namespace', SYSTEM_NAMESPACE, '--kubeconfig', sandbox.hub.kubeconfig]);
  assert.equal(uninstall.code, 0, uninstall.stderr);
  installed = false;
  let left = '';
  await eventually(
    async () => {
      const run = await kubectl(['get', '-f', '-', '--ignore-not-found', '-o', 'name'], { kubeconfig: sandbox.hub.kubeconfig, input: manifest.stdout });
      assert.equal(run.code, 0, run.stderr);
      left = run.stdout.trim();
      return left === '' || undefined;
    },
    { what: 'every object of the release to be gone (policy-sync-addon: namespace deletion)', timeoutMs: 60_000, context: () => `still there:\n${left}` },
  );
  // The aggregated role, deleted before its parts (they are in a List, which Helm deletes last), is not re-created
  // by the ClusterRole aggregation controller reacting to their deletion.
  await quietFor(3_000);
  assert.equal(await get(admin, CLUSTER_ROLES, undefined, 'policy-sync-hub-policies'), undefined, 'policy-sync-hub-policies stays gone');
  const list = await helm(['list', '--namespace', SYSTEM_NAMESPACE, '--kubeconfig', sandbox.hub.kubeconfig, '-o', 'json']);
  assert.deepEqual(JSON.parse(list.stdout), [], 'no release left');
  assert.ok(await get(admin, { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', namespaced: false }, undefined, 'policysyncparams.policysync.kuadrant.io'));
});
