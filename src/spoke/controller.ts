// The spoke agent's lifecycle: follow the configuration and keep the policy and report caches warm (every
// replica, read-only), lead (the report and heartbeat writer and the dropped keys' remover start), stop. What it runs is built by assembly.ts.
import { gvrKey } from '../core/k8s/gvr.ts';
import { assembleSpoke, type SpokeAgent, type SpokeOptions } from './assembly.ts';
import { KINDS_KEY } from './kindsreconciler.ts';
import { REPORT_KEY } from './reportreconciler.ts';

export class SpokeController {
  private readonly agent: SpokeAgent;
  private leading = false;

  constructor(o: SpokeOptions) {
    this.agent = assembleSpoke(o);
  }

  /** Follows the configuration and keeps the policy caches warm; writes nothing (a standby does this). */
  async startCaches(): Promise<void> {
    const { config, reportCache, kindsRunner, queues } = this.agent;
    // The report's cache syncs in its own time: the report writer waits for it.
    reportCache.start();
    if (config) {
      config.start();
      await config.waitForSync();
    }
    kindsRunner.start();
    queues.kinds.add(KINDS_KEY);
  }

  /** Leadership: the reconcilers that write start (the copies' dropped keys queued meanwhile wait for it). */
  lead(): void {
    if (this.leading) return;
    this.leading = true;
    this.agent.reportRunner.start();
    this.agent.droppedKeysRunner.start();
    this.agent.queues.report.add(REPORT_KEY);
  }

  /** Without leader election: caches, then lead at once. */
  async start(): Promise<void> {
    await this.startCaches();
    this.lead();
  }

  /** The kinds being watched, by gvrKey. */
  watchedKinds(): string[] {
    return this.agent.kinds.watched().map(gvrKey).sort();
  }

  get cachesSynced(): boolean {
    return (this.agent.config?.synced ?? true) && this.agent.reportCache.synced && this.agent.informers.allSynced;
  }

  async stop(): Promise<void> {
    const { kindsRunner, reportRunner, droppedKeysRunner, config, reportCache, informers, http } = this.agent;
    await Promise.all([kindsRunner, reportRunner, droppedKeysRunner].map((r) => r.stop({ drainTimeoutMs: 10_000 })));
    await config?.stop();
    await reportCache.stop();
    await informers.stop();
    http.destroy();
  }
}
