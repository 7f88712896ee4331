// What the benchmark sees of the hub: a watch (the project's own list+watch) that keeps one derived string
// per object — a work's spec-hash, a policy's annotation — and notes the moment a goal is first met,
// on the watch event that meets it. Every fan-out (policy-sync, the bare client, OCM) is timed by the
// same kind of watch, so the delivery delay of the apiserver's watch is in all three alike.
import { performance } from 'node:perf_hooks';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import type { ResourceRef } from '../../src/kube/resource.ts';
import { Watcher } from '../../src/kube/watcher.ts';

export interface TrackerOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * What an object stands for, when it stands for several (a bundle for the copy works it carries:
   * core/works/bundle.ts copiesOf): each is tracked under its own key. Default: the object itself.
   */
  expand?: (o: KubeObject) => readonly KubeObject[];
}

interface Goal {
  what: string;
  met: () => boolean;
  resolve: (at: number) => void;
}

export class Tracker {
  /** `namespace/name` → derived value, for every object the watch shows. */
  readonly seen = new Map<string, string | undefined>();
  private readonly watcher: Watcher;
  private expected: ReadonlyMap<string, string> | undefined;
  private matching = 0;
  private goals: Goal[] = [];
  /** By watched object's key: the keys it stands for (with `expand`). */
  private readonly given = new Map<string, string[]>();

  constructor(
    http: KubeHttp,
    resource: ResourceRef,
    options: TrackerOptions,
    private readonly derive: (o: KubeObject) => string | undefined,
  ) {
    const { expand, ...query } = options;
    const take = (object: KubeObject, deleted: boolean): string[] => {
      const source = keyOf(object);
      const now = deleted ? [] : (expand ? expand(object) : [object]);
      const keys = now.map(keyOf);
      for (const k of this.given.get(source) ?? []) if (!keys.includes(k)) this.remove(k);
      for (const o of now) this.set(keyOf(o), this.derive(o));
      if (keys.length > 0) this.given.set(source, keys);
      else this.given.delete(source);
      return keys;
    };
    this.watcher = new Watcher(http, resource, {
      replace: (items) => {
        const sources = new Set(items.map(keyOf));
        for (const source of [...this.given.keys()]) if (!sources.has(source)) take({ metadata: splitKey(source) } as KubeObject, true);
        for (const item of items) take(item, false);
        this.check();
      },
      event: (type, object) => {
        take(object, type === 'DELETED');
        this.check();
      },
    }, { ...query, pageSize: 500 });
  }

  async start(): Promise<this> {
    this.watcher.start();
    while (!this.watcher.synced) await new Promise((r) => setTimeout(r, 20));
    return this;
  }

  stop(): Promise<void> {
    return this.watcher.stop();
  }

  /** Objects the watch shows (with `expand`: the watched objects, not what they stand for). */
  get objects(): number {
    return this.given.size;
  }

  /** Objects whose derived value equals the one expected for them (see expect()). */
  get matched(): number {
    return this.matching;
  }

  /**
   * Resolves with the time (performance.now()) at which every expected key is seen with its expected
   * value; at once if that already holds. Replaces the previous expectation.
   */
  expect(expected: ReadonlyMap<string, string>, what: string, timeoutMs: number): Promise<number> {
    this.expected = expected;
    this.matching = 0;
    for (const [k, v] of expected) if (this.seen.has(k) && this.seen.get(k) === v) this.matching++;
    return this.until(() => this.matching === expected.size, what, timeoutMs);
  }

  /** Resolves with the time at which `met()` first holds after a watch event (or now, if it holds now). */
  until(met: () => boolean, what: string, timeoutMs: number): Promise<number> {
    if (met()) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.goals = this.goals.filter((g) => g !== goal);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${this.seen.size} objects seen, ${this.matching} as expected)`));
      }, timeoutMs);
      const goal: Goal = {
        what,
        met,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
      };
      this.goals.push(goal);
    });
  }

  private set(key: string, value: string | undefined): void {
    const expected = this.expected?.get(key);
    if (expected !== undefined) {
      const was = this.seen.has(key) && this.seen.get(key) === expected;
      if (was && value !== expected) this.matching--;
      if (!was && value === expected) this.matching++;
    }
    this.seen.set(key, value);
  }

  private remove(key: string): void {
    if (!this.seen.has(key)) return;
    const expected = this.expected?.get(key);
    if (expected !== undefined && this.seen.get(key) === expected) this.matching--;
    this.seen.delete(key);
  }

  private check(): void {
    if (this.goals.length === 0) return;
    const at = performance.now();
    const pending: Goal[] = [];
    for (const g of this.goals) {
      if (g.met()) g.resolve(at);
      else pending.push(g);
    }
    this.goals = pending;
  }
}

function keyOf(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
