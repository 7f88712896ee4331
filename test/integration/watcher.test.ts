// The watcher and informer against the real hub apiserver of the sandbox: the initial state by a
// watch-list (one stream, the whole state in one replace, never a partial one), paged lists (forced, or
// after an apiserver of our own with the WatchList gate off refused the watch-list), watch events in
// order, surviving an apiserver restart plus an etcd compaction without missing an update (the cache not
// live from the break until the state taken afresh after the 410 is delivered), and a stop()
// after which no request leaves the process any more.
//
// The informers under test talk through `TappedHttp`, the real client with a recorder around it: every
// request and watch it makes, how each ended, and every 410 the apiserver answered. Nothing is mocked.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import type { Agent } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { writeAdminKubeconfig } from '../../testkit/sandbox/kubeconfig.ts';
import { pkiPaths } from '../../testkit/sandbox/pki.ts';
import { freePort } from '../../testkit/sandbox/ports.ts';
import { waitReady } from '../../testkit/sandbox/probe.ts';
import { startProcess, stopProcess, type ProcessSpec, type RunningProcess } from '../../testkit/sandbox/processes.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { ApiError, KubeHttp, isGone, type Query, type RequestOptionsLite } from '../../src/kube/http.ts';
import { Informer } from '../../src/kube/informer.ts';
import { RESOURCES, collectionPath, objectPath, type ResourceRef } from '../../src/kube/resource.ts';
import type { StoreChange } from '../../src/kube/store.ts';
import { Watcher, type WatcherOptions } from '../../src/kube/watcher.ts';
import { Backoff } from '../../src/runtime/backoff.ts';
import { FakeClock } from '../../testkit/fake-clock.ts';
import { eventually, type EventuallyOptions } from '../../testkit/eventually.ts';
import { createNamespace, list, removeNamespace } from '../../testkit/fixtures.ts';
import { compactEtcd, etcdCall, etcdUrl } from '../../testkit/etcd.ts';
import { hubHttp, uniqueName } from '../../testkit/hub.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

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
  /** Lines a watch received so far. */
  lines: number;
  /** The resourceVersion of a watch-list's bookmark ending its initial events, once received. */
  initialEventsEnd?: string;
}

/** The real client, recording what the informer using it asks of the apiserver. */
class TappedHttp extends KubeHttp {
  private readonly t0 = performance.now();
  readonly calls: Call[] = [];
  /** The message of every 410 Gone answered to a watch, as an ERROR event or as the HTTP status. */
  readonly gone: string[] = [];
  /** When set, the next watch is broken (as a dropped connection) after this many lines. */
  cutNextWatchAfter: number | undefined;

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
    const cutAfter = this.cutNextWatchAfter;
    this.cutNextWatchAfter = undefined;
    const tap = (line: string): void => {
      if (call.lines === cutAfter) {
        // Recorded here: KubeHttp reports a stream its handler broke as an aborted connection.
        this.end(call, `cut by the test after ${cutAfter} lines`);
        throw new ApiError(0, 'TransportError', `cut by the test after ${cutAfter} lines`, 'WATCH', path);
      }
      call.lines++;
      const ev = JSON.parse(line) as {
        type: string;
        object: { code?: number; message?: string; metadata?: { resourceVersion?: string; annotations?: Record<string, string> } };
      };
      if (ev.type === 'BOOKMARK' && ev.object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true') {
        call.initialEventsEnd = ev.object.metadata.resourceVersion;
      }
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
        const what = `${c.method} ${c.path}${c.query?.resourceVersion ? ` rv=${c.query.resourceVersion}` : ''}${c.query?.continue ? ' (continue)' : ''}${c.query?.sendInitialEvents ? ' (watch-list)' : ''}`;
        const synced = c.initialEventsEnd === undefined ? '' : `, initial events ended at rv=${c.initialEventsEnd}`;
        const ended = c.endedAt === undefined ? '' : ` (at ${c.endedAt.toFixed(0)} ms)`;
        return `${c.at.toFixed(0).padStart(7)} ms ${what} → ${c.outcome}${ended}${c.method === 'WATCH' ? ` [${c.lines} lines${synced}]` : ''}`;
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
    const call: Call = { at: performance.now() - this.t0, method, path, query, outcome: 'pending', lines: 0 };
    this.calls.push(call);
    return call;
  }
}

let sandbox: Sandbox;
const namespaces: string[] = [];
const taps: TappedHttp[] = [];
const informers: Informer[] = [];
const watchers: Watcher[] = [];

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

