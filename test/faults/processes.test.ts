// Process and connection faults on the real plane, each asserting that no ManifestWork is deleted (or
// re-created: the works keep their uids) and that everything converges after:
//  f. the controller SIGKILLed in the middle of a fan-out, then started again: exactly P×C works;
//  g. the hub apiserver restarted with an etcd compaction during a fan-out; a spoke's work agent
//     stopped for a while and started again; a spoke apiserver restarted.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, get, list, paramsConfigMap, patchData, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { compactEtcd } from '../../testkit/etcd.ts';
import { ourWorks } from '../../testkit/works.ts';
import { hubHttp, quiescent, releaseSpokes, spokeClients, startHub, testControllerName, uniqueName, workShapeArgs, type RunningHub } from '../../testkit/hub.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';
import { copyUids, deletionWatch, report, timed } from '../../testkit/faults.ts';

const POLICIES = 40;
let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
const ns = uniqueName('faults-proc');
const fakeClusters = [`${ns}-c1`, `${ns}-c2`];
const classes: KubeObject[] = [];
const children: ChildProcess[] = [];
let running: RunningHub | undefined;

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  for (const n of [ns, ...fakeClusters]) await createNamespace(hub, n);
  for (const spoke of spokes.values()) await createNamespace(spoke, ns);
  await apply(hub, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  // No agent serves the fake clusters: their works are plain hub objects, written as fast as allowed.
  await apply(hub, placementDecision(ns, 'fake', fakeClusters));
  await apply(hub, placementDecision(ns, 'real', ['spoke-1', 'spoke-2']));
});

after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await running?.stop();
  await sandbox.start('work-agent/spoke-1');
  const works = await list(hub, RESOURCES.manifestWorks, undefined, 'app.kubernetes.io/managed-by=policy-sync');
  for (const w of works.filter((x) => x.metadata.annotations?.['policysync.kuadrant.io/source-ref']?.includes(`"namespace":"${ns}"`))) await remove(hub, w);
  for (const c of classes) await remove(hub, c);
  for (const n of [ns, ...fakeClusters]) await removeNamespace(hub, n);
  await releaseSpokes(spokes, ns);
  hub.destroy();
});

/** A class of its own (its own controller name) and a Gateway on `placement`. */
async function world(suite: string, placement: string): Promise<{ controllerName: string; gatewayName: string }> {
  const controllerName = testControllerName(suite);
  const cls = gatewayClass(uniqueName(suite), { namespace: ns, name: 'params' }, controllerName);
  classes.push(cls);
  await apply(hub, cls);
  const gatewayName = `gw-${suite}`;
  await apply(hub, gateway(ns, gatewayName, cls.metadata.name, placement));
  return { controllerName, gatewayName };
}

/** Exactly one work per (policy, cluster): `expected` works, all distinct pairs. */
async function exactly(controllerName: string, expected: number): Promise<KubeObject[]> {
  return eventually(
    async () => {
      const works = await ourWorks(hub, { controllerName });
      const pairs = new Set(works.map((w) => `${w.metadata.namespace}|${w.metadata.annotations?.['policysync.kuadrant.io/source-ref']}`));
      return works.length === expected && pairs.size === expected ? works : undefined;
    },
    { what: `exactly ${expected} works`, timeoutMs: 120_000 },
  );
}

test('f. the controller SIGKILLed in the middle of a fan-out, then restarted: exactly P×C works, none deleted', async () => {
  const { controllerName, gatewayName } = await world('sigkill', 'fake');
  await Promise.all(Array.from({ length: POLICIES }, (_, i) => apply(hub, authPolicy(ns, `kill-${i}`, gatewayName))));
  const deletions = deletionWatch(sandbox);
  const start = (): ChildProcess => {
    // 20 writes/s: the fan-out of 80 works takes seconds, long enough to be cut in the middle.
    const child = spawn(process.execPath, [join(repoRoot, 'bin', 'policy-sync.js'), 'hub', `--kubeconfig=${sandbox.hub.kubeconfig}`, `--controller-name=${controllerName}`,
      '--spoke-config=none', '--trust-decision-labels', '--qps=20', '--burst=1', '--health-probe-bind-address=127.0.0.1:0', '--metrics-bind-address=0',
      ...workShapeArgs()], { stdio: 'ignore' });
    children.push(child);
    return child;
  };
  const first = start();
  const partial = await eventually(async () => {
    const n = (await ourWorks(hub, { controllerName })).length;
    return n >= 10 ? n : undefined;
  }, { what: 'the fan-out to be under way', intervalMs: 20 });
  first.kill('SIGKILL');
  await new Promise((resolve) => first.once('exit', resolve));
  const cut = (await ourWorks(hub, { controllerName })).length;
  assert.ok(cut < POLICIES * fakeClusters.length, `killed in the middle (${partial} then ${cut} works)`);
  const ms = await timed(async () => {
    start();
    await exactly(controllerName, POLICIES * fakeClusters.length);
  });
  await deletions.assertNone('controller SIGKILLed mid fan-out');
  report('f (controller SIGKILL mid fan-out)', { worksWhenKilled: cut, works: POLICIES * fakeClusters.length, deletions: 0, convergeMs: ms });
  children.pop()?.kill('SIGTERM');
});

