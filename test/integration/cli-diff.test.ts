// `policy-sync diff` as a person runs it before applying or editing a hub policy, against the sandbox with
// the real hub controller and OCM work agents, under a GatewayClass that rolls out Progressive with spoke-2
// as the canary: a new policy's preview (its waves, every copy against `(no copy)`); once the hub placed it
// wave by wave, an edited file's preview (the canary wave first, the spec diff per cluster); the hub policy
// as it is (nothing to change); bad input; and that diff writes nothing (the hub's audit log). The status
// commands show the rollout the hub reported. Each CLI run is a child process of the real binary.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { stringify } from 'yaml';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { REVISION_ANNOTATION } from '../../src/core/metadatakeys.ts';
import type { PolicyStatus } from '../../src/core/status/policystatus.ts';
import { readSourceRef } from '../../src/core/works/manifestwork.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { mergePatch } from '../../src/kube/writes.ts';
import { AuditCursor, describeWrite } from '../../testkit/audit.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, releaseSpokes, spokeClients, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { hubStatus, writeSpokeStatus } from '../../testkit/status.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';
import { ourWorks } from '../../testkit/works.ts';

const controllerName = testControllerName('diff');
const ns = uniqueName('diff');
const className = uniqueName('class');
/** The label that makes spoke-2 the canary, for this file alone. */
const CANARY_LABEL = `test.policy-sync.io/canary-${ns}`;
const AUTH = 'auth';
const ENFORCED = 'AuthPolicy has been successfully enforced';
/** The hub policy as the CLI names it. */
const POLICY = `authpolicy/${ns}/${AUTH}`;

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub;
let dir: string;

const original = (): KubeObject => authPolicy(ns, AUTH, 'gw');
const edited = (): KubeObject => authPolicy(ns, AUTH, 'gw', { rules: { authorization: { deny: { opa: { rego: 'allow = true' } } } } });

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  dir = mkdtempSync(join(tmpdir(), 'cli-diff-'));
  for (const spoke of spokes.values()) await createNamespace(spoke, ns);
  await createNamespace(hub, ns);
  await apply(
    hub,
    paramsConfigMap(ns, 'params', {
      policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }],
      rolloutStrategy: { type: 'Progressive', progressive: { canary: { matchLabels: { [CANARY_LABEL]: 'true' } }, maxConcurrency: '1' } },
    }),
  );
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(hub, gateway(ns, 'gw', className, 'all-spokes'));
  await apply(hub, placementDecision(ns, 'all-spokes', sandbox.spokes.map((s) => s.name)));
  await mergePatch(hub, RESOURCES.managedClusters, undefined, 'spoke-2', { metadata: { labels: { [CANARY_LABEL]: 'true' } } });
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName });
});

after(async () => {
  await remove(hub, original());
  await eventually(async () => (await ourWorks(hub, { controllerName })).every((w) => readSourceRef(w)?.namespace !== ns), { what: 'the works to go' }).catch(() => undefined);
  await controller.stop();
  await mergePatch(hub, RESOURCES.managedClusters, undefined, 'spoke-2', { metadata: { labels: { [CANARY_LABEL]: null } } }).catch(() => undefined);
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }));
  await removeNamespace(hub, ns);
  await releaseSpokes(spokes, ns);
  hub.destroy();
});

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(...args: string[]): Promise<CliResult> {
  // diff decides as the hub controller does: with the flags it runs with (the tests' hub trusts decision labels).
  const hubFlags = args[0] === 'diff' ? ['--trust-decision-labels'] : [];
  const argv = [join(repoRoot, 'bin', 'policy-sync.js'), ...args, '--kubeconfig', sandbox.hub.kubeconfig, '--controller-name', controllerName, ...hubFlags];
  return new Promise((resolve) => {
    execFile(process.execPath, argv, { cwd: repoRoot, timeout: 60_000, env: { ...process.env, KUBECONFIG: '' } }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
    });
  });
}

async function ok(...args: string[]): Promise<string> {
  const r = await cli(...args);
  assert.equal(r.code, 0, `policy-sync ${args.join(' ')} failed: ${r.stderr}`);
  assert.equal(r.stderr, '');
  return r.stdout;
}

function file(name: string, object: KubeObject | string): string {
  const path = join(dir, name);
  writeFileSync(path, typeof object === 'string' ? object : stringify(object));
  return path;
}

