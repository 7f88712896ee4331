import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseVariant } from './policyvariant.ts';

function parse(spec: Record<string, unknown>) {
  return parseVariant({ apiVersion: 'policysync.kuadrant.io/v1alpha1', kind: 'PolicyVariant', metadata: { name: 'v', namespace: 'team-a', generation: 4 }, spec });
}
const TARGET = { group: 'kuadrant.io', kind: 'RateLimitPolicy', name: 'rl' };

test('a variant: its target, its entries in order with their selections, patches and values', () => {
  const parsed = parse({
    targetRef: TARGET,
    entries: [
      { clusters: { names: ['spoke-2'] }, patch: { spec: { limits: { global: { rates: [{ limit: 50, window: '1m' }] } } } } },
      { values: [{ path: 'spec.limits["per.user"].rates[0].limit', valueFrom: { clusterClaim: { name: 'limit.example.com' } }, default: '5' }, { path: 'spec.x', valueFrom: { clusterName: {} } }] },
    ],
  });
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.variant, {
    namespace: 'team-a',
    name: 'v',
    generation: 4,
    target: TARGET,
    entries: [
      { index: 0, clusters: { names: ['spoke-2'] }, patch: { spec: { limits: { global: { rates: [{ limit: 50, window: '1m' }] } } } }, patchFields: [['spec', 'limits', 'global', 'rates']], values: [] },
      {
        index: 1,
        clusters: {},
        patchFields: [],
        values: [
          { path: ['spec', 'limits', 'per.user', 'rates', 0, 'limit'], source: { from: 'clusterClaim', name: 'limit.example.com' }, default: '5' },
          { path: ['spec', 'x'], source: { from: 'clusterName' } },
        ],
      },
    ],
  });
});

test('what is wrong is named by its field', () => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ entries: [{ patch: { spec: {} } }] }, 'spec.targetRef', /expected object/],
    [{ targetRef: TARGET, entries: [] }, 'spec.entries', /too small|>=1/],
    [{ targetRef: TARGET, entries: [{ patch: { metadata: { labels: {} } } }] }, 'spec.entries[0].patch', /spec only/],
    [{ targetRef: TARGET, entries: [{ patch: { spec: { targetRef: { name: 'other' } } } }] }, 'spec.entries[0].patch', /spec\.targetRef\.name: the policy's targets are the hub's/],
    [{ targetRef: TARGET, entries: [{ values: [{ path: 'spec.targetRefs[0].name', valueFrom: { clusterName: {} } }] }] }, 'spec.entries[0].values[0].path', /targets are the hub's/],
    [{ targetRef: TARGET, entries: [{ values: [{ path: 'status.x', valueFrom: { clusterName: {} } }] }] }, 'spec.entries[0].values[0].path', /starts with spec\./],
    [{ targetRef: TARGET, entries: [{ values: [{ path: 'spec.x', valueFrom: { clusterName: {}, clusterLabel: { key: 'a' } } }] }] }, 'spec.entries[0].values[0].valueFrom', /exactly one/],
    [{ targetRef: TARGET, entries: [{ clusters: { names: ['a'] } }] }, 'spec.entries[0]', /changes nothing/],
    [{ targetRef: TARGET, entries: [{ patch: { spec: {} }, extra: 1 }] }, 'spec.entries[0]', /extra/],
  ];
  for (const [spec, field, message] of cases) {
    const parsed = parse(spec);
    assert.equal(parsed.ok, false, JSON.stringify(spec));
    if (!parsed.ok) {
      assert.equal(parsed.field, field, JSON.stringify(spec));
      assert.match(parsed.message, message);
    }
  }
});

test('a variant read from the apiserver is parsed once per object and resourceVersion; one without a resourceVersion every time', () => {
  const spec: Record<string, unknown> = { targetRef: TARGET, entries: [{ patch: { spec: { a: 1 } } }] };
  const read = { apiVersion: 'policysync.kuadrant.io/v1alpha1', kind: 'PolicyVariant', metadata: { name: 'v', namespace: 'team-a', generation: 1, resourceVersion: '7' }, spec };
  const first = parseVariant(read);
  assert.ok(first.ok);
  assert.equal(parseVariant(read), first, 'the same object at the same resourceVersion: the same parse');
  // An object changed in place with a new resourceVersion (a cache never does this, but a caller might) is read again.
  const changed = Object.assign(read, { metadata: { ...read.metadata, generation: 2, resourceVersion: '8' }, spec: { targetRef: TARGET, entries: [{ patch: { spec: { targetRef: {} } } }] } });
  const second = parseVariant(changed);
  assert.ok(!second.ok, 'the new spec is parsed: its patch of the targets is refused');
  const unread: { apiVersion: string; kind: string; metadata: { name: string; namespace: string }; spec: Record<string, unknown> } = { apiVersion: 'policysync.kuadrant.io/v1alpha1', kind: 'PolicyVariant', metadata: { name: 'v', namespace: 'team-a' }, spec };
  const a = parseVariant(unread);
  unread.spec = { targetRef: TARGET, entries: [{ values: [{ path: 'spec.targetRef.name', valueFrom: { clusterName: {} } }] }] };
  assert.notDeepEqual(parseVariant(unread), a, 'no resourceVersion: nothing is kept');
});
