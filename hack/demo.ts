// The main job, locally, in a few headed steps: a hub and two spokes (real etcd, kube-apiservers, OCM
// placement controller, addon manager, registration and work agents) with the real spoke policy controllers
// built by hack/build-components.sh — the Kuadrant operator v1.2.0 on every spoke and Envoy Gateway v1.5.0 on
// spoke-1 (one per machine: it binds fixed ports); the spoke side installed from the hub as the OCM addon in
// deploy/addon (two kubectl commands on the hub); the policy-sync hub controller and a spoke agent per spoke;
// the sample in examples/ — two policies authored once on the hub:
// - AuthPolicy payments/payments-auth on Gateway `edge` (every spoke). No Kuadrant CR and no Kuadrant data
//   plane run here, so the operator accepts each copy and enforces none: the hub shows, per cluster, its own
//   reason and message (Failed MissingResource "kuadrant is not installed, please create resource").
// - BackendTrafficPolicy payments/payments-timeouts on Gateway `api` (placed on the clusters labelled as
//   running Envoy Gateway: spoke-1). Envoy Gateway accepts the copy (its GEP-713 ancestor status), and the hub
//   shows the cluster Enforced, Accepted: the whole loop, hub policy → ManifestWork → work agent → spoke copy →
//   the controller's verdict → feedback → hub, succeeding.
// Then a spoke team's local AuthPolicy on spoke-2: the copy leaves spoke-2 and the hub shows it Overridden
// there, naming the local policy; then the local policy is deleted and the copy comes back. Last, the hub's
// Gateways (`kubectl get gateway -A`) and `policy-sync status -o wide`, as a user would run them.
// The sandbox has no kubelet, so the agent Deployment the addon places gets no pods: each spoke agent runs
// as a local process instead, with that Deployment's arguments and as the ServiceAccount the addon created.
// The sandbox is the default one (.local, or --root DIR), started with both spoke controllers when none is
// recorded there; one recorded without them, or holding cluster data of an earlier sandbox (whose hub had
// another address: OCM's work agents would keep what it placed), makes the demo stop and ask for
// `npm run local-down -- --purge`, which stops every process, the controllers included, and deletes the
// clusters' data.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../src/core/k8s/objects.ts';
import { readPolicyStatus } from '../src/core/status/annotation.ts';
import type { ClusterStatus, PolicyStatus } from '../src/core/status/policystatus.ts';
import { STATUS_ANNOTATION } from '../src/core/metadatakeys.ts';
import { wrap } from '../src/cli/statusformat.ts';
import { KubeHttp } from '../src/kube/http.ts';
import { RESOURCES, collectionPath, type ResourceRef } from '../src/kube/resource.ts';
import { deleteObject, mergePatch, getObject, serverSideApply } from '../src/kube/writes.ts';
import { SPOKE_LABEL, agentObjects, kubectl } from './addon.ts';
import { eventually, type EventuallyOptions } from '../testkit/eventually.ts';
import { applyManifests, liveObjects } from '../testkit/manifests.ts';
import { binDir, repoRoot } from '../testkit/sandbox/layout.ts';
import { logTail } from '../testkit/sandbox/processes.ts';
import { ADDON_MANAGER, Sandbox } from '../testkit/sandbox/sandbox.ts';
import { ENVOY_GATEWAY_SPOKE, KUADRANT_NAMESPACE, type SpokeController } from '../testkit/sandbox/spokecontrollers.ts';
import { freePort } from '../testkit/sandbox/ports.ts';

const EXAMPLES = join(repoRoot, 'examples');
const POLICY_CLI = join(repoRoot, 'bin', 'policy-sync.js');
const AUTH_POLICIES: ResourceRef = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', namespaced: true };
const BACKEND_TRAFFIC_POLICIES: ResourceRef = { group: 'gateway.envoyproxy.io', version: 'v1alpha1', resource: 'backendtrafficpolicies', namespaced: true };

function documents(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(join(EXAMPLES, file), 'utf8'))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

