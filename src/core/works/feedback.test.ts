import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_FEEDBACK_VALUES, judgedPlacedCopy, readClusterFeedback } from './feedback.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { deepFreeze } from '../k8s/freeze.ts';

type Value = { name: string; fieldValue: Record<string, unknown> };

const str = (name: string, value: string): Value => ({ name, fieldValue: { type: 'String', string: value } });
const int = (name: string, value: number): Value => ({ name, fieldValue: { type: 'Integer', integer: value } });
const bool = (name: string, value: boolean): Value => ({ name, fieldValue: { type: 'Boolean', boolean: value } });
const raw = (name: string, value: unknown): Value => ({ name, fieldValue: { type: 'JsonRaw', jsonRaw: JSON.stringify(value) } });

const workCondition = (type: string, status: string, observedGeneration = 3) => ({
  type,
  status,
  reason: `${type}Reason`,
  message: `${type} message`,
  observedGeneration,
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

function work(status: unknown, generation: number | null = 3): KubeObject {
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name: 'authpolicies-ns-p-abcdef', namespace: 'c1', ...(generation === null ? {} : { generation }) },
    spec: {},
    status,
  };
}

function manifestStatus(values: Value[] | undefined, conditions: unknown[] = []): Record<string, unknown> {
  return {
    resourceMeta: { ordinal: 0, group: 'kuadrant.io', version: 'v1', kind: 'AuthPolicy', resource: 'authpolicies', name: 'p', namespace: 'ns' },
    ...(values === undefined ? {} : { statusFeedback: { values } }),
    conditions,
  };
}

function appliedWork(values: Value[] | undefined, manifestConditions: unknown[] = []): KubeObject {
  return work({
    conditions: [workCondition('Applied', 'True'), workCondition('Available', 'True')],
    resourceStatus: { manifests: [manifestStatus(values, manifestConditions)] },
  });
}

const DEFAULTS: Value[] = [
  int('generation', 2),
  str('acceptedStatus', 'True'),
  str('acceptedReason', 'Accepted'),
  str('acceptedMessage', 'AuthPolicy has been accepted'),
  str('enforcedStatus', 'False'),
  str('enforcedReason', 'Overridden'),
  str('enforcedMessage', 'AuthPolicy is overridden by [ns/local-auth]'),
  int('enforcedGeneration', 2),
];

test('readClusterFeedback reads work conditions and every default feedback value', () => {
  assert.deepEqual(readClusterFeedback(appliedWork(DEFAULTS)), {
    applied: true,
    available: true,
    appliedObservedCurrent: true,
    generation: 2,
    enforcedGeneration: 2,
    accepted: { status: 'True', reason: 'Accepted', message: 'AuthPolicy has been accepted' },
    enforced: { status: 'False', reason: 'Overridden', message: 'AuthPolicy is overridden by [ns/local-auth]' },
    ancestors: [],
    appliedAt: Date.parse('2026-01-01T00:00:00Z'),
    extra: {},
  });
});

test('readClusterFeedback: a work without status is neither applied nor available and has no feedback', () => {
  const nothing = { applied: false, available: false, appliedObservedCurrent: false, ancestors: [], extra: {} };
  assert.deepEqual(readClusterFeedback(work(undefined)), nothing);
  assert.deepEqual(readClusterFeedback(work({})), nothing);
  assert.deepEqual(readClusterFeedback(work('garbage')), nothing);
});

test('readClusterFeedback: applied work without resourceStatus or values yields the work conditions only', () => {
  const noResourceStatus = work({ conditions: [workCondition('Applied', 'True'), workCondition('Available', 'False')] });
  const appliedAt = Date.parse('2026-01-01T00:00:00Z');
  assert.deepEqual(readClusterFeedback(noResourceStatus), { applied: true, available: false, appliedObservedCurrent: true, ancestors: [], appliedAt, extra: {} });
  assert.deepEqual(readClusterFeedback(appliedWork(undefined)), { applied: true, available: true, appliedObservedCurrent: true, ancestors: [], appliedAt, extra: {} });
  const malformed = work({ conditions: [workCondition('Applied', 'True')], resourceStatus: { manifests: 'nope' } });
  assert.deepEqual(readClusterFeedback(malformed).extra, {});
});

