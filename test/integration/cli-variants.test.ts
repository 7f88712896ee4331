// PolicyVariants through the CLI, against the real hub apiserver, kuadrant-operator's real DNSPolicy CRD and the
// real hub controller (in-process; no spokes: the works only have to exist): a DNSPolicy whose geo and weight come
// from each ManagedCluster's labels, one cluster lacking the geo label. `diff -f` of a new variant shows exactly
// the clusters whose copy changes and their diffs, the failing cluster as skip with its reason, and then the hub
// writes exactly those; a variant whose target is missing or of a kind no class syncs is refused naming the field;
// `explain` shows each field a variant set and from where; `status` counts and names the variants clusters run.
// Each CLI run is a child process of the real binary.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { stringify } from 'yaml';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { VARIANTS_ANNOTATION } from '../../src/core/metadatakeys.ts';
import { workCopy } from '../../src/core/works/revision.ts';
import type { PolicyStatus } from '../../src/core/status/policystatus.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { eventually } from '../../testkit/eventually.ts';
import { apply, createNamespace, gateway, gatewayClass, paramsConfigMap, placementDecision, remove, removeNamespace, resourceOf } from '../../testkit/fixtures.ts';
import { hubHttp, quiescent, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { hubStatus } from '../../testkit/status.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';
import { ourWorks } from '../../testkit/works.ts';

const DNS = { group: 'kuadrant.io', version: 'v1', resource: 'dnspolicies' };
const GEO_LABEL = 'kuadrant.io/lb-attribute-geo-code';
const WEIGHT_LABEL = 'kuadrant.io/lb-attribute-custom-weight';

let sandbox: Sandbox;
let http: KubeHttp;
let hub: RunningHub;
let dir: string;
const controllerName = testControllerName('cli-variants');
const ns = uniqueName('cli-variants');
const [c1, c2, c3] = [`${ns}-c1`, `${ns}-c2`, `${ns}-c3`];
const className = uniqueName('class');
const POLICY = `dnspolicy/${ns}/dns`;
const created: KubeObject[] = [];

function managedCluster(name: string, labels: Record<string, string>): KubeObject {
  return { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name, labels }, spec: { hubAcceptsClient: false } };
}

const dnsPolicy = (): KubeObject => ({
  apiVersion: 'kuadrant.io/v1',
  kind: 'DNSPolicy',
  metadata: { namespace: ns, name: 'dns' },
  spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }, providerRefs: [{ name: 'x' }], loadBalancing: { geo: 'US', weight: 120, defaultGeo: false } },
});

function variant(name: string, entries: unknown[], targetRef: Record<string, string> = { group: 'kuadrant.io', kind: 'DNSPolicy', name: 'dns' }): KubeObject {
  return { apiVersion: 'policysync.kuadrant.io/v1alpha1', kind: 'PolicyVariant', metadata: { namespace: ns, name }, spec: { targetRef, entries } };
}

const GEO = (): KubeObject =>
  variant('geo', [
    {
      values: [
        { path: 'spec.loadBalancing.geo', valueFrom: { clusterLabel: { key: GEO_LABEL } } },
        { path: 'spec.loadBalancing.weight', valueFrom: { clusterLabel: { key: WEIGHT_LABEL } }, default: '120' },
      ],
    },
  ]);
/** c1 alone becomes the default geo: a field the geo variant does not set. */
const DEFAULT_GEO = (): KubeObject => variant('default-geo', [{ clusters: { names: [c1] }, patch: { spec: { loadBalancing: { defaultGeo: true } } } }]);

async function put(object: KubeObject): Promise<void> {
  await apply(http, object);
  created.push(object);
}

before(async () => {
  sandbox = await testSandbox();
  http = hubHttp(sandbox);
  dir = mkdtempSync(join(tmpdir(), 'cli-variants-'));
  for (const n of [ns, c1, c2, c3]) await createNamespace(http, n);
  await put(managedCluster(c1, { [GEO_LABEL]: 'EU', [WEIGHT_LABEL]: '150' }));
  await put(managedCluster(c2, { [GEO_LABEL]: 'NA' }));
  await put(managedCluster(c3, {}));
  await apply(http, paramsConfigMap(ns, 'params', { policiesToSync: [DNS] }));
  await apply(http, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(http, gateway(ns, 'gw', className, 'everywhere'));
  await apply(http, placementDecision(ns, 'everywhere', [c1, c2, c3]));
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName });
});

