// Properties of the params and rollout-strategy parsers, for any JSON a user (or a bad merge) can write:
// parsing never throws, a valid document is read as written, and every error names a field that is in the
// document (or a required one that is missing), in the notation the docs use (`policiesToSync[1].resource`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkProperty, formatFieldPath, isObject, jsonPaths, mutatedJson, oddText, type PathSegment } from '../../../testkit/arbitraries.ts';
import { parseDuration } from '../k8s/duration.ts';
import { ROLLOUT_STRATEGY_ANNOTATION } from '../metadatakeys.ts';
import { ALL, policyRolloutStrategy, type RolloutStrategy } from './strategy.ts';
import { RESERVED_FEEDBACK_NAMES } from '../feedbacknames.ts';
import { parseParamsObject } from './classparams.ts';
import { parseParams, parseParamsJson } from './params.ts';

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
const group = fc.oneof(fc.constantFrom('', 'kuadrant.io', 'gateway.envoyproxy.io'), fc.array(dnsLabel, { minLength: 1, maxLength: 3 }).map((l) => l.join('.')));
// Valid names: not a built-in rule's, not `__proto__` (refused: the regression test at the end).
const feedbackName = fc.stringMatching(/^[A-Za-z0-9_.-]{1,20}$/).filter((n) => !RESERVED_FEEDBACK_NAMES.includes(n) && n !== '__proto__');
const feedbackRule = fc.record({ name: feedbackName, path: fc.stringMatching(/^\.[a-z][a-zA-Z.[\]0-9]{0,20}$/) });
const policyKind = fc.record(
  { group, version: dnsLabel, resource: dnsLabel, statusFeedback: fc.uniqueArray(feedbackRule, { selector: (r) => r.name, maxLength: 3 }) },
  { requiredKeys: ['group', 'version', 'resource'] },
);
const duration = fc.oneof(fc.constant('0'), fc.tuple(fc.integer({ min: 0, max: 999 }), fc.constantFrom('ms', 's', 'm', 'h')).map(([n, u]) => `${n}${u}`));
const countOrPercent = fc.oneof(fc.integer({ min: 0, max: 50 }).map(String), fc.integer({ min: 0, max: 100 }).map((p) => `${p}%`));
const selector = fc.record(
  {
    matchLabels: fc.dictionary(dnsLabel, dnsLabel, { maxKeys: 2 }),
    matchExpressions: fc.array(fc.record({ key: dnsLabel, operator: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist'), values: fc.array(dnsLabel, { maxLength: 2 }) }), { maxLength: 2 }),
  },
  { requiredKeys: [] },
);
/** A valid `rolloutStrategy` document: `All`, or `Progressive` with any of its fields. */
const strategyDoc = fc.oneof(
  fc.constant({ type: 'All' }),
  fc.record(
    {
      type: fc.constant('Progressive'),
      progressive: fc.record(
        {
          canary: selector,
          maxConcurrency: countOrPercent,
          minSuccessTime: duration,
          progressDeadline: fc.oneof(duration, fc.constant('None')),
          maxFailures: countOrPercent,
          successWhen: fc.constantFrom('Enforced', 'Accepted'),
          onFailure: fc.constantFrom('Hold', 'Rollback'),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['type'] },
  ).filter((doc) => {
    // A deadline of zero, or below minSuccessTime, is refused (strategy.ts rolloutStrategyErrors).
    const deadline = doc.progressive?.progressDeadline;
    if (deadline === undefined || deadline === 'None') return true;
    return parseDuration(deadline)! > 0 && parseDuration(deadline)! >= parseDuration(doc.progressive?.minSuccessTime ?? '0')!;
  }),
);
/** A valid params document (docs/design/configuration.md#gatewayclass-params). */
const paramsDoc = fc.record(
  {
    policiesToSync: fc.uniqueArray(policyKind, { selector: (k) => `${k.resource}.${k.group}`, maxLength: 4 }),
    downstreamNamespace: fc.oneof(fc.constantFrom('{namespace}', 'kuadrant-{namespace}', '{namespace}-synced'), dnsLabel),
    downstreamClass: dnsLabel,
    rolloutStrategy: strategyDoc,
  },
  { requiredKeys: ['policiesToSync'] },
);

/**
 * What makes an error name a field of `doc`: it starts with the path of a field in it (`a.b[0]: …`), or of a
 * required field missing from an object in it (`a.b: Required`), or — at the root — it names a key of the
 * document or says the document is not an object. Returns why not, or undefined.
 */
function unnamedField(doc: unknown, error: string): string | undefined {
  const present = jsonPaths(doc);
  const named = present.filter((p) => p.length > 0 && error.startsWith(`${formatFieldPath(p)}: `));
  if (named.length > 0) return undefined;
  // A required field, missing from an object that is in the document (`Required` in the params, zod's own
  // words in the annotation).
  const required = /^(.*?)(?:^|\.)([A-Za-z]+): /.exec(error);
  if (required) {
    const parent = present.find((p) => formatFieldPath(p) === required[1]);
    const holder = parent === undefined ? undefined : valueOf(doc, parent);
    if (isObject(holder) && !(required[2]! in holder)) return undefined;
  }
  if (/^unrecognized key "/.test(error)) {
    const key = error.slice('unrecognized key "'.length, -1);
    return isObject(doc) && key in doc ? undefined : `names key ${JSON.stringify(key)}, not in the document`;
  }
  if (/^Invalid input: expected object, received /.test(error) && !isObject(doc)) return undefined;
  return 'names no field of the document';
}

function valueOf(doc: unknown, path: readonly PathSegment[]): unknown {
  return path.reduce<unknown>((here, segment) => (here as Record<string | number, unknown> | undefined)?.[segment], doc);
}

/** Nearly right values: names the params reserve, wrong cases, placeholders, limits just past. */
const likely = fc.oneof(
  fc.constantFrom(...RESERVED_FEEDBACK_NAMES.slice(0, 4), '__proto__', '', 'Kuadrant.io', 'V1', '{name}', '{namespace', 'None', '0', '101%', '1d', 'status.x', 'a'.repeat(64), 'All', 'Progressive'),
  fc.integer({ min: -2, max: 2 }),
);
const anyParams = fc.oneof(mutatedJson(paramsDoc, { maxMutations: 4, likely }), fc.jsonValue({ maxDepth: 4 }), paramsDoc);

test('property: parseParams never throws, and every error names a field of the document or a missing required one', (t) => {
  checkProperty(t, 3000, [anyParams], (doc) => {
    const result = parseParams(doc);
    if (result.ok) return;
    assert.ok(result.errors.length > 0, 'a refusal says why');
    for (const error of result.errors) {
      const why = unnamedField(doc, error);
      assert.equal(why, undefined, `${JSON.stringify(error)} ${why}`);
    }
  });
});

test('property: a valid params document is accepted as written (its kinds in order, its namespace template and strategy)', (t) => {
  checkProperty(t, 1000, [paramsDoc], (doc) => {
    const result = parseParams(doc);
    assert.ok(result.ok, JSON.stringify(!result.ok && result.errors));
    assert.deepEqual(
      plain(result.params.policiesToSync),
      plain(doc.policiesToSync.map(({ group, version, resource, statusFeedback }) => ({ group, version, resource, statusFeedback: statusFeedback ?? [] }))),
    );
    assert.equal(result.params.downstreamNamespace, doc.downstreamNamespace ?? '{namespace}');
    assertWellFormed(result.params.rolloutStrategy);
    if (doc.rolloutStrategy === undefined) assert.deepEqual(result.params.rolloutStrategy, ALL);
    else assert.equal(result.params.rolloutStrategy.type, doc.rolloutStrategy.type);
  });
});

/** As JSON would give it (fast-check's records may have no prototype). */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** What the planner relies on in an accepted strategy: finite counts and times, percentages within 0–100, a deadline that can pass. */
function assertWellFormed(s: RolloutStrategy): void {
  if (s.type === 'All') return;
  for (const c of [s.maxConcurrency, s.maxFailures]) {
    if ('count' in c) assert.ok(Number.isSafeInteger(c.count) && c.count >= 0, JSON.stringify(c));
    else assert.ok(Number.isInteger(c.percent) && c.percent >= 0 && c.percent <= 100, JSON.stringify(c));
  }
  assert.ok(Number.isFinite(s.minSuccessTimeMs) && s.minSuccessTimeMs >= 0, `minSuccessTimeMs ${s.minSuccessTimeMs}`);
  // A deadline that can pass: above zero, and no shorter than the success a cluster must show.
  if (s.progressDeadlineMs !== undefined) {
    assert.ok(Number.isFinite(s.progressDeadlineMs) && s.progressDeadlineMs > 0, `progressDeadlineMs ${s.progressDeadlineMs}`);
    assert.ok(s.progressDeadlineMs >= s.minSuccessTimeMs, `progressDeadlineMs ${s.progressDeadlineMs}, minSuccessTimeMs ${s.minSuccessTimeMs}`);
  }
}

test('property: the ConfigMap form (any text) and the PolicySyncParams form (any spec) never throw, and a refusal says why', (t) => {
  const text = fc.oneof(fc.string(), oddText({ maxLength: 60 }), anyParams.map((doc) => JSON.stringify(doc) ?? ''), anyParams.map((doc) => (JSON.stringify(doc) ?? '').slice(0, -1)));
  checkProperty(t, 1500, [text, anyParams], (params, spec) => {
    const meta = { name: 'p', namespace: 'ns' };
    for (const result of [
      parseParamsJson(params),
      parseParamsObject('ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta, data: { params } }),
      parseParamsObject('PolicySyncParams', { apiVersion: 'policysync.kuadrant.io/v1alpha1', kind: 'PolicySyncParams', metadata: meta, spec: spec as Record<string, unknown> }),
    ]) {
      if (result.ok) assertWellFormed(result.params.rolloutStrategy);
      else assert.ok(result.errors.length > 0 && result.errors.every((e) => e.length > 0));
    }
  });
});

const strategyJson = fc.oneof(mutatedJson(strategyDoc, { likely }), fc.jsonValue({ maxDepth: 3 }), strategyDoc);
const classDefault = fc.oneof(fc.constant(ALL), strategyDoc.map((doc) => {
  const parsed = parseParams({ policiesToSync: [], rolloutStrategy: doc });
  return parsed.ok ? parsed.params.rolloutStrategy : ALL;
}));

test('property: the rollout-strategy annotation never throws; invalid, it keeps the class default and names the field', (t) => {
  const annotation = fc.oneof(
    strategyJson.map((doc) => JSON.stringify(doc) ?? ''),
    fc.constantFrom('All', 'Progressive', ' All ', '', '{', 'progressive'),
    oddText({ maxLength: 30 }),
  );
  checkProperty(t, 3000, [annotation, classDefault], (text, fallback) => {
    const result = policyRolloutStrategy({ [ROLLOUT_STRATEGY_ANNOTATION]: text }, fallback);
    assertWellFormed(result.strategy);
    if (result.error === undefined) return;
    assert.equal(result.strategy, fallback, 'an invalid annotation leaves the class default in force');
    const prefix = `${ROLLOUT_STRATEGY_ANNOTATION}: `;
    assert.ok(result.error.startsWith(prefix), result.error);
    const body = result.error.slice(prefix.length).replace(/ \(the class's strategy stays in force\)$/, '');
    if (/^(must be All, Progressive or a rolloutStrategy as JSON|is not valid JSON)/.test(body)) return;
    // Schema issues, `; `-separated, each naming a field of {rolloutStrategy: <the JSON>}.
    const doc = { rolloutStrategy: JSON.parse(text.trim()) as unknown };
    for (const issue of splitIssues(doc, body)) {
      const rootKeys = /^rolloutStrategy: unrecognized key\(s\) (.*)$/.exec(issue);
      if (rootKeys) {
        const unknown = Object.keys(isObject(doc.rolloutStrategy) ? doc.rolloutStrategy : {}).filter((k) => k !== 'type' && k !== 'progressive');
        assert.equal(rootKeys[1], unknown.map((k) => `"${k}"`).join(', '), 'the unrecognized keys named are those of the document');
        continue;
      }
      const why = unnamedField(doc, issue.replace(/: unrecognized key\(s\) .*$/, ': unrecognized'));
      assert.equal(why, undefined, `${JSON.stringify(issue)} ${why}`);
    }
  });
});

/** The `; `-joined issues of an error, each starting at a field path of `doc` (a message may itself hold `; `). */
function splitIssues(doc: unknown, body: string): string[] {
  const paths = jsonPaths(doc).map(formatFieldPath).filter((p) => p !== '');
  const parts = body.split('; ');
  const issues: string[] = [];
  for (const part of parts) {
    const starts = paths.some((p) => part.startsWith(`${p}: `)) || /^[^:]*: Required$/.test(part);
    if (starts || issues.length === 0) issues.push(part);
    else issues[issues.length - 1] += `; ${part}`;
  }
  return issues;
}

// Found by the status annotation's property: `__proto__` matches the rule-name pattern, but no object holds it as
// a key (`extra['__proto__'] = v` sets nothing), so the value of such a rule was silently never shown.
test('regression: a statusFeedback rule named __proto__ is refused, naming the field', () => {
  const result = parseParams({ policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', statusFeedback: [{ name: '__proto__', path: '.status.x' }] }] });
  assert.deepEqual(result, { ok: false, errors: ['policiesToSync[0].statusFeedback[0].name: "__proto__" cannot name a value (no object can hold it as a key)'] });
});