test('readClusterFeedback: appliedObservedCurrent compares the Applied observedGeneration with the work generation', () => {
  const stale = work({ conditions: [workCondition('Applied', 'True', 2)] }, 3);
  assert.equal(readClusterFeedback(stale).appliedObservedCurrent, false);
  assert.equal(readClusterFeedback(stale).applied, true);
  const noGeneration = work({ conditions: [workCondition('Applied', 'True', 3)] }, null);
  assert.equal(readClusterFeedback(noGeneration).appliedObservedCurrent, false);
  const failedButCurrent = work({ conditions: [workCondition('Applied', 'False', 3)] }, 3);
  assert.equal(readClusterFeedback(failedButCurrent).appliedObservedCurrent, true);
});

test('readClusterFeedback ignores values of the wrong type and records nothing for them', () => {
  const feedback = readClusterFeedback(
    appliedWork([
      int('enforcedStatus', 1),
      str('enforcedReason', 'Enforced'),
      str('generation', '2'),
      { name: 'enforcedGeneration', fieldValue: { type: 'Integer', integer: 1.5 } },
      { name: 'acceptedStatus', fieldValue: { type: 'String' } },
      { name: 'extraMissing', fieldValue: { type: 'Integer', string: 'x' } },
      { name: 'extraUnknownType', fieldValue: { type: 'Float', float: 1.5 } },
      { fieldValue: { type: 'String', string: 'nameless' } } as unknown as Value,
      'not an object' as unknown as Value,
    ]),
  );
  assert.deepEqual(feedback, { applied: true, available: true, appliedObservedCurrent: true, ancestors: [], appliedAt: Date.parse('2026-01-01T00:00:00Z'), extra: {} });
});

test('readClusterFeedback ignores a status string that is not a condition status', () => {
  const feedback = readClusterFeedback(appliedWork([str('enforcedStatus', 'Yes'), str('enforcedReason', 'Enforced')]));
  assert.equal(feedback.enforced, undefined);
});

test('readClusterFeedback keeps reason and message optional when only the status is reported', () => {
  const feedback = readClusterFeedback(appliedWork([str('enforcedStatus', 'True')]));
  assert.deepEqual(feedback.enforced, { status: 'True' });
});

test('readClusterFeedback puts the kind\'s own values in extra, JsonRaw kept as its string', () => {
  const feedback = readClusterFeedback(
    appliedWork([...DEFAULTS, int('limitsTotal', 4), bool('ready', false), str('phase', 'Ready'), raw('limits', { a: 1 })]),
  );
  assert.deepEqual(feedback.extra, { limitsTotal: 4, ready: false, phase: 'Ready', limits: '{"a":1}' });
});

test('readClusterFeedback takes the first of duplicated value names', () => {
  const feedback = readClusterFeedback(appliedWork([int('generation', 5), int('generation', 6), int('x', 1), int('x', 2)]));
  assert.equal(feedback.generation, 5);
  assert.deepEqual(feedback.extra, { x: 1 });
});

test('readClusterFeedback falls back to the raw conditions JsonRaw when the scalar values are absent', () => {
  const conditions = [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'accepted', observedGeneration: 4 },
    { type: 'Enforced', status: 'True', reason: 'Enforced', message: 'enforced', observedGeneration: 4 },
  ];
  const feedback = readClusterFeedback(appliedWork([int('generation', 4), raw('conditions', conditions)]));
  assert.deepEqual(feedback.accepted, { status: 'True', reason: 'Accepted', message: 'accepted' });
  assert.deepEqual(feedback.enforced, { status: 'True', reason: 'Enforced', message: 'enforced' });
  assert.equal(feedback.enforcedGeneration, 4);
  assert.deepEqual(feedback.extra, {}, 'the raw conditions are not an extra value');
});

test('readClusterFeedback prefers the scalar values over the raw conditions', () => {
  const conditions = [{ type: 'Enforced', status: 'True', reason: 'Enforced', message: 'old', observedGeneration: 1 }];
  const feedback = readClusterFeedback(appliedWork([...DEFAULTS, raw('conditions', conditions)]));
  assert.deepEqual(feedback.enforced, { status: 'False', reason: 'Overridden', message: 'AuthPolicy is overridden by [ns/local-auth]' });
  assert.equal(feedback.enforcedGeneration, 2);
});

