// When an informer's cache is live (Informer.live): only while what it holds is the apiserver's state as of
// now, never a cache that may predate a gap in its watch. Against a local server that answers each watch
// request as the test scripts it (the watch protocol's lines: events, bookmarks, an ERROR, a dropped
// connection): the watcher's own logic, not the Kubernetes API.
// - Resuming from the resourceVersion (the hub's informers): after a failure the cache is live again only
//   once caught up — a bookmark of the resumed watch, or a state taken afresh (a 410) — not at its first
//   event, which may be one of many the gap left to deliver.
// - relistAfterFailure (the spoke agent's informers): after any failure the state is taken afresh, by a
//   watch-list (or a paged list), and the cache is live once that state is delivered; a failed relist
//   leaves the cache as it was, and not live.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../core/k8s/objects.ts';
import { Backoff } from '../runtime/backoff.ts';
import { KubeHttp } from './http.ts';
import { Informer } from './informer.ts';
import { RESOURCES } from './resource.ts';

const NS = 'ns';

/** One request the scripted server holds open until the test answers it. */
interface Call {
  query: URLSearchParams;
  watch: boolean;
  /** A watch-list: the whole state first (sendInitialEvents), no resourceVersion to resume from. */
  watchList: boolean;
  res: ServerResponse;
}

class ScriptedApiserver {
  private readonly server: Server;
  private readonly pending: Call[] = [];
  private readonly waiters: ((call: Call) => void)[] = [];
  /** Every request, in order: `watch-list`, `watch rv=N` or `list`. */
  readonly log: string[] = [];

  constructor() {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const watch = url.searchParams.get('watch') === 'true';
      const call: Call = { query: url.searchParams, watch, watchList: watch && url.searchParams.get('sendInitialEvents') === 'true', res };
      this.log.push(call.watchList ? 'watch-list' : watch ? `watch rv=${url.searchParams.get('resourceVersion')}` : 'list');
      const waiter = this.waiters.shift();
      if (waiter) waiter(call);
      else this.pending.push(call);
    });
  }

  async listen(): Promise<KubeConfig> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  }

  /** The next request the client makes. */
  next(): Promise<Call> {
    const call = this.pending.shift();
    if (call) return Promise.resolve(call);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }
}

const servers: ScriptedApiserver[] = [];
const informers: Informer[] = [];
after(async () => {
  await Promise.all(informers.map((i) => i.stop()));
  for (const s of servers) s.close();
});

function configMap(name: string, rv: number): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, resourceVersion: String(rv) } };
}

function send(call: Call, type: string, object: unknown): void {
  if (!call.res.headersSent) call.res.writeHead(200, { 'Content-Type': 'application/json' });
  call.res.write(`${JSON.stringify({ type, object })}\n`);
}

function bookmark(rv: number, initialEventsEnd = false): unknown {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { resourceVersion: String(rv), ...(initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}) } };
}

/** A watch-list's whole answer: each object, then the bookmark that ends the initial events; the stream stays open. */
function initialState(call: Call, objects: KubeObject[], rv: number): void {
  assert.ok(call.watchList, 'a watch-list');
  for (const o of objects) send(call, 'ADDED', o);
  send(call, 'BOOKMARK', bookmark(rv, true));
}

/** The connection drops mid-answer, as when a load balancer or the network resets it. */
function drop(call: Call): void {
  if (!call.res.headersSent) call.res.writeHead(200, { 'Content-Type': 'application/json' });
  call.res.flushHeaders();
  call.res.socket?.destroy();
}

const names = (informer: Informer): string[] => informer.store.list().map((o) => o.metadata.name).sort();

