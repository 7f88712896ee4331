// Prometheus metrics (docs/architecture.md#runtime): one prom-client Registry per process with controller-runtime's and
// client-go's metric names, the process defaults, and policy-sync's own gauges. The work queues and
// controller runners report through the observers made here; gauges that describe caches are computed
// at scrape time from the collectors a controller registers, never updated in hot paths.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ControllerObserver, ReconcileOutcome } from './runner.ts';
import type { WorkQueueObserver } from './workqueue.ts';
import { writtenResource } from '../core/k8s/apipath.ts';
import { codeClass, requestResource, requestVerb } from './metricslabels.ts';

export type WorkStateLabel = 'applied' | 'failed' | 'pending';
export type ClusterStatusLabel = 'enforced' | 'overridden' | 'pending' | 'failed' | 'unknown';

const RESULTS: readonly ReconcileOutcome[] = ['success', 'error', 'requeue', 'requeue_after'];
const WORK_STATES: readonly WorkStateLabel[] = ['applied', 'failed', 'pending'];
const CLUSTER_STATUSES: readonly ClusterStatusLabel[] = ['enforced', 'overridden', 'pending', 'failed', 'unknown'];
const COPY_STATES = ['drifted', 'lingering'] as const;

/** controller-runtime's reconcile_time_seconds buckets. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5,
  4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go's workqueue duration buckets: ExponentialBuckets(10e-9, 10, 12), 10 ns to 1000 s. */
const WORKQUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

/**
 * policysync_feedback_latency_seconds: DESIGN's target is 100 ms at p99 (docs/benchmarks.md measures
 * 20–30 ms), so the buckets are fine up to it; past it, a status write held by the coalescing window or
 * yielding to a ManifestWork burst (at most 60 s) still lands in a bucket.
 */
export const FEEDBACK_LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** client-go's rest_client_request_duration_seconds buckets; requests time out at 30 s (--request-timeout). */
export const REQUEST_LATENCY_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** Where the policysync_* gauges read their values from at scrape time; absent ones are not exposed. */
export interface PolicySyncCollectors {
  /** The hub's ManifestWorks by state (policysync_works). */
  works?: () => Record<WorkStateLabel, number>;
  /** Clusters by status, summed over policies (policysync_clusters), and those whose copy drifted or lingers (policysync_copies). */
  clusters?: () => Record<ClusterStatusLabel, number> & Partial<Record<(typeof COPY_STATES)[number], number>>;
  /** Policy kinds watched (policysync_watched_kinds). */
  watchedKinds?: () => number;
  /** Seconds since each cluster's spoke report was last seen to change, by cluster (policysync_spoke_report_age_seconds). */
  spokeReportAges?: () => ReadonlyMap<string, number> | undefined;
  /**
   * Progressive rollouts by state, and their clusters by phase (policysync_rollouts{state},
   * policysync_rollout_clusters{phase}).
   */
  rollouts?: () => { rollouts: Readonly<Record<string, number>>; clusters: Readonly<Record<string, number>> };
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC, …). Default true. */
  defaultMetrics?: boolean;
}

export class Metrics {
  readonly registry = new Registry();
  #collectors: PolicySyncCollectors = {};

  readonly #reconcileTotal: Counter<'controller' | 'result'>;
  readonly #reconcileErrors: Counter<'controller'>;
  readonly #reconcileTime: Histogram<'controller'>;
  readonly #activeWorkers: Gauge<'controller'>;
  readonly #depth: Gauge<'name'>;
  readonly #adds: Counter<'name'>;
  readonly #retries: Counter<'name'>;
  readonly #queueDuration: Histogram<'name'>;
  readonly #workDuration: Histogram<'name'>;
  readonly #leader: Gauge<'name'>;
  readonly #clientRequests: Counter<'method' | 'code'>;
  readonly #clientWrites: Counter<'resource'>;
  readonly #requestDuration: Histogram<'verb' | 'resource' | 'code'>;
  readonly #feedbackLatency: Histogram;
  readonly #awaitingReport: Gauge;