/**
 * A fresh client for the test's own writes (to the hub, or to the apiserver of `kubeConfig`): after an
 * apiserver restart, pooled connections are dead.
 */
async function withWriter<T>(fn: (http: KubeHttp) => Promise<T>, kubeConfig?: KubeConfig): Promise<T> {
  const http = kubeConfig ? new KubeHttp(kubeConfig) : hubHttp(sandbox);
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

function configMap(ns: string, name: string, data: Record<string, string> = {}, labels?: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...(labels ? { labels } : {}) }, data };
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

/** `eventually` for a synchronous condition. */
async function until(probe: () => boolean, options: EventuallyOptions): Promise<void> {
  await eventually(() => Promise.resolve(probe()), options);
}

interface OwnApiserver {
  kubeConfig: KubeConfig;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops it and deletes its data: its etcd keys, certificates and log. */
  remove(): Promise<void>;
}

/**
 * A kube-apiserver of the test's own: the hub's command line with its own port, folder and etcd prefix
 * (on the sandbox's etcd), plus `extraArgs`.
 */
async function ownApiserver(name: string, extraArgs: string[]): Promise<OwnApiserver> {
  const state = JSON.parse(readFileSync(sandbox.layout.state, 'utf8')) as { components: { spec: ProcessSpec }[] };
  const hub = state.components.find((c) => c.spec.name === HUB_APISERVER)!.spec;
  const port = await freePort();
  const server = `https://127.0.0.1:${port}`;
  const dir = join(sandbox.layout.data, name);
  mkdirSync(dir, { recursive: true });
  const prefix = `/${name}`;
  const own: Record<string, string> = {
    '--secure-port': String(port),
    '--etcd-prefix': prefix,
    '--cert-dir': join(dir, 'certs'),
    '--audit-log-path': join(dir, 'audit.log'),
    '--service-account-issuer': `${server}/`,
  };
  const args = hub.args.map((a) => {
    const flag = a.split('=')[0]!;
    return flag in own ? `${flag}=${own[flag]}` : a;
  });
  const spec: ProcessSpec = { name: `kube-apiserver/${name}`, command: hub.command, args: [...args, ...extraArgs], log: join(dir, 'kube-apiserver.log') };
  const pki = pkiPaths(sandbox.layout.pki);
  const kubeconfigFile = join(dir, 'kubeconfig');
  writeAdminKubeconfig(kubeconfigFile, name, server, pki);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigFile);
  let proc: RunningProcess | undefined;
  const self: OwnApiserver = {
    kubeConfig,
    start: async () => {
      proc = startProcess(spec);
      await waitReady(proc, { url: `${server}/readyz`, clientTls: true }, pki, 90_000);
    },
    stop: async () => {
      if (proc) await stopProcess(proc, 3_000);
    },
    remove: async () => {
      await self.stop();
      const b64 = (key: string): string => Buffer.from(key).toString('base64');
      await etcdCall(await etcdUrl(sandbox), '/v3/kv/deleterange', { key: b64(`${prefix}/`), range_end: b64(`${prefix}0`) }); // "0" follows "/"
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await self.start();
  } catch (err) {
    await self.remove();
    throw err;
  }
  return self;
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
  await Promise.all([...informers, ...watchers].map((i) => i.stop()));
  for (const t of taps) t.destroy();
  await withWriter(async (http) => {
    for (const ns of namespaces) {
      // No kube-controller-manager runs in the sandbox: empty the namespace ourselves before deleting it.
      await http.request('DELETE', collectionPath(CM, ns));
      await removeNamespace(http, ns);
    }
  });
});

