// Writes bundles (docs/design/fleet.md#how-it-is-built). Copy changes decided per copy — puts, and the drops the
// deletion rule allowed — are handed over by their owner and coalesced per bundle key (one cluster, one downstream
// namespace) for `lingerMs` — longer, up to `maxLingerMs`, while `busy()` says more owners are on their way (a
// fan-out's policies queued) — so that the policies of a fan-out write each bundle once rather than once each. A
// flush packs them (core/works/bundle.ts packBundles) over the bundles as the cache shows them — or as this writer
// last wrote them, while the cache has not caught up — and writes: a create, an update fenced on the observed
// resourceVersion, a delete fenced on uid and resourceVersion. A conflict packs again from what is known next.
//
// A drop goes only while the copy is as its owner saw it (its spec-hash, its bundle's uid): otherwise it is not
// sent and the owner is told to look again (`onStale`). A drop of a copy no bundle carries is done.
// One flush per bundle key at a time; submissions made during a flush wait for the next.
import type { Logger } from 'pino';
import type { KubeObject } from '../core/k8s/objects.ts';
import { parseWorkKey, type WorkKey } from '../core/keys.ts';
import { packBundles, unpackBundle, type BundleWrite } from '../core/works/bundle.ts';
import { readSpecHash, type ManifestWork } from '../core/works/manifestwork.ts';
import { isConflict, type KubeHttp } from '../kube/http.ts';
import { RESOURCES } from '../kube/resource.ts';
import { createObject, deleteObject, replaceObject } from '../kube/writes.ts';

/** A copy to drop, as its owner saw it. */
export interface CopyDrop {
  /** `cluster/copy work name`. */
  key: WorkKey;
  /** The copy's downstream namespace (its bundle key with the cluster). */
  namespace: string;
  /** The copy's spec-hash and its bundle's uid when the owner decided. */
  specHash: string | undefined;
  bundleUid: string | undefined;
}

export interface BundleWriterDeps {
  http: KubeHttp;
  logger: Logger;
  /** controllerLabelValue of this controller. */
  controller: string;
  /** Bytes of entries a bundle takes new copies up to (core/works/bundle.ts). */
  capBytes: number;
  /** How long a bundle key gathers submissions before it is written; default 20 ms. */
  lingerMs?: number;
  /** While this holds (owners waiting to hand changes over), a bundle key lingers on, up to maxLingerMs in all. */
  busy?: () => boolean;
  /** Longest a bundle key lingers while busy; default 1 s. */
  maxLingerMs?: number;
  /** This controller's bundles of one cluster and downstream namespace, as the cache shows them. */
  bundles(cluster: string, namespace: string): readonly KubeObject[];
  /** A drop not sent because the copy changed since its owner saw it: reconcile the owner again. */
  onStale?: (owner: string) => void;
}

/** Conflicts in a row before a flush gives up (its owners retry with their backoff). */
const MAX_CONFLICTS = 5;

interface Pending {
  cluster: string;
  namespace: string;
  puts: Map<string, ManifestWork>;
  drops: Map<string, CopyDrop & { owner: string }>;
  waiters: { resolve: (stale: WorkKey[]) => void; reject: (err: unknown) => void }[];
  /** Drops found stale by the last write (their keys). */
  stale: WorkKey[];
}

/**
 * What this writer last wrote of a bundle, until the cache shows a version it did not supersede (its last write, or
 * another writer's). The cache catches up with a run of writes one at a time: while it shows any version this
 * writer's last write superseded, the last write is the bundle as it is. Forgotten as soon as the cache catches up
 * (`cached`): a fan-out's 6,000 answers are whole bundles, managed fields and all.
 */
interface Written {
  /** The bundle as the write answered, or undefined once deleted. */
  object: KubeObject | undefined;
  /** The resourceVersions the last write superseded, directly or through this writer's earlier writes. */
  superseded: ReadonlySet<string>;
  /** The run of writes began with this writer's create: the cache may not show the bundle at all yet. */
  created: boolean;
}

export class BundleWriter {
  private readonly pending = new Map<string, Pending>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly flushing = new Map<string, Promise<void>>();
  /** By bundle key (`cluster/namespace`), by bundle (`cluster/name`). */
  private readonly written = new Map<string, Map<string, Written>>();
  /** By bundle (`cluster/name`): its bundle key in `written`. */
  private readonly keyOfWritten = new Map<string, string>();

  constructor(private readonly deps: BundleWriterDeps) {}

