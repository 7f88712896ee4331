// The connection guarantees against the real hub apiserver: kubeconfig `tls-server-name` and `proxy-url`
// are honoured, a list that fails says why (lastError), and an event a handler throws on is not lost —
// neither from a watch nor from a (re)list.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { ApiError, KubeHttp } from '../../src/kube/http.ts';
import { Informer } from '../../src/kube/informer.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { Backoff } from '../../src/runtime/backoff.ts';
import { eventually } from '../../testkit/eventually.ts';
import { apply, createNamespace, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, uniqueName } from '../../testkit/hub.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

let sandbox: Sandbox;
let http: KubeHttp;
const ns = uniqueName('conn');
const servers: Server[] = [];
const fast = (): Backoff => new Backoff({ initialMs: 50, maxMs: 200 });

before(async () => {
  sandbox = await testSandbox();
  http = hubHttp(sandbox);
  await createNamespace(http, ns);
});

after(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
  await removeNamespace(http, ns);
  http.destroy();
});

/** The hub kubeconfig with its current cluster changed. */
function hubConfig(change: (cluster: { server: string; tlsServerName?: string; proxyUrl?: string }) => void): KubeConfig {
  const kc = sandbox.kubeConfig('hub');
  const exported = JSON.parse(kc.exportConfig()) as { clusters: { cluster: Record<string, string> }[] };
  const cluster = exported.clusters[0]!.cluster;
  const view = { server: cluster.server!, tlsServerName: cluster['tls-server-name'], proxyUrl: cluster['proxy-url'] };
  change(view);
  cluster.server = view.server;
  if (view.tlsServerName) cluster['tls-server-name'] = view.tlsServerName;
  if (view.proxyUrl) cluster['proxy-url'] = view.proxyUrl;
  const out = new KubeConfig();
  out.loadFromString(JSON.stringify(exported));
  return out;
}

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { k: 'v' } });

test('tls-server-name: the certificate is checked against that name, not the address dialled', async () => {
  // The sandbox's serving certificate names 127.0.0.1 and localhost.
  const good = new KubeHttp(hubConfig((c) => (c.tlsServerName = 'localhost')));
  await good.request('GET', '/version');
  good.destroy();
  const wrong = new KubeHttp(hubConfig((c) => (c.tlsServerName = 'not-the-apiserver.example')));
  await assert.rejects(wrong.request('GET', '/version'), (err: unknown) => err instanceof ApiError && err.reason === 'TransportError' && /not-the-apiserver/.test(err.message));
  wrong.destroy();
});

test('proxy-url: requests and watches go through the HTTP CONNECT proxy', async (t) => {
  const tunnels: string[] = [];
  const proxy = createServer();
  proxy.on('connect', (req, client, head) => {
    tunnels.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  servers.push(proxy);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxied = new KubeHttp(hubConfig((c) => (c.proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`)));
  // Paged lists: the list and the watch are two requests, each through the proxy.
  const informer = new Informer(proxied, RESOURCES.configMaps, { namespace: ns, watchList: false });
  // Stopped however the test ends: an informer left running keeps the file's process alive.
  t.after(async () => {
    await informer.stop();
    proxied.destroy();
  });
  informer.start();
  await informer.waitForSync();
  await apply(http, cm('through-proxy'));
  await eventually(() => Promise.resolve(informer.store.get(`${ns}/through-proxy`)), { what: 'the watch, through the proxy, to see the ConfigMap' });
  const apiserver = new URL(sandbox.hub.server).host;
  assert.ok(tunnels.length >= 2 && tunnels.every((host) => host === apiserver), `tunnels: ${tunnels.join(', ')}`);
});

test('a list that fails says why: lastError on a kind that is not served', async (t) => {
  const informer = new Informer(http, { group: 'nosuch.example.com', version: 'v1', resource: 'things', namespaced: true }, { backoff: fast() });
  t.after(() => informer.stop());
  informer.start();
  const error = await eventually(() => Promise.resolve(informer.lastError), { what: 'the informer to report its failing list' });
  assert.match(error.message, /404/);
  assert.equal(informer.synced, false);
});

test('an event a handler throws on is delivered again, from a watch and from a list', async (t) => {
  await apply(http, cm('listed'));
  const informer = new Informer(http, RESOURCES.configMaps, { namespace: ns, backoff: fast() });
  t.after(() => informer.stop());
  const seen: string[] = [];
  const thrown = new Set<string>();
  informer.onChange((c) => {
    const name = c.object.metadata.name;
    seen.push(name);
    // Each object's first delivery fails once.
    if ((name === 'listed' || name === 'watched') && !thrown.has(name)) {
      thrown.add(name);
      throw new Error(`handler failed on ${name}`);
    }
  });
  informer.start();
  await informer.waitForSync();
  assert.ok(informer.store.get(`${ns}/listed`), 'the listed object is cached once the handler took it');
  assert.deepEqual(seen.filter((n) => n === 'listed').length, 2, 'the relist delivered it again');
  await apply(http, cm('watched'));
  await eventually(() => Promise.resolve(seen.filter((n) => n === 'watched').length === 2 || undefined), { what: 'the watched event delivered again' });
  assert.ok(informer.store.get(`${ns}/watched`));
});
