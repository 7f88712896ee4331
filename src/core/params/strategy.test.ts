import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ROLLOUT_STRATEGY_ANNOTATION } from '../metadatakeys.ts';
import { parseParams } from './params.ts';
import {
  ALL,
  PROGRESSIVE_DEFAULTS,
  classesRolloutStrategy,
  describeStrategy,
  policyRolloutStrategy,
  resolveCount,
  rolloutStrategyErrors,
  rolloutStrategySchema,
  toRolloutStrategy,
  type RolloutStrategy,
} from './strategy.ts';

const kinds = [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }];

/** The strategy the class params give for this `rolloutStrategy`, or their errors. */
function fromParams(rolloutStrategy: unknown): RolloutStrategy | string[] {
  const result = parseParams({ policiesToSync: kinds, ...(rolloutStrategy === undefined ? {} : { rolloutStrategy }) });
  return result.ok ? result.params.rolloutStrategy : result.errors;
}

const defaults: Extract<RolloutStrategy, { type: 'Progressive' }> = {
  type: 'Progressive',
  maxConcurrency: { percent: 25 },
  minSuccessTimeMs: 0,
  progressDeadlineMs: 600_000,
  maxFailures: { count: 0 },
  successWhen: 'Enforced',
  onFailure: 'Hold',
};

const annotated = (value: string) => ({ [ROLLOUT_STRATEGY_ANNOTATION]: value });

test('params: no rolloutStrategy is All; type All is All', () => {
  assert.deepEqual(fromParams(undefined), ALL);
  assert.deepEqual(fromParams({ type: 'All' }), ALL);
  assert.deepEqual(ALL, { type: 'All' });
  assert.ok(Object.isFrozen(ALL) && Object.isFrozen(PROGRESSIVE_DEFAULTS));
});

test('params: type Progressive alone takes every default (25%, 0s, 10m, 0 failures, Enforced, Hold, no canary)', () => {
  assert.deepEqual(fromParams({ type: 'Progressive' }), defaults);
  assert.deepEqual(fromParams({ type: 'Progressive', progressive: {} }), defaults);
  assert.equal('canary' in (fromParams({ type: 'Progressive' }) as object), false);
  assert.deepEqual({ type: 'Progressive', ...PROGRESSIVE_DEFAULTS }, defaults);
});

test('params: every progressive field read, durations in ms, counts and percentages told apart', () => {
  const canary = { matchLabels: { env: 'canary' }, matchExpressions: [{ key: 'tier', operator: 'In' as const, values: ['edge'] }] };
  assert.deepEqual(
    fromParams({
      type: 'Progressive',
      progressive: {
        canary,
        maxConcurrency: '2',
        minSuccessTime: '1m30s',
        progressDeadline: '1h',
        maxFailures: '10%',
        successWhen: 'Accepted',
        onFailure: 'Rollback',
      },
    }),
    {
      type: 'Progressive',
      canary,
      maxConcurrency: { count: 2 },
      minSuccessTimeMs: 90_000,
      progressDeadlineMs: 3_600_000,
      maxFailures: { percent: 10 },
      successWhen: 'Accepted',
      onFailure: 'Rollback',
    },
  );
});

test('params: durations in every unit, 0 (minSuccessTime), fractions; progressDeadline None is no deadline at all', () => {
  const read = (progressive: Record<string, string>) => fromParams({ type: 'Progressive', progressive }) as Extract<RolloutStrategy, { type: 'Progressive' }>;
  assert.equal(read({ minSuccessTime: '0' }).minSuccessTimeMs, 0);
  assert.equal(read({ minSuccessTime: '250ms' }).minSuccessTimeMs, 250);
  assert.equal(read({ minSuccessTime: '45s' }).minSuccessTimeMs, 45_000);
  assert.equal(read({ minSuccessTime: '1.5h' }).minSuccessTimeMs, 5_400_000);
  assert.equal(read({ minSuccessTime: '1h2m3s4ms' }).minSuccessTimeMs, 3_723_004);
  assert.equal(read({ progressDeadline: '30s' }).progressDeadlineMs, 30_000);
  assert.equal(read({ progressDeadline: '250ms' }).progressDeadlineMs, 250);
  const none = read({ progressDeadline: 'None' });
  assert.equal(none.progressDeadlineMs, undefined);
  assert.equal('progressDeadlineMs' in none, false, 'no key rather than an undefined one');
});