  /**
   * Hands copy changes over; resolves once they are written (or found done) with the keys of the drops not sent
   * because they were stale, rejects with the write's failure.
   */
  submit(owner: string, puts: readonly ManifestWork[], drops: readonly CopyDrop[]): Promise<WorkKey[]> {
    const touched = new Map<string, Pending>();
    const entry = (cluster: string, namespace: string): Pending => {
      const key = `${cluster}/${namespace}`;
      let p = this.pending.get(key);
      if (!p) {
        p = { cluster, namespace, puts: new Map(), drops: new Map(), waiters: [], stale: [] };
        this.pending.set(key, p);
      }
      touched.set(key, p);
      return p;
    };
    for (const work of puts) {
      const p = entry(work.metadata.namespace, work.spec.workload.manifests[0]?.metadata.namespace ?? '');
      p.puts.set(work.metadata.name, work);
      p.drops.delete(work.metadata.name);
    }
    for (const drop of drops) {
      const { cluster, name } = parseWorkKey(drop.key);
      const p = entry(cluster, drop.namespace);
      p.drops.set(name, { ...drop, owner });
      p.puts.delete(name);
    }
    const mine = new Set(drops.map((d) => d.key));
    const done = [...touched].map(
      ([key, p]) =>
        new Promise<WorkKey[]>((resolve, reject) => {
          p.waiters.push({ resolve: (stale) => resolve(stale.filter((k) => mine.has(k))), reject });
          this.schedule(key);
        }),
    );
    return Promise.all(done).then((stale) => stale.flat());
  }

  /**
   * The cache shows `bundle` as it is now (or gone, `deleted`): a write of it this writer remembers is forgotten once
   * the cache shows a version that write did not supersede.
   */
  cached(bundle: KubeObject, deleted: boolean): void {
    const name = `${bundle.metadata.namespace ?? ''}/${bundle.metadata.name}`;
    const key = this.keyOfWritten.get(name);
    const last = key === undefined ? undefined : this.written.get(key)?.get(name);
    if (key === undefined || !last) return;
    if (deleted) {
      // An earlier bundle of that name gone, while this writer's create of it is not in the cache yet: the create is what is known.
      if (last.object && last.object.metadata.uid !== bundle.metadata.uid) return;
    } else if (last.superseded.has(bundle.metadata.resourceVersion ?? '')) return;
    this.forget(key, name);
  }

