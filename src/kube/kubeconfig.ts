// The kubeconfig the controller talks to the apiserver with, loaded as kubectl/client-go load it: a file,
// the $KUBECONFIG list, ~/.kube/config, or the in-cluster service account. Written here rather than
// taken from @kubernetes/client-node because importing that costs ~75 MiB RSS and ~1 s at start (issue
// 11); client-node is imported only for the one thing it alone does, a legacy `auth-provider` user (gcp,
// azure, oidc), and only when such a user is met.
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { OutgoingHttpHeaders } from 'node:http';
import type { RequestOptions } from 'node:https';
import { createRequire } from 'node:module';
import { isIPv6 } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, sep } from 'node:path';
import type * as ClientNode from '@kubernetes/client-node';
import type * as Yaml from 'yaml';
import { z } from 'zod';
import { EXEC_API_VERSIONS, ExecCredentialPlugin, type ExecClusterInfo, type ExecConfig } from './execcredential.ts';

/** The current cluster's connection settings. */
export interface KubeCluster {
  readonly server: string;
  readonly tlsServerName?: string;
  readonly proxyUrl?: string;
}

/**
 * A loaded kubeconfig as KubeHttp uses it: a structural subset of client-node's KubeConfig, so that one
 * still fits (tests and hack/ build those).
 */
export interface KubeAccess {
  getCurrentCluster(): KubeCluster | null;
  /** Sets CA, client certificate/key, auth headers and TLS verification for the current context. */
  applyToHTTPSOptions(opts: RequestOptions): Promise<void>;
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface KubeconfigOptions {
  /** Where $KUBECONFIG, $HOME and KUBERNETES_SERVICE_HOST/PORT are read, and the exec plugins' environment. */
  env?: NodeJS.ProcessEnv;
  /** The home directory holding .kube/config; $HOME by default. */
  homeDir?: string;
  /** The mounted service account (token, ca.crt) used in a cluster. */
  serviceAccountDir?: string;
  /** The context to use instead of current-context. */
  context?: string;
  /** Imports client-node, called only for an `auth-provider` user. */
  importClientNode?: () => Promise<typeof ClientNode>;
  /** The clock exec credentials expire by. */
  now?: () => number;
  /** How long an exec plugin may take. */
  execTimeoutMs?: number;
}

const optionalString = z.string().nullish();

const clusterSchema = z.object({
  server: optionalString,
  'certificate-authority': optionalString,
  'certificate-authority-data': optionalString,
  'insecure-skip-tls-verify': z.boolean().nullish(),
  'tls-server-name': optionalString,
  'proxy-url': optionalString,
  extensions: z.array(z.object({ name: z.string(), extension: z.unknown() })).nullish(),
});

const execSchema = z.object({
  apiVersion: z.enum(EXEC_API_VERSIONS, { message: `must be one of ${EXEC_API_VERSIONS.join(', ')}` }),
  command: z.string().min(1),
  args: z.array(z.string()).nullish(),
  env: z.array(z.object({ name: z.string(), value: z.string() })).nullish(),
  installHint: optionalString,
  provideClusterInfo: z.boolean().nullish(),
  interactiveMode: z.enum(['Never', 'IfAvailable', 'Always']).nullish(),
});

const userSchema = z.object({
  'client-certificate': optionalString,
  'client-certificate-data': optionalString,
  'client-key': optionalString,
  'client-key-data': optionalString,
  token: optionalString,
  tokenFile: optionalString,
  username: optionalString,
  password: optionalString,
  as: optionalString,
  // Impersonating groups, a uid or extras needs repeated headers, which KubeHttp does not send.
  'as-uid': z.undefined({ message: 'impersonating a uid is not supported' }).nullish(),
  'as-groups': z.undefined({ message: 'impersonating groups is not supported' }).nullish(),
  'as-user-extra': z.undefined({ message: 'impersonating user extras is not supported' }).nullish(),
  exec: execSchema.nullish(),
  'auth-provider': z.object({ name: z.string(), config: z.record(z.string(), z.string()).nullish() }).nullish(),
});

const contextSchema = z.object({ cluster: z.string().min(1), user: optionalString, namespace: optionalString });

const kubeconfigSchema = z.object({
  clusters: z.array(z.object({ name: z.string().min(1), cluster: clusterSchema })).nullish(),
  users: z.array(z.object({ name: z.string().min(1), user: userSchema.nullish() })).nullish(),
  contexts: z.array(z.object({ name: z.string().min(1), context: contextSchema })).nullish(),
  'current-context': optionalString,
});

type ClusterEntry = z.infer<typeof clusterSchema>;
type UserEntry = z.infer<typeof userSchema>;
type ContextEntry = z.infer<typeof contextSchema>;

interface Cluster {
  name: string;
  server: string;
  caFile?: string;
  caData?: Buffer;
  insecure: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
  execExtension?: unknown;
}

interface User {
  name: string;
  certFile?: string;
  certData?: Buffer;
  keyFile?: string;
  keyData?: Buffer;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  impersonate?: string;
  exec?: ExecConfig;
  authProvider?: { name: string; config: Record<string, string> };
}

/** The current cluster, in client-node's shape. */
export interface CurrentCluster extends KubeCluster {
  readonly name: string;
  readonly skipTLSVerify: boolean;
}

export class Kubeconfig implements KubeAccess {
  private readonly exec: ExecCredentialPlugin | undefined;
  private clientNode: Promise<ClientNode.KubeConfig> | undefined;
  private lastFileToken: string | undefined;

