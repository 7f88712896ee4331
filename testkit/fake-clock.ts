// Test double for Clock: time only moves when the test says so, timers fire in
// (due time, creation) order, and nothing touches the global timers.
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { CancelTimer, Clock } from '../src/runtime/clock.ts';

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: PendingTimer[] = [];

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): CancelTimer {
    const timer: PendingTimer = { at: this.#now + (Number.isFinite(ms) && ms > 0 ? ms : 0), seq: this.#seq++, fn };
    this.#timers.push(timer);
    return () => {
      const i = this.#timers.indexOf(timer);
      if (i >= 0) this.#timers.splice(i, 1);
    };
  }

  /** Number of timers not yet fired or cancelled. */
  pendingTimers(): number {
    return this.#timers.length;
  }

  /**
   * Moves time forward by `ms`, synchronously firing every timer due by then
   * (including ones scheduled by fired timers), each at its own due time.
   */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (let t = this.#takeDue(target); t; t = this.#takeDue(target)) {
      this.#now = t.at;
      t.fn();
    }
    this.#now = target;
  }

  /**
   * Like advance(), but yields a macrotask turn before and after each timer so
   * promise chains started by a timer (or pending before) settle in between.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (let t = this.#takeDue(target); t; t = this.#takeDue(target)) {
      this.#now = t.at;
      t.fn();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  #takeDue(target: number): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const t of this.#timers) {
      if (t.at <= target && (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq))) best = t;
    }
    if (best) this.#timers.splice(this.#timers.indexOf(best), 1);
    return best;
  }
}

/** Lets all currently runnable promise continuations (and their follow-ups) run. */
export async function settle(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i++) await nextMacrotask();
}