const cells = (text: string): string[][] => text.trimEnd().split('\n').map((l) => l.split(/ {2,}/));

/** The table of a diff's text: from the CLUSTER header to the blank line after it. */
function table(text: string): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith('CLUSTER '));
  const end = lines.indexOf('', start);
  return lines.slice(start, end).map((l) => l.split(/ {2,}/));
}

/** Every write to the hub since `cursor` made by the CLI (its user agent), described. */
function cliWrites(cursor: AuditCursor): string[] {
  return cursor
    .since()
    .filter((w) => w.userAgent.startsWith('policy-sync-cli'))
    .map(describeWrite);
}

/** The resourceVersions of the policy and of every work of ours, to compare before and after. */
async function versions(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const policy = await get(hub, AUTH_POLICIES, ns, AUTH);
  if (policy) out.policy = policy.metadata.resourceVersion ?? '';
  for (const w of await ourWorks(hub, { controllerName })) out[`${w.metadata.namespace}/${w.metadata.name}`] = w.metadata.resourceVersion ?? '';
  return out;
}

test('a new policy: its clusters in their waves, the canary first, each copy against (no copy); nothing written', async () => {
  const cursor = AuditCursor.at(sandbox, 'hub');
  const path = file('new.yaml', original());
  const text = await ok('diff', '-f', path);
  const lines = text.split('\n');
  assert.equal(lines[0], `AuthPolicy ${ns}/${AUTH}: new policy, revision 1`);
  assert.ok(lines.includes('Waves:     1: spoke-2; 2: spoke-1'), text);
  assert.ok(lines.includes('Rollout:   Progressing wave 1/2'), text);
  assert.deepEqual(table(text), [
    ['CLUSTER', 'WAVE', 'ACTION', 'RUNS', 'MESSAGE'],
    ['spoke-2', '1/2', 'write', '-', 'gets revision 1 now (wave 1 is under way)'],
    ['spoke-1', '2/2', 'wait', '-', 'no copy until its wave'],
  ]);
  for (const [cluster, when] of [['spoke-2', 'written now'], ['spoke-1', 'at wave 2']] as const) {
    const header = `--- ${cluster}/AuthPolicy/${ns}/${AUTH}\t(no copy)\n+++ ${cluster}/AuthPolicy/${ns}/${AUTH}\t(revision 1, ${when})\n@@ -0,0 +1,`;
    assert.ok(text.includes(header), `${cluster}'s diff:\n${text}`);
  }
  assert.ok(text.indexOf('--- spoke-2/') < text.indexOf('--- spoke-1/'), 'the canary first');
  assert.ok(text.includes(`\n+    kuadrant.io/policy-synced: ${ns}/${AUTH}\n`), text);
  assert.ok(text.includes('\n+    policysync.kuadrant.io/revision: "1"\n'), text);

  const json = JSON.parse(await ok('diff', '-f', path, '-o', 'json')) as { items: { change: string; revision: number; waves: string[][]; clusters: { cluster: string; action: string; wave: number; diff: string }[] }[] };
  const [item] = json.items;
  assert.deepEqual([item!.change, item!.revision, item!.waves], ['new', 1, [['spoke-2'], ['spoke-1']]]);
  assert.deepEqual(item!.clusters.map((c) => [c.cluster, c.action, c.wave]), [['spoke-2', 'write', 1], ['spoke-1', 'wait', 2]]);
  assert.match(item!.clusters[0]!.diff, /\t\(no copy\)\n/);

  assert.equal(await get(hub, AUTH_POLICIES, ns, AUTH), undefined, 'diff creates nothing');
  assert.deepEqual(await ourWorks(hub, { controllerName }), []);
  assert.deepEqual(cliWrites(cursor), []);
});

/** Enforced on `cluster`'s copy once it holds `revision`, as the spoke's policy controller would write it. */
async function enforceOn(cluster: string, revision: number): Promise<void> {
  const spoke = spokes.get(cluster)!;
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, AUTH))?.metadata.annotations?.[REVISION_ANNOTATION] === String(revision), {
    what: `revision ${revision} on ${cluster}`,
    timeoutMs: 60_000,
    context: () => workAgentLogs(sandbox, 10),
  });
  await writeSpokeStatus(spoke, AUTH_POLICIES, ns, AUTH, ENFORCED);
}

async function rollout(): Promise<PolicyStatus['rollout']> {
  return (await hubStatus(hub, AUTH_POLICIES, ns, AUTH))?.rollout;
}