test('readClusterFeedback: an Enforced condition without observedGeneration observed the status-level one (the Kuadrant operator\'s way)', () => {
  const kuadrant = [int('generation', 3), str('enforcedStatus', 'False'), str('enforcedReason', 'MissingResource'), str('enforcedMessage', 'kuadrant is not installed'), int('statusObservedGeneration', 3)];
  assert.equal(readClusterFeedback(appliedWork(kuadrant)).enforcedGeneration, 3);
  // The condition's own observedGeneration wins over the status-level one.
  assert.equal(readClusterFeedback(appliedWork([...kuadrant, int('enforcedGeneration', 2)])).enforcedGeneration, 2);
  // Without an Enforced condition, the status-level generation says nothing about enforcement.
  assert.equal(readClusterFeedback(appliedWork([int('generation', 3), int('statusObservedGeneration', 3)])).enforcedGeneration, undefined);
});

test('readClusterFeedback ignores raw conditions that are not a JSON list of conditions', () => {
  for (const jsonRaw of ['not json', '{"type":"Enforced","status":"True"}', '[1,"x",{"type":"Enforced","status":true}]']) {
    const feedback = readClusterFeedback(appliedWork([{ name: 'conditions', fieldValue: { type: 'JsonRaw', jsonRaw } }]));
    assert.equal(feedback.enforced, undefined, jsonRaw);
    assert.equal(feedback.enforcedGeneration, undefined, jsonRaw);
  }
});

test('readClusterFeedback reports the manifest Applied=False message as applyError', () => {
  const failed = work({
    conditions: [workCondition('Applied', 'False')],
    resourceStatus: {
      manifests: [
        manifestStatus(undefined, [
          { type: 'Applied', status: 'False', reason: 'AppliedManifestFailed', message: 'Failed to apply manifest: namespaces "x" not found' },
        ]),
      ],
    },
  });
  const feedback = readClusterFeedback(failed);
  assert.equal(feedback.applied, false);
  assert.equal(feedback.applyError, 'Failed to apply manifest: namespaces "x" not found');
  assert.equal(feedback.feedbackError, undefined);
});

test('readClusterFeedback falls back to the work Applied=False condition when no manifest says why', () => {
  const feedback = readClusterFeedback(work({ conditions: [workCondition('Applied', 'False')] }));
  assert.equal(feedback.applyError, 'Applied message');
  const reasonOnly = readClusterFeedback(work({ conditions: [{ type: 'Applied', status: 'False', reason: 'Boom', message: '' }] }));
  assert.equal(reasonOnly.applyError, 'Boom: the ManifestWork was not applied');
});

test('readClusterFeedback: a manifest Applied=True hides nothing and sets no applyError', () => {
  const feedback = readClusterFeedback(appliedWork(DEFAULTS, [{ type: 'Applied', status: 'True', reason: 'AppliedManifestComplete', message: 'ok' }]));
  assert.equal(feedback.applyError, undefined);
});

test('readClusterFeedback reports StatusFeedbackSynced=False as feedbackError, keeping the values that did sync', () => {
  const message = 'the length of returned json raw string for name conditions is larger than the maximum length 1024';
  const feedback = readClusterFeedback(
    appliedWork(DEFAULTS, [
      { type: 'Applied', status: 'True', reason: 'AppliedManifestComplete', message: 'ok' },
      { type: 'StatusFeedbackSynced', status: 'False', reason: 'StatusFeedbackSyncFailed', message },
    ]),
  );
  assert.equal(feedback.feedbackError, message);
  assert.equal(feedback.enforced?.reason, 'Overridden');
  const noMessage = readClusterFeedback(appliedWork([], [{ type: 'StatusFeedbackSynced', status: 'False' }]));
  assert.equal(noMessage.feedbackError, 'status feedback failed');
});

test('readClusterFeedback uses the manifest with ordinal 0 when several are listed', () => {
  const other = { ...manifestStatus([int('generation', 9)]), resourceMeta: { ordinal: 1 } };
  const ours = manifestStatus([int('generation', 2)]);
  const feedback = readClusterFeedback(work({ conditions: [], resourceStatus: { manifests: [other, ours] } }));
  assert.equal(feedback.generation, 2);
});

test('readClusterFeedback does not modify the work', () => {
  const input = appliedWork([...DEFAULTS, raw('conditions', [])]);
  const before = structuredClone(input);
  readClusterFeedback(input);
  assert.deepEqual(input, before);
});

