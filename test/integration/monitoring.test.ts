// deploy/monitoring with the real tools: rendered by the repository's kubectl (kustomize), its PrometheusRule's
// groups checked and unit-tested by the real promtool (`promtool check rules`, `promtool test rules` on
// deploy/monitoring/tests), every metric its alert rules and its Grafana dashboard query really exported by a
// running hub controller (so a rule cannot watch a metric that does not exist), and the whole base through a
// server-side dry-run on the sandbox hub with the Prometheus operator's CRDs, read from its Go module.
// Also the logs: the compiled CLI with `--log-format pretty` runs and prints readable lines without any
// development dependency (the image prunes them).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { stringify } from 'yaml';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { ProbeServer } from '../../src/runtime/probeserver.ts';
import { createNamespace, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { kubectl, kustomize, runProcess, toYaml, type Rendered, type Run } from '../../testkit/kubectl.ts';
import { installCrds, moduleFolder } from '../../testkit/sandbox/crds.ts';
import { binDir, repoRoot } from '../../testkit/sandbox/layout.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

const PROMTOOL = join(binDir, 'promtool');
const PROMETHEUS_OPERATOR = 'github.com/prometheus-operator/prometheus-operator';
const RULES_FILE = 'policy-sync-hub.rules.yaml';

let sandbox: Sandbox;
let http: KubeHttp;
let rendered: Rendered;
let work: string;
let hub: RunningHub | undefined;
let probes: ProbeServer | undefined;
const ns = uniqueName('monitoring');

before(async () => {
  sandbox = await testSandbox();
  http = hubHttp(sandbox);
  rendered = await kustomize('deploy/monitoring');
  work = mkdtempSync(join(tmpdir(), 'policy-sync-monitoring-'));
});

after(async () => {
  await probes?.stop();
  await hub?.stop();
  if (http) {
    await removeNamespace(http, ns);
    http.destroy();
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

function promtool(args: string[]): Promise<Run> {
  if (!existsSync(PROMTOOL)) return Promise.reject(new Error(`${PROMTOOL} is missing: run \`bash hack/build-components.sh promtool\``));
  return runProcess(PROMTOOL, args, { cwd: work });
}

function one(kind: string): KubeObject {
  assert.equal(rendered.code, 0, `kubectl kustomize deploy/monitoring failed:\n${rendered.stderr}`);
  const found = rendered.objects.filter((o) => o.kind === kind);
  assert.equal(found.length, 1, `one ${kind} rendered`);
  return found[0]!;
}

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
}

function rules(): Rule[] {
  const spec = one('PrometheusRule').spec as { groups: { rules: Rule[] }[] };
  return spec.groups.flatMap((g) => g.rules);
}

function dashboardQueries(): string[] {
  const data = (one('ConfigMap').data ?? {}) as Record<string, string>;
  const dashboard = JSON.parse(data['policy-sync-hub.json'] ?? '{}') as { panels?: { targets?: { expr?: string }[] }[] };
  return (dashboard.panels ?? []).flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? '')).filter((e) => e.length > 0);
}

const PROMQL_KEYWORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'offset', 'bool', 'inf', 'nan', 'start', 'end']);

