// A small raw HTTP client for the Kubernetes API over node:https, authenticated from a client-node
// KubeConfig. It works on paths and plain JSON rather than client-node's typed models because the
// controller handles arbitrary GroupVersionResources, needs streaming watches it fully controls, and must
// not have timestamps turned into Date objects (they would break hashing and diffing).
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export interface Status {
  kind?: 'Status';
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: unknown;
}

/** A non-2xx answer from the apiserver (or a transport failure, with status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly method: string,
    readonly path: string,
  ) {
    super(`${method} ${path}: ${status} ${reason}: ${message}`);
    this.name = 'ApiError';
  }
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404;
}
export function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409;
}
export function isGone(err: unknown): boolean {
  return err instanceof ApiError && err.status === 410;
}
export function isForbidden(err: unknown): boolean {
  return err instanceof ApiError && err.status === 403;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptionsLite {
  query?: Query;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
}

/** Called before each write; resolves when the write may go (client-side QPS/burst limiting). */
export type WriteGate = () => Promise<void>;

const AUTH_REFRESH_MS = 60_000;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Sees every answered request (for client metrics). */
export type ResponseObserver = (method: string, path: string, status: number) => void;

export class KubeHttp {
  private readonly server: URL;
  private readonly agent: HttpAgent;
  /** Watches hold their connection for minutes: they get their own unbounded pool. */
  private readonly watchAgent: HttpAgent;
  private tls: RequestOptions = {};
  private headers: Record<string, string> = {};
  private authAt = -Infinity;
  private writeGate: WriteGate | undefined;
  private readonly onResponse: ResponseObserver | undefined;

  constructor(
    private readonly kc: KubeConfig,
    options: { maxSockets?: number; writeGate?: WriteGate; onResponse?: ResponseObserver } = {},
  ) {
    this.onResponse = options.onResponse;
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
    const Agent = this.server.protocol === 'https:' ? HttpsAgent : HttpAgent;
    this.agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 64 });
    this.watchAgent = new Agent({ keepAlive: false });
    this.writeGate = options.writeGate;
  }

  get serverUrl(): string {
    return this.server.href;
  }

  /** Credentials are re-read now and then so that rotated tokens (in-cluster, exec plugins) are picked up. */
  private async auth(): Promise<void> {
    if (Date.now() - this.authAt < AUTH_REFRESH_MS) return;
    const opts: RequestOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    const { ca, cert, key, pfx, passphrase, rejectUnauthorized } = opts;
    this.tls = { ca, cert, key, pfx, passphrase, ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }) };
    this.headers = Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k, String(v)]));
    if (opts.auth) this.headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    this.authAt = Date.now();
  }

  private url(path: string, query?: Query): URL {
    const url = new URL(path, this.server);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  private async open(method: string, path: string, o: RequestOptionsLite, watch: boolean): Promise<IncomingMessage> {
    await this.auth();
    if (this.writeGate && WRITE_METHODS.has(method)) await this.writeGate();
    const url = this.url(path, o.query);
    const payload = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    const headers: Record<string, string> = { Accept: 'application/json', ...this.headers };
    if (payload !== undefined) {
      headers['Content-Type'] = o.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(url, { method, headers, agent: watch ? this.watchAgent : this.agent, signal: o.signal, ...this.tls }, resolve);
      req.on('error', (err) => reject(err.name === 'AbortError' ? err : new ApiError(0, 'TransportError', err.message, method, path)));
      req.end(payload);
    });
  }

  /** One request; resolves with the parsed JSON body, rejects with ApiError on a non-2xx status. */
  async request<T = unknown>(method: string, path: string, o: RequestOptionsLite = {}): Promise<T> {
    const res = await this.open(method, path, o, false);
    const text = await readBody(res);
    const status = res.statusCode ?? 0;
    this.onResponse?.(method, path, status);
    if (status < 200 || status > 299) throw toApiError(status, text, method, path);
    return (text.length > 0 ? JSON.parse(text) : undefined) as T;
  }

  /**
   * A watch stream: `onLine` gets each JSON line (one watch event). Resolves when the server closes the
   * stream; rejects with ApiError on a non-200 answer or a broken connection.
   */
  async stream(path: string, query: Query, onLine: (line: string) => void, signal: AbortSignal): Promise<void> {
    const res = await this.open('GET', path, { query, signal }, true);
    const status = res.statusCode ?? 0;
    if (status !== 200) throw toApiError(status, await readBody(res), 'WATCH', path);
    res.setEncoding('utf8');
    let buffered = '';
    await new Promise<void>((resolve, reject) => {
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let nl = buffered.indexOf('\n');
        while (nl >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          try {
            if (line.trim().length > 0) onLine(line);
          } catch (err) {
            // A bad line or a failing handler ends this stream (the watcher restarts it), never the process.
            res.destroy();
            reject(err instanceof Error ? err : new Error(String(err)));
            return;
          }
          nl = buffered.indexOf('\n');
        }
      });
      res.on('end', resolve);
      res.on('aborted', () => reject(new ApiError(0, 'TransportError', 'watch connection aborted', 'WATCH', path)));
      res.on('error', (err) => reject(err.name === 'AbortError' ? err : new ApiError(0, 'TransportError', err.message, 'WATCH', path)));
    });
  }

  /** Closes pooled connections (for tests and shutdown). */
  destroy(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
  }
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

function toApiError(status: number, text: string, method: string, path: string): ApiError {
  let s: Status;
  try {
    s = JSON.parse(text) as Status;
  } catch {
    s = { message: text.slice(0, 500) };
  }
  return new ApiError(status, s.reason ?? 'Unknown', s.message ?? '', method, path);
}