test('readClusterFeedback reads the revision the copy carries (a String value of digits), never as one of the kind\'s values', () => {
  const feedback = readClusterFeedback(appliedWork([...DEFAULTS, str('revision', '7')]));
  assert.equal(feedback.revision, 7);
  assert.deepEqual(feedback.extra, {});
  assert.equal(readClusterFeedback(appliedWork(DEFAULTS)).revision, undefined, 'no value (a copy written before revisions): absent');
  for (const value of [str('revision', 'seven'), str('revision', ''), str('revision', '-1'), str('revision', '1.5'), str('revision', ' 7'), str('revision', '9'.repeat(16)), int('revision', 7), bool('revision', true)]) {
    const odd = readClusterFeedback(appliedWork([...DEFAULTS, value]));
    assert.equal(odd.revision, undefined, JSON.stringify(value));
    assert.equal('revision' in odd, false, JSON.stringify(value));
    assert.deepEqual(odd.extra, {}, 'a reserved name never lands among the kind\'s values');
  }
  assert.equal(readClusterFeedback(appliedWork([...DEFAULTS, str('revision', '9'.repeat(15))])).revision, 999_999_999_999_999);
});

test('readClusterFeedback reads a tagged revision (`<generation>/<tag>`, a copy rendered with variants): the generation as revision, the tag apart', () => {
  const tagged = readClusterFeedback(appliedWork([...DEFAULTS, str('revision', '7/0123456789')]));
  assert.equal(tagged.revision, 7);
  assert.equal(tagged.revisionTag, '0123456789');
  assert.deepEqual(tagged.extra, {});
  assert.equal('revisionTag' in readClusterFeedback(appliedWork([...DEFAULTS, str('revision', '7')])), false, 'a base copy has no tag');
  assert.equal(readClusterFeedback(appliedWork([...DEFAULTS, str('revision', `7/${'a'.repeat(64)}`)])).revisionTag, 'a'.repeat(64));
  for (const bad of ['7/', '/0123456789', '7/ABCDEF', '7/xyz', `7/${'a'.repeat(65)}`, '7/01/23', '7 /01', '7/01 ', 'seven/01', '-1/01', `${'9'.repeat(16)}/01`]) {
    const odd = readClusterFeedback(appliedWork([...DEFAULTS, str('revision', bad)]));
    assert.equal('revision' in odd, false, bad);
    assert.equal('revisionTag' in odd, false, bad);
  }
});

test('judgedPlacedCopy: the values were read from the copy the work places (revision and tag) and observed its generation', () => {
  const placing = (annotation: string | undefined, fedBack: string | undefined) => {
    const annotations = annotation === undefined ? {} : { annotations: { 'policysync.kuadrant.io/revision': annotation } };
    const copy = { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { name: 'p', namespace: 'ns', ...annotations }, spec: {} };
    const w = appliedWork([...DEFAULTS, ...(fedBack === undefined ? [] : [str('revision', fedBack)])]);
    return readClusterFeedback({ ...w, spec: { workload: { manifests: [copy] } } });
  };
  assert.deepEqual(placing('7/0123456789', '7').placed, { revision: 7, tag: '0123456789' });
  assert.equal(judgedPlacedCopy(placing('7', '7')), true);
  assert.equal(judgedPlacedCopy(placing(undefined, undefined)), true, 'a copy from before revisions were recorded: the generations decide');
  assert.equal(judgedPlacedCopy(placing('8', '7')), false, 'the values are still the copy of revision 7');
  assert.equal(judgedPlacedCopy(placing('7/0123456789', '7')), false, 'a variant change keeps the revision: the base copy\'s values are not the variant copy\'s');
  assert.equal(judgedPlacedCopy(placing('7/0123456789', '7/abcdef0123')), false);
  assert.equal(judgedPlacedCopy(placing('7/0123456789', '7/0123456789')), true);
  assert.equal(judgedPlacedCopy(placing('7', undefined)), false, 'no revision fed back: not known to be this copy');
  const stale = placing('7', '7');
  assert.equal(judgedPlacedCopy({ ...stale, enforcedGeneration: stale.generation! - 1 }), false, 'the controller observed an older generation');
});

