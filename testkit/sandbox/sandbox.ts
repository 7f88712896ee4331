// The local multicluster control plane: one etcd, a hub kube-apiserver and N spoke kube-apiservers
// (each under its own --etcd-prefix, each with a kube-controller-manager running only the ClusterRole
// aggregation and namespace controllers, and on the hub the garbage collector and CSR signer), upstream CRDs,
// the OCM placement controller and addon manager on the hub, one real OCM work agent per spoke connected to the
// hub, and OCM's registration (hub controller and one agent per spoke: leases, availability, taints;
// registration.ts); opt-in, the real spoke policy controllers (spokecontrollers.ts). Used by `npm run
// local-up|local-down|local-status` and, as a library, by the tests.
//
// `up` is idempotent: with everything running it only checks health; a component found dead is reported
// (with its log) and started again on its recorded ports and data; one whose recorded command line changed
// (a sandbox laid out before a component joined) is restarted with the new one. `down` stops exactly the
// processes recorded in the state file, by pid.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeHttp, isConflict } from '../../src/kube/http.ts';
import { RESOURCES, collectionPath, type ResourceRef } from '../../src/kube/resource.ts';
import { getObject, serverSideApply } from '../../src/kube/writes.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { installCrds, type ClusterRole } from './crds.ts';
import { writeAdminKubeconfig } from './kubeconfig.ts';
import { binDir, kubeconfigPath, sandboxLayout, type SandboxLayout } from './layout.ts';
import { ensurePki, type Pki } from './pki.ts';
import { freePort } from './ports.ts';
import { probeOnce, waitReady, type Probe } from './probe.ts';
import { isRunning, logTail, startProcess, stopProcess, type ProcessSpec, type RunningProcess } from './processes.ts';
import {
  CLUSTER_CLAIMS_CRD,
  REGISTRATION_CONTROLLER,
  applyBootstrapRbac,
  availabilityOf,
  hasCrd,
  isRegistrationComponent,
  managedCluster,
  planRegistration,
  registrationAgent,
  withCsrSigning,
} from './registration.ts';
import {
  ENVOY_GATEWAY_SPOKE,
  createSpokeControllerNamespaces,
  hubControllerCrdFiles,
  isSpokeControllerComponent,
  planSpokeControllers,
  prepareEnvoyGateway,
  spokeControllerBinaries,
  spokeControllerCrdFiles,
  spokeControllerNamespaces,
  type SpokeController,
} from './spokecontrollers.ts';

export const HUB = 'hub';
/** Namespace on each spoke where the work agent keeps its own objects. */
export const AGENT_NAMESPACE = 'open-cluster-management-agent';
/** Namespace on the hub where the placement controller keeps its own objects. */
export const PLACEMENT_NAMESPACE = 'open-cluster-management-hub';
const FIELD_MANAGER = 'policy-sync-sandbox';
/** The OCM addon manager on the hub: ClusterManagementAddOn install strategies, AddOnTemplate addons. */
export const ADDON_MANAGER = 'addon-manager';
const CONTROLLER_MANAGER = 'kube-controller-manager';

export interface SandboxOptions {
  /** Root folder for state, credentials, data, logs and kubeconfigs (default `.local`). */
  root?: string;
  /** Number of spokes, named spoke-1 … spoke-N (default 2). */
  spokes?: number;
  /** Progress messages (default: stderr). */
  log?: (message: string) => void;
  /** Per-component readiness timeout (default 90 s). */
  timeoutMs?: number;
  /**
   * Real spoke policy controllers to run (default none): `kuadrant` (the Kuadrant operator, every spoke) and
   * `envoy-gateway` (spoke-1 only; needs root). Fixed when the sandbox is laid out.
   */
  spokeControllers?: SpokeController[];
  /**
   * Run OCM's registration (hub controller, an agent per spoke; default true). Fixed when the sandbox is laid
   * out; a sandbox laid out before registration joined gets it at its next `up` unless this is false. Without it
   * nothing marks a ManagedCluster available or not: a cluster stays as it was written.
   */
  registration?: boolean;
}

export interface ClusterInfo {
  name: string;
  role: ClusterRole;
  server: string;
  kubeconfig: string;
}

