// Assembly of the spoke agent: which policy kinds to watch (a fixed `--policies` list, or the params
// ConfigMap the hub places on every spoke), one informer per kind, and the report reconciler, which any
// policy change, and any failure of a kind's watch, wakes. Event handlers only map changes to keys.
import type { Logger } from 'pino';
import type { KubeAccess } from '../kube/kubeconfig.ts';
import { cachedObject } from '../core/cacheview.ts';
import { gvrKey, type GroupVersionResource } from '../core/k8s/gvr.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { parseParamsJson } from '../core/params/params.ts';
import { findServedResource } from '../kube/discovery.ts';
import { DynamicInformers } from '../kube/dynamicinformers.ts';
import { KubeHttp, type ConnectionOptions } from '../kube/http.ts';
import { Informer } from '../kube/informer.ts';
import { RESOURCES } from '../kube/resource.ts';
import type { Leadership } from '../runtime/leadership.ts';
import type { Metrics } from '../runtime/metrics.ts';
import { ControllerRunner, type ReconcileResult } from '../runtime/runner.ts';
import { WorkQueue } from '../runtime/workqueue.ts';
import { spokeReportName } from '../core/spoke/spokereport.ts';
import { REPORT_KEY, ReportReconciler } from './reportreconciler.ts';

export interface SpokeOptions {
  kubeConfig: KubeAccess;
  logger: Logger;
  /** A fixed list of kinds (`--policies`); otherwise `configMap` is followed. */
  policies?: GroupVersionResource[];
  /** The params ConfigMap (key `params`) placed by the hub; followed unless `policies`. The report goes beside it. */
  configMap: { namespace: string; name: string };
  /** How often an unchanged report is written again (its heartbeat). */
  reportHeartbeatMs: number;
  /** The spoke's wall clock, which the report's heartbeat is stamped with (default Date.now). */
  now?: () => number;
  /** Where the work queues and reconcilers report, and policysync_watched_kinds is read from. */
  metrics?: Metrics;
  /** Whether writes are allowed now (leader election); default: always. */
  leadership?: Leadership;
  /** Request deadline and watch idle timeout. */
  connection?: ConnectionOptions;
}

const KINDS_KEY = 'kinds';
const RECHECK_MISSING_KINDS_MS = 30_000;

export class SpokeController {
  private readonly http: KubeHttp;
  private readonly informers: DynamicInformers;
  private readonly config: Informer | undefined;
  private readonly kindsQueue: WorkQueue;
  private readonly queue: WorkQueue;
  private readonly kindsRunner: ControllerRunner;
  /** The report reconciler: started only while leading. */
  private readonly writer: ControllerRunner;
  private leading = false;
  private kinds = new Map<string, GroupVersionResource & { namespaced: boolean }>();
  private readonly log: Logger;

  constructor(private readonly o: SpokeOptions) {
    this.log = o.logger;
    this.kindsQueue = new WorkQueue({ name: 'spoke-kinds', observer: o.metrics?.workQueueObserver('spoke-kinds') });
    this.queue = new WorkQueue({ name: 'spoke-report', observer: o.metrics?.workQueueObserver('spoke-report') });
    this.http = new KubeHttp(o.kubeConfig, {
      ...o.connection,
      writeGuard: o.leadership?.guard,
      onResponse: o.metrics && ((method, path, code) => o.metrics?.clientRequest(method, path, code)),
    });
    this.informers = new DynamicInformers(this.http, {
      onChange: () => this.queue.add(REPORT_KEY),
      onSynced: () => this.queue.add(REPORT_KEY),
      // A kind whose watch fails leaves the report now, not at the next heartbeat.
      onFailure: () => this.queue.add(REPORT_KEY),
      transform: cachedObject,
      logger: this.log,
    });
    if (o.configMap && !o.policies) {
      this.config = new Informer(this.http, RESOURCES.configMaps, {
        namespace: o.configMap.namespace,
        fieldSelector: `metadata.name=${o.configMap.name}`,
        logger: this.log.child({ informer: 'spoke-config' }),
      });
      this.config.onChange(() => this.kindsQueue.add(KINDS_KEY));
    }
    const reconciler = new ReportReconciler({
      http: this.http,
      informers: this.informers,
      kinds: () => [...this.kinds.values()],
      report: { namespace: o.configMap.namespace, name: spokeReportName(o.configMap.name) },
      heartbeatMs: o.reportHeartbeatMs,
      logger: this.log,
      ...(o.now ? { now: o.now } : {}),
    });
    this.kindsRunner = new ControllerRunner({ name: 'spoke-kinds', queue: this.kindsQueue, reconcile: () => this.reconcileKinds(), logger: this.log, observer: o.metrics?.controllerObserver('spoke-kinds') });
    this.writer = new ControllerRunner({
      name: 'spoke-report',
      queue: this.queue,
      reconcile: () => reconciler.reconcile(),
      logger: this.log,
      observer: o.metrics?.controllerObserver('spoke-report'),
    });
    o.metrics?.setCollectors({ watchedKinds: () => this.informers.kinds().length });
  }