/** Lets the client take in what the server sent (a few turns of the event loop over a local socket). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 10));
}

async function until(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function started(options: { relistAfterFailure?: boolean; watchList?: boolean } = {}): Promise<{ server: ScriptedApiserver; informer: Informer; lives: number[] }> {
  const server = new ScriptedApiserver();
  servers.push(server);
  const http = new KubeHttp(await server.listen(), { watchList: options.watchList ?? true });
  const informer = new Informer(http, RESOURCES.configMaps, {
    namespace: NS,
    backoff: new Backoff({ initialMs: 1, maxMs: 1, jitter: 0 }),
    ...(options.relistAfterFailure ? { relistAfterFailure: true } : {}),
  });
  informers.push(informer);
  const lives: number[] = [];
  informer.onLive(() => lives.push(informer.store.list().length));
  informer.start();
  return { server, informer, lives };
}

test('resuming (the default): after a 410 Gone the cache is not live until the state taken afresh is delivered, and is kept as it was meanwhile', async () => {
  const { server, informer } = await started();
  const first = await server.next();
  initialState(first, [configMap('a', 1), configMap('b', 2)], 2);
  await informer.waitForSync();
  assert.equal(informer.live, true);

  send(first, 'ERROR', { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version: 2 (7)' });
  const relist = await server.next();
  assert.ok(relist.watchList, `the state is taken afresh by a watch-list: ${server.log.join(', ')}`);
  await settle();
  assert.equal(informer.live, false, 'the cache from before the 410 is not the state now');
  assert.deepEqual(names(informer), ['a', 'b'], 'kept as it was meanwhile');

  // The state streams in: still not live until its end.
  send(relist, 'ADDED', configMap('b', 2));
  await settle();
  assert.equal(informer.live, false);
  send(relist, 'ADDED', configMap('c', 6));
  send(relist, 'BOOKMARK', bookmark(7, true));
  await until(() => informer.live, 'live once the fresh state is delivered');
  assert.deepEqual(names(informer), ['b', 'c']);
});

test('resuming (the default): after a dropped watch the resumed one is live again at its first bookmark, not at its first event', async () => {
  const { server, informer, lives } = await started();
  const first = await server.next();
  initialState(first, [configMap('a', 1)], 3);
  await informer.waitForSync();
  assert.deepEqual(lives, [1], 'live at the first sync');

  drop(first);
  const resumed = await server.next();
  assert.equal(resumed.watchList, false);
  assert.equal(resumed.query.get('resourceVersion'), '3', 'the hub resumes from the resourceVersion: no relist');
  assert.equal(informer.live, false, 'a watch that failed leaves the cache not live');

  // What changed while the watch was down comes as events: the first of them is not the whole gap.
  send(resumed, 'ADDED', configMap('b', 4));
  await until(() => informer.store.get(`${NS}/b`) !== undefined, 'the first event of the resumed watch');
  await settle();
  assert.equal(informer.live, false, 'one event of the resumed watch does not prove it caught up');
  assert.equal(informer.lastError, undefined, 'although the watch delivers again (lastError clears, as the hub reads it)');
  send(resumed, 'DELETED', configMap('a', 5));
  await until(() => informer.store.get(`${NS}/a`) === undefined, 'the second event');
  await settle();
  assert.equal(informer.live, false);

  // A bookmark says every change up to its resourceVersion was delivered.
  send(resumed, 'BOOKMARK', bookmark(9));
  await until(() => informer.live, 'live at the bookmark');
  assert.deepEqual(names(informer), ['b']);
  assert.deepEqual(lives, [1, 1], 'onLive told once more, when caught up');
  assert.equal(informer.lists, 1, 'no relist');
});

test('relistAfterFailure: after a dropped watch the state is taken afresh by a watch-list, and the cache is live the moment it is delivered', async () => {
  const { server, informer, lives } = await started({ relistAfterFailure: true });
  const first = await server.next();
  initialState(first, [configMap('local-a', 1)], 3);
  await informer.waitForSync();

  drop(first);
  const relist = await server.next();
  assert.deepEqual(server.log, ['watch-list', 'watch-list'], 'no watch resumed from the resourceVersion after a failure');
  assert.equal(relist.query.get('resourceVersion'), null);
  await settle();
  assert.equal(informer.live, false);
  assert.deepEqual(names(informer), ['local-a'], 'kept as it was until the fresh state is complete');

  // Nothing changed meanwhile: live again at the end of the initial events, not a minute later at a bookmark.
  initialState(relist, [configMap('local-a', 1)], 8);
  await until(() => informer.live, 'live once the fresh state is delivered');
  assert.deepEqual(lives, [1, 1], 'onLive told, although no object changed');
  assert.equal(informer.lists, 2);
});

test('relistAfterFailure: a failed relist — refused, or cut before its end — leaves the cache as it was, and not live', async () => {
  const { server, informer } = await started({ relistAfterFailure: true });
  const first = await server.next();
  initialState(first, [configMap('local-a', 1), configMap('local-b', 2)], 2);
  await informer.waitForSync();
  drop(first);

  const refused = await server.next();
  refused.res.writeHead(503, { 'Content-Type': 'application/json' });
  refused.res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 503, reason: 'ServiceUnavailable', message: 'down' }));
  const cut = await server.next();
  assert.ok(cut.watchList);
  assert.equal(informer.live, false);
  assert.deepEqual(names(informer), ['local-a', 'local-b']);
  send(cut, 'ADDED', configMap('local-b', 2));
  await settle();
  drop(cut);
  const third = await server.next();
  assert.ok(third.watchList, 'each retry takes the whole state again');
  assert.equal(informer.live, false);
  assert.deepEqual(names(informer), ['local-a', 'local-b'], 'half a state is never delivered');

  initialState(third, [configMap('local-b', 2), configMap('local-c', 5)], 6);
  await until(() => informer.live, 'live once a whole state is delivered');
  assert.deepEqual(names(informer), ['local-b', 'local-c']);
});

test('relistAfterFailure: a 410 is a failure like any other (a watch-list follows); a clean end of the stream resumes from the resourceVersion', async () => {
  const { server, informer } = await started({ relistAfterFailure: true });
  const first = await server.next();
  initialState(first, [configMap('a', 1)], 3);
  await informer.waitForSync();

  // The server's own timeout ends the stream cleanly: every change is still ahead on the resumed watch.
  first.res.end();
  const resumed = await server.next();
  assert.equal(resumed.query.get('resourceVersion'), '3', 'a server timeout costs no relist');
  assert.equal(informer.live, true, 'nor liveness');

  send(resumed, 'ERROR', { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version: 3 (9)' });
  const relist = await server.next();
  assert.ok(relist.watchList);
  await settle();
  assert.equal(informer.live, false);
  initialState(relist, [configMap('a', 1)], 9);
  await until(() => informer.live, 'live once the fresh state is delivered');
});

test('relistAfterFailure with paged lists (an apiserver without watch-list): the state is listed afresh, then watched from the list', async () => {
  const { server, informer } = await started({ relistAfterFailure: true, watchList: false });
  const answerList = (call: Call, objects: KubeObject[], rv: number): void => {
    assert.equal(call.watch, false, 'a list');
    call.res.writeHead(200, { 'Content-Type': 'application/json' });
    call.res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: String(rv) }, items: objects }));
  };
  answerList(await server.next(), [configMap('a', 1)], 3);
  const watch = await server.next();
  await informer.waitForSync();
  assert.equal(informer.live, true);
  drop(watch);

  const failedList = await server.next();
  assert.equal(failedList.watch, false, 'listed afresh, not resumed');
  drop(failedList);
  const list = await server.next();
  await settle();
  assert.equal(informer.live, false);
  assert.deepEqual(names(informer), ['a']);
  answerList(list, [configMap('z', 5)], 6);
  const rewatch = await server.next();
  assert.equal(rewatch.query.get('resourceVersion'), '6');
  await until(() => informer.live, 'live once the list is delivered');
  assert.deepEqual(names(informer), ['z']);
  assert.deepEqual(server.log, ['list', 'watch rv=3', 'list', 'list', 'watch rv=6']);
});