test('params: percentages from 0% to 100% and counts of up to six digits', () => {
  const read = (value: string) => (fromParams({ type: 'Progressive', progressive: { maxConcurrency: value, maxFailures: value } }) as Extract<RolloutStrategy, { type: 'Progressive' }>);
  for (const [text, count] of [
    ['0%', { percent: 0 }],
    ['5%', { percent: 5 }],
    ['50%', { percent: 50 }],
    ['100%', { percent: 100 }],
    ['0', { count: 0 }],
    ['1', { count: 1 }],
    ['999999', { count: 999_999 }],
  ] as const) {
    assert.deepEqual(read(text).maxConcurrency, count, text);
    assert.deepEqual(read(text).maxFailures, count, text);
  }
});

test('params: an invalid rolloutStrategy refuses the params, naming each field', () => {
  const field = (progressive: Record<string, unknown>) => fromParams({ type: 'Progressive', progressive });
  const countMessage = 'must be a count (e.g. "2") or a percentage from 0% to 100% (e.g. "25%")';
  for (const bad of ['101%', '-1', '1.5', '25 %', '', '%', '1000000', 'all']) {
    assert.deepEqual(field({ maxConcurrency: bad }), [`rolloutStrategy.progressive.maxConcurrency: ${countMessage}`], bad);
    assert.deepEqual(field({ maxFailures: bad }), [`rolloutStrategy.progressive.maxFailures: ${countMessage}`], bad);
  }
  assert.deepEqual(field({ maxConcurrency: 2 }), ['rolloutStrategy.progressive.maxConcurrency: Invalid input: expected string, received number']);
  for (const bad of ['5', '5x', '1d', 'None', '-1s', '1m 30s', '1h1h1h1h1h']) {
    assert.deepEqual(field({ minSuccessTime: bad }), ['rolloutStrategy.progressive.minSuccessTime: must be a duration such as 30s, 5m or 1h30m'], bad);
  }
  for (const bad of ['never', 'none', '10', '', '0']) {
    assert.deepEqual(field({ progressDeadline: bad }), ['rolloutStrategy.progressive.progressDeadline: must be a duration above 0 such as 10m, or None'], bad);
  }
  assert.deepEqual(field({ successWhen: 'Applied' }), ['rolloutStrategy.progressive.successWhen: Invalid option: expected one of "Enforced"|"Accepted"']);
  assert.deepEqual(field({ onFailure: 'Retry' }), ['rolloutStrategy.progressive.onFailure: Invalid option: expected one of "Hold"|"Rollback"']);
  assert.deepEqual(field({ canary: { matchLabels: { env: 1 } } }), ['rolloutStrategy.progressive.canary.matchLabels.env: Invalid input: expected string, received number']);
  assert.deepEqual(field({ canary: { matchExpressions: [{ key: 'a', operator: 'Gt' }] } }), [
    'rolloutStrategy.progressive.canary.matchExpressions[0].operator: Invalid option: expected one of "In"|"NotIn"|"Exists"|"DoesNotExist"',
  ]);
  assert.deepEqual(field({ canary: { clusterSelector: {} } }), ['rolloutStrategy.progressive.canary: unrecognized key "clusterSelector"']);
  assert.deepEqual(field({ maxConcurency: '1' }), ['rolloutStrategy.progressive: unrecognized key "maxConcurency"']);
  assert.deepEqual(fromParams({ type: 'Canary' }), ['rolloutStrategy.type: Invalid option: expected one of "All"|"Progressive"']);
  assert.deepEqual(fromParams({ type: 'Progressive', mandatoryDecisionGroups: [] }), ['rolloutStrategy: unrecognized key "mandatoryDecisionGroups"']);
  assert.deepEqual(fromParams('Progressive'), ['rolloutStrategy: Invalid input: expected object, received string']);
});

test('params: several bad fields, one error each', () => {
  const errors = fromParams({ type: 'Progressive', progressive: { maxConcurrency: 'x', minSuccessTime: 'y', onFailure: 'z' } });
  assert.ok(Array.isArray(errors));
  assert.deepEqual(
    errors.map((e) => e.split(':')[0]),
    ['rolloutStrategy.progressive.maxConcurrency', 'rolloutStrategy.progressive.minSuccessTime', 'rolloutStrategy.progressive.onFailure'],
  );
});

