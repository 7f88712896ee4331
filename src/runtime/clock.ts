// Time source and timers, injected everywhere in runtime/ so tests can drive
// time explicitly (see testkit/fake-clock.ts) instead of asserting wall-clock timings.

/** Cancels a timer; calling it after the timer fired (or twice) is a no-op. */
export type CancelTimer = () => void;

export interface Clock {
  /** Milliseconds on a monotonic scale; only differences are meaningful. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds. */
  setTimer(fn: () => void, ms: number): CancelTimer;
}

// Node clamps delays above 2^31-1 ms to 1 ms (with a warning); chain instead.
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

function realSetTimer(fn: () => void, ms: number): CancelTimer {
  let delay = Number.isFinite(ms) && ms > 0 ? ms : 0;
  let handle: NodeJS.Timeout;
  const arm = (): void => {
    const step = Math.min(delay, MAX_TIMEOUT_MS);
    delay -= step;
    handle = setTimeout(delay > 0 ? arm : fn, step);
  };
  arm();
  return () => clearTimeout(handle);
}

/** Real time: `performance.now()` (monotonic, immune to wall-clock jumps) and `setTimeout`. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer: realSetTimer,
};

/**
 * Resolves after `ms` on `clock`; rejects with `signal.reason` if aborted first
 * (the timer is cancelled, so an aborted sleep holds nothing alive).
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      cancel();
      reject(abortReason(signal));
    };
    const cancel = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
}
