// Assembly of the hub controller: the informers, the event → key mappings (eventkeys.ts), the reconcilers
// and their runners. Handlers here only map changes to keys; all work happens in the reconcilers.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { KubeAccess } from '../kube/kubeconfig.ts';
import { cachedObject, workCacheView } from '../core/cacheview.ts';
import { canonicalJson } from '../core/k8s/canonical.ts';
import { groupResourceKey, type GroupResource } from '../core/k8s/gvr.ts';
import { controllerLabelValue, readSourceRef } from '../core/works/manifestwork.ts';
import { CONTROLLER_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE, SOURCE_LABEL } from '../core/metadatakeys.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { hubNamespacesRendering, possibleRivals } from '../core/targets/rivals.ts';
import { countWorkStates } from '../core/works/workstate.ts';
import { DynamicInformers } from '../kube/dynamicinformers.ts';
import { EventRecorder } from '../kube/events.ts';
import { KubeHttp, isNotFound, type ConnectionOptions } from '../kube/http.ts';
import { Informer } from '../kube/informer.ts';
import { RESOURCES } from '../kube/resource.ts';
import type { Leadership } from '../runtime/leadership.ts';
import type { Metrics } from '../runtime/metrics.ts';
import { FairGate } from '../runtime/fairgate.ts';
import { TokenBucket } from '../runtime/ratelimiter.ts';
import { ControllerRunner, type ControllerObserver } from '../runtime/runner.ts';
import { WorkQueue } from '../runtime/workqueue.ts';
import { YieldingWrites } from '../runtime/yieldingwrites.ts';
import { ClassConfigs } from './classconfigs.ts';
import { GatewayClassReconciler, ownsClass } from './gatewayclassreconciler.ts';
import {
  keysForDecisionChange,
  keysForGatewayChange,
  keysForManagedClusterChange,
  keysForPlacementChange,
  keysForPolicyChange,
  keysForWorkChange,
  sourceKeyOfWork,
  type KindedPolicy,
} from './eventkeys.ts';
import { BY_CLUSTER, BY_GATEWAY, BY_NAME, BY_NAMESPACE, BY_PLACEMENT, BY_SOURCE, gatewayTemplates, placementOfDecision, placementOfGateway, targetedGateways, writeLane } from './indexes.ts';
import { policyKey } from '../core/keys.ts';
import { ParamsRefs } from './paramsrefs.ts';
import { GatewayPlacements } from './placements.ts';
import { clustersFromDecisions } from '../core/fleet/placement.ts';
import { PolicyReconciler } from './policyreconciler.ts';
import { SPOKE_CONFIG_KEY, SpokeConfigSyncer } from './spokeconfigsyncer.ts';
import { SpokeReports } from './spokereports.ts';
import { DEFAULT_REPORT_STALE_MS, WHOLE_KIND, type ReportScope } from '../core/spoke/spokereport.ts';
import { isSpokeConfigWork } from '../core/spoke/spokeconfig.ts';
import { StatusReporter } from './statusreporter.ts';
import { WorkApplier } from './workapplier.ts';

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
  /** The longest a status annotation write waits behind ManifestWork writes (default 60 s). */
  statusYieldMaxMs?: number;
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
}

export const DEFAULT_CONTROLLER_NAME = 'kuadrant.io/policy-sync-controller';

/** How long a status write yields to ManifestWork writes at most, by default. */
export const DEFAULT_STATUS_YIELD_MAX_MS = 60_000;
/** Works written this recently count as a burst under way. */
const STATUS_YIELD_WINDOW_MS = 1_000;

/** How often start-up looks whether the GatewayClass params are read and the policy kinds listed. */
const CONFIG_KNOWN_POLL_MS = 50;