interface Component {
  spec: ProcessSpec;
  probe: Probe;
  process?: RunningProcess;
  /** Run once (run()'s `once`): a later `up` forgets it if it is not running rather than start it again. */
  once?: boolean;
}

interface SandboxState {
  version: 1;
  clusters: ClusterInfo[];
  components: Component[];
  /** Set once CRDs, namespaces and agents have been set up, so a later `up` can skip that work. */
  configured: boolean;
  /** The real spoke policy controllers this sandbox runs (absent: none). */
  spokeControllers?: SpokeController[];
  /** Whether it runs OCM's registration (absent: laid out before registration joined). */
  registration?: boolean;
}

export interface ComponentStatus {
  name: string;
  pid: number | undefined;
  running: boolean;
  ready: boolean;
  endpoint: string;
  log: string;
}

export class Sandbox {
  private constructor(
    readonly layout: SandboxLayout,
    private state: SandboxState,
    private readonly pki: Pki,
  ) {}

  /** Attaches to the sandbox recorded under `root`, if any, without starting anything. */
  static attach(root?: string): Sandbox | undefined {
    const layout = sandboxLayout(root);
    if (!existsSync(layout.state)) return undefined;
    const state = JSON.parse(readFileSync(layout.state, 'utf8')) as SandboxState;
    return new Sandbox(layout, state, ensurePki(layout.pki));
  }

  /** Starts the sandbox, or checks and repairs the one already recorded under `root`. */
  static async up(options: SandboxOptions = {}): Promise<Sandbox> {
    const log = options.log ?? ((m: string) => process.stderr.write(`[sandbox] ${m}\n`));
    const timeoutMs = options.timeoutMs ?? 90_000;
    requireBinaries();
    const existing = Sandbox.attach(options.root);
    // Only a new layout needs it: a sandbox laid out before the addon manager joined goes on without one.
    if (!existing) requireBinaries(['addon']);
    const controllers = options.spokeControllers ?? existing?.spokeControllers ?? [];
    requireBinaries(spokeControllerBinaries(controllers));
    if (existing && options.spokeControllers && [...controllers].sort().join() !== [...existing.spokeControllers].sort().join()) {
      throw new Error(
        `the sandbox under ${existing.layout.root} runs spoke controllers [${existing.spokeControllers.join(', ')}], not [${controllers.join(', ')}]: stop it (local-down) and start it again`,
      );
    }
    const registration = options.registration ?? existing?.state.registration ?? true;
    if (registration) requireBinaries(['registration']);
    if (existing?.runsRegistration && !registration) {
      throw new Error(`the sandbox under ${existing.layout.root} runs OCM registration: stop it (local-down) and start it again to go without`);
    }
    // What ran once (a benchmark's controller) and is gone — its run killed midway, say — is not started again.
    if (existing) existing.forgetStopped(log);
    const sandbox = existing ?? (await Sandbox.plan(sandboxLayout(options.root), options.spokes ?? 2, controllers, registration));
    if (existing && existing.state.registration !== registration) await existing.recordRegistration(registration, log);
    try {
      await sandbox.converge(log, timeoutMs);
    } catch (err) {
      // A sandbox this call laid out is nobody else's: what it started stops with it (a failing test's
      // `after` has no sandbox to stop), its logs kept for the failure. One found running is left as it is.
      if (!existing) await sandbox.down().catch((stopErr: unknown) => log(`stopping what was started: ${String(stopErr)}`));
      throw err;
    }
    return sandbox;
  }

  get clusters(): ClusterInfo[] {
    return this.state.clusters;
  }

  get hub(): ClusterInfo {
    return this.cluster(HUB);
  }

  get spokes(): ClusterInfo[] {
    return this.state.clusters.filter((c) => c.role === 'spoke');
  }

  get spokeControllers(): SpokeController[] {
    return this.state.spokeControllers ?? [];
  }

  /** True when OCM's registration runs here (see registration.ts for its component names and timings). */
  get runsRegistration(): boolean {
    return this.state.registration === true;
  }

  cluster(name: string): ClusterInfo {
    const c = this.state.clusters.find((x) => x.name === name);
    if (!c) throw new Error(`no cluster ${name} in the sandbox (have ${this.state.clusters.map((x) => x.name).join(', ')})`);
    return c;
  }

