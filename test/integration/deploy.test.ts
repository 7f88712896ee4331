// deploy/: every kustomization renders with the kubectl this repository builds (kustomize inside), holds
// the objects an install needs, passes only flags the program has, lets kustomize `images` replace the
// image, and the rendered output passes a server-side dry-run on the sandbox hub and spoke-1 (admission,
// schema and RBAC validation by a real apiserver). deploy/addon's AddOnTemplate is what hack/gen-addon.ts
// generates from deploy/spoke (test/e2e/addon.test.ts installs the addon for real).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { stringify } from 'yaml';
import { DELETION_ORPHAN, LOG_LEVEL_ARG, TEMPLATE_FILE, renderAddonTemplate } from '../../hack/gen-addon.ts';
import { readPackage } from '../../hack/gen-chart.ts';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { eventually } from '../../testkit/eventually.ts';
import { holdExclusive } from '../../testkit/exclusive.ts';
import { createNamespace, get, removeNamespace } from '../../testkit/fixtures.ts';
import { find, kubectl, kustomize, toYaml, type Rendered } from '../../testkit/kubectl.ts';
import { testSandbox, testSandboxRoot } from '../../testkit/test-sandbox.ts';

const SYSTEM_NS = 'policy-sync-system';
// The release's image: package.json's version (hack/set-version.ts).
const IMAGE = `ghcr.io/kuadrant/policy-sync:${readPackage().version}`;

let sandbox: Sandbox;
let release: (() => void) | undefined;
const rendered = new Map<string, Rendered>();
/** Namespaces this file created, per cluster, deleted again after. */
const created: { cluster: string; http: KubeHttp }[] = [];

before(async () => {
  sandbox = await testSandbox();
  // rbac.test.ts applies deploy/hub for real and deletes policy-sync-system on the hub afterwards.
  release = await holdExclusive(testSandboxRoot, 'hub-policy-sync-system');
  for (const dir of ['deploy/hub', 'deploy/hub/kuadrant', 'deploy/spoke', 'deploy/spoke/kuadrant', 'deploy/addon']) rendered.set(dir, await kustomize(dir));
});

after(async () => {
  for (const { http } of created) {
    await removeNamespace(http, SYSTEM_NS);
    await eventually(async () => !(await get(http, RESOURCES.namespaces, undefined, SYSTEM_NS)), {
      what: `namespace ${SYSTEM_NS} to be gone`,
      timeoutMs: 60_000,
    });
    http.destroy();
  }
  release?.();
});

function output(dir: string): Rendered {
  const r = rendered.get(dir);
  assert.ok(r, `${dir} was rendered`);
  assert.equal(r.code, 0, `kubectl kustomize ${dir} failed:\n${r.stderr}`);
  return r;
}

function names(objects: KubeObject[]): string[] {
  return objects.map((o) => `${o.kind}/${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`).sort();
}

type Container = {
  image?: string;
  args?: string[];
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
};
type PodSpec = { serviceAccountName?: string; securityContext?: { runAsNonRoot?: boolean; runAsUser?: number }; containers: Container[] };

function podSpec(deployment: KubeObject | undefined): PodSpec {
  assert.ok(deployment, 'a Deployment is rendered');
  return (deployment.spec as { template: { spec: PodSpec } }).template.spec;
}

function aggregationLabels(role: KubeObject | undefined): Record<string, string>[] {
  const rule = (role as { aggregationRule?: { clusterRoleSelectors?: { matchLabels?: Record<string, string> }[] } } | undefined)?.aggregationRule;
  return (rule?.clusterRoleSelectors ?? []).map((s) => s.matchLabels ?? {});
}

/** The long options `policy-sync <command> --help` lists. */
function programFlags(command: string): Promise<Set<string>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bin/policy-sync.js'), command, '--help'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(new Set(text.match(/--[a-z][a-z0-9-]*/g) ?? [])) : reject(new Error(`policy-sync ${command} --help exited ${code}`))));
  });
}