/** An applied work whose copy targets the given Gateways (its ancestor rules follow them, see ancestorFeedbackGateways). */
function workFor(gateways: string[], values: Value[], extra: { managedFields?: unknown[]; conditions?: unknown[] } = {}): KubeObject {
  const copy = {
    apiVersion: 'gateway.envoyproxy.io/v1alpha1',
    kind: 'BackendTrafficPolicy',
    metadata: { name: 'p', namespace: 'ns' },
    spec: { targetRefs: gateways.map((name) => ({ group: 'gateway.networking.k8s.io', kind: 'Gateway', name })) },
  };
  return {
    ...appliedWork(values),
    metadata: { name: 'w', namespace: 'c1', generation: 3, ...(extra.managedFields ? { managedFields: extra.managedFields } : {}) },
    spec: { workload: { manifests: [copy] } },
    ...(extra.conditions ? { status: { conditions: extra.conditions, resourceStatus: { manifests: [manifestStatus(values)] } } } : {}),
  };
}

const EG = 'gateway.envoyproxy.io/gatewayclass-controller';

test('readClusterFeedback reads one ancestor entry per Gateway of the copy, in name order, from scalar values', () => {
  const feedback = readClusterFeedback(
    workFor(
      ['shop', 'api'],
      [
        str('ancestor0Status', 'True'),
        str('ancestor0Reason', 'Accepted'),
        str('ancestor0Message', 'Policy has been accepted.'),
        int('ancestor0Generation', 3),
        str('ancestor0Controller', EG),
        str('ancestor1Status', 'False'),
        str('ancestor1Reason', 'Conflicted'),
        str('ancestor1Message', 'Unable to target Gateway shop, another BackendTrafficPolicy has already attached to it'),
        int('ancestor1Generation', 2),
        str('ancestor1Controller', EG),
      ],
    ),
  );
  assert.deepEqual(feedback.ancestors, [
    { gateway: 'api', entries: [{ status: 'True', reason: 'Accepted', message: 'Policy has been accepted.', observedGeneration: 3, controllerName: EG }] },
    {
      gateway: 'shop',
      entries: [
        {
          status: 'False',
          reason: 'Conflicted',
          message: 'Unable to target Gateway shop, another BackendTrafficPolicy has already attached to it',
          observedGeneration: 2,
          controllerName: EG,
        },
      ],
    },
  ]);
  assert.deepEqual(feedback.extra, {}, 'ancestor values are not the kind\'s own');
});

test('readClusterFeedback: a Gateway with no ancestor values has no entries; a work without a copy has no ancestors', () => {
  assert.deepEqual(readClusterFeedback(workFor(['shop'], [])).ancestors, [{ gateway: 'shop', entries: [] }]);
  assert.deepEqual(readClusterFeedback(workFor([], [str('ancestor0Status', 'True')])).ancestors, []);
  assert.deepEqual(readClusterFeedback(appliedWork([str('ancestor0Status', 'True')])).ancestors, []);
});

test('readClusterFeedback: JsonRaw lists (several entries, with the RawFeedbackJsonString gate) give one entry each', () => {
  const feedback = readClusterFeedback(
    workFor(
      ['shop'],
      [
        raw('ancestor0Status', ['True', 'False']),
        raw('ancestor0Reason', ['Accepted', 'Invalid']),
        raw('ancestor0Message', ['ok', 'bad section']),
        raw('ancestor0Generation', [3, 3]),
        raw('ancestor0Controller', [EG, 'example.com/other']),
      ],
    ),
  );
  assert.deepEqual(feedback.ancestors[0]?.entries, [
    { status: 'True', reason: 'Accepted', message: 'ok', observedGeneration: 3, controllerName: EG },
    { status: 'False', reason: 'Invalid', message: 'bad section', observedGeneration: 3, controllerName: 'example.com/other' },
  ]);
});

test('readClusterFeedback: a field list that cannot be matched up with the statuses is left out; bad statuses are skipped', () => {
  const feedback = readClusterFeedback(
    workFor(['shop'], [raw('ancestor0Status', ['True', 'Maybe', 'False']), raw('ancestor0Reason', ['Accepted', 'Invalid']), raw('ancestor0Generation', [1, 'x', 2])]),
  );
  assert.deepEqual(feedback.ancestors[0]?.entries, [{ status: 'True', observedGeneration: 1 }, { status: 'False', observedGeneration: 2 }]);
  for (const jsonRaw of ['not json', '{"a":1}']) {
    const odd = readClusterFeedback(workFor(['shop'], [{ name: 'ancestor0Status', fieldValue: { type: 'JsonRaw', jsonRaw } }]));
    assert.deepEqual(odd.ancestors[0]?.entries, [], jsonRaw);
  }
  assert.deepEqual(readClusterFeedback(workFor(['shop'], [int('ancestor0Status', 1)])).ancestors[0]?.entries, []);
});