test('the hub places it wave by wave; status and explain show the rollout and each cluster\'s revision', async () => {
  await apply(hub, original());
  await enforceOn('spoke-2', 1);
  await enforceOn('spoke-1', 1);
  let last: PolicyStatus['rollout'];
  await eventually(async () => ((last = await rollout())?.state === 'Complete' ? true : undefined), {
    what: 'the rollout to complete',
    timeoutMs: 60_000,
    context: () => `last: ${JSON.stringify(last)}`,
  });
  const status = cells(await ok('status', '-n', ns));
  assert.deepEqual(status[0], ['NAME', 'ENFORCED', 'OVERRIDDEN', 'PENDING', 'FAILED', 'ROLLOUT', 'MESSAGE']);
  assert.deepEqual(status[1], [`authpolicy.kuadrant.io/${AUTH}`, '2/2', '0', '0', '0', 'Complete']);
  const wide = cells(await ok('status', '-n', ns, '-o', 'wide'));
  assert.deepEqual(wide.map((r) => r.slice(0, 7)), [
    ['NAME', 'CLUSTER', 'STATE', 'REASON', 'UPTODATE', 'REVISION', 'ROLLOUT'],
    [`authpolicy.kuadrant.io/${AUTH}`, 'spoke-1', 'Enforced', 'Enforced', 'true', '1', 'Succeeded'],
    [`authpolicy.kuadrant.io/${AUTH}`, 'spoke-2', 'Enforced', 'Enforced', 'true', '1', 'Succeeded'],
  ]);
  const explain = (await ok('explain', POLICY)).split('\n');
  assert.ok(explain.includes('Rollout:    Progressive, revision 1: Complete'), explain.join('\n'));
  assert.equal(explain.filter((l) => l === '    revision:       1').length, 2, explain.join('\n'));
});

test('an edited file: revision 2, the canary wave written first, the spec diff on every cluster; nothing written', async () => {
  const before = await versions();
  const cursor = AuditCursor.at(sandbox, 'hub');
  const path = file('edited.yaml', edited());
  const text = await ok('diff', POLICY, '-f', path);
  assert.equal(text.split('\n')[0], `AuthPolicy ${ns}/${AUTH}: revision 2 (its spec changes; the hub's is revision 1)`);
  assert.deepEqual(table(text), [
    ['CLUSTER', 'WAVE', 'ACTION', 'RUNS', 'MESSAGE'],
    ['spoke-2', '1/2', 'write', '1', 'gets revision 2 now (wave 1 is under way)'],
    ['spoke-1', '2/2', 'keep', '1', 'runs revision 1 until its wave'],
  ]);
  for (const [cluster, when] of [['spoke-2', 'written now'], ['spoke-1', 'at wave 2']] as const) {
    const from = text.indexOf(`--- ${cluster}/AuthPolicy/${ns}/${AUTH}\t(revision 1, running now)\n+++ ${cluster}/AuthPolicy/${ns}/${AUTH}\t(revision 2, ${when})\n`);
    assert.ok(from >= 0, `${cluster}'s diff:\n${text}`);
    const block = text.slice(from, text.indexOf('\n--- ', from + 1) < 0 ? undefined : text.indexOf('\n--- ', from + 1));
    assert.ok(block.includes('\n-    policysync.kuadrant.io/revision: "1"\n+    policysync.kuadrant.io/revision: "2"\n'), block);
    assert.ok(block.includes('\n-          rego: allow = false\n+          rego: allow = true\n'), block);
  }
  assert.ok(text.indexOf('--- spoke-2/') < text.indexOf('--- spoke-1/'), 'the canary first');
  // The file alone names the policy just as well.
  assert.equal(await ok('diff', '-f', path), text);

  // The file the policy was applied from: the apiserver's defaults (from the CRD's schema) make its spec the
  // hub's, so its revision stays, and nothing changes anywhere.
  const applied = await ok('diff', '-f', file('applied.yaml', original()));
  assert.equal(applied.split('\n')[0], `AuthPolicy ${ns}/${AUTH}: revision 1 (its spec does not change: metadata only)`);
  assert.deepEqual(table(applied).slice(1).map((r) => r[2]), ['unchanged', 'unchanged']);
  assert.ok(applied.endsWith('\nNo copy changes.\n'), applied);

  // The hub policy as it is: the clusters run it, nothing changes.
  const same = await ok('diff', POLICY);
  assert.equal(same.split('\n')[0], `AuthPolicy ${ns}/${AUTH}: revision 1, as on the hub`);
  assert.deepEqual(table(same).slice(1).map((r) => r.slice(0, 4)), [
    ['spoke-2', '1/2', 'unchanged', '1'],
    ['spoke-1', '2/2', 'unchanged', '1'],
  ]);
  assert.ok(same.endsWith('\nNo copy changes.\n'), same);

  assert.deepEqual(cliWrites(cursor), []);
  assert.deepEqual(await versions(), before, 'the policy and its works are as they were');
  assert.equal((await ourWorks(hub, { controllerName, namespace: 'spoke-1' })).filter((w) => readSourceRef(w)?.namespace === ns).length, 1);
});

