import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { VariantOutcome } from '../core/pipeline/policypipeline.ts';
import { VariantOutcomes } from './variantoutcomes.ts';

function outcome(name: string, applied: string[] = ['c1'], generation = 1): VariantOutcome {
  return { namespace: 'ns', name, generation, applied, failing: [], unmatched: [] };
}

test('a recorded outcome is told once: again unchanged, nothing; changed, the variant', () => {
  const outcomes = new VariantOutcomes();
  assert.deepEqual(outcomes.record('p', [outcome('a'), outcome('b')]), ['ns/a', 'ns/b']);
  assert.deepEqual(outcomes.record('p', [outcome('a'), outcome('b')]), []);
  assert.deepEqual(outcomes.record('p', [outcome('a', ['c1', 'c2']), outcome('b')]), ['ns/a']);
  assert.deepEqual(outcomes.get('ns/a')?.applied, ['c1', 'c2']);
});

test('a variant no longer of the policy, or the policy forgotten, drops its outcome and names it', () => {
  const outcomes = new VariantOutcomes();
  outcomes.record('p', [outcome('a'), outcome('b')]);
  assert.deepEqual(outcomes.record('p', [outcome('a')]), ['ns/b']);
  assert.equal(outcomes.get('ns/b'), undefined);
  assert.deepEqual(outcomes.forget('p'), ['ns/a']);
  assert.equal(outcomes.get('ns/a'), undefined);
  assert.deepEqual(outcomes.forget('p'), []);
});

test('a variant retargeted to another policy: the new policy\'s record owns it; the old policy dropping it does not erase it', () => {
  const outcomes = new VariantOutcomes();
  outcomes.record('p', [outcome('a')]);
  assert.deepEqual(outcomes.record('q', [outcome('a', ['c9'])]), ['ns/a']);
  assert.deepEqual(outcomes.record('p', []), []);
  assert.deepEqual(outcomes.get('ns/a')?.applied, ['c9']);
});
