import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../k8s/objects.ts';
import { DROPPED_KEYS_ANNOTATION, droppedKeys, droppedKeysPatch, readDroppedKeys, withDroppedKeys } from './droppedkeys.ts';

const SYNCED = { 'kuadrant.io/policy-synced': 'team-a/p', 'kuadrant.io/origin-creation': '2026-11-01T00:00:00Z', 'policysync.kuadrant.io/revision': '3' };

function copy(labels: Record<string, string>, annotations: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { name: 'p', namespace: 'team-a', labels, annotations: { ...SYNCED, ...annotations } }, spec: { rules: {} } };
}

test('a key the copy as last sent had and the new copy lacks is named as dropped; kept ones and new ones are not', () => {
  const sent = copy({ team: 'a', tier: 'gold' }, { 'example.com/note': 'x', 'example.com/stay': 'y' });
  const next = copy({ tier: 'silver', added: 'z' }, { 'example.com/stay': 'y' });
  assert.deepEqual(droppedKeys(sent, next), { labels: ['team'], annotations: ['example.com/note'] });
  const named = withDroppedKeys(next, sent);
  assert.equal(named.metadata.annotations?.[DROPPED_KEYS_ANNOTATION], '{"annotations":["example.com/note"],"labels":["team"]}');
  assert.deepEqual(readDroppedKeys(named), { labels: ['team'], annotations: ['example.com/note'] });
  assert.deepEqual(next.metadata.annotations?.[DROPPED_KEYS_ANNOTATION], undefined, 'the copy given is not mutated');
});

test('stable: the copy as sent already naming a key keeps naming it while it stays absent, and stops once it is back', () => {
  const first = withDroppedKeys(copy({}), copy({ team: 'a' }));
  // A restart on an unchanged world: the copy computed against what the work places is the same copy.
  assert.deepEqual(withDroppedKeys(copy({}), first), first);
  // Another edit much later: still named, with the new drop.
  const later = withDroppedKeys(copy({}), { ...first, metadata: { ...first.metadata, labels: { extra: '1' } } });
  assert.deepEqual(readDroppedKeys(later).labels, ['extra', 'team']);
  // The key back on the hub: no longer named.
  assert.deepEqual(readDroppedKeys(withDroppedKeys(copy({ team: 'b' }), later)).labels, ['extra']);
});

test('nothing dropped: the copy itself; no copy sent before (a first placement): nothing named', () => {
  const same = copy({ team: 'a' });
  assert.equal(withDroppedKeys(same, copy({ team: 'a' })), same);
  assert.equal(withDroppedKeys(same, undefined), same);
});

test('every key put back: the copy names none explicitly, so that the merged spoke copy drops the old list; stable after', () => {
  // Seed 13 of the soak: tier dropped, then put back. Under Update the work agent merges annotations: a copy
  // without the annotation left `["tier"]` on the spoke, and the spoke agent removed tier again.
  const dropped = withDroppedKeys(copy({ team: 'red' }), copy({ team: 'red', tier: 'gold' }));
  assert.deepEqual(readDroppedKeys(dropped).labels, ['tier']);
  const back = withDroppedKeys(copy({ team: 'red', tier: 'gold' }), dropped);
  assert.equal(back.metadata.annotations?.[DROPPED_KEYS_ANNOTATION], '{"annotations":[],"labels":[]}');
  assert.equal(droppedKeysPatch({ ...back, metadata: { ...back.metadata, resourceVersion: '7' } }), undefined, 'nothing for the spoke agent to remove');
  // A restart on an unchanged world computes the same copy.
  assert.deepEqual(withDroppedKeys(copy({ team: 'red', tier: 'gold' }), back), back);
});

test('never names a key the sync writes on every copy, whatever an older copy carried', () => {
  const sent = copy({}, {});
  const next: KubeObject = { ...copy({}), metadata: { ...copy({}).metadata, annotations: {} } };
  assert.deepEqual(droppedKeys(sent, next), { labels: [], annotations: [] });
});

test('droppedKeysPatch: removes only named keys still present, on a copy of ours, guarded by its resourceVersion', () => {
  const spoke: KubeObject = {
    ...withDroppedKeys(copy({}), copy({ team: 'a', gone: 'x' }, { 'example.com/note': 'x' })),
  };
  // The spoke object as the work agent left it (Update merged): the dropped keys still there but one.
  spoke.metadata = { ...spoke.metadata, resourceVersion: '17', labels: { team: 'a', local: 'spoke' }, annotations: { ...spoke.metadata.annotations, 'example.com/note': 'x' } };
  assert.deepEqual(droppedKeysPatch(spoke), { metadata: { resourceVersion: '17', labels: { team: null }, annotations: { 'example.com/note': null } } });
  // Removed: nothing more to do.
  const clean: KubeObject = { ...spoke, metadata: { ...spoke.metadata, labels: { local: 'spoke' }, annotations: { ...SYNCED, [DROPPED_KEYS_ANNOTATION]: spoke.metadata.annotations![DROPPED_KEYS_ANNOTATION]! } } };
  assert.equal(droppedKeysPatch(clean), undefined);
  // Not a copy of ours: never touched, whatever it says.
  const local: KubeObject = { ...spoke, metadata: { ...spoke.metadata, annotations: { [DROPPED_KEYS_ANNOTATION]: '{"labels":["team"]}' } } };
  assert.equal(droppedKeysPatch(local), undefined);
  // A malformed annotation names nothing.
  const malformed: KubeObject = { ...spoke, metadata: { ...spoke.metadata, annotations: { ...SYNCED, [DROPPED_KEYS_ANNOTATION]: 'team' } } };
  assert.equal(droppedKeysPatch(malformed), undefined);
});

test('no key named as dropped ends in "-": what is named is the key itself, never OCM\'s removal marker', () => {
  const named = withDroppedKeys(copy({}), copy({ team: 'a' }, { 'example.com/note': 'x' }));
  for (const key of [...Object.keys(named.metadata.labels ?? {}), ...Object.keys(named.metadata.annotations ?? {})]) assert.doesNotMatch(key, /-$/);
});
