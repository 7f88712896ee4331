// Leader election against the real hub apiserver: one leader at a time, a graceful release hands over
// at once, a crashed holder's lease is taken only after it has gone unrenewed for a lease duration.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeHttp } from '../../src/kube/http.ts';
import { LeaderElector } from '../../src/kube/leaderelection.ts';
import { RESOURCES, collectionPath } from '../../src/kube/resource.ts';
import { microTime } from '../../src/core/lease.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespace, removeNamespace } from '../support/fixtures.ts';
import { hubHttp, uniqueName } from '../support/hub.ts';
import { testSandbox } from '../support/sandbox.ts';

const ns = uniqueName('lease');
const timing = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };
let http: KubeHttp;
const electors: LeaderElector[] = [];

before(async () => {
  http = hubHttp(await testSandbox());
  await createNamespace(http, ns);
});

after(async () => {
  await Promise.all(electors.map((e) => e.release()));
  await removeNamespace(http, ns);
  http.destroy();
});

function elector(lease: string, identity: string, events: string[]): LeaderElector {
  const e = new LeaderElector({
    ...timing,
    http,
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
  await new Promise((r) => setTimeout(r, 2 * timing.retryPeriodMs + 200));
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
