// List-then-watch of one resource, the way client-go's reflector does it. The initial state comes from a
// watch-list (KEP-3157): a watch with sendInitialEvents streams every object from the apiserver's watch
// cache, then a bookmark marking the end of that state, and the same stream goes on as the watch. One
// stream instead of N sequential list pages (at 100k objects, 200 pages the client waits on one by
// one), each object parsed and trimmed (transform) as it arrives. Only the complete state reaches the
// sink: a stream that breaks before the end bookmark delivers nothing, and the next round starts a new
// watch-list. An apiserver that refuses watch-list (before 1.27, or its WatchList gate off) gets a paged
// list from then on, then a watch from the list's resourceVersion. Either way: bookmarks and a random
// 5–10 min server timeout; a fresh initial state on 410 Gone (compaction or "too old resource version");
// any other failure restarts the cycle after a jittered backoff (800 ms → 30 s, reset after 2 min
// healthy), resuming from the resourceVersion — or, with relistAfterFailure, from a fresh initial state.
// A watch silent past the client's idle timeout is torn down by KubeHttp and restarted here.
// `live` says whether the sink holds the state as of now: a failure (a 410 included) ends it; a complete
// state delivered, or a bookmark of the resumed watch (every change up to it delivered), starts it again —
// never the first event after a gap, which may be one of many the gap left to deliver.
// The resourceVersion moves past an event only once the sink has taken it, so an event a sink throws on
// is delivered again. `stop()` aborts the open request and no further request is made after it resolves.
import type { Logger } from 'pino';
import { objectKey, type KubeObject } from '../core/k8s/objects.ts';
import { Backoff } from '../runtime/backoff.ts';
import { sleep, systemClock, type Clock } from '../runtime/clock.ts';
import { ApiError, isGone, type KubeHttp } from './http.ts';
import { collectionPath, type ResourceRef } from './resource.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** Where a watcher delivers what it sees. Called synchronously, in order. */
export interface WatchSink<T extends KubeObject> {
  /** The complete current state, after every (re)list or watch-list. */
  replace(items: T[]): void;
  event(type: WatchEventType, object: T): void;
  /** The watcher became live (see Watcher.live): after its first state, and again after each failure. */
  live?(): void;
}

export interface WatcherOptions<T extends KubeObject = KubeObject> {
  /**
   * What the sink gets of each object (client-go's SetTransform): only what is read back. Applied to
   * each object (watch-list) or list page as it arrives, so a relist never holds every object whole at
   * once. It may take the parsed object over (cacheview.ts freezes and shares its parts) — the watcher
   * reads only its key and resourceVersion after the call — and must keep metadata.name, namespace and
   * resourceVersion.
   */
  transform?: (object: T) => T;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  pageSize?: number;
  logger?: Logger;
  backoff?: Backoff;
  clock?: Clock;
  /** Server-side watch timeout; default random 300–600 s (client-go's spread). */
  timeoutSeconds?: () => number;
  /**
   * The initial state by a watch-list (default: the client's, KubeHttpOptions.watchList); false: by a
   * paged list, as a watcher does anyway once its apiserver refused a watch-list.
   */
  watchList?: boolean;
  /**
   * After any failed list or watch (a 410 included), take the whole state afresh — a watch-list, or a
   * paged list — instead of resuming from the resourceVersion; a clean end of the stream (the server's
   * timeout) still resumes. Live again the moment that state is delivered, where a resumed watch with
   * nothing to deliver proves itself only at its first bookmark (about a minute). For small caches whose
   * readers must not wait (the spoke agent's); a cache of 100k objects must not relist on every reconnect.
   */
  relistAfterFailure?: boolean;
}

/** The annotation on the bookmark that ends a watch-list's initial events. */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/**
 * How an apiserver that does not serve watch-list answers one: 422 Invalid ("resourceVersionMatch is
 * forbidden for watch" before 1.27; "sendInitialEvents is forbidden…" with the WatchList gate off), or 400.
 */
export function refusesWatchList(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 400 || err.status === 422);
}

interface ListResponse<T> {
  metadata: { resourceVersion: string; continue?: string };
  items: T[];
}

