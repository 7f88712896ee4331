// Kubeconfig loading as kubectl does it, from temp files: contexts, $KUBECONFIG merging, relative paths,
// in-cluster, each credential kind (exec plugins through a small node script), and client-node imported
// only for an auth-provider user.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, test } from 'node:test';
import type * as ClientNode from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { loadKubeConfig } from './kubeconfig.ts';
import { KubeHttp } from './http.ts';
import { Kubeconfig, type KubeAccess } from './kubeconfig.ts';

// Compile-time: a client-node KubeConfig still fits wherever a KubeAccess is taken.
export const clientNodeFits: (kc: ClientNode.KubeConfig) => KubeAccess = (kc) => kc;

const root = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
function tempDir(): string {
  const dir = join(root, String(dirs++));
  mkdirSync(dir, { recursive: true });
  return dir;
}

function write(file: string, content: string | object): string {
  writeFileSync(file, typeof content === 'string' ? content : stringify(content));
  return file;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** A one-context kubeconfig document. */
function config(cluster: object, user: object = {}, extra: object = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
    ...extra,
  };
}

async function apply(kc: KubeAccess): Promise<RequestOptions> {
  const opts: RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  return opts;
}

/** A TLS option as text (a key may be typed as a list of key objects, which these never are). */
function text(value: RequestOptions['key']): string {
  return Buffer.isBuffer(value) || typeof value === 'string' ? value.toString() : JSON.stringify(value);
}

function headersOf(opts: RequestOptions): Record<string, unknown> {
  return (opts.headers ?? {}) as Record<string, unknown>;
}

test('the current context picks cluster and user; server, tls-server-name, proxy-url and insecure-skip-tls-verify are read', async () => {
  const dir = tempDir();
  const file = write(join(dir, 'config'), {
    clusters: [
      { name: 'a', cluster: { server: 'https://a.example:6443/', 'tls-server-name': 'api.internal', 'proxy-url': 'socks5://proxy:1080', 'insecure-skip-tls-verify': true } },
      { name: 'b', cluster: { server: 'https://b.example' } },
    ],
    users: [
      { name: 'ua', user: { token: 'token-a' } },
      { name: 'ub', user: { token: 'token-b' } },
    ],
    contexts: [
      { name: 'ctx-a', context: { cluster: 'a', user: 'ua' } },
      { name: 'ctx-b', context: { cluster: 'b', user: 'ub', namespace: 'ns' } },
    ],
    'current-context': 'ctx-a',
  });
  const kc = Kubeconfig.fromFiles([file]);
  assert.deepEqual(kc.getCurrentCluster(), { name: 'a', server: 'https://a.example:6443', skipTLSVerify: true, tlsServerName: 'api.internal', proxyUrl: 'socks5://proxy:1080' });
  const opts = await apply(kc);
  assert.equal(opts.rejectUnauthorized, false);
  assert.equal(opts.servername, 'api.internal');
  assert.equal(headersOf(opts).Authorization, 'Bearer token-a');

  const other = Kubeconfig.fromFiles([file], { context: 'ctx-b' });
  assert.deepEqual(other.getCurrentCluster(), { name: 'b', server: 'https://b.example', skipTLSVerify: false });
  const otherOpts = await apply(other);
  assert.equal(otherOpts.rejectUnauthorized, undefined, 'TLS verification stays on unless the kubeconfig turns it off');
  assert.equal(headersOf(otherOpts).Authorization, 'Bearer token-b');
});

