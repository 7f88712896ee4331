// A store derived from another's objects, each source object giving zero or more derived ones (a bundle of
// ManifestWorks gives the copy works it carries: core/works/bundle.ts), with the change events an informer's store
// gives: readers of the derived objects never see the sources. Several sources may give an object of one key for a
// while (a copy moving from a work of its own into a bundle): `choose` picks the one the store shows, and
// `carriers` lists them all. A derived object `same` as the one shown is no change (a bundle rewritten for one
// copy leaves its neighbours' reconciles alone).
import { objectKey, type KubeObject } from '../core/k8s/objects.ts';
import type { ChangeHandler } from './informer.ts';
import { Store, type StoreChange } from './store.ts';

export interface DerivedStoreSource {
  onChange(handler: ChangeHandler<KubeObject>): unknown;
  readonly synced: boolean;
}

export interface DerivedStoreOptions<T extends KubeObject> {
  /** What a source object gives; each derived object's key must be unique among them. */
  derive: (source: KubeObject) => readonly T[];
  /** Which of the objects several sources give for one key the store shows. */
  choose: (candidates: readonly T[]) => T;
  /** Equal but for what does not matter to readers (e.g. the resourceVersion they share with their source). */
  same: (a: T, b: T) => boolean;
}

export class DerivedStore<T extends KubeObject = KubeObject> {
  readonly store = new Store<T>();
  private readonly handlers: ChangeHandler<T>[] = [];
  /** By derived key, by source key: what each source gives of it. */
  private readonly given = new Map<string, Map<string, T>>();
  /** By source key: the keys it gives. */
  private readonly bySource = new Map<string, string[]>();

  constructor(
    private readonly source: DerivedStoreSource,
    private readonly options: DerivedStoreOptions<T>,
  ) {
    source.onChange((change) => this.take(change));
  }

  /** As the source's: the derived objects are complete when the source is. */
  get synced(): boolean {
    return this.source.synced;
  }

  onChange(handler: ChangeHandler<T>): this {
    this.handlers.push(handler);
    return this;
  }

  /** Every object given for `key` (`namespace/name`), one per source giving it. */
  carriers(key: string): T[] {
    return [...(this.given.get(key)?.values() ?? [])];
  }

  /**
   * Takes one change of the source. A handler's throw undoes what the change did here and is thrown on, so that
   * the source undoes it too (Informer.commit) and the change comes again.
   */
  private take(change: StoreChange<KubeObject>): void {
    const sourceKey = objectKey(change.object);
    const now = change.type === 'DELETED' ? [] : this.options.derive(change.object);
    const keys = new Set([...(this.bySource.get(sourceKey) ?? []), ...now.map((o) => objectKey(o))]);
    const undo = { given: new Map([...keys].map((k) => [k, this.given.get(k)])), bySource: this.bySource.get(sourceKey) };
    for (const key of keys) {
      const of = new Map(this.given.get(key));
      of.delete(sourceKey);
      this.given.set(key, of);
    }
    for (const object of now) this.given.get(objectKey(object))!.set(sourceKey, object);
    if (now.length > 0) this.bySource.set(sourceKey, now.map((o) => objectKey(o)));
    else this.bySource.delete(sourceKey);

    const changes: StoreChange<T>[] = [];
    for (const key of keys) {
      const candidates = [...this.given.get(key)!.values()];
      if (candidates.length === 0) this.given.delete(key);
      const shown = this.store.get(key);
      if (candidates.length === 0) {
        if (shown) changes.push(this.store.apply('DELETED', shown)!);
        continue;
      }
      const chosen = this.options.choose(candidates);
      if (shown && this.options.same(shown, chosen)) continue;
      const applied = this.store.apply(shown ? 'MODIFIED' : 'ADDED', chosen);
      if (applied) changes.push(applied);
    }
    try {
      for (const c of changes) for (const h of this.handlers) h(c);
    } catch (err) {
      this.store.revert(changes);
      for (const [key, of] of undo.given) {
        if (of) this.given.set(key, of);
        else this.given.delete(key);
      }
      if (undo.bySource) this.bySource.set(sourceKey, undo.bySource);
      else this.bySource.delete(sourceKey);
      throw err;
    }
  }
}
