import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDns1123Label, isDns1123Subdomain } from './dns.ts';

test('isDns1123Label accepts lowercase alphanumerics with inner dashes', () => {
  assert.equal(isDns1123Label('kuadrant-ns1'), true);
  assert.equal(isDns1123Label('a'.repeat(63)), true);
});

test('isDns1123Label rejects uppercase, dots, edge dashes, empty and over-long values', () => {
  for (const bad of ['Ns', 'a.b', '-a', 'a-', '', 'a'.repeat(64), 'a_b']) {
    assert.equal(isDns1123Label(bad), false, bad);
  }
});

test('isDns1123Subdomain accepts dotted labels up to 253 characters', () => {
  assert.equal(isDns1123Subdomain('gateway.networking.k8s.io'), true);
  assert.equal(isDns1123Subdomain(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`), true);
});

test('isDns1123Subdomain rejects empty labels, bad characters and over-long values', () => {
  for (const bad of ['', 'a..b', '.a', 'a.', 'A.b', 'a_b.c', `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`]) {
    assert.equal(isDns1123Subdomain(bad), false, bad);
  }
});
