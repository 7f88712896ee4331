// `policy-sync status` and `policy-sync explain` as a person runs them: a known state is built on the
// sandbox through the real flow (hub controller, spoke agents and OCM work agents; a policy enforced on
// spoke-1 and overridden by a local policy on spoke-2, one placed on no cluster, one targeting a Gateway
// whose class does not sync its kind), then the real CLI runs as a child process and its output is
// checked line by line.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { readSourceRef } from '../../src/core/works/manifestwork.ts';
import type { ClusterStatus, PolicyStatus } from '../../src/core/status/policystatus.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { mergePatch } from '../../src/kube/writes.ts';
import { eventually } from '../../testkit/eventually.ts';
import {
  AUTH_POLICIES,
  RATE_LIMIT_POLICIES,
  apply,
  authPolicy,
  createNamespace,
  gateway,
  gatewayClass,
  get,
  paramsConfigMap,
  placementDecision,
  rateLimitPolicy,
  remove,
  removeNamespace,
} from '../../testkit/fixtures.ts';
import { hubStatus, writeSpokeStatus } from '../../testkit/status.ts';
import { ourWorks } from '../../testkit/works.ts';
import { hubHttp, startHub, startSpoke, testControllerName, uniqueName, type RunningHub, type RunningSpoke, releaseSpokes, spokeClients } from '../../testkit/hub.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';

const SPOKE_CONFIG = { namespace: 'policy-sync-system', name: uniqueName('spoke-config') };
const controllerName = testControllerName('status');
const ns = uniqueName('status');
const className = uniqueName('class');
/** A second class of ours whose params list AuthPolicies only. */
const authOnlyClass = uniqueName('class');
const ENFORCED_MESSAGE = 'AuthPolicy has been successfully enforced';

// The three hub policies, and how the table names them.
const AUTH = 'auth';
const UNPLACED = 'auth-unplaced';
const UNLISTED = 'rl-unlisted';

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let controller: RunningHub | undefined;
let agents: RunningSpoke[] = [];

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  for (const spoke of spokes.values()) {
    await createNamespace(spoke, SPOKE_CONFIG.namespace);
    await createNamespace(spoke, ns);
    await apply(spoke, gateway(ns, 'gw', 'spoke-gateways'));
  }
  await createNamespace(hub, ns);
  await apply(
    hub,
    paramsConfigMap(ns, 'params', {
      policiesToSync: [
        { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' },
        { group: 'kuadrant.io', version: 'v1', resource: 'ratelimitpolicies' },
      ],
    }),
  );
  await apply(hub, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(hub, paramsConfigMap(ns, 'params-auth-only', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  await apply(hub, gatewayClass(authOnlyClass, { namespace: ns, name: 'params-auth-only' }, controllerName));
  await apply(hub, gateway(ns, 'auth-only-gw', authOnlyClass, 'all-spokes'));
  await apply(hub, gateway(ns, 'gw', className, 'all-spokes'));
  await apply(hub, gateway(ns, 'lonely', className)); // no Placement: on no cluster
  await apply(hub, placementDecision(ns, 'all-spokes', sandbox.spokes.map((s) => s.name)));
  controller = await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG });
  agents = await Promise.all(sandbox.spokes.map((s) => startSpoke(sandbox.kubeConfig(s.name), s.name, SPOKE_CONFIG)));
  for (const agent of agents) {
    await eventually(() => Promise.resolve(agent.controller.watchedKinds().length === 2), {
      what: `${agent.cluster}'s agent to watch both kinds`,
      context: agentLogs,
    });
  }
});

after(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  // A hub controller again (the truncated-annotation test stops it), to delete the works it made.
  controller ??= await startHub(sandbox.kubeConfig('hub'), { controllerName, spokeConfig: SPOKE_CONFIG });
  await remove(hub, authPolicy(ns, AUTH, 'gw'));
  await remove(hub, authPolicy(ns, UNPLACED, 'lonely'));
  await remove(hub, rateLimitPolicy(ns, UNLISTED, 'auth-only-gw'));
  await eventually(async () => (await ourWorks(hub, { controllerName })).every((w) => readSourceRef(w)?.namespace !== ns), {
    what: 'the works of the policies to go',
  }).catch(() => undefined);
  await eventually(async () => (await get(spokes.get('spoke-1')!, AUTH_POLICIES, ns, AUTH)) === undefined, { what: 'the copy to go' }).catch(() => undefined);
  await controller.stop();
  await remove(hub, gatewayClass(className, { namespace: ns, name: 'params' }));
  await remove(hub, gatewayClass(authOnlyClass, { namespace: ns, name: 'params-auth-only' }));
  await removeNamespace(hub, ns);
  await releaseSpokes(spokes, ns);
  hub.destroy();
});