test('readClusterFeedback reads the first condition type and ancestor name: evidence of a status of another shape', () => {
  const feedback = readClusterFeedback(appliedWork([str('firstConditionType', 'Ready'), str('firstAncestorName', 'other')]));
  assert.equal(feedback.firstConditionType, 'Ready');
  assert.equal(feedback.firstAncestorName, 'other');
  assert.deepEqual(feedback.extra, {});
  const none = readClusterFeedback(appliedWork([]));
  assert.equal('firstConditionType' in none || 'firstAncestorName' in none, false);
});

test('readClusterFeedback: appliedAt is the later of the Applied transition and the last spec or metadata write', () => {
  const applied = { type: 'Applied', status: 'True', reason: 'r', message: 'm', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:00Z' };
  const managedFields = [
    { manager: 'policy-sync', operation: 'Apply', time: '2026-01-01T00:05:00Z' },
    { manager: 'work-agent', operation: 'Update', subresource: 'status', time: '2026-01-01T00:09:00Z' },
    { manager: 'odd', operation: 'Update', time: 'not a time' },
  ];
  const retargeted = readClusterFeedback(workFor(['shop'], [], { managedFields, conditions: [applied] }));
  assert.equal(retargeted.appliedAt, Date.parse('2026-01-01T00:05:00Z'), 'status writes do not count');
  const later = readClusterFeedback(workFor(['shop'], [], { managedFields: managedFields.slice(0, 1), conditions: [{ ...applied, lastTransitionTime: '2026-01-01T00:07:00Z' }] }));
  assert.equal(later.appliedAt, Date.parse('2026-01-01T00:07:00Z'));
  const unknown = readClusterFeedback(workFor(['shop'], [], { conditions: [{ ...applied, lastTransitionTime: undefined }] }));
  assert.equal(unknown.appliedAt, undefined);
});

// Everything below is written by the spoke agent: a spoke can put anything there (docs/design/runtime.md#bounded-everything).

test('readClusterFeedback makes spoke reasons valid reasons and caps spoke messages at 4096 code points, marking the cut', () => {
  const feedback = readClusterFeedback(
    appliedWork([
      str('acceptedStatus', 'False'),
      str('acceptedReason', 'target_not_found'),
      str('acceptedMessage', 'm'.repeat(1_000_000)),
      str('enforcedStatus', 'False'),
      str('enforcedReason', `X${'y'.repeat(10_000)}`),
      str('enforcedMessage', 'red \u001b[31malert\u001b[0m'),
    ]),
  );
  assert.equal(feedback.accepted?.reason, 'TargetNotFound');
  assert.equal(feedback.accepted?.message, `${'m'.repeat(4095)}…`);
  assert.equal(feedback.enforced?.reason?.length, 128);
  assert.equal(feedback.enforced?.message, 'red \uFFFD[31malert\uFFFD[0m');
});

test('readClusterFeedback: an empty spoke reason is no reason, one with nothing usable becomes SpokeReason', () => {
  const feedback = readClusterFeedback(
    appliedWork([str('acceptedStatus', 'False'), str('acceptedReason', ''), str('enforcedStatus', 'False'), str('enforcedReason', '???')]),
  );
  assert.deepEqual(feedback.accepted, { status: 'False' });
  assert.deepEqual(feedback.enforced, { status: 'False', reason: 'SpokeReason' });
});

test('readClusterFeedback caps the reasons and messages of raw conditions and ancestor entries, and the names it reports', () => {
  const fromRaw = readClusterFeedback(appliedWork([raw('conditions', [{ type: 'Enforced', status: 'True', reason: 'all good!', message: 'ok\u0000' }])]));
  assert.deepEqual(fromRaw.enforced, { status: 'True', reason: 'AllGood', message: 'ok\uFFFD' });
  const ancestors = readClusterFeedback(
    workFor(['shop'], [str('ancestor0Status', 'False'), str('ancestor0Reason', 'not-accepted'), str('ancestor0Controller', `example.com/${'c'.repeat(400)}`)]),
  );
  assert.equal(ancestors.ancestors[0]?.entries[0]?.reason, 'NotAccepted');
  assert.equal(ancestors.ancestors[0]?.entries[0]?.controllerName?.length, 253);
  const names = readClusterFeedback(appliedWork([str('firstConditionType', 'T'.repeat(1000)), str('firstAncestorName', 'g'.repeat(1000))]));
  assert.equal(names.firstConditionType, `${'T'.repeat(252)}…`);
  assert.equal(names.firstAncestorName, `${'g'.repeat(252)}…`);
});

test('readClusterFeedback caps apply and feedback errors like messages', () => {
  const failed = work({
    conditions: [workCondition('Applied', 'False')],
    resourceStatus: {
      manifests: [
        manifestStatus(undefined, [
          { type: 'Applied', status: 'False', reason: 'AppliedManifestFailed', message: `\r${'x'.repeat(50_000)}` },
          { type: 'StatusFeedbackSynced', status: 'False', reason: 'bad reason', message: '' },
        ]),
      ],
    },
  });
  const feedback = readClusterFeedback(failed);
  assert.equal(feedback.applyError, `\uFFFD${'x'.repeat(4094)}…`);
  assert.equal(feedback.feedbackError, 'BadReason: status feedback failed');
});

test('readClusterFeedback keeps at most 16 of the kind\'s own values, named as rules may be, their strings capped', () => {
  const own = Array.from({ length: 20 }, (_, i) => str(`value${String(i).padStart(2, '0')}`, 'v'.repeat(5000)));
  const feedback = readClusterFeedback(appliedWork([str('bad name!', 'x'), str('n'.repeat(64), 'x'), ...own]));
  assert.deepEqual(Object.keys(feedback.extra), own.slice(0, 16).map((v) => v.name));
  assert.equal(feedback.extra.value00, `${'v'.repeat(4095)}…`);
});

test('readClusterFeedback drops a JsonRaw value over 4 KiB (a cut JSON text is no JSON) and reads no more values than the rules can give', () => {
  const big = [{ type: 'Enforced', status: 'True', reason: 'Enforced', message: 'x'.repeat(5000) }];
  const feedback = readClusterFeedback(appliedWork([raw('conditions', big), raw('limits', 'y'.repeat(5000))]));
  assert.equal(feedback.enforced, undefined);
  assert.deepEqual(feedback.extra, {});
  // A JsonRaw value that fits is kept, as its text (cut only where shown).
  assert.deepEqual(readClusterFeedback(appliedWork([raw('limits', { a: 1 })])).extra, { limits: '{"a":1}' });
  const padding = Array.from({ length: MAX_FEEDBACK_VALUES }, (_, i) => str(`pad${i}`, 'p'));
  const late = readClusterFeedback(appliedWork([...padding, str('enforcedStatus', 'True')]));
  assert.equal(late.enforced, undefined);
});

test('readClusterFeedback reads a work the caches froze once per version, and a work that can change in place each time', () => {
  const frozen = appliedWork(DEFAULTS);
  deepFreeze(frozen.status);
  deepFreeze(frozen.spec);
  const first = readClusterFeedback(frozen);
  assert.equal(readClusterFeedback(frozen), first, 'the same version: read once');
  assert.ok(Object.isFrozen(first), 'shared between readers, so frozen');
  assert.equal(readClusterFeedback({ ...frozen, metadata: { ...frozen.metadata } }), first, 'another view of the same version');
  // Another generation of the same status, or another spec: read again.
  const regenerated = readClusterFeedback({ ...frozen, metadata: { ...frozen.metadata, generation: 4 } });
  assert.notEqual(regenerated, first);
  assert.equal(regenerated.appliedObservedCurrent, false, 'Applied observed generation 3, the work is at 4');
  assert.notEqual(readClusterFeedback({ ...frozen, spec: deepFreeze({}) }), first);
  // Not frozen: a change in place is seen.
  const live = appliedWork(DEFAULTS);
  assert.equal(readClusterFeedback(live).enforced?.reason, 'Overridden');
  const manifest = (live.status as { resourceStatus: { manifests: { statusFeedback: { values: Value[] } }[] } }).resourceStatus.manifests[0]!;
  manifest.statusFeedback.values = manifest.statusFeedback.values.map((v) => (v.name === 'enforcedReason' ? str('enforcedReason', 'Enforced') : v));
  assert.equal(readClusterFeedback(live).enforced?.reason, 'Enforced');
  assert.ok(!Object.isFrozen(readClusterFeedback(live)));
});
