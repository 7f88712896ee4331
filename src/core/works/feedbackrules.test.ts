import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ANCESTOR_FIELDS, DEFAULT_FEEDBACK_NAMES, MAX_ANCESTOR_GATEWAYS, RESERVED_FEEDBACK_NAMES, ancestorFeedbackName } from '../feedbacknames.ts';
import { ancestorFeedbackGateways, feedbackRulesFor } from './feedbackrules.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { parseParams } from '../params/params.ts';

const defaults = [
  { name: 'generation', path: '.metadata.generation' },
  { name: 'revision', path: '.metadata.annotations.policysync\\.kuadrant\\.io/revision' },
  { name: 'acceptedStatus', path: '.status.conditions[?(@.type=="Accepted")].status' },
  { name: 'acceptedReason', path: '.status.conditions[?(@.type=="Accepted")].reason' },
  { name: 'acceptedMessage', path: '.status.conditions[?(@.type=="Accepted")].message' },
  { name: 'enforcedStatus', path: '.status.conditions[?(@.type=="Enforced")].status' },
  { name: 'enforcedReason', path: '.status.conditions[?(@.type=="Enforced")].reason' },
  { name: 'enforcedMessage', path: '.status.conditions[?(@.type=="Enforced")].message' },
  { name: 'enforcedGeneration', path: '.status.conditions[?(@.type=="Enforced")].observedGeneration' },
  { name: 'statusObservedGeneration', path: '.status.observedGeneration' },
  { name: 'firstConditionType', path: '.status.conditions[::100].type' },
  { name: 'firstAncestorName', path: '.status.ancestors[::100].ancestorRef.name' },
];

/** The five ancestor rules of the index-th Gateway, as k8s jsonpath reads them (checked against the OCM agent's reader). */
function ancestorRules(index: number, gateway: string) {
  const entry = `.status.ancestors[?(@.ancestorRef.name=="${gateway}")]`;
  return [
    { name: `ancestor${index}Status`, path: `${entry}.conditions[?(@.type=="Accepted")].status` },
    { name: `ancestor${index}Reason`, path: `${entry}.conditions[?(@.type=="Accepted")].reason` },
    { name: `ancestor${index}Message`, path: `${entry}.conditions[?(@.type=="Accepted")].message` },
    { name: `ancestor${index}Generation`, path: `${entry}.conditions[?(@.type=="Accepted")].observedGeneration` },
    { name: `ancestor${index}Controller`, path: `${entry}.controllerName` },
  ];
}

function copy(spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'BackendTrafficPolicy', metadata: { name: 'p', namespace: 'ns' }, spec };
}

const gw = (name: string, extra: Record<string, unknown> = {}) => ({ group: 'gateway.networking.k8s.io', kind: 'Gateway', name, ...extra });

