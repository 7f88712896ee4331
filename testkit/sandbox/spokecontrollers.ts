// The real spoke policy controllers an opt-in sandbox runs (`npm run local-up -- --spoke-controllers
// kuadrant,envoy-gateway`), built by hack/build-components.sh: the Kuadrant operator on every spoke, and Envoy
// Gateway on spoke-1. The default sandbox runs neither, so the tests that do not need them stay fast.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeHttp, isConflict } from '../../src/kube/http.ts';
import { RESOURCES, collectionPath, type ResourceRef } from '../../src/kube/resource.ts';
import { getObject } from '../../src/kube/writes.ts';
import { moduleFolder } from './crds.ts';
import { binDir, type SandboxLayout } from './layout.ts';
import { freePort } from './ports.ts';
import type { Probe } from './probe.ts';
import type { ProcessSpec } from './processes.ts';

export const SPOKE_CONTROLLERS = ['kuadrant', 'envoy-gateway'] as const;
export type SpokeController = (typeof SPOKE_CONTROLLERS)[number];

/** Envoy Gateway listens on fixed ports and reads the fixed path /certs: one per machine, on this spoke. */
export const ENVOY_GATEWAY_SPOKE = 'spoke-1';
export const ENVOY_GATEWAY_CONTROLLER_NAME = 'gateway.envoyproxy.io/gatewayclass-controller';
export const ENVOY_GATEWAY_NAMESPACE = 'envoy-gateway-system';
/** The Kuadrant operator's OPERATOR_NAMESPACE (required), where it puts what a Kuadrant CR asks for. */
export const KUADRANT_NAMESPACE = 'kuadrant-system';
/** Ports Envoy Gateway v1.5.0 always binds (health, controller metrics, xDS, wasm, admin, metrics). */
const ENVOY_GATEWAY_PORTS = [8081, 8080, 18000, 18002, 19000, 19001];
const ENVOY_GATEWAY_HEALTH_PORT = 8081;
/**
 * The wasm-shim image the Kuadrant operator puts in its EnvoyExtensionPolicies, which Envoy Gateway pulls when
 * it translates them: a closed local port, so that nothing is ever fetched from a registry.
 */
const UNREACHABLE_WASM_SHIM = 'oci://127.0.0.1:1/kuadrant/wasm-shim:unavailable';

const SECRETS: ResourceRef = { group: '', version: 'v1', resource: 'secrets', namespaced: true };

const KUADRANT_OPERATOR = 'github.com/kuadrant/kuadrant-operator';
const AUTHORINO_OPERATOR = 'github.com/kuadrant/authorino-operator';
const AUTHORINO = 'github.com/kuadrant/authorino';
const LIMITADOR_OPERATOR = 'github.com/kuadrant/limitador-operator';
const ENVOY_GATEWAY = 'github.com/envoyproxy/gateway';

interface SpokeRef {
  name: string;
  kubeconfig: string;
}

export interface PlannedComponent {
  spec: ProcessSpec;
  probe: Probe;
}

/** `kuadrant,envoy-gateway` → the list, rejecting unknown names. */
export function parseSpokeControllers(list: string): SpokeController[] {
  const names = list.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const unknown = names.filter((n) => !(SPOKE_CONTROLLERS as readonly string[]).includes(n));
  if (unknown.length > 0) throw new Error(`unknown spoke controller ${unknown.join(', ')}: use ${SPOKE_CONTROLLERS.join(', ')}`);
  return SPOKE_CONTROLLERS.filter((c) => names.includes(c));
}

/** The binaries in .local/bin the controllers need. */
export function spokeControllerBinaries(controllers: readonly SpokeController[]): string[] {
  return controllers.map((c) => (c === 'kuadrant' ? 'kuadrant-operator' : 'envoy-gateway'));
}

/** Components started after the spokes' CRDs and namespaces are in place. */
export function isSpokeControllerComponent(name: string): boolean {
  return name.startsWith('kuadrant-operator/') || name.startsWith('envoy-gateway/');
}

function runsEnvoyGateway(controllers: readonly SpokeController[], spoke: string): boolean {
  return controllers.includes('envoy-gateway') && spoke === ENVOY_GATEWAY_SPOKE;
}

