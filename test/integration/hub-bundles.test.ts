// The hub writing bundles (docs/design/fleet.md, `--work-shape bundled`), against the real hub apiserver and OCM's
// real work agents on spoke-1 and spoke-2:
// - a running fleet of works of their own moves into bundles with no spoke DELETE (both spokes' audit logs), and
//   the works of their own are retired once the bundles carry their copies applied;
// - a restart on bundles writes no ManifestWork;
// - in bundles: a new policy's copy goes into the bundle, an edit rewrites that copy alone (its neighbours keep
//   their `since`), a deleted policy's copy is dropped from its bundle and deleted on the spokes alone;
// - the CLI reads a policy's copies out of the bundles (`readPolicyWorks`).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { bundleOf, isBundle, unpackBundle } from '../../src/core/works/bundle.ts';
import { readSourceRef } from '../../src/core/works/manifestwork.ts';
import { workState } from '../../src/core/works/workstate.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import { readPolicyWorks } from '../../src/cli/status.ts';
import { AuditCursor, describeWrite, type AuditedWrite } from '../../testkit/audit.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, quiescent, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import type { HubOptions } from '../../src/hub/assembly.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';
import { ourWorkObjects } from '../../testkit/works.ts';

const SPOKES = ['spoke-1', 'spoke-2'];
const WITHIN_MS = 90_000;
const controllerName = testControllerName('bundles');
const ns = uniqueName('hubbundles');
const className = uniqueName('class');
const AUTH = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };

let sandbox: Sandbox;
let http: KubeHttp;
const spokes = new Map<string, KubeHttp>();
let hub: RunningHub | undefined;

before(async () => {
  sandbox = await testSandbox();
  http = hubHttp(sandbox);
  for (const s of SPOKES) {
    const spoke = new KubeHttp(sandbox.kubeConfig(s));
    spokes.set(s, spoke);
    await createNamespace(spoke, ns);
  }
  await createNamespace(http, ns);
  await apply(http, paramsConfigMap(ns, 'params', { policiesToSync: [AUTH] }));
  await apply(http, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(http, gateway(ns, 'gw', className, 'everywhere'));
  await apply(http, placementDecision(ns, 'everywhere', SPOKES));
});

after(async () => {
  await hub?.stop();
  for (const name of ['p1', 'p2', 'p3', 'p4']) await remove(http, authPolicy(ns, name, 'gw'));
  // The agents take their finalizers off as they delete the copies.
  for (const w of await ourWorkObjects(http, { controllerName })) await remove(http, w);
  await eventually(async () => (await ourWorkObjects(http, { controllerName })).length === 0 || undefined, { what: 'our works gone', timeoutMs: WITHIN_MS });
  await remove(http, gatewayClass(className, { namespace: ns, name: 'params' }));
  await removeNamespace(http, ns);
  for (const spoke of spokes.values()) {
    await removeNamespace(spoke, ns);
    spoke.destroy();
  }
  http.destroy();
});

async function run(options: Partial<HubOptions> = {}): Promise<RunningHub> {
  await hub?.stop();
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName, ...options });
  return hub;
}

/** This file's works (its controller's), split into bundles and works of their own. */
async function works(): Promise<{ bundles: KubeObject[]; own: KubeObject[] }> {
  const all = (await ourWorkObjects(http, { controllerName })).filter((w) => !w.metadata.deletionTimestamp);
  return { bundles: all.filter(isBundle), own: all.filter((w) => !isBundle(w)) };
}

/** The policy names whose copies the bundles of `cluster` carry, applied by the agent. */
function appliedIn(bundles: readonly KubeObject[], cluster: string): string[] {
  return bundles
    .filter((b) => b.metadata.namespace === cluster)
    .flatMap((b) => unpackBundle(b) ?? [])
    .filter((c) => workState(c) === 'applied')
    .map((c) => readSourceRef(c)?.name ?? '')
    .sort();
}

const spokeCopy = (cluster: string, name: string) => get(spokes.get(cluster)!, AUTH_POLICIES, ns, name);
const copyDeletes = (cursor: AuditCursor): AuditedWrite[] => cursor.since().filter((w) => w.verb === 'delete' && w.resource === 'authpolicies' && w.namespace === ns);