const agentLogs = (): string => workAgentLogs(sandbox, 10);

/** Waits until the hub annotation of the policy is exactly `expected`. */
async function settled(resource: typeof AUTH_POLICIES, name: string, expected: PolicyStatus): Promise<void> {
  let last: PolicyStatus | undefined;
  await eventually(
    async () => {
      last = await hubStatus(hub, resource, ns, name);
      try {
        assert.deepEqual(last, expected);
        return true;
      } catch {
        return false;
      }
    },
    { what: `the hub status of ${name}`, timeoutMs: 60_000, intervalMs: 50, context: () => `last seen: ${JSON.stringify(last)}\n${agentLogs()}` },
  );
}

/** Accepted and Enforced on the copy on `cluster` once it is there, as the spoke's policy controller would write them. */
async function enforceCopyOn(cluster: string): Promise<void> {
  const spoke = spokes.get(cluster)!;
  await eventually(async () => get(spoke, AUTH_POLICIES, ns, AUTH), { what: `the copy on ${cluster}`, context: agentLogs });
  await writeSpokeStatus(spoke, AUTH_POLICIES, ns, AUTH, ENFORCED_MESSAGE);
}

// Its work places revision 1 (the policy's generation) of the copy.
const enforced: ClusterStatus = { state: 'Enforced', applied: true, available: true, enforced: 'True', reason: 'Enforced', message: ENFORCED_MESSAGE, upToDate: true, revision: 1 };
// The local policy covers the copy's only target: the hub withdraws the copy from spoke-2 (not applied).
const overridden: ClusterStatus = {
  state: 'Overridden',
  applied: false,
  available: false,
  enforced: 'False',
  reason: 'Overridden',
  message: `AuthPolicy is overridden by [${ns}/local-auth]`,
  upToDate: true,
  overriddenBy: [`${ns}/local-auth`],
};
const AUTH_STATUS: PolicyStatus = {
  summary: { clusters: 2, applied: 1, enforced: 1, overridden: 1, pending: 0, failed: 0 },
  clusters: { 'spoke-1': enforced, 'spoke-2': overridden },
};
const UNPLACED_STATUS: PolicyStatus = {
  summary: { clusters: 0, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 0 },
  clusters: {},
  problems: [{ reason: 'NoClusters', message: 'the targeted Gateways are placed on no cluster: nothing is synced' }],
};
const UNLISTED_STATUS: PolicyStatus = {
  summary: { clusters: 0, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 0 },
  clusters: {},
  problems: [
    { reason: 'NotSynced', message: 'no target of this policy can be synced: it has no ManifestWorks' },
    {
      reason: 'TargetNotSynced',
      message: `spec.targetRef: KindNotSynced: the GatewayClass of Gateway ${ns}/auth-only-gw does not list ratelimitpolicies.v1.kuadrant.io in policiesToSync`,
    },
  ],
};

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The real CLI, as a child process, against the sandbox hub with this test's controller name. */
function cli(...args: string[]): Promise<CliResult> {
  const argv = [join(repoRoot, 'bin', 'policy-sync.js'), ...args, '--kubeconfig', sandbox.hub.kubeconfig, '--controller-name', controllerName];
  return new Promise((resolve) => {
    execFile(process.execPath, argv, { cwd: repoRoot, timeout: 60_000, env: { ...process.env, KUBECONFIG: '' } }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs the CLI, expects success, and returns its output lines. explain's text is checked to fit 80
 * columns; the status table is as wide as its content when stdout is not a terminal, as kubectl's.
 */
async function output(...args: string[]): Promise<string[]> {
  const result = await cli(...args);
  assert.equal(result.code, 0, `policy-sync ${args.join(' ')} failed: ${result.stderr}`);
  assert.equal(result.stderr, '');
  assert.ok(result.stdout.endsWith('\n'));
  const lines = result.stdout.slice(0, -1).split('\n');
  if (args[0] === 'explain' && !args.includes('json')) {
    for (const l of lines) assert.ok(Array.from(l).length <= 80, `longer than 80 columns: ${JSON.stringify(l)}`);
  }
  return lines;
}

test('the known state: enforced on spoke-1, overridden on spoke-2; no clusters; a kind the class does not sync', async () => {
  await apply(hub, authPolicy(ns, AUTH, 'gw'));
  for (const cluster of spokes.keys()) await enforceCopyOn(cluster);
  await settled(AUTH_POLICIES, AUTH, {
    summary: { clusters: 2, applied: 2, enforced: 2, overridden: 0, pending: 0, failed: 0 },
    clusters: { 'spoke-1': enforced, 'spoke-2': enforced },
  });
  await apply(spokes.get('spoke-2')!, authPolicy(ns, 'local-auth', 'gw'));

  await apply(hub, rateLimitPolicy(ns, UNLISTED, 'auth-only-gw'));
  await apply(hub, authPolicy(ns, UNPLACED, 'lonely'));

  await settled(AUTH_POLICIES, AUTH, AUTH_STATUS);
  await settled(AUTH_POLICIES, UNPLACED, UNPLACED_STATUS);
  await settled(RATE_LIMIT_POLICIES, UNLISTED, UNLISTED_STATUS);
});

// The kubectl-style table (`-n ns`; the sandbox kubeconfig's context has no namespace) and per-cluster rows.
const name = (kind: string, policy: string): string => `${kind}.kuadrant.io/${policy}`;
const authName = name('authpolicy', AUTH);
const unplacedName = name('authpolicy', UNPLACED);
const unlistedName = name('ratelimitpolicy', UNLISTED);
const width = Math.max(authName.length, unplacedName.length, unlistedName.length) + 3;
const TABLE = [
  `${'NAME'.padEnd(width)}ENFORCED   OVERRIDDEN   PENDING   FAILED   MESSAGE`,
  `${authName.padEnd(width)}1/2        1            0         0`,
  `${unplacedName.padEnd(width)}0/0        0            0         0        NoClusters: ${UNPLACED_STATUS.problems![0]!.message}`,
  `${unlistedName.padEnd(width)}0/0        0            0         0        NotSynced: ${UNLISTED_STATUS.problems![0]!.message}; TargetNotSynced: ${UNLISTED_STATUS.problems![1]!.message}`,
];
// -o wide adds the revision each cluster runs (none where the copy is withdrawn or there is no cluster).
const WIDE = [
  ['NAME', 'CLUSTER', 'STATE', 'REASON', 'UPTODATE', 'REVISION', 'MESSAGE'],
  [authName, 'spoke-1', 'Enforced', 'Enforced', 'true', '1', ENFORCED_MESSAGE],
  [authName, 'spoke-2', 'Overridden', 'Overridden', 'true', '-', `AuthPolicy is overridden by [${ns}/local-auth]`],
  [unplacedName, '<none>', '-', 'NoClusters', '-', '-', UNPLACED_STATUS.problems![0]!.message],
  [unlistedName, '<none>', '-', 'NotSynced', '-', '-', `${UNLISTED_STATUS.problems![0]!.message} (also: TargetNotSynced)`],
];
const cells = (lines: string[]): string[][] => lines.map((l) => l.split(/ {2,}/));
const EXPLAIN_AUTH_HEAD = [
  `Policy:     AuthPolicy ${ns}/${AUTH}`,
  'Resource:   authpolicies.kuadrant.io (v1)',
  'Summary:    2 clusters: 1 enforced, 1 overridden, 0 pending, 0 failed; 1 applied',
];
const EXPLAIN_AUTH_TAIL = [
  'Problems:   none',
  'Clusters:',
  '  spoke-1:',
  '    state:          Enforced',
  '    reason:         Enforced',
  `    message:        ${ENFORCED_MESSAGE}`,
  '    upToDate:       true',
  '    applied:        true',
  '    available:      true',
  '    revision:       1',
  '  spoke-2:',
  '    state:          Overridden',
  '    reason:         Overridden',
  `    message:        AuthPolicy is overridden by [${ns}/local-auth]`,
  `    overridden by:  ${ns}/local-auth`,
  '    upToDate:       true',
  '    applied:        false',
  '    available:      false',
];

/** An item of `status -o json`'s List (and `explain -o json`), keys sorted at every level. */
function jsonItem(kind: string, name: string, status: PolicyStatus): unknown {
  const sortKeys = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sortKeys)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]))
        : v;
  return sortKeys({ apiVersion: 'kuadrant.io/v1', kind, metadata: { name, namespace: ns }, syncStatus: status });
}