test('params: progressive settings with type All are refused (they would be silently ignored)', () => {
  assert.deepEqual(fromParams({ type: 'All', progressive: { maxConcurrency: '1' } }), [
    'rolloutStrategy.progressive: is only read with type Progressive; remove it or set type: Progressive',
  ]);
  assert.deepEqual(rolloutStrategyErrors({ type: 'All', progressive: {} }, 'at'), ['at.progressive: is only read with type Progressive; remove it or set type: Progressive']);
  assert.deepEqual(rolloutStrategyErrors({ type: 'Progressive', progressive: {} }, 'at'), []);
  assert.deepEqual(rolloutStrategyErrors({ type: 'All' }, 'at'), []);
});

test('params and annotation: a progressDeadline of zero, or below minSuccessTime, is refused naming the field; None and equal are not; left out, it is at least minSuccessTime', () => {
  const field = 'rolloutStrategy.progressive.progressDeadline';
  const zero = (text: string) => `${field}: must be above 0 (${text} fails every cluster as soon as its copy is written); None waits for ever`;
  const below = (deadline: string, min: string) => `${field}: ${deadline} is below minSuccessTime ${min}: a cluster would fail before its success may count; set it to at least minSuccessTime, or None`;
  const refused: [Record<string, string>, string][] = [
    [{ progressDeadline: '0' }, `${field}: must be a duration above 0 such as 10m, or None`],
    [{ progressDeadline: '0s' }, zero('0s')],
    [{ progressDeadline: '0h0m0.0s' }, zero('0h0m0.0s')],
    [{ progressDeadline: '0ms', minSuccessTime: '5m' }, zero('0ms')],
    [{ progressDeadline: '4m59s', minSuccessTime: '5m' }, below('4m59s', '5m')],
    [{ progressDeadline: '30s', minSuccessTime: '1h' }, below('30s', '1h')],
  ];
  for (const [progressive, error] of refused) {
    assert.deepEqual(fromParams({ type: 'Progressive', progressive }), [error], JSON.stringify(progressive));
    const annotation = policyRolloutStrategy(annotated(JSON.stringify({ type: 'Progressive', progressive })), ALL);
    assert.deepEqual(annotation, { strategy: ALL, error: `${ROLLOUT_STRATEGY_ANNOTATION}: ${error} (the class's strategy stays in force)` }, JSON.stringify(progressive));
  }
  const accepted: [Record<string, string>, number | undefined][] = [
    [{ progressDeadline: 'None', minSuccessTime: '1h' }, undefined],
    [{ progressDeadline: '5m', minSuccessTime: '5m' }, 300_000],
    [{ progressDeadline: '1ms' }, 1],
    [{ minSuccessTime: '5m' }, 600_000],
    [{ minSuccessTime: '1h' }, 3_600_000],
  ];
  for (const [progressive, deadlineMs] of accepted) {
    const strategy = fromParams({ type: 'Progressive', progressive }) as Extract<RolloutStrategy, { type: 'Progressive' }>;
    assert.equal(strategy.progressDeadlineMs, deadlineMs, JSON.stringify(progressive));
    assert.equal(policyRolloutStrategy(annotated(JSON.stringify({ type: 'Progressive', progressive })), ALL).error, undefined, JSON.stringify(progressive));
  }
});

test('toRolloutStrategy: undefined and All are ALL; the schema and the conversion agree with the params', () => {
  assert.equal(toRolloutStrategy(undefined), ALL);
  assert.equal(toRolloutStrategy({ type: 'All' }), ALL);
  const doc = { type: 'Progressive' as const, progressive: { maxConcurrency: '3', progressDeadline: 'None' } };
  assert.deepEqual(toRolloutStrategy(rolloutStrategySchema.parse(doc)), fromParams(doc));
});

test('policyRolloutStrategy: no annotation (or no annotations) is the class default, as it is', () => {
  const classDefault = fromParams({ type: 'Progressive', progressive: { maxConcurrency: '1' } }) as RolloutStrategy;
  assert.equal(policyRolloutStrategy(undefined, classDefault).strategy, classDefault);
  assert.deepEqual(policyRolloutStrategy({}, classDefault), { strategy: classDefault });
  assert.deepEqual(policyRolloutStrategy({ 'policysync.kuadrant.io/rollout-resume': '3' }, ALL), { strategy: ALL });
});

