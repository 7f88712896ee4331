import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_FEEDBACK_NAMES, RESERVED_FEEDBACK_NAMES, feedbackRulesFor } from './feedbackrules.ts';

const defaults = [
  { name: 'generation', path: '.metadata.generation' },
  { name: 'acceptedStatus', path: '.status.conditions[?(@.type=="Accepted")].status' },
  { name: 'acceptedReason', path: '.status.conditions[?(@.type=="Accepted")].reason' },
  { name: 'acceptedMessage', path: '.status.conditions[?(@.type=="Accepted")].message' },
  { name: 'enforcedStatus', path: '.status.conditions[?(@.type=="Enforced")].status' },
  { name: 'enforcedReason', path: '.status.conditions[?(@.type=="Enforced")].reason' },
  { name: 'enforcedMessage', path: '.status.conditions[?(@.type=="Enforced")].message' },
  { name: 'enforcedGeneration', path: '.status.conditions[?(@.type=="Enforced")].observedGeneration' },
];

test('feedbackRulesFor returns the default JSONPaths rules with the exact DESIGN §4.3 paths', () => {
  assert.deepEqual(feedbackRulesFor({ rawFeedback: false }), [{ type: 'JSONPaths', jsonPaths: defaults }]);
});

test('feedbackRulesFor adds the raw conditions rule when rawFeedback is on', () => {
  assert.deepEqual(feedbackRulesFor({ rawFeedback: true }), [
    { type: 'JSONPaths', jsonPaths: [...defaults, { name: 'conditions', path: '.status.conditions' }] },
  ]);
});

test('feedbackRulesFor appends the kind statusFeedback after the defaults', () => {
  const rules = feedbackRulesFor({ rawFeedback: false, statusFeedback: [{ name: 'limitsTotal', path: '.status.limits' }] });
  assert.deepEqual(rules, [{ type: 'JSONPaths', jsonPaths: [...defaults, { name: 'limitsTotal', path: '.status.limits' }] }]);
});

test('feedbackRulesFor skips statusFeedback rules whose name is reserved or repeated', () => {
  const rules = feedbackRulesFor({
    rawFeedback: false,
    statusFeedback: [
      { name: 'generation', path: '.spec.x' },
      { name: 'conditions', path: '.spec.y' },
      { name: 'extra', path: '.status.a' },
      { name: 'extra', path: '.status.b' },
    ],
  });
  assert.deepEqual(rules, [{ type: 'JSONPaths', jsonPaths: [...defaults, { name: 'extra', path: '.status.a' }] }]);
});

test('DEFAULT_FEEDBACK_NAMES lists the eight default rule names; reserved names add conditions', () => {
  assert.deepEqual(DEFAULT_FEEDBACK_NAMES, defaults.map((rule) => rule.name));
  assert.deepEqual(RESERVED_FEEDBACK_NAMES, [...DEFAULT_FEEDBACK_NAMES, 'conditions']);
});
