// A small raw HTTP client for the Kubernetes API over node:https, authenticated from a kubeconfig
// (kubeconfig.ts, or a client-node KubeConfig). It works on paths and plain JSON rather than client-node's
// typed models because the controller handles arbitrary GroupVersionResources, needs streaming watches it
// fully controls, and must not have timestamps turned into Date objects (they would break hashing and
// diffing).
//
// Every connection is live or replaced (docs/design/runtime.md#live-connections): each request has a deadline, every socket has TCP
// keepalive (a peer that vanished is noticed), and a watch that delivers nothing — not even the bookmark
// the apiserver sends about every minute — within the idle timeout is torn down so the watcher restarts it.
//
// A write is also fenced in time when leader election guards it: the write guard says how long it may stay in
// flight (until a margin before a standby could take the lease), and it is aborted then. A request given up
// on ends its connection with a TCP reset where this client owns the TCP socket (direct connections): bytes
// not yet delivered are dropped, not sent on by the kernel after we gave up (docs/reliability.md, e).
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import type { KubeAccess } from './kubeconfig.ts';
import { HttpProxyAgent, HttpsProxyAgent } from 'hpagent';
import { InFlightLimit } from '../runtime/inflightlimit.ts';
import { SocksProxyAgent } from 'socks-proxy-agent';
import type { WriteFence } from '../runtime/leadership.ts';

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

  /** A 429's Retry-After: the request was not processed, and may be sent again after this wait. */
  retryAfterSeconds: number | undefined;
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404;
}
export function isForbidden(err: unknown): boolean {
  return err instanceof ApiError && err.status === 403;
}
export function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409;
}
/** A create of an object that exists (409, reason AlreadyExists; a 409 Conflict is a stale write). */
export function isAlreadyExists(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409 && err.reason === 'AlreadyExists';
}
export function isGone(err: unknown): boolean {
  return err instanceof ApiError && err.status === 410;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptionsLite {
  query?: Query;
  body?: unknown;
  contentType?: string;
  /** The Accept header; default JSON. */
  accept?: string;
  signal?: AbortSignal;
}

/** Called before each write with its path; resolves when the write may go (client-side QPS/burst limiting). */
export type WriteGate = (path: string) => Promise<void>;

/** Called before each write, after the write gate; throwing (e.g. NotLeaderError) stops the write, a fence bounds it. */
export type WriteGuard = (method: string, path: string) => WriteFence | undefined;

const AUTH_REFRESH_MS = 60_000;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * Access and token reviews are POSTs that persist nothing: the apiserver answers them and keeps no object. A
 * standby asks them too (the class reconciler checks a kind's grants by SelfSubjectAccessReview, to keep its
 * view warm for a takeover), so they are no writes to gate or fence.
 */
const REVIEW_PATH = /^\/apis\/(authorization|authentication)\.k8s\.io\/v1\/(namespaces\/[^/]+\/)?[a-z]+reviews$/;

/** A request that may change what the apiserver stores. */
function isWrite(method: string, path: string): boolean {
  return WRITE_METHODS.has(method) && !REVIEW_PATH.test(path);
}
/** client-go's default per-request timeout is none; 30 s bounds a request to a frozen apiserver. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** The apiserver sends a watch bookmark about every minute: three missed ones mean the watch is dead. */
export const DEFAULT_WATCH_IDLE_TIMEOUT_MS = 180_000;
const TCP_KEEPALIVE_MS = 15_000;
/** client-go's default for 429s with Retry-After is 10; a controller's own backoff takes over sooner here. */
const MAX_RETRIES_429 = 5;
const MAX_RETRY_AFTER_S = 10;
const DEFAULT_USER_AGENT = 'policy-sync';
/**
 * For an answer nobody reads: the apiserver sends only the object's metadata (as it does for
 * `kubectl get -o name`), not the whole object it would otherwise encode, and the client reads less.
 * JSON follows for a server that cannot convert.
 */
const METADATA_ONLY = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

export interface KubeHttpOptions {
  /**
   * Requests (not watches) under way at once, default 64; the rest wait for a slot before their deadline
   * starts (runtime/inflightlimit.ts). Sockets are pooled to the same number.
   */
  maxInFlight?: number;
  writeGate?: WriteGate;
  writeGuard?: WriteGuard;
  onResponse?: ResponseObserver;
  /** Deadline of every request but watches. */
  requestTimeoutMs?: number;
  /** A watch stream silent this long (no event, no bookmark) is torn down. */
  watchIdleTimeoutMs?: number;
  /** Sent on every request: the apiserver's audit log and metrics name the client by it. */
  userAgent?: string;
  /** Watchers take their initial state from a streaming watch (WatchList), not paged lists; default true. */
  watchList?: boolean;
}

/** What the CLI's connection flags set (hub and spoke alike). */
export type ConnectionOptions = Pick<KubeHttpOptions, 'requestTimeoutMs' | 'watchIdleTimeoutMs' | 'userAgent' | 'watchList'>;

/**
 * Sees every answered request (for client metrics), with how long it took from being sent (after the write
 * gate's wait) until its answer was read whole. Watches are not reported.
 */
export type ResponseObserver = (method: string, path: string, status: number, durationMs: number) => void;

export class KubeHttp {
  private readonly server: URL;
  private readonly agent: HttpAgent;
  /** Watches hold their connection for minutes: they get their own unbounded pool. */
  private readonly watchAgent: HttpAgent;
  private tls: RequestOptions = {};
  private headers: Record<string, string> = {};
  private authAt = -Infinity;
  private readonly writeGate: WriteGate | undefined;
  private readonly slots: InFlightLimit;
  private readonly writeGuard: WriteGuard | undefined;
  private readonly onResponse: ResponseObserver | undefined;
  readonly requestTimeoutMs: number;
  readonly watchIdleTimeoutMs: number;
  /** kubeconfig `tls-server-name`: the name the server certificate is checked against. */
  private readonly serverName: string | undefined;
  private readonly userAgent: string;
  /** See KubeHttpOptions.watchList: the watchers' default. */
  readonly watchList: boolean;

  constructor(
    private readonly kc: KubeAccess,
    options: KubeHttpOptions = {},
  ) {
    this.onResponse = options.onResponse;
    this.writeGate = options.writeGate;
    this.writeGuard = options.writeGuard;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.watchIdleTimeoutMs = options.watchIdleTimeoutMs ?? DEFAULT_WATCH_IDLE_TIMEOUT_MS;
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    this.watchList = options.watchList ?? true;
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
    this.serverName = cluster.tlsServerName || undefined;
    this.slots = new InFlightLimit(options.maxInFlight ?? 64);
    const pooled = { keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE_MS, maxSockets: this.slots.max };
    this.agent = createAgent(this.server, cluster.proxyUrl, pooled);
    // Watches hold their connection for minutes: they get their own unbounded pool.
    this.watchAgent = createAgent(this.server, cluster.proxyUrl, { keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE_MS });
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

  /**
   * `onRequest` gets the request as soon as it exists, with the write guard's fence if there is one
   * (exchange destroys it on its deadline or the fence's).
   */
  private async open(
    method: string,
    path: string,
    o: RequestOptionsLite,
    watch: boolean,
    onRequest?: (req: ClientRequest, fence: WriteFence | undefined) => void,
  ): Promise<IncomingMessage> {
    await this.auth();
    const fence = isWrite(method, path) ? this.writeGuard?.(method, path) : undefined;
    const url = this.url(path, o.query);
    const payload = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    const headers: Record<string, string> = { Accept: o.accept ?? 'application/json', 'User-Agent': this.userAgent, ...this.headers };
    if (payload !== undefined) {
      headers['Content-Type'] = o.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const tls = this.serverName ? { ...this.tls, servername: this.serverName } : this.tls;
      const req = send(url, { method, headers, agent: watch ? this.watchAgent : this.agent, signal: o.signal, ...tls }, resolve);
      req.on('socket', (socket: Socket) => socket.setKeepAlive(true, TCP_KEEPALIVE_MS));
      req.on('error', (err) => reject(err.name === 'AbortError' ? err : new ApiError(0, 'TransportError', err.message, method, path)));
      if (isWrite(method, path)) resetOnExit(req);
      onRequest?.(req, fence);
      req.end(payload);
    });
  }

  /**
   * One request; resolves with the parsed JSON body, rejects with ApiError on a non-2xx status, and with
   * ApiError reason `Timeout` when no full answer came within the request timeout.
   */
  async request<T = unknown>(method: string, path: string, o: RequestOptionsLite = {}): Promise<T> {
    return (await this.exchange(method, path, o, true)) as T;
  }

  /**
   * A request whose answer is not read back (a write the caches will show): as request, but the answer
   * is asked for as metadata only and a success body is drained unparsed — at 10k writes, encoding and
   * parsing objects nobody reads costs both sides CPU and garbage.
   */
  async send(method: string, path: string, o: RequestOptionsLite = {}): Promise<void> {
    await this.exchange(method, path, { accept: METADATA_ONLY, ...o }, false);
  }

  private async exchange(method: string, path: string, o: RequestOptionsLite, parse: boolean): Promise<unknown> {
    // As client-go: a 429 with Retry-After (APF throttling, or a watch cache still initialising after an
    // apiserver start) was not processed; it is sent again after the wait the server asks for.
    for (let retries = 0; ; retries++) {
      try {
        return await this.exchangeOnce(method, path, o, parse);
      } catch (err) {
        const wait = err instanceof ApiError ? err.retryAfterSeconds : undefined;
        if (wait === undefined || retries >= MAX_RETRIES_429 || o.signal?.aborted) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.min(wait, MAX_RETRY_AFTER_S) * 1000));
      }
    }
  }

  private async exchangeOnce(method: string, path: string, o: RequestOptionsLite, parse: boolean): Promise<unknown> {
    // A write waits for its turn at the write gate, every request for a slot; only then does its deadline start.
    if (this.writeGate && isWrite(method, path)) await this.writeGate(path);
    const release = await this.slots.acquire();
    try {
      return await this.exchangeAdmitted(method, path, o, parse);
    } finally {
      release();
    }
  }

  private async exchangeAdmitted(method: string, path: string, o: RequestOptionsLite, parse: boolean): Promise<unknown> {
    // The deadline, the fence and the caller's abort destroy the request (and so its answer) directly, from
    // one timer: an AbortSignal.timeout joined by AbortSignal.any per request costs measurable CPU at 10k writes.
    let req: ClientRequest | undefined;
    let fence: WriteFence | undefined;
    let ended: 'deadline' | 'fenced' | undefined;
    const { signal, ...rest } = o;
    const started = performance.now();
    let sent = started;
    const stop = (): void => {
      if (req) abortRequest(req, ended ? new Error(ended) : abortError());
    };
    let timer: NodeJS.Timeout | undefined;
    const check = (): void => {
      const left = this.requestTimeoutMs - (performance.now() - started);
      const fenceLeft = fence ? fence() : Infinity;
      if (left > 0 && fenceLeft > 0) {
        timer = setTimeout(check, Math.min(left, fenceLeft));
        return;
      }
      ended = left > 0 ? 'fenced' : 'deadline';
      stop();
    };
    timer = setTimeout(check, this.requestTimeoutMs);
    signal?.addEventListener('abort', stop);
    try {
      if (signal?.aborted) throw abortError();
      const res = await this.open(method, path, rest, false, (r, f) => {
        req = r;
        sent = performance.now();
        fence = f;
        if (f && !ended) {
          clearTimeout(timer);
          check();
        }
        if (ended || signal?.aborted) stop();
      });
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status <= 299;
      const text = await (ok && !parse ? drain(res) : readBody(res)).catch((err: Error) => {
        throw new ApiError(0, 'TransportError', `answer cut off: ${err.message}`, method, path);
      });
      this.onResponse?.(method, path, status, performance.now() - sent);
      if (!ok) throw toApiError(status, text, method, path, status === 429 ? res.headers['retry-after'] : undefined);
      return text.length > 0 ? JSON.parse(text) : undefined;
    } catch (err) {
      // The caller's own abort stays an AbortError; our deadline becomes an ApiError it can retry.
      if (signal?.aborted) throw abortError();
      if (ended === 'deadline') throw new ApiError(0, 'Timeout', `no answer within ${this.requestTimeoutMs} ms`, method, path);
      if (ended === 'fenced') throw new ApiError(0, 'Fenced', 'aborted unanswered: a standby could soon hold the leader lease (whether it was done is unknown)', method, path);
      throw err;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
    }
  }

  /**
   * A watch stream: `onLine` gets each JSON line (one watch event). Resolves when the server closes the
   * stream; rejects with ApiError on a non-200 answer or a broken connection, and with ApiError reason
   * `WatchIdle` when nothing at all arrived (answer, event or bookmark) within the watch idle timeout.
   */
  async stream(path: string, query: Query, onLine: (line: string) => void, signal: AbortSignal): Promise<void> {
    const idle = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const touch = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => idle.abort(), this.watchIdleTimeoutMs);
    };
    const idleError = (): ApiError => new ApiError(0, 'WatchIdle', `nothing received within ${this.watchIdleTimeoutMs} ms`, 'WATCH', path);
    touch();
    try {
      const res = await this.open('GET', path, { query, signal: AbortSignal.any([signal, idle.signal]) }, true);
      touch();
      const status = res.statusCode ?? 0;
      if (status !== 200) throw toApiError(status, await readBody(res), 'WATCH', path);
      res.setEncoding('utf8');
      let buffered = '';
      await new Promise<void>((resolve, reject) => {
        idle.signal.addEventListener('abort', () => {
          res.destroy();
          reject(idleError());
        });
        res.on('data', (chunk: string) => {
          touch();
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
    } catch (err) {
      if (idle.signal.aborted && !signal.aborted) throw idleError();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes pooled connections (for tests and shutdown). */
  destroy(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
  }
}

/** The connection pool: direct, or through the kubeconfig's `proxy-url` (http(s) CONNECT or socks). */
function createAgent(server: URL, proxyUrl: string | undefined, options: { keepAlive: boolean; keepAliveMsecs: number; maxSockets?: number }): HttpAgent {
  const https = server.protocol === 'https:';
  if (!proxyUrl) return https ? new ResettableHttpsAgent(options) : new HttpAgent(options);
  if (proxyUrl.startsWith('socks')) return new SocksProxyAgent(proxyUrl, options);
  return https ? new HttpsProxyAgent({ ...options, proxy: proxyUrl }) : new HttpProxyAgent({ ...options, proxy: proxyUrl });
}

/** The TCP socket under each direct TLS connection: a TLS socket cannot be reset itself. */
const tcpUnder = new WeakMap<object, Socket>();

/** An https Agent that opens the TCP connection itself, so that it can reset it (`abortRequest`). */
class ResettableHttpsAgent extends HttpsAgent {
  override createConnection(options: RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const { host, port, family, localAddress, lookup } = options;
    const tcp = netConnect({ host: host ?? 'localhost', port: Number(port ?? 443), family, localAddress, lookup });
    const tls = super.createConnection({ ...options, socket: tcp } as RequestOptions, callback);
    if (tls) tcpUnder.set(tls, tcp);
    else tcp.destroy();
    return tls;
  }
}

/**
 * Ends a request with a TCP reset (RST, not FIN) when its socket is connected and ours to reset (plain or
 * direct TLS; through a proxy, the tunnel's socket is closed as usual). Measured on the real apiserver
 * behind a relay that stopped reading: a request closed with a FIN was still delivered once the relay read
 * again (the kernel sends an orphaned socket's data on) and the apiserver handled it; a reset one never
 * arrived. A request already in the apiserver's socket buffer is read either way (a frozen apiserver).
 */
function abortRequest(req: ClientRequest, err: Error): void {
  const socket = req.socket;
  const tcp = socket ? (tcpUnder.get(socket) ?? (socket instanceof TLSSocket ? undefined : socket)) : undefined;
  if (tcp && !tcp.destroyed && !tcp.connecting) tcp.resetAndDestroy();
  req.destroy(err);
}

/** Writes on the wire, of every client in the process. */
const writesInFlight = new Set<ClientRequest>();
let exitHooked = false;

/**
 * A process that exits (as on a lost lease) resets the connections of its writes still in flight: the
 * kernel would close them with a FIN and go on delivering what the server has not acknowledged yet.
 */
function resetOnExit(req: ClientRequest): void {
  if (!exitHooked) process.once('exit', resetWritesInFlight);
  exitHooked = true;
  writesInFlight.add(req);
  req.once('close', () => writesInFlight.delete(req));
}

function resetWritesInFlight(): void {
  for (const req of writesInFlight) abortRequest(req, new Error('process exit'));
}

function abortError(): Error {
  return new DOMException('This operation was aborted', 'AbortError');
}

/** Reads a body to its end without keeping it; resolves with the empty string. */
function drain(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    res.on('end', () => resolve(''));
    res.on('error', reject);
    res.on('close', () => reject(new Error('closed')));
    res.resume();
  });
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    // A request destroyed mid-answer (deadline, abort) may close the answer without an error.
    res.on('close', () => reject(new Error('closed')));
  });
}

function toApiError(status: number, text: string, method: string, path: string, retryAfter?: string): ApiError {
  let s: Status;
  try {
    s = JSON.parse(text) as Status;
  } catch {
    s = { message: text.slice(0, 500) };
  }
  const error = new ApiError(status, s.reason ?? 'Unknown', s.message ?? '', method, path);
  const seconds = retryAfter === undefined ? NaN : Number(retryAfter);
  if (Number.isInteger(seconds) && seconds >= 0) error.retryAfterSeconds = seconds;
  return error;
}
