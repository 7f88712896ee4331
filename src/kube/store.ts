// A cache of one resource's objects keyed by `namespace/name`, with secondary indexes. Objects are frozen
// on the way in: readers share them and must never mutate them.
import { objectKey, type KubeObject } from '../core/objects.ts';

export type IndexFunc<T> = (object: T) => string[];

export interface StoreChange<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  old?: T;
  object: T;
}

export class Store<T extends KubeObject = KubeObject> {
  private readonly objects = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indexes = new Map<string, Map<string, Set<string>>>();

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
    return [...(idx.get(value) ?? [])].map((k) => this.objects.get(k)).filter((o): o is T => o !== undefined);
  }

  /** Applies one watch event; returns the change, or undefined when nothing changed. */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', incoming: T): StoreChange<T> | undefined {
    const key = objectKey(incoming);
    const old = this.objects.get(key);
    if (type === 'DELETED') {
      if (!old) return undefined;
      this.unindex(key, old);
      this.objects.delete(key);
      return { type, old, object: old };
    }
    if (old && old.metadata.resourceVersion === incoming.metadata.resourceVersion) return undefined;
    const object = deepFreeze(incoming);
    if (old) this.unindex(key, old);
    this.objects.set(key, object);
    this.index(key, object);
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
      if (current) this.unindex(key, current);
      this.objects.delete(key);
      const before = change.type === 'ADDED' ? undefined : change.old;
      if (before) {
        this.objects.set(key, before);
        this.index(key, before);
      }
    }
  }

  private index(key: string, object: T): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indexes.get(name)!;
      for (const value of fn(object)) {
        let set = idx.get(value);
        if (!set) idx.set(value, (set = new Set()));
        set.add(key);
      }
    }
  }

  private unindex(key: string, object: T): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indexes.get(name)!;
      for (const value of fn(object)) {
        const set = idx.get(value);
        set?.delete(key);
        if (set?.size === 0) idx.delete(value);
      }
    }
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