test('status: the table', async () => {
  assert.deepEqual(await output('status', '-n', ns), TABLE);
  assert.deepEqual(await output('status', '-n', ns, '-o', 'table'), TABLE);
});

test('status -o wide: one line per policy per cluster', async () => {
  assert.deepEqual(cells(await output('status', '-n', ns, '-o', 'wide')), WIDE);
});

test('status -o json: a v1 List of every policy with its full status, keys sorted', async () => {
  const expected = {
    apiVersion: 'v1',
    items: [
      jsonItem('AuthPolicy', AUTH, AUTH_STATUS),
      jsonItem('AuthPolicy', UNPLACED, UNPLACED_STATUS),
      jsonItem('RateLimitPolicy', UNLISTED, UNLISTED_STATUS),
    ],
    kind: 'List',
    metadata: { resourceVersion: '' },
  };
  assert.deepEqual(await output('status', '-n', ns, '-o', 'json'), JSON.stringify(expected, null, 2).split('\n'));
});

test('explain: per cluster, with the overriding local policy; the resource as plural, plural.group or Kind', async () => {
  const expected = [...EXPLAIN_AUTH_HEAD, ...EXPLAIN_AUTH_TAIL];
  assert.deepEqual(await output('explain', `authpolicies/${ns}/${AUTH}`), expected);
  assert.deepEqual(await output('explain', `authpolicies.kuadrant.io/${ns}/${AUTH}`), expected);
  assert.deepEqual(await output('explain', `AuthPolicy/${ns}/${AUTH}`), expected);
});

