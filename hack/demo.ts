// The main job, locally: a hub and two spokes (real etcd, kube-apiservers, OCM placement controller, addon
// manager and work agents); the spoke side installed from the hub as the OCM addon in deploy/addon (two
// kubectl commands on the hub, none on a spoke); the policy-sync hub controller and a spoke agent per spoke;
// the sample in examples/ — one AuthPolicy authored once on the hub — and its aggregated status; then a spoke
// team's local policy on spoke-2 and the hub showing the synced one Overridden there.
// The sandbox has no kubelet, so the agent Deployment the addon places gets no pods: each spoke agent runs
// as a local process instead, with that Deployment's arguments and as the ServiceAccount the addon created.
// `npm run local-down` stops every process, the controllers included.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../src/core/objects.ts';
import { readPolicyStatus, type PolicyStatus } from '../src/core/policystatus.ts';
import { STATUS_ANNOTATION } from '../src/core/metadatakeys.ts';
import { formatRows } from '../src/cli/statusformat.ts';
import { KindResolver } from '../src/kube/discovery.ts';
import { KubeHttp } from '../src/kube/http.ts';
import { mergePatch, serverSideApply, getObject } from '../src/kube/writes.ts';
import { SPOKE_LABEL, agentObjects, kubectl, liveObjects } from './addon.ts';
import { repoRoot } from './sandbox/layout.ts';
import { ADDON_MANAGER, Sandbox } from './sandbox/sandbox.ts';
import { freePort } from './sandbox/ports.ts';

const EXAMPLES = join(repoRoot, 'examples');
const POLICY = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', namespaced: true };

function documents(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(join(EXAMPLES, file), 'utf8'))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

async function applyAll(http: KubeHttp, objects: KubeObject[]): Promise<void> {
  const kinds = new KindResolver(http);
  for (const o of objects) await serverSideApply(http, await kinds.resolve(o.apiVersion, o.kind), o, { fieldManager: 'policy-sync-demo' });
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function startController(sandbox: Sandbox, name: string, args: string[], kubeconfig: string, env?: Record<string, string>): Promise<void> {
  const port = await freePort();
  // The probe and metrics addresses are this machine's, not a pod's.
  const local = args.filter((a) => !a.startsWith('--health-probe-bind-address') && !a.startsWith('--metrics-bind-address'));
  const proc = await sandbox.run(
    {
      name,
      command: process.execPath,
      args: [join(repoRoot, 'bin', 'policy-sync.js'), ...local, `--kubeconfig=${kubeconfig}`, `--health-probe-bind-address=127.0.0.1:${port}`, `--metrics-bind-address=127.0.0.1:${port}`],
      log: join(sandbox.layout.logs, `${name.replace('/', '-')}.log`),
      ...(env ? { env } : {}),
    },
    { url: `http://127.0.0.1:${port}/readyz` },
  );
  console.log(`  ${name.padEnd(24)} pid ${proc.pid}  ${local.join(' ')}`);
}

const AGENT_NS = 'policy-sync-system';
const AGENT_SA = 'policy-sync-spoke';
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true };

