import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Interner } from './intern.ts';

/** A fresh copy, as each watch event or list page parses its own. */
const parsed = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const condition = { type: 'Applied', status: 'True', reason: 'AppliedManifestWorkComplete', message: 'Apply manifest work complete', observedGeneration: 2 };
const labels = { 'app.kubernetes.io/managed-by': 'policy-sync', 'policysync.kuadrant.io/source': 'd91ad6640fe7e86a' };

function assertDeepFrozen(value: unknown, path = '$'): void {
  if (value === null || typeof value !== 'object') return;
  assert.ok(Object.isFrozen(value), `${path} is frozen`);
  for (const [key, item] of Object.entries(value)) assertDeepFrozen(item, `${path}.${key}`);
}

test('equal values come back as one, deep-frozen, equal to what was given', () => {
  const interner = new Interner();
  const [a, b, c] = [parsed(condition), parsed(condition), parsed(condition)].map((v) => interner.value(v));
  // Its strings were new the first time: kept from the second on, shared from the third.
  assert.notEqual(a, b);
  assert.equal(c, b);
  for (const v of [a, b, c]) {
    assert.deepEqual(v, condition);
    assertDeepFrozen(v);
  }
});

test('a value holding only strings seen before is shared from the second time on', () => {
  const interner = new Interner();
  interner.value(parsed([condition, labels]));
  const first = interner.value(parsed({ conditions: [condition], labels }));
  const second = interner.value(parsed({ conditions: [condition], labels }));
  assert.equal(second, first);
  assert.deepEqual(second, { conditions: [condition], labels });
});

test('the parts of a value are shared with the equal parts of other values', () => {
  const interner = new Interner();
  for (let i = 0; i < 2; i++) interner.value(parsed({ labels, conditions: [condition] }));
  const one = interner.value(parsed({ labels, conditions: [condition], name: 'one' }));
  const other = interner.value(parsed({ labels, conditions: [{ ...condition, status: 'False' }, condition], name: 'other' }));
  assert.notEqual(one, other);
  assert.equal(one.labels, other.labels);
  assert.equal(one.conditions[0], other.conditions[1]);
  assert.deepEqual(other.conditions, [{ ...condition, status: 'False' }, condition]);
});

test('only equal values are one: key order, types and -0 count', () => {
  const interner = new Interner();
  const long = 'a long enough string';
  const variants: object[] = [
    { a: long, b: `${long}!` },
    { b: `${long}!`, a: long },
    { a: long },
    { a: long, b: null },
    { a: long, b: undefined },
    { a: long, b: '1' },
    { a: long, b: 1 },
    { a: long, b: true },
    { a: long, b: 0 },
    { a: long, b: -0 },
    { a: long, b: [] },
    { a: long, b: {} },
    [long, `${long}!`],
    [`${long}!`, long],
  ];
  // Each seen three times, copies of its own: the second is kept, the third is it.
  const shared = variants.map((v) => {
    const [, second, third] = [structuredClone(v), structuredClone(v), structuredClone(v)].map((copy) => interner.value(copy));
    assert.equal(third, second, JSON.stringify(v));
    return third!;
  });
  variants.forEach((v, i) => {
    assert.deepEqual(shared[i], v);
    assert.deepEqual(Object.keys(shared[i]), Object.keys(v));
    for (let j = 0; j < i; j++) assert.notEqual(shared[i], shared[j], `${JSON.stringify(variants[j])} and ${JSON.stringify(v)}`);
  });
  assert.ok(Object.is((shared[9] as { b: number }).b, -0));
});

test('what is not JSON data is left as it is, and a value holding it is its own', () => {
  const interner = new Interner();
  const date = new Date(0);
  const withDate = (): { at: Date; type: string } => ({ at: date, type: 'Applied condition' });
  const values = [withDate(), withDate(), withDate()].map((v) => interner.value(v));
  assert.equal(values[0]!.at, date);
  assert.ok(!Object.isFrozen(date));
  assert.notEqual(values[2], values[1]);
  assert.deepEqual(values[2], withDate());
});