test('certificate-authority and client certificate files are relative to the kubeconfig file; inline data is decoded and wins', async () => {
  const dir = tempDir();
  mkdirSync(join(dir, 'pki'));
  write(join(dir, 'pki', 'ca.crt'), 'CA FROM FILE');
  write(join(dir, 'pki', 'client.crt'), 'CERT FROM FILE');
  write(join(dir, 'pki', 'client.key'), 'KEY FROM FILE');
  const files = Kubeconfig.fromFiles([
    write(join(dir, 'files'), config({ server: 'https://h', 'certificate-authority': 'pki/ca.crt' }, { 'client-certificate': 'pki/client.crt', 'client-key': './pki/client.key' })),
  ]);
  const fromFiles = await apply(files);
  assert.equal(String(fromFiles.ca), 'CA FROM FILE');
  assert.equal(String(fromFiles.cert), 'CERT FROM FILE');
  assert.equal(text(fromFiles.key), 'KEY FROM FILE');
  assert.equal(fromFiles.headers, undefined, 'no auth header for a client-certificate user');

  const inline = Kubeconfig.fromFiles([
    write(
      join(dir, 'inline'),
      config(
        { server: 'https://h', 'certificate-authority-data': b64('CA DATA'), 'certificate-authority': 'pki/missing.crt' },
        { 'client-certificate-data': b64('CERT DATA'), 'client-key-data': b64('KEY DATA') },
      ),
    ),
  ]);
  const fromData = await apply(inline);
  assert.equal(String(fromData.ca), 'CA DATA');
  assert.equal(String(fromData.cert), 'CERT DATA');
  assert.equal(text(fromData.key), 'KEY DATA');
});

test('a CA file that cannot be read fails applyToHTTPSOptions naming cluster and file', async () => {
  const dir = tempDir();
  const kc = Kubeconfig.fromFiles([write(join(dir, 'config'), config({ server: 'https://h', 'certificate-authority': 'nope.crt' }, { token: 't' }))]);
  await assert.rejects(apply(kc), /cluster "c" certificate-authority: cannot read .*nope\.crt/);
});

test('a tokenFile is read again on each use, so a rotated token is picked up; it wins over token', async () => {
  const dir = tempDir();
  write(join(dir, 'token'), 'first\n');
  const kc = Kubeconfig.fromFiles([write(join(dir, 'config'), config({ server: 'https://h' }, { tokenFile: 'token', token: 'static' }))]);
  assert.equal(headersOf(await apply(kc)).Authorization, 'Bearer first');
  write(join(dir, 'token'), 'second');
  assert.equal(headersOf(await apply(kc)).Authorization, 'Bearer second');
  rmSync(join(dir, 'token'));
  assert.equal(headersOf(await apply(kc)).Authorization, 'Bearer second', 'a token file gone missing keeps its last good value');
});

test('basic auth sets auth; `as` impersonates a user; impersonating groups is refused', async () => {
  const dir = tempDir();
  const kc = Kubeconfig.fromFiles([write(join(dir, 'config'), config({ server: 'https://h' }, { username: 'admin', password: 'secret', as: 'jane' }))]);
  const opts = await apply(kc);
  assert.equal(opts.auth, 'admin:secret');
  assert.deepEqual(opts.headers, { 'Impersonate-User': 'jane' });

  const groups = write(join(dir, 'groups'), config({ server: 'https://h' }, { token: 't', as: 'jane', 'as-groups': ['devs'] }));
  assert.throws(() => Kubeconfig.fromFiles([groups]), /groups: users\[0\]\.user\.as-groups: impersonating groups is not supported/);
});

test('basic auth together with a token is refused, as client-go does', () => {
  const dir = tempDir();
  const file = write(join(dir, 'config'), config({ server: 'https://h' }, { username: 'a', password: 'b', token: 't' }));
  assert.throws(() => Kubeconfig.fromFiles([file]), /user "u": both basic auth \(username\/password\) and a token are set/);
});

test('a user with no credentials, or a context without a user, sends none', async () => {
  const dir = tempDir();
  const file = write(join(dir, 'config'), {
    clusters: [{ name: 'c', cluster: { server: 'http://h:8080' } }],
    contexts: [{ name: 'x', context: { cluster: 'c' } }],
    'current-context': 'x',
  });
  assert.deepEqual(await apply(Kubeconfig.fromFiles([file])), {});
});

