import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson, sha256Hex } from './k8s/canonical.ts';
import { REVISION_TAG_LENGTH, formatRevisionAnnotation, parseRevisionAnnotation, revisionTag } from './revisionannotation.ts';

test('parseRevisionAnnotation: `<generation>` or `<generation>/<lowercase hex tag>`, nothing else', () => {
  assert.deepEqual(parseRevisionAnnotation('3'), { revision: 3 });
  assert.deepEqual(parseRevisionAnnotation('3/0123456789'), { revision: 3, tag: '0123456789' });
  assert.deepEqual(parseRevisionAnnotation('0/a'), { revision: 0, tag: 'a' });
  assert.deepEqual(parseRevisionAnnotation(`${'9'.repeat(15)}/${'f'.repeat(64)}`), { revision: 999_999_999_999_999, tag: 'f'.repeat(64) });
  for (const bad of [undefined, '', '3/', '/3', '3/ABC', '3/0x1', '3/01/2', ' 3', '3 ', '3/01 ', '-3', '3.0', '1e3', `${'9'.repeat(16)}`, `3/${'f'.repeat(65)}`]) {
    assert.equal(parseRevisionAnnotation(bad), undefined, String(bad));
  }
});

test('revisionTag: the first 10 hex of the sha256 of the spec\'s canonical JSON; equal for equal specs whatever the key order', () => {
  const spec = { rules: { b: 1, a: [1, 2] } };
  assert.equal(revisionTag(spec), sha256Hex(canonicalJson(spec)).slice(0, 10));
  assert.equal(revisionTag(spec).length, REVISION_TAG_LENGTH);
  assert.equal(revisionTag({ rules: { a: [1, 2], b: 1 } }), revisionTag(spec));
  assert.notEqual(revisionTag({ rules: { a: [2, 1], b: 1 } }), revisionTag(spec));
  assert.equal(revisionTag(undefined), revisionTag({}));
});

test('formatRevisionAnnotation: the text parseRevisionAnnotation reads back', () => {
  assert.equal(formatRevisionAnnotation({ revision: 3 }), '3');
  assert.equal(formatRevisionAnnotation({ revision: 3, tag: 'abcdef0123' }), '3/abcdef0123');
  for (const a of [{ revision: 12 }, { revision: 12, tag: revisionTag({ x: 1 }) }]) assert.deepEqual(parseRevisionAnnotation(formatRevisionAnnotation(a)), a);
});