test('a paged list (watchList: false): with pageSize 5, all 23 ConfigMaps of the namespace are cached after one list', async () => {
  const ns = await newNamespace('wpage');
  const names = Array.from({ length: 23 }, (_, i) => `cm-${String(i).padStart(2, '0')}`);
  await withWriter(async (http) => {
    for (const name of names) await create(http, configMap(ns, name, { index: name }));
  });

  const http = tappedHttp();
  const inf = informer(http, ns, { pageSize: 5, watchList: false }).start();
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

test('a transform shapes what is cached: each list page as it arrives (watchList: false), and every watch event', async () => {
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
  const inf = informer(http, ns, { pageSize: 5, transform, watchList: false }).start();
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

test('a watch-list: one stream, the whole state in one replace (selector and transform applied, each object as it arrives), then its events', async () => {
  const ns = await newNamespace('wlist');
  const names = Array.from({ length: 30 }, (_, i) => `cm-${String(i).padStart(2, '0')}`);
  const picked = names.filter((_, i) => i % 2 === 0);
  await withWriter(async (http) => {
    for (const [i, name] of names.entries()) await create(http, configMap(ns, name, { payload: 'x'.repeat(100) }, { pick: i % 2 === 0 ? 'yes' : 'no' }));
  });
  const http = tappedHttp();
  // The line of the stream each object was transformed on: a transform after the whole state would see one number.
  const transformedOnLine: number[] = [];
  const transform = (o: KubeObject): KubeObject => {
    transformedOnLine.push(http.calls.at(-1)!.lines);
    const { data: _payload, ...rest } = o as KubeObject & { data?: unknown };
    return { ...rest, metadata: { ...rest.metadata, annotations: { slim: 'true' } } };
  };
  const replaced: KubeObject[][] = [];
  const events: string[] = [];
  const watcher = new Watcher(http, CM, {
    replace: (items) => replaced.push(items),
    event: (type, o) => events.push(`${type} ${o.metadata.name} ${JSON.stringify(o.metadata.annotations)} ${JSON.stringify((o as { data?: unknown }).data)}`),
  }, { namespace: ns, labelSelector: 'pick=yes', transform });
  watchers.push(watcher);
  watcher.start();
  await until(() => watcher.synced, { what: 'the watch-list to sync', timeoutMs: 30_000, context: () => http.log() });

  assert.equal(replaced.length, 1);
  assert.equal(watcher.lists, 1);
  const state = replaced[0]!;
  assert.deepEqual(state.map((o) => o.metadata.name).sort(), picked);
  assert.ok(state.every((o) => o.apiVersion === 'v1' && o.kind === 'ConfigMap'), 'watch events carry apiVersion and kind');
  assert.ok(state.every((o) => o.data === undefined && o.metadata.annotations?.slim === 'true'), 'every object transformed');
  const apiserver = await withWriter((w) => list(w, CM, ns, 'pick=yes'));
  assert.deepEqual(fingerprint(state), fingerprint(apiserver), 'the state is what the apiserver holds, at the same versions');
  assert.deepEqual(transformedOnLine, picked.map((_, i) => i + 1), 'each object transformed on its own line, as it arrived');
  assert.deepEqual(events, []);

  // One request, still open: the watch-list, for the most recent state (no resourceVersion).
  assert.equal(http.calls.length, 1, http.log());
  const call = http.calls[0]!;
  assert.equal(call.method, 'WATCH');
  assert.equal(call.outcome, 'pending');
  assert.equal(call.query?.sendInitialEvents, true);
  assert.equal(call.query?.resourceVersionMatch, 'NotOlderThan');
  assert.equal(call.query?.allowWatchBookmarks, true);
  assert.equal(call.query?.resourceVersion, undefined);
  assert.equal(call.query?.labelSelector, 'pick=yes');
  assert.ok(Number(call.initialEventsEnd) >= Math.max(...apiserver.map((o) => Number(o.metadata.resourceVersion))), http.log());

  // The same stream goes on as the watch.
  await withWriter(async (w) => {
    await create(w, configMap(ns, 'late-no', { v: '1' }, { pick: 'no' }));
    await create(w, configMap(ns, 'late-yes', { v: '1' }, { pick: 'yes' }));
    await patchData(w, ns, 'cm-00', { v: '2' });
    await del(w, ns, 'cm-02');
  });
  await until(() => events.length >= 3, { what: 'three events', timeoutMs: 30_000, context: () => events.join('\n') });
  assert.deepEqual(events, [
    'ADDED late-yes {"slim":"true"} undefined',
    'MODIFIED cm-00 {"slim":"true"} undefined',
    'DELETED cm-02 {"slim":"true"} undefined',
  ]);
  assert.equal(watcher.lists, 1);
  assert.deepEqual(http.calls.map((c) => [c.method, c.outcome]), [['WATCH', 'pending']], http.log());
  await watcher.stop();
});

test('a watch-list cut before the end of its initial events delivers nothing; the next round streams the whole state again', async () => {
  const ns = await newNamespace('wlistcut');
  const names = Array.from({ length: 20 }, (_, i) => `cm-${String(i).padStart(2, '0')}`);
  await withWriter(async (http) => {
    for (const name of names) await create(http, configMap(ns, name, { v: '1' }));
  });
  const http = tappedHttp();
  http.cutNextWatchAfter = 10;
  // How many requests had been made when each change reached the cache.
  const changedDuringCall: number[] = [];
  const backoff = new Backoff({ initialMs: 300, maxMs: 300, jitter: 0 });
  const inf = informer(http, ns, { backoff }).onChange(() => changedDuringCall.push(http.calls.length)).start();
  await inf.waitForSync();

  assert.equal(http.calls.length, 2, http.log());
  const [cut, again] = http.calls as [Call, Call];
  for (const c of [cut, again]) {
    assert.equal(c.method, 'WATCH');
    assert.equal(c.query?.sendInitialEvents, true);
    assert.equal(c.query?.resourceVersion, undefined, 'the cut stream set no resourceVersion: the next round is a watch-list again');
  }
  assert.match(cut.outcome, /cut by the test after 10 lines/);
  assert.equal(cut.lines, 10);
  assert.equal(cut.initialEventsEnd, undefined);
  assert.ok(again.initialEventsEnd !== undefined && again.outcome === 'pending', http.log());
  assert.deepEqual(changedDuringCall, names.map(() => 2), 'no change came from the cut stream: the whole state, once, from the second');
  assert.deepEqual(inf.store.keys().sort(), names.map((n) => `${ns}/${n}`));
  assert.equal(inf.lists, 1);
  assert.equal(inf.lastError, undefined);
  await inf.stop();
});

test('watch events: a create, an update and a delete after sync reach onChange in order, with the right types', async () => {
  const ns = await newNamespace('wevents');
  await withWriter((http) => create(http, configMap(ns, 'before', { v: '0' })));
  const http = tappedHttp();
  const seen: StoreChange<KubeObject>[] = [];
  const inf = informer(http, ns).onChange((c) => seen.push(c)).start();
  await inf.waitForSync();
  assert.deepEqual(seen.map((c) => [c.type, c.object.metadata.name]), [['ADDED', 'before']], 'the initial state is delivered as ADDED');
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
  // Nothing else happened on the wire: the watch-list's stream, still open.
  assert.deepEqual(http.calls.map((c) => [c.method, c.outcome]), [['WATCH', 'pending']], http.log());
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
  const listedAt = Number(http.calls[0]!.initialEventsEnd); // the revision of the watch-list's initial state

  await compactEtcd(sandbox);
  const updated = await withWriter((w) => patchData(w, ns, 'a', { v: '2' }));
  await until(() => seen.length > 0, { what: 'the update', timeoutMs: 30_000 });
  assert.deepEqual(seen, ['MODIFIED a']);
  assert.equal(inf.store.get(`${ns}/a`)!.metadata.resourceVersion, updated.metadata.resourceVersion);
  assert.equal(inf.lists, 1);
  assert.deepEqual(http.gone, []);
  assert.deepEqual(http.calls.map((c) => [c.method, c.outcome]), [['WATCH', 'pending']], http.log());
  await inf.stop();

  // Even a new watch from a revision etcd has compacted away is served (from the watch cache's history).
  const compactedAt = await compactEtcd(sandbox);
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
  assert.equal(inf.live, false, 'a cache whose watch broke is not live (Informer.live)');

  const [edited, born] = await withWriter(async (w) => {
    const e = await patchData(w, ns, 'edit', { v: '2' });
    await del(w, ns, 'drop');
    const b = await create(w, configMap(ns, 'born', { v: '1' }));
    return [e, b];
  });
  const compactedAt = await compactEtcd(sandbox);
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
  assert.equal(inf.live, true, 'live again: the state taken afresh after the 410 was delivered');
  const apiserver = await withWriter((w) => list(w, CM, ns));
  assert.deepEqual(fingerprint(inf.store.list()), fingerprint(apiserver), 'the cache is exactly what the apiserver holds');

  // How it got there: the watch from the old resourceVersion was answered 410 Gone, and the watcher
  // took the state afresh, by a watch-list. The 410 is the restarted apiserver's watch cache's: its history starts at the revision of
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
  const relist = after.slice(goneAt + 1).find((c) => c.initialEventsEnd !== undefined);
  assert.ok(relist, `a watch-list to the end of its initial events follows the 410\n${http.log()}`);
  assert.equal(relist.query?.sendInitialEvents, true);
  assert.equal(relist.query?.resourceVersion, undefined);
  assert.ok(http.calls.every((c) => c.method === 'WATCH'), `no list request at all\n${http.log()}`);
  assert.equal(after.at(-1), relist, 'and it watches on, on that same stream');
  assert.equal(relist.outcome, 'pending');
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
  assert.deepEqual(stoppedHttp.calls.map((c) => [c.method, c.outcome]), [['WATCH', 'pending']], 'the watch is open when stop() is called');

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
  // A resource the apiserver does not serve: every watch-list fails (404) and the watcher backs off.
  const missing: ResourceRef = { group: 'nosuch.policy-sync.io', version: 'v1', resource: 'things', namespaced: true };
  const ns = await newNamespace('wbackoff');
  const backoff = (): Backoff => new Backoff({ initialMs: 300, maxMs: 300, jitter: 0 });
  const stoppedHttp = tappedHttp();
  const liveHttp = tappedHttp();
  const stopped = new Informer(stoppedHttp, missing, { namespace: ns, backoff: backoff() }).start();
  const live = new Informer(liveHttp, missing, { namespace: ns, backoff: backoff() }).start();
  informers.push(stopped, live);

  // Two watch-lists failed and none is open: the watcher is asleep in its backoff.
  await until(() => stoppedHttp.calls.length >= 2 && stoppedHttp.calls.every((c) => c.outcome !== 'pending'), {
    what: 'two failed watch-lists',
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

test('an apiserver with the WatchList gate off refuses the watch-list: the watcher says so once and lists in pages from then on, relists included', async (t) => {
  const apiserver = await ownApiserver(uniqueName('wl-gate-off'), ['--feature-gates=WatchList=false']);
  t.after(() => apiserver.remove());
  const ns = uniqueName('wfallback');
  await withWriter(async (w) => {
    await createNamespace(w, ns);
    for (let i = 0; i < 7; i += 1) await create(w, configMap(ns, `cm-${i}`, { v: '1' }));
  }, apiserver.kubeConfig);

  const http = new TappedHttp(apiserver.kubeConfig);
  taps.push(http);
  const logs: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(line) });
  const refusals = (): string[] => logs.filter((l) => l.includes('refuses watch-list'));
  const backoff = new Backoff({ initialMs: 500, maxMs: 500, jitter: 0 });
  const inf = informer(http, ns, { pageSize: 5, logger, backoff }).start();
  await inf.waitForSync();
  await until(() => http.calls.length === 4, { what: 'the watch after the list', timeoutMs: 10_000, context: () => http.log() });

  assert.equal(http.calls[0]!.query?.sendInitialEvents, true);
  assert.match(http.calls[0]!.outcome, /422 Invalid: .*sendInitialEvents is forbidden/, http.log());
  assert.deepEqual(http.calls.slice(1).map((c) => [c.method, c.outcome]), [['GET', 'ok'], ['GET', 'ok'], ['WATCH', 'pending']], http.log());
  assert.ok(http.calls[3]!.query?.resourceVersion !== undefined && http.calls[3]!.query.sendInitialEvents === undefined, http.log());
  assert.deepEqual(inf.store.keys().sort(), Array.from({ length: 7 }, (_, i) => `${ns}/cm-${i}`));
  assert.equal(inf.lists, 1);
  assert.equal(inf.lastError, undefined, 'the refusal is no failure');
  assert.equal(refusals().length, 1, logs.join(''));

  // A relist: while that apiserver is away, etcd moves on (a write to the hub), so the restarted one's
  // watch cache begins past the watcher's resourceVersion and answers its watch 410.
  const callsBefore = http.calls.length;
  const hubNs = await newNamespace('wfallbackhub');
  await apiserver.stop();
  await withWriter((w) => create(w, configMap(hubNs, 'moves-etcd')));
  await apiserver.start();
  await withWriter((w) => create(w, configMap(ns, 'late', { v: '1' })), apiserver.kubeConfig);
  await until(() => inf.store.get(`${ns}/late`) !== undefined, { what: 'the new ConfigMap in the cache', timeoutMs: 60_000, context: () => http.log() });
  t.diagnostic(`calls:\n${http.log()}`);
  assert.ok(http.gone.length > 0 && inf.lists >= 2, `a 410 and a relist\n${http.log()}`);
  const afterRestart = http.calls.slice(callsBefore);
  assert.ok(afterRestart.some((c) => c.method === 'GET' && c.outcome === 'ok'), http.log());
  assert.ok(afterRestart.every((c) => c.query?.sendInitialEvents === undefined), `no watch-list again\n${http.log()}`);
  assert.equal(refusals().length, 1);
  await inf.stop();
});
