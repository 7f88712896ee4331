// The main job, locally: a hub and two spokes (real etcd, kube-apiservers, OCM placement controller, addon
// manager and work agents) with the real Kuadrant operator v1.2.0 on every spoke (built by
// hack/build-components.sh; no Kuadrant CR and no gateway controller there, so it accepts AuthPolicies and
// enforces none); the spoke side installed from the hub as the OCM addon in deploy/addon (two kubectl commands
// on the hub, none on a spoke); the policy-sync hub controller and a spoke agent per spoke; the sample in
// examples/ — one AuthPolicy authored once on the hub. It prints the hub's status of that policy beside the
// status the Kuadrant operator wrote on each spoke's copy: per cluster, the operator's own reason and message
// (as it runs here, Failed MissingResource "kuadrant is not installed, please create resource"). Then a spoke
// team's local AuthPolicy on spoke-2: the copy leaves spoke-2 and the hub shows it Overridden there, naming the
// local policy; then the local policy is deleted: the copy is back on spoke-2 with the operator's status again.
// The sandbox has no kubelet, so the agent Deployment the addon places gets no pods: each spoke agent runs
// as a local process instead, with that Deployment's arguments and as the ServiceAccount the addon created.
// The sandbox is the default one (.local, or --root DIR), started with the Kuadrant operator when none is recorded
// there; one recorded without it, or holding cluster data of an earlier sandbox (whose hub had another address:
// OCM's work agents would keep what it placed), makes the demo stop and ask for `npm run local-down -- --purge`,
// which stops every process, the controllers included, and deletes the clusters' data.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../src/core/k8s/objects.ts';
import { readPolicyStatus } from '../src/core/status/annotation.ts';
import type { ClusterStatus, PolicyStatus } from '../src/core/status/policystatus.ts';
import { STATUS_ANNOTATION } from '../src/core/metadatakeys.ts';
import { formatRows, wrap } from '../src/cli/statusformat.ts';
import { KubeHttp } from '../src/kube/http.ts';
import { RESOURCES, collectionPath } from '../src/kube/resource.ts';
import { deleteObject, mergePatch, getObject } from '../src/kube/writes.ts';
import { SPOKE_LABEL, agentObjects, kubectl } from './addon.ts';
import { eventually } from '../testkit/eventually.ts';
import { applyManifests, liveObjects } from '../testkit/manifests.ts';
import { binDir, repoRoot } from '../testkit/sandbox/layout.ts';
import { logTail } from '../testkit/sandbox/processes.ts';
import { ADDON_MANAGER, Sandbox } from '../testkit/sandbox/sandbox.ts';
import { KUADRANT_NAMESPACE, type SpokeController } from '../testkit/sandbox/spokecontrollers.ts';
import { freePort } from '../testkit/sandbox/ports.ts';

const EXAMPLES = join(repoRoot, 'examples');
const POLICY = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', namespaced: true };

function documents(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(join(EXAMPLES, file), 'utf8'))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

function applyAll(http: KubeHttp, objects: KubeObject[]): Promise<void> {
  return applyManifests(http, objects, 'policy-sync-demo');
}