  private constructor(
    /** The files (or "in-cluster") it came from, for error messages. */
    readonly source: string,
    private readonly cluster: Cluster | null,
    private readonly user: User,
    private readonly options: KubeconfigOptions,
  ) {
    if (cluster && user.exec) {
      this.exec = new ExecCredentialPlugin(user.name, user.exec, () => execClusterInfo(cluster), {
        ...(options.env ? { env: options.env } : {}),
        ...(options.now ? { now: options.now } : {}),
        ...(options.execTimeoutMs ? { timeoutMs: options.execTimeoutMs } : {}),
      });
    }
  }

  /** `--kubeconfig` when given, else the default chain. */
  static load(path: string | undefined, options: KubeconfigOptions = {}): Kubeconfig {
    return path ? Kubeconfig.fromFiles([path], options) : Kubeconfig.fromDefault(options);
  }

  /**
   * client-go's chain: the files $KUBECONFIG lists (missing ones skipped), else ~/.kube/config, else the
   * in-cluster service account.
   */
  static fromDefault(options: KubeconfigOptions = {}): Kubeconfig {
    const env = options.env ?? process.env;
    if (env.KUBECONFIG) {
      const listed = env.KUBECONFIG.split(delimiter).filter((f) => f.length > 0);
      const files = listed.filter((f) => existsSync(f));
      if (files.length === 0) throw new Error(`none of the files $KUBECONFIG lists exists: ${listed.join(', ')}`);
      return Kubeconfig.fromFiles(files, options);
    }
    const home = options.homeDir ?? (env.HOME || homedir());
    const file = join(home, '.kube', 'config');
    if (existsSync(file)) return Kubeconfig.fromFiles([file], options);
    if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) return Kubeconfig.inCluster(options);
    throw new Error(`no kubeconfig: pass --kubeconfig, set $KUBECONFIG, write ${file}, or run in a cluster`);
  }

  /**
   * Files merged as kubectl merges $KUBECONFIG: the first file to name a cluster, user or context wins,
   * and so does the first current-context.
   */
  static fromFiles(files: string[], options: KubeconfigOptions = {}): Kubeconfig {
    const clusters = new Map<string, ClusterEntry>();
    const users = new Map<string, UserEntry>();
    const contexts = new Map<string, ContextEntry>();
    let currentContext: string | undefined;
    for (const file of files) {
      const config = readKubeconfigFile(file);
      for (const { name, cluster } of config.clusters ?? []) if (!clusters.has(name)) clusters.set(name, cluster);
      for (const { name, user } of config.users ?? []) if (!users.has(name)) users.set(name, user ?? {});
      for (const { name, context } of config.contexts ?? []) if (!contexts.has(name)) contexts.set(name, context);
      currentContext ||= config['current-context'] ?? undefined;
    }
    const source = files.join(delimiter);
    const contextName = options.context ?? currentContext;
    // No current context: loaded, with no current cluster (the caller says so, as with client-node).
    if (!contextName) return new Kubeconfig(source, null, { name: '' }, options);
    const where = `kubeconfig ${source}`;
    const context = contexts.get(contextName);
    if (!context) throw new Error(`${where}: context "${contextName}" is not defined`);
    const clusterEntry = clusters.get(context.cluster);
    if (!clusterEntry) throw new Error(`${where}: context "${contextName}" names cluster "${context.cluster}", which is not defined`);
    const userName = context.user ?? '';
    const userEntry = userName ? users.get(userName) : {};
    if (!userEntry) throw new Error(`${where}: context "${contextName}" names user "${userName}", which is not defined`);
    return new Kubeconfig(source, toCluster(where, context.cluster, clusterEntry), toUser(where, userName, userEntry), options);
  }

