// The CLI as kubectl users drive it, against the sandbox with the real hub controller, spoke agents and OCM
// work agents: -n / -A / --context, -o json|yaml (a v1 List) and -o name, `wait --for` (success, and a timeout
// that names the clusters not there), `status gateway/NS/NAME`, the kubectl plugin run by the real kubectl,
// and `-w` printing a change. Each CLI run is a child process of the real binary.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { binDir, repoRoot } from '../../testkit/sandbox/layout.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { readSourceRef } from '../../src/core/works/manifestwork.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubStatus, writeSpokeStatus } from '../../testkit/status.ts';
import { ourWorks } from '../../testkit/works.ts';
import { hubHttp, releaseSpokes, spokeClients, startHub, startSpoke, testControllerName, uniqueName, type RunningHub, type RunningSpoke } from '../../testkit/hub.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';

const SPOKE_CONFIG = { namespace: 'policy-sync-system', name: uniqueName('spoke-config') };
const controllerName = testControllerName('cli');
const ns = uniqueName('cli');
const ns2 = uniqueName('cli2');
const className = uniqueName('class');
const ENFORCED = 'AuthPolicy has been successfully enforced';
/** Enforced on both spokes (the test writes the spoke controllers' verdict). */
const AUTH = 'auth';
/** Synced to both spokes, where no controller ever writes a status: never enforced. */
const SILENT = 'silent';
/** In the second namespace, enforced nowhere either. */
const OTHER = 'other';

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub;
let agents: RunningSpoke[] = [];

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  for (const spoke of spokes.values()) {
    await createNamespace(spoke, SPOKE_CONFIG.namespace);
    await createNamespace(spoke, ns);
  }
  await createNamespace(hub, ns);
  await createNamespace(hub, ns2);
  await apply(hub, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(hub, gateway(ns, 'gw', className, 'all-spokes'));
  await apply(hub, gateway(ns2, 'gw', className)); // no Placement: its policy is on no cluster
  await apply(hub, placementDecision(ns, 'all-spokes', sandbox.spokes.map((s) => s.name)));
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG });
  agents = await Promise.all(sandbox.spokes.map((s) => startSpoke(sandbox.kubeConfig(s.name), s.name, SPOKE_CONFIG)));
});

after(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  for (const [n, name] of [[ns, AUTH], [ns, SILENT], [ns2, OTHER]] as const) await remove(hub, authPolicy(n, name, 'gw'));
  await eventually(async () => (await ourWorks(hub, { controllerName })).every((w) => readSourceRef(w)?.namespace !== ns), { what: 'the works to go' }).catch(() => undefined);
  await controller.stop();
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }));
  await removeNamespace(hub, ns);
  await removeNamespace(hub, ns2);
  await releaseSpokes(spokes, ns);
  hub.destroy();
});

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: repoRoot, timeout: 90_000, env: { ...process.env, KUBECONFIG: '', ...env } }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
    });
  });
}

const target = (): string[] => ['--kubeconfig', sandbox.hub.kubeconfig, '--controller-name', controllerName];

/** The real CLI against the sandbox hub with this test's controller name. */
function cli(...args: string[]): Promise<CliResult> {
  return run(process.execPath, [join(repoRoot, 'bin', 'policy-sync.js'), ...args, ...target()]);
}

