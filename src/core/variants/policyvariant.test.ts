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
