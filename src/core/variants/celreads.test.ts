import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from '@bufbuild/cel';
import { changeReach, escapeProperty, selfReads } from './celreads.ts';

const reads = (text: string) => selfReads(parse(text).expr);
const read = (fields: string[], presence = false) => ({ fields, presence });

test('selfReads: field chains from self, presence under has(), the value elsewhere', () => {
  assert.deepEqual(reads('has(self.a.b)'), { opaque: false, reads: [read(['a', 'b'], true)] });
  assert.deepEqual(reads('self.a.b == 1'), { opaque: false, reads: [read(['a', 'b'])] });
  assert.deepEqual(reads("size(self.x) > 0 && has(self.y) && self.__namespace__ == 'n'"), { opaque: false, reads: [read(['x']), read(['y'], true), read(['__namespace__'])] });
  assert.deepEqual(reads('has(self.a) ? self.a.b : 0'), { opaque: false, reads: [read(['a'], true), read(['a', 'b'])] });
  // An index or a comprehension reads the whole value it is applied to; `self` alone reads all of it.
  assert.deepEqual(reads("self.m['k'] == 1"), { opaque: false, reads: [read(['m'])] });
  assert.deepEqual(reads('self.list.all(i, i.x > 0)'), { opaque: false, reads: [read(['list'])] });
  assert.deepEqual(reads("self.all(k, k != 'z')"), { opaque: false, reads: [read([])] });
  assert.deepEqual(reads('true'), { opaque: false, reads: [] });
  // A read through something else than self is not a read of self.
  assert.deepEqual(reads("[{'a': 1}].exists(e, has(e.a))"), { opaque: false, reads: [] });
});

test('selfReads: a comprehension binding the name self makes the rule opaque; a rule and its message are read together', () => {
  assert.deepEqual(reads('[1, 2].all(self, self > 0)'), { opaque: true });
  assert.deepEqual(selfReads(parse('has(self.a)').expr, parse("'b is ' + self.b").expr), { opaque: false, reads: [read(['a'], true), read(['b'])] });
});

test('changeReach: constant where no read meets a changed path; presence where only has() meets one; varies where a value or all of self is read', () => {
  const changed = [['rules', 'response', 'message']];
  assert.deepEqual(changeReach(reads('has(self.defaults) && self.targetRef.kind == "Gateway"'), changed), { kind: 'constant' });
  assert.deepEqual(changeReach(reads('has(self.rules) && has(self.rules.response) && has(self.defaults)'), changed), { kind: 'presence', reads: [read(['rules'], true), read(['rules', 'response'], true)] });
  assert.deepEqual(changeReach(reads('size(self.rules) > 0'), changed), { kind: 'varies' });
  assert.deepEqual(changeReach(reads('self.rules.response.message.size() > 0'), changed), { kind: 'varies' });
  assert.deepEqual(changeReach(reads("self.all(k, k != 'z')"), changed), { kind: 'varies' });
  assert.deepEqual(changeReach(reads('[1].all(self, true)'), changed), { kind: 'varies' });
  // A read below a value changed whole meets it; a list index in the changed path meets any field.
  assert.deepEqual(changeReach(reads('has(self.rules.response.message.value)'), changed), { kind: 'presence', reads: [read(['rules', 'response', 'message', 'value'], true)] });
  assert.deepEqual(changeReach(reads('has(self.items.x)'), [['items', 0, 'x']]), { kind: 'presence', reads: [read(['items', 'x'], true)] });
  // Declared properties are read by their escaped names.
  assert.deepEqual(changeReach(reads('self.tls__dash__mode == "strict"'), [['tls-mode']]), { kind: 'varies' });
  assert.deepEqual(changeReach(reads('self.__namespace__ == "n"'), [['namespace']]), { kind: 'varies' });
  assert.deepEqual(changeReach(reads('self.tls__dash__mode == "strict"'), [['tls']]), { kind: 'constant' });
});

test('escapeProperty follows the apiserver: reserved words wrapped, -./__ spelt out, other characters unreachable', () => {
  assert.equal(escapeProperty('namespace'), '__namespace__');
  assert.equal(escapeProperty('a.b-c/d__e'), 'a__dot__b__dash__c__slash__d__underscores__e');
  assert.equal(escapeProperty('plain'), 'plain');
  assert.equal(escapeProperty('a b'), undefined);
  assert.equal(escapeProperty('1a'), undefined);
});
