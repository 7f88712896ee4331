import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../core/k8s/objects.ts';
import { DerivedStore } from './derivedstore.ts';
import type { ChangeHandler } from './informer.ts';
import { Store, type StoreChange } from './store.ts';

/** A source as an informer is one: a store whose changes are handed to its handlers (undone when one throws). */
class Source {
  readonly store = new Store();
  readonly synced = true;
  private readonly handlers: ChangeHandler<KubeObject>[] = [];
  onChange(handler: ChangeHandler<KubeObject>): void {
    this.handlers.push(handler);
  }
  event(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): void {
    const change = this.store.apply(type, object);
    if (!change) return;
    try {
      for (const h of this.handlers) h(change);
    } catch (err) {
      this.store.revert([change]);
      throw err;
    }
  }
}

/** A source object `name` carrying items `items` (each `key=value`), as a bundle carries copies. */
function carrier(name: string, resourceVersion: string, items: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'c1', resourceVersion }, data: items };
}

const derive = (source: KubeObject): KubeObject[] =>
  Object.entries((source.data as Record<string, string> | undefined) ?? {}).map(([name, value]) => ({
    apiVersion: 'v1',
    kind: 'Item',
    metadata: { name, namespace: 'c1', resourceVersion: source.metadata.resourceVersion, annotations: { from: source.metadata.name } },
    value,
  }));

function derived(choose = (c: readonly KubeObject[]) => c[0]!) {
  const source = new Source();
  const store = new DerivedStore(source, { derive, choose, same: (a, b) => (a as { value?: string }).value === (b as { value?: string }).value && a.metadata.annotations?.from === b.metadata.annotations?.from });
  const seen: string[] = [];
  store.onChange((c: StoreChange<KubeObject>) => seen.push(`${c.type} ${c.object.metadata.name}=${(c.object as { value?: string }).value}`));
  return { source, store, seen };
}

const shown = (store: DerivedStore) => Object.fromEntries(store.store.list().map((o) => [o.metadata.name, `${(o as { value?: string }).value}@${o.metadata.annotations?.from}`]));

test('each source object gives its derived objects, with the changes an informer would give; one alike but for its version is no change', () => {
  const { source, store, seen } = derived();
  source.event('ADDED', carrier('b', '1', { x: '1', y: '1' }));
  assert.deepEqual(seen.splice(0), ['ADDED x=1', 'ADDED y=1']);
  // y changed, x alike: only y.
  source.event('MODIFIED', carrier('b', '2', { x: '1', y: '2' }));
  assert.deepEqual(seen.splice(0), ['MODIFIED y=2']);
  // x gone from the source.
  source.event('MODIFIED', carrier('b', '3', { y: '2' }));
  assert.deepEqual(seen.splice(0), ['DELETED x=1']);
  assert.deepEqual(shown(store), { y: '2@b' });
  source.event('DELETED', carrier('b', '3', { y: '2' }));
  assert.deepEqual(seen.splice(0), ['DELETED y=2']);
  assert.equal(store.store.size, 0);
});

test('one key given by two sources: the store shows the one chosen, lists both as carriers, and falls back when one goes', () => {
  const { source, store, seen } = derived((c) => c.find((o) => o.metadata.annotations?.from === 'bundle') ?? c[0]!);
  source.event('ADDED', carrier('own', '1', { x: 'old' }));
  source.event('ADDED', carrier('bundle', '2', { x: 'new' }));
  assert.deepEqual(seen.splice(0), ['ADDED x=old', 'MODIFIED x=new']);
  assert.deepEqual(store.carriers('c1/x').map((o) => o.metadata.annotations?.from).sort(), ['bundle', 'own']);
  source.event('DELETED', carrier('own', '1', { x: 'old' }));
  assert.deepEqual(seen.splice(0), [], 'the one shown stays');
  assert.deepEqual(store.carriers('c1/x').map((o) => o.metadata.annotations?.from), ['bundle']);
  source.event('DELETED', carrier('bundle', '2', { x: 'new' }));
  assert.deepEqual(seen.splice(0), ['DELETED x=new']);
  assert.deepEqual(store.carriers('c1/x'), []);
});

test('a handler that throws undoes the change here and in the source, so that it can come again', () => {
  const { source, store } = derived();
  source.event('ADDED', carrier('b', '1', { x: '1' }));
  let fail = true;
  store.onChange(() => {
    if (fail) throw new Error('not now');
  });
  assert.throws(() => source.event('MODIFIED', carrier('b', '2', { x: '2', y: '1' })), /not now/);
  assert.deepEqual(shown(store), { x: '1@b' });
  assert.deepEqual(store.carriers('c1/y'), []);
  assert.equal(source.store.get('c1/b')?.metadata.resourceVersion, '1');
  fail = false;
  source.event('MODIFIED', carrier('b', '2', { x: '2', y: '1' }));
  assert.deepEqual(shown(store), { x: '2@b', y: '1@b' });
});
