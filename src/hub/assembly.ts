// Assembly of the hub controller: builds the client, the caches (caches.ts), the queues, the reconcilers and
// the runners that drive them, and wires each cache's changes through its route (routes.ts) into a queue.
// Nothing here reconciles; the lifecycle (start the caches, lead, stop) is controller.ts's.
import type { Logger } from 'pino';
import { groupResourceKey } from '../core/k8s/gvr.ts';
import { DEFAULT_REPORT_STALE_MS } from '../core/spoke/spokereport.ts';
import { isSpokeConfigWork, isSpokeHeartbeatWork } from '../core/spoke/spokeconfig.ts';
import { countWorkStates } from '../core/works/workstate.ts';
import { policyKey } from '../core/keys.ts';
import { objectKey } from '../core/k8s/objects.ts';
import { EventRecorder } from '../kube/events.ts';
import { KubeHttp, isNotFound, type ConnectionOptions } from '../kube/http.ts';
import type { KubeAccess } from '../kube/kubeconfig.ts';
import type { Clock } from '../runtime/clock.ts';
import { FairGate } from '../runtime/fairgate.ts';
import type { Leadership } from '../runtime/leadership.ts';
import type { Metrics } from '../runtime/metrics.ts';
import { TokenBucket } from '../runtime/ratelimiter.ts';
import { ControllerRunner } from '../runtime/runner.ts';
import { WorkQueue } from '../runtime/workqueue.ts';
import { YieldingWrites } from '../runtime/yieldingwrites.ts';
import { HubCaches } from './caches.ts';
import { ClassConfigs } from './classconfigs.ts';
import { GatewayClassReconciler } from './gatewayclassreconciler.ts';
import { GatewayStatusReconciler, gatewayOfWriteKey } from './gatewaystatusreconciler.ts';
import { targetedGateways, writeLane } from './indexes.ts';
import { ParamsRefs } from './paramsrefs.ts';
import { PolicyReconciler } from './policyreconciler.ts';
import { LingerClocks } from './lingerclocks.ts';
import { LingeringMender } from './lingeringmender.ts';
import { Rollouts } from './rollouts.ts';
import { VariantOutcomes } from './variantoutcomes.ts';
import { VariantStatusReconciler, variantOfWriteKey } from './variantstatusreconciler.ts';
import { UngatedKinds } from './ungatedkinds.ts';
import {
  gatewayStatusOfClass,
  gatewayStatusOfCluster,
  gatewayStatusOfClusterSets,
  gatewayStatusOfGateway,
  gatewayStatusOfPlacement,
  gatewayStatusOfPolicy,
  gatewayStatusOnly,
  routeClusterSetChange,
  routeConfigChange,
  routeDecisionChange,
  routeReportedCopies,
  routeGatewayChange,
  routeKindSynced,
  routeManagedClusterChange,
  routePlacementChange,
  routePolicyChange,
  routeReportChange,
  routeVariantChange,
  routeWorkChange,
} from './routes.ts';
import { SPOKE_CONFIG_KEY, SpokeConfigSyncer } from './spokeconfigsyncer.ts';
import { SpokeReports } from './spokereports.ts';
import { StatusReporter } from './statusreporter.ts';
import { WorkApplier } from './workapplier.ts';
import { BundleWriter } from './bundlewriter.ts';
import { isBundle } from '../core/works/bundle.ts';
import type { WorkShape } from '../core/works/copyroutes.ts';
import { controllerLabelValue } from '../core/works/manifestwork.ts';

export interface HubOptions {
  kubeConfig: KubeAccess;
  logger: Logger;
  controllerName: string;
  /** Policies reconciled at once. */
  concurrency: number;
  /** Client-side write rate limit. */
  qps: number;
  burst: number;
  maxWorkBytes: number;
  rawFeedback: boolean;
  /** Least time between two status annotation writes of one policy. */
  statusCoalesceMs: number;
  /** Where new copies go: works of their own (default), or bundles (docs/design/fleet.md). */
  workShape?: WorkShape;
  /** Bytes of entries a bundle takes new copies up to (default DEFAULT_BUNDLE_CAP_BYTES). */
  bundleCapBytes?: number;
  /**
   * Take PlacementDecisions by their placement label alone (MGC's way, for decisions a tool of one's own
   * writes; unsafe with tenants). Default: only decisions the Placement owns, and only clusters of
   * ManagedClusterSets bound to the Gateway's namespace, count.
   */
  trustDecisionLabels?: boolean;
  /** Where the spoke agent's configuration is placed on each spoke (its report read beside it); undefined: neither. */
  spokeConfig?: { namespace: string; name: string };
  /** How old a spoke agent's report may be and still be acted on (default DEFAULT_REPORT_STALE_MS). */
  spokeReportStaleAfterMs?: number;
  /** Where the work queues and reconcilers report, and the policysync_* gauges are read from. */
  metrics?: Metrics;
  /** Whether writes are allowed now (leader election); default: always. */
  leadership?: Leadership;
  /** Request deadline and watch idle timeout. */
  connection?: ConnectionOptions;
  /** The lifecycle's clock (start-up waits); default the system clock. */
  clock?: Clock;
}

