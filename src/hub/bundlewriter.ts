// Writes bundles (docs/design/fleet.md#how-it-is-built). Copy changes decided per copy — puts, and the drops the
// deletion rule allowed — are handed over by their owner and coalesced per bundle key (one cluster, one downstream
// namespace) for `lingerMs`, so that the policies of a fan-out write each bundle once rather than once each. A
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

/** What this writer last wrote of a bundle, until the cache shows something else than what it was written over. */
interface Written {
  /** The bundle key it belongs to. */
  key: string;
  /** The bundle as the write answered, or undefined once deleted. */
  object: KubeObject | undefined;
  /** The resourceVersion it replaced (undefined: created). */
  over: string | undefined;
}

export class BundleWriter {
  private readonly pending = new Map<string, Pending>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly flushing = new Map<string, Promise<void>>();
  private readonly written = new Map<string, Written>();

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

  /** Stops: what is pending is not written (a new leader decides again), and its owners are told so. */
  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const p of this.pending.values()) for (const w of p.waiters) w.reject(new Error(`bundle writer stopped before ${p.cluster}/${p.namespace} was written`));
    this.pending.clear();
  }

  private schedule(key: string): void {
    if (this.timers.has(key)) return;
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        const previous = this.flushing.get(key) ?? Promise.resolve();
        const next = previous.then(() => this.flush(key));
        this.flushing.set(key, next);
        void next.finally(() => {
          if (this.flushing.get(key) === next) this.flushing.delete(key);
        });
      }, this.deps.lingerMs ?? 20),
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

  /** The bundles of one key as known now: the cache's, or what this writer wrote while the cache shows what that replaced. */
  private observed(cluster: string, namespace: string): KubeObject[] {
    const cached = this.deps.bundles(cluster, namespace);
    const seen = new Set<string>();
    const out: KubeObject[] = [];
    for (const bundle of cached) {
      const name = `${cluster}/${bundle.metadata.name}`;
      seen.add(name);
      const mine = this.written.get(name);
      if (mine && mine.over === bundle.metadata.resourceVersion) {
        if (mine.object) out.push(mine.object);
        continue;
      }
      this.written.delete(name);
      out.push(bundle);
    }
    for (const [name, mine] of this.written) {
      if (mine.key !== `${cluster}/${namespace}` || seen.has(name)) continue;
      // Created here, not in the cache yet; or deleted here, gone from the cache too.
      if (mine.over === undefined && mine.object) out.push(mine.object);
      else if (!mine.object) this.written.delete(name);
    }
    return out;
  }

  private async write(p: Pending): Promise<void> {
    const key = `${p.cluster}/${p.namespace}`;
    const observed = this.observed(p.cluster, p.namespace);
    const carried = new Map(observed.flatMap((b) => (unpackBundle(b) ?? []).map((copy) => [copy.metadata.name, { copy, bundle: b }] as const)));
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
    const { writes, deletes } = packBundles({ cluster: p.cluster, namespace: p.namespace, observed, put: [...p.puts.values()], drop, capBytes: this.deps.capBytes, controller: this.deps.controller });
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
      this.written.set(name, { key, object: created, over: undefined });
      return;
    }
    const replaced = await replaceObject<KubeObject>(this.deps.http, RESOURCES.manifestWorks, { ...bundle, metadata: { ...bundle.metadata, resourceVersion: observed.metadata.resourceVersion } });
    this.written.set(name, { key, object: replaced, over: this.overOf(name, observed) });
  }

  private async deleteOne(key: string, observed: KubeObject): Promise<void> {
    const name = `${observed.metadata.namespace}/${observed.metadata.name}`;
    const { uid, resourceVersion } = observed.metadata;
    await deleteObject(this.deps.http, RESOURCES.manifestWorks, observed.metadata.namespace, observed.metadata.name, { uid, resourceVersion });
    this.written.set(name, { key, object: undefined, over: this.overOf(name, observed) });
  }

  /** The resourceVersion the cache shows until it catches up with a write over `observed`. */
  private overOf(name: string, observed: KubeObject): string | undefined {
    const earlier = this.written.get(name);
    // Written over our own earlier write that the cache has not shown yet: the cache still shows what that one replaced.
    return earlier && earlier.object === observed ? earlier.over : observed.metadata.resourceVersion;
  }
}
