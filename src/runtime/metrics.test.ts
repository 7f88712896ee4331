import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { FakeClock, settle } from '../../testkit/fake-clock.ts';
import { Metrics } from './metrics.ts';
import { ItemExponentialRateLimiter } from './ratelimiter.ts';
import { ControllerRunner } from './runner.ts';
import { WorkQueue } from './workqueue.ts';

/** The value of the series `name{labels}` in the text exposition (labels in exposition order). */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function text(metrics: Metrics): Promise<string> {
  return (await metrics.scrape()).body;
}

describe('Metrics', () => {
  it('exposes the controller-runtime, workqueue and process metrics by name', async () => {
    const metrics = new Metrics();
    metrics.workQueueObserver('q');
    metrics.controllerObserver('c');
    const scraped = await metrics.scrape();
    assert.match(scraped.contentType, /^text\/plain/);
    for (const name of [
      'controller_runtime_reconcile_total',
      'controller_runtime_reconcile_errors_total',
      'controller_runtime_reconcile_time_seconds',
      'controller_runtime_active_workers',
      'workqueue_depth',
      'workqueue_adds_total',
      'workqueue_retries_total',
      'workqueue_queue_duration_seconds',
      'workqueue_work_duration_seconds',
      'leader_election_master_status',
      'policysync_works',
      'policysync_clusters',
      'policysync_watched_kinds',
      'process_cpu_user_seconds_total',
      'nodejs_eventloop_lag_seconds',
    ]) {
      assert.match(scraped.body, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
  });

  it('starts the series of a new queue and controller at 0', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    metrics.workQueueObserver('q');
    metrics.controllerObserver('c');
    const t = await text(metrics);
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
      assert.equal(value(t, `controller_runtime_reconcile_total{controller="c",result="${result}"}`), 0, result);
    }
    assert.equal(value(t, 'controller_runtime_reconcile_errors_total{controller="c"}'), 0);
    assert.equal(value(t, 'controller_runtime_reconcile_time_seconds_count{controller="c"}'), 0);
    assert.equal(value(t, 'controller_runtime_active_workers{controller="c"}'), 0);
    assert.equal(value(t, 'workqueue_depth{name="q"}'), 0);
    assert.equal(value(t, 'workqueue_adds_total{name="q"}'), 0);
    assert.equal(value(t, 'workqueue_retries_total{name="q"}'), 0);
    assert.equal(value(t, 'workqueue_queue_duration_seconds_count{name="q"}'), 0);
    assert.equal(value(t, 'workqueue_work_duration_seconds_count{name="q"}'), 0);
  });

  it('the work queue observer feeds depth, adds, retries and both durations of its own queue', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const clock = new FakeClock();
    const queue = new WorkQueue({ name: 'q', clock, rateLimiter: new ItemExponentialRateLimiter(), observer: metrics.workQueueObserver('q') });
    metrics.workQueueObserver('other');
    queue.add('a');
    queue.add('b');
    queue.add('a'); // collapsed: not an add
    let t = await text(metrics);
    assert.equal(value(t, 'workqueue_adds_total{name="q"}'), 2);
    assert.equal(value(t, 'workqueue_depth{name="q"}'), 2);

    clock.advance(250);
    const key = await queue.get();
    assert.equal(key, 'a');
    clock.advance(1500);
    queue.done('a');
    queue.addRateLimited('a');
    t = await text(metrics);
    assert.equal(value(t, 'workqueue_depth{name="q"}'), 1);
    assert.equal(value(t, 'workqueue_retries_total{name="q"}'), 1);
    assert.equal(value(t, 'workqueue_queue_duration_seconds_count{name="q"}'), 1);
    assert.equal(value(t, 'workqueue_queue_duration_seconds_sum{name="q"}'), 0.25);
    assert.equal(value(t, 'workqueue_queue_duration_seconds_bucket{le="0.1",name="q"}'), 0);
    assert.equal(value(t, 'workqueue_queue_duration_seconds_bucket{le="1",name="q"}'), 1);
    assert.equal(value(t, 'workqueue_work_duration_seconds_count{name="q"}'), 1);
    assert.equal(value(t, 'workqueue_work_duration_seconds_sum{name="q"}'), 1.5);
    assert.equal(value(t, 'workqueue_adds_total{name="other"}'), 0, 'another queue is untouched');

    queue.shutDown();
    assert.equal(value(await text(metrics), 'workqueue_depth{name="q"}'), 0);
  });

  it('the controller observer counts reconciles by result, errors, time and active workers', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, rateLimiter: new ItemExponentialRateLimiter() });
    const results: Record<string, () => Promise<unknown>> = {
      ok: () => Promise.resolve(undefined),
      fail: () => Promise.reject(new Error('boom')),
      again: () => Promise.resolve({ requeue: true }),
      later: () => Promise.resolve({ requeueAfterMs: 60_000 }),
    };
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    const runner = new ControllerRunner({
      name: 'c',
      queue,
      clock,
      concurrency: 2,
      observer: metrics.controllerObserver('c'),
      reconcile: async (key) => {
        if (key === 'slow') {
          await blocked;
          return;
        }
        return (await results[key]!()) as undefined;
      },
    });
    runner.start();
    queue.add('slow');
    await settle();
    let t = await text(metrics);
    assert.equal(value(t, 'controller_runtime_active_workers{controller="c"}'), 1);

    for (const key of Object.keys(results)) queue.add(key);
    await settle();
    t = await text(metrics);
    assert.equal(value(t, 'controller_runtime_reconcile_total{controller="c",result="success"}'), 1);
    assert.equal(value(t, 'controller_runtime_reconcile_total{controller="c",result="error"}'), 1);
    assert.equal(value(t, 'controller_runtime_reconcile_total{controller="c",result="requeue"}'), 1);
    assert.equal(value(t, 'controller_runtime_reconcile_total{controller="c",result="requeue_after"}'), 1);
    assert.equal(value(t, 'controller_runtime_reconcile_errors_total{controller="c"}'), 1);
    assert.equal(value(t, 'controller_runtime_reconcile_time_seconds_count{controller="c"}'), 4);

    release();
    await settle();
    t = await text(metrics);
    assert.equal(value(t, 'controller_runtime_reconcile_total{controller="c",result="success"}'), 2);
    assert.equal(value(t, 'controller_runtime_active_workers{controller="c"}'), 0);
    await runner.stop();
  });

  it('leader_election_master_status follows setLeader', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    metrics.setLeader('policy-sync-hub', true);
    assert.equal(value(await text(metrics), 'leader_election_master_status{name="policy-sync-hub"}'), 1);
    metrics.setLeader('policy-sync-hub', false);
    assert.equal(value(await text(metrics), 'leader_election_master_status{name="policy-sync-hub"}'), 0);
  });

  it('policysync_* gauges are read from the collectors at scrape time, and absent without them', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    let t = await text(metrics);
    assert.doesNotMatch(t, /^policysync_works\{/m);
    assert.doesNotMatch(t, /^policysync_clusters\{/m);

    let kinds = 1;
    let calls = 0;
    metrics.setCollectors({
      works: () => {
        calls += 1;
        return { applied: 3, failed: 1, pending: 0 };
      },
      clusters: () => ({ enforced: 5, overridden: 1, pending: 2, failed: 0, unknown: 3 }),
      watchedKinds: () => kinds,
    });
    assert.equal(calls, 0, 'nothing is computed before a scrape');
    t = await text(metrics);
    assert.equal(calls, 1);
    assert.equal(value(t, 'policysync_works{state="applied"}'), 3);
    assert.equal(value(t, 'policysync_works{state="failed"}'), 1);
    assert.equal(value(t, 'policysync_works{state="pending"}'), 0);
    assert.equal(value(t, 'policysync_clusters{status="enforced"}'), 5);
    assert.equal(value(t, 'policysync_clusters{status="overridden"}'), 1);
    assert.equal(value(t, 'policysync_clusters{status="pending"}'), 2);
    assert.equal(value(t, 'policysync_clusters{status="failed"}'), 0);
    assert.equal(value(t, 'policysync_clusters{status="unknown"}'), 3);
    assert.equal(value(t, 'policysync_watched_kinds'), 1);

    kinds = 2;
    assert.equal(value(await text(metrics), 'policysync_watched_kinds'), 2);
  });

  it('each instance has its own registry', async () => {
    const a = new Metrics({ defaultMetrics: false });
    const b = new Metrics({ defaultMetrics: false });
    a.workQueueObserver('q').onAdd?.('k');
    b.workQueueObserver('q');
    assert.equal(value(await text(a), 'workqueue_adds_total{name="q"}'), 1);
    assert.equal(value(await text(b), 'workqueue_adds_total{name="q"}'), 0);
  });
});