export const DEFAULT_CONTROLLER_NAME = 'kuadrant.io/policy-sync-controller';
/**
 * A bundle's cap, in bytes of its entries (each copy's manifest and record, ~1 KiB for the bench's AuthPolicy):
 * six such copies per bundle, the size chosen by measurement (docs/design/fleet.md#how-the-shape-is-chosen).
 */
export const DEFAULT_BUNDLE_CAP_BYTES = 6 * 1024;

/** How long a status write yields to ManifestWork writes at most. */
const STATUS_YIELD_MAX_MS = 60_000;
/** Works written this recently count as a burst under way. */
const STATUS_YIELD_WINDOW_MS = 1_000;

/** The assembled hub: what the lifecycle starts, leads and stops. */
export interface Hub {
  http: KubeHttp;
  caches: HubCaches;
  configs: ClassConfigs;
  queues: { classes: WorkQueue; policies: WorkQueue; spokeConfig: WorkQueue; gatewayStatus: WorkQueue; variantStatus: WorkQueue };
  /** Runs read-only on every replica: a standby keeps the configuration (and so the policy watches) current. */
  classRunner: ControllerRunner;
  /** The runners that write; started only while leading. */
  writers: ControllerRunner[];
  appliers: WorkApplier[];
  statusWrites: YieldingWrites;
  paramsRefs: ParamsRefs;
  reports: SpokeReports | undefined;
}

/**
 * The hub's requests to its apiserver under way at once: 16 per policy worker, at least 64. A reconcile writes its
 * works to every cluster at once, so a policy on hundreds of clusters asks for more, and its writes wait for a slot
 * (their deadline starts when they have one). Measured on the bench's 10k fan-out (4 workers × 10 clusters): 16
 * slots took 17–23 % longer than 40, the apiserver having room; 8 workers on 40 slots were 13–16 % slower than 4
 * workers whose 40 writes had 64 slots (paired rounds, docs/benchmarks.md eleventh round).
 */
export function hubRequestsInFlight(concurrency: number): number {
  return Math.max(64, REQUESTS_PER_WORKER * concurrency);
}

export const REQUESTS_PER_WORKER = 16;