test('a file that retargets the policy: the cluster it leaves is a removal the deletion rule allows, said with its reason; nothing written', async (t) => {
  t.after(async () => {
    await remove(hub, gateway(ns, 'gw-2', className, 'spoke-2-only'));
    await remove(hub, placementDecision(ns, 'spoke-2-only', ['spoke-2']));
  });
  await apply(hub, gateway(ns, 'gw-2', className, 'spoke-2-only'));
  await apply(hub, placementDecision(ns, 'spoke-2-only', ['spoke-2']));
  const cursor = AuditCursor.at(sandbox, 'hub');
  const text = await ok('diff', '-f', file('retargeted.yaml', authPolicy(ns, AUTH, 'gw-2')));
  const spoke1 = table(text).find((r) => r[0] === 'spoke-1');
  assert.equal(spoke1?.[2], 'remove', text);
  assert.match(spoke1?.at(-1) ?? '', /^NoLongerTargeted: the policy no longer needs a copy there, and OCM vouches for the cluster and its Placements: its ManifestWork is deleted$/);
  assert.ok(text.includes(`--- spoke-1/AuthPolicy/${ns}/${AUTH}\t(revision 1, running now)\n+++ spoke-1/AuthPolicy/${ns}/${AUTH}\t(no copy)`), text);
  assert.deepEqual(cliWrites(cursor), []);
});

test('bad input: one error line naming the file and the field, exit code 2', async () => {
  const bad = async (args: string[], expected: RegExp): Promise<void> => {
    const r = await cli(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, expected, args.join(' '));
  };
  const unparsable = file('bad.yaml', 'apiVersion: kuadrant.io/v1\nkind: [AuthPolicy\n');
  await bad(['diff', '-f', unparsable], new RegExp(`^error: ${unparsable}: not valid YAML or JSON: [^\\n]+\\n$`));
  const dns = file('dns.yaml', { ...original(), apiVersion: 'kuadrant.io/v1', kind: 'DNSPolicy' });
  await bad(['diff', '-f', dns], new RegExp(`^error: ${dns}: kind: DNSPolicy of kuadrant\\.io/v1 is not a policy kind synced by ${controllerName.replace(/\./g, '\\.')} \\(synced: AuthPolicy \\(kuadrant\\.io\\)\\)\\n$`));
  const route = file('route.yaml', authPolicy(ns, AUTH, 'gw', { targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r' } }));
  await bad(['diff', '-f', route], new RegExp(`^error: ${route}: spec\\.targetRef: no target is a Gateway \\(group gateway\\.networking\\.k8s\\.io, kind Gateway\\): nothing would be synced\\n$`));
  const nameless = file('nameless.yaml', `apiVersion: kuadrant.io/v1\nkind: AuthPolicy\nmetadata:\n  namespace: ${ns}\n`);
  await bad(['diff', '-f', nameless], new RegExp(`^error: ${nameless}: metadata\\.name: required\\n$`));
  await bad(['diff', '-f', file('other.yaml', authPolicy(ns, 'other', 'gw')), POLICY], /^error: .*other\.yaml: metadata\.name: "other" is not the policy named, "auth"\n$/);
  await bad(['diff'], /^error: name a hub policy/);
  await bad(['diff', `authpolicy/${ns}/nope`], new RegExp(`^error: AuthPolicy ${ns}/nope not found \\(authpolicies\\.kuadrant\\.io\\)\\n$`));
  await bad(['diff', POLICY, '-o', 'xml'], /^error: option '-o, --output <format>' argument 'xml' is invalid/);
  await bad(['diff', '-f', join(dir, 'missing.yaml')], /^error: .*missing\.yaml: cannot be read: ENOENT/);
});