test('the requests KubeHttp sends carry the token, the basic auth and the impersonation header', async () => {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const dir = tempDir();
    for (const user of [{ token: 'tok', as: 'jane' }, { username: 'admin', password: 'secret' }]) {
      const http = new KubeHttp(Kubeconfig.fromFiles([write(join(dir, 'config'), config({ server: `http://127.0.0.1:${port}` }, user))]));
      await http.request('GET', '/api');
      http.destroy();
    }
    assert.equal(seen[0]?.authorization, 'Bearer tok');
    assert.equal(seen[0]?.['impersonate-user'], 'jane');
    assert.equal(seen[1]?.authorization, `Basic ${b64('admin:secret')}`);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('$KUBECONFIG files merge first-wins per name and for current-context; missing ones are skipped; paths stay relative to their own file', async () => {
  const dir = tempDir();
  mkdirSync(join(dir, 'one'));
  mkdirSync(join(dir, 'two'));
  write(join(dir, 'two', 'ca.crt'), 'CA OF TWO');
  const one = write(join(dir, 'one', 'config'), {
    clusters: [{ name: 'shared', cluster: { server: 'https://from-one' } }],
    users: [{ name: 'u', user: { token: 'from-one' } }],
    contexts: [{ name: 'first', context: { cluster: 'shared', user: 'u' } }],
  });
  const two = write(join(dir, 'two', 'config'), {
    clusters: [
      { name: 'shared', cluster: { server: 'https://from-two' } },
      { name: 'own', cluster: { server: 'https://own', 'certificate-authority': 'ca.crt' } },
    ],
    users: [{ name: 'u', user: { token: 'from-two' } }],
    contexts: [
      { name: 'first', context: { cluster: 'own', user: 'u' } },
      { name: 'second', context: { cluster: 'own', user: 'u' } },
    ],
    'current-context': 'second',
  });
  const three = write(join(dir, 'three'), { 'current-context': 'first' });
  const env = { KUBECONFIG: [join(dir, 'missing'), one, '', two, three].join(delimiter) };
  const kc = Kubeconfig.fromDefault({ env, homeDir: dir });
  assert.equal(kc.getCurrentCluster()?.server, 'https://own', 'current-context from the first file that sets one');
  const opts = await apply(kc);
  assert.equal(headersOf(opts).Authorization, 'Bearer from-one', 'user "u" from the first file naming it');
  assert.equal(String(opts.ca), 'CA OF TWO', 'a relative CA path resolves against the file that holds it');
  assert.equal(Kubeconfig.fromDefault({ env, homeDir: dir, context: 'first' }).getCurrentCluster()?.server, 'https://from-one');

  assert.throws(() => Kubeconfig.fromDefault({ env: { KUBECONFIG: join(dir, 'missing') }, homeDir: dir }), /none of the files \$KUBECONFIG lists exists/);
});

test('without $KUBECONFIG: ~/.kube/config, then the in-cluster service account, else a clear error', () => {
  const home = tempDir();
  const sa = tempDir();
  write(join(sa, 'token'), 'sa-token');
  const inClusterEnv = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
  assert.throws(() => Kubeconfig.fromDefault({ env: {}, homeDir: home }), /no kubeconfig: pass --kubeconfig, set \$KUBECONFIG/);
  assert.equal(Kubeconfig.fromDefault({ env: inClusterEnv, homeDir: home, serviceAccountDir: sa }).getCurrentCluster()?.server, 'https://10.0.0.1:443');
  mkdirSync(join(home, '.kube'));
  write(join(home, '.kube', 'config'), config({ server: 'https://home' }, { token: 't' }));
  const kc = Kubeconfig.fromDefault({ env: inClusterEnv, homeDir: home, serviceAccountDir: sa });
  assert.equal(kc.getCurrentCluster()?.server, 'https://home');
  assert.equal(Kubeconfig.fromDefault({ env: { HOME: home } }).getCurrentCluster()?.server, 'https://home', '$HOME locates ~/.kube/config');
});

test('in-cluster: server from the service env, the mounted CA, and a token file read again so rotation is seen', async () => {
  const sa = tempDir();
  write(join(sa, 'token'), 'one');
  write(join(sa, 'ca.crt'), 'CLUSTER CA');
  const kc = Kubeconfig.inCluster({ env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }, serviceAccountDir: sa });
  assert.deepEqual(kc.getCurrentCluster(), { name: 'in-cluster', server: 'https://[fd00::1]:6443', skipTLSVerify: false });
  const first = await apply(kc);
  assert.equal(String(first.ca), 'CLUSTER CA');
  assert.equal(headersOf(first).Authorization, 'Bearer one');
  write(join(sa, 'token'), 'two\n');
  assert.equal(headersOf(await apply(kc)).Authorization, 'Bearer two');

  assert.throws(() => Kubeconfig.inCluster({ env: {}, serviceAccountDir: sa }), /not in a cluster: KUBERNETES_SERVICE_HOST/);
  assert.throws(() => Kubeconfig.inCluster({ env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '443' }, serviceAccountDir: tempDir() }), /cannot read the service account token/);
});

