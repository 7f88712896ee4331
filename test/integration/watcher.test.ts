// The watcher and informer against the real hub apiserver of the sandbox: paged lists, watch events in
// order, surviving an apiserver restart plus an etcd compaction without missing an update, and a stop()
// after which no request leaves the process any more.
//
// The informers under test talk through `TappedHttp`, the real client with a recorder around it: every
// request and watch it makes, how each ended, and every 410 the apiserver answered. Nothing is mocked.
import assert from 'node:assert/strict';
import type { Agent } from 'node:http';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../hack/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/objects.ts';
import { KubeHttp, isGone, type Query, type RequestOptionsLite } from '../../src/kube/http.ts';
import { Informer } from '../../src/kube/informer.ts';
import { RESOURCES, collectionPath, objectPath, type ResourceRef } from '../../src/kube/resource.ts';
import type { StoreChange } from '../../src/kube/store.ts';
import type { WatcherOptions } from '../../src/kube/watcher.ts';
import { Backoff } from '../../src/runtime/backoff.ts';
import { FakeClock } from '../../src/runtime/fake-clock.ts';
import { eventually, type EventuallyOptions } from '../support/eventually.ts';
import { createNamespace, list, removeNamespace } from '../support/fixtures.ts';
import { hubHttp, uniqueName } from '../support/hub.ts';
import { testSandbox } from '../support/sandbox.ts';

const HUB_APISERVER = 'kube-apiserver/hub';
const CM = RESOURCES.configMaps;

interface Call {
  /** ms since the tap was made. */
  at: number;
  method: string;
  path: string;
  query: Query | undefined;
  /** `pending`, `ok`, `ended`, or the error it ended with. */
  outcome: string;
  /** ms since the tap was made, once it ended. */
  endedAt?: number;
}

/** The real client, recording what the informer using it asks of the apiserver. */
class TappedHttp extends KubeHttp {
  private readonly t0 = performance.now();
  readonly calls: Call[] = [];
  /** The message of every 410 Gone answered to a watch, as an ERROR event or as the HTTP status. */
  readonly gone: string[] = [];

  override async request<T = unknown>(method: string, path: string, o: RequestOptionsLite = {}): Promise<T> {
    const call = this.record(method, path, o.query);
    try {
      const result = await super.request<T>(method, path, o);
      this.end(call, 'ok');
      return result;
    } catch (err) {
      this.end(call, String(err));
      throw err;
    }
  }

  override async stream(path: string, query: Query, onLine: (line: string) => void, signal: AbortSignal): Promise<void> {
    const call = this.record('WATCH', path, query);
    const tap = (line: string): void => {
      const ev = JSON.parse(line) as { type: string; object: { code?: number; message?: string } };
      if (ev.type === 'ERROR') {
        this.end(call, `ERROR event ${ev.object.code}: ${ev.object.message}`);
        if (ev.object.code === 410) this.gone.push(ev.object.message ?? '');
      }
      onLine(line);
    };
    try {
      await super.stream(path, query, tap, signal);
      this.end(call, 'ended');
    } catch (err) {
      if (isGone(err)) this.gone.push((err as Error).message);
      this.end(call, String(err));
      throw err;
    }
  }

  /**
   * Sockets of this client that are still open and carrying a request or a watch. Idle keep-alive
   * sockets are not counted, nor sockets already destroyed (node's agent forgets those a moment later).
   */
  openSocketsInUse(): number {
    const agents = [this['agent'], this['watchAgent']] as Agent[];
    return agents.flatMap((a) => Object.values(a.sockets).flat()).filter((s) => s !== undefined && !s.destroyed).length;
  }

  /** A readable log of the calls, for failure messages and diagnostics. */
  log(): string {
    return this.calls
      .map((c) => {
        const what = `${c.method} ${c.path}${c.query?.resourceVersion ? ` rv=${c.query.resourceVersion}` : ''}${c.query?.continue ? ' (continue)' : ''}`;
        const ended = c.endedAt === undefined ? '' : ` (at ${c.endedAt.toFixed(0)} ms)`;
        return `${c.at.toFixed(0).padStart(7)} ms ${what} → ${c.outcome}${ended}`;
      })
      .join('\n');
  }

  /** The first outcome sticks: an ERROR event is what ended a watch, not the abort that follows it. */
  private end(call: Call, outcome: string): void {
    if (call.outcome !== 'pending') return;
    call.outcome = outcome;
    call.endedAt = performance.now() - this.t0;
  }