interface RawWatchEvent {
  type: WatchEventType | 'BOOKMARK' | 'ERROR';
  object: KubeObject & { code?: number; reason?: string; message?: string };
}

export class Watcher<T extends KubeObject = KubeObject> {
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private resourceVersion: string | undefined;
  private readonly backoff: Backoff;
  private readonly clock: Clock;
  private listedOnce = false;
  /** The sink holds the state as of now (see `live`). */
  private caughtUp = false;
  private failure: Error | undefined;
  private watchList: boolean;
  /** Counts (re)lists, for tests and metrics. */
  lists = 0;
  /** Counts watch streams opened (restarts included), for tests and metrics. */
  watches = 0;

  constructor(
    private readonly http: KubeHttp,
    readonly resource: ResourceRef,
    private readonly sink: WatchSink<T>,
    private readonly options: WatcherOptions<T> = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.backoff = options.backoff ?? new Backoff({ clock: this.clock });
    this.watchList = options.watchList ?? http.watchList;
  }

  /** True once the first complete state has been delivered. */
  get synced(): boolean {
    return this.listedOnce;
  }

  /**
   * Whether the sink holds the apiserver's state as of now, give or take the watch's latency: a complete
   * state was delivered and no list or watch failed since — or, after a failure, the state was delivered
   * afresh, or the resumed watch caught up (a bookmark: every change up to its resourceVersion delivered).
   * A 410 is a failure here (the cache predates what the apiserver can no longer replay), and so is the
   * sink's own throw. A cache that is not live is kept as it was, not emptied.
   */
  get live(): boolean {
    return this.listedOnce && this.caughtUp;
  }

  /**
   * Why the last list or watch failed (a 403, a 404 for a kind not served, a timeout), until a list
   * succeeds or the watch delivers again: what callers report instead of waiting in silence.
   */
  get lastError(): Error | undefined {
    return this.failure;
  }

  start(): this {
    this.loop ??= this.run();
    return this;
  }

  /** Ends the watch for good; resolves when no request is open any more. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private get path(): string {
    return collectionPath(this.resource, this.options.namespace);
  }

  private async run(): Promise<void> {
    const log = this.options.logger;
    while (!this.stopped) {
      try {
        if (this.resourceVersion === undefined && !this.watchList) await this.list();
        await this.watch();
        this.backoff.markHealthy();
      } catch (err) {
        if (this.stopped) break;
        this.failure = err instanceof Error ? err : new Error(String(err));
        // Whatever the sink holds may predate changes the broken watch did not deliver.
        this.caughtUp = false;
        if (this.options.relistAfterFailure) this.resourceVersion = undefined;
        if (isGone(err)) {
          log?.info({ resource: this.path }, 'watch resourceVersion expired; relisting');
          this.resourceVersion = undefined;
          continue;
        }
        const delay = this.backoff.next();
        log?.warn({ resource: this.path, err: String(err), retryInMs: Math.round(delay) }, 'list/watch failed; retrying');
        // A failed list or watch-list leaves the cache as it was: nothing is deleted because the apiserver was away.
        try {
          await sleep(this.clock, delay, this.abort.signal);
        } catch {
          break;
        }
      }
    }
  }

  private async list(): Promise<void> {
    const items: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion: string;
    do {
      const page = await this.http.request<ListResponse<T>>('GET', this.path, {
        query: {
          limit: this.options.pageSize ?? 500,
          continue: continueToken,
          labelSelector: this.options.labelSelector,
          fieldSelector: this.options.fieldSelector,
        },
        signal: this.abort.signal,
      });
      const apiVersion = this.resource.group === '' ? this.resource.version : `${this.resource.group}/${this.resource.version}`;
      // List items omit apiVersion/kind; fill them so cached objects look like watched ones.
      const kind = (page as { kind?: string }).kind?.replace(/List$/, '') ?? '';
      const transform = this.options.transform;
      for (const item of page.items) {
        const object = { ...item, apiVersion, kind };
        items.push(transform ? transform(object) : object);
      }
      continueToken = page.metadata.continue || undefined;
      resourceVersion = page.metadata.resourceVersion;
    } while (continueToken);
    if (this.stopped) return;
    this.replace(items, resourceVersion);
  }

  /** Delivers a complete state (a list's, or a watch-list's initial events). */
  private replace(items: T[], resourceVersion: string): void {
    // The sink first: if it throws, no resourceVersion is kept and the next round starts over.
    this.sink.replace(items);
    this.resourceVersion = resourceVersion;
    this.lists++;
    this.failure = undefined;
    this.listedOnce = true;
    this.markCaughtUp();
  }

