// Leader election over a coordination.k8s.io Lease, the client-go way, as pure decisions: whether the
// current record lets us take or keep the lease, and the record to write. Expiry is judged on the local
// clock from when this process last saw the record change — never on the other holder's timestamps —
// so clock skew between replicas cannot hand the lease to two of them; and for the duration the record
// itself states (client-go does the same), so a holder configured with a longer lease keeps it.
//
// Every time errs toward a later expiry: the holder counts from when it sent its renewal; a standby counts
// from when an answer first showed the record (`observe`'s `now`: its arrival) up to when the read that shows
// it still unchanged was sent (`decide`'s `now`), and forgets what it saw when a read fails.

export interface LeaseRecord {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Observation {
  /** The record as last read, serialised, to notice changes. */
  record: string;
  /** Local monotonic time (ms) when `record` was first seen. */
  at: number;
}

/** Updates what we have observed of the lease (`now`: when the answer came); the time only moves when the record changes. */
export function observe(previous: Observation | undefined, record: LeaseRecord, now: number): Observation {
  const text = JSON.stringify(record);
  return previous?.record === text ? previous : { record: text, at: now };
}

export type LeaseDecision =
  | { action: 'write'; record: LeaseRecord }
  /** Someone else holds an unexpired lease. */
  | { action: 'wait'; holder: string };

/**
 * What to do with the lease as read (`current`, undefined when it does not exist yet): take it (empty
 * holder, expired, or ours already — then renew), or wait for the holder's lease to expire.
 */
export function decide(input: {
  current: LeaseRecord | undefined;
  observation: Observation | undefined;
  identity: string;
  leaseDurationMs: number;
  /** Local monotonic time when the read of `current` was sent (the earliest the apiserver can have read it). */
  now: number;
  /** The wall-clock time to write, as MicroTime. */
  wallTime: string;
}): LeaseDecision {
  const { current, identity } = input;
  const durationSeconds = Math.ceil(input.leaseDurationMs / 1000);
  const holder = current?.holderIdentity ?? '';
  const ours = holder === identity;
  const recordedMs = current?.leaseDurationSeconds !== undefined && current.leaseDurationSeconds > 0 ? current.leaseDurationSeconds * 1000 : input.leaseDurationMs;
  if (!ours && holder !== '' && input.observation && input.observation.at + recordedMs > input.now) {
    return { action: 'wait', holder };
  }
  return {
    action: 'write',
    record: {
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: ours && current?.acquireTime ? current.acquireTime : input.wallTime,
      renewTime: input.wallTime,
      leaseTransitions: (current?.leaseTransitions ?? 0) + (ours || current === undefined ? 0 : 1),
    },
  };
}

/** The record written on a graceful release: no holder, and a 1 s lease so a standby takes over at once. */
export function released(current: LeaseRecord, wallTime: string): LeaseRecord {
  return { ...current, holderIdentity: '', leaseDurationSeconds: 1, renewTime: wallTime };
}

/** Kubernetes MicroTime: RFC 3339 with exactly 6 fractional digits (a plain Date's 3 are rejected). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
