// Fault e (docs/reliability.md): the hub kube-apiserver frozen (SIGSTOP: its sockets stay open, nothing
// answers) past the lease duration, with two leader-elected replicas running as real processes, in the middle
// of the leader's writes for an edit of every policy. The leader cannot renew within its renew deadline: it
// stops writing and exits before the standby could take the lease; the standby's watches, silent, are torn
// down by the idle watchdog and restarted; after SIGCONT the standby takes the lease and converges the edit
// and a change made after the thaw. From the apiserver's audit log (the User-Agent names each replica's
// identity): no write by a replica that did not hold the lease — whatever its answer — and no ManifestWork
// deleted.
//
// The writes the leader had sent when the apiserver froze sit in the frozen server's sockets: after the thaw
// the apiserver reads and handles them although the leader reset those connections (or exited) long before —
// measured, it executes some, answered 504 or even 2xx. No client can take them back; what keeps them before
// the new leader is the standby's rule that a lease expires only by a read sent after the expiry (a read
// answered late, after the thaw, proves nothing), so it acquires a retry period after the thaw at the
// earliest, when the old leader's queued writes have been handled.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { POLICIES_SYNCED_ANNOTATION } from '../../src/core/metadatakeys.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, objectPath } from '../../src/kube/resource.ts';
import { AuditCursor, describeWrite } from '../../testkit/audit.ts';
import { eventually } from '../../testkit/eventually.ts';
import { deletionWatch, report, timed } from '../../testkit/faults.ts';
import { AUTH_POLICIES, apply, authPolicy, createNamespace, gateway, gatewayClass, list, paramsConfigMap, placementDecision, remove, removeNamespace } from '../../testkit/fixtures.ts';
import { ourWorks } from '../../testkit/works.ts';
import { hubHttp, testControllerName, uniqueName } from '../../testkit/hub.ts';
import { electionArgs, identityOf, logOf, logRecords, startReplica, type Replica } from '../../testkit/replicas.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

const POLICIES = 10;
const TIMING = { leaseMs: 4_000, renewMs: 3_000, retryMs: 500 };
const REQUEST_TIMEOUT_MS = 2_000;
const WATCH_IDLE_MS = 6_000;
const controllerName = testControllerName('freeze');
const ns = uniqueName('faults-freeze');
const clusters = [`${ns}-c1`, `${ns}-c2`];
const className = uniqueName('freeze');
const LEASE = 'policy-sync-hub-freeze';

let sandbox: Sandbox;
let http: KubeHttp;
const replicas: Replica[] = [];
let frozen = false;

before(async () => {
  sandbox = await testSandbox();
  http = hubHttp(sandbox);
  for (const n of [ns, ...clusters]) await createNamespace(http, n);
  await apply(http, paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }));
  await apply(http, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName));
  await apply(http, gateway(ns, 'gw', className, 'fake'));
  await apply(http, placementDecision(ns, 'fake', clusters));
  for (let i = 0; i < POLICIES; i++) await apply(http, authPolicy(ns, `p${i}`, 'gw'));
});

after(async () => {
  if (frozen) sandbox.freeze('kube-apiserver/hub', false);
  for (const r of replicas) r.child.kill('SIGKILL');
  for (const w of await ourWorks(http, { controllerName })) await remove(http, w);
  await remove(http, gatewayClass(className, { namespace: ns, name: 'params' }));
  for (const n of [ns, ...clusters]) await removeNamespace(http, n);
  http.destroy();
});

/** The edit made just before the freeze: the works of every policy carry it once converged. */
const EDITED = 'allow = true';
function edited(name: string): KubeObject {
  return authPolicy(ns, name, 'gw', { rules: { authorization: { deny: { opa: { rego: EDITED } } } } });
}
function carriesEdit(work: KubeObject): boolean {
  return JSON.stringify((work.spec as { workload?: unknown } | undefined)?.workload ?? {}).includes(EDITED);
}

async function leaseSpec(): Promise<{ holderIdentity?: string; acquireTime?: string } | undefined> {
  const l = await http.request<KubeObject>('GET', objectPath(RESOURCES.leases, ns, LEASE)).catch(() => undefined);
  return l?.spec;
}

/** The standby noticed a silent watch: its watchdog tore it down ("WatchIdle") and the watcher retried. */
function sawIdleWatch(r: Replica): boolean {
  return logRecords(r).some((l) => l.msg === 'list/watch failed; retrying' && String(l.err).includes('WatchIdle'));
}

