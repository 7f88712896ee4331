import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { workCacheView } from '../core/works/cacheview.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { Store } from './store.ts';

function cm(name: string, resourceVersion: string, data: Record<string, string> = {}, labels?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', resourceVersion, ...(labels ? { labels } : {}) },
    data,
  };
}

/** An index on the `team` label, as the controllers index by label or reference. */
const byTeam = (o: KubeObject): string[] => (o.metadata.labels?.team ? [o.metadata.labels.team] : []);

const names = (objects: KubeObject[]): string[] => objects.map((o) => o.metadata.name).sort();

describe('Store.apply', () => {
  it('ADDED of a new key is an ADDED change without old', () => {
    const s = new Store();
    const a = cm('a', '1');
    assert.deepEqual(s.apply('ADDED', a), { type: 'ADDED', object: a });
    assert.equal(s.size, 1);
    assert.equal(s.get('ns/a'), a);
    assert.deepEqual(s.keys(), ['ns/a']);
  });

  it('MODIFIED with a new resourceVersion is a MODIFIED change carrying the old object', () => {
    const s = new Store();
    const a1 = cm('a', '1', { k: 'v1' });
    const a2 = cm('a', '2', { k: 'v2' });
    s.apply('ADDED', a1);
    assert.deepEqual(s.apply('MODIFIED', a2), { type: 'MODIFIED', old: a1, object: a2 });
    assert.equal(s.get('ns/a'), a2);
    assert.equal(s.size, 1);
  });

  it('a MODIFIED of an unknown key is reported as ADDED (e.g. an event that races a relist)', () => {
    const s = new Store();
    const a = cm('a', '5');
    assert.deepEqual(s.apply('MODIFIED', a), { type: 'ADDED', object: a });
  });

  it('an ADDED for a known key with a new resourceVersion is a MODIFIED change', () => {
    const s = new Store();
    const a1 = cm('a', '1');
    const a2 = cm('a', '2');
    s.apply('ADDED', a1);
    assert.deepEqual(s.apply('ADDED', a2), { type: 'MODIFIED', old: a1, object: a2 });
  });

  it('an unchanged resourceVersion is no change, and the cached object stays the same instance', () => {
    const s = new Store();
    const a1 = cm('a', '7', { k: 'v' });
    s.apply('ADDED', a1);
    assert.equal(s.apply('MODIFIED', cm('a', '7', { k: 'other' })), undefined);
    assert.equal(s.apply('ADDED', cm('a', '7')), undefined);
    assert.equal(s.get('ns/a'), a1);
  });

  it('DELETED of a known key is a DELETED change carrying the cached object, and removes it', () => {
    const s = new Store();
    const a1 = cm('a', '1');
    s.apply('ADDED', a1);
    // The deleted object from a watch has a newer resourceVersion: the change reports the last cached state.
    assert.deepEqual(s.apply('DELETED', cm('a', '2')), { type: 'DELETED', old: a1, object: a1 });
    assert.equal(s.get('ns/a'), undefined);
    assert.equal(s.size, 0);
  });

  it('DELETED of an unknown key is no change', () => {
    const s = new Store();
    s.apply('ADDED', cm('a', '1'));
    assert.equal(s.apply('DELETED', cm('b', '2')), undefined);
    assert.equal(s.size, 1);
  });

  it('keys cluster-scoped objects by name alone and namespaced ones by namespace/name', () => {
    const s = new Store();
    s.apply('ADDED', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', resourceVersion: '1' } });
    s.apply('ADDED', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'y', resourceVersion: '2' } });
    assert.deepEqual(s.keys().sort(), ['x', 'y/x']);
  });
});