test('feedbackRulesFor returns the default JSONPaths rules with the exact docs/design/works.md#feedback-rules paths', () => {
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

test('feedbackRulesFor adds five ancestor rules per Gateway, in the order given, between the defaults and the raw and kind rules', () => {
  const rules = feedbackRulesFor({
    rawFeedback: true,
    ancestorGateways: ['api', 'shop.example'],
    statusFeedback: [{ name: 'limitsTotal', path: '.status.limits' }],
  });
  assert.deepEqual(rules, [
    {
      type: 'JSONPaths',
      jsonPaths: [
        ...defaults,
        ...ancestorRules(0, 'api'),
        ...ancestorRules(1, 'shop.example'),
        { name: 'conditions', path: '.status.conditions' },
        { name: 'limitsTotal', path: '.status.limits' },
      ],
    },
  ]);
});

test('feedbackRulesFor gives ancestor rules to at most MAX_ANCESTOR_GATEWAYS Gateways', () => {
  const gateways = Array.from({ length: MAX_ANCESTOR_GATEWAYS + 3 }, (_, i) => `gw-${i}`);
  const names = feedbackRulesFor({ rawFeedback: false, ancestorGateways: gateways })[0]!.jsonPaths.map((rule) => rule.name);
  assert.equal(names.length, defaults.length + MAX_ANCESTOR_GATEWAYS * ANCESTOR_FIELDS.length);
  assert.ok(names.includes(ancestorFeedbackName(MAX_ANCESTOR_GATEWAYS - 1, 'Controller')));
  assert.ok(!names.includes(ancestorFeedbackName(MAX_ANCESTOR_GATEWAYS, 'Status')));
});

test('feedbackRulesFor is the same for the same input: a work spec-hash stays put across reconciles', () => {
  const input = { rawFeedback: false, ancestorGateways: ['b', 'a'], statusFeedback: [{ name: 'x', path: '.status.x' }] };
  assert.deepEqual(feedbackRulesFor(input), feedbackRulesFor(structuredClone(input)));
});

test('feedbackRulesFor skips statusFeedback rules whose name is reserved or repeated', () => {
  const rules = feedbackRulesFor({
    rawFeedback: false,
    statusFeedback: [
      { name: 'generation', path: '.spec.x' },
      { name: 'conditions', path: '.spec.y' },
      { name: 'ancestor0Status', path: '.spec.z' },
      { name: 'firstConditionType', path: '.spec.w' },
      { name: 'extra', path: '.status.a' },
      { name: 'extra', path: '.status.b' },
    ],
  });
  assert.deepEqual(rules, [{ type: 'JSONPaths', jsonPaths: [...defaults, { name: 'extra', path: '.status.a' }] }]);
});

test('the reserved names: the defaults, every ancestor rule name up to the cap, and conditions', () => {
  assert.deepEqual(DEFAULT_FEEDBACK_NAMES, defaults.map((rule) => rule.name));
  const ancestorNames = Array.from({ length: MAX_ANCESTOR_GATEWAYS }, (_, i) => ancestorRules(i, 'gw').map((rule) => rule.name)).flat();
  assert.deepEqual(RESERVED_FEEDBACK_NAMES, [...DEFAULT_FEEDBACK_NAMES, ...ancestorNames, 'conditions']);
  const allRules = feedbackRulesFor({ rawFeedback: true, ancestorGateways: Array.from({ length: MAX_ANCESTOR_GATEWAYS }, (_, i) => `gw-${i}`) });
  assert.deepEqual(new Set(allRules[0]!.jsonPaths.map((rule) => rule.name)), new Set(RESERVED_FEEDBACK_NAMES), 'every built-in rule name is reserved');
});

test('params refuse a statusFeedback rule named like a built-in one, ancestor rules included', () => {
  const result = parseParams({
    policiesToSync: [
      { group: 'gateway.envoyproxy.io', version: 'v1alpha1', resource: 'backendtrafficpolicies', statusFeedback: [{ name: 'ancestor3Message', path: '.status.x' }] },
    ],
  });
  assert.deepEqual(result, { ok: false, errors: ['policiesToSync[0].statusFeedback[0].name: "ancestor3Message" is a built-in feedback rule name'] });
});

test('ancestorFeedbackGateways: the distinct Gateway target names of the copy, sorted', () => {
  assert.deepEqual(ancestorFeedbackGateways(copy({ targetRef: gw('shop') })), ['shop']);
  assert.deepEqual(
    ancestorFeedbackGateways(copy({ targetRefs: [gw('shop', { sectionName: 'https' }), gw('api'), gw('shop', { sectionName: 'http' })] })),
    ['api', 'shop'],
  );
  assert.deepEqual(ancestorFeedbackGateways(copy({ targetRef: gw('b'), targetRefs: [gw('a')] })), ['a', 'b']);
});

test('ancestorFeedbackGateways leaves out targets that are not Gateways and names that are not DNS-1123 subdomains', () => {
  const targets = [
    { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'route' },
    { group: '', kind: 'Service', name: 'svc' },
    gw('quote"d'),
    gw('Upper'),
    gw('ok'),
  ];
  assert.deepEqual(ancestorFeedbackGateways(copy({ targetRefs: targets })), ['ok']);
  assert.deepEqual(ancestorFeedbackGateways(copy({})), []);
  assert.deepEqual(ancestorFeedbackGateways({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' } }), []);
});

test('ancestorFeedbackGateways keeps the first MAX_ANCESTOR_GATEWAYS names in name order', () => {
  const names = Array.from({ length: MAX_ANCESTOR_GATEWAYS + 2 }, (_, i) => `gw-${String(i).padStart(2, '0')}`);
  const reversed = [...names].reverse().map((name) => gw(name));
  assert.deepEqual(ancestorFeedbackGateways(copy({ targetRefs: reversed })), names.slice(0, MAX_ANCESTOR_GATEWAYS));
});

test('equal options give one shared, frozen set of rules; different options their own', () => {
  const a = feedbackRulesFor({ rawFeedback: false, ancestorGateways: ['gw'] });
  const b = feedbackRulesFor({ rawFeedback: false, ancestorGateways: ['gw'] });
  assert.equal(a, b);
  assert.ok(Object.isFrozen(a) && Object.isFrozen(a[0]!.jsonPaths));
  assert.notEqual(feedbackRulesFor({ rawFeedback: true, ancestorGateways: ['gw'] }), a);
  assert.notEqual(feedbackRulesFor({ rawFeedback: false, ancestorGateways: ['other'] }), a);
  assert.notEqual(feedbackRulesFor({ rawFeedback: false, ancestorGateways: ['gw'], statusFeedback: [{ name: 'x', path: '.status.x' }] }), a);
});