/** `kubectl <args>` on the hub, echoed, failing the demo on a non-zero exit. */
async function onHub(sandbox: Sandbox, args: string[]): Promise<void> {
  console.log(`  $ kubectl ${args.join(' ')}`);
  const run = await kubectl(sandbox.hub.kubeconfig, args);
  if (run.output.trim()) console.log(run.output.trimEnd().replace(/^/gm, '    '));
  if (run.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (exit ${run.code})`);
}

/**
 * A kubeconfig for the spoke agent's ServiceAccount, which the addon created, with a token from the spoke's
 * TokenRequest API: the local agent gets exactly the rights the addon gave it, no more.
 */
async function serviceAccountKubeconfig(sandbox: Sandbox, cluster: string, http: KubeHttp): Promise<string> {
  const review = await http.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${AGENT_NS}/serviceaccounts/${AGENT_SA}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 7 * 24 * 3600 } },
  });
  const server = sandbox.kubeConfig(cluster).getCurrentCluster();
  if (!server) throw new Error(`no cluster in the ${cluster} kubeconfig`);
  const user = `${AGENT_NS}:${AGENT_SA}`;
  const path = join(sandbox.layout.kubeconfigs, `${cluster}-${AGENT_SA}.kubeconfig`);
  writeFileSync(path, stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: server.server, 'certificate-authority-data': server.caData } }],
    users: [{ name: user, user: { token: review.status.token } }],
    contexts: [{ name: cluster, context: { cluster, user } }],
    'current-context': cluster,
  }), { mode: 0o600 });
  return path;
}

async function main(): Promise<void> {
  // --root DIR: a sandbox of its own (default .local, where `npm run local-down` finds it).
  const { root } = parseArgs({ options: { root: { type: 'string' } } }).values;
  const sandbox = await Sandbox.up(root === undefined ? {} : { root: resolve(root) });
  if (!(await sandbox.status()).some((c) => c.name === ADDON_MANAGER)) {
    throw new Error(`the sandbox in ${sandbox.layout.root} predates the OCM addon manager: \`npm run local-down\`, then run the demo again`);
  }
  const hub = new KubeHttp(sandbox.kubeConfig('hub'));
  const spokes = sandbox.spokes.map((s) => ({ name: s.name, http: new KubeHttp(sandbox.kubeConfig(s.name)) }));
  try {
    console.log('\n== the spoke side, from the hub: the OCM addon in deploy/addon (no command on any spoke)');
    await onHub(sandbox, ['apply', '-k', 'deploy/addon']);
    await onHub(sandbox, ['label', 'managedcluster', ...spokes.map((s) => s.name), `${SPOKE_LABEL}=true`, '--overwrite']);
    const expected = agentObjects();
    const counts = new Map<string, number>();
    for (const o of expected) counts.set(o.kind, (counts.get(o.kind) ?? 0) + 1);
    const kinds = [...counts].map(([kind, n]) => (n > 1 ? `${kind} ×${n}` : kind)).join(', ');
    for (const s of spokes) {
      await waitFor(`the addon's objects on ${s.name}`, async () => {
        const live = await liveObjects(s.http, expected);
        return live.every((o) => o !== undefined) ? true : undefined;
      });
      console.log(`  ${s.name}: ${expected.length} objects applied by its OCM work agent: ${kinds}`);
    }

    console.log('\n== sample: examples/spoke.yaml on each spoke, examples/hub.yaml on the hub');
    for (const s of spokes) await applyAll(s.http, documents('spoke.yaml'));
    // The spokes join the demo's ManagedClusterSet, so the Placement in examples/hub.yaml selects them.
    for (const s of spokes) {
      await mergePatch(hub, { group: 'cluster.open-cluster-management.io', version: 'v1', resource: 'managedclusters', namespaced: false }, undefined, s.name, {
        metadata: { labels: { 'cluster.open-cluster-management.io/clusterset': 'policy-sync-demo' } },
      });
    }
    await applyAll(hub, documents('hub.yaml'));

    console.log('\n== controllers');
    await startController(sandbox, 'policy-sync/hub', ['hub'], sandbox.hub.kubeconfig);
    console.log('  (no kubelet here: the spoke agent Deployment the addon placed gets no pods, so each agent runs as a local');
    console.log("   process with that Deployment's arguments, as the ServiceAccount the addon created)");
    for (const s of spokes) {
      const deployment = await getObject(s.http, DEPLOYMENTS, AGENT_NS, 'policy-sync-spoke');
      const args = (deployment?.spec as { template: { spec: { containers: { args?: string[] }[] } } } | undefined)?.template.spec.containers[0]?.args;
      if (!args) throw new Error(`no spoke agent Deployment on ${s.name}`);
      await startController(sandbox, `policy-sync/${s.name}`, args, await serviceAccountKubeconfig(sandbox, s.name, s.http), { POD_NAMESPACE: AGENT_NS });
    }

    const status = async (): Promise<PolicyStatus | undefined> =>
      readPolicyStatus((await getObject(hub, POLICY, 'payments', 'payments-auth'))?.metadata.annotations?.[STATUS_ANNOTATION]);
    const show = (s: PolicyStatus): void => {
      process.stdout.write(formatRows([{ kind: 'AuthPolicy', namespace: 'payments', name: 'payments-auth', status: s }], true));
    };

    console.log('\n== AuthPolicy payments/payments-auth, authored once on the hub: aggregated status');
    show(await waitFor('the policy to be applied on both spokes', async () => {
      const s = await status();
      return s && s.summary.applied === sandbox.spokes.length ? s : undefined;
    }));
    console.log('   (Pending: no Kuadrant policy controller runs on these spokes to report Enforced.)');

    console.log('\n== a local AuthPolicy on spoke-2 (examples/spoke-2-local-override.yaml)');
    const spoke2 = spokes.find((s) => s.name === 'spoke-2');
    if (spoke2) {
      await applyAll(spoke2.http, documents('spoke-2-local-override.yaml'));
      show(await waitFor('spoke-2 to report Overridden', async () => {
        const s = await status();
        return s?.clusters?.['spoke-2']?.state === 'Overridden' ? s : undefined;
      }));
    }

    console.log(`
kubeconfigs:  ${sandbox.layout.kubeconfigs}/{hub,spoke-1,spoke-2}.kubeconfig
addon:        kubectl --kubeconfig ${sandbox.hub.kubeconfig} get managedclusteraddons -A
logs:         ${sandbox.layout.logs}
status:       npx policy-sync status -o wide --kubeconfig ${sandbox.hub.kubeconfig}
stop:         npm run local-down${root === undefined ? '' : ` -- --root ${root}`}`);
  } finally {
    hub.destroy();
    for (const s of spokes) s.http.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