test('e. the hub apiserver frozen past the lease duration amid the leader\'s writes, two replicas: the leader stops before the standby leads, none of its writes lands after, watches are replaced, nothing is deleted, all converges', async () => {
  const args = [...electionArgs({ namespace: ns, name: LEASE }, TIMING), `--request-timeout=${REQUEST_TIMEOUT_MS}ms`, `--watch-idle-timeout=${WATCH_IDLE_MS}ms`];
  for (const name of ['replica-a', 'replica-b']) replicas.push(await startReplica(sandbox, name, controllerName, args));
  const identities = await eventually(
    () => {
      const ids = replicas.map(identityOf);
      return Promise.resolve(ids.every((id) => id !== undefined) ? (ids) : undefined);
    },
    { what: 'both replicas to campaign', timeoutMs: 60_000, context: () => replicas.map((r) => logOf(r)).join('\n') },
  );
  await eventually(async () => (await ourWorks(http, { controllerName })).length === POLICIES * clusters.length || undefined, { what: `${POLICIES * clusters.length} works`, timeoutMs: 60_000 });
  // Converged first (every policy annotated), so that the freeze comes in the middle of the edit's writes.
  await eventually(
    async () => (await list(http, AUTH_POLICIES, ns)).every((p) => p.metadata.annotations?.[POLICIES_SYNCED_ANNOTATION]) || undefined,
    { what: `all ${POLICIES} policies annotated`, timeoutMs: 60_000 },
  );
  const holder = (await leaseSpec())?.holderIdentity;
  const leaderIndex = identities.indexOf(holder ?? '');
  assert.ok(leaderIndex >= 0, `the lease is held by one of the replicas (${holder})`);
  const [leader, standby] = [replicas[leaderIndex]!, replicas[1 - leaderIndex]!];
  const [leaderId, standbyId] = [identities[leaderIndex]!, identities[1 - leaderIndex]!];
  const before = new Map((await ourWorks(http, { controllerName })).map((w) => [`${w.metadata.namespace}/${w.metadata.name}`, w.metadata.uid]));
  const audit = AuditCursor.at(sandbox, 'hub');
  const deletions = deletionWatch(sandbox);

  // Every policy edited; frozen as soon as the leader's first work write for the edit is logged, so that
  // the rest of its writes are on their way. Nothing may be asked of the hub from then until the thaw.
  for (let i = 0; i < POLICIES; i++) await apply(http, edited(`p${i}`));
  await eventually(() => Promise.resolve(audit.since().some((w) => w.userAgent.includes(leaderId) && w.resource === 'manifestworks') || undefined), {
    what: "the leader's first work write for the edit",
    intervalMs: 2,
    timeoutMs: 10_000,
  });
  sandbox.freeze('kube-apiserver/hub', true);
  frozen = true;
  const frozenAt = performance.now();
  let leaderExit: { code: number | null; signal: NodeJS.Signals | null; afterMs: number } | undefined;
  void leader.exit.then((e) => (leaderExit = { ...e, afterMs: performance.now() - frozenAt }));
  try {
    const pastLease = (): boolean => performance.now() - frozenAt > TIMING.leaseMs + TIMING.retryMs;
    await eventually(() => Promise.resolve((leaderExit !== undefined && sawIdleWatch(standby) && pastLease()) || undefined), {
      what: 'the leader to give up its lease and the standby to replace its silent watches, past the lease duration',
      intervalMs: 100,
      timeoutMs: 30_000,
      context: () => `${logOf(leader)}\n${logOf(standby)}`,
    });
  } finally {
    sandbox.freeze('kube-apiserver/hub', false);
    frozen = false;
  }
  const thawedWall = Date.now();
  const frozenMs = Math.round(performance.now() - frozenAt);
  assert.equal(leaderExit?.code, 1, `the leader exits when it cannot renew: ${logOf(leader)}`);
  assert.ok(leaderExit.afterMs <= TIMING.leaseMs + 1_000, `the leader stopped ${Math.round(leaderExit.afterMs)} ms into the freeze, within the lease duration (${TIMING.leaseMs} ms)`);

  const convergeMs = await timed(async () => {
    await apply(http, edited('after-thaw'));
    await eventually(async () => (await leaseSpec())?.holderIdentity === standbyId || undefined, { what: 'the standby to take the lease', timeoutMs: 30_000, context: () => logOf(standby) });
    await eventually(async () => ((await ourWorks(http, { controllerName })).filter(carriesEdit).length === (POLICIES + 1) * clusters.length ? true : undefined), {
      what: `${(POLICIES + 1) * clusters.length} works, all with the edit`,
      timeoutMs: 60_000,
      context: () => logOf(standby),
    });
  });
  const acquired = Date.parse((await leaseSpec())?.acquireTime ?? '');
  assert.ok(Number.isFinite(acquired), 'the lease records when the standby acquired it');

  const writes = audit.since();
  const by = (id: string) => writes.filter((w) => w.userAgent.includes(id));
  // The old leader exited during the freeze (asserted above): what the apiserver handles of its writes after
  // the thaw was sent before, while its lease was valid, and sat in the frozen server's sockets. Each is
  // counted here whatever its answer (a 504 may still have been executed): all must be done before the
  // standby acquired.
  const queued = by(leaderId).filter((w) => Date.parse(w.at) >= thawedWall);
  const lateByLeader = by(leaderId).filter((w) => Date.parse(w.at) >= acquired);
  const earlyByStandby = by(standbyId).filter((w) => Date.parse(w.at) < acquired);
  assert.deepEqual(lateByLeader.map(describeWrite), [], `no write from the old leader handled, whatever the answer, once the standby held the lease (acquired ${new Date(acquired).toISOString()})`);
  assert.deepEqual(earlyByStandby.map(describeWrite), [], 'no write from the standby before it held the lease');
  assert.ok(by(standbyId).length >= clusters.length, 'the new leader wrote the new policy\'s works');
  await deletions.assertNone('hub apiserver frozen past the lease duration');
  const afterWorks = new Map((await ourWorks(http, { controllerName })).map((w) => [`${w.metadata.namespace}/${w.metadata.name}`, w.metadata.uid]));
  for (const [key, uid] of before) assert.equal(afterWorks.get(key), uid, `work ${key} kept its uid`);
  const codes = [...new Set(queued.map((w) => w.code))].sort().map((c) => `${c}×${queued.filter((w) => w.code === c).length}`).join(',');
  report('e (hub apiserver frozen past the lease amid the leader\'s writes, two replicas)', {
    frozenMs,
    leaderStoppedMs: Math.round(leaderExit.afterMs),
    leaderWritesHandledAfterThaw: `${queued.length}(${codes || 'none'})`,
    lastOfThemBeforeAcquireMs: queued.length > 0 ? acquired - Math.max(...queued.map((w) => Date.parse(w.at))) : 'n/a',
    acquiredAfterThawMs: acquired - thawedWall,
    deletions: 0,
    convergeMs,
  });
});