after(async () => {
  for (const w of await ourWorks(http, { controllerName })) await remove(http, w);
  await hub.stop();
  for (const o of created.reverse()) await remove(http, o);
  await remove(http, gatewayClass(className, { namespace: ns, name: 'params' }));
  for (const n of [ns, c1, c2, c3]) await removeNamespace(http, n);
  http.destroy();
});

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(...args: string[]): Promise<CliResult> {
  // diff and explain decide as the hub controller does: with the flags it runs with (the tests' hub trusts decision labels).
  const hubFlags = args[0] === 'diff' || args[0] === 'explain' ? ['--trust-decision-labels'] : [];
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

function file(name: string, ...objects: KubeObject[]): string {
  const path = join(dir, name);
  writeFileSync(path, objects.map((o) => stringify(o)).join('---\n'));
  return path;
}

/** The table of a diff's text: from the CLUSTER header to the blank line after it, as cells. */
function table(text: string): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith('CLUSTER '));
  return lines.slice(start, lines.indexOf('', start)).map((l) => l.split(/ {2,}/));
}

/** The policy's works, by cluster. */
async function works(): Promise<Map<string, KubeObject>> {
  const all = (await ourWorks(http, { controllerName })).filter((w) => w.metadata.annotations?.['policysync.kuadrant.io/source-ref']?.includes('"dnspolicies"'));
  return new Map(all.map((w) => [w.metadata.namespace ?? '', w]));
}

const lb = (work: KubeObject | undefined): unknown => (workCopy(work)?.spec as { loadBalancing?: unknown } | undefined)?.loadBalancing;

test('the hub places each cluster\'s geo; diff of the policy as it is: nothing to write, the cluster without its geo label skipped with the reason', async () => {
  await put(dnsPolicy());
  await put(GEO());
  await eventually(
    async () => {
      const w = await works();
      const s = await hubStatus<PolicyStatus>(http, resourceOf(dnsPolicy()), ns, 'dns');
      return w.size === 2 && workCopy(w.get(c1))?.metadata.annotations?.[VARIANTS_ANNOTATION] === 'geo@1' && s?.clusters?.[c3]?.reason === 'VariantValueMissing' && s.clusters[c1]?.variants !== undefined;
    },
    { what: 'the DNSPolicy placed on c1 and c2 with the geo variant, c3 failing', timeoutMs: 30_000 },
  );
  await quiescent(hub.controller, 'after the variant');
  const text = await ok('diff', POLICY);
  assert.deepEqual(
    table(text).map((r) => r.slice(0, 3)),
    [['CLUSTER', 'WAVE', 'ACTION'], [c1, '-', 'unchanged'], [c2, '-', 'unchanged'], [c3, '-', 'skip']],
    text,
  );
  assert.match(text, new RegExp(`skip +- +VariantValueMissing: variant geo entry 0 \\(spec\\.loadBalancing\\.geo\\): label ${GEO_LABEL.replaceAll('.', '\\.')} is not set on cluster ${c3}`));
  assert.ok(text.includes('\nVariants:  geo@1\n'), text);
  assert.ok(text.endsWith('\nNo copy changes.\n'), text);
});

