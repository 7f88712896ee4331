// The elector's timing on a fake clock, against an in-memory lease whose answers take as long as the test
// says: the renew deadline and the write fence count from when the successful round was sent; a standby's
// expiry from the arrival of the answer that first showed the record to the send of the read that shows it still.
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { FakeClock } from '../../testkit/fake-clock.ts';
import { ApiError } from './http.ts';
import { LeaderElector } from './leaderelection.ts';

const timing = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
// No jitter on the retry period: every round is sent at a known time.
mock.method(Math, 'random', () => 0);

/** A lease store answering each request after `latencyMs` on the fake clock, or never while `hung`. */
function fakeApi(clock: FakeClock) {
  const api = { latencyMs: 1_000, hung: false, failing: false, lease: undefined as unknown, sent: [] as number[] };
  const request = <T>(method: string, _path: string, o: { body?: unknown; signal?: AbortSignal } = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      api.sent.push(clock.now());
      o.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      if (api.hung) return;
      clock.setTimer(() => {
        if (api.failing) reject(new ApiError(500, 'InternalError', '', method, _path));
        else if (method === 'GET') {
          if (api.lease === undefined) reject(new ApiError(404, 'NotFound', '', method, _path));
          else resolve(api.lease as T);
        } else {
          api.lease = o.body;
          resolve(o.body as T);
        }
      }, api.latencyMs);
    });
  return { api, http: { request } as ConstructorParameters<typeof LeaderElector>[0]['http'] };
}

function elector(clock: FakeClock, http: ConstructorParameters<typeof LeaderElector>[0]['http'], events: string[]): LeaderElector {
  return new LeaderElector({
    ...timing,
    http,
    clock,
    lease: { namespace: 'ns', name: 'l' },
    identity: 'me',
    onStartedLeading: () => events.push(`leads at ${clock.now()}`),
    onStoppedLeading: () => events.push(`lost at ${clock.now()}`),
  });
}

test('the renew deadline counts from when the last successful round was sent, not from its answer', async () => {
  const clock = new FakeClock();
  const { api, http } = fakeApi(clock);
  const events: string[] = [];
  const e = elector(clock, http, events);
  e.start();
  await clock.advanceAsync(2_000); // GET answered at 1 s, create at 2 s
  assert.deepEqual(events, ['leads at 2000']);
  await clock.advanceAsync(4_000); // the renewal sent at 4 s is answered at 6 s
  assert.equal(api.sent.at(-1), 5_000, 'the renewal was a GET at 4 s and a PUT at 5 s');
  api.hung = true; // from here on nothing answers
  await clock.advanceAsync(13_999 - clock.now());
  assert.equal(e.isLeader, true, 'still within 10 s of the renewal sent at 4 s');
  await clock.advanceAsync(1);
  assert.equal(e.isLeader, false, 'not leading 10 s after the send — counting from its answer (6 s) would say 16 s');
  assert.deepEqual(events, ['leads at 2000', 'lost at 14000']);
});

test('a write may be in flight until a margin before a standby could acquire: sent + lease − (lease − renew)/2', async () => {
  const clock = new FakeClock();
  const { api, http } = fakeApi(clock);
  const e = elector(clock, http, []);
  assert.ok(e.inFlightMs() <= 0, 'nothing in flight before leading');
  e.start();
  await clock.advanceAsync(2_000); // acquired by the round sent at 0
  assert.equal(e.inFlightMs(), 0 + 15_000 - 2_500 - 2_000);
  await clock.advanceAsync(4_000); // renewed by the round sent at 4 s
  assert.equal(e.inFlightMs(), 4_000 + 15_000 - 2_500 - 6_000);
  api.hung = true;
  await clock.advanceAsync(14_000 - clock.now()); // the renew deadline: no write may be sent...
  assert.equal(e.isLeader, false);
  assert.ok(e.inFlightMs() <= 0, 'and none already sent may stay in flight once leadership is lost');
});

test('an acquire answered after the renew deadline does not lead until a renewal sent in time succeeds', async () => {
  const clock = new FakeClock();
  const { api, http } = fakeApi(clock);
  const events: string[] = [];
  api.latencyMs = 6_000; // the acquire's GET and create take 12 s in all
  const e = elector(clock, http, events);
  e.start();
  await clock.advanceAsync(12_000);
  assert.deepEqual(events, [], 'the lease is ours, but its renew deadline passed before the answer came');
  assert.equal(e.isLeader, false);
  api.latencyMs = 100;
  await clock.advanceAsync(3_000); // the next round (after a retry period) renews it
  assert.equal(events.length, 1);
  assert.equal(e.isLeader, true);
  const sentAt = api.sent.at(-2)!; // the round's GET
  assert.equal(e.inFlightMs(), sentAt + 12_500 - clock.now(), 'timed from that round');
});

/** Another holder's lease, renewed last before the test began. */
function heldByOther(): unknown {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'ns', resourceVersion: '1' }, spec: { holderIdentity: 'other', leaseDurationSeconds: 15 } };
}

test('a standby judges expiry when its read was sent: an answer that comes late (a frozen apiserver) takes nothing', async () => {
  const clock = new FakeClock();
  const { api, http } = fakeApi(clock);
  api.lease = heldByOther();
  const events: string[] = [];
  elector(clock, http, events).start();
  // Rounds are sent every 3 s (1 s answer + 2 s retry period): the record is seen at 1 s, so expires at 16 s.
  await clock.advanceAsync(14_999);
  api.latencyMs = 5_000; // the read sent at 15 s is answered at 20 s, past the expiry
  await clock.advanceAsync(1);
  api.latencyMs = 100;
  await clock.advanceAsync(20_500 - clock.now());
  assert.deepEqual(events, [], 'answered past 16 s, but sent before: no evidence that the lease expired');
  await clock.advanceAsync(3_000);
  assert.deepEqual(events, ['leads at 22200'], 'taken by the next read, sent a retry period after the late answer');
});

test('a standby whose read failed counts the lease duration again from its next answer', async () => {
  const clock = new FakeClock();
  const { api, http } = fakeApi(clock);
  api.lease = heldByOther();
  const events: string[] = [];
  elector(clock, http, events).start();
  await clock.advanceAsync(3_500); // seen at 1 s: would expire at 16 s
  api.failing = true; // the read sent at 3 s fails at 4 s
  await clock.advanceAsync(1_000);
  api.failing = false; // the read sent at 6 s sees the record anew at 7 s: it expires at 22 s
  await clock.advanceAsync(23_999 - clock.now());
  assert.deepEqual(events, [], 'the reads sent at 18 and 21 s are within a lease duration of the new sight');
  await clock.advanceAsync(2_001);
  assert.deepEqual(events, ['leads at 26000'], 'taken by the read sent at 24 s');
});