function applyAll(http: KubeHttp, objects: KubeObject[]): Promise<void> {
  return applyManifests(http, objects, 'policy-sync-demo');
}

function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000, context?: () => string, nudge?: EventuallyOptions['nudge']): Promise<T> {
  return eventually(probe, { what, timeoutMs, intervalMs: 250, ...(context ? { context } : {}), ...(nudge ? { nudge } : {}) });
}

const started = Date.now();
let stepCount = 0;
/** A headed step: what happens and why, with the time since the demo started. */
function step(title: string, why?: string): void {
  stepCount += 1;
  console.log(`\n== ${stepCount}. ${title}   [${seconds(Date.now() - started)}]`);
  if (why) console.log(wrap(why, '   ', '   ', 110).join('\n'));
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

/** Starts `policy-sync <args>` as a sandbox process, once ready; returns the line that says so. */
async function startController(sandbox: Sandbox, name: string, args: string[], kubeconfig: string, env?: Record<string, string>): Promise<string> {
  const port = await freePort();
  // The probe and metrics addresses are this machine's, not a pod's.
  const local = args.filter((a) => !a.startsWith('--health-probe-bind-address') && !a.startsWith('--metrics-bind-address'));
  const proc = await sandbox.run(
    {
      name,
      command: process.execPath,
      args: [POLICY_CLI, ...local, `--kubeconfig=${kubeconfig}`, `--health-probe-bind-address=127.0.0.1:${port}`, `--metrics-bind-address=127.0.0.1:${port}`],
      log: join(sandbox.layout.logs, `${name.replace('/', '-')}.log`),
      ...(env ? { env } : {}),
    },
    { url: `http://127.0.0.1:${port}/readyz` },
  );
  return `  ${name.padEnd(24)} pid ${proc.pid}  ${local.join(' ')}`;
}

const AGENT_NS = 'policy-sync-system';
const AGENT_SA = 'policy-sync-spoke';
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true };