/** Builds the hub. `leading` tells the class reconciler whether it may write its status now. */
export function assembleHub(o: HubOptions, leading: () => boolean): Hub {
  const log = o.logger;
  const queue = (name: string): WorkQueue => new WorkQueue({ name, observer: o.metrics?.workQueueObserver(name) });
  const queues = { classes: queue('gatewayclass'), policies: queue('policy'), spokeConfig: queue('spoke-config'), gatewayStatus: queue('gateway-status'), variantStatus: queue('variant-status') };
  const fairWrites = new FairGate(new TokenBucket({ qps: o.qps, burst: o.burst }));
  const http = new KubeHttp(o.kubeConfig, {
    ...o.connection,
    // Clusters take turns at the write budget: one cluster's burst or flapping never holds back another's.
    writeGate: (path) => fairWrites.take(writeLane(path)),
    writeGuard: o.leadership?.guard,
    maxInFlight: hubRequestsInFlight(o.concurrency),
    onResponse: o.metrics && ((method, path, code, ms) => o.metrics?.clientRequest(method, path, code, ms)),
  });
  const configs = new ClassConfigs();
  const trustDecisionLabels = o.trustDecisionLabels ?? false;
  const caches = new HubCaches(http, configs, { controllerName: o.controllerName, trustDecisionLabels, logger: log });
  const paramsRefs = new ParamsRefs(http, (names) => names.forEach((n) => queues.classes.add(n)), log);
  const events = new EventRecorder(http, 'policy-sync-hub', log);
  const pokeSpokeConfig = (): void => {
    if (o.spokeConfig) queues.spokeConfig.add(SPOKE_CONFIG_KEY);
  };

  // The kinds in force changed: adjust the watches, then look again at every policy and every work, and
  // at the class's Gateways (the kinds their conditions count).
  const onConfigChanged = async (className: string): Promise<void> => {
    pokeSpokeConfig();
    queues.gatewayStatus.addAll(caches.gatewaysOfClass(className).map(objectKey));
    try {
      await caches.policies.reconcile(configs.kindsToWatch());
    } catch (err) {
      log.error({ err: String(err) }, 'could not adjust policy watches');
    }
    queues.policies.addAll(routeConfigChange(caches));
  };
  const ungatedKinds = new UngatedKinds();
  const classReconciler = new GatewayClassReconciler({
    http,
    controllerName: o.controllerName,
    classes: caches.classes,
    paramsRefs,
    configs,
    onConfigChanged: (className) => void onConfigChanged(className),
    canWrite: leading,
    ungatedKinds,
    logger: log,
  });

  // Every copy a bundle carries is written through the bundle writer whatever the shape; the shape says where
  // new copies go, and whether copies in works of their own move into bundles (core/works/copyroutes.ts).
  const bundles = new BundleWriter({
    http,
    logger: log,
    controller: controllerLabelValue(o.controllerName),
    capBytes: o.bundleCapBytes ?? DEFAULT_BUNDLE_CAP_BYTES,
    bundles: (cluster, namespace) => caches.bundles(cluster, namespace),
    onStale: (key) => queues.policies.add(key),
    // A fan-out under way: the policies still queued hand their copies of the same bundles over soon.
    busy: () => queues.policies.len() > 0,
  });
  const policyWorks = new WorkApplier({
    http,
    logger: log,
    onExpired: (key) => queues.policies.add(key),
    bundles,
    shape: o.workShape ?? 'per-placement',
    carriers: (key) => caches.works.carriers(key),
    onWriteFailed: (key, afterMs) => queues.policies.addAfter(key, afterMs),
  });
  // Enforcement first: while a burst of ManifestWork writes is under way (policies waiting, works
  // written within the last second), the annotation writes wait — the apiserver is the bottleneck of a
  // fan-out — and a policy changed again meanwhile ends in one write. A lone change is reported at once.
  const statusWrites = new YieldingWrites({
    busy: () => queues.policies.len() > 0 && policyWorks.writing(STATUS_YIELD_WINDOW_MS),
    maxDelayMs: STATUS_YIELD_MAX_MS,
    concurrency: o.concurrency,
    onError: (key, err) => {
      const gateway = gatewayOfWriteKey(key);
      if (gateway !== undefined) {
        log.warn({ gateway, err: String(err) }, 'Gateway status write failed; looking at the Gateway again');
        queues.gatewayStatus.addRateLimited(gateway);
        return;
      }
      const variant = variantOfWriteKey(key);
      if (variant !== undefined) {
        // A variant deleted while its write was held needs none.
        if (!isNotFound(err)) log.warn({ variant, err: String(err) }, 'PolicyVariant status write failed; looking at the variant again');
        queues.variantStatus.addRateLimited(variant);
        return;
      }
      // A policy deleted while its write was held: the reconcile forgets it.
      if (!isNotFound(err)) log.warn({ policy: key, err: String(err) }, 'status annotation write failed; reconciling the policy again');
      queues.policies.addRateLimited(key);
    },
  });
  const reporter = new StatusReporter({ http, events, logger: log, coalesceMs: o.statusCoalesceMs, maxWorkBytes: o.maxWorkBytes, writes: statusWrites, metrics: o.metrics });
  const reports = o.spokeConfig
    ? new SpokeReports({ staleAfterMs: o.spokeReportStaleAfterMs ?? DEFAULT_REPORT_STALE_MS, config: o.spokeConfig, onChange: (_cluster, scopes, copiesOf) => {
          queues.policies.addAll(routeReportChange(scopes, caches));
          queues.policies.addAll(routeReportedCopies(copiesOf, caches));
          // Whether the report still lists copies keeps the spoke configuration there (spokeconfigsyncer.ts).
          queues.spokeConfig.add(SPOKE_CONFIG_KEY);
        }, logger: log })
    : undefined;
  const rollouts = new Rollouts();
  const lingerClocks = new LingerClocks();
  const variantOutcomes = new VariantOutcomes();
  const policies = new PolicyReconciler(
    {
      http,
      watches: caches.policies,
      classes: caches.classes,
      gateways: caches.gateways,
      decisions: caches.decisions,
      managedClusters: caches.managedClusters,
      placed: caches.placed,
      works: caches.works,
      variants: caches.variants,
      configs,
      applier: policyWorks,
      reporter,
      rollouts,
      lingerClocks,
      mender: new LingeringMender({ http, workObjects: caches.workObjects, controller: controllerLabelValue(o.controllerName), logger: log }),
      variantOutcomes,
      variantsChanged: (keys) => queues.variantStatus.addAll(keys),
      deletedPolicyLooked: (key) => gatewaysAfterPolicies(lingerClocks.gatewaysOfDeleted(key)),
      ...(reports ? { reports } : {}),
      ungatedKinds,
      logger: log,
    },
    { controllerName: o.controllerName, rawFeedback: o.rawFeedback, maxWorkBytes: o.maxWorkBytes },
  );

  const gatewayStatus = new GatewayStatusReconciler({
    http,
    controllerName: o.controllerName,
    gateways: caches.gateways,
    classes: caches.classes,
    managedClusters: caches.managedClusters,
    placed: caches.placed,
    configs,
    policiesTargeting: (gateway) => caches.policiesTargeting(gateway),
    policiesOfKind: (gr) => caches.policiesOfKind(gr),
    deletedLingering: (gatewayKey) => lingerClocks.lingeringOnGateway(gatewayKey, (key) => reporter.reports(key), Date.now()),
    writes: statusWrites,
    policiesPending: () => queues.policies.len() > 0 || queues.policies.processingCount() > 0,
    coalesceMs: o.statusCoalesceMs,
    logger: log,
  });

  const variantStatus = new VariantStatusReconciler({ http, variants: caches.variants, watches: caches.policies, outcomes: variantOutcomes, events, canWrite: leading, writes: statusWrites, logger: log });

  const observer = (name: string) => o.metrics?.controllerObserver(name);
  const classRunner = new ControllerRunner({ name: 'gatewayclass', queue: queues.classes, reconcile: (k) => classReconciler.reconcile(k), concurrency: 1, logger: log, observer: observer('gatewayclass') });
  const writers = [
    new ControllerRunner({ name: 'policy', queue: queues.policies, reconcile: (k) => policies.reconcile(k), concurrency: o.concurrency, logger: log, observer: observer('policy') }),
    new ControllerRunner({ name: 'gateway-status', queue: queues.gatewayStatus, reconcile: (k) => gatewayStatus.reconcile(k), concurrency: 2, logger: log, observer: observer('gateway-status') }),
    new ControllerRunner({ name: 'variant-status', queue: queues.variantStatus, reconcile: (k) => variantStatus.reconcile(k), concurrency: 1, logger: log, observer: observer('variant-status') }),
  ];
  const appliers = [policyWorks];
  if (o.spokeConfig) {
    const applier = new WorkApplier({ http, logger: log, onExpired: pokeSpokeConfig });
    appliers.push(applier);
    const syncer = new SpokeConfigSyncer({
      applier,
      classes: caches.classes,
      gateways: caches.gateways,
      managedClusters: caches.managedClusters,
      placed: caches.placed,
      works: caches.works,
      configs,
      controllerName: o.controllerName,
      configMap: o.spokeConfig,
      lingering: lingerClocks,
      reportFresh: (cluster) => reports?.fresh(cluster) !== undefined,
      logger: log,
    });
    writers.push(new ControllerRunner({ name: 'spoke-config', queue: queues.spokeConfig, reconcile: () => syncer.reconcile(), logger: log, observer: observer('spoke-config') }));
  }

  // Computed from the caches at scrape time.
  o.metrics?.setCollectors({
    works: () => countWorkStates(caches.works.store.list()),
    clusters: () => {
      const counts = reporter.clusterStates(new Set(caches.watchedKinds().map(groupResourceKey)));
      // A deleted policy's lingering copies have no status to count them: the linger clocks do.
      counts.lingering += lingerClocks.lingeringUncounted((key) => reporter.reports(key), Date.now());
      return counts;
    },
    watchedKinds: () => caches.watchedKinds().length,
    spokeReportAges: () => reports?.ages(),
    rollouts: () => rollouts.counts(),
  });

  // The wiring: each cache's changes, through its route, into a queue. Echoes of our own writes (an
  // annotation the reporter wrote, a work the applier created) are filtered before routing.
  // The hub Gateways' status: each change that moves what it is computed from, into its own queue. A
  // policy's verdicts coming back (our annotation write's echo, filtered below for the policy queue)
  // wait out the Gateway's coalescing window.
  const gatewaysAfterPolicies = (keys: readonly string[]): void => keys.forEach((k) => queues.gatewayStatus.addAfter(k, gatewayStatus.delay(k)));
  caches.classes.onChange((c) => {
    queues.classes.add(c.object.metadata.name);
    queues.gatewayStatus.addAll(gatewayStatusOfClass(c, caches));
  });
  caches.onPolicyChange((gvr, change) => {
    gatewaysAfterPolicies(gatewayStatusOfPolicy(change));
    if (change.type === 'DELETED') {
      // What its Gateways will need to say its lingering copies, once no policy is left to say them.
      const { namespace = '', name } = change.object.metadata;
      lingerClocks.deleted(policyKey(gvr, namespace, name), { group: gvr.group, resource: gvr.resource, ...(change.object.kind ? { kind: change.object.kind } : {}), namespace, name, gateways: targetedGateways(change.object) });
    }
    if (change.type === 'MODIFIED' && reporter.confirmsWrite(policyKey(gvr, change.object.metadata.namespace ?? '', change.object.metadata.name), change)) return;
    queues.policies.addAll(routePolicyChange(gvr, change, caches));
  });
  caches.onKindSynced((gvr) => queues.policies.addAll(routeKindSynced(gvr, caches)));
  caches.gateways.onChange((c) => {
    queues.gatewayStatus.addAll(gatewayStatusOfGateway(c));
    // A status write (ours, or another writer's) moves nothing the policies or the spoke configuration read.
    if (gatewayStatusOnly(c)) return;
    queues.policies.addAll(routeGatewayChange(c, caches));
    pokeSpokeConfig();
  });
  caches.decisions.onChange((c) => {
    queues.policies.addAll(routeDecisionChange(c, caches));
    queues.gatewayStatus.addAll(gatewayStatusOfPlacement(c, caches, true));
    pokeSpokeConfig();
  });
  caches.placements.onChange((c) => {
    queues.policies.addAll(routePlacementChange(c, caches));
    queues.gatewayStatus.addAll(gatewayStatusOfPlacement(c, caches, false));
    pokeSpokeConfig();
  });
  caches.variants.onChange((c) => {
    queues.variantStatus.add(objectKey(c.object));
    // Its own status write changes nothing a policy reads.
    if (c.old !== undefined && c.old !== c.object && c.old.metadata.generation === c.object.metadata.generation) return;
    queues.policies.addAll(routeVariantChange(c, caches));
  });
  caches.managedClusters.onChange((c) => {
    queues.policies.addAll(routeManagedClusterChange(c, caches, trustDecisionLabels));
    queues.gatewayStatus.addAll(gatewayStatusOfCluster(c, caches, trustDecisionLabels));
    pokeSpokeConfig();
  });
  for (const sets of [caches.clusterSets, caches.bindings]) {
    sets.onChange(() => {
      if (trustDecisionLabels) return;
      queues.policies.addAll(routeClusterSetChange(caches, trustDecisionLabels));
      queues.gatewayStatus.addAll(gatewayStatusOfClusterSets(caches, trustDecisionLabels));
      pokeSpokeConfig();
    });
  }
  // The spoke reports are read from the config works' feedback, their heartbeats from the heartbeat works':
  // their store follows the works cache.
  if (reports) {
    caches.works.onChange((c) => {
      if (!isSpokeConfigWork(c.object)) return;
      const cluster = c.object.metadata.namespace ?? '';
      const work = c.type === 'DELETED' ? undefined : c.object;
      if (isSpokeHeartbeatWork(c.object)) reports.observeHeartbeat(cluster, work);
      else reports.observe(cluster, work);
    });
  }
  // What the writer remembers of its own writes goes as soon as the cache shows them.
  caches.workObjects.onChange((c) => {
    if (isBundle(c.object)) bundles.cached(c.object, c.type === 'DELETED');
  });
  caches.works.onChange((c) => {
    const keys = routeWorkChange(c, caches);
    reporter.workChanged(c, keys.policies);
    if (keys.spokeConfig) pokeSpokeConfig();
    if (c.type === 'ADDED' && keys.policies.length > 0 && policyWorks.confirmsCreate(c.object)) return;
    if (keys.policies.length > 0 && policyWorks.confirmsBundledPut(c)) return;
    // Often a status change: its policy at once, or at the end of its coalescing window — but at once while
    // a Progressive rollout of it waits on that verdict (the window would delay each wave, not just a write).
    for (const key of keys.policies) queues.policies.addAfter(key, rollouts.progressing(key) ? 0 : reporter.delay(key));
  });

  return { http, caches, configs, queues, classRunner, writers, appliers, statusWrites, paramsRefs, reports };
}
