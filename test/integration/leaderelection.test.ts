// Leader election against the real hub apiserver: one leader at a time, a graceful release hands over
// at once, a crashed holder's lease is taken only after it has gone unrenewed for a lease duration, and a
// leader cut off from the apiserver (its requests hang) stops leading at its renew deadline — counted from
// when its last successful renewal was sent, not answered — before a standby can take the lease.
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import { LeaderElector } from '../../src/kube/leaderelection.ts';
import { RESOURCES, collectionPath } from '../../src/kube/resource.ts';
import { microTime } from '../../src/core/k8s/lease.ts';
import { eventually } from '../../testkit/eventually.ts';
import { createNamespace, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, uniqueName } from '../../testkit/hub.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

const ns = uniqueName('lease');
const timing = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };
let sandbox: Sandbox;
let http: KubeHttp;
const electors: LeaderElector[] = [];
const closers: (() => void)[] = [];

before(async () => {
  sandbox = await testSandbox();
  http = hubHttp(sandbox);
  await createNamespace(http, ns);
});

after(async () => {
  for (const close of closers) close();
  await Promise.all(electors.map((e) => e.release()));
  await removeNamespace(http, ns);
  http.destroy();
});

function elector(lease: string, identity: string, events: string[], client: KubeHttp = http): LeaderElector {
  const e = new LeaderElector({
    ...timing,
    http: client,
    lease: { namespace: ns, name: lease },
    identity,
    onStartedLeading: () => events.push(`${identity} leads`),
    onStoppedLeading: () => events.push(`${identity} lost`),
  });
  electors.push(e);
  return e;
}

test('one leader at a time; a graceful release hands the lease over within a retry period', async () => {
  const events: string[] = [];
  const a = elector('handover', 'a', events);
  a.start();
  await eventually(() => Promise.resolve(a.isLeader), { what: 'a to lead' });
  const b = elector('handover', 'b', events);
  b.start();
  // a renews every retry period, and b tries as often: two renewals by a gave b two tries.
  await renewals('handover', 2);
  assert.equal(b.isLeader, false, 'b stays a standby while a renews');
  const released = performance.now();
  await a.release();
  await eventually(() => Promise.resolve(b.isLeader), { what: 'b to lead after the release', intervalMs: 20 });
  const handover = performance.now() - released;
  assert.ok(handover < timing.leaseDurationMs, `handover took ${handover.toFixed(0)} ms, not a lease duration`);
  assert.deepEqual(events, ['a leads', 'b leads']);
});

test("a crashed holder's lease is taken once it went unrenewed for a lease duration, not before", async () => {
  // A holder that will never renew: written directly, as a process killed with SIGKILL leaves it.
  await http.request('POST', collectionPath(RESOURCES.leases, ns), {
    body: {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'crash', namespace: ns },
      spec: { holderIdentity: 'ghost', leaseDurationSeconds: 3, acquireTime: microTime(Date.now()), renewTime: microTime(Date.now()), leaseTransitions: 0 },
    },
  });
  const events: string[] = [];
  const started = performance.now();
  const b = elector('crash', 'b', events);
  b.start();
  await eventually(() => Promise.resolve(b.isLeader), { what: 'b to take the abandoned lease', intervalMs: 20, timeoutMs: 15_000 });
  const waited = performance.now() - started;
  assert.ok(waited >= timing.leaseDurationMs, `took over after ${waited.toFixed(0)} ms, before the lease could expire`);
  assert.ok(waited < timing.leaseDurationMs + 2 * timing.retryPeriodMs * 1.2 + 500, `took over after ${waited.toFixed(0)} ms`);
  const lease = await http.request<{ spec: { holderIdentity: string; leaseTransitions: number } }>('GET', `${collectionPath(RESOURCES.leases, ns)}/crash`);
  assert.equal(lease.spec.holderIdentity, 'b');
  assert.equal(lease.spec.leaseTransitions, 1);
});

/** Resolves once the lease's renewTime has changed `count` times from now. */
async function renewals(lease: string, count: number): Promise<void> {
  const read = async (): Promise<string> => (await http.request<{ spec: { renewTime?: string } }>('GET', `${collectionPath(RESOURCES.leases, ns)}/${lease}`)).spec.renewTime ?? '';
  let last = await read();
  let seen = 0;
  await eventually(
    async () => {
      const now = await read();
      if (now !== last) seen++;
      last = now;
      return seen >= count || undefined;
    },
    { what: `${count} renewals of lease ${lease}`, intervalMs: 50 },
  );
}