test('shape errors name the file and the field', () => {
  const dir = tempDir();
  const cases: [object | string, RegExp][] = [
    [config({ server: 'https://h', 'insecure-skip-tls-verify': 'yes' }), /clusters\[0\]\.cluster\.insecure-skip-tls-verify: /],
    [config({ server: 'https://h' }, { exec: { apiVersion: 'client.authentication.k8s.io/v1', args: [] } }), /users\[0\]\.user\.exec\.command: /],
    [config({ server: 'https://h' }, { exec: { apiVersion: 'client.authentication.k8s.io/v1alpha1', command: 'x' } }), /users\[0\]\.user\.exec\.apiVersion: must be one of client\.authentication\.k8s\.io\/v1, /],
    [{ contexts: [{ name: 'x' }] }, /contexts\[0\]\.context: /],
    ['clusters: [unclosed', /not valid YAML/],
  ];
  for (const [i, [content, error]] of cases.entries()) {
    const file = write(join(dir, `config-${i}`), content);
    assert.throws(
      () => Kubeconfig.fromFiles([file]),
      (err: Error) => err.message.startsWith(`kubeconfig ${file}: `) && error.test(err.message),
      `expected ${String(error)}`,
    );
  }
});

test('a current context naming what is not defined is an error; no current context leaves no current cluster', () => {
  const dir = tempDir();
  const base = { clusters: [{ name: 'c', cluster: { server: 'https://h' } }], users: [{ name: 'u', user: { token: 't' } }] };
  const missingContext = write(join(dir, 'a'), { ...base, 'current-context': 'nope' });
  assert.throws(() => Kubeconfig.fromFiles([missingContext]), /context "nope" is not defined/);
  const missingCluster = write(join(dir, 'b'), { ...base, contexts: [{ name: 'x', context: { cluster: 'gone', user: 'u' } }], 'current-context': 'x' });
  assert.throws(() => Kubeconfig.fromFiles([missingCluster]), /context "x" names cluster "gone", which is not defined/);
  const missingUser = write(join(dir, 'c'), { ...base, contexts: [{ name: 'x', context: { cluster: 'c', user: 'gone' } }], 'current-context': 'x' });
  assert.throws(() => Kubeconfig.fromFiles([missingUser]), /context "x" names user "gone", which is not defined/);
  const badServer = write(join(dir, 'd'), config({ server: 'not a url' }));
  assert.throws(() => Kubeconfig.fromFiles([badServer]), /cluster "c": server "not a url" is not a URL/);

  const none = write(join(dir, 'e'), base);
  assert.equal(Kubeconfig.fromFiles([none]).getCurrentCluster(), null);
  assert.throws(() => loadKubeConfig(none), new RegExp(`^Error: no current cluster in the kubeconfig ${none}$`));
});

/** A credential plugin: logs each run (args, env, KUBERNETES_EXEC_INFO), prints PLUGIN_OUTPUT with {n} as the run number. */
function plugin(dir: string): { script: string; runs: () => { args: string[]; info: unknown; extra: string }[] } {
  const log = join(dir, 'runs.log');
  const script = write(
    join(dir, 'plugin.mjs'),
    `import { appendFileSync, readFileSync } from 'node:fs';
const log = ${JSON.stringify(log)};
appendFileSync(log, JSON.stringify({ args: process.argv.slice(2), info: JSON.parse(process.env.KUBERNETES_EXEC_INFO), extra: process.env.PLUGIN_EXTRA }) + '\\n');
const n = readFileSync(log, 'utf8').trim().split('\\n').length;
if (process.env.PLUGIN_STDERR) process.stderr.write(process.env.PLUGIN_STDERR);
process.stdout.write((process.env.PLUGIN_OUTPUT ?? '').replaceAll('{n}', String(n)));
process.exitCode = Number(process.env.PLUGIN_EXIT ?? 0);
`,
  );
  return {
    script,
    runs: () => {
      try {
        return readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { args: string[]; info: unknown; extra: string });
      } catch {
        return [];
      }
    },
  };
}