  kubeConfig(cluster: string): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromFile(this.cluster(cluster).kubeconfig);
    return kc;
  }

  /** The running process of a component (`etcd`, `kube-apiserver/hub`, `work-agent/spoke-1`, …). */
  process(name: string): RunningProcess {
    const p = this.component(name).process;
    if (!p) throw new Error(`component ${name} has not been started`);
    return p;
  }

  /** The pids of every component running now. */
  pids(): number[] {
    return this.state.components.flatMap((c) => (c.process !== undefined && isRunning(c.process) ? [c.process.pid] : []));
  }

  logOf(name: string): string {
    return this.component(name).spec.log;
  }

  async status(): Promise<ComponentStatus[]> {
    return Promise.all(
      this.state.components.map(async (c) => {
        const running = c.process !== undefined && isRunning(c.process);
        return {
          name: c.spec.name,
          pid: c.process?.pid,
          running,
          ready: running && (await probeOnce(c.probe, this.pki)),
          endpoint: c.probe.url,
          log: c.spec.log,
        };
      }),
    );
  }

  /** Stops one component (for a fault-injection test); `start` brings it back. */
  async stop(name: string): Promise<void> {
    const c = this.component(name);
    if (c.process) await stopProcess(c.process, 3_000);
  }

  /** Starts a component stopped by `stop` again with the same arguments, waiting for readiness. */
  async start(name: string, timeoutMs = 90_000): Promise<void> {
    const c = this.component(name);
    if (c.process && isRunning(c.process)) return;
    c.process = startProcess(c.spec);
    this.save();
    await waitReady(c.process, c.probe, this.pki, timeoutMs);
  }

  /** Freezes (SIGSTOP) or thaws (SIGCONT) a component: its sockets stay open, nothing answers. */
  freeze(name: string, frozen: boolean): void {
    const c = this.component(name);
    if (c.process) process.kill(c.process.pid, frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  /** Stops one component and starts it again with the same arguments (ports, data), waiting for readiness. */
  async restart(name: string, timeoutMs = 90_000): Promise<void> {
    const c = this.component(name);
    if (c.process) await stopProcess(c.process, 3_000);
    c.process = startProcess(c.spec);
    this.save();
    await waitReady(c.process, c.probe, this.pki, timeoutMs);
  }

  /**
   * Stops every recorded process (agents first, etcd last) and forgets the plan, so the next `up` lays
   * out ports and command lines afresh. Cluster data and credentials are kept unless `purge`.
   */
  async down(options: { purge?: boolean } = {}): Promise<void> {
    // An apiserver holds open watches until its grace period ends; its state is in etcd, so a short
    // grace is enough. etcd itself gets the full one.
    for (const c of [...this.state.components].reverse()) {
      if (c.process) await stopProcess(c.process, c.spec.name === 'etcd' ? 10_000 : 3_000);
    }
    rmSync(this.layout.state, { force: true });
    if (options.purge) rmSync(join(this.layout.root, 'sandbox'), { recursive: true, force: true });
  }

  /**
   * Starts a further process under the sandbox (the demo's controllers, say), unless it already runs:
   * `status` lists it and `down` stops it with the rest.
   */
  async run(spec: ProcessSpec, probe: Probe, timeoutMs = 90_000, options: { once?: boolean } = {}): Promise<RunningProcess> {
    let c = this.state.components.find((x) => x.spec.name === spec.name);
    if (c?.process && isRunning(c.process)) return c.process;
    if (!c) {
      c = { spec, probe, ...(options.once ? { once: true } : {}) };
      this.state.components.push(c);
    }
    c.process = startProcess(spec);
    this.save();
    await waitReady(c.process, c.probe, this.pki, timeoutMs);
    return c.process;
  }

  /** Forgets the components run once that are not running. */
  private forgetStopped(log: (m: string) => void): void {
    const stopped = this.state.components.filter((c) => c.once && !(c.process && isRunning(c.process)));
    if (stopped.length === 0) return;
    log(`forgetting ${stopped.map((c) => c.spec.name).join(', ')}: run once, not running`);
    this.state.components = this.state.components.filter((c) => !stopped.includes(c));
    this.save();
  }

  /**
   * Stops a process started with run() and forgets it, so that a later `up` does not start it again
   * (the benchmark's controllers, run once each with their own flags). Unknown names are ignored.
   */
  async remove(name: string, graceMs = 10_000): Promise<void> {
    const i = this.state.components.findIndex((x) => x.spec.name === name);
    if (i < 0) return;
    const c = this.state.components[i]!;
    if (c.process) await stopProcess(c.process, graceMs);
    this.state.components.splice(i, 1);
    this.save();
  }

  private component(name: string): Component {
    const c = this.state.components.find((x) => x.spec.name === name);
    if (!c) throw new Error(`no component ${name} in the sandbox`);
    return c;
  }

  private save(): void {
    mkdirSync(join(this.layout.root, 'sandbox'), { recursive: true });
    writeFileSync(this.layout.state, JSON.stringify(this.state, null, 2));
  }

  /** Lays out a new sandbox: free ports, credentials, kubeconfigs and the command line of every component. */
  private static async plan(layout: SandboxLayout, spokeCount: number, spokeControllers: SpokeController[], registration: boolean): Promise<Sandbox> {
    for (const d of [layout.logs, layout.kubeconfigs, layout.data]) mkdirSync(d, { recursive: true });
    const pki = ensurePki(layout.pki);
    const auditPolicy = join(layout.data, 'audit-policy.yaml');
    writeFileSync(auditPolicy, AUDIT_POLICY);
    const [etcdPort, etcdPeerPort] = [await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const components: Component[] = [
      {
        spec: {
          name: 'etcd',
          command: join(binDir, 'etcd'),
          args: [
            `--data-dir=${join(layout.data, 'etcd')}`,
            `--listen-client-urls=${etcdUrl}`,
            `--advertise-client-urls=${etcdUrl}`,
            `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
            `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
            `--initial-cluster=default=http://127.0.0.1:${etcdPeerPort}`,
            '--unsafe-no-fsync',
            '--log-level=warn',
          ],
          log: join(layout.logs, 'etcd.log'),
        },
        probe: { url: `${etcdUrl}/health` },
      },
    ];
    const names = [HUB, ...Array.from({ length: spokeCount }, (_, i) => `spoke-${i + 1}`)];
    const clusters: ClusterInfo[] = [];
    for (const name of names) {
      const port = await freePort();
      const server = `https://127.0.0.1:${port}`;
      const kubeconfig = kubeconfigPath(layout, name);
      writeAdminKubeconfig(kubeconfig, name, server, pki);
      clusters.push({ name, role: name === HUB ? 'hub' : 'spoke', server, kubeconfig });
      components.push({
        spec: {
          name: `kube-apiserver/${name}`,
          command: join(binDir, 'kube-apiserver'),
          args: apiserverArgs({ port, etcdUrl, prefix: `/${name}`, pki, certDir: join(layout.data, `certs-${name}`), audit: { policy: auditPolicy, log: auditLogPath(layout, name) } }),
          log: join(layout.logs, `kube-apiserver-${name}.log`),
        },
        probe: { url: `${server}/readyz`, clientTls: true },
      });
    }
    // Per cluster, kube-controller-manager with only the controllers whose absence would make the API
    // behave unlike a real cluster's: ClusterRole aggregation (aggregated RBAC, as deploy/ uses it), the
    // namespace controller (a deleted namespace is emptied and goes, instead of Terminating forever) and the
    // garbage collector. On the hub, the OCM addon manager removes an addon from a cluster through owner
    // references alone (ClusterManagementAddOn → ManagedClusterAddOn → its ManifestWorks); on a spoke, a copy
    // the work agent applied once more from its cache while its work was terminating is owned by the
    // AppliedManifestWork alone, and goes with it. With registration the hub also runs the CSR signer
    // (registration.ts).
    for (const cluster of clusters) {
      const port = await freePort();
      const args = [
        `--kubeconfig=${cluster.kubeconfig}`,
        `--authentication-kubeconfig=${cluster.kubeconfig}`,
        `--authorization-kubeconfig=${cluster.kubeconfig}`,
        `--controllers=${['clusterrole-aggregation-controller', 'namespace-controller', 'garbage-collector-controller'].join(',')}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${port}`,
        `--cert-dir=${join(layout.data, `controller-manager-certs-${cluster.name}`)}`,
        '--v=1',
      ];
      components.push({
        spec: {
          name: `${CONTROLLER_MANAGER}/${cluster.name}`,
          command: join(binDir, 'kube-controller-manager'),
          args: registration && cluster.role === 'hub' ? withCsrSigning(args, pki) : args,
          log: join(layout.logs, `kube-controller-manager-${cluster.name}.log`),
        },
        probe: { url: `https://127.0.0.1:${port}/healthz` },
      });
    }
    const hubKubeconfig = kubeconfigPath(layout, HUB);
    const placementPort = await freePort();
    components.push({
      spec: {
        name: 'placement-controller',
        command: join(binDir, 'placement'),
        args: ['controller', `--kubeconfig=${hubKubeconfig}`, `--namespace=${PLACEMENT_NAMESPACE}`, '--disable-leader-election', `--listen=127.0.0.1:${placementPort}`],
        log: join(layout.logs, 'placement-controller.log'),
      },
      probe: { url: `https://127.0.0.1:${placementPort}/healthz` },
    });
    components.push(await addonManager(layout, hubKubeconfig));
    for (const spoke of clusters.filter((c) => c.role === 'spoke')) {
      const port = await freePort();
      components.push({
        spec: {
          name: `work-agent/${spoke.name}`,
          command: join(binDir, 'work'),
          args: [
            'agent',
            `--spoke-cluster-name=${spoke.name}`,
            `--agent-id=${spoke.name}`,
            `--kubeconfig=${spoke.kubeconfig}`,
            '--workload-source-driver=kube',
            `--workload-source-config=${hubKubeconfig}`,
            `--namespace=${AGENT_NAMESPACE}`,
            '--disable-leader-election',
            `--listen=127.0.0.1:${port}`,
            '--status-sync-interval=1s',
            '--feature-gates=RawFeedbackJsonString=true',
          ],
          log: join(layout.logs, `work-agent-${spoke.name}.log`),
        },
        probe: { url: `https://127.0.0.1:${port}/healthz` },
      });
    }
    components.push(...(await planSpokeControllers(layout, clusters.filter((c) => c.role === 'spoke'), spokeControllers)));
    if (registration) {
      components.push(...(await planRegistration(layout, pki, clusters.find((c) => c.role === 'hub')!, clusters.filter((c) => c.role === 'spoke'), PLACEMENT_NAMESPACE, AGENT_NAMESPACE)));
    }
    const sandbox = new Sandbox(layout, { version: 1, clusters, components, configured: false, spokeControllers, registration }, pki);
    sandbox.save();
    return sandbox;
  }

  /**
   * A sandbox laid out before OCM registration joined: records whether it runs it now and, if so, plans its
   * components and gives the hub's kube-controller-manager the CSR signer (ensureRunning restarts it with it).
   */
  private async recordRegistration(registration: boolean, log: (m: string) => void): Promise<void> {
    this.state.registration = registration;
    if (registration) {
      const hubControllerManager = this.component(`${CONTROLLER_MANAGER}/${HUB}`);
      hubControllerManager.spec.args = withCsrSigning(hubControllerManager.spec.args, this.pki);
      this.state.components.push(...(await planRegistration(this.layout, this.pki, this.hub, this.spokes, PLACEMENT_NAMESPACE, AGENT_NAMESPACE)));
      log('adding OCM registration (this sandbox was laid out before it joined)');
    }
    this.save();
  }

  /** Starts what is not running (reporting what died), then sets the clusters up once. */
  private async converge(log: (m: string) => void, timeoutMs: number): Promise<void> {
    // The OCM controllers need the CRDs and namespaces set up first.
    const agents = this.state.components.filter(
      (c) =>
        c.spec.name.startsWith('work-agent/') ||
        c.spec.name === 'placement-controller' ||
        c.spec.name === ADDON_MANAGER ||
        c.spec.name.startsWith(`${CONTROLLER_MANAGER}/`) ||
        isSpokeControllerComponent(c.spec.name) ||
        isRegistrationComponent(c.spec.name),
    );
    const servers = this.state.components.filter((c) => !agents.includes(c));
    await this.ensureRunning(servers, log, timeoutMs);
    if (!this.state.configured) {
      for (const cluster of this.state.clusters) {
        const extra = cluster.role === 'spoke' ? spokeControllerCrdFiles(this.spokeControllers, cluster.name) : hubControllerCrdFiles(this.spokeControllers);
        const crds = await installCrds(this.kubeConfig(cluster.name), cluster.role, timeoutMs, extra);
        log(`${cluster.name}: ${crds.length} CRDs established`);
      }
      await this.registerSpokes();
      for (const spoke of this.spokes) await createSpokeControllerNamespaces(spoke, spokeControllerNamespaces(this.spokeControllers, spoke.name));
      if (this.spokeControllers.includes('envoy-gateway')) await prepareEnvoyGateway(this.layout, this.cluster(ENVOY_GATEWAY_SPOKE), timeoutMs);
    }
    if (this.runsRegistration) await this.prepareRegistration(timeoutMs);
    await this.ensureRunning(agents, log, timeoutMs);
    this.state.configured = true;
    this.save();
    // Tests start from a fleet whose clusters are all Available, as the hub's registration controller sees it.
    if (this.runsRegistration) await this.waitForAvailableSpokes(timeoutMs);
    log(`up: kubeconfigs in ${this.layout.kubeconfigs}, logs in ${this.layout.logs}`);
  }

  private async ensureRunning(components: Component[], log: (m: string) => void, timeoutMs: number): Promise<void> {
    for (const c of components) {
      if (c.process && isRunning(c.process)) {
        if (c.process.args.join('\0') === c.spec.args.join('\0')) continue;
        log(`${c.spec.name} (pid ${c.process.pid}) runs an older command line: restarting it with the recorded one`);
        await stopProcess(c.process, 3_000);
      } else if (c.process) {
        log(`${c.spec.name} (pid ${c.process.pid}) is no longer running; its log ${c.spec.log} ends with:\n${logTail(c.spec.log, 10)}\nstarting it again`);
      }
      c.process = startProcess(c.spec);
      this.save();
      log(`started ${c.spec.name} (pid ${c.process.pid})`);
    }
    // Starting all, then waiting, lets the apiservers come up in parallel.
    for (const c of components) {
      await waitReady(c.process!, c.probe, this.pki, timeoutMs);
    }
  }

  /** Hub: a namespace and a ManagedCluster per spoke. Spokes: the agent's namespace. */
  private async registerSpokes(): Promise<void> {
    await this.withHttp(HUB, async (hub) => {
      await createIfAbsent(hub, RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PLACEMENT_NAMESPACE } });
      for (const spoke of this.spokes) {
        await createIfAbsent(hub, RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: spoke.name } });
        await serverSideApply(hub, MANAGED_CLUSTERS, managedCluster(spoke.name), { fieldManager: FIELD_MANAGER });
      }
    });
    for (const spoke of this.spokes) {
      await this.withHttp(spoke.name, (http) =>
        createIfAbsent(http, RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: AGENT_NAMESPACE } }));
    }
  }

  /**
   * What registration needs, at every `up` (each step idempotent, so that a sandbox laid out before registration
   * joined gets it too): the bootstrap RBAC on the hub, the ManagedClusters with the sandbox's short lease, and
   * the ClusterClaim CRD on the spokes.
   */
  private async prepareRegistration(timeoutMs: number): Promise<void> {
    await this.withHttp(HUB, async (hub) => {
      await applyBootstrapRbac(hub);
      for (const spoke of this.spokes) await serverSideApply(hub, MANAGED_CLUSTERS, managedCluster(spoke.name), { fieldManager: FIELD_MANAGER });
    });
    for (const spoke of this.spokes) {
      if (await this.withHttp(spoke.name, (http) => hasCrd(http, CLUSTER_CLAIMS_CRD))) continue;
      await installCrds(this.kubeConfig(spoke.name), 'spoke', timeoutMs, spokeControllerCrdFiles(this.spokeControllers, spoke.name));
    }
  }

  /** Until every spoke's ManagedCluster is Available=True without an availability taint. */
  private async waitForAvailableSpokes(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await this.withHttp(HUB, async (hub) => {
      for (;;) {
        const states = await Promise.all(this.spokes.map(async (s) => ({ name: s.name, ...availabilityOf(await getObject(hub, MANAGED_CLUSTERS, undefined, s.name)) })));
        const waiting = states.filter((s) => !s.ready);
        if (waiting.length === 0) return;
        if (Date.now() > deadline) {
          const logs = [REGISTRATION_CONTROLLER, ...waiting.map((s) => registrationAgent(s.name))].map((n) => `${n}:\n${logTail(this.logOf(n), 10)}`).join('\n');
          throw new Error(`ManagedClusters not available after ${timeoutMs} ms: ${waiting.map((s) => `${s.name}: ${s.describe}`).join('; ')}\n${logs}`);
        }
        await sleep(250);
      }
    });
  }

  private async withHttp<T>(cluster: string, fn: (http: KubeHttp) => Promise<T>): Promise<T> {
    const http = new KubeHttp(this.kubeConfig(cluster));
    try {
      return await fn(http);
    } finally {
      http.destroy();
    }
  }
}