function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000, context?: () => string): Promise<T> {
  return eventually(probe, { what, timeoutMs, intervalMs: 250, ...(context ? { context } : {}) });
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

/** The spoke controller the demo runs: the Kuadrant operator, on every spoke (never Envoy Gateway: one per machine). */
const KUADRANT_OPERATOR: SpokeController = 'kuadrant';
const POLICY_NS = 'payments';
const POLICY_NAME = 'payments-auth';
/** examples/spoke-2-local-override.yaml */
const LOCAL_SPOKE = 'spoke-2';
const LOCAL_POLICY = 'payments-local-auth';
/** examples/spoke.yaml: the route through which the Kuadrant operator computes Enforced. */
const ROUTE = 'payments';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
type Policy = KubeObject & { status?: { conditions?: Condition[] } };
interface Spoke {
  name: string;
  http: KubeHttp;
}

function conditionOf(policy: Policy | undefined, type: string): Condition | undefined {
  return policy?.status?.conditions?.find((c) => c.type === type);
}

/**
 * Who last wrote the object's status, by the apiserver's own account (its managedFields entries for the status
 * subresource, the latest one), and when.
 */
function statusWriter(object: KubeObject): string {
  const fields = (object.metadata.managedFields ?? []) as { manager?: string; subresource?: string; time?: string }[];
  const last = fields.filter((f) => f.subresource === 'status').sort((a, b) => (a.time ?? '').localeCompare(b.time ?? '')).at(-1);
  return last ? `${last.manager ?? 'an unnamed field manager'} at ${last.time ?? 'an unknown time'}` : 'unknown';
}

/**
 * What the hub must say of a cluster whose copy has this status (docs/architecture.md#status-on-the-hub, #reading-spoke-status): the controller's own verdict,
 * its Accepted condition when that is False, else its Enforced condition. Undefined while the controller has
 * written neither.
 */
function controllerVerdict(copy: Policy | undefined): { enforced?: string; reason: string; message: string } | undefined {
  const accepted = conditionOf(copy, 'Accepted');
  if (accepted?.status === 'False') return { reason: accepted.reason ?? '', message: accepted.message ?? '' };
  const enforced = conditionOf(copy, 'Enforced');
  return enforced && { enforced: enforced.status, reason: enforced.reason ?? '', message: enforced.message ?? '' };
}

/** The hub's entry for a cluster says, word for word, what the controller wrote on the copy there, and is up to date. */
function hubAgrees(entry: ClusterStatus | undefined, copy: Policy | undefined): boolean {
  const verdict = controllerVerdict(copy);
  if (!entry || !verdict || !entry.upToDate) return false;
  return entry.reason === verdict.reason && entry.message === verdict.message && (verdict.enforced === undefined || entry.enforced === verdict.enforced);
}

function conditionText(c: Condition): string {
  return `${c.type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`;
}

/** Per cluster, what the hub's state and reason mean, said from what was printed and nothing else. */
function meaning(cluster: string, entry: ClusterStatus, copy: Policy | undefined): string {
  const head = `${cluster}: ${entry.state} ${entry.reason}`;
  if (entry.state === 'Overridden') {
    return `${head} — from the spoke agent's report of local policies: "${entry.message}"; so the hub does not place the copy there (applied ${String(entry.applied)})`;
  }
  if (!hubAgrees(entry, copy)) return `${head} — (the hub has not yet caught up with the copy's status on ${cluster})`;
  if (entry.reason === 'MissingResource') {
    return `${head} — the Kuadrant operator's own words on the copy, carried to the hub: no Kuadrant CR runs on ${cluster}, so it accepts the copy but does not enforce it`;
  }
  if (entry.state === 'Enforced') return `${head} — the Kuadrant operator reports the copy Enforced on ${cluster}`;
  return `${head} — the Kuadrant operator's own reason and message for the copy on ${cluster}, carried to the hub word for word`;
}

const APPLIED_MANIFEST_WORKS = { group: 'work.open-cluster-management.io', version: 'v1', resource: 'appliedmanifestworks', namespaced: false };

/**
 * Spokes holding OCM work applied for a hub at another address: an earlier sandbox's, whose cluster data this one
 * kept (`local-down` keeps it, and a new sandbox gets new ports). A work agent keeps what such a hub placed until
 * it evicts it (after an hour), and objects it shares with the current hub's works stay when those go: the copy
 * would not leave spoke-2. OCM names a hub by the SHA-256 of its address.
 */
async function spokesWithForeignWork(sandbox: Sandbox, spokes: Spoke[]): Promise<string[]> {
  const hubHash = createHash('sha256').update(sandbox.hub.server).digest('hex');
  const found: string[] = [];
  for (const s of spokes) {
    // Retried: on a new sandbox the spokes' CRDs have only just been established (429 while storage initialises).
    const list = await waitFor(`the AppliedManifestWorks on ${s.name}`, () =>
      s.http.request<{ items: { spec?: { hubHash?: string } }[] }>('GET', collectionPath(APPLIED_MANIFEST_WORKS)));
    if (list.items.some((w) => w.spec?.hubHash !== hubHash)) found.push(s.name);
  }
  return found;
}

async function main(): Promise<void> {
  // --root DIR: a sandbox of its own (default .local, where `npm run local-down` finds it).
  const { root } = parseArgs({ options: { root: { type: 'string' } } }).values;
  const rootDir = root === undefined ? undefined : resolve(root);
  const purgeCommand = `npm run local-down -- --purge${root === undefined ? '' : ` --root ${root}`}`;
  // A sandbox's spoke controllers are fixed when it is laid out: one already recorded there without the
  // Kuadrant operator (an earlier demo, or `npm run local-up` without --spoke-controllers) has to go first.
  const existing = Sandbox.attach(rootDir);
  if (existing && !existing.spokeControllers.includes(KUADRANT_OPERATOR)) {
    throw new Error(
      `the sandbox in ${existing.layout.root} runs no Kuadrant operator on its spokes (it was started without --spoke-controllers ${KUADRANT_OPERATOR}, ` +
        `e.g. by an earlier version of this demo): stop it and delete its cluster data with \`${purgeCommand}\`, then run the demo again`,
    );
  }
  const sandbox = await Sandbox.up({
    ...(rootDir === undefined ? {} : { root: rootDir }),
    // A new sandbox gets the Kuadrant operator; a recorded one keeps what it runs (it has the operator).
    ...(existing ? {} : { spokeControllers: [KUADRANT_OPERATOR] }),
    timeoutMs: 180_000,
  });
  if (!(await sandbox.status()).some((c) => c.name === ADDON_MANAGER)) {
    throw new Error(`the sandbox in ${sandbox.layout.root} predates the OCM addon manager: \`${purgeCommand}\`, then run the demo again`);
  }
  const hub = new KubeHttp(sandbox.kubeConfig('hub'));
  const spokes: Spoke[] = sandbox.spokes.map((s) => ({ name: s.name, http: new KubeHttp(sandbox.kubeConfig(s.name)) }));
  const operatorLogs = (): string =>
    spokes.map((s) => `kuadrant-operator/${s.name} log (${sandbox.logOf(`kuadrant-operator/${s.name}`)}):\n${logTail(sandbox.logOf(`kuadrant-operator/${s.name}`), 15)}`).join('\n');
  try {
    const foreign = await spokesWithForeignWork(sandbox, spokes);
    if (foreign.length > 0) {
      throw new Error(
        `${foreign.join(' and ')} ${foreign.length > 1 ? 'hold' : 'holds'} OCM work applied for a hub at another address: cluster data of an earlier sandbox in ` +
          `${sandbox.layout.root} (\`local-down\` keeps it, a new sandbox gets new ports). OCM's work agents keep what that hub placed for an hour, ` +
          `so a synced copy would not leave ${LOCAL_SPOKE}. Stop this sandbox and delete its cluster data with \`${purgeCommand}\`, then run the demo again`,
      );
    }
    console.log(`\n== spoke policy controller: the Kuadrant operator (${readPin('kuadrant-operator')}, built from its Go module) on every spoke`);
    for (const c of (await sandbox.status()).filter((x) => x.name.startsWith('kuadrant-operator/'))) {
      console.log(`  ${c.name.padEnd(28)} pid ${String(c.pid ?? '-')}  ${c.ready ? 'ready' : 'NOT READY'}  log ${c.log}`);
    }
    console.log('  (no Kuadrant CR and no gateway controller on the spokes: nothing is faked, what the operator writes is shown)');

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
    const localSpoke = spokes.find((s) => s.name === LOCAL_SPOKE);
    // A local policy left by an interrupted earlier run would keep the copy off spoke-2 from the start.
    if (localSpoke && (await deleteObject(localSpoke.http, POLICY, POLICY_NS, LOCAL_POLICY))) {
      console.log(`  (deleted ${POLICY_NS}/${LOCAL_POLICY} on ${LOCAL_SPOKE}, left there by an earlier run)`);
    }
    const sample = documents('spoke.yaml');
    const route = (o: KubeObject): boolean => o.kind === 'HTTPRoute';
    for (const s of spokes) {
      // The route after the rest, once the operator has its topology ConfigMap: its reconciles race at start-up
      // (two creates of that ConfigMap, the loser's round left without status until something else changes),
      // and the route showing up in the ConfigMap proves it is past that (as test/e2e/spoke-controllers does).
      await applyAll(s.http, sample.filter((o) => !route(o)));
      await waitFor(`the Kuadrant operator's topology ConfigMap on ${s.name}`, () => getObject(s.http, RESOURCES.configMaps, KUADRANT_NAMESPACE, 'topology'), 120_000, operatorLogs);
      await applyAll(s.http, sample.filter(route));
      await waitFor(
        `HTTPRoute ${POLICY_NS}/${ROUTE} in the Kuadrant operator's topology on ${s.name}`,
        async () => {
          const cm = await getObject<KubeObject & { data?: Record<string, string> }>(s.http, RESOURCES.configMaps, KUADRANT_NAMESPACE, 'topology');
          // Nodes are labelled `<Kind>\n<namespace>/<name>` in its DOT text.
          return cm?.data?.topology?.includes(`label="HTTPRoute\\n${POLICY_NS}/${ROUTE}"`) ? true : undefined;
        },
        120_000,
        operatorLogs,
      );
      console.log(`  ${s.name}: GatewayClass istio, Gateway ${POLICY_NS}/edge, HTTPRoute ${POLICY_NS}/${ROUTE}; the operator has them in its topology (ConfigMap ${KUADRANT_NAMESPACE}/topology)`);
    }
    // The spokes join the demo's ManagedClusterSet, so the Placement in examples/hub.yaml selects them.
    for (const s of spokes) {
      await mergePatch(hub, RESOURCES.managedClusters, undefined, s.name, {
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

    /** The hub's status of the policy and each spoke's copy (undefined where there is none), read together. */
    const observe = async (): Promise<{ status: PolicyStatus | undefined; copies: Map<string, Policy | undefined> }> => {
      const status = readPolicyStatus((await getObject(hub, POLICY, POLICY_NS, POLICY_NAME))?.metadata.annotations?.[STATUS_ANNOTATION]);
      const copies = new Map<string, Policy | undefined>();
      for (const s of spokes) copies.set(s.name, await getObject<Policy>(s.http, POLICY, POLICY_NS, POLICY_NAME));
      return { status, copies };
    };
    type Observation = { status: PolicyStatus; copies: Map<string, Policy | undefined> };
    /** Waits until, on every spoke, `settled` holds for the hub's entry and the copy. */
    const settle = (what: string, settled: (cluster: string, entry: ClusterStatus | undefined, copy: Policy | undefined) => boolean): Promise<Observation> => {
      let last: PolicyStatus | undefined;
      return waitFor(
        what,
        async () => {
          const o = await observe();
          const status = (last = o.status);
          return status && spokes.every((s) => settled(s.name, status.clusters?.[s.name], o.copies.get(s.name))) ? { status, copies: o.copies } : undefined;
        },
        180_000,
        () => `last hub status: ${JSON.stringify(last?.clusters)}\n${operatorLogs()}`,
      );
    };
    const print = (o: Observation): void => {
      console.log('  on the hub (`policy-sync status -o wide`):');
      process.stdout.write(formatRows([{ kind: 'AuthPolicy', namespace: POLICY_NS, name: POLICY_NAME, status: o.status }], true).replace(/^(?=.)/gm, '    '));
      console.log(`  on the hub, per cluster (\`policy-sync explain authpolicies/${POLICY_NS}/${POLICY_NAME}\`):`);
      for (const [cluster, entry] of Object.entries(o.status.clusters ?? {})) {
        const line = `${entry.state} ${entry.reason}: ${entry.message} (applied ${String(entry.applied)}, upToDate ${String(entry.upToDate)})`;
        console.log(wrap(line, `    ${cluster.padEnd(9)} `, ' '.repeat(14), 100).join('\n'));
      }
      console.log(`  on each spoke, the copy ${POLICY_NS}/${POLICY_NAME} and its status as the spoke's controller wrote it:`);
      for (const s of spokes) {
        const copy = o.copies.get(s.name);
        const conditions = copy?.status?.conditions ?? [];
        if (!copy) console.log(`    ${s.name.padEnd(9)} no copy`);
        else if (conditions.length === 0) console.log(`    ${s.name.padEnd(9)} no status`);
        else {
          conditions.forEach((c, i) => console.log(`    ${(i === 0 ? s.name : '').padEnd(9)} ${conditionText(c)}`));
          console.log(`    ${''.padEnd(9)} (copy created ${String(copy.metadata.creationTimestamp)}; status last written by ${statusWriter(copy)})`);
        }
      }
      console.log('  what it means:');
      for (const [cluster, entry] of Object.entries(o.status.clusters ?? {})) {
        console.log(wrap(meaning(cluster, entry, o.copies.get(cluster)), '    ', '      ', 100).join('\n'));
      }
    };

    console.log(`\n== AuthPolicy ${POLICY_NS}/${POLICY_NAME}, authored once on the hub: the Kuadrant operator's status of each copy, on the hub`);
    print(await settle("the hub to show, for every spoke, the Kuadrant operator's status of the copy there", (_c, entry, copy) => entry?.applied === true && hubAgrees(entry, copy)));

    if (localSpoke) {
      console.log(`\n== a local AuthPolicy on ${LOCAL_SPOKE} (examples/spoke-2-local-override.yaml), on the same Gateway`);
      await applyAll(localSpoke.http, documents('spoke-2-local-override.yaml'));
      const overridden = await settle(`${LOCAL_SPOKE} Overridden on the hub and the copy gone from it`, (cluster, entry, copy) =>
        cluster === LOCAL_SPOKE ? entry?.state === 'Overridden' && copy === undefined : entry?.applied === true && hubAgrees(entry, copy));
      print(overridden);
      const local = await waitFor(`the Kuadrant operator's status of ${POLICY_NS}/${LOCAL_POLICY} on ${LOCAL_SPOKE}`, async () => {
        const p = await getObject<Policy>(localSpoke.http, POLICY, POLICY_NS, LOCAL_POLICY);
        return p?.status?.conditions?.length ? p : undefined;
      }, 120_000, operatorLogs);
      console.log(`  the local ${POLICY_NS}/${LOCAL_POLICY} on ${LOCAL_SPOKE}, its status as the spoke's controller wrote it:`);
      for (const c of local.status?.conditions ?? []) console.log(`    ${conditionText(c)}`);
      console.log(`    (status last written by ${statusWriter(local)})`);

      console.log(`\n== the local AuthPolicy deleted from ${LOCAL_SPOKE}: the copy comes back there`);
      await deleteObject(localSpoke.http, POLICY, POLICY_NS, LOCAL_POLICY);
      print(await settle(`the copy back on ${LOCAL_SPOKE}, with the Kuadrant operator's status on the hub`, (_c, entry, copy) => entry?.applied === true && hubAgrees(entry, copy)));
    }

    console.log(`
kubeconfigs:  ${sandbox.layout.kubeconfigs}/{hub,spoke-1,spoke-2}.kubeconfig
addon:        kubectl --kubeconfig ${sandbox.hub.kubeconfig} get managedclusteraddons -A
logs:         ${sandbox.layout.logs}
status:       npx policy-sync status -o wide --kubeconfig ${sandbox.hub.kubeconfig}
explain:      npx policy-sync explain authpolicies/${POLICY_NS}/${POLICY_NAME} --kubeconfig ${sandbox.hub.kubeconfig}
stop:         ${purgeCommand}   (without --purge the clusters' data is kept, and a later demo asks for it gone)`);
  } finally {
    hub.destroy();
    for (const s of spokes) s.http.destroy();
  }
}

/** The version hack/build-components.sh recorded for a binary in .local/bin (`name=version`). */
function readPin(binary: string): string {
  try {
    return readFileSync(join(binDir, `.${binary}.pin`), 'utf8').trim().replace(/^[^=]*=/, '');
  } catch {
    return 'version unknown';
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
