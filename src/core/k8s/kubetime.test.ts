import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatKubeTime, kubeTimeMillis } from './kubetime.ts';

test('formatKubeTime renders a Date and the equivalent string identically, at second precision', () => {
  assert.equal(formatKubeTime(new Date('2024-05-01T10:00:00.000Z')), '2024-05-01T10:00:00Z');
  assert.equal(formatKubeTime('2024-05-01T10:00:00Z'), '2024-05-01T10:00:00Z');
  assert.equal(formatKubeTime('2024-05-01T12:00:00+02:00'), '2024-05-01T10:00:00Z');
});

test('formatKubeTime returns undefined for absent or unparsable values', () => {
  assert.equal(formatKubeTime(undefined), undefined);
  assert.equal(formatKubeTime(''), undefined);
  assert.equal(formatKubeTime('yesterday'), undefined);
  assert.equal(formatKubeTime(new Date('nope')), undefined);
  assert.equal(formatKubeTime(1714557600000), undefined);
});

test('kubeTimeMillis reads strings and Dates', () => {
  assert.equal(kubeTimeMillis('1970-01-01T00:00:01Z'), 1000);
  assert.equal(kubeTimeMillis(new Date(2000)), 2000);
  assert.equal(kubeTimeMillis(null), undefined);
});