test('diff -f of a new variant: exactly the cluster whose copy changes, its diff; then the hub writes exactly that cluster', async () => {
  await quiescent(hub.controller, 'before the diff');
  const before = await works();
  const text = await ok('diff', '-f', file('default-geo.yaml', DEFAULT_GEO()));
  assert.ok(text.startsWith(`DNSPolicy ${ns}/dns: revision 1, as on the hub\n`), text);
  assert.ok(text.includes('\nVariants:  default-geo@1 (new, from the file), geo@1\n'), text);
  assert.deepEqual(
    table(text).map((r) => r.slice(0, 3)),
    [['CLUSTER', 'WAVE', 'ACTION'], [c1, '-', 'write'], [c2, '-', 'unchanged'], [c3, '-', 'skip']],
    text,
  );
  const diffs = text.split('\n--- ').slice(1);
  assert.equal(diffs.length, 1, `one copy changes:\n${text}`);
  assert.ok(diffs[0]!.startsWith(`${c1}/DNSPolicy/${ns}/dns\t(revision 1, running now)\n+++ ${c1}/DNSPolicy/${ns}/dns\t(revision 1, written now)\n`), diffs[0]);
  // A copy rendered with variants carries `<generation>/<tag>` (core/revisionannotation.ts): a new tag for the new spec.
  assert.match(diffs[0]!, /\n- {4}policysync\.kuadrant\.io\/revision: 1\/([0-9a-f]{10})\n- {4}policysync\.kuadrant\.io\/variants: geo@1\n\+ {4}policysync\.kuadrant\.io\/revision: 1\/(?!\1)[0-9a-f]{10}\n\+ {4}policysync\.kuadrant\.io\/variants: default-geo@1,geo@1\n/);
  assert.ok(diffs[0]!.includes('-    defaultGeo: false\n+    defaultGeo: true\n'), diffs[0]);
  // -o json says the same.
  const json = JSON.parse(await ok('diff', '-f', file('default-geo.yaml', DEFAULT_GEO()), '-o', 'json')) as { items: { clusters: { cluster: string; action: string; diff: string }[] }[] };
  assert.deepEqual(json.items[0]!.clusters.map((c) => [c.cluster, c.action, c.diff !== '']), [[c1, 'write', true], [c2, 'unchanged', false], [c3, 'skip', false]]);

  // Applied: the hub writes c1's work, and no other.
  await put(DEFAULT_GEO());
  const after = await eventually(
    async () => {
      const w = await works();
      return (lb(w.get(c1)) as { defaultGeo?: boolean } | undefined)?.defaultGeo === true ? w : undefined;
    },
    { what: 'c1 the default geo', timeoutMs: 30_000 },
  );
  assert.deepEqual(lb(after.get(c1)), { geo: 'EU', weight: 150, defaultGeo: true });
  await quiescent(hub.controller, 'after the new variant');
  const settled = await works();
  assert.equal(settled.get(c2)?.metadata.resourceVersion, before.get(c2)?.metadata.resourceVersion, 'c2 not written, as diff said');
  assert.equal(settled.has(c3), false, 'c3 still gets no copy');
  const again = await ok('diff', POLICY);
  assert.ok(again.endsWith('\nNo copy changes.\n'), again);
});

test('diff -f of a variant whose target is missing, or of a kind no class syncs: an error naming the field', async () => {
  const missing = await cli('diff', '-f', file('missing.yaml', variant('lost', [{ patch: { spec: { loadBalancing: { geo: 'X' } } } }], { group: 'kuadrant.io', kind: 'DNSPolicy', name: 'nowhere' })));
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, new RegExp(`missing\\.yaml: spec\\.targetRef\\.name: DNSPolicy ${ns}/nowhere is neither on the hub nor in the file`));
  const unsynced = await cli('diff', '-f', file('unsynced.yaml', variant('auth', [{ patch: { spec: { rules: {} } } }], { group: 'kuadrant.io', kind: 'AuthPolicy', name: 'auth' })));
  assert.equal(unsynced.code, 2, unsynced.stderr);
  assert.match(unsynced.stderr, /unsynced\.yaml: spec\.targetRef\.kind: AuthPolicy of group "kuadrant\.io" is not a policy kind synced by .* \(synced: DNSPolicy \(kuadrant\.io\)\)/);
  // The policy and its variant in one file: the policy does not exist on the hub yet, the file has it.
  const both = await ok('diff', '-f', file('both.yaml', { ...dnsPolicy(), metadata: { namespace: ns, name: 'dns-2' } }, variant('geo-2', [{ values: [{ path: 'spec.loadBalancing.geo', valueFrom: { clusterLabel: { key: GEO_LABEL } } }] }], { group: 'kuadrant.io', kind: 'DNSPolicy', name: 'dns-2' })));
  assert.ok(both.startsWith(`DNSPolicy ${ns}/dns-2: new policy, revision 1\n`), both);
  assert.deepEqual(table(both).map((r) => r.slice(0, 3)), [['CLUSTER', 'WAVE', 'ACTION'], [c1, '-', 'write'], [c2, '-', 'write'], [c3, '-', 'skip']], both);
  assert.ok(both.includes('+    geo: EU\n') && both.includes('+    geo: NA\n'), both);
});