test('a key named __proto__ stays an own key, and the prototype untouched', () => {
  const interner = new Interner();
  const text = '{"__proto__":{"polluted":"yes, very much"},"name":"some long name"}';
  const values = [JSON.parse(text), JSON.parse(text), JSON.parse(text)].map((v) => interner.value(v) as Record<string, unknown>);
  for (const v of values) {
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.deepEqual(Object.keys(v), ['__proto__', 'name']);
    assert.equal(({} as { polluted?: string }).polluted, undefined);
  }
});

test('a frozen value whose parts are not the shared ones is taken as it is', () => {
  const interner = new Interner();
  for (let i = 0; i < 2; i++) interner.value(parsed(labels));
  const frozen = Object.freeze(parsed({ labels, name: 'a frozen value' }));
  Object.freeze(frozen.labels);
  assert.deepEqual(interner.value(frozen), { labels, name: 'a frozen value' });
});

test('long strings are not kept, and values holding them are their own', () => {
  const interner = new Interner();
  const report = { name: 'report', value: 'x'.repeat(1000) };
  const values = [parsed(report), parsed(report), parsed(report)].map((v) => interner.value(v));
  assert.notEqual(values[2], values[1]);
  assert.deepEqual(values[2], report);
  assertDeepFrozen(values[2]);
});

test('bounded tables: past their capacity values are still equal and frozen, and shared again once seen again', () => {
  const interner = new Interner(4, 1 << 20);
  const item = (i: number) => ({ name: `item number ${i}`, kind: 'a long kind name' });
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 20; i++) {
      const v = interner.value(parsed(item(i)));
      assert.deepEqual(v, item(i));
      assertDeepFrozen(v);
    }
  }
  const [a, b, c] = [parsed(item(99)), parsed(item(99)), parsed(item(99))].map((v) => interner.value(v));
  assert.notEqual(a, b);
  assert.equal(c, b);
});

test('a table is also renewed after as many lookups as it allows: what is not looked up again is dropped', () => {
  const interner = new Interner(1 << 10, 8);
  const kept = [parsed(labels), parsed(labels)].map((v) => interner.value(v))[1];
  assert.equal(interner.value(parsed(labels)), kept);
  // Many lookups of other values: the labels' generation is dropped.
  for (let i = 0; i < 40; i++) interner.value({ other: `another string number ${i}` });
  assert.notEqual(interner.value(parsed(labels)), kept);
});

test('a string inside a value is held once: the parser\'s equal copies are replaced by the shared one', async () => {
  // `===` compares strings by text, so only the heap can tell one string from equal copies: count them there.
  const { getHeapSnapshot } = await import('node:v8');
  const marker = `interned-${process.pid}-${Date.now()}-${'x'.repeat(60)}`;
  const interner = new Interner();
  // Each value holds a string of its own seen for the first time (a work's spec-hash), so it is not shared whole.
  const kept = Array.from({ length: 40 }, (_, i) => interner.value(parsed({ annotations: { ref: marker, hash: `own-hash-of-value-${i}` }, list: [marker] })));
  let text = '';
  for await (const chunk of getHeapSnapshot()) text += String(chunk);
  const { snapshot, nodes, strings } = JSON.parse(text) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] };
  const { node_fields: fields, node_types: [types] } = snapshot.meta;
  const [typeAt, nameAt, markerAt] = [fields.indexOf('type'), fields.indexOf('name'), strings.indexOf(marker)];
  let copies = 0;
  for (let i = 0; i < nodes.length; i += fields.length) if (types[nodes[i + typeAt]!] === 'string' && nodes[i + nameAt] === markerAt) copies++;
  assert.ok(copies <= 3, `${copies} strings on the heap hold the marker; the ${kept.length} values should share one (beside the test's own and the parser's first)`);
  assert.equal(kept[39]!.annotations.ref, marker);
});