  constructor(opts: MetricsOptions = {}) {
    const registers = [this.registry];
    this.#reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.#reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.#reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.#activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });
    this.#depth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name'], registers });
    this.#adds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name'], registers });
    this.#retries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name'], registers });
    this.#queueDuration = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['name'],
      buckets: WORKQUEUE_BUCKETS,
      registers,
    });
    this.#workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: ['name'],
      buckets: WORKQUEUE_BUCKETS,
      registers,
    });
    this.#leader = new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master',
      labelNames: ['name'],
      registers,
    });
    this.#clientRequests = new Counter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests to the apiserver, partitioned by method and status code',
      labelNames: ['method', 'code'],
      registers,
    });
    this.#clientWrites = new Counter({
      name: 'policysync_client_writes_total',
      help: 'Writes this process made to persisted objects, by resource (reviews and leases excluded)',
      labelNames: ['resource'],
      registers,
    });

    this.#requestDuration = new Histogram({
      name: 'rest_client_request_duration_seconds',
      help: 'Apiserver request latency (sent to answer read; rate limiter wait excluded; watches not counted), by Kubernetes verb, resource and status class',
      labelNames: ['verb', 'resource', 'code'],
      buckets: REQUEST_LATENCY_BUCKETS,
      registers,
    });
    this.#feedbackLatency = new Histogram({
      name: 'policysync_feedback_latency_seconds',
      help: "From a ManifestWork status change carrying new spoke feedback, as the hub's cache saw it, to the successful write of the policy's status annotations that reflects it",
      buckets: FEEDBACK_LATENCY_BUCKETS,
      registers,
    });

    const collectors = (): PolicySyncCollectors => this.#collectors;
    new Gauge({
      name: 'policysync_works',
      help: 'ManifestWorks of this hub controller by state: applied, failed (Applied=False), pending (no current Applied condition yet)',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = collectors().works?.();
        if (counts) for (const state of WORK_STATES) this.set({ state }, counts[state]);
      },
    });
    new Gauge({
      name: 'policysync_clusters',
      help: 'Clusters by status in the latest aggregated status of each synced policy, summed over policies',
      labelNames: ['status'],
      registers,
      collect() {
        const counts = collectors().clusters?.();
        if (counts) for (const status of CLUSTER_STATUSES) this.set({ status }, counts[status]);
      },
    });
    new Gauge({
      name: 'policysync_copies',
      help: "(policy, cluster) pairs whose copy runs not as the hub sent it (state drifted) or where no work of this hub places it (state lingering), by the spoke agents' fresh reports, summed over policies",
      labelNames: ['state'],
      registers,
      collect() {
        const counts = collectors().clusters?.();
        if (counts) for (const state of COPY_STATES) this.set({ state }, counts[state] ?? 0);
      },
    });
    new Gauge({
      name: 'policysync_watched_kinds',
      help: 'Number of policy kinds watched',
      registers,
      collect() {
        const kinds = collectors().watchedKinds?.();
        if (kinds !== undefined) this.set(kinds);
      },
    });

    new Gauge({
      name: 'policysync_spoke_report_age_seconds',
      help: "Seconds since the hub last saw the spoke agent's report of a cluster change (a new heartbeat or new content), on the hub's clock; no series for a cluster without a report",
      labelNames: ['cluster'],
      registers,
      collect() {
        const ages = collectors().spokeReportAges?.();
        // Set afresh at every scrape: a cluster whose report went is no longer exposed.
        this.reset();
        for (const [cluster, seconds] of ages ?? []) this.set({ cluster }, seconds);
      },
    });

    this.#awaitingReport = new Gauge({
      name: 'policysync_clusters_awaiting_report',
      help: "(policy, cluster) pairs that get no first copy until the spoke agent's fresh report vouches for the copy's name (none yet, stale, refused, the kind not in it, an older agent), summed over policies",
      registers,
    });

    new Gauge({
      name: 'policysync_rollouts',
      help: 'Policies rolled out Progressive, by the state of the rollout of their current revision: Progressing, Halted, Complete',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = collectors().rollouts?.();
        if (counts) for (const [state, n] of Object.entries(counts.rollouts)) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'policysync_rollout_clusters',
      help: 'Clusters of the policies rolled out Progressive, by phase: Succeeded, Progressing, Failed, Waiting, Held, RolledBack',
      labelNames: ['phase'],
      registers,
      collect() {
        const counts = collectors().rollouts?.();
        if (counts) for (const [phase, n] of Object.entries(counts.clusters)) this.set({ phase }, n);
      },
    });

    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Registers where the policysync_* gauges read from (replacing earlier ones). */
  setCollectors(collectors: PolicySyncCollectors): void {
    this.#collectors = { ...collectors };
  }

  /** policysync_clusters_awaiting_report: set by the status reporter as its per-policy counts change. */
  clustersAwaitingReport(pairs: number): void {
    this.#awaitingReport.set(pairs);
  }

  /** leader_election_master_status{name}: 1 while this process holds the lease `name`, else 0. */
  setLeader(name: string, leader: boolean): void {
    this.#leader.set({ name }, leader ? 1 : 0);
  }

  /** Counts one apiserver request, and its latency when given (KubeHttp's onResponse hook). */
  clientRequest(method: string, path: string, code: number, durationMs?: number): void {
    this.#clientRequests.inc({ method, code: String(code) });
    if (durationMs !== undefined) {
      this.#requestDuration.observe({ verb: requestVerb(method, path), resource: requestResource(path), code: codeClass(code) }, durationMs / 1000);
    }
    const resource = writtenResource(method, path);
    if (resource !== undefined && code >= 200 && code < 300) this.#clientWrites.inc({ resource });
  }

  /** One feedback change reported on its policy after `ms` milliseconds (policysync_feedback_latency_seconds). */
  feedbackLatency(ms: number): void {
    this.#feedbackLatency.observe(ms / 1000);
  }

  /** The observer for the WorkQueue called `name`; its series start at 0. */
  workQueueObserver(name: string): WorkQueueObserver {
    const labels = { name };
    const depth = this.#depth.labels(labels);
    const adds = this.#adds.labels(labels);
    const retries = this.#retries.labels(labels);
    const queueDuration = this.#queueDuration.labels(labels);
    const workDuration = this.#workDuration.labels(labels);
    depth.set(0);
    adds.inc(0);
    retries.inc(0);
    this.#queueDuration.zero(labels);
    this.#workDuration.zero(labels);
    return {
      onAdd: () => adds.inc(),
      onDepth: (n) => depth.set(n),
      onGet: (_key, queuedMs) => queueDuration.observe(queuedMs / 1000),
      onDone: (_key, workMs) => workDuration.observe(workMs / 1000),
      onRetry: () => retries.inc(),
    };
  }

  /** The observer for the ControllerRunner called `controller`; its series start at 0. */
  controllerObserver(controller: string): ControllerObserver {
    const labels = { controller };
    const totals = new Map(RESULTS.map((result) => [result, this.#reconcileTotal.labels({ controller, result })]));
    const errors = this.#reconcileErrors.labels(labels);
    const time = this.#reconcileTime.labels(labels);
    const active = this.#activeWorkers.labels(labels);
    for (const total of totals.values()) total.inc(0);
    errors.inc(0);
    this.#reconcileTime.zero(labels);
    active.set(0);
    return {
      onReconcile: (event) => {
        totals.get(event.result)?.inc();
        if (event.result === 'error') errors.inc();
        time.observe(event.durationMs / 1000);
      },
      onActiveWorkers: (_controller, n) => active.set(n),
    };
  }

  /** The text exposition of every metric, in the shape ProbeServer's `metrics` option takes. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
