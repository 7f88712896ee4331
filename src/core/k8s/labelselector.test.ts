import assert from 'node:assert/strict';
import { test } from 'node:test';
import { selectorMatches } from './labelselector.ts';

test('label selectors: matchLabels and the four operators; an unknown operator matches nothing', () => {
  const labels = { env: 'prod', region: 'eu' };
  assert.ok(selectorMatches({}, labels), 'empty selects everything');
  assert.ok(selectorMatches({ matchLabels: { env: 'prod' } }, labels));
  assert.ok(!selectorMatches({ matchLabels: { env: 'dev' } }, labels));
  assert.ok(selectorMatches({ matchExpressions: [{ key: 'region', operator: 'In', values: ['eu', 'us'] }] }, labels));
  assert.ok(!selectorMatches({ matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['eu'] }] }, labels));
  assert.ok(selectorMatches({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }, { key: 'env', operator: 'Exists' }] }, labels));
  assert.ok(!selectorMatches({ matchExpressions: [{ key: 'env', operator: 'Gt', values: ['1'] }] }, labels));
  assert.ok(!selectorMatches(undefined, labels));
});