function execUser(script: string, apiVersion: string, env: Record<string, string>, extra: object = {}): object {
  return {
    exec: {
      apiVersion,
      command: process.execPath,
      args: [script, '--flag'],
      env: Object.entries(env).map(([name, value]) => ({ name, value })),
      interactiveMode: 'Never',
      ...extra,
    },
  };
}

test('exec v1: the plugin runs with args, env and KUBERNETES_EXEC_INFO; its token is cached until expirationTimestamp, then fetched again', async () => {
  const dir = tempDir();
  const { script, runs } = plugin(dir);
  const v1 = 'client.authentication.k8s.io/v1';
  const output = JSON.stringify({ apiVersion: v1, kind: 'ExecCredential', status: { token: 'token-{n}', expirationTimestamp: '2030-01-01T00:10:00Z' } });
  let now = Date.parse('2030-01-01T00:00:00Z');
  const cluster = { server: 'https://h', 'certificate-authority-data': b64('CA'), extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { audience: 'x' } }] };
  const file = write(join(dir, 'config'), config(cluster, execUser(script, v1, { PLUGIN_OUTPUT: output, PLUGIN_EXTRA: 'from-kubeconfig' }, { provideClusterInfo: true })));
  const kc = Kubeconfig.fromFiles([file], { now: () => now });

  const [a, b] = await Promise.all([apply(kc), apply(kc)]);
  assert.equal(headersOf(a).Authorization, 'Bearer token-1');
  assert.equal(headersOf(b).Authorization, 'Bearer token-1', 'concurrent callers share one run');
  assert.equal(runs().length, 1);
  assert.deepEqual(runs()[0], {
    args: ['--flag'],
    extra: 'from-kubeconfig',
    info: {
      apiVersion: v1,
      kind: 'ExecCredential',
      spec: { interactive: false, cluster: { server: 'https://h', 'certificate-authority-data': b64('CA'), config: { audience: 'x' } } },
    },
  });

  now += 5 * 60_000;
  assert.equal(headersOf(await apply(kc)).Authorization, 'Bearer token-1', 'still valid: cached');
  assert.equal(runs().length, 1);
  now += 5 * 60_000;
  assert.equal(headersOf(await apply(kc)).Authorization, 'Bearer token-2', 'expired: the plugin runs again');
  assert.equal(runs().length, 2);
});

test('exec v1beta1: a client certificate and key; a credential without expiry is fetched on each use', async () => {
  const dir = tempDir();
  const { script, runs } = plugin(dir);
  const v1beta1 = 'client.authentication.k8s.io/v1beta1';
  const output = JSON.stringify({ apiVersion: v1beta1, kind: 'ExecCredential', status: { clientCertificateData: 'CERT {n}', clientKeyData: 'KEY {n}' } });
  const kc = Kubeconfig.fromFiles([write(join(dir, 'config'), config({ server: 'https://h' }, execUser(script, v1beta1, { PLUGIN_OUTPUT: output })))]);
  const first = await apply(kc);
  assert.equal(first.cert, 'CERT 1');
  assert.equal(first.key, 'KEY 1');
  assert.equal(first.headers, undefined);
  assert.deepEqual(runs()[0]?.info, { apiVersion: v1beta1, kind: 'ExecCredential', spec: { interactive: false } }, 'no cluster info unless asked for');
  assert.equal((await apply(kc)).cert, 'CERT 2');
});

