// Polls until a condition holds, for tests against real, asynchronous components.
import { setTimeout as sleep } from 'node:timers/promises';

export interface EventuallyOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** What is being waited for, for the failure message. */
  what: string;
  /** Extra context appended to the failure message (e.g. a component's log tail). */
  context?: () => string;
  /**
   * For a component that acts on events only and may drop one: every `everyMs` without success, `run`
   * makes an event it reacts to (its failures are ignored; the probe decides).
   */
  nudge?: { everyMs: number; run: () => Promise<unknown> };
}

/** Calls `probe` until it returns a value other than undefined/false, and returns that value. */
export async function eventually<T>(probe: () => Promise<T | undefined | false>, options: EventuallyOptions): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let lastError: unknown;
  let nudgeAt = options.nudge ? Date.now() + options.nudge.everyMs : Infinity;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      const context = options.context ? `\n${options.context()}` : '';
      throw new Error(`timed out after ${options.timeoutMs ?? 60_000} ms waiting for ${options.what}${cause}${context}`);
    }
    if (options.nudge && Date.now() >= nudgeAt) {
      await options.nudge.run().catch(() => undefined);
      nudgeAt = Date.now() + options.nudge.everyMs;
    }
    await sleep(options.intervalMs ?? 200);
  }
}