async function ok(...args: string[]): Promise<string> {
  const r = await cli(...args);
  assert.equal(r.code, 0, `policy-sync ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const agentLogs = (): string => workAgentLogs(sandbox, 10);

test('setup: auth enforced on both spokes, silent synced without a verdict, other placed nowhere', async () => {
  await apply(hub, authPolicy(ns, AUTH, 'gw'));
  await apply(hub, authPolicy(ns, SILENT, 'gw'));
  await apply(hub, authPolicy(ns2, OTHER, 'gw'));
  for (const [cluster, spoke] of spokes) {
    await eventually(async () => get(spoke, AUTH_POLICIES, ns, AUTH), { what: `the copy on ${cluster}`, context: agentLogs });
    await writeSpokeStatus(spoke, AUTH_POLICIES, ns, AUTH, ENFORCED);
  }
  await eventually(async () => (await hubStatus(hub, AUTH_POLICIES, ns, AUTH))?.summary.enforced === 2, { what: 'auth enforced on both', timeoutMs: 60_000, context: agentLogs });
  await eventually(async () => (await hubStatus(hub, AUTH_POLICIES, ns, SILENT))?.summary.applied === 2, { what: 'silent applied on both', timeoutMs: 60_000, context: agentLogs });
  await eventually(async () => (await hubStatus(hub, AUTH_POLICIES, ns2, OTHER))?.problems?.[0]?.reason === 'NoClusters', { what: 'other on no cluster' });
});

/** `lines` as columns split on runs of 2+ spaces (kubectl's padding is 3). */
function table(text: string): string[][] {
  return text.trimEnd().split('\n').map((l) => l.split(/ {2,}/));
}

test('-n: the namespace\'s policies; -A: every namespace, with a NAMESPACE column', async () => {
  const inNs = table(await ok('status', '-n', ns));
  assert.deepEqual(inNs[0], ['NAME', 'ENFORCED', 'OVERRIDDEN', 'PENDING', 'FAILED', 'MESSAGE']);
  assert.deepEqual(inNs.slice(1).map((r) => r.slice(0, 2)), [
    [`authpolicy.kuadrant.io/${AUTH}`, '2/2'],
    [`authpolicy.kuadrant.io/${SILENT}`, '0/2'],
  ]);
  const all = table(await ok('status', '-A'));
  assert.deepEqual(all[0]!.slice(0, 2), ['NAMESPACE', 'NAME']);
  const mine = all.slice(1).filter((r) => r[0] === ns || r[0] === ns2);
  assert.deepEqual(mine.map((r) => r.slice(0, 3)), [
    [ns, `authpolicy.kuadrant.io/${AUTH}`, '2/2'],
    [ns, `authpolicy.kuadrant.io/${SILENT}`, '0/2'],
    [ns2, `authpolicy.kuadrant.io/${OTHER}`, '0/0'],
  ]);
  assert.match(mine[2]!.at(-1)!, /^NoClusters: the targeted Gateways are placed on no cluster/);
  // The kubeconfig's context has no namespace: `default`, as kubectl, where there is none of ours.
  const none = await cli('status');
  assert.deepEqual([none.code, none.stdout, none.stderr], [0, '', 'No synced policies found in default namespace.\n']);
});

test('-o json and -o yaml: a v1 List of the policies with their sync status; -o name: kind.group/name', async () => {
  const list = JSON.parse(await ok('status', '-n', ns, '-o', 'json')) as { apiVersion: string; kind: string; items: { apiVersion: string; kind: string; metadata: { name: string; namespace: string }; syncStatus: { summary: { enforced: number } } }[] };
  assert.equal(list.apiVersion, 'v1');
  assert.equal(list.kind, 'List');
  assert.deepEqual(list.items.map((i) => [i.apiVersion, i.kind, i.metadata.namespace, i.metadata.name, i.syncStatus.summary.enforced]), [
    ['kuadrant.io/v1', 'AuthPolicy', ns, AUTH, 2],
    ['kuadrant.io/v1', 'AuthPolicy', ns, SILENT, 0],
  ]);
  assert.deepEqual((list.items[0]!.syncStatus as { clusters?: unknown }).clusters, (await hubStatus(hub, AUTH_POLICIES, ns, AUTH))?.clusters);
  const yaml = await ok('status', '-n', ns, '-o', 'yaml');
  assert.deepEqual(parse(yaml), list);
  assert.match(yaml, /^apiVersion: v1\nitems:\n/);
  assert.equal(await ok('status', '-n', ns, '-o', 'name'), `authpolicy.kuadrant.io/${AUTH}\nauthpolicy.kuadrant.io/${SILENT}\n`);
  // One policy named: the object itself, not a List.
  const one = parse(await ok('status', `authpolicy/${ns}/${AUTH}`, '-o', 'yaml')) as { kind: string };
  assert.equal(one.kind, 'AuthPolicy');
  assert.equal(stringify(one), stringify(list.items[0]));
});

test('wait --for=enforced: exit 0 once enforced on every cluster; --for=synced: the current revision applied', async () => {
  const enforced = await cli('wait', `authpolicy/${ns}/${AUTH}`, '--for=enforced', '--timeout=60s');
  assert.deepEqual(enforced, { code: 0, stdout: `authpolicy.kuadrant.io/${ns}/${AUTH} enforced on spoke-1, spoke-2\n`, stderr: '' });
  // The name resolved in -n's namespace, several policies at once.
  const synced = await cli('wait', `authpolicies/${AUTH}`, `authpolicies/${SILENT}`, '-n', ns, '--for', 'synced', '--timeout', '60s');
  assert.equal(synced.code, 0, synced.stderr);
  assert.equal(synced.stdout, `authpolicy.kuadrant.io/${ns}/${AUTH} synced on spoke-1, spoke-2\nauthpolicy.kuadrant.io/${ns}/${SILENT} synced on spoke-1, spoke-2\n`);
});

test('wait: an edit is not synced until the new revision is applied; it then is', async () => {
  await apply(hub, authPolicy(ns, SILENT, 'gw', { rules: { authentication: { 'api-key': { apiKey: { selector: {} } } } } }));
  const r = await cli('wait', `authpolicy/${ns}/${SILENT}`, '--for=synced', '--timeout=60s');
  assert.equal(r.code, 0, r.stderr);
  for (const spoke of spokes.values()) assert.ok((await get(spoke, AUTH_POLICIES, ns, SILENT))?.spec?.rules, 'the edit is on the spoke once wait says synced');
});

test('wait timeout: exit 1, naming each cluster not there with its state and reason', async () => {
  const started = Date.now();
  const r = await cli('wait', `authpolicy/${ns}/${SILENT}`, `authpolicy/${ns}/${AUTH}`, '--for=enforced', '--timeout=3s');
  assert.ok(Date.now() - started >= 3000);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines[0], 'error: timed out after 3s waiting for enforced:');
  assert.equal(lines.length, 3, r.stderr);
  for (const [i, cluster] of ['spoke-1', 'spoke-2'].entries()) {
    assert.match(lines[i + 1]!, new RegExp(`^  authpolicy\\.kuadrant\\.io/${ns}/${SILENT}: not enforced on ${cluster}: (Pending|Failed) \\w+`));
  }
  // A policy on no cluster is never there; a missing one and a bad --for are usage errors.
  const nowhere = await cli('wait', `authpolicy/${ns2}/${OTHER}`, '--for=synced', '--timeout=0s');
  assert.equal(nowhere.code, 1);
  assert.match(nowhere.stderr, new RegExp(`authpolicy\\.kuadrant\\.io/${ns2}/${OTHER}: not synced: NoClusters`));
  const missing = await cli('wait', `authpolicy/${ns}/nope`, '--for=synced');
  assert.deepEqual([missing.code, missing.stderr], [2, `error: AuthPolicy ${ns}/nope not found (authpolicies.kuadrant.io)\n`]);
  assert.equal((await cli('wait', `authpolicy/${ns}/${AUTH}`, '--for=ready')).code, 2);
});

test('status gateway/NS/NAME: every policy on the Gateway, one row per policy per cluster', async () => {
  const rows = table(await ok('status', `gateway/${ns}/gw`));
  assert.deepEqual(rows[0], ['NAME', 'CLUSTER', 'STATE', 'REASON', 'UPTODATE', 'MESSAGE']);
  assert.deepEqual(rows.slice(1, 3), [
    [`authpolicy.kuadrant.io/${AUTH}`, 'spoke-1', 'Enforced', 'Enforced', 'true', ENFORCED],
    [`authpolicy.kuadrant.io/${AUTH}`, 'spoke-2', 'Enforced', 'Enforced', 'true', ENFORCED],
  ]);
  assert.deepEqual(rows.slice(3).map((r) => r.slice(0, 2)), [
    [`authpolicy.kuadrant.io/${SILENT}`, 'spoke-1'],
    [`authpolicy.kuadrant.io/${SILENT}`, 'spoke-2'],
  ]);
  // gateway/NAME takes -n's namespace; the policy on no cluster gets one <none> row.
  assert.deepEqual(table(await ok('status', 'gateway/gw', '-n', ns2)).slice(1).map((r) => r.slice(0, 4)), [[`authpolicy.kuadrant.io/${OTHER}`, '<none>', '-', 'NoClusters']]);
  const missing = await cli('status', `gateway/${ns}/nope`);
  assert.deepEqual([missing.code, missing.stderr], [2, `error: Gateway ${ns}/nope not found\n`]);
});

test('bad input: one error line, exit code 2 (1 when the hub cannot be reached), no stack', async () => {
  for (const args of [['status', 'dnspolicies'], ['status', '-o', 'xml'], ['status', 'authpolicy/a/b/c'], ['explain', 'nope'], ['status', '--bogus']]) {
    const r = await cli(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^error: [^\n]+\n$/, args.join(' '));
  }
  const dir = mkdtempSync(join(tmpdir(), 'cli-kubectl-'));
  const unreachable = join(dir, 'unreachable.kubeconfig');
  writeFileSync(unreachable, readFileSync(sandbox.hub.kubeconfig, 'utf8').replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:1'));
  const r = await run(process.execPath, [join(repoRoot, 'bin', 'policy-sync.js'), 'status', '--kubeconfig', unreachable]);
  assert.deepEqual([r.code, r.stdout], [1, '']);
  assert.match(r.stderr, /^error: cannot reach the hub at https:\/\/127\.0\.0\.1:1\/: TransportError: connect ECONNREFUSED 127\.0\.0\.1:1\n$/);
});

test('--context: the namespace of that kubeconfig context is the default, as with kubectl', async () => {
  const config = parse(readFileSync(sandbox.hub.kubeconfig, 'utf8')) as { contexts: { name: string; context: Record<string, string> }[]; 'current-context': string };
  const current = config.contexts.find((c) => c.name === config['current-context'])!;
  config.contexts.push({ name: 'cli-test', context: { ...current.context, namespace: ns } });
  const file = join(mkdtempSync(join(tmpdir(), 'cli-kubectl-')), 'kubeconfig');
  writeFileSync(file, stringify(config));
  const argv = (...args: string[]): string[] => [join(repoRoot, 'bin', 'policy-sync.js'), ...args, '--kubeconfig', file, '--controller-name', controllerName];
  const withContext = await run(process.execPath, argv('status', '-o', 'name', '--context', 'cli-test'));
  assert.deepEqual(withContext, { code: 0, stdout: `authpolicy.kuadrant.io/${AUTH}\nauthpolicy.kuadrant.io/${SILENT}\n`, stderr: '' });
  const unknown = await run(process.execPath, argv('status', '--context', 'nope'));
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^error: kubeconfig .*: context "nope" is not defined\n$/);
});

test('the kubectl plugin: `kubectl policy-sync status` with the real kubectl, the plugin found on PATH', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-kubectl-plugin-'));
  symlinkSync(join(repoRoot, 'bin', 'kubectl-policy_sync.js'), join(dir, 'kubectl-policy_sync'));
  const env = { PATH: [dir, dirname(process.execPath), process.env.PATH ?? ''].join(':') };
  const plugins = await run(join(binDir, 'kubectl'), ['plugin', 'list'], env);
  assert.match(plugins.stdout, new RegExp(`${dir}/kubectl-policy_sync`));
  const viaKubectl = await run(join(binDir, 'kubectl'), ['policy-sync', 'status', '-n', ns, ...target()], env);
  assert.equal(viaKubectl.code, 0, viaKubectl.stderr);
  assert.equal(viaKubectl.stdout, await ok('status', '-n', ns));
  const help = await run(join(binDir, 'kubectl'), ['policy-sync', '--help'], env);
  assert.match(help.stdout, /^Usage: kubectl policy-sync \[options\] \[command\]/);
});

test('-w: the rows, then a policy\'s rows again when its status changes', async () => {
  const child = spawn(process.execPath, [join(repoRoot, 'bin', 'policy-sync.js'), 'status', `authpolicy/${ns}/${AUTH}`, '-o', 'wide', '-w', ...target()], {
    cwd: repoRoot,
    env: { ...process.env, KUBECONFIG: '' },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  try {
    await eventually(() => Promise.resolve(out.split('\n').length >= 4 || undefined), { what: 'the first rows', timeoutMs: 120_000, context: () => `${out}\n${err}` });
    assert.deepEqual(table(out).map((r) => r.slice(0, 3)), [
      ['NAME', 'CLUSTER', 'STATE'],
      [`authpolicy.kuadrant.io/${AUTH}`, 'spoke-1', 'Enforced'],
      [`authpolicy.kuadrant.io/${AUTH}`, 'spoke-2', 'Enforced'],
    ]);
    await writeSpokeStatus(spokes.get('spoke-1')!, AUTH_POLICIES, ns, AUTH, 'enforced again, in other words');
    await eventually(() => Promise.resolve(out.includes('enforced again, in other words') || undefined), { what: 'the change printed', timeoutMs: 60_000, context: () => `${out}\n${err}` });
    const after = table(out).slice(3);
    assert.ok(after.some((r) => r[1] === 'spoke-1' && r.at(-1) === 'enforced again, in other words'), out);
    assert.ok(after.every((r) => r[0] === `authpolicy.kuadrant.io/${AUTH}`), 'no header again');
  } finally {
    child.kill('SIGTERM');
  }
});
