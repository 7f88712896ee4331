// A cache of one resource's objects keyed by `namespace/name`, with secondary indexes. Objects are frozen
// on the way in: readers share them and must never mutate them.
import { deepFreeze } from '../core/k8s/freeze.ts';
import { objectKey, type KubeObject } from '../core/k8s/objects.ts';

export type IndexFunc<T> = (object: T) => string[];

export interface StoreChange<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  old?: T;
  object: T;
}

export class Store<T extends KubeObject = KubeObject> {
  private readonly objects = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** Per index, per value: the objects whose index function returned it. */
  private readonly indexes = new Map<string, Map<string, Bucket<T>>>();

  /** Adds an index; must be called before objects arrive. */
  addIndex(name: string, fn: IndexFunc<T>): this {
    if (this.objects.size > 0) throw new Error(`index ${name} added to a non-empty store`);
    this.indexers.set(name, fn);
    this.indexes.set(name, new Map());
    return this;
  }

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  /** Objects whose index function returned `value`. */
  byIndex(index: string, value: string): T[] {
    const idx = this.indexes.get(index);
    if (!idx) throw new Error(`no index ${index}`);
    const bucket = idx.get(value);
    return bucket === undefined ? [] : members(bucket);
  }

  /** Applies one watch event; returns the change, or undefined when nothing changed. */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', incoming: T): StoreChange<T> | undefined {
    const key = objectKey(incoming);
    const old = this.objects.get(key);
    if (type === 'DELETED') {
      if (!old) return undefined;
      this.unindex(old);
      this.objects.delete(key);
      return { type, old, object: old };
    }
    if (old && old.metadata.resourceVersion === incoming.metadata.resourceVersion) return undefined;
    const object = deepFreeze(incoming);
    if (old) this.unindex(old);
    this.objects.set(key, object);
    this.index(object);
    return old ? { type: 'MODIFIED', old, object } : { type: 'ADDED', object };
  }

  /** Replaces the contents with a fresh list; returns the changes, deletions included. */
  replace(items: T[]): StoreChange<T>[] {
    const changes: StoreChange<T>[] = [];
    const seen = new Set<string>();
    for (const item of items) {
      seen.add(objectKey(item));
      const change = this.apply('MODIFIED', item);
      if (change) changes.push(change);
    }
    for (const [key, old] of [...this.objects]) {
      if (!seen.has(key)) changes.push(this.apply('DELETED', old)!);
    }
    return changes;
  }

  /** Undoes changes this store returned (newest first), e.g. when a handler could not take them. */
  revert(changes: readonly StoreChange<T>[]): void {
    for (const change of [...changes].reverse()) {
      const key = objectKey(change.object);
      const current = this.objects.get(key);
      if (current) this.unindex(current);
      this.objects.delete(key);
      const before = change.type === 'ADDED' ? undefined : change.old;
      if (before) {
        this.objects.set(key, before);
        this.index(before);
      }
    }
  }

  private index(object: T): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indexes.get(name)!;
      for (const value of fn(object)) {
        const bucket = idx.get(value);
        idx.set(value, bucket === undefined ? object : withMember(bucket, object));
      }
    }
  }

  private unindex(object: T): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indexes.get(name)!;
      for (const value of fn(object)) {
        const bucket = idx.get(value);
        const rest = bucket === undefined ? undefined : withoutMember(bucket, object);
        if (rest === undefined) idx.delete(value);
        else idx.set(value, rest);
      }
    }
  }
}

/**
 * The objects of one index value: the object itself while it is the only one, then an array, then a Set
 * (a Set costs ~160 bytes even for one entry, and most index values have one object or a few: a work's
 * policy has one per cluster). Insertion order throughout, as a Set of keys had it.
 */
type Bucket<T> = T | T[] | Set<T>;

/** Up to this many objects an array: removing one is a short scan. */
const MAX_ARRAY_BUCKET = 32;

function members<T extends object>(bucket: Bucket<T>): T[] {
  if (bucket instanceof Set) return [...bucket];
  return Array.isArray(bucket) ? [...bucket] : [bucket];
}

/** The bucket with `object` in it (an index function may return one value twice: still once). */
function withMember<T extends object>(bucket: Bucket<T>, object: T): Bucket<T> {
  if (bucket instanceof Set) return bucket.add(object);
  if (!Array.isArray(bucket)) return bucket === object ? bucket : [bucket, object];
  if (bucket.includes(object)) return bucket;
  // Exactly as long as needed: an array grown by push keeps spare capacity.
  return bucket.length < MAX_ARRAY_BUCKET ? [...bucket, object] : new Set([...bucket, object]);
}

/** The bucket without `object`; undefined once empty. */
function withoutMember<T extends object>(bucket: Bucket<T>, object: T): Bucket<T> | undefined {
  if (bucket instanceof Set) {
    bucket.delete(object);
    return bucket.size === 0 ? undefined : bucket;
  }
  if (!Array.isArray(bucket)) return bucket === object ? undefined : bucket;
  const rest = bucket.filter((member) => member !== object);
  return rest.length === 1 ? rest[0] : rest;
}
