import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, sha256Hex, specHash } from './canonical.ts';

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