/** CRDs a spoke needs beyond the default ones, from the module folders hack/build-components.sh recorded. */
export function spokeControllerCrdFiles(controllers: readonly SpokeController[], spoke: string): string[] {
  const files: string[] = [];
  const envoyGatewayCrds = (): string => join(moduleFolder(ENVOY_GATEWAY), 'charts/gateway-helm/crds/generated');
  if (controllers.includes('kuadrant')) {
    const own = join(moduleFolder(KUADRANT_OPERATOR), 'config/crd/bases');
    files.push(
      ...readdirSync(own).filter((f) => f.endsWith('.yaml')).map((f) => join(own, f)),
      // The operator refuses policies (MissingDependency) unless Authorino's and Limitador's operators and a
      // gateway provider are installed, which it tells by their CRDs; Envoy Gateway's kinds are the provider.
      join(moduleFolder(AUTHORINO_OPERATOR), 'config/crd/bases/operator.authorino.kuadrant.io_authorinos.yaml'),
      join(moduleFolder(AUTHORINO), 'install/crd/authorino.kuadrant.io_authconfigs.yaml'),
      join(moduleFolder(LIMITADOR_OPERATOR), 'config/crd/bases/limitador.kuadrant.io_limitadors.yaml'),
      join(envoyGatewayCrds(), 'gateway.envoyproxy.io_envoypatchpolicies.yaml'),
      join(envoyGatewayCrds(), 'gateway.envoyproxy.io_envoyextensionpolicies.yaml'),
    );
  }
  if (runsEnvoyGateway(controllers, spoke)) {
    const dir = envoyGatewayCrds();
    files.push(...readdirSync(dir).filter((f) => f.endsWith('.yaml')).map((f) => join(dir, f)));
  }
  return [...new Set(files)];
}

/**
 * CRDs the hub needs for the spoke controllers' own policy kinds, so that policies of those kinds can be
 * authored once on the hub and synced (the hub runs no controller for them).
 */
export function hubControllerCrdFiles(controllers: readonly SpokeController[]): string[] {
  if (!controllers.includes('envoy-gateway')) return [];
  const dir = join(moduleFolder(ENVOY_GATEWAY), 'charts/gateway-helm/crds/generated');
  return ['backendtrafficpolicies', 'clienttrafficpolicies', 'securitypolicies', 'envoyextensionpolicies'].map((r) => join(dir, `gateway.envoyproxy.io_${r}.yaml`));
}

/** Namespaces the controllers expect on a spoke. */
export function spokeControllerNamespaces(controllers: readonly SpokeController[], spoke: string): string[] {
  return [
    ...(controllers.includes('kuadrant') ? [KUADRANT_NAMESPACE] : []),
    ...(runsEnvoyGateway(controllers, spoke) ? [ENVOY_GATEWAY_NAMESPACE] : []),
  ];
}

function envoyGatewayFolders(layout: SandboxLayout, spoke: string): { certs: string; varLib: string; config: string } {
  const base = join(layout.data, `envoy-gateway-${spoke}`);
  return { certs: join(base, 'certs'), varLib: join(base, 'var-lib-eg'), config: join(base, 'config.yaml') };
}

function envoyGatewayEnv(spoke: SpokeRef): Record<string, string> {
  // Envoy Gateway reads its kubeconfig only from KUBECONFIG (its --kubeconfig flag is not wired).
  return { KUBECONFIG: spoke.kubeconfig, ENVOY_GATEWAY_NAMESPACE };
}

/** The controllers' command lines: the Kuadrant operator on every spoke, Envoy Gateway on spoke-1. */
export async function planSpokeControllers(
  layout: SandboxLayout,
  spokes: SpokeRef[],
  controllers: readonly SpokeController[],
): Promise<PlannedComponent[]> {
  const planned: PlannedComponent[] = [];
  if (controllers.includes('kuadrant')) {
    for (const spoke of spokes) {
      // Free ports: the defaults (:8080, :8081) would clash between spokes and with Envoy Gateway.
      const [metricsPort, probePort] = [await freePort(), await freePort()];
      planned.push({
        spec: {
          name: `kuadrant-operator/${spoke.name}`,
          command: join(binDir, 'kuadrant-operator'),
          args: [
            `--kubeconfig=${spoke.kubeconfig}`,
            `--metrics-bind-address=127.0.0.1:${metricsPort}`,
            `--health-probe-bind-address=127.0.0.1:${probePort}`,
          ],
          env: { OPERATOR_NAMESPACE: KUADRANT_NAMESPACE, RELATED_IMAGE_WASMSHIM: UNREACHABLE_WASM_SHIM },
          log: join(layout.logs, `kuadrant-operator-${spoke.name}.log`),
        },
        probe: { url: `http://127.0.0.1:${probePort}/readyz` },
      });
    }
  }
  const egSpoke = spokes.find((s) => runsEnvoyGateway(controllers, s.name));
  if (egSpoke) {
    await requireEnvoyGatewayHost();
    const folders = envoyGatewayFolders(layout, egSpoke.name);
    for (const d of [folders.certs, folders.varLib]) mkdirSync(d, { recursive: true });
    writeFileSync(folders.config, ENVOY_GATEWAY_CONFIG);
    const binary = join(binDir, 'envoy-gateway');
    // Its xDS server reads /certs/{tls.crt,tls.key,ca.crt} and its wasm cache writes /var/lib/eg: fixed paths,
    // so it runs in a mount namespace of its own where folders of this sandbox are bind-mounted on them. The
    // mount points themselves are created on the host if absent (empty; nothing is ever written into them there).
    const launch = 'mkdir -p /certs /var/lib/eg && mount --bind "$1" /certs && mount --bind "$2" /var/lib/eg && exec "$3" server --config-path "$4"';
    planned.push({
      spec: {
        name: `envoy-gateway/${egSpoke.name}`,
        command: 'unshare',
        args: ['--mount', '--propagation', 'private', '/bin/sh', '-c', launch, 'envoy-gateway-launch', folders.certs, folders.varLib, binary, folders.config],
        execs: ['/bin/sh', binary],
        env: envoyGatewayEnv(egSpoke),
        log: join(layout.logs, `envoy-gateway-${egSpoke.name}.log`),
      },
      probe: { url: `http://127.0.0.1:${ENVOY_GATEWAY_HEALTH_PORT}/readyz` },
    });
  }
  return planned;
}