export class HubController {
  private readonly http: KubeHttp;
  private readonly classes: Informer;
  private readonly gateways: Informer;
  private readonly decisions: Informer;
  private readonly placements: Informer;
  private readonly managedClusters: Informer;
  private readonly clusterSets: Informer;
  private readonly bindings: Informer;
  private readonly placed: GatewayPlacements;
  private readonly works: Informer;
  private readonly watches: DynamicInformers;
  private readonly paramsRefs: ParamsRefs;
  readonly configs = new ClassConfigs();
  private readonly classQueue: WorkQueue;
  private readonly policyQueue: WorkQueue;
  private readonly spokeConfigQueue: WorkQueue;
  private readonly classRunner: ControllerRunner;
  /** The runners that write; started only while leading. */
  private readonly writers: ControllerRunner[];
  private leading = false;
  private stopped = false;
  /** The configuration at start-up is known (whenConfigKnown); the writers wait for it. Set by startCaches. */
  private configKnown: Promise<void> = Promise.resolve();
  private readonly reporter: StatusReporter;
  private readonly statusWrites: YieldingWrites;
  private readonly appliers: WorkApplier[];
  private readonly policyWorks: WorkApplier;
  private readonly reports: SpokeReports | undefined;
  private readonly log: Logger;

  constructor(private readonly o: HubOptions) {
    this.log = o.logger;
    const queue = (name: string): WorkQueue => new WorkQueue({ name, observer: o.metrics?.workQueueObserver(name) });
    this.classQueue = queue('gatewayclass');
    this.policyQueue = queue('policy');
    this.spokeConfigQueue = queue('spoke-config');
    const observer = (name: string): ControllerObserver | undefined => o.metrics?.controllerObserver(name);
    const fairWrites = new FairGate(new TokenBucket({ qps: o.qps, burst: o.burst }));
    this.http = new KubeHttp(o.kubeConfig, {
      ...o.connection,
      // Clusters take turns at the write budget: one cluster's burst or flapping never holds back another's.
      writeGate: (path) => fairWrites.take(writeLane(path)),
      writeGuard: o.leadership?.guard,
      maxSockets: Math.max(16, o.concurrency * 4),
      onResponse: o.metrics && ((method, path, code) => o.metrics?.clientRequest(method, path, code)),
    });
    const informer = (name: string, resource: ConstructorParameters<typeof Informer>[1], labelSelector?: string, transform = cachedObject): Informer =>
      new Informer(this.http, resource, { logger: this.log.child({ informer: name }), labelSelector, transform });
    this.classes = informer('gatewayclasses', RESOURCES.gatewayClasses);
    this.gateways = informer('gateways', RESOURCES.gateways);
    this.decisions = informer('placementdecisions', RESOURCES.placementDecisions);
    this.placements = informer('placements', RESOURCES.placements);
    this.managedClusters = informer('managedclusters', RESOURCES.managedClusters);
    this.clusterSets = informer('managedclustersets', RESOURCES.managedClusterSets);
    this.bindings = informer('managedclustersetbindings', RESOURCES.managedClusterSetBindings);
    this.bindings.store.addIndex(BY_NAMESPACE, (b) => [b.metadata.namespace ?? '']);
    this.works = informer('manifestworks', RESOURCES.manifestWorks, `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE},${CONTROLLER_LABEL}=${controllerLabelValue(o.controllerName)}`, workCacheView());
    this.gateways.store.addIndex(BY_PLACEMENT, placementOfGateway).addIndex(BY_NAME, (g) => [g.metadata.name]);
    this.decisions.store.addIndex(BY_PLACEMENT, placementOfDecision);
    this.placed = new GatewayPlacements(
      { decisions: this.decisions, placements: this.placements, managedClusters: this.managedClusters, clusterSets: this.clusterSets, bindings: this.bindings },
      o.trustDecisionLabels ?? false,
    );
    this.works.store.addIndex(BY_SOURCE, (w) => {
      const source = w.metadata.labels?.[SOURCE_LABEL];
      return source ? [source] : [];
    });
    this.works.store.addIndex(BY_CLUSTER, (w) => [w.metadata.namespace ?? '']);

    this.watches = new DynamicInformers(this.http, {
      onChange: (gvr, change) => {
        if (change.type === 'MODIFIED' && this.reporter.confirmsWrite(policyKey(gvr, change.object.metadata.namespace ?? '', change.object.metadata.name), change)) return;
        const templates = gatewayTemplates(this.gateways, this.configs);
        const rivalsOf = (p: KubeObject) => possibleRivals(p, this.watches.informer(gvr)?.store.byIndex(BY_NAME, p.metadata.name) ?? [], templates);
        this.policyQueue.addAll(keysForPolicyChange(gvr, change, rivalsOf));
      },
      // Keys of a kind whose watch was not synced were dropped (nothing is decided on an unsynced cache).
      // Its first list brought every policy that exists; the works of those that do not are looked at now.
      onSynced: (gvr) => this.enqueueOrphanedWorksOfKind(gvr),
      configure: (i) =>
        i.store
          .addIndex(BY_GATEWAY, targetedGateways)
          .addIndex(BY_NAME, (p) => [p.metadata.name])
          .addIndex(BY_NAMESPACE, (p) => [p.metadata.namespace ?? '']),
      transform: cachedObject,
      logger: this.log,
    });
    this.paramsRefs = new ParamsRefs(this.http, (names) => names.forEach((n) => this.classQueue.add(n)), this.log);
    const events = new EventRecorder(this.http, 'policy-sync-hub', this.log);

    const classReconciler = new GatewayClassReconciler({
      http: this.http,
      controllerName: o.controllerName,
      classes: this.classes,
      paramsRefs: this.paramsRefs,
      configs: this.configs,
      onConfigChanged: () => void this.onConfigChanged(),
      canWrite: () => this.leading,
      logger: this.log,
    });
    // Enforcement first: while a burst of ManifestWork writes is under way (policies waiting, works
    // written within the last second), the annotation writes wait — the apiserver is the bottleneck of a
    // fan-out — and a policy changed again meanwhile ends in one write. A lone change is reported at once.
    this.statusWrites = new YieldingWrites({
      busy: () => this.policyQueue.len() > 0 && this.policyWorks.writing(STATUS_YIELD_WINDOW_MS),
      maxDelayMs: o.statusYieldMaxMs ?? DEFAULT_STATUS_YIELD_MAX_MS,
      concurrency: o.concurrency,
      onError: (key, err) => {
        // A policy deleted while its write was held: the reconcile forgets it.
        if (!isNotFound(err)) this.log.warn({ policy: key, err: String(err) }, 'status annotation write failed; reconciling the policy again');
        this.policyQueue.addRateLimited(key);
      },
    });
    this.reporter = new StatusReporter({ http: this.http, events, logger: this.log, coalesceMs: o.statusCoalesceMs, maxWorkBytes: o.maxWorkBytes, writes: this.statusWrites });
    this.reports = o.spokeConfig
      ? new SpokeReports({ staleAfterMs: o.spokeReportStaleAfterMs ?? DEFAULT_REPORT_STALE_MS, onChange: (_cluster, scopes) => this.enqueuePoliciesInScopes(scopes), logger: this.log })
      : undefined;
    const policyWorks = new WorkApplier({ http: this.http, logger: this.log, onExpired: (key) => this.policyQueue.add(key) });
    this.policyWorks = policyWorks;
    const policies = new PolicyReconciler(
      {
        http: this.http,
        watches: this.watches,
        classes: this.classes,
        gateways: this.gateways,
        decisions: this.decisions,
        managedClusters: this.managedClusters,
        placed: this.placed,
        works: this.works,
        configs: this.configs,
        applier: policyWorks,
        reporter: this.reporter,
        ...(this.reports ? { reports: this.reports } : {}),
        logger: this.log,
      },
      { controllerName: o.controllerName, rawFeedback: o.rawFeedback, maxWorkBytes: o.maxWorkBytes },
    );
    this.appliers = [policyWorks];
    let spokeConfig: SpokeConfigSyncer | undefined;
    if (o.spokeConfig) {
      const applier = new WorkApplier({ http: this.http, logger: this.log, onExpired: () => this.enqueueSpokeConfig() });
      this.appliers.push(applier);
      spokeConfig = new SpokeConfigSyncer({
        applier,
        classes: this.classes,
        gateways: this.gateways,
        managedClusters: this.managedClusters,
        placed: this.placed,
        works: this.works,
        configs: this.configs,
        controllerName: o.controllerName,
        configMap: o.spokeConfig,
        logger: this.log,
      });
    }
    this.classRunner = new ControllerRunner({ name: 'gatewayclass', queue: this.classQueue, reconcile: (k) => classReconciler.reconcile(k), concurrency: 1, logger: this.log, observer: observer('gatewayclass') });
    this.writers = [
      new ControllerRunner({ name: 'policy', queue: this.policyQueue, reconcile: (k) => policies.reconcile(k), concurrency: o.concurrency, logger: this.log, observer: observer('policy') }),
    ];
    if (spokeConfig) {
      const syncer = spokeConfig;
      this.writers.push(
        new ControllerRunner({ name: 'spoke-config', queue: this.spokeConfigQueue, reconcile: () => syncer.reconcile(), logger: this.log, observer: observer('spoke-config') }),
      );
    }
    // Computed from the caches at scrape time.
    o.metrics?.setCollectors({
      works: () => countWorkStates(this.works.store.list()),
      clusters: () => this.reporter.clusterStates(new Set(this.watches.kinds().map((k) => groupResourceKey(k.gvr)))),
      watchedKinds: () => this.watches.kinds().length,
    });

    this.classes.onChange((c) => this.classQueue.add(c.object.metadata.name));
    this.gateways.onChange((c) => {
      this.policyQueue.addAll(keysForGatewayChange(c, (gw) => this.policiesTargeting(gw), (name) => this.gateways.store.byIndex(BY_NAME, name)));
      this.enqueueSpokeConfig();
    });
    this.decisions.onChange((c) => {
      this.policyQueue.addAll(keysForDecisionChange(c, (p) => this.gateways.store.byIndex(BY_PLACEMENT, p), (gw) => this.policiesTargeting(gw)));
      this.enqueueSpokeConfig();
    });
    this.placements.onChange((c) => {
      this.policyQueue.addAll(keysForPlacementChange(c, (p) => this.gateways.store.byIndex(BY_PLACEMENT, p), (gw) => this.policiesTargeting(gw)));
      this.enqueueSpokeConfig();
    });
    this.managedClusters.onChange((c) => {
      this.policyQueue.addAll(keysForManagedClusterChange(c, (cluster) => this.works.store.byIndex(BY_CLUSTER, cluster)));
      // Its labels may have moved it into or out of a ManagedClusterSet: the Gateways it is decided for. Its
      // status updates (resources, conditions) are no such move.
      const relabelled = !c.old || c.old === c.object || canonicalJson(c.old.metadata.labels ?? {}) !== canonicalJson(c.object.metadata.labels ?? {});
      if (!this.o.trustDecisionLabels && relabelled) this.policyQueue.addAll(this.gateways.store.list().filter((g) => this.decidedFor(g, c.object.metadata.name)).flatMap((g) => this.keysOfGateway(g)));
      this.enqueueSpokeConfig();
    });
    // Sets and bindings say which clusters each namespace may place on: rare changes, every Gateway looked at.
    for (const sets of [this.clusterSets, this.bindings]) {
      sets.onChange(() => {
        if (this.o.trustDecisionLabels) return;
        this.policyQueue.addAll(this.gateways.store.list().flatMap((g) => this.keysOfGateway(g)));
        this.enqueueSpokeConfig();
      });
    }
    this.works.onChange((c) => {
      if (this.reports && isSpokeConfigWork(c.object)) this.reports.observe(c.object.metadata.namespace ?? '', c.type === 'DELETED' ? undefined : c.object);
      const keys = keysForWorkChange(c);
      if (keys.spokeConfig) this.enqueueSpokeConfig();
      if (c.type === 'ADDED' && keys.policies.length > 0 && this.policyWorks.confirmsCreate(c.object)) return;
      for (const key of keys.policies) this.enqueueForStatus(key);
    });
  }