test('a failing exec plugin gives an error naming the user and the command', async () => {
  const dir = tempDir();
  const { script } = plugin(dir);
  const v1 = 'client.authentication.k8s.io/v1';
  const load = (env: Record<string, string>, extra: object = {}): Kubeconfig =>
    Kubeconfig.fromFiles([write(join(dir, `config-${Math.random()}`), config({ server: 'https://h' }, execUser(script, v1, env, extra)))]);
  const cmd = process.execPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  await assert.rejects(apply(load({ PLUGIN_EXIT: '3', PLUGIN_STDERR: 'login expired' })), new RegExp(`user "u": exec plugin "${cmd}" exited with code 3: login expired`));
  await assert.rejects(apply(load({ PLUGIN_OUTPUT: 'not json' })), /exec plugin ".*" printed no JSON ExecCredential/);
  const wrongVersion = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { token: 't' } });
  await assert.rejects(apply(load({ PLUGIN_OUTPUT: wrongVersion })), /is configured for client\.authentication\.k8s\.io\/v1 but answered with .*v1beta1/);
  const empty = JSON.stringify({ apiVersion: v1, kind: 'ExecCredential', status: {} });
  await assert.rejects(apply(load({ PLUGIN_OUTPUT: empty })), /returned neither a token nor a client certificate and key/);

  const missing = Kubeconfig.fromFiles([
    write(join(dir, 'missing'), config({ server: 'https://h' }, { exec: { apiVersion: v1, command: 'no-such-plugin-xyz', installHint: 'install it from example.com' } })),
  ]);
  await assert.rejects(apply(missing), /user "u": exec plugin "no-such-plugin-xyz" could not be run: .*ENOENT\ninstall it from example\.com/);

  const slow = Kubeconfig.fromFiles(
    [write(join(dir, 'slow'), config({ server: 'https://h' }, { exec: { apiVersion: v1, command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60000)'] } }))],
    { execTimeoutMs: 300 },
  );
  await assert.rejects(apply(slow), /gave no answer within 300 ms and was killed/);
});

test('an exec command given as a relative path is relative to the kubeconfig file; a bare name is left to PATH', async () => {
  const dir = tempDir();
  mkdirSync(join(dir, 'bin'));
  const v1 = 'client.authentication.k8s.io/v1';
  const file = write(join(dir, 'config'), config({ server: 'https://h' }, { exec: { apiVersion: v1, command: './bin/absent-plugin' } }));
  await assert.rejects(apply(Kubeconfig.fromFiles([file])), new RegExp(`exec plugin "${join(dir, 'bin', 'absent-plugin')}" could not be run`));
});

test('an auth-provider user goes through client-node, imported only when such a user is met', async () => {
  const dir = tempDir();
  let imports = 0;
  const importClientNode = (): Promise<typeof ClientNode> => {
    imports++;
    return import('@kubernetes/client-node');
  };
  const file = write(join(dir, 'config'), {
    clusters: [{ name: 'c', cluster: { server: 'https://h', 'certificate-authority-data': b64('OUR CA') } }],
    users: [
      { name: 'plain', user: { token: 'plain-token' } },
      { name: 'google', user: { 'auth-provider': { name: 'gcp', config: { 'access-token': 'gcp-token' } } } },
    ],
    contexts: [
      { name: 'plain', context: { cluster: 'c', user: 'plain' } },
      { name: 'google', context: { cluster: 'c', user: 'google' } },
    ],
    'current-context': 'plain',
  });
  assert.equal(headersOf(await apply(Kubeconfig.fromFiles([file], { importClientNode }))).Authorization, 'Bearer plain-token');
  assert.equal(imports, 0);

  const google = Kubeconfig.fromFiles([file], { importClientNode, context: 'google' });
  assert.equal(imports, 0, 'loading alone imports nothing');
  const opts = await apply(google);
  assert.equal(headersOf(opts).Authorization, 'Bearer gcp-token');
  assert.equal(String(opts.ca), 'OUR CA', 'TLS settings stay ours');
  assert.equal(opts.agent, undefined, "client-node's agent is not taken");
  await apply(google);
  assert.equal(imports, 1, 'one client-node KubeConfig, kept for the token refreshes the provider does');
});