/**
 * The OCM addon manager (`addon manager`, built from the pinned OCM module), run like the placement
 * controller: on the hub, its health endpoint on a port of its own.
 */
async function addonManager(layout: SandboxLayout, hubKubeconfig: string): Promise<Component> {
  const port = await freePort();
  return {
    spec: {
      name: ADDON_MANAGER,
      command: join(binDir, 'addon'),
      args: ['manager', `--kubeconfig=${hubKubeconfig}`, `--namespace=${PLACEMENT_NAMESPACE}`, '--disable-leader-election', `--listen=127.0.0.1:${port}`],
      log: join(layout.logs, 'addon-manager.log'),
    },
    probe: { url: `https://127.0.0.1:${port}/healthz` },
  };
}

const MANAGED_CLUSTERS: ResourceRef = RESOURCES.managedClusters;

async function createIfAbsent(http: KubeHttp, resource: ResourceRef, object: KubeObject): Promise<void> {
  try {
    await http.request('POST', collectionPath(resource, object.metadata.namespace), { body: object });
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}

/**
 * Every write (who, what, answer) and nothing else: the fault tests read it to say which client deleted or
 * wrote what (apiserver_request_total counts, but names no one). Leases and Events are left out: renewals
 * alone would swamp it.
 */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    resources: [{ group: coordination.k8s.io }, { group: '', resources: [events] }, { group: events.k8s.io }]
  # Access and token reviews are created, answered and never persisted: not writes.
  - level: None
    resources: [{ group: authorization.k8s.io }, { group: authentication.k8s.io }]
  - level: Metadata
    verbs: [create, update, patch, delete, deletecollection]
  - level: None
`;

/** The audit log of a cluster's kube-apiserver (JSON lines, writes only). */
export function auditLogPath(layout: SandboxLayout, cluster: string): string {
  return join(layout.logs, `kube-apiserver-${cluster}-audit.log`);
}

function apiserverArgs(o: { port: number; etcdUrl: string; prefix: string; pki: Pki; certDir: string; audit: { policy: string; log: string } }): string[] {
  return [
    `--audit-policy-file=${o.audit.policy}`,
    `--audit-log-path=${o.audit.log}`,
    '--audit-log-format=json',
    '--audit-log-maxbackup=1',
    '--audit-log-maxsize=200',
    `--etcd-servers=${o.etcdUrl}`,
    `--etcd-prefix=${o.prefix}`,
    `--secure-port=${o.port}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--cert-dir=${o.certDir}`,
    `--tls-cert-file=${o.pki.servingCert}`,
    `--tls-private-key-file=${o.pki.servingKey}`,
    `--client-ca-file=${o.pki.caCert}`,
    // Aggregated-API front-proxy settings: without them the work agent's own server logs, every few
    // seconds, that the extension-apiserver-authentication ConfigMap lacks a request-header CA.
    `--requestheader-client-ca-file=${o.pki.caCert}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    '--disable-admission-plugins=ServiceAccount',
    '--authorization-mode=RBAC',
    `--service-account-issuer=https://127.0.0.1:${o.port}/`,
    `--service-account-key-file=${o.pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${o.pki.serviceAccountKey}`,
    // /debug/pprof, for reading where the apiserver's CPU goes under a benchmark (README).
    '--profiling=true',
    '--v=1',
  ];
}

function requireBinaries(names = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'work']): void {
  const missing = names.filter((b) => !existsSync(join(binDir, b)));
  if (missing.length > 0) {
    throw new Error(`missing ${missing.join(', ')} in ${binDir}: run \`npm run build:components\` first`);
  }
}