test('explain: per cluster each field a variant set and from where; the failing cluster\'s reason; the variants\' outcomes', async () => {
  const text = await ok('explain', POLICY);
  // Wrapped lines joined: each field is one phrase.
  const flat = text.replace(/\n {20,}/g, ' ');
  const section = text.slice(text.indexOf('Variants:\n'), text.indexOf('Clusters:\n')).split(/\n {2}(?=\S)/).map((l) => l.replace(/\s+/g, ' ').trim());
  assert.deepEqual(section, ['Variants:', `default-geo@1: changes 1 cluster (${c1})`, `geo@1: changes 2 clusters (${c1}, ${c2}); fails on 1 (${c3}: VariantValueMissing)`]);
  const c1Block = flat.slice(flat.indexOf(`  ${c1}:\n`), flat.indexOf(`  ${c2}:\n`));
  assert.match(c1Block, / {4}variants: {7}default-geo@1, geo@1\n/);
  assert.ok(c1Block.includes(`variant fields: spec.loadBalancing.defaultGeo = true from patch (variant default-geo, entry 0)`), c1Block);
  assert.ok(c1Block.includes(`spec.loadBalancing.geo = "EU" from label ${GEO_LABEL} (variant geo, entry 0)`), c1Block);
  assert.ok(c1Block.includes(`spec.loadBalancing.weight = 150 from label ${WEIGHT_LABEL} (variant geo, entry 0)`), c1Block);
  const c2Block = flat.slice(flat.indexOf(`  ${c2}:\n`), flat.indexOf(`  ${c3}:\n`));
  assert.ok(c2Block.includes(`spec.loadBalancing.weight = 120 (default; label ${WEIGHT_LABEL} not set) (variant geo, entry 0)`), c2Block);
  const c3Block = flat.slice(flat.indexOf(`  ${c3}:\n`));
  assert.match(c3Block, / {4}state: {10}Failed\n {4}reason: {9}VariantValueMissing\n/);
  assert.ok(!c3Block.includes('variant fields'), c3Block);
  // -o json: the same, for scripts.
  const json = JSON.parse(await ok('explain', POLICY, '-o', 'json')) as { variants: { clusters: Record<string, { carried: string[]; fields: { path: string; value: unknown; source: unknown }[] }>; failures: { cluster: string; reason: string }[] } };
  assert.deepEqual(json.variants.clusters[c2]?.fields.map((f) => [f.path, f.value]), [['spec.loadBalancing.geo', 'NA'], ['spec.loadBalancing.weight', 120]]);
  assert.deepEqual(json.variants.failures.map((f) => [f.cluster, f.reason]), [[c3, 'VariantValueMissing']]);
});

test('status: the table counts the clusters running a variant; -o wide names the variants each copy carries', async () => {
  const table = (await ok('status', '-n', ns)).trimEnd().split('\n').map((l) => l.split(/ {2,}/));
  const header = table[0]!;
  const dns = table.find((r) => r[0] === 'dnspolicy.kuadrant.io/dns')!;
  assert.equal(dns[header.indexOf('VARIANTS')], '2', table.join('\n'));
  const wide = (await ok('status', '-n', ns, '-o', 'wide')).trimEnd().split('\n').map((l) => l.split(/ {2,}/));
  const at = wide[0]!.indexOf('VARIANTS');
  assert.ok(at > 0, wide[0]!.join(' '));
  const byCluster = new Map(wide.slice(1).map((r) => [r[1], r[at]]));
  assert.deepEqual([byCluster.get(c1), byCluster.get(c2), byCluster.get(c3)], ['default-geo@1,geo@1', 'geo@1', '-']);
});