  /**
   * Starts the watches and waits for the caches, then runs the GatewayClass reconciler read-only: a
   * standby keeps its caches warm — the policy kinds' watches included — and writes nothing.
   */
  async startCaches(): Promise<void> {
    for (const i of this.caches()) i.start();
    await Promise.all(this.caches().map((i) => i.waitForSync()));
    this.log.info({ works: this.works.store.size, gatewayClasses: this.classes.store.size }, 'caches synced');
    this.classRunner.start();
    this.configKnown = this.whenConfigKnown(this.classes.store.list().map((c) => c.metadata.name));
  }

  /** The informers every decision reads; the policy kinds' watches come and go with the configuration. */
  private caches(): Informer[] {
    return [this.classes, this.gateways, this.decisions, this.placements, this.managedClusters, this.clusterSets, this.bindings, this.works];
  }

  /** Leadership: GatewayClass status writes on, and the reconcilers that write start. */
  lead(): void {
    if (this.leading) return;
    this.leading = true;
    this.log.info({}, 'leading: starting reconcilers');
    for (const c of this.classes.store.list()) this.classQueue.add(c.metadata.name);
    for (const a of this.appliers) a.start();
    // Not before the GatewayClass params are read: every policy queued by the works' first list would be
    // reconciled for nothing — its kind not watched yet, its class unknown to the deletion rule (which
    // keeps the works and warns) — and again once the kind is listed. Its key waits in the queue instead.
    void this.configKnown.then(() => {
      if (!this.stopped) for (const r of this.writers) r.start();
    });
  }