  /**
   * The pod's service account, as client-go's InClusterConfig: the apiserver from KUBERNETES_SERVICE_HOST
   * and _PORT, its CA, and the token file, which is read again on use, since the kubelet rotates it.
   */
  static inCluster(options: KubeconfigOptions = {}): Kubeconfig {
    const env = options.env ?? process.env;
    const host = env.KUBERNETES_SERVICE_HOST;
    const port = env.KUBERNETES_SERVICE_PORT;
    if (!host || !port) throw new Error('not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set');
    const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
    const tokenFile = join(dir, 'token');
    try {
      readFileSync(tokenFile);
    } catch (err) {
      throw new Error(`in-cluster: cannot read the service account token: ${errorMessage(err)}`, { cause: err });
    }
    const caFile = join(dir, 'ca.crt');
    const cluster: Cluster = {
      name: 'in-cluster',
      server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
      insecure: false,
      // client-go goes on with the system roots when the CA is missing; so does this.
      ...(existsSync(caFile) ? { caFile } : {}),
    };
    return new Kubeconfig('in-cluster', cluster, { name: 'in-cluster', tokenFile }, options);
  }

  getCurrentCluster(): CurrentCluster | null {
    const c = this.cluster;
    if (!c) return null;
    return {
      name: c.name,
      server: c.server,
      skipTLSVerify: c.insecure,
      ...(c.tlsServerName ? { tlsServerName: c.tlsServerName } : {}),
      ...(c.proxyUrl ? { proxyUrl: c.proxyUrl } : {}),
    };
  }

  /**
   * Files (CA, client certificate and key, token file) are read on each call, so that rotated ones are
   * picked up; KubeHttp calls this at most once a minute.
   */
  async applyToHTTPSOptions(opts: RequestOptions): Promise<void> {
    const c = this.cluster;
    if (!c) return;
    const u = this.user;
    if (c.insecure) opts.rejectUnauthorized = false;
    if (c.tlsServerName) opts.servername = c.tlsServerName;
    const ca = c.caData ?? (c.caFile ? await readAuthFile(c.caFile, `cluster "${c.name}" certificate-authority`) : undefined);
    if (ca) opts.ca = ca;
    const cert = u.certData ?? (u.certFile ? await readAuthFile(u.certFile, `user "${u.name}" client-certificate`) : undefined);
    if (cert) opts.cert = cert;
    const key = u.keyData ?? (u.keyFile ? await readAuthFile(u.keyFile, `user "${u.name}" client-key`) : undefined);
    if (key) opts.key = key;

    const headers: OutgoingHttpHeaders = {};
    if (u.impersonate) headers['Impersonate-User'] = u.impersonate;
    const token = await this.bearerToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (u.username !== undefined || u.password !== undefined) opts.auth = `${u.username ?? ''}:${u.password ?? ''}`;
    if (this.exec) {
      const credential = await this.exec.credential();
      if (credential.token) headers.Authorization = `Bearer ${credential.token}`;
      if (credential.clientCertificateData) opts.cert = credential.clientCertificateData;
      if (credential.clientKeyData) opts.key = credential.clientKeyData;
    }
    if (u.authProvider) Object.assign(headers, await this.authProviderHeaders(c, u));
    if (Object.keys(headers).length > 0) opts.headers = { ...headerObject(opts.headers), ...headers };
  }

