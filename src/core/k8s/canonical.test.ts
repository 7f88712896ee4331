import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson, sha256Hex, sharedCanonical, specHash } from './canonical.ts';

test('canonicalJson sorts object keys recursively and keeps array order', () => {
  assert.equal(
    canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } }),
    '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}',
  );
});

test('canonicalJson sorts integer-like keys as strings, unlike JS property order', () => {
  assert.equal(canonicalJson({ b: 1, 10: 'ten', 2: 'two' }), '{"10":"ten","2":"two","b":1}');
});

test('canonicalJson writes Dates as ISO strings', () => {
  assert.equal(canonicalJson({ t: new Date('2024-05-01T10:00:00Z') }), '{"t":"2024-05-01T10:00:00.000Z"}');
});

test('canonicalJson drops undefined members and nulls undefined array items, like JSON.stringify', () => {
  assert.equal(canonicalJson({ a: undefined, b: [undefined, null], c: null }), '{"b":[null,null],"c":null}');
  assert.equal(canonicalJson(undefined), 'null');
});

test('canonicalJson escapes strings and keys as JSON does', () => {
  assert.equal(canonicalJson({ 'k"ey': 'line\nbreak "q"' }), '{"k\\"ey":"line\\nbreak \\"q\\""}');
});

test('sha256Hex is the hex SHA-256 of the UTF-8 text', () => {
  assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('specHash is equal for objects that differ only in key order, different otherwise', () => {
  assert.equal(specHash({ a: 1, b: [1, 2] }), specHash({ b: [1, 2], a: 1 }));
  assert.equal(specHash({ a: 1 }), sha256Hex('{"a":1}'));
  assert.notEqual(specHash({ b: [1, 2] }), specHash({ b: [2, 1] }));
});

test('canonicalJson with an indent lays the sorted JSON out as JSON.stringify does with that space', () => {
  const value = { b: [1, { d: [], c: {} }, 'x'], a: { z: null, y: [[]] }, e: undefined, f: [undefined] };
  const sorted = { a: { y: [[]], z: null }, b: [1, { c: {}, d: [] }, 'x'], f: [null] };
  assert.equal(canonicalJson(value, 2), JSON.stringify(sorted, null, 2));
  assert.equal(canonicalJson(value, 4), JSON.stringify(sorted, null, 4));
  assert.equal(canonicalJson({}, 2), '{}');
  assert.equal(canonicalJson([], 2), '[]');
  assert.equal(canonicalJson('s', 2), '"s"');
  assert.equal(canonicalJson(value, 0), canonicalJson(value));
});

test('canonicalJson with an indent keeps integer-like keys in string order, as the compact form does', () => {
  assert.equal(canonicalJson({ b: 1, 10: 'ten', 2: 'two' }, 2), '{\n  "10": "ten",\n  "2": "two",\n  "b": 1\n}');
});

/** Whether some object key is an array index, which JS property order puts first whatever the insertion order. */
function hasIndexKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasIndexKey);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => /^(0|[1-9][0-9]*)$/.test(k) || hasIndexKey(v));
}

test('canonicalJson with an indent is the compact form laid out as JSON.stringify lays it out', () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 8 }), (value, indent) => {
      const laidOut = canonicalJson(value, indent);
      assert.equal(canonicalJson(JSON.parse(laidOut)), canonicalJson(value));
      // JSON.parse keeps the sorted order, but for index-like keys (then only the length, not the order, agrees).
      const stringified = JSON.stringify(JSON.parse(canonicalJson(value)), null, indent);
      if (hasIndexKey(value)) assert.equal(laidOut.length, stringified.length);
      else assert.equal(laidOut, stringified);
    }),
  );
});

test('a shared value: deep-frozen, and what holds it serialises to the very text its copy gives, compact and indented', () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.jsonValue(), (held, other) => {
      if (held === null || typeof held !== 'object') return;
      const copy = JSON.parse(JSON.stringify(held)) as unknown;
      const shared = sharedCanonical(JSON.parse(JSON.stringify(held)) as object);
      assert.ok(Object.isFrozen(shared));
      for (const indent of [0, 2]) assert.equal(canonicalJson({ other, held: shared, list: [shared] }, indent), canonicalJson({ other, held: copy, list: [copy] }, indent));
    }),
  );
});

test('a shared value is deep-frozen: a change of it throws rather than go unseen by the text kept for it', () => {
  const rules = sharedCanonical({ jsonPaths: [{ name: 'a', path: '.x' }] });
  assert.throws(() => (rules.jsonPaths as { name: string }[]).push({ name: 'b' }), TypeError);
  assert.throws(() => {
    (rules.jsonPaths[0] as { name: string }).name = 'b';
  }, TypeError);
  assert.equal(canonicalJson({ rules }), '{"rules":{"jsonPaths":[{"name":"a","path":".x"}]}}');
});
