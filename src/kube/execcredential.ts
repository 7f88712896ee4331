// A kubeconfig `exec` credential plugin (client.authentication.k8s.io v1 and v1beta1), as kubectl runs it:
// the command with its args and env, KUBERNETES_EXEC_INFO describing the request, an ExecCredential read
// from stdout. A credential is reused until its expirationTimestamp; one without an expiry is fetched
// again on each use, because nothing here learns of a 401 the way client-go does.
import { spawn } from 'node:child_process';
import { z } from 'zod';

export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const;

export interface ExecConfig {
  apiVersion: string;
  command: string;
  args: string[];
  env: { name: string; value: string }[];
  installHint?: string;
  provideClusterInfo: boolean;
  interactiveMode?: string;
}

/** `spec.cluster` of KUBERNETES_EXEC_INFO, for a plugin with provideClusterInfo. */
export interface ExecClusterInfo {
  server: string;
  'tls-server-name'?: string;
  'insecure-skip-tls-verify'?: boolean;
  /** Base64, as the API's []byte field is in JSON. */
  'certificate-authority-data'?: string;
  'proxy-url'?: string;
  config?: unknown;
}

export interface ExecCredential {
  token?: string;
  /** PEM. */
  clientCertificateData?: string;
  /** PEM. */
  clientKeyData?: string;
}

export interface ExecCredentialOptions {
  env?: NodeJS.ProcessEnv;
  now?: () => number;
  /** A plugin that has not answered by then is killed: every request waits for it. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
/**
 * KubeHttp re-reads credentials at most once a minute, so one handed out must stay valid that long:
 * a credential this close to its expiry is fetched again.
 */
const EXPIRY_MARGIN_MS = 60_000;

const execCredentialSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('ExecCredential'),
  status: z.object({
    token: z.string().nullish(),
    clientCertificateData: z.string().nullish(),
    clientKeyData: z.string().nullish(),
    expirationTimestamp: z.string().nullish(),
  }),
});

export class ExecCredentialPlugin {
  private cached: { credential: ExecCredential; validUntil: number } | undefined;
  private running: Promise<ExecCredential> | undefined;
  private readonly env: NodeJS.ProcessEnv;
  private readonly now: () => number;
  private readonly timeoutMs: number;

  constructor(
    private readonly userName: string,
    private readonly config: ExecConfig,
    private readonly clusterInfo: () => Promise<ExecClusterInfo>,
    options: ExecCredentialOptions = {},
  ) {
    this.env = options.env ?? process.env;
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** The cached credential while it is valid, else a fresh one (concurrent callers share one run). */
  async credential(): Promise<ExecCredential> {
    if (this.cached && this.now() < this.cached.validUntil) return this.cached.credential;
    this.running ??= this.run().finally(() => (this.running = undefined));
    return this.running;
  }

  private describe(): string {
    return `kubeconfig user "${this.userName}": exec plugin "${this.config.command}"`;
  }

  private async run(): Promise<ExecCredential> {
    const { apiVersion, command, args } = this.config;
    if (this.config.interactiveMode === 'Always') {
      throw new Error(`${this.describe()} has interactiveMode Always, but a controller has no terminal to give it`);
    }
    const spec: { interactive: false; cluster?: ExecClusterInfo } = { interactive: false };
    if (this.config.provideClusterInfo) spec.cluster = await this.clusterInfo();
    const env: NodeJS.ProcessEnv = { ...this.env };
    for (const { name, value } of this.config.env) env[name] = value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify({ apiVersion, kind: 'ExecCredential', spec });

    const { code, signal, stdout, stderr, error, timedOut } = await spawnCollect(command, args, env, this.timeoutMs);
    const hint = this.config.installHint ? `\n${this.config.installHint}` : '';
    if (error) throw new Error(`${this.describe()} could not be run: ${error.message}${hint}`);
    if (timedOut) throw new Error(`${this.describe()} gave no answer within ${this.timeoutMs} ms and was killed`);
    if (code !== 0) {
      const how = code === null ? `was killed by ${signal}` : `exited with code ${code}`;
      throw new Error(`${this.describe()} ${how}${stderr.trim() ? `: ${stderr.trim().slice(-2000)}` : ''}`);
    }

    const credential = this.parse(stdout);
    this.cached = { credential: credential.credential, validUntil: credential.expiresAt - EXPIRY_MARGIN_MS };
    return credential.credential;
  }

  private parse(stdout: string): { credential: ExecCredential; expiresAt: number } {
    let json: unknown;
    try {
      json = JSON.parse(stdout);
    } catch {
      throw new Error(`${this.describe()} printed no JSON ExecCredential: ${JSON.stringify(stdout.slice(0, 200))}`);
    }
    const parsed = execCredentialSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`${this.describe()} printed an invalid ExecCredential: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : ''}`);
    }
    const { apiVersion, status } = parsed.data;
    if (apiVersion !== this.config.apiVersion) {
      throw new Error(`${this.describe()} is configured for ${this.config.apiVersion} but answered with ${apiVersion}`);
    }
    const credential: ExecCredential = {};
    if (status.token) credential.token = status.token;
    if (status.clientCertificateData || status.clientKeyData) {
      if (!status.clientCertificateData || !status.clientKeyData) {
        throw new Error(`${this.describe()} returned only one of clientCertificateData and clientKeyData`);
      }
      credential.clientCertificateData = status.clientCertificateData;
      credential.clientKeyData = status.clientKeyData;
    }
    if (!credential.token && !credential.clientCertificateData) {
      throw new Error(`${this.describe()} returned neither a token nor a client certificate and key`);
    }
    let expiresAt = -Infinity;
    if (status.expirationTimestamp) {
      expiresAt = Date.parse(status.expirationTimestamp);
      if (Number.isNaN(expiresAt)) throw new Error(`${this.describe()} returned an invalid expirationTimestamp ${JSON.stringify(status.expirationTimestamp)}`);
    }
    return { credential, expiresAt };
  }
}

interface Collected {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  error?: Error;
  timedOut: boolean;
}

function spawnCollect(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Collected> {
  return new Promise((resolve) => {
    // stdin is closed: the plugin runs non-interactively (spec.interactive false).
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let error: Error | undefined;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (err) => (error = err));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut, ...(error ? { error } : {}) });
    });
  });
}