  private record(method: string, path: string, query: Query | undefined): Call {
    const call: Call = { at: performance.now() - this.t0, method, path, query, outcome: 'pending' };
    this.calls.push(call);
    return call;
  }
}

let sandbox: Sandbox;
const namespaces: string[] = [];
const taps: TappedHttp[] = [];
const informers: Informer[] = [];

function tappedHttp(): TappedHttp {
  const http = new TappedHttp(sandbox.kubeConfig('hub'));
  taps.push(http);
  return http;
}

function informer(http: KubeHttp, namespace: string, options: Omit<WatcherOptions, 'namespace'> = {}): Informer {
  const inf = new Informer(http, CM, { namespace, ...options });
  informers.push(inf);
  return inf;
}

/** A fresh client for the test's own writes: after an apiserver restart, pooled connections are dead. */
async function withWriter<T>(fn: (http: KubeHttp) => Promise<T>): Promise<T> {
  const http = hubHttp(sandbox);
  try {
    return await fn(http);
  } finally {
    http.destroy();
  }
}

async function newNamespace(prefix: string): Promise<string> {
  const ns = uniqueName(prefix);
  await withWriter((http) => createNamespace(http, ns));
  namespaces.push(ns);
  return ns;
}

function configMap(ns: string, name: string, data: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data };
}

function create(http: KubeHttp, object: KubeObject): Promise<KubeObject> {
  return http.request<KubeObject>('POST', collectionPath(CM, object.metadata.namespace), { body: object });
}

function patchData(http: KubeHttp, ns: string, name: string, data: Record<string, string>): Promise<KubeObject> {
  return http.request<KubeObject>('PATCH', objectPath(CM, ns, name), { body: { data }, contentType: 'application/merge-patch+json' });
}

function del(http: KubeHttp, ns: string, name: string): Promise<unknown> {
  return http.request('DELETE', objectPath(CM, ns, name));
}

/** `name@resourceVersion` of every object, sorted: equal on both sides means the cache is exact. */
function fingerprint(objects: KubeObject[]): string[] {
  return objects.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort();
}