/** `kubectl <args>` on the hub, echoed, failing the demo on a non-zero exit. */
async function onHub(sandbox: Sandbox, args: string[]): Promise<void> {
  console.log(`  $ kubectl ${args.map(shellQuoted).join(' ')}`);
  const run = await kubectl(sandbox.hub.kubeconfig, args);
  if (run.output.trim()) console.log(run.output.trimEnd().replace(/^/gm, '    '));
  if (run.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (exit ${run.code})`);
}

/** An argument as a user would type it into a shell. */
function shellQuoted(arg: string): string {
  return /^[\w\-./=:,]*$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** `policy-sync <args>` against the hub, echoed, as a user runs it; failing the demo on a non-zero exit. */
async function policySync(sandbox: Sandbox, args: string[]): Promise<void> {
  console.log(`  $ policy-sync ${args.join(' ')}`);
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [POLICY_CLI, ...args, `--kubeconfig=${sandbox.hub.kubeconfig}`], { cwd: repoRoot });
    const output = `${stdout}${stderr}`;
    if (output.trim()) console.log(output.trimEnd().replace(/^/gm, '    '));
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    throw new Error(`policy-sync ${args.join(' ')} failed (exit ${String(e.code)}): ${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
  }
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

/** The spoke controllers the demo runs: the Kuadrant operator on every spoke, Envoy Gateway on spoke-1. */
const SPOKE_CONTROLLERS: SpokeController[] = ['kuadrant', 'envoy-gateway'];
const POLICY_NS = 'payments';
/** examples/spoke-2-local-override.yaml */
const LOCAL_SPOKE = 'spoke-2';
const LOCAL_POLICY = 'payments-local-auth';
/** examples/spoke.yaml: the route through which the Kuadrant operator computes Enforced. */
const ROUTE = 'payments';
/** examples/hub.yaml: Placement envoy-gateway-spokes selects the ManagedClusters labelled so. */
const GATEWAY_CONTROLLER_LABEL = 'policy-sync-demo/gateway-controller';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface Ancestor {
  ancestorRef: { kind?: string; name: string; namespace?: string };
  controllerName: string;
  conditions: Condition[];
}
type Policy = KubeObject & { status?: { conditions?: Condition[]; ancestors?: Ancestor[] } };
interface Spoke {
  name: string;
  http: KubeHttp;
}
/** A controller's verdict on a copy, as the hub must carry it (docs/design/status.md#reading-spoke-status). */
interface Verdict {
  enforced?: string;
  reason: string;
  message: string;
}

/** One policy of the sample, authored once on the hub, and how its spokes' controller states its verdict. */
interface Synced {
  kind: string;
  resource: ResourceRef;
  name: string;
  /** Who judges the copies. */
  controller: string;
  /** The clusters its Gateway is placed on. */
  clusters: Spoke[];
  verdict: (copy: Policy | undefined) => Verdict | undefined;
  /** The copy's status, line by line, as its controller wrote it. */
  statusLines: (copy: Policy) => string[];
}

function conditionOf(policy: Policy | undefined, type: string): Condition | undefined {
  return policy?.status?.conditions?.find((c) => c.type === type);
}

function conditionText(c: Condition): string {
  return `${c.type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`;
}

/** Kuadrant's conditions: Accepted when it is False, else Enforced. Undefined while it has written neither. */
function kuadrantVerdict(copy: Policy | undefined): Verdict | undefined {
  const accepted = conditionOf(copy, 'Accepted');
  if (accepted?.status === 'False') return { reason: accepted.reason ?? '', message: accepted.message ?? '' };
  const enforced = conditionOf(copy, 'Enforced');
  return enforced && { enforced: enforced.status, reason: enforced.reason ?? '', message: enforced.message ?? '' };
}

/** Envoy Gateway's GEP-713 ancestor status: the Accepted condition of its one ancestor (the Gateway). */
function envoyGatewayVerdict(copy: Policy | undefined): Verdict | undefined {
  const accepted = copy?.status?.ancestors?.[0]?.conditions.find((c) => c.type === 'Accepted');
  return accepted && { enforced: accepted.status, reason: accepted.reason ?? '', message: accepted.message ?? '' };
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

/** The hub's entry for a cluster says, word for word, what the controller wrote on the copy there, and is up to date. */
function hubAgrees(policy: Synced, entry: ClusterStatus | undefined, copy: Policy | undefined): boolean {
  const verdict = policy.verdict(copy);
  if (!entry || !verdict || !entry.upToDate) return false;
  return entry.reason === verdict.reason && entry.message === verdict.message && (verdict.enforced === undefined || entry.enforced === verdict.enforced);
}

/** Per cluster, what the hub's state and reason mean, said from what was printed and nothing else. */
function meaning(policy: Synced, cluster: string, entry: ClusterStatus, copy: Policy | undefined): string {
  const head = `${cluster}: ${entry.state} ${entry.reason}`;
  if (entry.state === 'Overridden') {
    return `${head} — from the spoke agent's report of local policies: "${entry.message}"; so the hub does not place the copy there (applied ${String(entry.applied)})`;
  }
  if (!hubAgrees(policy, entry, copy)) return `${head} — (the hub has not yet caught up with the copy's status on ${cluster})`;
  if (entry.reason === 'MissingResource') {
    return `${head} — ${policy.controller}'s own words on the copy, carried to the hub: no Kuadrant CR runs on ${cluster}, so it accepts the copy but does not enforce it`;
  }
  if (policy.resource === BACKEND_TRAFFIC_POLICIES && entry.state === 'Enforced') {
    return `${head} — ${policy.controller} accepted the copy for its Gateway on ${cluster} (its GEP-713 ancestor status), and the hub counts an accepted copy as Enforced: the loop succeeded`;
  }
  if (entry.state === 'Enforced') return `${head} — ${policy.controller} reports the copy Enforced on ${cluster}`;
  return `${head} — ${policy.controller}'s own reason and message for the copy on ${cluster}, carried to the hub word for word`;
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

/**
 * An event the Kuadrant operator's status updaters subscribe to: a GatewayClass no controller owns, created and
 * deleted. The operator drops a status write that conflicts (the work agent writing the copy at that moment)
 * and writes none until its next event or periodic pass (minutes); this makes the event (as the e2e suite does).
 */
async function nudgeKuadrantOperator(spoke: Spoke): Promise<void> {
  const name = `policy-sync-demo-nudge-${Date.now()}`;
  await serverSideApply(spoke.http, RESOURCES.gatewayClasses, {
    apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name }, spec: { controllerName: 'policy-sync-demo.io/nobody' },
  }, { fieldManager: 'policy-sync-demo' });
  await deleteObject(spoke.http, RESOURCES.gatewayClasses, undefined, name);
}

async function main(): Promise<void> {
  // --root DIR: a sandbox of its own (default .local, where `npm run local-down` finds it).
  const { root } = parseArgs({ options: { root: { type: 'string' } } }).values;
  const rootDir = root === undefined ? undefined : resolve(root);
  const purgeCommand = `npm run local-down -- --purge${root === undefined ? '' : ` --root ${root}`}`;
  // A sandbox's spoke controllers are fixed when it is laid out: one already recorded there without both (an
  // earlier demo, or `npm run local-up` without --spoke-controllers) has to go first.
  const existing = Sandbox.attach(rootDir);
  if (existing && !SPOKE_CONTROLLERS.every((c) => existing.spokeControllers.includes(c))) {
    throw new Error(
      `the sandbox in ${existing.layout.root} runs spoke controllers [${existing.spokeControllers.join(', ')}], not [${SPOKE_CONTROLLERS.join(', ')}] ` +
        `(it was started by an earlier version of this demo, or without --spoke-controllers ${SPOKE_CONTROLLERS.join(',')}): ` +
        `stop it and delete its cluster data with \`${purgeCommand}\`, then run the demo again`,
    );
  }
  if (!existing && process.getuid?.() !== 0) {
    throw new Error(
      'the demo runs Envoy Gateway on spoke-1, in a mount namespace of its own with sandbox folders bind-mounted on its fixed paths ' +
        `(/certs, /var/lib/eg), which needs root; this process runs as uid ${String(process.getuid?.())}: run the demo as root (in a container, say)`,
    );
  }
  step(
    'the plane: a hub and two spokes, with OCM and the real spoke policy controllers',
    'Real etcd, kube-apiservers and OCM (placement, addon manager, registration, a work agent per spoke); the Kuadrant ' +
      'operator on every spoke, Envoy Gateway on spoke-1. No kubelet: nothing here runs pods.',
  );
  const sandbox = await Sandbox.up({
    ...(rootDir === undefined ? {} : { root: rootDir }),
    // A new sandbox gets both controllers; a recorded one keeps what it runs (checked above).
    ...(existing ? {} : { spokeControllers: SPOKE_CONTROLLERS }),
    log: (m) => console.log(`  ${m}`),
    timeoutMs: 180_000,
  });
  if (!(await sandbox.status()).some((c) => c.name === ADDON_MANAGER)) {
    throw new Error(`the sandbox in ${sandbox.layout.root} predates the OCM addon manager: \`${purgeCommand}\`, then run the demo again`);
  }
  const hub = new KubeHttp(sandbox.kubeConfig('hub'));
  const spokes: Spoke[] = sandbox.spokes.map((s) => ({ name: s.name, http: new KubeHttp(sandbox.kubeConfig(s.name)) }));
  const controllerLogs = (): string =>
    [...spokes.map((s) => `kuadrant-operator/${s.name}`), `envoy-gateway/${ENVOY_GATEWAY_SPOKE}`]
      .map((c) => `${c} log (${sandbox.logOf(c)}):\n${logTail(sandbox.logOf(c), 15)}`)
      .join('\n');
  try {
    const foreign = await spokesWithForeignWork(sandbox, spokes);
    if (foreign.length > 0) {
      throw new Error(
        `${foreign.join(' and ')} ${foreign.length > 1 ? 'hold' : 'holds'} OCM work applied for a hub at another address: cluster data of an earlier sandbox in ` +
          `${sandbox.layout.root} (\`local-down\` keeps it, a new sandbox gets new ports). OCM's work agents keep what that hub placed for an hour, ` +
          `so a synced copy would not leave ${LOCAL_SPOKE}. Stop this sandbox and delete its cluster data with \`${purgeCommand}\`, then run the demo again`,
      );
    }
    const egSpoke = spokes.find((s) => s.name === ENVOY_GATEWAY_SPOKE);
    const localSpoke = spokes.find((s) => s.name === LOCAL_SPOKE);
    if (!egSpoke || !localSpoke) throw new Error(`the demo needs ${ENVOY_GATEWAY_SPOKE} and ${LOCAL_SPOKE}; the sandbox has ${spokes.map((s) => s.name).join(', ')}`);
    console.log(`  spoke policy controllers, built from their Go modules (Kuadrant operator ${readPin('kuadrant-operator')}, Envoy Gateway ${readPin('envoy-gateway')}):`);
    for (const c of (await sandbox.status()).filter((x) => x.name.startsWith('kuadrant-operator/') || x.name.startsWith('envoy-gateway/'))) {
      console.log(`    ${c.name.padEnd(28)} pid ${String(c.pid ?? '-')}  ${c.ready ? 'ready' : 'NOT READY'}  log ${c.log}`);
    }

    step(
      'the spoke side, from the hub: the OCM addon in deploy/addon',
      "Two kubectl commands on the hub; each spoke's OCM work agent applies the spoke agent's objects. No command runs on a spoke.",
    );
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

    step(
      'what the spokes already have: the Gateways the synced copies will target',
      'examples/spoke.yaml on each spoke (Gateway payments/edge and a route); examples/spoke-1-envoy-gateway.yaml on spoke-1 ' +
        "(Gateway payments/api of Envoy Gateway's class, and the rights on BackendTrafficPolicies for the spoke agent and the work agent).",
    );
    // A local policy left by an interrupted earlier run would keep the copy off spoke-2 from the start.
    if (await deleteObject(localSpoke.http, AUTH_POLICIES, POLICY_NS, LOCAL_POLICY)) {
      console.log(`  (deleted ${POLICY_NS}/${LOCAL_POLICY} on ${LOCAL_SPOKE}, left there by an earlier run)`);
    }
    const sample = documents('spoke.yaml');
    const route = (o: KubeObject): boolean => o.kind === 'HTTPRoute';
    for (const s of spokes) {
      // The route after the rest, once the operator has its topology ConfigMap: its reconciles race at start-up
      // (two creates of that ConfigMap, the loser's round left without status until something else changes),
      // and the route showing up in the ConfigMap proves it is past that (as test/e2e/spoke-controllers does).
      await applyAll(s.http, sample.filter((o) => !route(o)));
      await waitFor(`the Kuadrant operator's topology ConfigMap on ${s.name}`, () => getObject(s.http, RESOURCES.configMaps, KUADRANT_NAMESPACE, 'topology'), 120_000, controllerLogs);
      await applyAll(s.http, sample.filter(route));
      await waitFor(
        `HTTPRoute ${POLICY_NS}/${ROUTE} in the Kuadrant operator's topology on ${s.name}`,
        async () => {
          const cm = await getObject<KubeObject & { data?: Record<string, string> }>(s.http, RESOURCES.configMaps, KUADRANT_NAMESPACE, 'topology');
          // Nodes are labelled `<Kind>\n<namespace>/<name>` in its DOT text.
          return cm?.data?.topology?.includes(`label="HTTPRoute\\n${POLICY_NS}/${ROUTE}"`) ? true : undefined;
        },
        120_000,
        controllerLogs,
      );
      console.log(`  ${s.name}: GatewayClass istio, Gateway ${POLICY_NS}/edge, HTTPRoute ${POLICY_NS}/${ROUTE}; in the Kuadrant operator's topology`);
    }
    await applyAll(egSpoke.http, documents('spoke-1-envoy-gateway.yaml'));
    const egClass = await waitFor(
      `Envoy Gateway to accept GatewayClass envoy-gateway on ${egSpoke.name}`,
      async () => {
        const c = conditionOf(await getObject<Policy>(egSpoke.http, RESOURCES.gatewayClasses, undefined, 'envoy-gateway'), 'Accepted');
        return c?.status === 'True' ? c : undefined;
      },
      90_000,
      controllerLogs,
    );
    console.log(`  ${egSpoke.name}: GatewayClass envoy-gateway (${conditionText(egClass)}), Gateway ${POLICY_NS}/api of that class`);

    step(
      'the hub: examples/hub.yaml, two policies authored once',
      'Gateway edge is placed on every spoke and carries AuthPolicy payments-auth; Gateway api is placed (OCM Placement ' +
        `envoy-gateway-spokes) on the clusters labelled ${GATEWAY_CONTROLLER_LABEL}=envoy-gateway, here ${egSpoke.name}, and carries ` +
        'BackendTrafficPolicy payments-timeouts. Both spokes join the ManagedClusterSet policy-sync-demo.',
    );
    for (const s of spokes) {
      await mergePatch(hub, RESOURCES.managedClusters, undefined, s.name, {
        metadata: {
          labels: {
            'cluster.open-cluster-management.io/clusterset': 'policy-sync-demo',
            [GATEWAY_CONTROLLER_LABEL]: s.name === ENVOY_GATEWAY_SPOKE ? 'envoy-gateway' : null,
          },
        },
      });
    }
    await applyAll(hub, documents('hub.yaml'));
    console.log(`  hub: Gateways ${POLICY_NS}/edge and ${POLICY_NS}/api (class policy-sync), AuthPolicy ${POLICY_NS}/payments-auth, BackendTrafficPolicy ${POLICY_NS}/payments-timeouts`);

    step(
      'the controllers: policy-sync on the hub and an agent per spoke',
      'The hub controller writes one ManifestWork per policy and cluster and reads each copy\'s status back; each spoke agent ' +
        'reports the local policies on its spoke. No kubelet: each agent runs as a local process with the arguments of the ' +
        'Deployment the addon placed, as the ServiceAccount the addon created.',
    );
    // Started side by side: each takes a while to start on a busy machine, and none needs another to start.
    const agentStarts = spokes.map(async (s) => {
      const deployment = await getObject(s.http, DEPLOYMENTS, AGENT_NS, 'policy-sync-spoke');
      const args = (deployment?.spec as { template: { spec: { containers: { args?: string[] }[] } } } | undefined)?.template.spec.containers[0]?.args;
      if (!args) throw new Error(`no spoke agent Deployment on ${s.name}`);
      return startController(sandbox, `policy-sync/${s.name}`, args, await serviceAccountKubeconfig(sandbox, s.name, s.http), { POD_NAMESPACE: AGENT_NS });
    });
    for (const line of await Promise.all([startController(sandbox, 'policy-sync/hub', ['hub'], sandbox.hub.kubeconfig), ...agentStarts])) console.log(line);

    const authPolicy: Synced = {
      kind: 'AuthPolicy',
      resource: AUTH_POLICIES,
      name: 'payments-auth',
      controller: 'the Kuadrant operator',
      clusters: spokes,
      verdict: kuadrantVerdict,
      statusLines: (copy) => (copy.status?.conditions ?? []).map(conditionText),
    };
    const timeouts: Synced = {
      kind: 'BackendTrafficPolicy',
      resource: BACKEND_TRAFFIC_POLICIES,
      name: 'payments-timeouts',
      controller: 'Envoy Gateway',
      clusters: [egSpoke],
      verdict: envoyGatewayVerdict,
      statusLines: (copy) =>
        (copy.status?.ancestors ?? []).flatMap((a) =>
          a.conditions.map((c) => `ancestor ${a.ancestorRef.kind ?? 'Gateway'} ${a.ancestorRef.namespace ?? POLICY_NS}/${a.ancestorRef.name}: ${conditionText(c)}`)),
    };
    let nudges = 0;

    /** The hub's status of the policy and each of its clusters' copies (undefined where there is none), read together. */
    const observe = async (policy: Synced): Promise<{ status: PolicyStatus | undefined; copies: Map<string, Policy | undefined> }> => {
      const status = readPolicyStatus((await getObject(hub, policy.resource, POLICY_NS, policy.name))?.metadata.annotations?.[STATUS_ANNOTATION]);
      const copies = new Map<string, Policy | undefined>();
      for (const s of policy.clusters) copies.set(s.name, await getObject<Policy>(s.http, policy.resource, POLICY_NS, policy.name));
      return { status, copies };
    };
    type Observation = { status: PolicyStatus; copies: Map<string, Policy | undefined> };
    /** Waits until, on every cluster of the policy, `settled` holds for the hub's entry and the copy. */
    const settle = (policy: Synced, what: string, settled: (cluster: string, entry: ClusterStatus | undefined, copy: Policy | undefined) => boolean): Promise<Observation> => {
      let last: Observation | undefined;
      return waitFor(
        what,
        async () => {
          const o = await observe(policy);
          if (!o.status) return undefined;
          const status = o.status;
          last = { status, copies: o.copies };
          return policy.clusters.every((s) => settled(s.name, status.clusters?.[s.name], o.copies.get(s.name))) ? last : undefined;
        },
        180_000,
        () => `last hub status: ${JSON.stringify(last?.status.clusters)}\n${controllerLogs()}`,
        policy.resource === AUTH_POLICIES
          ? {
              everyMs: 15_000,
              run: async () => {
                for (const s of policy.clusters) {
                  const copy = last?.copies.get(s.name);
                  if (copy && !policy.verdict(copy)) {
                    nudges += 1;
                    await nudgeKuadrantOperator(s);
                  }
                }
              },
            }
          : undefined,
      );
    };
    const inForce = (policy: Synced) => (_c: string, entry: ClusterStatus | undefined, copy: Policy | undefined): boolean =>
      entry?.applied === true && hubAgrees(policy, entry, copy);
    const print = (policy: Synced, o: Observation): void => {
      console.log(`  ${policy.kind} ${POLICY_NS}/${policy.name} on the hub, per cluster (\`policy-sync explain ${policy.resource.resource}/${POLICY_NS}/${policy.name}\`):`);
      for (const [cluster, entry] of Object.entries(o.status.clusters ?? {})) {
        const line = `${entry.state} ${entry.reason}: ${entry.message} (applied ${String(entry.applied)}, upToDate ${String(entry.upToDate)})`;
        console.log(wrap(line, `    ${cluster.padEnd(9)} `, ' '.repeat(14), 110).join('\n'));
      }
      console.log(`  the copy on each cluster, its status as ${policy.controller} wrote it:`);
      for (const s of policy.clusters) {
        const copy = o.copies.get(s.name);
        const lines = copy ? policy.statusLines(copy) : [];
        if (!copy) console.log(`    ${s.name.padEnd(9)} no copy`);
        else if (lines.length === 0) console.log(`    ${s.name.padEnd(9)} no status`);
        else {
          lines.forEach((l, i) => console.log(`    ${(i === 0 ? s.name : '').padEnd(9)} ${l}`));
          console.log(`    ${''.padEnd(9)} (status written by ${statusWriter(copy)})`);
        }
      }
      console.log('  what it means:');
      for (const [cluster, entry] of Object.entries(o.status.clusters ?? {})) {
        console.log(wrap(meaning(policy, cluster, entry, o.copies.get(cluster)), '    ', '      ', 110).join('\n'));
      }
    };

    step(
      'the loop: each copy judged by its spoke\'s controller, the verdict on the hub',
      'hub policy → ManifestWork → work agent → spoke copy → controller\'s status → ManifestWork feedback → hub status annotation. ' +
        'Envoy Gateway runs here and accepts its copy; the Kuadrant operator has no data plane here and says so.',
    );
    const [btpSettled, authSettled] = await Promise.all([
      settle(timeouts, "the hub to show Envoy Gateway's verdict on the copy on spoke-1", inForce(timeouts)),
      settle(authPolicy, "the hub to show, for every spoke, the Kuadrant operator's status of the copy there", inForce(authPolicy)),
    ]);
    print(timeouts, btpSettled);
    print(authPolicy, authSettled);

    step(
      `a spoke team's own AuthPolicy on ${LOCAL_SPOKE}: local policies win`,
      `examples/spoke-2-local-override.yaml, on the same Gateway edge. The spoke agent reports it, the hub withdraws the copy from ${LOCAL_SPOKE} ` +
        'and shows the cluster Overridden, naming the local policy.',
    );
    await applyAll(localSpoke.http, documents('spoke-2-local-override.yaml'));
    print(authPolicy, await settle(authPolicy, `${LOCAL_SPOKE} Overridden on the hub and the copy gone from it`, (cluster, entry, copy) =>
      cluster === LOCAL_SPOKE ? entry?.state === 'Overridden' && copy === undefined : inForce(authPolicy)(cluster, entry, copy)));
    const local = await waitFor(`the Kuadrant operator's status of ${POLICY_NS}/${LOCAL_POLICY} on ${LOCAL_SPOKE}`, async () => {
      const p = await getObject<Policy>(localSpoke.http, AUTH_POLICIES, POLICY_NS, LOCAL_POLICY);
      return p?.status?.conditions?.length ? p : undefined;
    }, 120_000, controllerLogs);
    console.log(`  the local ${POLICY_NS}/${LOCAL_POLICY} on ${LOCAL_SPOKE}, its status as the Kuadrant operator wrote it:`);
    for (const c of local.status?.conditions ?? []) console.log(`    ${conditionText(c)}`);

    step(`the local AuthPolicy deleted from ${LOCAL_SPOKE}: the copy comes back`);
    await deleteObject(localSpoke.http, AUTH_POLICIES, POLICY_NS, LOCAL_POLICY);
    print(authPolicy, await settle(authPolicy, `the copy back on ${LOCAL_SPOKE}, with the Kuadrant operator's status on the hub`, inForce(authPolicy)));
    if (nudges > 0) {
      console.log(`  (the Kuadrant operator was nudged ${nudges} time(s) with an unowned GatewayClass created and deleted: it drops a status write that conflicts and writes none until its next event)`);
    }

    step(
      'as a user sees it on the hub',
      'The hub Gateways (policy-sync is their controller: Accepted, Programmed, a condition per synced kind and\n   PoliciesEnforced), and every synced policy per cluster.',
    );
    await onHub(sandbox, ['get', 'gateway', '-A']);
    await onHub(sandbox, [
      'get',
      'gateway',
      '-n',
      POLICY_NS,
      '-o',
      'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{range .status.conditions[*]}{"  "}{.type}={.status} {.reason}: {.message}{"\\n"}{end}{end}',
    ]);
    await policySync(sandbox, ['status', '-n', POLICY_NS, '-o', 'wide']);

    console.log(`
done in ${seconds(Date.now() - started)}; the sandbox keeps running:
kubeconfigs:  ${sandbox.layout.kubeconfigs}/{hub,spoke-1,spoke-2}.kubeconfig
addon:        .local/bin/kubectl --kubeconfig ${sandbox.hub.kubeconfig} get managedclusteraddons -A
logs:         ${sandbox.layout.logs}
status:       npx policy-sync status -n ${POLICY_NS} -o wide --kubeconfig ${sandbox.hub.kubeconfig}
explain:      npx policy-sync explain backendtrafficpolicies/${POLICY_NS}/payments-timeouts --kubeconfig ${sandbox.hub.kubeconfig}
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
