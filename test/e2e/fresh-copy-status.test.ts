// A fresh copy gets its controller's verdict with no help (issue 23, item 6). The Kuadrant operator v1.2.0
// computes a policy's status from a list made when the policy appears, writes it with that list's
// resourceVersion, drops the write if it conflicts, and reacts to no metadata-only change of a policy. Under the
// ServerSideApply strategy the OCM work agent v1.2.1 created a copy, then merge-patched its ownerReferences
// (helper.ApplyOwnerReferences) 4–90 ms later: when the operator had listed in between, its first status
// write was refused (409) and the copy stayed silent until some unrelated event. Under the Update strategy
// the agent creates the copy with its owner reference in one write. Here, on a sandbox of its own with the
// real operator on every spoke and the real hub controller in-process: fresh copies, one at a time (the
// operator idle, so quickest to list) and in a burst, each get the operator's Accepted and Enforced for their
// generation within a bound and without any nudge, and each spoke's audit log shows every write to each copy:
// the agent's create, then only the operator's status writes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { AuditCursor, describeWrite, type AuditedWrite } from '../../testkit/audit.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, paramsConfigMap, placementDecision } from '../../testkit/fixtures.ts';
import { startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { getObject, serverSideApply } from '../../src/kube/writes.ts';
import { componentLog, untilKuadrantSeesGateway, warmUpKuadrant } from '../../testkit/kuadrant.ts';

const root = join(repoRoot, '.local', 'fresh-copy-status-sandbox');
const FIELD_MANAGER = 'policy-sync-tests';
/** The most a copy may wait for the operator's first word; it comes within a second or two when nothing is lost. */
const VERDICT_WITHIN_MS = 30_000;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
type Policy = KubeObject & { status?: { observedGeneration?: number; conditions?: Condition[] } };

let sandbox: Sandbox;
const spokes = new Map<string, KubeHttp>();
let hubClient: KubeHttp;
let hub: RunningHub | undefined;
const ns = uniqueName('fresh-copy');

before(async () => {
  sandbox = await Sandbox.up({ root, spokeControllers: ['kuadrant'], log: () => undefined, timeoutMs: 180_000 });
  for (const s of sandbox.spokes) spokes.set(s.name, new KubeHttp(sandbox.kubeConfig(s.name)));
  for (const [name, http] of spokes) await warmUpKuadrant(http, name, operatorLog(name), unownedClass);
  // The hub: params listing AuthPolicies, a class of this file's own, Gateway `shop` placed on every spoke.
  hubClient = new KubeHttp(sandbox.kubeConfig('hub'));
  const controllerName = testControllerName('fresh-copy');
  const className = uniqueName('hub-class');
  await createNamespace(hubClient, ns);
  for (const object of [
    paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }),
    gatewayClass(className, { namespace: ns, name: 'params' }, controllerName),
    gateway(ns, 'shop', className, 'shop'),
    placementDecision(ns, 'shop', [...spokes.keys()]),
  ]) await apply(hubClient, object);
  // The copies' target on each spoke (downstream namespace `{namespace}`): the operator needs it to exist.
  for (const [name, http] of spokes) {
    await createNamespace(http, ns);
    const spokeClass = uniqueName('spoke-class');
    await serverSideApply(http, RESOURCES.gatewayClasses, unownedClass(spokeClass), { fieldManager: FIELD_MANAGER });
    await serverSideApply(http, RESOURCES.gateways, gateway(ns, 'shop', spokeClass), { fieldManager: FIELD_MANAGER });
    await untilKuadrantSeesGateway(http, name, ns, 'shop', operatorLog(name));
  }
  hub = await startHub(sandbox.kubeConfig('hub'), { controllerName });
});

after(async () => {
  await hub?.stop();
  hubClient?.destroy();
  for (const http of spokes.values()) http.destroy();
  await sandbox?.down({ purge: true });
});

function unownedClass(name: string): KubeObject {
  return { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name }, spec: { controllerName: 'test.policy-sync.io/nobody' } };
}

function operatorLog(spokeName: string): () => string {
  return componentLog(sandbox, `kuadrant-operator/${spokeName}`);
}

function condition(p: Policy, type: string): Condition | undefined {
  return p.status?.conditions?.find((c) => c.type === type);
}

/** The operator's word on the copy, about the generation the copy has now: Accepted and Enforced. */
function verdictForGeneration(p: Policy | undefined): Policy | undefined {
  return p && p.status?.observedGeneration === p.metadata.generation && condition(p, 'Accepted') && condition(p, 'Enforced') ? p : undefined;
}