  /** Stops: what is pending is not written (a new leader decides again), and its owners are told so. */
  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const p of this.pending.values()) for (const w of p.waiters) w.reject(new Error(`bundle writer stopped before ${p.cluster}/${p.namespace} was written`));
    this.pending.clear();
  }

  private schedule(key: string, since = performance.now()): void {
    if (this.timers.has(key)) return;
    const linger = this.deps.lingerMs ?? 20;
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        // A fan-out under way: more copies for this bundle are coming; written together, it is written once.
        if (this.deps.busy?.() && performance.now() - since + linger <= (this.deps.maxLingerMs ?? 1_000)) {
          this.schedule(key, since);
          return;
        }
        const previous = this.flushing.get(key) ?? Promise.resolve();
        const next = previous.then(() => this.flush(key));
        this.flushing.set(key, next);
        void next.finally(() => {
          if (this.flushing.get(key) === next) this.flushing.delete(key);
        });
      }, linger),
    );
  }

  private async flush(key: string): Promise<void> {
    const p = this.pending.get(key);
    if (!p) return;
    this.pending.delete(key);
    try {
      for (let conflicts = 0; ; conflicts++) {
        try {
          await this.write(p);
          break;
        } catch (err) {
          if (!isConflict(err) || conflicts + 1 >= MAX_CONFLICTS) throw err;
          this.deps.logger.info({ cluster: p.cluster, namespace: p.namespace, err: String(err) }, 'bundle changed since it was read; packing again');
          await new Promise((r) => setTimeout(r, 50 * 2 ** conflicts));
        }
      }
      for (const w of p.waiters) w.resolve(p.stale);
    } catch (err) {
      for (const w of p.waiters) w.reject(err);
    }
  }

  /** The bundles of one key as known now: the cache's, or what this writer wrote while the cache shows what that superseded. */
  private observed(cluster: string, namespace: string): KubeObject[] {
    const cached = this.deps.bundles(cluster, namespace);
    const mine = this.written.get(`${cluster}/${namespace}`) ?? new Map<string, Written>();
    const seen = new Set<string>();
    const out: KubeObject[] = [];
    for (const bundle of cached) {
      const name = `${cluster}/${bundle.metadata.name}`;
      seen.add(name);
      const last = mine.get(name);
      if (last && last.superseded.has(bundle.metadata.resourceVersion ?? '')) {
        if (last.object) out.push(last.object);
        continue;
      }
      if (last) this.forget(`${cluster}/${namespace}`, name);
      out.push(bundle);
    }
    for (const [name, last] of mine) {
      if (seen.has(name)) continue;
      // Created here, not in the cache yet; or deleted here, gone from the cache too.
      if (last.created && last.object) out.push(last.object);
      else if (!last.object) this.forget(`${cluster}/${namespace}`, name);
    }
    return out;
  }

  private async write(p: Pending): Promise<void> {
    const key = `${p.cluster}/${p.namespace}`;
    const observed = this.observed(p.cluster, p.namespace);
    // What each bundle carries, for the drops' fences alone (a fan-out's or an edit's flush puts only).
    const carried = p.drops.size === 0 ? new Map<string, { copy: ManifestWork; bundle: KubeObject }>() : new Map(observed.flatMap((b) => (unpackBundle(b) ?? []).map((copy) => [copy.metadata.name, { copy, bundle: b }] as const)));
    const drop = new Set<string>();
    p.stale = [];
    for (const [name, d] of p.drops) {
      const found = carried.get(name);
      if (!found) continue; // no bundle carries it: done
      if (readSpecHash(found.copy) !== d.specHash || found.bundle.metadata.uid !== d.bundleUid) {
        this.deps.logger.info({ cluster: p.cluster, work: name }, 'copy not dropped: it changed since its owner saw it; the owner looks again');
        this.deps.onStale?.(d.owner);
        p.stale.push(d.key);
        continue;
      }
      drop.add(name);
    }
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const { writes, deletes } = packBundles({ cluster: p.cluster, namespace: p.namespace, observed, put: [...p.puts.values()], drop, capBytes: this.deps.capBytes, controller: this.deps.controller, now });
    await Promise.all([...writes.map((w) => this.writeOne(key, w)), ...deletes.map((d) => this.deleteOne(key, d))]);
    for (const name of drop) this.deps.logger.info({ cluster: p.cluster, work: name }, 'copy dropped from its bundle');
    if (writes.length + deletes.length > 0) {
      this.deps.logger.info({ cluster: p.cluster, namespace: p.namespace, written: writes.map((w) => w.bundle.metadata.name), deleted: deletes.map((d) => d.metadata.name), put: p.puts.size, dropped: drop.size }, 'bundles written');
    }
  }

  private async writeOne(key: string, { bundle, observed }: BundleWrite): Promise<void> {
    const name = `${bundle.metadata.namespace}/${bundle.metadata.name}`;
    if (!observed) {
      const created = await createObject<KubeObject>(this.deps.http, RESOURCES.manifestWorks, bundle);
      this.remember(key, name, { object: created, superseded: new Set(), created: true });
      return;
    }
    const replaced = await replaceObject<KubeObject>(this.deps.http, RESOURCES.manifestWorks, { ...bundle, metadata: { ...bundle.metadata, resourceVersion: observed.metadata.resourceVersion } });
    this.remember(key, name, { object: replaced, ...this.supersededBy(key, name, observed) });
  }

  private async deleteOne(key: string, observed: KubeObject): Promise<void> {
    const name = `${observed.metadata.namespace}/${observed.metadata.name}`;
    const { uid, resourceVersion } = observed.metadata;
    await deleteObject(this.deps.http, RESOURCES.manifestWorks, observed.metadata.namespace, observed.metadata.name, { uid, resourceVersion });
    this.remember(key, name, { object: undefined, ...this.supersededBy(key, name, observed) });
  }

  private remember(key: string, name: string, written: Written): void {
    // The cache may have shown the write before its answer came: then there is nothing to remember.
    const slash = key.indexOf('/');
    const bundleName = name.slice(name.indexOf('/') + 1);
    const cached = this.deps.bundles(key.slice(0, slash), key.slice(slash + 1)).find((b) => b.metadata.name === bundleName);
    // (A deletion of a bundle this writer created, the cache not showing it yet, is remembered: the create may show still.)
    const shown = written.object ? cached?.metadata.resourceVersion === written.object.metadata.resourceVersion : cached === undefined && !written.created;
    if (shown) {
      this.forget(key, name);
      return;
    }
    let mine = this.written.get(key);
    if (!mine) this.written.set(key, (mine = new Map<string, Written>()));
    mine.set(name, written);
    this.keyOfWritten.set(name, key);
  }

  private forget(key: string, name: string): void {
    const mine = this.written.get(key);
    mine?.delete(name);
    if (mine?.size === 0) this.written.delete(key);
    this.keyOfWritten.delete(name);
  }

  /** Writes remembered until the cache catches up with them (for tests and the fan-out's memory). */
  get remembered(): number {
    return this.keyOfWritten.size;
  }

  /** What a write over `observed` supersedes: its version, and what this writer's write of it superseded. */
  private supersededBy(key: string, name: string, observed: KubeObject): Pick<Written, 'superseded' | 'created'> {
    const earlier = this.written.get(key)?.get(name);
    const chained = earlier !== undefined && earlier.object === observed;
    const superseded = new Set(chained ? earlier.superseded : []);
    superseded.add(observed.metadata.resourceVersion ?? '');
    return { superseded, created: chained && earlier.created };
  }
}