  /** tokenFile over token, as in client-go; a token file that cannot be read keeps its last good value. */
  private async bearerToken(): Promise<string | undefined> {
    const u = this.user;
    if (!u.tokenFile) return u.token;
    try {
      this.lastFileToken = (await readFile(u.tokenFile, 'utf8')).trim();
    } catch (err) {
      if (this.lastFileToken === undefined && u.token === undefined) {
        throw new Error(`kubeconfig user "${u.name}": cannot read tokenFile: ${errorMessage(err)}`, { cause: err });
      }
    }
    return this.lastFileToken ?? u.token;
  }

  /**
   * A legacy auth-provider (gcp, azure, oidc) through client-node, imported now. Only its auth headers are
   * taken; TLS stays ours. The client-node KubeConfig is kept, since providers refresh tokens in it.
   */
  private async authProviderHeaders(c: Cluster, u: User): Promise<OutgoingHttpHeaders> {
    this.clientNode ??= (this.options.importClientNode ?? (() => import('@kubernetes/client-node')))().then((m) => {
      const kc = new m.KubeConfig();
      kc.loadFromOptions({
        // skipTLSVerify only stops client-node refusing an http:// server while it builds the agent we drop.
        clusters: [{ name: c.name, server: c.server, skipTLSVerify: true }],
        users: [{ name: u.name, authProvider: u.authProvider }],
        contexts: [{ name: 'auth-provider', cluster: c.name, user: u.name }],
        currentContext: 'auth-provider',
      });
      return kc;
    });
    const scratch: RequestOptions = {};
    try {
      await (await this.clientNode).applyToHTTPSOptions(scratch);
    } catch (err) {
      throw new Error(`kubeconfig user "${u.name}": auth-provider "${u.authProvider?.name}": ${errorMessage(err)}`, { cause: err });
    }
    return headerObject(scratch.headers);
  }
}

