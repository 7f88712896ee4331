import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyMergePatch, mergePatchFields } from './mergepatch.ts';

// RFC 7386 Appendix A, every example.
const RFC_EXAMPLES: [unknown, unknown, unknown][] = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [['a', 'b'], ['c', 'd'], ['c', 'd']],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

test('RFC 7386 appendix A: every example', () => {
  for (const [target, patch, result] of RFC_EXAMPLES) {
    const before = JSON.stringify(target);
    assert.deepEqual(applyMergePatch(target, patch), result, `${before} + ${JSON.stringify(patch)}`);
    assert.equal(JSON.stringify(target), before, 'the target is not changed');
  }
});

test('the fields a patch sets: leaves of merged objects; lists, scalars and null are fields whole', () => {
  const patch = { spec: { limits: { global: { rates: [{ limit: 50, window: '1m' }] } }, when: null, loadBalancing: { geo: 'EU', weight: 120 } } };
  assert.deepEqual(mergePatchFields(patch), [
    ['spec', 'limits', 'global', 'rates'],
    ['spec', 'when'],
    ['spec', 'loadBalancing', 'geo'],
    ['spec', 'loadBalancing', 'weight'],
  ]);
  assert.deepEqual(mergePatchFields({ spec: { a: {} } }), [['spec', 'a']]);
});
