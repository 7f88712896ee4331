// KubeHttp's liveness guarantees against local sockets that misbehave on purpose (a server that never
// answers, a watch that goes silent): the transport itself, not the Kubernetes API.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiError, KubeHttp } from './http.ts';
import { NotLeaderError } from '../runtime/leadership.ts';

const servers: Server[] = [];
after(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ kc: KubeConfig; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { kc, requests };
}

test('a request the server never answers fails with a Timeout ApiError at the deadline', async () => {
  const { kc } = await serve(() => undefined);
  const http = new KubeHttp(kc, { requestTimeoutMs: 300 });
  const started = Date.now();
  await assert.rejects(http.request('GET', '/api/v1/namespaces'), (err: unknown) => err instanceof ApiError && err.reason === 'Timeout' && err.status === 0);
  const took = Date.now() - started;
  assert.ok(took >= 290 && took < 3_000, `failed after ${took} ms`);
  http.destroy();
});

test("the caller's own abort stays an AbortError, not a Timeout", async () => {
  const { kc } = await serve(() => undefined);
  const http = new KubeHttp(kc, { requestTimeoutMs: 10_000 });
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 100);
  await assert.rejects(http.request('GET', '/api/v1/namespaces', { signal: abort.signal }), (err: unknown) => (err as Error).name === 'AbortError');
  http.destroy();
});

test('a watch that goes silent (no event, no bookmark) is torn down after the idle timeout; a talking one is not', async () => {
  const { kc } = await serve((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (req.url?.includes('chatty')) {
      const tick = setInterval(() => res.write('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"1"}}}\n'), 50);
      setTimeout(() => (clearInterval(tick), res.end()), 900);
    }
    // otherwise: headers, then nothing, forever
  });
  const http = new KubeHttp(kc, { watchIdleTimeoutMs: 300 });
  const lines: string[] = [];
  const started = Date.now();
  await assert.rejects(http.stream('/api/v1/silent', {}, (l) => lines.push(l), new AbortController().signal), (err: unknown) => err instanceof ApiError && err.reason === 'WatchIdle');
  const took = Date.now() - started;
  assert.ok(took >= 290 && took < 3_000, `torn down after ${took} ms`);
  // Lines keep it alive well past the idle timeout; it ends when the server ends it.
  await http.stream('/api/v1/chatty', {}, (l) => lines.push(l), new AbortController().signal);
  assert.ok(lines.length >= 10, `${lines.length} bookmarks received`);
  http.destroy();
});

test('a watch whose answer never comes (a frozen apiserver) is torn down after the idle timeout', async () => {
  const { kc } = await serve(() => undefined);
  const http = new KubeHttp(kc, { watchIdleTimeoutMs: 300 });
  await assert.rejects(http.stream('/api/v1/frozen', {}, () => undefined, new AbortController().signal), (err: unknown) => err instanceof ApiError && err.reason === 'WatchIdle');
  http.destroy();
});

test('the write guard stops a write before it is sent; reads pass', async () => {
  const { kc, requests } = await serve((_req, res) => res.end('{}'));
  let leading = false;
  const http = new KubeHttp(kc, {
    writeGuard: (method, path) => {
      if (!leading) throw new NotLeaderError(method, path);
      return undefined;
    },
  });
  await assert.rejects(http.request('PATCH', '/apis/x/v1/things/a', { body: {} }), NotLeaderError);
  await assert.rejects(http.request('DELETE', '/apis/x/v1/things/a'), NotLeaderError);
  await http.request('GET', '/apis/x/v1/things/a');
  assert.deepEqual(requests, ['GET /apis/x/v1/things/a'], 'no write reached the server');
  leading = true;
  await http.request('PATCH', '/apis/x/v1/things/a', { body: {} });
  assert.equal(requests.length, 2);
  http.destroy();
});

test('the write guard lets reviews pass: they persist nothing, and a standby asks them to check its grants', async () => {
  const { kc, requests } = await serve((_req, res) => res.end('{}'));
  const http = new KubeHttp(kc, {
    writeGuard: (method, path) => {
      throw new NotLeaderError(method, path);
    },
  });
  await http.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { body: {} });
  await http.request('POST', '/apis/authorization.k8s.io/v1/namespaces/ns/localsubjectaccessreviews', { body: {} });
  await http.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: {} });
  await assert.rejects(http.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/x', { body: {} }), NotLeaderError);
  await assert.rejects(http.request('POST', '/apis/x/v1/namespaces/ns/reviews', { body: {} }), NotLeaderError);
  assert.deepEqual(requests, [
    'POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    'POST /apis/authorization.k8s.io/v1/namespaces/ns/localsubjectaccessreviews',
    'POST /apis/authentication.k8s.io/v1/tokenreviews',
  ]);
  http.destroy();
});