  /** Follows the configuration and keeps the policy caches warm; writes nothing (a standby does this). */
  async startCaches(): Promise<void> {
    if (this.config) {
      this.config.start();
      await this.config.waitForSync();
    }
    this.kindsRunner.start();
    this.kindsQueue.add(KINDS_KEY);
  }

  /** Leadership: the report reconciler, which writes, starts. */
  lead(): void {
    if (this.leading) return;
    this.leading = true;
    this.writer.start();
    this.queue.add(REPORT_KEY);
  }

  /** Without leader election: caches, then lead at once. */
  async start(): Promise<void> {
    await this.startCaches();
    this.lead();
  }

  /** The kinds being watched, by gvrKey. */
  watchedKinds(): string[] {
    return [...this.kinds.keys()].sort();
  }

  get cachesSynced(): boolean {
    return (this.config?.synced ?? true) && this.informers.allSynced;
  }

  async stop(): Promise<void> {
    await Promise.all([this.kindsRunner, this.writer].map((r) => r.stop({ drainTimeoutMs: 10_000 })));
    await this.config?.stop();
    await this.informers.stop();
    this.http.destroy();
  }

  /** The wanted kinds, as the flag or the ConfigMap says; undefined when the ConfigMap is unusable. */
  private wanted(): GroupVersionResource[] | undefined {
    if (this.o.policies) return this.o.policies;
    const cm: KubeObject | undefined = this.config?.store.get(`${this.o.configMap.namespace}/${this.o.configMap.name}`);
    if (!cm) {
      this.log.warn({ configMap: this.o.configMap }, 'params ConfigMap not found; keeping the kinds watched so far');
      return undefined;
    }
    const text = (cm.data as Record<string, unknown> | undefined)?.params;
    const parsed = parseParamsJson(typeof text === 'string' ? text : '');
    if (!parsed.ok) {
      this.log.error({ configMap: this.o.configMap, errors: parsed.errors }, 'params ConfigMap is invalid; keeping the kinds watched so far');
      return undefined;
    }
    return parsed.params.policiesToSync;
  }

  /** Resolves the wanted kinds against this cluster and makes the watches match. */
  private async reconcileKinds(): Promise<ReconcileResult> {
    const wanted = this.wanted();
    if (!wanted) return;
    const resolved = new Map<string, GroupVersionResource & { namespaced: boolean }>();
    let missing = false;
    for (const gvr of wanted) {
      const plain = { group: gvr.group, version: gvr.version, resource: gvr.resource };
      const served = await findServedResource(this.http, plain);
      if (!served) {
        this.log.warn({ kind: gvrKey(plain) }, 'policy kind is not served on this cluster; looking again later');
        missing = true;
        continue;
      }
      resolved.set(gvrKey(plain), { ...plain, namespaced: served.namespaced });
    }
    this.kinds = resolved;
    await this.informers.reconcile([...resolved.values()].map((k) => ({ gvr: { group: k.group, version: k.version, resource: k.resource }, namespaced: k.namespaced })));
    // Kinds that went change what the report covers.
    this.queue.add(REPORT_KEY);
    return missing ? { requeueAfterMs: RECHECK_MISSING_KINDS_MS } : undefined;
  }
}