test('explain: the problems of a policy that is not synced anywhere', async () => {
  assert.deepEqual(await output('explain', `ratelimitpolicies/${ns}/${UNLISTED}`), [
    `Policy:     RateLimitPolicy ${ns}/${UNLISTED}`,
    'Resource:   ratelimitpolicies.kuadrant.io (v1)',
    'Summary:    0 clusters: 0 enforced, 0 overridden, 0 pending, 0 failed; 0 applied',
    'Problems:',
    '  NotSynced: no target of this policy can be synced: it has no ManifestWorks',
    '  TargetNotSynced: spec.targetRef: KindNotSynced: the GatewayClass of Gateway',
    `    ${ns}/auth-only-gw does not list ratelimitpolicies.v1.kuadrant.io in`,
    '    policiesToSync',
    'Clusters:   none',
  ]);
  assert.deepEqual(await output('explain', `authpolicy/${ns}/${UNPLACED}`), [
    `Policy:     AuthPolicy ${ns}/${UNPLACED}`,
    'Resource:   authpolicies.kuadrant.io (v1)',
    'Summary:    0 clusters: 0 enforced, 0 overridden, 0 pending, 0 failed; 0 applied',
    'Problems:',
    '  NoClusters: the targeted Gateways are placed on no cluster: nothing is synced',
    'Clusters:   none',
  ]);
});

test('explain -o json: the row as status -o json prints it', async () => {
  assert.deepEqual(await output('explain', `authpolicies/${ns}/${AUTH}`, '-o', 'json'), JSON.stringify(jsonItem('AuthPolicy', AUTH, AUTH_STATUS), null, 2).split('\n'));
});

test('explain: a policy that does not exist, a kind that is not synced, a malformed argument: exit code 2', async () => {
  assert.deepEqual(await cli('explain', `authpolicies/${ns}/nope`), {
    code: 2,
    stdout: '',
    stderr: `error: AuthPolicy ${ns}/nope not found (authpolicies.kuadrant.io)\n`,
  });
  assert.deepEqual(await cli('explain', `dnspolicies/${ns}/${AUTH}`), {
    code: 2,
    stdout: '',
    stderr: `error: "dnspolicies" is not a policy kind synced by ${controllerName} (synced: authpolicies.kuadrant.io, ratelimitpolicies.kuadrant.io)\n`,
  });
  const malformed = await cli('explain', 'payments-auth');
  assert.equal(malformed.code, 2);
  assert.equal(malformed.stdout, '');
  assert.equal(malformed.stderr, 'error: expected <resource>/<namespace>/<name> or <resource>/<name>, e.g. authpolicy/payments/payments-auth; got "payments-auth"\n');
});

test('a truncated annotation: the per-cluster part is read from the ManifestWorks', async () => {
  // The hub rewrites an annotation that differs from what it computes: stop it first.
  await controller!.stop();
  controller = undefined;
  // As the hub cuts it past 64 KiB: the summary, and the entries of the clusters no work shows.
  const truncated = { summary: { ...AUTH_STATUS.summary, truncated: true }, clusters: { 'spoke-2': overridden } };
  await mergePatch(hub, AUTH_POLICIES, ns, AUTH, { metadata: { annotations: { 'policysync.kuadrant.io/status': JSON.stringify(truncated) } } });
  assert.deepEqual(await hubStatus(hub, AUTH_POLICIES, ns, AUTH), truncated);

  assert.deepEqual(cells(await output('status', '-n', ns, '-o', 'wide')), WIDE);
  assert.deepEqual(await output('explain', `authpolicies/${ns}/${AUTH}`), [
    ...EXPLAIN_AUTH_HEAD,
    'Note:       the status annotation was cut short (too large); per-cluster detail',
    '            is read from the ManifestWorks',
    ...EXPLAIN_AUTH_TAIL,
  ]);
  const rebuilt: PolicyStatus = { ...AUTH_STATUS, summary: { ...AUTH_STATUS.summary, truncated: true } };
  assert.deepEqual(await output('explain', `AuthPolicy/${ns}/${AUTH}`, '-o', 'json'), JSON.stringify(jsonItem('AuthPolicy', AUTH, rebuilt), null, 2).split('\n'));
});