/** Until the copy of `name` on `spokeName` carries the operator's verdict for its generation: no nudge, a bound. */
async function verdictOnCopy(spokeName: string, name: string): Promise<Policy> {
  const http = spokes.get(spokeName)!;
  return eventually(async () => verdictForGeneration(await getObject<Policy>(http, AUTH_POLICIES, ns, name)), {
    what: `the Kuadrant operator's Accepted and Enforced for the generation of the fresh copy ${ns}/${name} on ${spokeName}, with no nudge`,
    timeoutMs: VERDICT_WITHIN_MS,
    intervalMs: 100,
    context: operatorLog(spokeName),
  });
}

/**
 * Every write to one copy in its spoke's audit log: the work agent created it and never wrote it again, and
 * all else is the operator writing its status subresource, the first of those accepted (a conflict there is
 * the lost verdict this file is about). Later conflicts of the operator with its own earlier write (it may
 * write twice from one list; the status it lost is the one it wrote already) are reported, not failed.
 */
function checkWrites(t: TestContext, spokeName: string, name: string, writes: AuditedWrite[]): void {
  const mine = writes.filter((w) => w.resource.split('/')[0] === 'authpolicies' && w.namespace === ns && w.name === name);
  t.diagnostic(`${spokeName} ${name}:\n  ${mine.map(describeWrite).join('\n  ')}`);
  const [create, ...rest] = mine;
  assert.ok(create, `the copy ${name} was written on ${spokeName}`);
  assert.deepEqual(
    { verb: create.verb, resource: create.resource, code: create.code, agent: create.userAgent.startsWith('work-agent') },
    { verb: 'create', resource: 'authpolicies', code: 201, agent: true },
    `the work agent created ${name} on ${spokeName} in one write: ${describeWrite(create)}`,
  );
  const others = rest.filter((w) => !(w.resource === 'authpolicies/status' && w.userAgent.startsWith('kuadrant-operator')));
  assert.deepEqual(others.map(describeWrite), [], `after its create, only the operator wrote ${name} on ${spokeName}, and only its status`);
  assert.ok(rest.length > 0, `the operator wrote the status of ${name} on ${spokeName}`);
  assert.equal(rest[0]!.code, 200, `the operator's first status write on ${name} on ${spokeName} was accepted: ${describeWrite(rest[0]!)}`);
  const conflicts = rest.filter((w) => w.code === 409);
  if (conflicts.length > 0) t.diagnostic(`${spokeName} ${name}: ${conflicts.length} later status write(s) of the operator conflicted with its own earlier one`);
}

async function placeAndJudge(t: TestContext, names: string[]): Promise<void> {
  const cursors = new Map([...spokes.keys()].map((s) => [s, AuditCursor.at(sandbox, s)]));
  const started = Date.now();
  await Promise.all(names.map((name) => apply(hubClient, authPolicy(ns, name, 'shop'))));
  const judged = await Promise.all(
    [...spokes.keys()].flatMap((s) => names.map(async (name) => ({ s, name, copy: await verdictOnCopy(s, name), ms: Date.now() - started }))),
  );
  for (const { s, name, copy, ms } of judged) {
    t.diagnostic(`${s} ${name}: generation ${copy.metadata.generation}, the operator's verdict there ${ms} ms after the hub policy was applied`);
    assert.equal(condition(copy, 'Accepted')?.status, 'True', `${name} on ${s} is Accepted`);
    assert.deepEqual(
      { status: condition(copy, 'Enforced')?.status, reason: condition(copy, 'Enforced')?.reason },
      { status: 'False', reason: 'MissingResource' },
      `${name} on ${s}: Enforced as the operator says with no Kuadrant CR`,
    );
  }
  for (const [s, cursor] of cursors) {
    // The audit line of a write may land a moment after a reader saw the write: wait until each copy's
    // status write is in the log.
    const writes = await eventually(
      () => {
        const all = cursor.since();
        const judged = (name: string) => all.some((w) => w.resource === 'authpolicies/status' && w.namespace === ns && w.name === name);
        return Promise.resolve(names.every(judged) ? all : undefined);
      },
      { what: `the status writes of ${names.join(', ')} in ${s}'s audit log`, timeoutMs: 10_000, intervalMs: 100 },
    );
    for (const name of names) checkWrites(t, s, name, writes);
  }
}

test('fresh copies placed one at a time each get the operator\'s verdict for their generation with no nudge; the agent writes each copy once', async (t) => {
  for (let i = 0; i < 6; i++) await placeAndJudge(t, [`single-${i}`]);
});

test('fresh copies placed in a burst each get the operator\'s verdict for their generation with no nudge; the agent writes each copy once', async (t) => {
  await placeAndJudge(t, ['burst-0', 'burst-1', 'burst-2', 'burst-3']);
});
