// The main job, locally: a hub and two spokes (real etcd, kube-apiservers, OCM placement controller and
// work agents), the policy-sync hub controller and a spoke agent per spoke, the sample in examples/ —
// one AuthPolicy authored once on the hub — and its aggregated status; then a spoke team's local
// policy on spoke-2 and the hub showing the synced one Overridden there.
// `npm run local-down` stops every process, the controllers included.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../src/core/objects.ts';
import { readPolicyStatus, type PolicyStatus } from '../src/core/policystatus.ts';
import { STATUS_ANNOTATION } from '../src/core/metadatakeys.ts';
import { formatRows } from '../src/cli/statusformat.ts';
import { KindResolver } from '../src/kube/discovery.ts';
import { KubeHttp } from '../src/kube/http.ts';
import { mergePatch, serverSideApply, getObject } from '../src/kube/writes.ts';
import { repoRoot } from './sandbox/layout.ts';
import { Sandbox } from './sandbox/sandbox.ts';
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

async function startController(sandbox: Sandbox, name: string, role: string[], kubeconfig: string): Promise<void> {
  const port = await freePort();
  const proc = await sandbox.run(
    {
      name,
      command: process.execPath,
      args: [join(repoRoot, 'bin', 'policy-sync.js'), ...role, `--kubeconfig=${kubeconfig}`, `--health-probe-bind-address=127.0.0.1:${port}`, `--metrics-bind-address=127.0.0.1:${port}`],
      log: join(sandbox.layout.logs, `${name.replace('/', '-')}.log`),
    },
    { url: `http://127.0.0.1:${port}/readyz` },
  );
  console.log(`  ${name.padEnd(24)} pid ${proc.pid}`);
}

async function main(): Promise<void> {
  const sandbox = await Sandbox.up();
  const hub = new KubeHttp(sandbox.kubeConfig('hub'));
  const spokes = sandbox.spokes.map((s) => ({ name: s.name, http: new KubeHttp(sandbox.kubeConfig(s.name)) }));
  try {
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
    for (const s of sandbox.spokes) await startController(sandbox, `policy-sync/${s.name}`, ['spoke'], s.kubeconfig);

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
logs:         ${sandbox.layout.logs}
status:       npx policy-sync status -o wide --kubeconfig ${sandbox.hub.kubeconfig}
stop:         npm run local-down`);
  } finally {
    hub.destroy();
    for (const s of spokes) s.http.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
