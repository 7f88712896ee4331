// Assembly of the spoke agent: the client, the params ConfigMap's cache (unless `--policies` fixes the
// kinds), the report ConfigMap's cache (a report changed or deleted by another hand wakes the report too),
// one informer per watched kind, the three reconcilers (kinds, report, dropped keys) and their runners, and the
// wiring: any policy change, a kind's first list, a kind's watch failing or its cache live again wakes the
// report; a copy naming keys it still carries wakes the dropped keys; the ConfigMap wakes the kinds. The
// lifecycle is controller.ts's.
import type { Logger } from 'pino';
import { cachedObject, spokeObjectView } from '../core/works/cacheview.ts';
import type { GroupVersionResource } from '../core/k8s/gvr.ts';
import { spokeHeartbeatName } from '../core/spoke/spokeheartbeat.ts';
import { spokeReportName } from '../core/spoke/spokereport.ts';
import { DynamicInformers } from '../kube/dynamicinformers.ts';
import { KubeHttp, type ConnectionOptions } from '../kube/http.ts';
import { Informer } from '../kube/informer.ts';
import type { KubeAccess } from '../kube/kubeconfig.ts';
import { RESOURCES } from '../kube/resource.ts';
import type { Leadership } from '../runtime/leadership.ts';
import type { Metrics } from '../runtime/metrics.ts';
import { ControllerRunner } from '../runtime/runner.ts';
import { WorkQueue } from '../runtime/workqueue.ts';
import { DroppedKeysReconciler, carriesDroppedKeys, droppedKeysKey } from './droppedkeysreconciler.ts';
import { KINDS_KEY, KindsReconciler } from './kindsreconciler.ts';
import { REPORT_KEY, ReportReconciler } from './reportreconciler.ts';

export interface SpokeOptions {
  kubeConfig: KubeAccess;
  logger: Logger;
  /** A fixed list of kinds (`--policies`); otherwise `configMap` is followed. */
  policies?: GroupVersionResource[];
  /** The params ConfigMap (key `params`) placed by the hub; followed unless `policies`. The report and the heartbeat go beside it. */
  configMap: { namespace: string; name: string };
  /** How often the heartbeat is written (the report only when it changes). */
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

/** The assembled spoke agent: what the lifecycle starts, leads and stops. */
export interface SpokeAgent {
  http: KubeHttp;
  informers: DynamicInformers;
  /** The params ConfigMap's cache; undefined with a fixed list of kinds. */
  config: Informer | undefined;
  /** The report ConfigMap's cache: what the spoke has of the report. */
  reportCache: Informer;
  kinds: KindsReconciler;
  queues: { kinds: WorkQueue; report: WorkQueue; droppedKeys: WorkQueue };
  /** Follows the configuration; runs on every replica (a standby keeps its caches warm). */
  kindsRunner: ControllerRunner;
  /** Write (the report; the dropped keys off the copies): started only while leading. */
  reportRunner: ControllerRunner;
  droppedKeysRunner: ControllerRunner;
}

export function assembleSpoke(o: SpokeOptions): SpokeAgent {
  const log = o.logger;
  const queues = {
    kinds: new WorkQueue({ name: 'spoke-kinds', observer: o.metrics?.workQueueObserver('spoke-kinds') }),
    report: new WorkQueue({ name: 'spoke-report', observer: o.metrics?.workQueueObserver('spoke-report') }),
    droppedKeys: new WorkQueue({ name: 'spoke-dropped-keys', observer: o.metrics?.workQueueObserver('spoke-dropped-keys') }),
  };
  const wakeReport = (): void => queues.report.add(REPORT_KEY);
  const http = new KubeHttp(o.kubeConfig, {
    ...o.connection,
    writeGuard: o.leadership?.guard,
    onResponse: o.metrics && ((method, path, code, ms) => o.metrics?.clientRequest(method, path, code, ms)),
  });
  const informers = new DynamicInformers(http, {
    onChange: (gvr, change) => {
      wakeReport();
      if (change.type !== 'DELETED' && carriesDroppedKeys(change.object)) queues.droppedKeys.add(droppedKeysKey(gvr, change.object));
    },
    onSynced: wakeReport,
    // A kind whose watch fails leaves the report now, not at the next heartbeat.
    onFailure: wakeReport,
    // After a failure a kind comes back only with its state taken afresh (never a cache that may predate
    // the gap), and the moment it is delivered — not at the resumed watch's first bookmark, a minute on.
    relistAfterFailure: true,
    onLive: wakeReport,
    transform: spokeObjectView,
    logger: log,
  });
  const config = o.policies
    ? undefined
    : new Informer(http, RESOURCES.configMaps, {
        namespace: o.configMap.namespace,
        fieldSelector: `metadata.name=${o.configMap.name}`,
        logger: log.child({ informer: 'spoke-config' }),
      });
  config?.onChange(() => queues.kinds.add(KINDS_KEY));
  const reportAt = { namespace: o.configMap.namespace, name: spokeReportName(o.configMap.name) };
  const reportCache = new Informer(http, RESOURCES.configMaps, {
    namespace: reportAt.namespace,
    fieldSelector: `metadata.name=${reportAt.name}`,
    transform: cachedObject,
    logger: log.child({ informer: 'spoke-report' }),
  });
  reportCache.onChange(wakeReport);

  const kinds = new KindsReconciler({ http, informers, ...(o.policies ? { policies: o.policies } : {}), ...(config ? { config } : {}), configMap: o.configMap, onKindsChanged: wakeReport, logger: log });
  const report = new ReportReconciler({
    http,
    informers,
    kinds: () => kinds.watched(),
    report: reportAt,
    reportCache,
    heartbeat: { namespace: o.configMap.namespace, name: spokeHeartbeatName(o.configMap.name) },
    heartbeatMs: o.reportHeartbeatMs,
    logger: log,
    ...(o.now ? { now: o.now } : {}),
  });
  const kindsRunner = new ControllerRunner({ name: 'spoke-kinds', queue: queues.kinds, reconcile: () => kinds.reconcile(), logger: log, observer: o.metrics?.controllerObserver('spoke-kinds') });
  const reportRunner = new ControllerRunner({ name: 'spoke-report', queue: queues.report, reconcile: () => report.reconcile(), logger: log, observer: o.metrics?.controllerObserver('spoke-report') });
  const droppedKeys = new DroppedKeysReconciler({ http, informers, logger: log });
  const droppedKeysRunner = new ControllerRunner({ name: 'spoke-dropped-keys', queue: queues.droppedKeys, reconcile: (key) => droppedKeys.reconcile(key), logger: log, observer: o.metrics?.controllerObserver('spoke-dropped-keys') });
  o.metrics?.setCollectors({ watchedKinds: () => informers.kinds().length });
  return { http, informers, config, reportCache, kinds, queues, kindsRunner, reportRunner, droppedKeysRunner };
}