const ENVOY_GATEWAY_CONFIG = `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyGateway
gateway:
  controllerName: ${ENVOY_GATEWAY_CONTROLLER_NAME}
provider:
  type: Kubernetes
  kubernetes:
    leaderElection:
      disable: true
    proxyTopologyInjector:
      disabled: true
logging:
  level:
    default: info
`;

/** Root (for the mount namespace and bind mounts) and Envoy Gateway's fixed ports free. */
async function requireEnvoyGatewayHost(): Promise<void> {
  const uid = process.getuid?.();
  if (uid !== 0) {
    throw new Error(
      `envoy-gateway runs in a private mount namespace (unshare --mount) with sandbox folders bind-mounted on its fixed paths /certs and /var/lib/eg, which needs root; this process runs as uid ${uid ?? 'unknown'}. Run as root (CI does), or leave envoy-gateway out of --spoke-controllers.`,
    );
  }
  for (const port of ENVOY_GATEWAY_PORTS) {
    if (!(await portIsFree(port))) {
      throw new Error(`port ${port}, which Envoy Gateway always binds, is in use: is another sandbox with envoy-gateway running (one per machine)? \`ss -ltnp 'sport = :${port}'\` shows who holds it`);
    }
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, () => srv.close(() => resolve(true)));
  });
}

/**
 * Once per new layout, before Envoy Gateway starts: `envoy-gateway certgen` creates its TLS Secrets on the spoke
 * (what the Helm chart's job does), and the control plane's own certificate is written into the folder that
 * the server sees as /certs (what the Deployment's Secret volume does).
 */
export async function prepareEnvoyGateway(layout: SandboxLayout, spoke: SpokeRef, timeoutMs: number): Promise<void> {
  const log = join(layout.logs, `envoy-gateway-certgen-${spoke.name}.log`);
  const code = await runToExit(join(binDir, 'envoy-gateway'), ['certgen', '--disable-topology-injector'], envoyGatewayEnv(spoke), log, timeoutMs);
  if (code !== 0) throw new Error(`envoy-gateway certgen on ${spoke.name} exited with ${code}; its log is ${log}`);
  const kc = new KubeConfig();
  kc.loadFromFile(spoke.kubeconfig);
  const http = new KubeHttp(kc);
  try {
    const secret = (await getObject(http, SECRETS, ENVOY_GATEWAY_NAMESPACE, 'envoy-gateway')) as { data?: Record<string, string> } | undefined;
    const folders = envoyGatewayFolders(layout, spoke.name);
    for (const key of ['ca.crt', 'tls.crt', 'tls.key']) {
      const value = secret?.data?.[key];
      if (!value) throw new Error(`Secret ${ENVOY_GATEWAY_NAMESPACE}/envoy-gateway on ${spoke.name} has no ${key} after certgen; see ${log}`);
      writeFileSync(join(folders.certs, key), Buffer.from(value, 'base64'), { mode: 0o600 });
    }
  } finally {
    http.destroy();
  }
}

/** Creates the namespaces the controllers expect on a spoke. */
export async function createSpokeControllerNamespaces(spoke: SpokeRef, names: string[]): Promise<void> {
  if (names.length === 0) return;
  const kc = new KubeConfig();
  kc.loadFromFile(spoke.kubeconfig);
  const http = new KubeHttp(kc);
  try {
    for (const name of names) {
      try {
        await http.request('POST', collectionPath(RESOURCES.namespaces), { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
    }
  } finally {
    http.destroy();
  }
}

function runToExit(command: string, args: string[], env: Record<string, string>, log: string, timeoutMs: number): Promise<number | null> {
  const out = openSync(log, 'a');
  writeSync(out, `==== ${new Date().toISOString()} running ${command} ${args.join(' ')}\n`);
  return new Promise<number | null>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', out, out], env: { ...process.env, ...env } });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  }).finally(() => closeSync(out));
}
