// PENDING for strategy.ts (owned by another helper): found by src/core/params/params.property.test.ts. A
// minSuccessTime longer than the default progressDeadline (10m), with progressDeadline left out, is accepted:
// every cluster then fails at 10m, before its success may count — what refusing a progressDeadline below
// minSuccessTime (rolloutStrategyErrors) is there to prevent. Fix: compare minSuccessTime with the deadline in
// force (the default one when none is given) and refuse it naming progressDeadline, or take the default
// deadline as at least minSuccessTime. Rename this file to strategy.regression.test.ts once fixed, and drop the
// exemption marked PENDING in params.property.test.ts (assertWellFormed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ROLLOUT_STRATEGY_ANNOTATION } from '../metadatakeys.ts';
import { parseParams } from '../params/params.ts';
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