test('policyRolloutStrategy: All overrides a Progressive class', () => {
  assert.deepEqual(policyRolloutStrategy(annotated('All'), defaults), { strategy: ALL });
  assert.deepEqual(policyRolloutStrategy(annotated(' All\n'), defaults), { strategy: ALL }, 'surrounding space is no part of the value');
});

test('policyRolloutStrategy: Progressive is the class\'s progressive settings, or the defaults when the class rolls out All', () => {
  const classDefault = fromParams({ type: 'Progressive', progressive: { maxConcurrency: '1', onFailure: 'Rollback' } }) as RolloutStrategy;
  assert.equal(policyRolloutStrategy(annotated('Progressive'), classDefault).strategy, classDefault);
  assert.deepEqual(policyRolloutStrategy(annotated('Progressive'), ALL), { strategy: defaults });
  assert.deepEqual(policyRolloutStrategy(annotated('  Progressive '), ALL), { strategy: defaults });
});

test('policyRolloutStrategy: a whole rolloutStrategy as JSON, whatever the class says', () => {
  const json = JSON.stringify({ type: 'Progressive', progressive: { canary: { matchLabels: { env: 'canary' } }, maxConcurrency: '50%', minSuccessTime: '2m' } });
  assert.deepEqual(policyRolloutStrategy(annotated(json), ALL), {
    strategy: { ...defaults, canary: { matchLabels: { env: 'canary' } }, maxConcurrency: { percent: 50 }, minSuccessTimeMs: 120_000 },
  });
  assert.deepEqual(policyRolloutStrategy(annotated(`  ${json}\n`), ALL).strategy, policyRolloutStrategy(annotated(json), ALL).strategy);
  assert.deepEqual(policyRolloutStrategy(annotated('{"type":"All"}'), defaults), { strategy: ALL });
  assert.deepEqual(policyRolloutStrategy(annotated('{"type":"Progressive"}'), { ...defaults, onFailure: 'Rollback' }), { strategy: defaults }, 'JSON fields left out take the defaults, not the class\'s');
});

test('policyRolloutStrategy: an invalid annotation is an error naming the annotation and the field; the class default stays', () => {
  const classDefault = fromParams({ type: 'Progressive', progressive: { maxConcurrency: '1' } }) as RolloutStrategy;
  const cases: [string, string][] = [
    ['progressive', 'must be All, Progressive or a rolloutStrategy as JSON, got "progressive" (the class\'s strategy stays in force)'],
    ['all', 'must be All, Progressive or a rolloutStrategy as JSON, got "all" (the class\'s strategy stays in force)'],
    ['', 'must be All, Progressive or a rolloutStrategy as JSON, got "" (the class\'s strategy stays in force)'],
    ['[{"type":"All"}]', 'must be All, Progressive or a rolloutStrategy as JSON, got "[{\\"type\\":\\"All\\"}]" (the class\'s strategy stays in force)'],
    ['{"type":"Progressive"', 'is not valid JSON (the class\'s strategy stays in force)'],
    ['{type: Progressive}', 'is not valid JSON (the class\'s strategy stays in force)'],
    ['{}', 'rolloutStrategy.type: Invalid option: expected one of "All"|"Progressive" (the class\'s strategy stays in force)'],
    [
      '{"type":"Progressive","progressive":{"maxConcurrency":"x"}}',
      'rolloutStrategy.progressive.maxConcurrency: must be a count (e.g. "2") or a percentage from 0% to 100% (e.g. "25%") (the class\'s strategy stays in force)',
    ],
    ['{"type":"Progressive","progressive":{"progressDeadline":"forever"}}', 'rolloutStrategy.progressive.progressDeadline: must be a duration above 0 such as 10m, or None (the class\'s strategy stays in force)'],
    ['{"type":"Progressive","progressive":{"bogus":1,"other":2}}', 'rolloutStrategy.progressive: unrecognized key(s) "bogus", "other" (the class\'s strategy stays in force)'],
    [
      '{"type":"Progressive","progressive":{"canary":{"matchExpressions":[{"key":"a","operator":"Gt"}]}}}',
      'rolloutStrategy.progressive.canary.matchExpressions[0].operator: Invalid option: expected one of "In"|"NotIn"|"Exists"|"DoesNotExist" (the class\'s strategy stays in force)',
    ],
    ['{"type":"All","progressive":{}}', 'rolloutStrategy.progressive: is only read with type Progressive; remove it or set type: Progressive (the class\'s strategy stays in force)'],
  ];
  for (const [value, error] of cases) {
    for (const klass of [classDefault, ALL]) {
      const result = policyRolloutStrategy(annotated(value), klass);
      assert.equal(result.strategy, klass, value);
      assert.equal(result.error, `${ROLLOUT_STRATEGY_ANNOTATION}: ${error}`, value);
    }
  }
  const several = policyRolloutStrategy(annotated('{"type":"Progressive","progressive":{"maxFailures":"x","onFailure":"y"}}'), ALL).error!;
  assert.match(several, /rolloutStrategy\.progressive\.maxFailures: .*; rolloutStrategy\.progressive\.onFailure: /);
});