test('a running fleet moves into bundles with no spoke DELETE; its works of their own are retired', { timeout: 240_000 }, async () => {
  await run({ workShape: 'per-placement' });
  for (const name of ['p1', 'p2', 'p3']) await apply(http, authPolicy(ns, name, 'gw'));
  await eventually(
    async () => {
      const { own, bundles } = await works();
      return bundles.length === 0 && own.length === 6 && own.every((w) => workState(w) === 'applied') && own;
    },
    { what: 'six works of their own, applied', timeoutMs: WITHIN_MS, context: () => workAgentLogs(sandbox) },
  );
  for (const s of SPOKES) for (const name of ['p1', 'p2', 'p3']) assert.ok(await spokeCopy(s, name), `${name} on ${s}`);

  const cursors = SPOKES.map((s) => AuditCursor.at(sandbox, s));
  await run({ workShape: 'bundled' });
  const moved = await eventually(
    async () => {
      const { own, bundles } = await works();
      return own.length === 0 && SPOKES.every((s) => appliedIn(bundles, s).join() === 'p1,p2,p3') && bundles;
    },
    { what: 'every copy carried by a bundle, applied, and no work of its own left', timeoutMs: WITHIN_MS, context: () => workAgentLogs(sandbox) },
  );
  assert.equal(moved.length, 2, 'one bundle per cluster');
  const deletes = cursors.flatMap(copyDeletes);
  assert.deepEqual(deletes.map(describeWrite), [], 'no copy was deleted on a spoke during the move');
  for (const s of SPOKES) for (const name of ['p1', 'p2', 'p3']) assert.ok(await spokeCopy(s, name), `${name} still on ${s}`);
});

test('a restart on bundles writes no ManifestWork', { timeout: 120_000 }, async () => {
  const { controller } = await run({ workShape: 'bundled' });
  await quiescent(controller, 'caught up on bundles');
  const audit = AuditCursor.at(sandbox, 'hub');
  const again = await run({ workShape: 'bundled' });
  await quiescent(again.controller, 'restarted on bundles');
  const writes = audit.since().filter((w) => w.resource === 'manifestworks' && w.userAgent.startsWith('policy-sync'));
  assert.deepEqual(writes.map(describeWrite), []);
});

test('in bundles: a new copy is put into the bundle, an edit rewrites its copy alone, a deleted policy drops its copy alone', { timeout: 240_000 }, async () => {
  await run({ workShape: 'bundled' });
  await apply(http, authPolicy(ns, 'p4', 'gw'));
  let { bundles } = await eventually(
    async () => {
      const seen = await works();
      return seen.own.length === 0 && SPOKES.every((s) => appliedIn(seen.bundles, s).join() === 'p1,p2,p3,p4') && seen;
    },
    { what: 'p4 carried by the bundles, applied', timeoutMs: WITHIN_MS, context: () => workAgentLogs(sandbox) },
  );
  // A copy's generation is its entry's `since`: the bundle generation from which it is as it is.
  const sinceOf = (of: readonly KubeObject[], name: string) =>
    of
      .flatMap((b) => unpackBundle(b) ?? [])
      .filter((c) => readSourceRef(c)?.name === name)
      .map((c) => `${c.metadata.namespace}:${c.metadata.generation}`)
      .sort();
  const before = { p1: sinceOf(bundles, 'p1'), p3: sinceOf(bundles, 'p3') };

  const rego = 'allow = input.context.request.http.method == "GET"';
  await apply(http, authPolicy(ns, 'p2', 'gw', { rules: { authorization: { deny: { opa: { rego } } } } }));
  for (const s of SPOKES) {
    await eventually(async () => JSON.stringify((await spokeCopy(s, 'p2'))?.spec ?? {}).includes('input.context.request.http.method'), { what: `p2's edit on ${s}`, timeoutMs: WITHIN_MS, context: () => workAgentLogs(sandbox) });
  }
  ({ bundles } = await works());
  assert.deepEqual({ p1: sinceOf(bundles, 'p1'), p3: sinceOf(bundles, 'p3') }, before, "a neighbour's edit leaves the other copies as they were");

  const copies = await readPolicyWorks(http, controllerName, { group: 'kuadrant.io', resource: 'authpolicies', namespace: ns, name: 'p2' });
  assert.deepEqual(copies.map((c) => c.metadata.namespace).sort(), SPOKES, 'the CLI reads one copy of p2 per cluster');
  assert.ok(copies.every((c) => bundleOf(c) !== undefined), 'read out of the bundles');

  const cursors = SPOKES.map((s) => AuditCursor.at(sandbox, s));
  await remove(http, authPolicy(ns, 'p1', 'gw'));
  for (const s of SPOKES) await eventually(async () => (await spokeCopy(s, 'p1')) === undefined, { what: `p1 deleted on ${s}`, timeoutMs: WITHIN_MS, context: () => workAgentLogs(sandbox) });
  await eventually(async () => SPOKES.every((s) => appliedIn(bundles, s).join() === 'p2,p3,p4') || ((bundles = (await works()).bundles), undefined), { what: 'the bundles without p1, applied', timeoutMs: WITHIN_MS });
  assert.deepEqual(
    cursors.flatMap(copyDeletes).map((w) => `${w.name} ${w.code}`),
    ['p1 200', 'p1 200'],
    cursors.flatMap(copyDeletes).map(describeWrite).join('\n'),
  );
  for (const s of SPOKES) for (const name of ['p2', 'p3', 'p4']) assert.ok(await spokeCopy(s, name), `${name} stays on ${s}`);
});