/** Parsed and shape-checked, with relative paths made relative to the file's directory (as kubectl does). */
function readKubeconfigFile(file: string): z.infer<typeof kubeconfigSchema> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`kubeconfig ${file}: cannot read: ${errorMessage(err)}`, { cause: err });
  }
  let doc: unknown;
  try {
    // The YAML parser (~5 MiB) is loaded with the first file: in a cluster, the deployed case, none is read.
    const { parse } = createRequire(import.meta.url)('yaml') as typeof Yaml;
    doc = parse(text);
  } catch (err) {
    throw new Error(`kubeconfig ${file}: not valid YAML: ${errorMessage(err)}`, { cause: err });
  }
  const parsed = kubeconfigSchema.safeParse(doc ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${fieldPath(i.path)}: ${i.message}`);
    throw new Error(`kubeconfig ${file}: ${issues.join('; ')}`);
  }
  const config = parsed.data;
  const dir = dirname(file);
  const resolve = (p: string | null | undefined): string | undefined => (p ? (isAbsolute(p) ? p : join(dir, p)) : undefined);
  for (const { cluster } of config.clusters ?? []) cluster['certificate-authority'] = resolve(cluster['certificate-authority']);
  for (const { user } of config.users ?? []) {
    if (!user) continue;
    user['client-certificate'] = resolve(user['client-certificate']);
    user['client-key'] = resolve(user['client-key']);
    user.tokenFile = resolve(user.tokenFile);
    // A bare command name is looked up on PATH; only a path is made relative to the file.
    if (user.exec?.command.includes(sep)) user.exec.command = resolve(user.exec.command) ?? user.exec.command;
  }
  return config;
}

function toCluster(where: string, name: string, e: ClusterEntry): Cluster {
  const at = `${where}: cluster "${name}"`;
  if (!e.server) throw new Error(`${at}: server is missing`);
  if (!URL.canParse(e.server)) throw new Error(`${at}: server ${JSON.stringify(e.server)} is not a URL`);
  if (e['proxy-url'] && !URL.canParse(e['proxy-url'])) throw new Error(`${at}: proxy-url ${JSON.stringify(e['proxy-url'])} is not a URL`);
  const cluster: Cluster = { name, server: e.server.replace(/\/$/, ''), insecure: e['insecure-skip-tls-verify'] === true };
  // As in client-go, inline data wins over a file.
  if (e['certificate-authority-data']) cluster.caData = decodeData(at, 'certificate-authority-data', e['certificate-authority-data']);
  else if (e['certificate-authority']) cluster.caFile = e['certificate-authority'];
  if (e['tls-server-name']) cluster.tlsServerName = e['tls-server-name'];
  if (e['proxy-url']) cluster.proxyUrl = e['proxy-url'];
  const execExtension = e.extensions?.find((x) => x.name === 'client.authentication.k8s.io/exec');
  if (execExtension) cluster.execExtension = execExtension.extension;
  return cluster;
}

function toUser(where: string, name: string, e: UserEntry): User {
  const at = `${where}: user "${name}"`;
  const user: User = { name };
  if (e['client-certificate-data']) user.certData = decodeData(at, 'client-certificate-data', e['client-certificate-data']);
  else if (e['client-certificate']) user.certFile = e['client-certificate'];
  if (e['client-key-data']) user.keyData = decodeData(at, 'client-key-data', e['client-key-data']);
  else if (e['client-key']) user.keyFile = e['client-key'];
  if ((user.certData || user.certFile) && !(user.keyData || user.keyFile)) throw new Error(`${at}: a client certificate needs client-key or client-key-data`);
  if ((user.keyData || user.keyFile) && !(user.certData || user.certFile)) throw new Error(`${at}: a client key needs client-certificate or client-certificate-data`);
  if (e.token) user.token = e.token;
  if (e.tokenFile) user.tokenFile = e.tokenFile;
  if (e.username) user.username = e.username;
  if (e.password) user.password = e.password;
  if (e.as) user.impersonate = e.as;
  // client-go's rules: one of basic and token auth, and an exec plugin or an auth-provider, not both.
  if ((user.username || user.password) && (user.token || user.tokenFile)) throw new Error(`${at}: both basic auth (username/password) and a token are set; only one is allowed`);
  if (e.exec && e['auth-provider']) throw new Error(`${at}: both exec and auth-provider are set; only one is allowed`);
  if (e.exec) {
    user.exec = {
      apiVersion: e.exec.apiVersion,
      command: e.exec.command,
      args: e.exec.args ?? [],
      env: e.exec.env ?? [],
      provideClusterInfo: e.exec.provideClusterInfo === true,
      ...(e.exec.installHint ? { installHint: e.exec.installHint } : {}),
      ...(e.exec.interactiveMode ? { interactiveMode: e.exec.interactiveMode } : {}),
    };
  }
  if (e['auth-provider']) user.authProvider = { name: e['auth-provider'].name, config: { ...e['auth-provider'].config } };
  return user;
}

async function execClusterInfo(c: Cluster): Promise<ExecClusterInfo> {
  const ca = c.caData ?? (c.caFile ? await readAuthFile(c.caFile, `cluster "${c.name}" certificate-authority`) : undefined);
  return {
    server: c.server,
    ...(c.tlsServerName ? { 'tls-server-name': c.tlsServerName } : {}),
    ...(c.insecure ? { 'insecure-skip-tls-verify': true } : {}),
    ...(ca ? { 'certificate-authority-data': ca.toString('base64') } : {}),
    ...(c.proxyUrl ? { 'proxy-url': c.proxyUrl } : {}),
    ...(c.execExtension === undefined ? {} : { config: c.execExtension }),
  };
}

function decodeData(at: string, field: string, base64: string): Buffer {
  const data = Buffer.from(base64, 'base64');
  if (data.length === 0) throw new Error(`${at}: ${field} is not base64`);
  return data;
}

async function readAuthFile(file: string, what: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new Error(`kubeconfig ${what}: cannot read ${file}: ${errorMessage(err)}`, { cause: err });
  }
}

/** `users[0].user.exec.command`, as the field is written in the file. */
function fieldPath(path: PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('') || '(document)';
}

/** RequestOptions headers may also be a flat [name, value, ...] list, which nothing here produces. */
function headerObject(headers: RequestOptions['headers']): OutgoingHttpHeaders {
  return headers === undefined || isHeaderList(headers) ? {} : headers;
}

function isHeaderList(headers: NonNullable<RequestOptions['headers']>): headers is readonly string[] {
  return Array.isArray(headers);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The kubeconfig a command talks to: `--kubeconfig`, else $KUBECONFIG / ~/.kube/config / in-cluster. */
export function loadKubeConfig(path: string | undefined): Kubeconfig {
  const kc = Kubeconfig.load(path);
  if (!kc.getCurrentCluster()) throw new Error(`no current cluster in the kubeconfig${path ? ` ${path}` : ''}`);
  return kc;
}