describe('Store: cached objects are deep-frozen', () => {
  it('mutating a cached object, at any depth, throws', () => {
    // ES modules are strict code: assigning to (or deleting from) a frozen object throws a TypeError.
    const s = new Store();
    const incoming = cm('a', '1', { k: 'v' }, { team: 'red' });
    (incoming as { spec?: unknown }).spec = { list: [{ deep: { value: 1 } }] };
    s.apply('ADDED', incoming);
    const cached = s.get('ns/a')!;
    assert.ok(Object.isFrozen(cached));
    assert.throws(() => {
      cached.kind = 'Secret';
    }, TypeError);
    assert.throws(() => {
      cached.metadata.name = 'b';
    }, TypeError);
    assert.throws(() => {
      cached.metadata.labels!.team = 'blue';
    }, TypeError);
    assert.throws(() => {
      (cached.data as Record<string, string>).k = 'w';
    }, TypeError);
    assert.throws(() => {
      (cached.data as Record<string, string>).added = 'x';
    }, TypeError);
    const list = (cached.spec as { list: { deep: { value: number } }[] }).list;
    assert.throws(() => list.push({ deep: { value: 2 } }), TypeError);
    assert.throws(() => {
      list[0]!.deep.value = 2;
    }, TypeError);
    assert.throws(() => {
      delete (cached.metadata as { resourceVersion?: string }).resourceVersion;
    }, TypeError);
    assert.equal(s.get('ns/a')!.metadata.labels!.team, 'red');
  });

  it('cached works, whose shared parts come in frozen already (core/intern.ts), are frozen throughout', () => {
    const s = new Store();
    const work = (cluster: string): KubeObject =>
      JSON.parse(
        JSON.stringify({
          apiVersion: 'work.open-cluster-management.io/v1',
          kind: 'ManifestWork',
          metadata: { name: 'w', namespace: cluster, resourceVersion: '1', labels: { team: 'a team with a long name' }, managedFields: [{ time: '2026-01-01T00:00:00Z' }] },
          spec: { workload: { manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a config map' } }] } },
          status: { conditions: [{ type: 'Applied', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
        }),
      ) as KubeObject;
    const cachedWork = workCacheView();
    for (const cluster of ['c1', 'c2', 'c3']) s.apply('ADDED', cachedWork(work(cluster)));
    const frozen = (value: unknown, path: string): void => {
      if (value === null || typeof value !== 'object') return;
      assert.ok(Object.isFrozen(value), path);
      for (const [key, item] of Object.entries(value)) frozen(item, `${path}.${key}`);
    };
    for (const cached of s.list()) frozen(cached, cached.metadata.namespace!);
  });

  it('objects that come in through replace() are frozen too', () => {
    const s = new Store();
    s.replace([cm('a', '1', { k: 'v' })]);
    assert.throws(() => {
      (s.get('ns/a')!.data as Record<string, string>).k = 'w';
    }, TypeError);
  });
});

describe('Store indexes', () => {
  it('byIndex finds objects by index value; objects with no value are in no bucket', () => {
    const s = new Store().addIndex('team', byTeam);
    s.apply('ADDED', cm('a', '1', {}, { team: 'red' }));
    s.apply('ADDED', cm('b', '1', {}, { team: 'red' }));
    s.apply('ADDED', cm('c', '1', {}, { team: 'blue' }));
    s.apply('ADDED', cm('d', '1'));
    assert.deepEqual(names(s.byIndex('team', 'red')), ['a', 'b']);
    assert.deepEqual(names(s.byIndex('team', 'blue')), ['c']);
    assert.deepEqual(s.byIndex('team', 'green'), []);
  });

  it('an object moving from value A to B disappears from A and appears in B', () => {
    const s = new Store().addIndex('team', byTeam);
    s.apply('ADDED', cm('a', '1', {}, { team: 'red' }));
    s.apply('ADDED', cm('b', '1', {}, { team: 'red' }));
    s.apply('MODIFIED', cm('a', '2', {}, { team: 'blue' }));
    assert.deepEqual(names(s.byIndex('team', 'red')), ['b']);
    assert.deepEqual(names(s.byIndex('team', 'blue')), ['a']);
    assert.equal(s.byIndex('team', 'blue')[0]!.metadata.resourceVersion, '2', 'the index returns the current object');
    s.apply('MODIFIED', cm('a', '3'));
    assert.deepEqual(names(s.byIndex('team', 'blue')), []);
    assert.deepEqual(names(s.byIndex('team', 'red')), ['b']);
  });

  it('an index function may return several values; an update replaces the whole set', () => {
    const tags = (o: KubeObject): string[] => Object.keys((o.data as Record<string, string> | undefined) ?? {});
    const s = new Store().addIndex('tags', tags);
    s.apply('ADDED', cm('a', '1', { x: '', y: '' }));
    assert.deepEqual(names(s.byIndex('tags', 'x')), ['a']);
    assert.deepEqual(names(s.byIndex('tags', 'y')), ['a']);
    s.apply('MODIFIED', cm('a', '2', { y: '', z: '' }));
    assert.deepEqual(s.byIndex('tags', 'x'), []);
    assert.deepEqual(names(s.byIndex('tags', 'y')), ['a']);
    assert.deepEqual(names(s.byIndex('tags', 'z')), ['a']);
  });

  it('a deleted object leaves every index', () => {
    const s = new Store().addIndex('team', byTeam);
    s.apply('ADDED', cm('a', '1', {}, { team: 'red' }));
    s.apply('DELETED', cm('a', '2', {}, { team: 'red' }));
    assert.deepEqual(s.byIndex('team', 'red'), []);
  });

  it('an unchanged resourceVersion leaves the index as it was, even if the incoming copy differs', () => {
    const s = new Store().addIndex('team', byTeam);
    s.apply('ADDED', cm('a', '1', {}, { team: 'red' }));
    assert.equal(s.apply('MODIFIED', cm('a', '1', {}, { team: 'blue' })), undefined);
    assert.deepEqual(names(s.byIndex('team', 'red')), ['a']);
    assert.deepEqual(s.byIndex('team', 'blue'), []);
  });

  it('several indexes are maintained independently', () => {
    const s = new Store()
      .addIndex('team', byTeam)
      .addIndex('name', (o) => [o.metadata.name]);
    s.apply('ADDED', cm('a', '1', {}, { team: 'red' }));
    s.apply('MODIFIED', cm('a', '2', {}, { team: 'blue' }));
    assert.deepEqual(names(s.byIndex('name', 'a')), ['a']);
    assert.deepEqual(names(s.byIndex('team', 'blue')), ['a']);
    assert.deepEqual(s.byIndex('team', 'red'), []);
  });

  it('a value of many objects (past the small buckets) keeps them all in insertion order; a modified one moves last', () => {
    const s = new Store().addIndex('team', byTeam);
    const order = Array.from({ length: 40 }, (_, i) => `o${i}`);
    for (const name of order) s.apply('ADDED', cm(name, '1', {}, { team: 'red' }));
    const inOrder = (): string[] => s.byIndex('team', 'red').map((o) => o.metadata.name);
    assert.deepEqual(inOrder(), order);
    s.apply('MODIFIED', cm('o3', '2', {}, { team: 'red' }));
    assert.deepEqual(inOrder(), [...order.filter((n) => n !== 'o3'), 'o3']);
    for (const name of order.slice(0, 39)) s.apply('DELETED', cm(name, '3'));
    assert.deepEqual(inOrder(), ['o39']);
    s.apply('DELETED', cm('o39', '3'));
    assert.deepEqual(s.byIndex('team', 'red'), []);
  });

  it('a few objects of one value keep their insertion order; a modified one moves last', () => {
    const s = new Store().addIndex('team', byTeam);
    for (const name of ['a', 'b', 'c']) s.apply('ADDED', cm(name, '1', {}, { team: 'red' }));
    s.apply('MODIFIED', cm('a', '2', {}, { team: 'red' }));
    assert.deepEqual(s.byIndex('team', 'red').map((o) => o.metadata.name), ['b', 'c', 'a']);
    s.apply('DELETED', cm('c', '3'));
    assert.deepEqual(s.byIndex('team', 'red').map((o) => o.metadata.name), ['b', 'a']);
  });

  it('an index function returning one value twice puts the object in its bucket once', () => {
    const s = new Store().addIndex('twice', (o) => [o.metadata.name, o.metadata.name, 'all', 'all']);
    s.apply('ADDED', cm('a', '1'));
    s.apply('ADDED', cm('b', '1'));
    assert.deepEqual(names(s.byIndex('twice', 'a')), ['a']);
    assert.deepEqual(names(s.byIndex('twice', 'all')), ['a', 'b']);
    s.apply('DELETED', cm('a', '2'));
    assert.deepEqual(s.byIndex('twice', 'a'), []);
    assert.deepEqual(names(s.byIndex('twice', 'all')), ['b']);
  });

  it('byIndex hands out a new array: changing it changes nothing in the store', () => {
    const s = new Store().addIndex('team', byTeam);
    for (const name of ['a', 'b']) s.apply('ADDED', cm(name, '1', {}, { team: 'red' }));
    s.byIndex('team', 'red').pop();
    assert.deepEqual(names(s.byIndex('team', 'red')), ['a', 'b']);
  });

  it('byIndex on an unknown index throws', () => {
    assert.throws(() => new Store().byIndex('nope', 'x'), /no index nope/);
  });

  it('addIndex on a non-empty store throws', () => {
    const s = new Store();
    s.apply('ADDED', cm('a', '1'));
    assert.throws(() => s.addIndex('team', byTeam), /index team added to a non-empty store/);
  });

  it('addIndex is allowed again once the store is empty', () => {
    const s = new Store();
    s.apply('ADDED', cm('a', '1'));
    s.apply('DELETED', cm('a', '1'));
    s.addIndex('team', byTeam);
    s.apply('ADDED', cm('b', '1', {}, { team: 'red' }));
    assert.deepEqual(names(s.byIndex('team', 'red')), ['b']);
  });
});

describe('Store.replace', () => {
  it('into an empty store: one ADDED change per item', () => {
    const s = new Store();
    const a = cm('a', '1');
    const b = cm('b', '1');
    assert.deepEqual(s.replace([a, b]), [
      { type: 'ADDED', object: a },
      { type: 'ADDED', object: b },
    ]);
    assert.deepEqual(s.keys().sort(), ['ns/a', 'ns/b']);
  });

  it('yields ADDED for new objects, MODIFIED for changed ones, DELETED for vanished ones, nothing for unchanged', () => {
    const s = new Store().addIndex('team', byTeam);
    const kept = cm('kept', '1', {}, { team: 'red' });
    const changed1 = cm('changed', '1', {}, { team: 'red' });
    const gone = cm('gone', '1', {}, { team: 'red' });
    s.replace([kept, changed1, gone]);

    const changed2 = cm('changed', '4', {}, { team: 'blue' });
    const fresh = cm('fresh', '5', {}, { team: 'blue' });
    const changes = s.replace([cm('kept', '1', {}, { team: 'red' }), changed2, fresh]);
    assert.deepEqual(
      changes.map((c) => [c.type, c.object.metadata.name]).sort(),
      [
        ['ADDED', 'fresh'],
        ['DELETED', 'gone'],
        ['MODIFIED', 'changed'],
      ],
    );
    assert.deepEqual(changes.find((c) => c.type === 'MODIFIED'), { type: 'MODIFIED', old: changed1, object: changed2 });
    assert.deepEqual(changes.find((c) => c.type === 'DELETED'), { type: 'DELETED', old: gone, object: gone });

    assert.deepEqual(s.keys().sort(), ['ns/changed', 'ns/fresh', 'ns/kept']);
    assert.equal(s.get('ns/kept'), kept, 'an unchanged object keeps its cached instance');
    assert.deepEqual(names(s.byIndex('team', 'red')), ['kept']);
    assert.deepEqual(names(s.byIndex('team', 'blue')), ['changed', 'fresh']);
  });

  it('an empty list deletes everything', () => {
    const s = new Store().addIndex('team', byTeam);
    s.replace([cm('a', '1', {}, { team: 'red' }), cm('b', '1')]);
    const changes = s.replace([]);
    assert.deepEqual(changes.map((c) => [c.type, c.object.metadata.name]).sort(), [
      ['DELETED', 'a'],
      ['DELETED', 'b'],
    ]);
    assert.equal(s.size, 0);
    assert.deepEqual(s.byIndex('team', 'red'), []);
  });

  it('the same list twice yields no changes the second time', () => {
    const s = new Store();
    s.replace([cm('a', '1'), cm('b', '2')]);
    assert.deepEqual(s.replace([cm('a', '1'), cm('b', '2')]), []);
  });
});

describe('Store.revert', () => {
  it('puts the store and its indexes back to before the changes (add, modify, delete, relist)', () => {
    const store = new Store().addIndex('team', byTeam);
    store.replace([cm('a', '1', {}, { team: 'x' }), cm('b', '1', {}, { team: 'y' })]);
    const snapshot = (): string => JSON.stringify([store.list().map((o) => [o.metadata.name, o.metadata.resourceVersion]).sort(), names(store.byIndex('team', 'x')), names(store.byIndex('team', 'z'))]);
    const before = snapshot();
    const added = store.apply('ADDED', cm('c', '2', {}, { team: 'x' }))!;
    const modified = store.apply('MODIFIED', cm('a', '3', {}, { team: 'z' }))!;
    const deleted = store.apply('DELETED', cm('b', '4'))!;
    store.revert([added, modified, deleted]);
    assert.equal(snapshot(), before);
    const relisted = store.replace([cm('a', '5', {}, { team: 'z' })]);
    store.revert(relisted);
    assert.equal(snapshot(), before);
  });
});