/**
 * The metric names a PromQL expression selects: strings, label matchers, ranges and grouping clauses taken
 * out, identifiers that call (functions, aggregations), keywords and numbers left out.
 */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const before = stripped[m.index - 1];
    if (before !== undefined && /[0-9.]/.test(before)) continue; // 1e3, 0.5
    if (stripped.slice(m.index + m[0].length).trimStart().startsWith('(')) continue;
    if (PROMQL_KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** Every name a scrape exports: each family of a `# TYPE` line, with a histogram's or summary's series names. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

test('metricNames finds the selected metrics of an expression, and nothing else', () => {
  assert.deepEqual(metricNames('absent(leader_election_master_status{job="policy-sync-hub"} == 1)'), ['leader_election_master_status']);
  assert.deepEqual(
    metricNames('histogram_quantile(0.99, sum by (le, verb) (rate(rest_client_request_duration_seconds_bucket{job="x", verb=~"get|list"}[5m])))'),
    ['rest_client_request_duration_seconds_bucket'],
  );
  assert.deepEqual(metricNames('sum(rate(a_total[5m] offset 1h)) by (pod) / on (pod) group_left b > 1e3 and c unless bool d'), ['a_total', 'b', 'c', 'd']);
  assert.deepEqual(metricNames('max without (instance) (x:recorded{code="5xx"}) > 0.5'), ['x:recorded']);
});

test('the PrometheusRule passes promtool check rules, and its alerts pass the unit tests in deploy/monitoring/tests', async () => {
  const spec = one('PrometheusRule').spec as { groups: unknown[] };
  writeFileSync(join(work, RULES_FILE), stringify({ groups: spec.groups }));
  const tests = readdirSync(join(repoRoot, 'deploy/monitoring/tests')).filter((f) => f.endsWith('.yaml'));
  assert.ok(tests.length > 0, 'rule tests exist');
  for (const f of tests) copyFileSync(join(repoRoot, 'deploy/monitoring/tests', f), join(work, f));

  const check = await promtool(['check', 'rules', RULES_FILE]);
  assert.equal(check.code, 0, `promtool check rules:\n${check.stdout}${check.stderr}`);
  assert.match(check.stdout, /SUCCESS: \d+ rules found/);

  const unit = await promtool(['test', 'rules', ...tests]);
  assert.equal(unit.code, 0, `promtool test rules:\n${unit.stdout}${unit.stderr}`);
  assert.doesNotMatch(unit.stdout + unit.stderr, /FAILED/);
  // promtool passes whatever alerts no test names: every alert here is tested.
  const testText = tests.map((f) => readFileSync(join(work, f), 'utf8')).join('\n');
  for (const alert of rules().flatMap((r) => (r.alert ? [r.alert] : []))) assert.ok(testText.includes(`alertname: ${alert}`), `${alert} has a promtool test`);
});

test('promtool test rules fails when an alert does not behave as its test says (the tests can fail)', async () => {
  const spec = structuredClone(one('PrometheusRule').spec) as { groups: { rules: Rule[] }[] };
  const failed = spec.groups.flatMap((g) => g.rules).find((r) => r.alert === 'PolicySyncClustersFailed')!;
  failed.expr = failed.expr.replace('> 0', '> 5');
  writeFileSync(join(work, RULES_FILE), stringify({ groups: spec.groups }));
  const tests = readdirSync(join(repoRoot, 'deploy/monitoring/tests')).filter((f) => f.endsWith('.yaml'));
  const unit = await promtool(['test', 'rules', ...tests]);
  assert.notEqual(unit.code, 0);
  assert.match(unit.stdout + unit.stderr, /PolicySyncClustersFailed/);
});

test('every metric the rules and the dashboard query is exported by a running hub controller', async () => {
  const metrics = new Metrics();
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName: testControllerName('monitoring'), metrics });
  probes = new ProbeServer({ address: '127.0.0.1:0', ready: () => true, metrics: () => metrics.scrape() });
  const res = await fetch(`http://127.0.0.1:${(await probes.start()).port}/metrics`);
  assert.equal(res.status, 200);
  const exported = exportedNames(await res.text());

  const queried = new Map<string, string>();
  for (const r of rules()) for (const name of metricNames(r.expr)) queried.set(name, `rule ${r.alert ?? r.record}`);
  const queries = dashboardQueries();
  assert.ok(queries.length >= 10, 'the dashboard has its queries');
  for (const q of queries) for (const name of metricNames(q)) queried.set(name, `dashboard query ${q}`);
  // The new series are among them, so the check covers what this pack adds.
  for (const name of ['policysync_spoke_report_age_seconds', 'policysync_feedback_latency_seconds_bucket', 'rest_client_request_duration_seconds_bucket', 'leader_election_master_status']) {
    assert.ok(queried.has(name), `${name} is queried`);
  }
  const missing = [...queried].filter(([name]) => !exported.has(name)).map(([name, where]) => `${name} (${where})`);
  assert.deepEqual(missing, [], 'metrics queried but not exported');
});