/** Checks what both Deployments share: the image, a known command, existing flags, probes, ports, hardening. */
async function checkDeployment(deployment: KubeObject | undefined, command: string, serviceAccount: string): Promise<void> {
  const spec = podSpec(deployment);
  assert.equal(spec.serviceAccountName, serviceAccount);
  assert.equal(spec.securityContext?.runAsNonRoot, true);
  assert.equal(typeof spec.securityContext?.runAsUser, 'number', 'a numeric user, so that the kubelet can verify runAsNonRoot');
  assert.notEqual(spec.securityContext?.runAsUser, 0);
  const [c] = spec.containers;
  assert.ok(c);
  assert.equal(c.image, IMAGE);
  assert.equal(c.args?.[0], command);
  const flags = await programFlags(command);
  for (const arg of c.args?.slice(1) ?? []) {
    const flag = arg.split('=')[0]!;
    assert.ok(flags.has(flag), `${flag} is passed to \`policy-sync ${command}\` but \`policy-sync ${command} --help\` does not list it`);
  }
  const ports = new Map((c.ports ?? []).map((p) => [p.name, p.containerPort]));
  assert.equal(ports.get('health'), 8081);
  assert.equal(ports.get('metrics'), 8080);
  assert.deepEqual(c.livenessProbe?.httpGet, { path: '/healthz', port: 'health' });
  assert.deepEqual(c.readinessProbe?.httpGet, { path: '/readyz', port: 'health' });
  assert.ok(c.resources?.requests?.cpu && c.resources.requests.memory && c.resources.limits?.memory, 'resource requests and a memory limit');
  assert.equal(c.securityContext?.readOnlyRootFilesystem, true);
  assert.equal(c.securityContext?.allowPrivilegeEscalation, false);
  assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL']);
}

test('kubectl kustomize renders deploy/hub with the namespace, CRD, service account, RBAC and Deployment', async () => {
  const { objects } = output('deploy/hub');
  assert.deepEqual(names(objects), [
    'ClusterRole/policy-sync-hub',
    'ClusterRole/policy-sync-hub-policies',
    'ClusterRole/policy-sync-policyvariants-edit',
    'ClusterRole/policy-sync-policyvariants-view',
    'ClusterRoleBinding/policy-sync-hub',
    'ClusterRoleBinding/policy-sync-hub-policies',
    'CustomResourceDefinition/policysyncparams.policysync.kuadrant.io',
    'CustomResourceDefinition/policyvariants.policysync.kuadrant.io',
    'Deployment/policy-sync-system/policy-sync-hub',
    'Namespace/policy-sync-system',
    'Role/policy-sync-system/policy-sync-hub-leader-election',
    'RoleBinding/policy-sync-system/policy-sync-hub-leader-election',
    'ServiceAccount/policy-sync-system/policy-sync-hub',
  ]);
  const policies = find(objects, 'ClusterRole', 'policy-sync-hub-policies');
  assert.deepEqual(aggregationLabels(policies), [{ 'policysync.kuadrant.io/aggregate-to-hub': 'true' }]);
  assert.equal((policies as { rules?: unknown }).rules, undefined, 'an aggregated role carries no rules of its own (re-applying it must not clear them)');
  for (const binding of ['policy-sync-hub', 'policy-sync-hub-policies']) {
    const b = find(objects, 'ClusterRoleBinding', binding) as { roleRef?: { name: string }; subjects?: unknown[] } | undefined;
    assert.equal(b?.roleRef?.name, binding);
    assert.deepEqual(b?.subjects, [{ kind: 'ServiceAccount', name: 'policy-sync-hub', namespace: SYSTEM_NS }]);
  }
  // Tenants write PolicyVariants beside their policies: the built-in namespace roles get them by aggregation.
  const aggregatedTo = (name: string): string[] => Object.keys(find(objects, 'ClusterRole', name)?.metadata.labels ?? {}).filter((k) => k.startsWith('rbac.authorization.k8s.io/aggregate-to-')).sort();
  assert.deepEqual(aggregatedTo('policy-sync-policyvariants-edit'), ['rbac.authorization.k8s.io/aggregate-to-admin', 'rbac.authorization.k8s.io/aggregate-to-edit']);
  assert.deepEqual(aggregatedTo('policy-sync-policyvariants-view'), ['rbac.authorization.k8s.io/aggregate-to-view']);
  const deployment = find(objects, 'Deployment', 'policy-sync-hub');
  assert.equal((deployment?.spec as { replicas?: number }).replicas, 2);
  await checkDeployment(deployment, 'hub', 'policy-sync-hub');
});