  /** Without leader election: caches, then lead at once. */
  async start(): Promise<void> {
    await this.startCaches();
    this.lead();
  }

  get cachesSynced(): boolean {
    return this.caches().every((i) => i.synced) && this.watches.allSynced;
  }

  /**
   * No key is waiting or being reconciled in either queue, and no status write is held back or under
   * way. Keys scheduled for later (periodic re-checks, retries after a backoff) do not count: this says
   * "nothing to do right now", not "nothing ever again".
   */
  idle(): boolean {
    return [this.classQueue, this.policyQueue, this.spokeConfigQueue].every((q) => q.len() === 0 && q.processingCount() === 0) && this.statusWrites.pending === 0;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.classRunner, ...this.writers].map((r) => r.stop({ drainTimeoutMs: 10_000 })));
    this.statusWrites.stop();
    for (const a of this.appliers) a.stop();
    await Promise.all(this.caches().map((i) => i.stop()));
    await this.watches.stop();
    await this.paramsRefs.stop();
    this.reports?.stop();
    this.http.destroy();
  }

  /**
   * Resolves once the configuration in force at start-up is known: each GatewayClass present at sync had
   * its params read by the class reconciler (valid, or invalid or missing: known unusable counts, so
   * such a class holds nothing up), and each policy kind watch this started has listed or failed to
   * (its keys then wait for its sync, as always). Polled: a class deleted or disowned meanwhile, or a
   * failed list, has no event of its own here.
   */
  private async whenConfigKnown(classNames: readonly string[]): Promise<void> {
    const started = Date.now();
    const classesRead = (): boolean => classNames.every((n) => !ownsClass(this.classes.store.get(n), this.o.controllerName) || this.configs.paramsRead(n));
    const kindsListed = (): boolean =>
      this.watches.kinds().every((k) => {
        const informer = this.watches.informer(k.gvr);
        return !informer || informer.synced || informer.lastError !== undefined;
      });
    while (!this.stopped && !(classesRead() && kindsListed())) await sleep(CONFIG_KNOWN_POLL_MS, undefined, { ref: false });
    if (!this.stopped) this.log.info({ gatewayClasses: classNames.length, kinds: this.watches.kinds().length, waitedMs: Date.now() - started }, 'GatewayClass params read, policy kinds listed');
  }

  /** The kinds in force changed: adjust the watches, then look again at every policy and every work. */
  private async onConfigChanged(): Promise<void> {
    this.enqueueSpokeConfig();
    try {
      await this.watches.reconcile(this.configs.wantedKinds());
    } catch (err) {
      this.log.error({ err: String(err) }, 'could not adjust policy watches');
    }
    for (const kind of this.watches.kinds()) {
      for (const p of this.watches.informer(kind.gvr)?.store.list() ?? []) this.policyQueue.add(policyKey(kind.gvr, p.metadata.namespace ?? '', p.metadata.name));
    }
    // The works of a kind still listing wait for its sync (onSynced): a reconcile now would decide nothing.
    for (const w of this.works.store.list()) {
      const source = readSourceRef(w);
      if (!source || this.watches.informer(source)?.synced !== false) this.policyQueue.addAll(sourceKeyOfWork(w));
    }
  }

  private keysOfGateway(gateway: KubeObject): string[] {
    return this.policiesTargeting(`${gateway.metadata.namespace}/${gateway.metadata.name}`).map(({ gr, policy }) => policyKey(gr, policy.metadata.namespace ?? '', policy.metadata.name));
  }

  /** The cluster is among the labelled decisions of the Gateway's Placement (counted or not). */
  private decidedFor(gateway: KubeObject, cluster: string): boolean {
    return placementOfGateway(gateway).some((p) => clustersFromDecisions(this.decisions.store.byIndex(BY_PLACEMENT, p)).includes(cluster));
  }

  /** Every watched policy targeting the Gateway `namespace/name`. */
  private policiesTargeting(gatewayKey: string): KindedPolicy[] {
    return this.watches.kinds().flatMap((kind) => (this.watches.informer(kind.gvr)?.store.byIndex(BY_GATEWAY, gatewayKey) ?? []).map((policy) => ({ gr: kind.gvr, policy })));
  }

  /**
   * A spoke's report changed in these (kind, downstream namespace) scopes: the watched policies whose copies
   * land there — those in the hub namespaces that a class's template renders into it — and no others, so
   * that one spoke whose report flaps does not re-queue the whole fleet's policies of the kind.
   */
  private enqueuePoliciesInScopes(scopes: readonly ReportScope[]): void {
    const templates = [...this.configs.downstreamTemplates()];
    for (const kind of this.watches.kinds()) {
      const store = this.watches.informer(kind.gvr)?.store;
      const mine = scopes.filter((s) => s.kind === groupResourceKey(kind.gvr));
      if (!store || mine.length === 0) continue;
      const namespaces = new Set<string>();
      let all = false;
      for (const scope of mine) {
        if (scope.namespace === WHOLE_KIND) all = true;
        for (const template of all ? [] : templates) {
          const rendering = hubNamespacesRendering(template, scope.namespace);
          if (rendering === 'any') all = true;
          else rendering.forEach((n) => namespaces.add(n));
        }
      }
      const policies = all ? store.list() : [...namespaces].flatMap((n) => store.byIndex(BY_NAMESPACE, n));
      for (const p of policies) this.policyQueue.add(policyKey(kind.gvr, p.metadata.namespace ?? '', p.metadata.name));
    }
  }

  /** The policies of the kind's works (their sources) that its synced cache does not hold: deleted while it listed. */
  private enqueueOrphanedWorksOfKind(gr: GroupResource): void {
    const store = this.watches.informer(gr)?.store;
    for (const w of this.works.store.list()) {
      const source = readSourceRef(w);
      if (!source || groupResourceKey(source) !== groupResourceKey(gr)) continue;
      if (store?.get(`${source.namespace}/${source.name}`) === undefined) this.policyQueue.addAll(sourceKeyOfWork(w));
    }
  }

  /** A work changed (often its status): its policy, at once or at the end of its coalescing window. */
  private enqueueForStatus(key: string): void {
    const delay = this.reporter.delay(key);
    if (delay > 0) this.policyQueue.addAfter(key, delay);
    else this.policyQueue.add(key);
  }

  private enqueueSpokeConfig(): void {
    if (this.o.spokeConfig) this.spokeConfigQueue.add(SPOKE_CONFIG_KEY);
  }
}