test('deploy/monitoring passes a server-side dry-run against the Prometheus operator CRDs; a bad duration does not', async () => {
  const crdDir = join(moduleFolder(PROMETHEUS_OPERATOR), 'example', 'prometheus-operator-crd');
  // Left installed: installing is idempotent, and other files (the chart's) may create these kinds too.
  await installCrds(sandbox.kubeConfig('hub'), 'hub', 60_000, ['servicemonitors', 'prometheusrules'].map((r) => join(crdDir, `monitoring.coreos.com_${r}.yaml`)));
  await createNamespace(http, ns);
  // Into a namespace of this test's own: the kinds and schemas are checked, nothing is created.
  const objects = rendered.objects.map((o) => ({ ...o, metadata: { ...o.metadata, namespace: ns } }));
  assert.deepEqual(objects.map((o) => o.kind).sort(), ['ConfigMap', 'PrometheusRule', 'Service', 'ServiceMonitor']);
  const kubeconfig = sandbox.hub.kubeconfig;
  const ok = await kubectl(['apply', '--dry-run=server', '-f', '-'], { input: toYaml(objects), kubeconfig });
  assert.equal(ok.code, 0, `dry-run:\n${ok.stdout}${ok.stderr}`);
  assert.match(ok.stdout, /prometheusrule\.monitoring\.coreos\.com\/policy-sync-hub created \(server dry run\)/);
  assert.match(ok.stdout, /servicemonitor\.monitoring\.coreos\.com\/policy-sync-hub created \(server dry run\)/);

  const rule = structuredClone(objects.find((o) => o.kind === 'PrometheusRule')!);
  (rule.spec as { groups: { rules: { for?: string }[] }[] }).groups[0]!.rules[0]!.for = 'five minutes';
  const bad = await kubectl(['apply', '--dry-run=server', '-f', '-'], { input: toYaml([rule]), kubeconfig });
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /for/);
});

test('the compiled CLI logs pretty lines with no development dependency loadable', async () => {
  const out = join(repoRoot, '.local', `dist-${ns}`);
  try {
    const build = await runProcess(join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json', '--outDir', out]);
    assert.equal(build.code, 0, `tsc:\n${build.stdout}${build.stderr}`);
    // A resolve hook that refuses every devDependency, as an image pruned with `npm prune --omit=dev` would.
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const denied = Object.keys(pkg.devDependencies);
    writeFileSync(
      join(work, 'hooks.mjs'),
      `const denied = new Set(${JSON.stringify(denied)});
export async function resolve(specifier, context, next) {
  const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
  if (denied.has(name)) throw Object.assign(new Error('development dependency ' + specifier + ' is not installed'), { code: 'ERR_MODULE_NOT_FOUND' });
  return next(specifier, context);
}
`,
    );
    writeFileSync(join(work, 'register.mjs'), `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`);
    // The hook works: a development dependency does not load under it.
    assert.ok(denied.includes('typescript'));
    const refused = await runProcess(process.execPath, ['--import', join(work, 'register.mjs'), '--input-type=module', '-e', "await import('typescript')"]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /development dependency typescript is not installed/);
    const child = spawn(
      process.execPath,
      ['--import', join(work, 'register.mjs'), join(out, 'cli', 'main.js'), 'hub', '--log-format', 'pretty', `--kubeconfig=${sandbox.hub.kubeconfig}`,
        `--controller-name=${testControllerName('pretty')}`, '--spoke-config=none', '--health-probe-bind-address=127.0.0.1:0', '--metrics-bind-address=0'],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const deadline = Date.now() + 60_000;
    while (!/INFO {2}policy-sync-hub: .*\n.*INFO {2}policy-sync-hub: /s.test(stderr) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGTERM');
    const code = await exited;
    const lines = stderr.split('\n').filter((l) => l.length > 0);
    assert.ok(lines.length >= 2, `it logged:\n${stderr}`);
    for (const line of lines.filter((l) => !l.startsWith(' '))) assert.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) policy-sync-hub: /, `a pretty line: ${line}`);
    assert.doesNotMatch(stderr, /^\{/m, 'no JSON line');
    assert.equal(code, 0, `exits cleanly on SIGTERM:\n${stderr}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
