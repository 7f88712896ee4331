// A bound on requests under way at once, taken before a request's deadline starts. A client's socket pool bounds
// them too, but a request queued for a socket is already on its clock: a fan-out to a few thousand clusters
// queued thousands of writes there and timed out the last ones before they were sent. Here a request waits for
// its slot (first come, first served) and only then starts its deadline.

export class InFlightLimit {
  #inFlight = 0;
  readonly #waiters: (() => void)[] = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`the in-flight limit must be an integer >= 1, got ${max}`);
  }

  /** Resolves with the slot's release (call it once) when one is free. */
  acquire(): Promise<() => void> {
    if (this.#inFlight < this.max) {
      this.#inFlight++;
      return Promise.resolve(this.#release());
    }
    return new Promise((resolve) => this.#waiters.push(() => resolve(this.#release())));
  }

  /** Requests holding a slot. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Requests waiting for one. */
  get waiting(): number {
    return this.#waiters.length;
  }

  #release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The slot passes straight to the first waiter: the count stays, nobody can take it in between.
      const next = this.#waiters.shift();
      if (next) next();
      else this.#inFlight--;
    };
  }
}
