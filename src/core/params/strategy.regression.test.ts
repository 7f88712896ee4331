// Found by src/core/params/params.property.test.ts: a minSuccessTime longer than the default progressDeadline
// (10m), with progressDeadline left out, was accepted, and every cluster would then fail at 10m before its
// success could count. The deadline in force is now at least minSuccessTime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ROLLOUT_STRATEGY_ANNOTATION } from '../metadatakeys.ts';
import { parseParams } from './params.ts';
import { ALL, policyRolloutStrategy } from './strategy.ts';

test('regression: a minSuccessTime above the default progressDeadline is refused, or the deadline in force is no shorter than it', () => {
  const doc = { type: 'Progressive', progressive: { minSuccessTime: '1h' } };
  const params = parseParams({ policiesToSync: [], rolloutStrategy: doc });
  if (params.ok) {
    const s = params.params.rolloutStrategy;
    assert.ok(s.type === 'Progressive' && (s.progressDeadlineMs === undefined || s.progressDeadlineMs >= s.minSuccessTimeMs), JSON.stringify(s));
  } else {
    assert.match(params.errors.join('\n'), /^rolloutStrategy\.progressive\.(progressDeadline|minSuccessTime): /m);
  }
  const annotated = policyRolloutStrategy({ [ROLLOUT_STRATEGY_ANNOTATION]: JSON.stringify(doc) }, ALL);
  const s = annotated.strategy;
  if (annotated.error === undefined) assert.ok(s.type === 'Progressive' && (s.progressDeadlineMs === undefined || s.progressDeadlineMs >= s.minSuccessTimeMs), JSON.stringify(s));
});