/**
 * A TCP relay to the hub apiserver that can be frozen: while frozen it forwards nothing either way and
 * the connections stay open — a frozen apiserver or a half-open network, for this client only. Answers
 * (the apiserver's bytes) reach the client `answerDelayMs` late.
 */
async function freezableRelay(answerDelayMs = 0): Promise<{ kubeConfig: KubeConfig; freeze: () => void }> {
  const target = new URL(sandbox.hub.server);
  const sockets: Socket[] = [];
  let frozen = false;
  const relay: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.push(client, upstream);
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      const delay = from === upstream ? answerDelayMs : 0;
      from.on('data', (chunk: Buffer) => {
        if (frozen) return;
        if (delay > 0) setTimeout(() => frozen || to.write(chunk), delay);
        else to.write(chunk);
      });
      from.on('error', () => to.destroy());
      from.on('close', () => to.destroy());
    }
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    sockets.forEach((s) => s.destroy());
    relay.close();
  });
  const exported = JSON.parse(sandbox.kubeConfig('hub').exportConfig()) as { clusters: { cluster: { server: string } }[] };
  exported.clusters[0]!.cluster.server = `https://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(JSON.stringify(exported));
  return { kubeConfig, freeze: () => (frozen = true) };
}

test('a leader whose requests hang stops leading at its renew deadline, before a standby can acquire', async () => {
  const events: string[] = [];
  const relay = await freezableRelay();
  const cutOff = new KubeHttp(relay.kubeConfig);
  closers.push(() => cutOff.destroy());
  const a = elector('frozen', 'a', events, cutOff);
  a.start();
  await eventually(() => Promise.resolve(a.isLeader), { what: 'a to lead' });
  const b = elector('frozen', 'b', events);
  b.start();
  await renewals('frozen', 1);
  relay.freeze();
  const frozenAt = performance.now();
  await eventually(() => Promise.resolve(!a.isLeader || undefined), { what: 'a to stop leading', intervalMs: 10, timeoutMs: 10_000 });
  const stoppedAfter = performance.now() - frozenAt;
  // isLeader turns false at the deadline itself (write paths check it); onStoppedLeading comes from a timer
  // set for the same moment, which a busy event loop may run a little later: it must come, without the hung
  // renew request ever returning, and before a standby could acquire.
  await eventually(() => Promise.resolve(events.includes('a lost') || undefined), {
    what: 'onStoppedLeading to fire although the renew request never returned',
    intervalMs: 10,
    timeoutMs: timing.leaseDurationMs - timing.renewDeadlineMs,
  });
  assert.ok(stoppedAfter <= timing.renewDeadlineMs + 100, `a stopped leading ${stoppedAfter.toFixed(0)} ms after the freeze`);
  await eventually(() => Promise.resolve(b.isLeader), { what: 'b to take over', intervalMs: 20, timeoutMs: 15_000 });
  const takenAfter = performance.now() - frozenAt;
  assert.ok(takenAfter > stoppedAfter, 'b acquired only after a had stopped leading');
  assert.deepEqual(events, ['a leads', 'a lost', 'b leads']);
});

test("a cut-off leader's renew deadline counts from when its last renewal was sent, not from when the answer came", async () => {
  const answerDelayMs = 150;
  const events: string[] = [];
  const relay = await freezableRelay(answerDelayMs);
  const slow = new KubeHttp(relay.kubeConfig);
  closers.push(() => slow.destroy());
  const a = elector('slow', 'a', events, slow);
  a.start();
  await eventually(() => Promise.resolve(a.isLeader), { what: 'a to lead', timeoutMs: 10_000 });
  // Frozen once a renewal's answer has reached a, during its retry pause: that renewal is its last.
  await renewals('slow', 1);
  await new Promise((resolve) => setTimeout(resolve, answerDelayMs + 50));
  assert.deepEqual(events, ['a leads'], 'a leads, renewing in time, up to the freeze');
  relay.freeze();
  const stopped = await eventually(() => Promise.resolve(a.isLeader ? undefined : Date.now()), { what: 'a to stop leading', intervalMs: 5, timeoutMs: 10_000 });
  // renewTime is written once the round's read was answered: its send came 150 ms before (at least), and
  // the write's answer 150 ms after. Counted from the send, leadership ends about 150 ms before
  // renewTime + renew deadline; from the answer it would end about 150 ms after.
  const lease = await http.request<{ spec: { renewTime: string } }>('GET', `${collectionPath(RESOURCES.leases, ns)}/slow`);
  const deadline = Date.parse(lease.spec.renewTime) + timing.renewDeadlineMs;
  assert.ok(stopped <= deadline, `a stopped leading ${stopped - deadline} ms after renewTime + renew deadline: timed from the send, it is before`);
});