test('g1. the hub apiserver restarted with an etcd compaction during a fan-out: no work deleted or re-created', async () => {
  const { controllerName, gatewayName } = await world('restart', 'fake');
  running = await startHub(sandbox.kubeConfig('hub'), { controllerName, qps: 20, burst: 1 });
  await Promise.all(Array.from({ length: POLICIES }, (_, i) => apply(hub, authPolicy(ns, `restart-${i}`, gatewayName))));
  await eventually(async () => (await ourWorks(hub, { controllerName })).length >= 10 || undefined, { what: 'the fan-out to be under way', intervalMs: 20 });
  const before = new Map((await ourWorks(hub, { controllerName })).map((w) => [`${w.metadata.namespace}/${w.metadata.name}`, w.metadata.uid]));
  // The apiserver's request counter restarts with it: the works' uids are what proves nothing was deleted.
  const ms = await timed(async () => {
    await compactEtcd(sandbox);
    await sandbox.restart('kube-apiserver/hub');
    await exactly(controllerName, POLICIES * fakeClusters.length);
    await quiescent(running!.controller, 'after the hub apiserver restart');
  });
  const after = new Map((await ourWorks(hub, { controllerName })).map((w) => [`${w.metadata.namespace}/${w.metadata.name}`, w.metadata.uid]));
  for (const [key, uid] of before) assert.equal(after.get(key), uid, `work ${key} kept its uid`);
  report('g1 (hub apiserver restart + etcd compaction mid fan-out)', { worksBefore: before.size, deletions: 0, convergeMs: ms });
  await running.stop();
  running = undefined;
});

test('g2/g3. a spoke work agent stopped then started, and a spoke apiserver restarted: nothing deleted, copies kept, edits arrive', async () => {
  const { controllerName, gatewayName } = await world('spokes', 'real');
  running = await startHub(sandbox.kubeConfig('hub'), { controllerName });
  const policy = authPolicy(ns, 'spoke-faults', gatewayName);
  await apply(hub, policy);
  const rego = async (cluster: string): Promise<string | undefined> =>
    ((await get(spokes.get(cluster)!, AUTH_POLICIES, ns, 'spoke-faults'))?.spec as { rules?: { authorization?: { deny?: { opa?: { rego?: string } } } } } | undefined)?.rules?.authorization?.deny?.opa?.rego;
  const edit = async (value: string): Promise<void> => patchData(hub, policy, { spec: { rules: { authorization: { deny: { opa: { rego: value } } } } } });
  const everywhere = async (value: string): Promise<void> => {
    await eventually(async () => (await rego('spoke-1')) === value && (await rego('spoke-2')) === value, { what: `both copies to carry "${value}"`, timeoutMs: 90_000, context: () => workAgentLogs(sandbox) });
  };
  await everywhere('allow = false');
  const uids = await copyUids(spokes, AUTH_POLICIES, ns, 'spoke-faults');
  const deletions = deletionWatch(sandbox);

  await sandbox.stop('work-agent/spoke-1');
  await edit('allow = true');
  await eventually(async () => (await rego('spoke-2')) === 'allow = true', { what: 'spoke-2 to get the edit' });
  await quiescent(running.controller, 'while the work agent of spoke-1 is down');
  const agentMs = await timed(async () => {
    await sandbox.start('work-agent/spoke-1');
    await everywhere('allow = true');
  });
  await deletions.assertNone('work agent stopped and started');

  const apiserverMs = await timed(async () => {
    await sandbox.restart('kube-apiserver/spoke-1');
    await edit('allow = input.ok');
    await everywhere('allow = input.ok');
  });
  await deletions.assertNone('spoke apiserver restarted');
  assert.deepEqual(await copyUids(spokes, AUTH_POLICIES, ns, 'spoke-faults'), uids, 'the spoke copies were never re-created');
  report('g2 (work agent stopped, then started)', { deletions: 0, convergeMs: agentMs });
  report('g3 (spoke apiserver restarted)', { deletions: 0, convergeMs: apiserverMs });
});

