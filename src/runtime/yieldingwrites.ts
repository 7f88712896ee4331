// Writes that give way to more urgent ones. A write submitted while `busy()` is held, per key, the newest
// replacing the one held before (so a burst of changes to one key ends in one write), and is made once
// the controller is no longer busy — or once it waited `maxDelayMs`, so that a controller busy for ever
// still makes it. At most one write per key is under way at a time: a write never overtakes an older one
// of the same key. What is held is dropped by `stop()` (a successor recomputes it).
import { systemClock, type CancelTimer, type Clock } from './clock.ts';

export type KeyedWrite = () => Promise<void>;

export interface YieldingWritesOptions {
  /** True while more urgent writes are under way: writes submitted meanwhile wait. */
  busy: () => boolean;
  /** The longest a write waits behind busy(). */
  maxDelayMs: number;
  /** How often busy() is asked again while writes wait. */
  pollMs?: number;
  /** Held writes made at once when their turn comes. */
  concurrency?: number;
  /** A held write failed: the caller must compute and submit it again (it is not retried here). */
  onError: (key: string, err: unknown) => void;
  clock?: Clock;
}

interface Held {
  write: KeyedWrite;
  since: number;
}

export class YieldingWrites {
  private readonly held = new Map<string, Held>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly clock: Clock;
  private timer: CancelTimer | undefined;
  private flushing = false;
  private stopped = false;

  constructor(private readonly options: YieldingWritesOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Makes `write` now (resolving or rejecting with it) unless the controller is busy; then holds it and
   * resolves at once. A write held for `key` before is replaced — or, if it has waited its longest, made
   * now with this one's content. `urgent`: made now, busy or not (news that a later write could replace unsaid).
   */
  async submit(key: string, write: KeyedWrite, o: { urgent?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    const held = this.held.get(key);
    const since = held?.since ?? this.clock.now();
    if (!o.urgent && this.options.busy() && this.clock.now() - since < this.options.maxDelayMs) {
      this.held.set(key, { write, since });
      this.arm();
      return;
    }
    this.held.delete(key);
    await this.run(key, write);
  }

  /** Drops what is held for `key` (it no longer needs writing). */
  cancel(key: string): void {
    this.held.delete(key);
  }

  /** Whether a write is held for `key`. */
  holds(key: string): boolean {
    return this.held.has(key);
  }

  /** Writes held or under way. */
  get pending(): number {
    return this.held.size + this.running.size;
  }

  stop(): void {
    this.stopped = true;
    this.held.clear();
    this.timer?.();
    this.timer = undefined;
  }

  private arm(): void {
    if (this.timer || this.flushing || this.stopped) return;
    this.timer = this.clock.setTimer(() => {
      this.timer = undefined;
      void this.flush();
    }, this.options.pollMs ?? 250);
  }

  /** Makes the held writes whose turn came: all of them once not busy, else those that waited their longest. */
  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      const due = (): [string, Held] | undefined => {
        const now = this.clock.now();
        const idle = !this.options.busy();
        for (const entry of this.held) if (idle || now - entry[1].since >= this.options.maxDelayMs) return entry;
        return undefined;
      };
      const worker = async (): Promise<void> => {
        for (let next = due(); next && !this.stopped; next = due()) {
          const [key, { write }] = next;
          this.held.delete(key);
          try {
            await this.run(key, write);
          } catch (err) {
            this.options.onError(key, err);
          }
        }
      };
      await Promise.all(Array.from({ length: this.options.concurrency ?? 4 }, worker));
    } finally {
      this.flushing = false;
      if (this.held.size > 0) this.arm();
    }
  }

  /** One write of `key` at a time: this one starts once the one under way (if any) ended. */
  private async run(key: string, write: KeyedWrite): Promise<void> {
    const before = this.running.get(key);
    const mine = (async () => {
      if (before) await before.catch(() => undefined);
      await write();
    })();
    this.running.set(key, mine);
    try {
      await mine;
    } finally {
      if (this.running.get(key) === mine) this.running.delete(key);
    }
  }
}