test('kubectl kustomize renders deploy/spoke with the agent, its RBAC and the work agent\'s Role for the spoke config', async () => {
  const { objects } = output('deploy/spoke');
  assert.deepEqual(names(objects), [
    'ClusterRole/policy-sync-spoke-policies',
    'ClusterRoleBinding/policy-sync-spoke-policies',
    'Deployment/policy-sync-system/policy-sync-spoke',
    'Namespace/policy-sync-system',
    'Role/policy-sync-system/policy-sync-spoke',
    'Role/policy-sync-system/policy-sync-work-agent',
    'RoleBinding/policy-sync-system/policy-sync-spoke',
    'RoleBinding/policy-sync-system/policy-sync-work-agent',
    'ServiceAccount/policy-sync-system/policy-sync-spoke',
  ]);
  assert.deepEqual(aggregationLabels(find(objects, 'ClusterRole', 'policy-sync-spoke-policies')), [{ 'policysync.kuadrant.io/aggregate-to-spoke': 'true' }]);
  // In its namespace the agent changes only its report and heartbeat, by server-side apply (which needs create the first time).
  assert.deepEqual((find(objects, 'Role', 'policy-sync-spoke') as { rules?: unknown[] } | undefined)?.rules, [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'] },
    { apiGroups: [''], resources: ['configmaps'], resourceNames: ['policy-sync-spoke-report', 'policy-sync-spoke-heartbeat'], verbs: ['create', 'get', 'patch', 'update'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
  ]);
  const workAgent = find(objects, 'RoleBinding', 'policy-sync-work-agent') as { subjects?: unknown[] } | undefined;
  assert.deepEqual(workAgent?.subjects, [{ kind: 'ServiceAccount', name: 'klusterlet-work-sa', namespace: 'open-cluster-management-agent' }]);
  await checkDeployment(find(objects, 'Deployment', 'policy-sync-spoke'), 'spoke', 'policy-sync-spoke');
});

test('the Kuadrant components grant each policy kind by aggregation labels, for the hub, the spoke agent and the work agent', () => {
  const kinds = ['authpolicies', 'dnspolicies', 'ratelimitpolicies', 'tlspolicies'];
  type Role = KubeObject & { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
  const hub = output('deploy/hub/kuadrant').objects as Role[];
  assert.deepEqual(names(hub), kinds.map((k) => `ClusterRole/policy-sync-hub-kuadrant-${k}`));
  for (const role of hub) {
    assert.equal(role.metadata.labels?.['policysync.kuadrant.io/aggregate-to-hub'], 'true');
    assert.deepEqual(role.rules, [{ apiGroups: ['kuadrant.io'], resources: [role.metadata.name.replace('policy-sync-hub-kuadrant-', '')], verbs: ['get', 'list', 'watch', 'patch'] }]);
  }
  const spoke = output('deploy/spoke/kuadrant').objects as Role[];
  assert.deepEqual(names(spoke), [...kinds.map((k) => `ClusterRole/policy-sync-spoke-policies-kuadrant-${k}`), 'ClusterRole/policy-sync-work-agent-kuadrant']);
  for (const kind of kinds) {
    const role = find(spoke, 'ClusterRole', `policy-sync-spoke-policies-kuadrant-${kind}`) as Role;
    assert.equal(role.metadata.labels?.['policysync.kuadrant.io/aggregate-to-spoke'], 'true');
    // The agent watches policies, and patches only the sync's own copies (their dropped labels and annotations); no status.
    assert.deepEqual(role.rules, [{ apiGroups: ['kuadrant.io'], resources: [kind], verbs: ['list', 'watch', 'patch'] }]);
  }
  const work = find(spoke, 'ClusterRole', 'policy-sync-work-agent-kuadrant') as Role;
  assert.equal(work.metadata.labels?.['open-cluster-management.io/aggregate-to-work'], 'true');
  assert.equal(work.rules.length, 1);
  assert.deepEqual(work.rules[0]?.apiGroups, ['kuadrant.io']);
  assert.deepEqual([...(work.rules[0]?.resources ?? [])].sort(), kinds);
  assert.deepEqual(work.rules[0]?.verbs, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']);
});

test('deploy/addon/addontemplate.yaml is what hack/gen-addon.ts generates from deploy/spoke and deploy/spoke/kuadrant', () => {
  assert.equal(readFileSync(TEMPLATE_FILE, 'utf8'), renderAddonTemplate(), 'deploy/addon is out of date: run `npx tsx hack/gen-addon.ts`');
});

test('kubectl kustomize renders deploy/addon: the addon, its template of the whole spoke side, its deployment config and placement', () => {
  const { objects } = output('deploy/addon');
  assert.deepEqual(names(objects), [
    'AddOnDeploymentConfig/policy-sync-addon/policy-sync',
    'AddOnTemplate/policy-sync',
    'ClusterManagementAddOn/policy-sync',
    'ManagedClusterSet/policy-sync',
    'ManagedClusterSetBinding/policy-sync-addon/policy-sync',
    'Namespace/policy-sync-addon',
    'Placement/policy-sync-addon/policy-sync',
  ]);
  // The template carries exactly the spoke side of the manual install, with its two parameters.
  type Manifest = KubeObject & { spec?: { template?: { spec?: PodSpec } } };
  const manifests = (find(objects, 'AddOnTemplate', 'policy-sync')?.spec as { agentSpec: { workload: { manifests: Manifest[] } } }).agentSpec.workload.manifests;
  const manual = [...output('deploy/spoke').objects, ...output('deploy/spoke/kuadrant').objects];
  assert.deepEqual(names(manifests), names(manual));
  assert.deepEqual(find(manifests, 'Namespace', SYSTEM_NS)?.metadata.annotations, { [DELETION_ORPHAN]: '' });
  const agent = (find(manifests, 'Deployment', 'policy-sync-spoke') as Manifest).spec?.template?.spec?.containers[0];
  const manualAgent = podSpec(find(manual, 'Deployment', 'policy-sync-spoke')).containers[0];
  assert.deepEqual(agent?.args, [...(manualAgent?.args ?? []), LOG_LEVEL_ARG]);
  // The addon refers to its template, deployment config and placement by the names they have.
  const cma = find(objects, 'ClusterManagementAddOn', 'policy-sync')?.spec as {
    supportedConfigs: { resource: string; defaultConfig: { name: string; namespace?: string } }[];
    installStrategy: { type: string; placements: { name: string; namespace: string }[] };
  };
  assert.deepEqual(cma.supportedConfigs.map((c) => [c.resource, c.defaultConfig]), [
    ['addontemplates', { name: 'policy-sync' }],
    ['addondeploymentconfigs', { name: 'policy-sync', namespace: 'policy-sync-addon' }],
  ]);
  assert.equal(cma.installStrategy.type, 'Placements');
  assert.deepEqual(cma.installStrategy.placements.map((p) => `${p.namespace}/${p.name}`), ['policy-sync-addon/policy-sync']);
  // The deployment config keeps the template's namespace, sets LOG_LEVEL, and its image entry names the template's image.
  const config = find(objects, 'AddOnDeploymentConfig', 'policy-sync')?.spec as {
    agentInstallNamespace?: string;
    registries?: { source: string; mirror: string }[];
    customizedVariables?: { name: string; value: string }[];
  };
  assert.equal(config.agentInstallNamespace, '', 'an empty agentInstallNamespace keeps the agent in the template\'s namespace');
  assert.deepEqual(config.registries?.map((r) => r.source), [agent?.image]);
  assert.deepEqual(config.customizedVariables?.map((v) => v.name), ['LOG_LEVEL']);
});

test('an overlay replaces the image through kustomize images', async () => {
  const dir = mkdtempSync(join(testSandboxRoot, 'overlay-'));
  try {
    for (const base of ['deploy/hub', 'deploy/spoke']) {
      writeFileSync(join(dir, 'kustomization.yaml'), stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: [relative(dir, join(repoRoot, base))],
        images: [{ name: 'ghcr.io/kuadrant/policy-sync', newName: 'registry.example.com/policy-sync', newTag: 'v0.1.0' }],
      }));
      const r = await kustomize(dir);
      assert.equal(r.code, 0, r.stderr);
      const deployment = r.objects.find((o) => o.kind === 'Deployment');
      assert.equal(podSpec(deployment).containers[0]?.image, 'registry.example.com/policy-sync:v0.1.0', base);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Creates policy-sync-system on the cluster unless there: a dry-run creates no namespace, so the namespaced objects would be refused. */
async function ensureSystemNamespace(cluster: string): Promise<void> {
  const http = new KubeHttp(sandbox.kubeConfig(cluster));
  const existing = await get(http, RESOURCES.namespaces, undefined, SYSTEM_NS);
  if (existing?.metadata.deletionTimestamp) {
    await eventually(async () => !(await get(http, RESOURCES.namespaces, undefined, SYSTEM_NS)), { what: `the terminating ${SYSTEM_NS} to go`, timeoutMs: 60_000 });
  }
  if (!existing || existing.metadata.deletionTimestamp) {
    await createNamespace(http, SYSTEM_NS);
    created.push({ cluster, http });
  } else {
    http.destroy();
  }
}

async function serverDryRun(cluster: string, dirs: string[]): Promise<void> {
  await ensureSystemNamespace(cluster);
  const objects = dirs.flatMap((d) => output(d).objects);
  const run = await kubectl(['apply', '--dry-run=server', '-f', '-'], { kubeconfig: sandbox.cluster(cluster).kubeconfig, input: toYaml(objects) });
  assert.equal(run.code, 0, `kubectl apply --dry-run=server on ${cluster} failed:\n${run.stderr}`);
  const lines = run.stdout.trim().split('\n');
  assert.equal(lines.length, objects.length, `one line per object:\n${run.stdout}`);
  for (const line of lines) assert.match(line, /\(server dry run\)$/);
  for (const o of objects) {
    const resource = `${o.kind.toLowerCase()}${o.apiVersion.includes('/') ? `.${o.apiVersion.split('/')[0]}` : ''}/${o.metadata.name}`;
    assert.ok(lines.some((l) => l.startsWith(`${resource} `)), `${resource} in the dry-run output:\n${run.stdout}`);
  }
}

test('deploy/hub and its Kuadrant roles pass a server-side dry-run on the sandbox hub', async () => {
  await serverDryRun('hub', ['deploy/hub', 'deploy/hub/kuadrant']);
});

test('deploy/spoke and its Kuadrant roles pass a server-side dry-run on spoke-1', async () => {
  await serverDryRun('spoke-1', ['deploy/spoke', 'deploy/spoke/kuadrant']);
});
