// Leader election on a coordination.k8s.io Lease, with client-go's semantics: try to acquire every
// retry period (jittered); once leading, renew every retry period and give up leadership when no
// renewal succeeded within the renew deadline; on graceful shutdown release the lease so a standby
// takes over at once instead of waiting out the lease duration.
//
// A leader that cannot renew must stop writing before any standby can acquire (lease duration > renew
// deadline): every renew round is aborted at the renew deadline (a hung request cannot hold it past
// it), `isLeader` turns false the moment the deadline passes — write paths check it — and
// onStoppedLeading fires then, from a timer, not when a hung request finally returns.
//
// Time counts from when the last successful round was sent (its start), never from when its answer came:
// a standby judges expiry from when it saw the record change, which is after the write, so counting from the
// send keeps the leader's window inside the standby's whatever the request's latency. A write already sent
// may stay in flight only until `inFlightMs` runs out, a margin before a standby could acquire.
import type { Logger } from 'pino';
import { decide, microTime, observe, released, type LeaseRecord, type Observation } from '../core/k8s/lease.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
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
  http: Pick<KubeHttp, 'request'>;
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
  /** Local monotonic time when the last successful acquire or renew round was sent (its start). */
  private lastRenewSent = 0;
  private cancelDeadline: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly options: LeaderElectorOptions) {
    validateTiming(options);
    this.clock = options.clock ?? systemClock;
  }

  /** Leading, with a renewal within the renew deadline: writes are safe. */
  get isLeader(): boolean {
    return this.leading && this.clock.now() - this.lastRenewSent < this.options.renewDeadlineMs;
  }

  /**
   * How much longer (ms from now) a write may still be in flight: until half the gap between the renew
   * deadline and the lease duration before a standby could acquire (that half is left for the abort to
   * reach the apiserver and for timers that fire late). At most 0 when not leading. A later renewal moves
   * it on, so a write sent under a healthy lease is never cut short by it.
   */
  inFlightMs(): number {
    if (!this.leading) return 0;
    const margin = (this.options.leaseDurationMs - this.options.renewDeadlineMs) / 2;
    return this.lastRenewSent + this.options.leaseDurationMs - margin - this.clock.now();
  }

  /** Starts campaigning in the background. */
  start(): void {
    this.loop ??= this.run().catch((err: unknown) => {
      this.options.logger?.error({ err: String(err) }, 'leader election failed');
    });
  }

  /** Stops campaigning; if leading, releases the lease. Call after the reconcilers have stopped. */
  async release(): Promise<void> {
    this.abort.abort();
    this.cancelDeadline?.();
    await this.loop;
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.read();
      if (lease?.spec?.holderIdentity !== this.options.identity) return;
      await this.options.http.request('PUT', this.path(), { body: { ...lease, spec: released(lease.spec, microTime(Date.now())) } });
      this.options.logger?.info({ lease: this.options.lease.name }, 'lease released');
    } catch (err) {
      this.options.logger?.warn({ err: String(err) }, 'could not release the lease; it will expire');
    }
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    let sent = 0;
    while (!signal.aborted) {
      sent = this.clock.now();
      // An acquire answered after the renew deadline leaves no time to lead: the next round renews it first.
      if ((await this.tryAcquireOrRenew()) && this.clock.now() - sent < this.options.renewDeadlineMs) break;
      await this.pause(this.options.retryPeriodMs * (1 + Math.random() * (JITTER - 1)));
    }
    if (signal.aborted) return;
    this.leading = true;
    this.renewed(sent);
    this.options.logger?.info({ lease: this.options.lease.name, identity: this.options.identity }, 'became leader');
    this.options.onStartedLeading();
    while (!signal.aborted && this.leading) {
      await this.pause(this.options.retryPeriodMs);
      if (signal.aborted || !this.leading) return;
      // The round may take only what is left of the renew deadline.
      const started = this.clock.now();
      const left = this.options.renewDeadlineMs - (started - this.lastRenewSent);
      const round = new AbortController();
      const cancel = this.clock.setTimer(() => round.abort(), Math.max(0, left));
      const ok = await this.tryAcquireOrRenew(AbortSignal.any([signal, round.signal]));
      cancel();
      if (ok && this.leading) this.renewed(started);
    }
  }

  /** A successful round, sent at `sentAt`: the renew deadline starts again from then, and its timer with it. */
  private renewed(sentAt: number): void {
    this.lastRenewSent = sentAt;
    this.cancelDeadline?.();
    this.cancelDeadline = this.clock.setTimer(() => this.lose(), this.options.renewDeadlineMs - (this.clock.now() - sentAt));
  }

  private lose(): void {
    if (!this.leading || this.abort.signal.aborted) return;
    this.leading = false;
    this.options.logger?.error({ lease: this.options.lease.name }, 'leadership lost: no renewal within the renew deadline');
    this.options.onStoppedLeading();
  }

  private async pause(ms: number): Promise<void> {
    try {
      await sleep(this.clock, ms, this.abort.signal);
    } catch {
      // aborted: the loop checks the signal
    }
  }

  private path(): string {
    return objectPath(RESOURCES.leases, this.options.lease.namespace, this.options.lease.name);
  }

  private async read(signal?: AbortSignal): Promise<Lease | undefined> {
    try {
      return await this.options.http.request<Lease>('GET', this.path(), { signal });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** One round: true when we hold the lease afterwards. */
  private async tryAcquireOrRenew(signal?: AbortSignal): Promise<boolean> {
    try {
      // Expiry errs late on both ends: a record counts as first seen when the answer came, and as unchanged
      // only up to when the read was sent (a late answer — from an apiserver frozen meanwhile, whose sockets
      // still hold the old leader's writes — proves nothing about the time it took).
      const sent = this.clock.now();
      const lease = await this.read(signal);
      if (lease?.spec) this.observation = observe(this.observation, lease.spec, this.clock.now());
      const decision = decide({
        current: lease?.spec,
        observation: this.observation,
        identity: this.options.identity,
        leaseDurationMs: this.options.leaseDurationMs,
        now: sent,
        wallTime: microTime(Date.now()),
      });
      if (decision.action === 'wait') return false;
      const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { ...(lease?.metadata ?? {}), name: this.options.lease.name, namespace: this.options.lease.namespace }, spec: decision.record };
      const written = lease
        ? await this.options.http.request<Lease>('PUT', this.path(), { body, signal })
        : await this.options.http.request<Lease>('POST', collectionPath(RESOURCES.leases, this.options.lease.namespace), { body, signal });
      this.observation = observe(this.observation, written.spec ?? decision.record, this.clock.now());
      return true;
    } catch (err) {
      // What could not be read may have changed: a standby counts the lease duration again from its next
      // answer (after an apiserver outage, it waits out a whole lease once the apiserver is back).
      this.observation = undefined;
      // A conflict means someone else wrote first; anything else is retried in the next round.
      if (!isConflict(err)) this.options.logger?.warn({ lease: this.options.lease.name, err: String(err) }, 'lease update failed');
      return false;
    }
  }
}