test('policyRolloutStrategy: a long invalid value is quoted cut to 64 characters', () => {
  const { error } = policyRolloutStrategy(annotated('x'.repeat(500)), ALL);
  assert.ok(error);
  assert.ok(error.includes(`"${'x'.repeat(64)}"`));
  assert.ok(!error.includes('x'.repeat(65)));
});

test('resolveCount: a count as it is; a percentage of the total rounded down; never under the minimum', () => {
  assert.equal(resolveCount({ count: 3 }, 10), 3);
  assert.equal(resolveCount({ count: 30 }, 10), 30, 'a count is not capped by the total');
  assert.equal(resolveCount({ count: 0 }, 10), 0);
  assert.equal(resolveCount({ count: 0 }, 10, 1), 1);
  assert.equal(resolveCount({ percent: 25 }, 10), 2);
  assert.equal(resolveCount({ percent: 25 }, 4), 1);
  assert.equal(resolveCount({ percent: 25 }, 3), 0);
  assert.equal(resolveCount({ percent: 25 }, 3, 1), 1);
  assert.equal(resolveCount({ percent: 50 }, 5), 2);
  assert.equal(resolveCount({ percent: 100 }, 7), 7);
  assert.equal(resolveCount({ percent: 0 }, 7), 0);
  assert.equal(resolveCount({ percent: 0 }, 7, 1), 1);
  assert.equal(resolveCount({ percent: 10 }, 0, 1), 1);
  assert.equal(resolveCount({ percent: 33 }, 100), 33);
  assert.equal(resolveCount({ percent: 99 }, 1), 0);
});

test('classesRolloutStrategy: no class or only All classes: All; else the first Progressive one by class name', () => {
  const slow: RolloutStrategy = { ...defaults, maxConcurrency: { count: 1 } };
  const fast: RolloutStrategy = { ...defaults, maxConcurrency: { percent: 100 } };
  assert.equal(classesRolloutStrategy(new Map()), ALL);
  assert.equal(classesRolloutStrategy(new Map([['a', ALL], ['b', ALL]])), ALL);
  assert.equal(classesRolloutStrategy(new Map([['zeta', slow], ['alpha', ALL], ['beta', fast]])), fast);
  assert.equal(classesRolloutStrategy(new Map([['beta', fast], ['alpha', slow]])), slow, 'by name, not by insertion');
  assert.equal(classesRolloutStrategy(new Map([['only', slow]])), slow);
});

test('describeStrategy: one line for All, and every Progressive setting', () => {
  assert.equal(describeStrategy(ALL), 'All');
  assert.equal(
    describeStrategy(defaults),
    'Progressive (maxConcurrency 25%, minSuccessTime 0s, progressDeadline 600s, maxFailures 0, success Enforced, on failure Hold)',
  );
  assert.equal(
    describeStrategy({ ...defaults, canary: { matchLabels: { env: 'canary' } }, maxConcurrency: { count: 2 }, minSuccessTimeMs: 1500, maxFailures: { percent: 10 }, successWhen: 'Accepted', onFailure: 'Rollback' }),
    'Progressive (maxConcurrency 2, minSuccessTime 1.5s, progressDeadline 600s, maxFailures 10%, success Accepted, on failure Rollback, canary first)',
  );
  const { progressDeadlineMs: _none, ...noDeadline } = defaults;
  assert.match(describeStrategy(noDeadline), /progressDeadline None/);
});
