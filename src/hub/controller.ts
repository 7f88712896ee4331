// The hub controller's lifecycle: start the caches (every replica, read-only), lead (the writers start),
// stop, and say whether it is idle. What it runs is built by assembly.ts.
import type { Logger } from 'pino';
import { ownsClass } from '../core/params/classparams.ts';
import { sleep, systemClock, type Clock } from '../runtime/clock.ts';
import { assembleHub, type Hub, type HubOptions } from './assembly.ts';
import type { ClassConfigs } from './classconfigs.ts';

/** How often start-up looks whether the GatewayClass params are read and the policy kinds listed. */
const CONFIG_KNOWN_POLL_MS = 50;

export class HubController {
  private readonly hub: Hub;
  private readonly log: Logger;
  private readonly clock: Clock;
  private leading = false;
  private stopped = false;
  /** The configuration at start-up is known (whenConfigKnown); the writers wait for it. Set by startCaches. */
  private configKnown: Promise<void> = Promise.resolve();

  constructor(private readonly options: HubOptions) {
    this.log = options.logger;
    this.clock = options.clock ?? systemClock;
    this.hub = assembleHub(options, () => this.leading);
  }

  /** The GatewayClass configurations in force. */
  get configs(): ClassConfigs {
    return this.hub.configs;
  }

  /**
   * Starts the watches and waits for the caches, then runs the GatewayClass reconciler read-only: a
   * standby keeps its caches warm — the policy kinds' watches included — and writes nothing.
   */
  async startCaches(): Promise<void> {
    const { caches } = this.hub;
    await caches.start();
    this.log.info({ works: caches.works.store.size, gatewayClasses: caches.classes.store.size }, 'caches synced');
    this.hub.classRunner.start();
    this.configKnown = this.whenConfigKnown(caches.classes.store.list().map((c) => c.metadata.name));
  }

  /** Leadership: GatewayClass status writes on, and the reconcilers that write start. */
  lead(): void {
    if (this.leading) return;
    this.leading = true;
    this.log.info({}, 'leading: starting reconcilers');
    for (const c of this.hub.caches.classes.store.list()) this.hub.queues.classes.add(c.metadata.name);
    for (const a of this.hub.appliers) a.start();
    // Not before the GatewayClass params are read: every policy queued by the works' first list would be
    // reconciled for nothing — its kind not watched yet, its class unknown to the deletion rule (which
    // keeps the works and warns) — and again once the kind is listed. Its key waits in the queue instead.
    void this.configKnown.then(() => {
      if (!this.stopped) for (const r of this.hub.writers) r.start();
    });
  }

  /** Without leader election: caches, then lead at once. */
  async start(): Promise<void> {
    await this.startCaches();
    this.lead();
  }

  get cachesSynced(): boolean {
    return this.hub.caches.synced;
  }

  /**
   * No key is waiting, being reconciled or waiting to be retried after a failure in any queue, and no
   * status write is held back or under way. Keys scheduled for a later look (periodic re-checks, the end of
   * a grace or coalescing window) do not count: this says "nothing to do right now", not "nothing ever".
   */
  idle(): boolean {
    return Object.values(this.hub.queues).every((q) => q.len() === 0 && q.processingCount() === 0 && q.retryingCount() === 0) && this.hub.statusWrites.pending === 0;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const { hub } = this;
    await Promise.all([hub.classRunner, ...hub.writers].map((r) => r.stop({ drainTimeoutMs: 10_000 })));
    hub.statusWrites.stop();
    for (const a of hub.appliers) a.stop();
    await hub.caches.stop();
    await hub.paramsRefs.stop();
    hub.reports?.stop();
    hub.http.destroy();
  }

  /**
   * Resolves once the configuration in force at start-up is known: each GatewayClass present at sync had
   * its params read by the class reconciler (valid, or invalid or missing: known unusable counts, so
   * such a class holds nothing up), and each policy kind watch this started has listed or failed to
   * (its keys then wait for its sync, as always). Polled: a class deleted or disowned meanwhile, or a
   * failed list, has no event of its own here.
   */
  private async whenConfigKnown(classNames: readonly string[]): Promise<void> {
    const { caches, configs } = this.hub;
    const started = this.clock.now();
    const classesRead = (): boolean => classNames.every((n) => !ownsClass(caches.classes.store.get(n), this.options.controllerName) || configs.paramsRead(n));
    const kindsListed = (): boolean =>
      caches.policies.kinds().every((k) => {
        const informer = caches.policies.informer(k.gvr);
        return !informer || informer.synced || informer.lastError !== undefined;
      });
    while (!this.stopped && !(classesRead() && kindsListed())) await sleep(this.clock, CONFIG_KNOWN_POLL_MS);
    if (!this.stopped) this.log.info({ gatewayClasses: classNames.length, kinds: caches.policies.kinds().length, waitedMs: Math.round(this.clock.now() - started) }, 'GatewayClass params read, policy kinds listed');
  }
}