/** etcd's v3 JSON gateway on the sandbox's etcd client URL. */
async function etcd<T>(path: string, body: unknown): Promise<T> {
  const health = (await sandbox.status()).find((s) => s.name === 'etcd')!.endpoint; // http://127.0.0.1:PORT/health
  const res = await fetch(new URL(path, health), { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  const text = await res.text();
  if (!res.ok) throw new Error(`etcd ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Compacts etcd at its current revision (physically): every older revision is gone. Returns that revision. */
async function compactEtcd(): Promise<number> {
  const range = await etcd<{ header: { revision: string } }>('/v3/kv/range', { key: 'AA==' }); // the key "\0"
  const revision = range.header.revision;
  await etcd('/v3/kv/compaction', { revision, physical: true });
  return Number(revision);
}

/** `eventually` for a synchronous condition. */
async function until(probe: () => boolean, options: EventuallyOptions): Promise<void> {
  await eventually(() => Promise.resolve(probe()), options);
}

async function restartHubApiserver(): Promise<number> {
  const t0 = performance.now();
  await sandbox.restart(HUB_APISERVER);
  return performance.now() - t0;
}

before(async () => {
  sandbox = await testSandbox();
});

after(async () => {
  await Promise.all(informers.map((i) => i.stop()));
  for (const t of taps) t.destroy();
  await withWriter(async (http) => {
    for (const ns of namespaces) {
      // No kube-controller-manager runs in the sandbox: empty the namespace ourselves before deleting it.
      await http.request('DELETE', collectionPath(CM, ns));
      await removeNamespace(http, ns);
    }
  });
});

test('a paged list: with pageSize 5, all 23 ConfigMaps of the namespace are cached after one list', async () => {
  const ns = await newNamespace('wpage');
  const names = Array.from({ length: 23 }, (_, i) => `cm-${String(i).padStart(2, '0')}`);
  await withWriter(async (http) => {
    for (const name of names) await create(http, configMap(ns, name, { index: name }));
  });

  const http = tappedHttp();
  const inf = informer(http, ns, { pageSize: 5 }).start();
  await inf.waitForSync();

  assert.deepEqual(inf.store.keys().sort(), names.map((n) => `${ns}/${n}`));
  assert.equal(inf.lists, 1);
  const apiserver = await withWriter((w) => list(w, CM, ns));
  assert.deepEqual(fingerprint(inf.store.list()), fingerprint(apiserver), 'the cache holds what the apiserver holds, at the same versions');
  const cached = inf.store.get(`${ns}/cm-07`)!;
  assert.equal(cached.apiVersion, 'v1');
  assert.equal(cached.kind, 'ConfigMap');
  assert.deepEqual(cached.data, { index: 'cm-07' });

  // It really was paged: ⌈23 / 5⌉ = 5 GETs of at most 5 items, each after the first with a continue token.
  const gets = http.calls.filter((c) => c.method === 'GET');
  assert.equal(gets.length, 5, http.log());
  assert.ok(gets.every((c) => c.query?.limit === 5 && c.outcome === 'ok'), http.log());
  assert.equal(gets[0]!.query?.continue, undefined);
  assert.ok(gets.slice(1).every((c) => typeof c.query?.continue === 'string' && c.query.continue.length > 0), http.log());
  await inf.stop();
});

test('a transform shapes what is cached: each list page as it arrives, and every watch event', async () => {
  const ns = await newNamespace('wtransform');
  await withWriter(async (http) => {
    for (let i = 0; i < 12; i += 1) await create(http, configMap(ns, `cm-${String(i).padStart(2, '0')}`, { payload: 'x'.repeat(100) }));
  });
  const http = tappedHttp();
  // Which page (GETs made so far) each object was transformed in: a transform after the whole list would see 3 for all.
  const seenInPage: number[] = [];
  const transform = (o: KubeObject): KubeObject => {
    seenInPage.push(http.calls.filter((c) => c.method === 'GET').length);
    const { data: _payload, ...rest } = o as KubeObject & { data?: unknown };
    return { ...rest, metadata: { ...rest.metadata, annotations: { slim: 'true' } } };
  };
  const inf = informer(http, ns, { pageSize: 5, transform }).start();
  await inf.waitForSync();
  assert.deepEqual(seenInPage, [1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3]);
  assert.deepEqual(inf.store.get(`${ns}/cm-03`)?.metadata.annotations, { slim: 'true' });
  assert.equal((inf.store.get(`${ns}/cm-03`) as { data?: unknown }).data, undefined);

  await withWriter((w) => create(w, configMap(ns, 'late', { payload: 'y' })));
  await until(() => inf.store.get(`${ns}/late`) !== undefined, { what: 'the watched create in the cache' });
  assert.equal((inf.store.get(`${ns}/late`) as { data?: unknown }).data, undefined);
  assert.deepEqual(inf.store.get(`${ns}/late`)?.metadata.annotations, { slim: 'true' });
  await inf.stop();
});

test('watch events: a create, an update and a delete after sync reach onChange in order, with the right types', async () => {
  const ns = await newNamespace('wevents');
  await withWriter((http) => create(http, configMap(ns, 'before', { v: '0' })));
  const http = tappedHttp();
  const seen: StoreChange<KubeObject>[] = [];
  const inf = informer(http, ns).onChange((c) => seen.push(c)).start();
  await inf.waitForSync();
  assert.deepEqual(seen.map((c) => [c.type, c.object.metadata.name]), [['ADDED', 'before']], 'the list is delivered as ADDED');
  seen.length = 0;

  const [created, updated] = await withWriter(async (w) => {
    const c = await create(w, configMap(ns, 'e', { v: '1' }));
    const u = await patchData(w, ns, 'e', { v: '2' });
    await del(w, ns, 'e');
    return [c, u];
  });

  await until(() => seen.length >= 3, { what: 'three changes', timeoutMs: 30_000, context: () => JSON.stringify(seen.map((c) => c.type)) });
  assert.deepEqual(
    seen.map((c) => [c.type, c.object.metadata.name, (c.object.data as Record<string, string>).v]),
    [
      ['ADDED', 'e', '1'],
      ['MODIFIED', 'e', '2'],
      ['DELETED', 'e', '2'],
    ],
  );
  assert.equal(seen[0]!.object.metadata.resourceVersion, created.metadata.resourceVersion);
  assert.equal(seen[1]!.object.metadata.resourceVersion, updated.metadata.resourceVersion);
  assert.equal(seen[1]!.old?.metadata.resourceVersion, created.metadata.resourceVersion, 'MODIFIED carries the previous object');
  assert.equal(inf.store.get(`${ns}/e`), undefined);
  assert.deepEqual(inf.store.keys(), [`${ns}/before`]);
  assert.equal(inf.lists, 1, 'the changes came from the watch, not a relist');
  // Nothing else happened on the wire: one list and one watch still open.
  assert.deepEqual(http.calls.map((c) => [c.method, c.outcome]), [['GET', 'ok'], ['WATCH', 'pending']], http.log());
  await inf.stop();
});

test('an etcd compaction alone does not disturb watches: the apiserver serves them from its watch cache', async () => {
  const ns = await newNamespace('wcompact');
  await withWriter((http) => create(http, configMap(ns, 'a', { v: '1' })));
  const http = tappedHttp();
  const seen: string[] = [];
  const inf = informer(http, ns).onChange((c) => seen.push(`${c.type} ${c.object.metadata.name}`)).start();
  await inf.waitForSync();
  seen.length = 0;
  await until(() => http.calls.length === 2, { what: 'the watch request', timeoutMs: 10_000 });
  const listedAt = Number(http.calls[1]!.query?.resourceVersion); // the watch starts at the list's revision

  await compactEtcd();
  const updated = await withWriter((w) => patchData(w, ns, 'a', { v: '2' }));
  await until(() => seen.length > 0, { what: 'the update', timeoutMs: 30_000 });
  assert.deepEqual(seen, ['MODIFIED a']);
  assert.equal(inf.store.get(`${ns}/a`)!.metadata.resourceVersion, updated.metadata.resourceVersion);
  assert.equal(inf.lists, 1);
  assert.deepEqual(http.gone, []);
  assert.deepEqual(http.calls.map((c) => [c.method, c.outcome]), [['GET', 'ok'], ['WATCH', 'pending']], http.log());
  await inf.stop();

  // Even a new watch from a revision etcd has compacted away is served (from the watch cache's history).
  const compactedAt = await compactEtcd();
  assert.ok(compactedAt > listedAt, `compacted at ${compactedAt}, listed at ${listedAt}`);
  const events: { type: string; object: KubeObject }[] = [];
  const done = new AbortController();
  await http
    .stream(collectionPath(CM, ns), { watch: true, resourceVersion: String(listedAt), timeoutSeconds: 30 }, (line) => {
      events.push(JSON.parse(line) as { type: string; object: KubeObject });
      done.abort();
    }, done.signal)
    .catch((err: unknown) => {
      if (!done.signal.aborted) throw err;
    });
  assert.deepEqual(events.map((e) => [e.type, e.object.metadata.resourceVersion]), [['MODIFIED', updated.metadata.resourceVersion]]);
});

test('survives a hub apiserver restart and an etcd compaction without missing an update', async (t) => {
  const ns = await newNamespace('wrestart');
  await withWriter(async (http) => {
    for (const name of ['stay', 'edit']) await create(http, configMap(ns, name, { v: '1' }));
  });
  const http = tappedHttp();
  // A fixed 6 s backoff, timed by a clock the test moves. On real time 6 s is not enough: the restart
  // takes ~13 s (the old apiserver does not exit on SIGTERM and keeps our watch open, silent, until
  // the sandbox SIGKILLs it 10 s later; the new one is ready ~2.5 s after that), and a retry then lands
  // before restart() returns, i.e. before the test's changes. On this clock the watcher stays away,
  // asleep, until the test lets it retry.
  const clock = new FakeClock();
  const backoff = new Backoff({ initialMs: 6000, maxMs: 6000, jitter: 0, clock });
  const inf = informer(http, ns, { backoff, clock }).start();
  await inf.waitForSync();
  // One object arrives through the watch: the stream is established when the apiserver goes away.
  const drop = await withWriter((w) => create(w, configMap(ns, 'drop', { v: '1' })));
  await until(() => inf.store.get(`${ns}/drop`)?.metadata.resourceVersion === drop.metadata.resourceVersion, { what: 'the watch event', timeoutMs: 30_000 });
  assert.equal(inf.lists, 1);

  const restartMs = await restartHubApiserver();
  t.diagnostic(`hub apiserver restart (SIGTERM → /readyz 200): ${Math.round(restartMs)} ms`);
  // The watch broke and the watcher is asleep in its backoff, no request open.
  await until(() => clock.pendingTimers() === 1 && http.calls.every((c) => c.outcome !== 'pending'), {
    what: 'the watcher to back off',
    timeoutMs: 10_000,
    context: () => http.log(),
  });
  const callsWhileAway = http.calls.length;

  const [edited, born] = await withWriter(async (w) => {
    const e = await patchData(w, ns, 'edit', { v: '2' });
    await del(w, ns, 'drop');
    const b = await create(w, configMap(ns, 'born', { v: '1' }));
    return [e, b];
  });
  const compactedAt = await compactEtcd();
  t.diagnostic(`changes made, then etcd compacted at revision ${compactedAt}`);
  assert.ok(compactedAt > Number(drop.metadata.resourceVersion));
  assert.ok(inf.store.get(`${ns}/drop`) && !inf.store.get(`${ns}/born`), 'the watcher has not seen the changes yet');

  // Let the backoff expire (again, should a retry fail) until the cache reflects all three changes.
  const wokeAt = performance.now();
  await until(
    () => {
      if (clock.pendingTimers() > 0) clock.advance(6000);
      const e = inf.store.get(`${ns}/edit`);
      const b = inf.store.get(`${ns}/born`);
      return (
        e?.metadata.resourceVersion === edited.metadata.resourceVersion &&
        b?.metadata.resourceVersion === born.metadata.resourceVersion &&
        inf.store.get(`${ns}/drop`) === undefined
      );
    },
    { what: 'the cache to reflect the update, the delete and the create', timeoutMs: 60_000, context: () => http.log() },
  );
  t.diagnostic(`cache caught up ${Math.round(performance.now() - wokeAt)} ms after the backoff expired`);
  t.diagnostic(`calls:\n${http.log()}`);

  assert.deepEqual(inf.store.get(`${ns}/edit`)!.data, { v: '2' });
  const apiserver = await withWriter((w) => list(w, CM, ns));
  assert.deepEqual(fingerprint(inf.store.list()), fingerprint(apiserver), 'the cache is exactly what the apiserver holds');

  // How it got there: the watch from the old resourceVersion was answered 410 Gone, and the watcher
  // relisted. The 410 is the restarted apiserver's watch cache's: its history starts at the revision of
  // its own initial list, taken when it started, before the changes and the compaction. The compaction
  // is not what the watcher hits (a watch from a resourceVersion is served from the watch cache, not by
  // etcd; see the test above).
  assert.ok(inf.lists >= 2, `relisted (lists = ${inf.lists})\n${http.log()}`);
  const after = http.calls.slice(callsWhileAway);
  const goneAt = after.findIndex((c) => c.method === 'WATCH' && /ERROR event 410/.test(c.outcome));
  assert.ok(goneAt >= 0, `a watch was answered 410 Gone\n${http.log()}`);
  // The watcher came back with the resourceVersion of the last event it had seen (or a later bookmark).
  const oldRv = after[goneAt]!.query?.resourceVersion;
  assert.ok(Number(oldRv) >= Number(drop.metadata.resourceVersion) && Number(oldRv) < Number(edited.metadata.resourceVersion), `rv=${oldRv}`);
  const m = /too old resource version: (\d+) \((\d+)\)/.exec(after[goneAt]!.outcome);
  assert.ok(m, after[goneAt]!.outcome);
  assert.equal(m[1], oldRv);
  assert.ok(Number(m[2]) > Number(oldRv) && Number(m[2]) < compactedAt, `the watch cache's window starts after the restart, before the compaction: ${m[0]}`);
  assert.ok(after.slice(goneAt + 1).some((c) => c.method === 'GET' && c.outcome === 'ok'), `a successful list follows the 410\n${http.log()}`);
  assert.equal(after.at(-1)?.method, 'WATCH');
  assert.equal(after.at(-1)?.outcome, 'pending', 'and it watches again');
  await inf.stop();
});

test('stop() really stops: no request from a stopped informer, even when a live one with the same backoff reconnects', async (t) => {
  const ns = await newNamespace('wstop');
  await withWriter((http) => create(http, configMap(ns, 'a', { v: '1' })));
  const backoff = (): Backoff => new Backoff({ initialMs: 2000, maxMs: 2000, jitter: 0 });
  const stoppedHttp = tappedHttp();
  const liveHttp = tappedHttp();
  const stopped = informer(stoppedHttp, ns, { backoff: backoff() }).start();
  const live = informer(liveHttp, ns, { backoff: backoff() }).start();
  await Promise.all([stopped.waitForSync(), live.waitForSync()]);
  // An event through the watch: the stream is established when stop() is called.
  const b = await withWriter((w) => create(w, configMap(ns, 'b', { v: '1' })));
  await until(() => stopped.store.get(`${ns}/b`)?.metadata.resourceVersion === b.metadata.resourceVersion, {
    what: 'the watch event',
    timeoutMs: 30_000,
  });
  const before = stopped.store.list();
  assert.deepEqual(stoppedHttp.calls.map((c) => [c.method, c.outcome]), [['GET', 'ok'], ['WATCH', 'pending']], 'the watch is open when stop() is called');

  const stopAt = performance.now();
  await stopped.stop(); // resolves: the open watch was closed, and the loop ended
  t.diagnostic(`stop() resolved in ${(performance.now() - stopAt).toFixed(1)} ms; the watch ended with: ${stoppedHttp.calls.at(-1)?.outcome}`);
  const callsAtStop = stoppedHttp.calls.length;
  assert.notEqual(stoppedHttp.calls.at(-1)?.outcome, 'pending', stoppedHttp.log());
  assert.equal(stoppedHttp.openSocketsInUse(), 0, 'no connection of the stopped informer carries a request');

  // The apiserver goes away and comes back, and an object appears: the live informer backs off,
  // reconnects (410, relist) and sees it. By then the stopped one would have too, had it been running.
  const restartMs = await restartHubApiserver();
  t.diagnostic(`hub apiserver restart: ${Math.round(restartMs)} ms`);
  const late = await withWriter((w) => create(w, configMap(ns, 'late', { v: '1' })));
  await until(() => live.store.get(`${ns}/late`)?.metadata.resourceVersion === late.metadata.resourceVersion, {
    what: 'the live informer to see the new ConfigMap',
    timeoutMs: 60_000,
    context: () => liveHttp.log(),
  });
  assert.ok(liveHttp.calls.some((c) => c.outcome.includes('TransportError') || /\b(410|429)\b/.test(c.outcome)), `the live informer had to reconnect\n${liveHttp.log()}`);
  t.diagnostic(`the live informer's calls:\n${liveHttp.log()}`);

  assert.equal(stopped.store.get(`${ns}/late`), undefined);
  assert.deepEqual(stopped.store.list(), before);
  assert.ok(stopped.store.list().every((o, i) => o === before[i]), 'the stopped cache is untouched');
  assert.equal(stoppedHttp.calls.length, callsAtStop, `no request after stop()\n${stoppedHttp.log()}`);
  assert.equal(stoppedHttp.openSocketsInUse(), 0);
  assert.equal(stopped.lists, 1);
});

test('stop() during a backoff sleep cancels the retry', async () => {
  // A resource the apiserver does not serve: every list fails (404) and the watcher backs off.
  const missing: ResourceRef = { group: 'nosuch.policy-sync.io', version: 'v1', resource: 'things', namespaced: true };
  const ns = await newNamespace('wbackoff');
  const backoff = (): Backoff => new Backoff({ initialMs: 300, maxMs: 300, jitter: 0 });
  const stoppedHttp = tappedHttp();
  const liveHttp = tappedHttp();
  const stopped = new Informer(stoppedHttp, missing, { namespace: ns, backoff: backoff() }).start();
  const live = new Informer(liveHttp, missing, { namespace: ns, backoff: backoff() }).start();
  informers.push(stopped, live);

  // Two lists failed and none is open: the watcher is asleep in its backoff.
  await until(() => stoppedHttp.calls.length >= 2 && stoppedHttp.calls.every((c) => c.outcome !== 'pending'), {
    what: 'two failed lists',
    timeoutMs: 10_000,
  });
  assert.match(stoppedHttp.calls[0]!.outcome, /404/);
  await stopped.stop();
  const callsAtStop = stoppedHttp.calls.length;
  const liveAtStop = liveHttp.calls.length;
  // Three more retries of the live one: the stopped one's timer would have fired by then.
  await until(() => liveHttp.calls.length >= liveAtStop + 3, { what: 'three more retries of the live informer', timeoutMs: 10_000 });
  assert.equal(stoppedHttp.calls.length, callsAtStop, stoppedHttp.log());
  assert.equal(stopped.synced, false);
  await live.stop();
});
