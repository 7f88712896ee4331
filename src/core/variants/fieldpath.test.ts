import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { formatFieldPath, parseFieldPath, pathsOverlap, setAtPath } from './fieldpath.ts';

test('a path: members by name, quoted names, list indices; printed back as written', () => {
  for (const [text, segments] of [
    ['spec.loadBalancing.geo', ['spec', 'loadBalancing', 'geo']],
    ['spec.limits["per.user"].rates[0].limit', ['spec', 'limits', 'per.user', 'rates', 0, 'limit']],
    ['spec.a[2][1]', ['spec', 'a', 2, 1]],
  ] as const) {
    const parsed = parseFieldPath(text);
    assert.deepEqual(parsed, { ok: true, segments });
    assert.equal(formatFieldPath(segments), text);
  }
});

test('a path outside spec, or malformed, is refused with where', () => {
  for (const [text, message] of [
    ['metadata.labels', /starts with spec\./],
    ['spec', /starts with spec\./],
    ['spec..a', /field name is expected at "\.a"/],
    ['spec.a[x]', /index \(\[0\]\) or a quoted name/],
    ['spec.a b', /unexpected " "/],
  ] as const) {
    const parsed = parseFieldPath(text);
    assert.equal(parsed.ok, false, text);
    if (!parsed.ok) assert.match(parsed.message, message);
  }
});

test('property: every path formatted parses back to its segments', () => {
  const segment = fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.nat({ max: 999 }));
  fc.assert(
    fc.property(fc.array(segment, { minLength: 1, maxLength: 6 }), (rest) => {
      const segments = ['spec', ...rest];
      assert.deepEqual(parseFieldPath(formatFieldPath(segments)), { ok: true, segments });
    }),
  );
});

test('overlap: a path and any path inside it set the same field; siblings do not', () => {
  assert.equal(pathsOverlap(['spec', 'a'], ['spec', 'a', 'b']), true);
  assert.equal(pathsOverlap(['spec', 'a', 'b'], ['spec', 'a']), true);
  assert.equal(pathsOverlap(['spec', 'a', 0], ['spec', 'a', 0]), true);
  assert.equal(pathsOverlap(['spec', 'a', 0], ['spec', 'a', 1]), false);
  assert.equal(pathsOverlap(['spec', 'a'], ['spec', 'b']), false);
});

test('set: objects made along the way, lists indexed within bounds, the root never changed', () => {
  const root = { spec: { rates: [{ limit: 1 }] } };
  const set = setAtPath(root, ['spec', 'loadBalancing', 'geo'], 'EU');
  assert.deepEqual(set, { ok: true, value: { spec: { rates: [{ limit: 1 }], loadBalancing: { geo: 'EU' } } } });
  const indexed = setAtPath(root, ['spec', 'rates', 0, 'limit'], 50);
  assert.deepEqual(indexed, { ok: true, value: { spec: { rates: [{ limit: 50 }] } } });
  assert.deepEqual(root, { spec: { rates: [{ limit: 1 }] } });
  assert.deepEqual(setAtPath(root, ['spec', 'rates', 3, 'limit'], 1), { ok: false, message: 'spec.rates has 1 items, no [3]' });
  assert.deepEqual(setAtPath(root, ['spec', 'rates', 'x'], 1), { ok: false, message: 'spec.rates is not an object' });
});
