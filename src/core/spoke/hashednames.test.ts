import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeHashedNames, encodeHashedNames, NAME_HASH_BITS } from './hashednames.ts';

/** Names as teams write them: a team, a service, a purpose, a number. */
function realisticNames(count: number, seed = 'team'): string[] {
  const purposes = ['auth', 'ratelimit', 'jwt', 'apikey', 'oidc', 'deny-all', 'allow-internal'];
  return Array.from({ length: count }, (_, i) => `${seed}-${i % 97}-svc-${Math.floor(i / 97)}-${purposes[i % purposes.length]}-policy`);
}

function decoded(count: number, data: string) {
  const result = decodeHashedNames(count, data);
  assert.ok(result.ok, JSON.stringify(result));
  return result.names;
}

test('hashed names: every name put in is found (no false "free"), and the empty set holds nothing', () => {
  for (const count of [0, 1, 2, 63, 64, 65, 1000]) {
    const names = realisticNames(count);
    const { count: n, data } = encodeHashedNames(names);
    assert.equal(n, count);
    const set = decoded(n, data);
    for (const name of names) assert.ok(set.has(name), `${name} of ${count}`);
  }
  assert.equal(encodeHashedNames([]).data, '');
  assert.equal(decoded(0, '').has('anything'), false);
});

test('hashed names: duplicates count once; the same names in any order give the same text', () => {
  const names = realisticNames(300);
  const a = encodeHashedNames(names);
  const b = encodeHashedNames([...names].reverse().concat(names.slice(0, 10)));
  assert.deepEqual(a, b);
});

test('hashed names: 50,000 names take about P + 1.6 bits each, and a name not in the set is "held" about once in 2^P', () => {
  const names = realisticNames(50_000);
  const started = performance.now();
  const { data } = encodeHashedNames(names);
  const encodeMs = performance.now() - started;
  const bitsPerName = (Buffer.from(data, 'base64').length * 8) / 50_000;
  assert.ok(bitsPerName > NAME_HASH_BITS + 1.3 && bitsPerName < NAME_HASH_BITS + 1.9, `${bitsPerName} bits a name`);
  const decodeStarted = performance.now();
  const set = decoded(50_000, data);
  const decodeMs = performance.now() - decodeStarted;
  for (const name of names) assert.ok(set.has(name));
  // Questions about names not in the set: false "held" answers, expected 2^-20 of them.
  const questions = 200_000;
  let falseHeld = 0;
  for (let i = 0; i < questions; i++) if (set.has(`absent-${i}-policy`)) falseHeld++;
  const rate = falseHeld / questions;
  assert.ok(falseHeld <= 3, `${falseHeld} false "held" of ${questions} (rate ${rate})`);
  process.stdout.write(`# 50,000 names: ${data.length} base64 bytes (${bitsPerName.toFixed(2)} bits a name), encoded in ${encodeMs.toFixed(0)} ms, decoded in ${decodeMs.toFixed(0)} ms; ${falseHeld} false "held" in ${questions} questions\n`);
});

test('hashed names: a set the data does not hold exactly is refused, never read as fewer names', () => {
  const { count, data } = encodeHashedNames(realisticNames(200));
  assert.ok(decodeHashedNames(count, data).ok);
  assert.match(refusal(count + 1, data), /ends after|cannot hold/);
  assert.match(refusal(count - 1, data), /more data/);
  assert.match(refusal(count, `${data.slice(0, -4)}`), /ends after|cannot hold/);
  assert.match(refusal(count, 'not base64!'), /base64/);
  assert.match(refusal(count, Buffer.concat([Buffer.from(data, 'base64'), Buffer.from([0])]).toString('base64')), /more data/);
  assert.match(refusal(-1, data), /whole number/);
  assert.match(refusal(1.5, data), /whole number/);
  // A huge count over little data is refused before decoding anything.
  assert.match(refusal(1e9, data), /cannot hold/);
  // Non-canonical base64 (padding bits set) is refused: one text, one set.
  assert.match(refusal(0, 'AB=='), /canonical/);
  // A gap running past the range: one name's value must stay under count·2^P.
  assert.match(refusal(1, Buffer.from([0xff, 0xff, 0xff, 0xff]).toString('base64')), /out of range|ends after/);
});

function refusal(count: number, data: string): string {
  const result = decodeHashedNames(count, data);
  assert.ok(!result.ok, `${count} names in ${data.slice(0, 20)}… accepted`);
  return result.message;
}