  private markCaughtUp(): void {
    if (this.caughtUp) return;
    this.caughtUp = true;
    this.sink.live?.();
  }

  /** A watch from the resourceVersion; without one, a watch-list: the current state first, then the watch. */
  private async watch(): Promise<void> {
    const timeoutSeconds = this.options.timeoutSeconds?.() ?? 300 + Math.floor(Math.random() * 300);
    const transform = this.options.transform ?? ((object: T): T => object);
    // The initial events of a watch-list, by key, until its end bookmark: the sink gets the whole state or nothing.
    let initial = this.resourceVersion === undefined ? new Map<string, T>() : undefined;
    let initialEvents = 0;
    // An ERROR event ends this stream; its status decides between relist (410), paged lists (a refused
    // watch-list) and backoff.
    const stream = new AbortController();
    const signal = AbortSignal.any([this.abort.signal, stream.signal]);
    let failure: ApiError | undefined;
    const onLine = (line: string): void => {
      if (failure) return;
      const ev = JSON.parse(line) as RawWatchEvent;
      if (ev.type === 'ERROR') {
        const o = ev.object;
        failure = new ApiError(o.code ?? 500, o.reason ?? 'Unknown', o.message ?? '', 'WATCH', this.path);
        stream.abort();
        return;
      }
      if (initial) {
        if (ev.type === 'BOOKMARK') {
          if (ev.object.metadata.annotations?.[INITIAL_EVENTS_END] !== 'true') return;
          this.replace([...initial.values()], ev.object.metadata.resourceVersion!);
          initial = undefined;
          this.backoff.markHealthy();
          return;
        }
        initialEvents++;
        // Changes made while the state streams come on the same stream before its end (as in client-go).
        const key = objectKey(ev.object);
        if (ev.type === 'DELETED') initial.delete(key);
        else initial.set(key, transform(ev.object as T));
        return;
      }
      // The watch delivers again: the failure is over (lastError), but the cache is not live yet.
      this.failure = undefined;
      if (ev.type !== 'BOOKMARK') {
        this.backoff.markHealthy();
        this.sink.event(ev.type, transform(ev.object as T));
      }
      // Only past an event the sink took: a throw above restarts the watch from before it.
      this.resourceVersion = ev.object.metadata.resourceVersion;
      // A bookmark: every change up to its resourceVersion has been delivered, those of a gap included.
      if (ev.type === 'BOOKMARK') this.markCaughtUp();
    };
    this.watches++;
    try {
      await this.http.stream(
        this.path,
        {
          watch: true,
          allowWatchBookmarks: true,
          // Without a resourceVersion: the state as of a consistent read, as a list without one.
          ...(initial ? { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' } : { resourceVersion: this.resourceVersion }),
          timeoutSeconds,
          labelSelector: this.options.labelSelector,
          fieldSelector: this.options.fieldSelector,
        },
        onLine,
        signal,
      );
    } catch (err) {
      // An abort or a sink's throw goes up as it is; an ApiError is judged below, as an ERROR event is.
      if (!failure && !(err instanceof ApiError)) throw err;
      failure ??= err as ApiError;
    }
    // A failure, not a normal end: retried after the backoff, the state is not streamed again at once.
    if (!failure && initial) throw new Error(`WATCH ${this.path}: the stream ended before the end of its initial events`);
    if (!failure) return;
    if (initial && initialEvents === 0 && refusesWatchList(failure)) {
      // Sticky: an apiserver's version and feature gates stay as they are while it runs.
      this.watchList = false;
      this.options.logger?.info({ resource: this.path, err: String(failure) }, 'the apiserver refuses watch-list; using paged lists');
      return;
    }
    throw failure;
  }
}
