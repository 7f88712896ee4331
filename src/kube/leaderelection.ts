// Leader election on a coordination.k8s.io Lease, with client-go's semantics: try to acquire every
// retry period (jittered); once leading, renew every retry period and give up leadership when no
// renewal succeeded within the renew deadline; on graceful shutdown release the lease so a standby
// takes over at once instead of waiting out the lease duration.
import type { Logger } from 'pino';
import { decide, microTime, observe, released, type LeaseRecord, type Observation } from '../core/lease.ts';
import type { KubeObject } from '../core/objects.ts';
import { sleep, systemClock, type Clock } from '../runtime/clock.ts';
import { isConflict, isNotFound, type KubeHttp } from './http.ts';
import { RESOURCES, collectionPath, objectPath } from './resource.ts';

export interface LeaderElectionTiming {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export const DEFAULT_LEADER_ELECTION: LeaderElectionTiming = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
const JITTER = 1.2;

export function validateTiming(t: LeaderElectionTiming): void {
  if (!(t.leaseDurationMs > t.renewDeadlineMs)) throw new Error('the lease duration must be greater than the renew deadline');
  if (!(t.renewDeadlineMs > JITTER * t.retryPeriodMs)) throw new Error(`the renew deadline must be greater than ${JITTER} × the retry period`);
}

export interface LeaderElectorOptions extends LeaderElectionTiming {
  http: KubeHttp;
  lease: { namespace: string; name: string };
  identity: string;
  onStartedLeading: () => void;
  /** Leadership was lost (not released): the process should stop writing at once, and usually exit. */
  onStoppedLeading: () => void;
  logger?: Logger;
  clock?: Clock;
}

type Lease = Omit<KubeObject, 'spec'> & { spec?: LeaseRecord };

export class LeaderElector {
  private readonly abort = new AbortController();
  private readonly clock: Clock;
  private observation: Observation | undefined;
  private leading = false;
  private loop: Promise<void> | undefined;

  constructor(private readonly o: LeaderElectorOptions) {
    validateTiming(o);
    this.clock = o.clock ?? systemClock;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Starts campaigning in the background. */
  start(): void {
    this.loop ??= this.run().catch((err: unknown) => {
      this.o.logger?.error({ err: String(err) }, 'leader election failed');
    });
  }

  /** Stops campaigning; if leading, releases the lease. Call after the reconcilers have stopped. */
  async release(): Promise<void> {
    this.abort.abort();
    await this.loop;
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.read();
      if (lease?.spec?.holderIdentity !== this.o.identity) return;
      await this.o.http.request('PUT', this.path(), { body: { ...lease, spec: released(lease.spec, microTime(Date.now())) } });
      this.o.logger?.info({ lease: this.o.lease.name }, 'lease released');
    } catch (err) {
      this.o.logger?.warn({ err: String(err) }, 'could not release the lease; it will expire');
    }
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew()) break;
      await this.pause(this.o.retryPeriodMs * (1 + Math.random() * (JITTER - 1)));
    }
    if (signal.aborted) return;
    this.leading = true;
    this.o.logger?.info({ lease: this.o.lease.name, identity: this.o.identity }, 'became leader');
    this.o.onStartedLeading();
    let lastRenew = this.clock.now();
    while (!signal.aborted) {
      await this.pause(this.o.retryPeriodMs);
      if (signal.aborted) return;
      if (await this.tryAcquireOrRenew()) {
        lastRenew = this.clock.now();
      } else if (this.clock.now() - lastRenew > this.o.renewDeadlineMs) {
        this.leading = false;
        this.o.logger?.error({ lease: this.o.lease.name }, 'leadership lost: no renewal within the renew deadline');
        this.o.onStoppedLeading();
        return;
      }
    }
  }

  private async pause(ms: number): Promise<void> {
    try {
      await sleep(this.clock, ms, this.abort.signal);
    } catch {
      // aborted: the loop checks the signal
    }
  }

  private path(): string {
    return objectPath(RESOURCES.leases, this.o.lease.namespace, this.o.lease.name);
  }

  private async read(): Promise<Lease | undefined> {
    try {
      return await this.o.http.request<Lease>('GET', this.path());
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** One round: true when we hold the lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    try {
      const lease = await this.read();
      const now = this.clock.now();
      if (lease?.spec) this.observation = observe(this.observation, lease.spec, now);
      const decision = decide({
        current: lease?.spec,
        observation: this.observation,
        identity: this.o.identity,
        leaseDurationMs: this.o.leaseDurationMs,
        now,
        wallTime: microTime(Date.now()),
      });
      if (decision.action === 'wait') return false;
      const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { ...(lease?.metadata ?? {}), name: this.o.lease.name, namespace: this.o.lease.namespace }, spec: decision.record };
      const written = lease
        ? await this.o.http.request<Lease>('PUT', this.path(), { body })
        : await this.o.http.request<Lease>('POST', collectionPath(RESOURCES.leases, this.o.lease.namespace), { body });
      this.observation = observe(this.observation, written.spec ?? decision.record, this.clock.now());
      return true;
    } catch (err) {
      // A conflict means someone else wrote first; anything else is retried in the next round.
      if (!isConflict(err)) this.o.logger?.warn({ lease: this.o.lease.name, err: String(err) }, 'lease update failed');
      return false;
    }
  }
}