test('clientRequest counts requests by method and code, and successful writes by resource', async () => {
  const m = new Metrics();
  m.clientRequest('PATCH', '/apis/kuadrant.io/v1/namespaces/ns/authpolicies/p', 200);
  m.clientRequest('PATCH', '/apis/kuadrant.io/v1/namespaces/ns/authpolicies/p', 409);
  m.clientRequest('GET', '/apis/kuadrant.io/v1/authpolicies', 200);
  const text = await m.registry.metrics();
  assert.match(text, /rest_client_requests_total\{method="PATCH",code="200"\} 1/);
  assert.match(text, /rest_client_requests_total\{method="PATCH",code="409"\} 1/);
  assert.match(text, /policysync_client_writes_total\{resource="authpolicies"\} 1/);
});

test('rest_client_request_duration_seconds: by Kubernetes verb, resource and status class, never by name or namespace', async () => {
  const m = new Metrics({ defaultMetrics: false });
  m.clientRequest('POST', '/apis/work.open-cluster-management.io/v1/namespaces/spoke-1/manifestworks', 201, 40);
  m.clientRequest('POST', '/apis/work.open-cluster-management.io/v1/namespaces/spoke-2/manifestworks', 201, 300);
  m.clientRequest('PATCH', '/apis/kuadrant.io/v1/namespaces/ns/authpolicies/p', 409, 3);
  m.clientRequest('GET', '/apis/kuadrant.io/v1/authpolicies', 200); // no duration: counted, not timed
  const t = await text(m);
  const created = 'rest_client_request_duration_seconds_count{verb="create",resource="manifestworks",code="2xx"}';
  assert.equal(value(t, created), 2);
  assert.ok(Math.abs(value(t, 'rest_client_request_duration_seconds_sum{verb="create",resource="manifestworks",code="2xx"}')! - 0.34) < 1e-9, 'in seconds');
  assert.equal(value(t, 'rest_client_request_duration_seconds_bucket{le="0.1",verb="create",resource="manifestworks",code="2xx"}'), 1);
  assert.equal(value(t, 'rest_client_request_duration_seconds_bucket{le="0.5",verb="create",resource="manifestworks",code="2xx"}'), 2);
  assert.equal(value(t, 'rest_client_request_duration_seconds_count{verb="patch",resource="authpolicies",code="4xx"}'), 1);
  assert.doesNotMatch(t, /rest_client_request_duration_seconds_count\{verb="list"/);
  assert.doesNotMatch(t, /spoke-1|spoke-2|namespace=/, 'no names or namespaces in any label');
});

test('policysync_feedback_latency_seconds is exposed (zero) before any feedback, and observes in seconds', async () => {
  const m = new Metrics({ defaultMetrics: false });
  let t = await text(m);
  assert.equal(value(t, 'policysync_feedback_latency_seconds_count'), 0);
  m.feedbackLatency(20);
  m.feedbackLatency(150);
  t = await text(m);
  assert.equal(value(t, 'policysync_feedback_latency_seconds_count'), 2);
  assert.equal(value(t, 'policysync_feedback_latency_seconds_bucket{le="0.025"}'), 1);
  assert.equal(value(t, 'policysync_feedback_latency_seconds_bucket{le="0.1"}'), 1, 'the DESIGN target is a bucket bound');
  assert.equal(value(t, 'policysync_feedback_latency_seconds_bucket{le="0.15"}'), 2);
});

test('policysync_spoke_report_age_seconds: one series per cluster with a report, read at scrape time; a cluster that goes loses its series', async () => {
  const m = new Metrics({ defaultMetrics: false });
  let ages = new Map([['spoke-1', 12.5], ['spoke-2', 0]]);
  m.setCollectors({ spokeReportAges: () => ages });
  let t = await text(m);
  assert.equal(value(t, 'policysync_spoke_report_age_seconds{cluster="spoke-1"}'), 12.5);
  assert.equal(value(t, 'policysync_spoke_report_age_seconds{cluster="spoke-2"}'), 0);
  ages = new Map([['spoke-2', 30]]);
  t = await text(m);
  assert.equal(value(t, 'policysync_spoke_report_age_seconds{cluster="spoke-1"}'), undefined, 'gone with its cluster');
  assert.equal(value(t, 'policysync_spoke_report_age_seconds{cluster="spoke-2"}'), 30);
  m.setCollectors({});
  assert.doesNotMatch(await text(m), /^policysync_spoke_report_age_seconds\{/m);
});

test('policysync_clusters_awaiting_report: 0 from the start (a rule on it never sees it absent), then as the status reporter sets it', async () => {
  const m = new Metrics({ defaultMetrics: false });
  assert.equal(value(await text(m), 'policysync_clusters_awaiting_report'), 0);
  m.clustersAwaitingReport(3);
  assert.equal(value(await text(m), 'policysync_clusters_awaiting_report'), 3);
  m.clustersAwaitingReport(0);
  assert.equal(value(await text(m), 'policysync_clusters_awaiting_report'), 0);
});