test('send drains a success body without parsing it; its failures are ApiErrors like request\'s', async () => {
  const { kc, requests } = await serve((req, res) => {
    if (req.url?.includes('broken')) {
      res.writeHead(409, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', reason: 'AlreadyExists', message: 'w exists' }));
      return;
    }
    res.writeHead(201, { 'Content-Type': 'application/json' });
    res.end('{"not json'); // request would fail to parse this; send never reads it as JSON
  });
  const http = new KubeHttp(kc);
  assert.equal(await http.send('POST', '/apis/x/v1/ws', { body: {} }), undefined);
  await assert.rejects(http.request('POST', '/apis/x/v1/ws', { body: {} }), SyntaxError);
  await assert.rejects(http.send('POST', '/apis/x/v1/broken', { body: {} }), (err: unknown) => err instanceof ApiError && err.status === 409 && err.reason === 'AlreadyExists' && /w exists/.test(err.message));
  assert.equal(requests.length, 3);
  http.destroy();
});

test('the deadline and the caller\'s abort also end an answer that stalls halfway', async () => {
  const { kc } = await serve((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"items": ['); // then nothing
  });
  const http = new KubeHttp(kc, { requestTimeoutMs: 300 });
  const started = Date.now();
  await assert.rejects(http.request('GET', '/api/v1/namespaces'), (err: unknown) => err instanceof ApiError && err.reason === 'Timeout');
  assert.ok(Date.now() - started < 3_000);
  await assert.rejects(http.send('POST', '/api/v1/namespaces', { body: {} }), (err: unknown) => err instanceof ApiError && err.reason === 'Timeout');
  const patient = new KubeHttp(kc, { requestTimeoutMs: 10_000 });
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 100);
  await assert.rejects(patient.request('GET', '/api/v1/namespaces', { signal: abort.signal }), (err: unknown) => (err as Error).name === 'AbortError');
  http.destroy();
  patient.destroy();
});

test('send asks for the answer as metadata only (it is not read); request for the object', async () => {
  const accepts: (string | undefined)[] = [];
  const { kc } = await serve((req, res) => {
    accepts.push(req.headers.accept);
    res.end('{}');
  });
  const http = new KubeHttp(kc);
  await http.send('POST', '/apis/x/v1/ws', { body: {} });
  await http.request('POST', '/apis/x/v1/ws', { body: {} });
  assert.deepEqual(accepts, ['application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json', 'application/json']);
  http.destroy();
});

test('a 429 with Retry-After is sent again after the wait (up to a limit); one without is an ApiError at once', async () => {
  let calls = 0;
  const { kc } = await serve((req, res) => {
    calls++;
    const status = { kind: 'Status', reason: 'TooManyRequests', message: 'storage is (re)initializing' };
    if (req.url?.includes('bare')) res.writeHead(429);
    else if (req.url?.includes('never') || calls < 3) res.writeHead(429, { 'Retry-After': '0' });
    else return void res.end('{"ok":true}');
    res.end(JSON.stringify(status));
  });
  const http = new KubeHttp(kc);
  calls = 0;
  assert.deepEqual(await http.request('GET', '/api/v1/twice'), { ok: true });
  assert.equal(calls, 3, 'two 429s, then the answer');
  calls = 0;
  await assert.rejects(http.request('GET', '/api/v1/bare'), (err: unknown) => err instanceof ApiError && err.status === 429);
  assert.equal(calls, 1, 'no Retry-After: no retry');
  calls = 0;
  await assert.rejects(http.request('GET', '/api/v1/never'), (err: unknown) => err instanceof ApiError && err.status === 429 && err.retryAfterSeconds === 0);
  assert.equal(calls, 6, 'the first try and 5 retries');
  http.destroy();
});

test('a fenced write is aborted when its fence runs out, long before the request deadline, and its connection reset', async () => {
  const resets: string[] = [];
  const { kc } = await serve((req) => req.socket.on('error', (err: NodeJS.ErrnoException) => resets.push(err.code ?? '')));
  const until = performance.now() + 200;
  const http = new KubeHttp(kc, { requestTimeoutMs: 10_000, writeGuard: () => () => until - performance.now() });
  const started = performance.now();
  await assert.rejects(http.request('DELETE', '/apis/x/v1/things/a'), (err: unknown) => err instanceof ApiError && err.reason === 'Fenced' && err.status === 0);
  const took = performance.now() - started;
  assert.ok(took >= 190 && took < 2_000, `aborted after ${took.toFixed(0)} ms`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(resets, ['ECONNRESET'], 'the server saw a TCP reset, not a FIN');
  http.destroy();
});

test('a fence that moves on (the lease was renewed meanwhile) lets the write finish; reads are never fenced', async () => {
  const { kc } = await serve((_req, res) => setTimeout(() => res.end('{}'), 300));
  let until = performance.now() + 150;
  const extend = setTimeout(() => (until = performance.now() + 400), 100);
  let asked = 0;
  const http = new KubeHttp(kc, {
    requestTimeoutMs: 10_000,
    writeGuard: () => () => {
      asked++;
      return until - performance.now();
    },
  });
  assert.deepEqual(await http.request('PATCH', '/apis/x/v1/things/a', { body: {} }), {});
  assert.ok(asked >= 2, `the fence was asked again when its first time ran out (${asked} times)`);
  clearTimeout(extend);
  asked = 0;
  await http.request('GET', '/apis/x/v1/things/a');
  assert.equal(asked, 0);
  http.destroy();
});

test('onResponse sees each answered request with its time on the wire: the write gate\'s wait excluded, the slow answer included', async () => {
  const { kc } = await serve((req, res) => {
    const reply = (): void => {
      res.writeHead(req.method === 'GET' ? 200 : 409, { 'Content-Type': 'application/json' });
      res.end('{}');
    };
    if (req.method === 'GET') setTimeout(reply, 200);
    else reply();
  });
  const seen: { method: string; path: string; status: number; ms: number }[] = [];
  const http = new KubeHttp(kc, {
    writeGate: () => new Promise((resolve) => setTimeout(resolve, 1_500)),
    onResponse: (method, path, status, ms) => seen.push({ method, path, status, ms }),
  });
  await http.request('GET', '/api/v1/namespaces/ns/configmaps/a');
  await assert.rejects(http.request('PATCH', '/api/v1/namespaces/ns/configmaps/a', { body: {} }), (err: unknown) => err instanceof ApiError && err.status === 409);
  assert.deepEqual(seen.map((s) => `${s.method} ${s.path} ${s.status}`), ['GET /api/v1/namespaces/ns/configmaps/a 200', 'PATCH /api/v1/namespaces/ns/configmaps/a 409']);
  assert.ok(seen[0]!.ms >= 190 && seen[0]!.ms < 3_000, `the slow answer took ${seen[0]!.ms} ms`);
  assert.ok(seen[1]!.ms < 1_500, `the write's 1.5 s at the gate is not counted: ${seen[1]!.ms} ms`);
  http.destroy();
});

test('at most maxInFlight requests are under way; the others wait for a slot, and their deadline starts only then', async () => {
  let open = 0;
  let most = 0;
  const { kc } = await serve((_req, res) => {
    most = Math.max(most, ++open);
    setTimeout(() => {
      open--;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    }, 150);
  });
  // 12 requests of 150 ms each, 3 at a time: the last is answered ~600 ms after it was asked for, past its 400 ms
  // deadline, which counts from its slot.
  const http = new KubeHttp(kc, { maxInFlight: 3, requestTimeoutMs: 400 });
  const started = Date.now();
  await Promise.all(Array.from({ length: 12 }, (_, i) => http.request('GET', `/api/v1/namespaces/n${i}`)));
  const took = Date.now() - started;
  assert.equal(most, 3, 'never more than 3 under way');
  assert.ok(took >= 590, `4 turns of 150 ms: ${took} ms`);
  http.destroy();
});

test('a write held at the write gate longer than the request deadline is sent, not timed out', async () => {
  const { kc } = await serve((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{}');
  });
  const http = new KubeHttp(kc, { requestTimeoutMs: 200, writeGate: () => new Promise((resolve) => setTimeout(resolve, 500)) });
  assert.deepEqual(await http.request('PATCH', '/api/v1/namespaces/ns/configmaps/a', { body: {} }), {});
  http.destroy();
});
