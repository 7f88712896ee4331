import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classConditions, kindProblemLine, kindsInForce, parseParamsObject, progressiveRolloutCondition, readParamsRef } from './classparams.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { ALL } from './strategy.ts';

const gatewayClass = (parametersRef: unknown): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'GatewayClass',
  metadata: { name: 'c' },
  spec: { controllerName: 'x', parametersRef },
});

test('readParamsRef accepts a ConfigMap and a PolicySyncParams and names what is wrong otherwise', () => {
  assert.deepEqual(readParamsRef(gatewayClass({ group: '', kind: 'ConfigMap', name: 'p', namespace: 'ns' })), {
    ok: true,
    ref: { kind: 'ConfigMap', namespace: 'ns', name: 'p' },
  });
  assert.deepEqual(readParamsRef(gatewayClass({ group: 'policysync.kuadrant.io', kind: 'PolicySyncParams', name: 'p', namespace: 'ns' })), {
    ok: true,
    ref: { kind: 'PolicySyncParams', namespace: 'ns', name: 'p' },
  });
  assert.deepEqual(readParamsRef(gatewayClass({ group: '', kind: 'ConfigMap', name: 'p' })), {
    ok: false,
    error: 'spec.parametersRef.namespace is required',
  });
  assert.match((readParamsRef(gatewayClass(undefined)) as { error: string }).error, /spec.parametersRef is required/);
  assert.match((readParamsRef(gatewayClass({ group: 'x.io', kind: 'Secret', name: 'p', namespace: 'n' })) as { error: string }).error, /unsupported Secret of group "x.io"/);
});

test('parseParamsObject reads the `params` key of a ConfigMap and the spec of a PolicySyncParams', () => {
  const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p', namespace: 'ns' }, data: { params: '{"policiesToSync":[]}' } };
  assert.deepEqual(parseParamsObject('ConfigMap', cm), { ok: true, params: { policiesToSync: [], downstreamNamespace: '{namespace}', rolloutStrategy: ALL, drift: 'Correct' } });
  const empty: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p', namespace: 'ns' }, data: {} };
  assert.deepEqual(parseParamsObject('ConfigMap', empty), { ok: false, errors: ['ConfigMap ns/p has no key "params"'] });
  const psp: KubeObject = { apiVersion: 'policysync.kuadrant.io/v1alpha1', kind: 'PolicySyncParams', metadata: { name: 'p' }, spec: { policiesToSync: [], downstreamNamespace: 'kuadrant-{namespace}' } };
  assert.deepEqual(parseParamsObject('PolicySyncParams', psp), { ok: true, params: { policiesToSync: [], downstreamNamespace: 'kuadrant-{namespace}', rolloutStrategy: ALL, drift: 'Correct' } });
});

test('classConditions: valid params with one bad kind give Accepted=True and PoliciesSynced=False naming the entry', () => {
  const conditions = classConditions({
    generation: 3,
    paramsErrors: [],
    keepingLastGood: false,
    kinds: [
      { gvr: { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' } },
      { gvr: { group: 'kuadrant.io', version: 'v9', resource: 'authpolicies' }, problem: 'NotFound' },
      { gvr: { group: '', version: 'v1', resource: 'configmaps' }, problem: 'NotAPolicy' },
    ],
  });
  assert.deepEqual(conditions, [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'params are valid', observedGeneration: 3 },
    {
      type: 'PoliciesSynced',
      status: 'False',
      reason: 'InvalidPolicyKinds',
      message: 'authpolicies.v9.kuadrant.io: NotFound\nconfigmaps.v1: NotAPolicy',
      observedGeneration: 3,
    },
  ]);
});

test('classConditions: invalid params say so on both conditions and whether the last good configuration stays', () => {
  const [accepted, synced] = classConditions({ generation: 1, paramsErrors: ['unrecognized key "foo"'], keepingLastGood: true, kinds: [] });
  assert.equal(accepted?.status, 'False');
  assert.equal(accepted?.reason, 'InvalidParameters');
  assert.equal(accepted?.message, 'unrecognized key "foo"; the last valid configuration stays in force');
  assert.equal(synced?.reason, 'InvalidParameters');
  const all = classConditions({ generation: 1, paramsErrors: [], keepingLastGood: false, kinds: [{ gvr: { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' } }] });
  assert.deepEqual(all[1], { type: 'PoliciesSynced', status: 'True', reason: 'AllKindsValid', message: '1 policy kinds synced', observedGeneration: 1 });
});

test('kindsInForce: a valid entry is in force; a failing one keeps its last good entry (any version), else is out', () => {
  const good = (version: string) => ({ gvr: { group: 'kuadrant.io', version, resource: 'authpolicies' }, tag: version });
  const rlp = { group: 'kuadrant.io', version: 'v1', resource: 'ratelimitpolicies' };
  const previous = new Map([['authpolicies.kuadrant.io', good('v1')]]);

  // Validated: the new entry replaces the old one (a version switch in place).
  let r = kindsInForce(previous, [{ gvr: good('v2').gvr, good: good('v2') }]);
  assert.deepEqual([...r.inForce], [['authpolicies.kuadrant.io', good('v2')]]);
  assert.deepEqual(r.checks, [{ gvr: good('v2').gvr }]);

  // Failing for any reason: the last good entry stays in force and the report says so.
  for (const problem of ['NotFound', 'NotAPolicy', 'Forbidden', 'CheckFailed'] as const) {
    r = kindsInForce(previous, [{ gvr: good('v2').gvr, problem }, { gvr: rlp, problem }]);
    assert.deepEqual([...r.inForce], [['authpolicies.kuadrant.io', good('v1')]], problem);
    assert.deepEqual(r.checks, [{ gvr: good('v2').gvr, problem, keptVersion: 'v1' }, { gvr: rlp, problem }]);
    assert.equal(kindProblemLine(r.checks[0]!), `authpolicies.v2.kuadrant.io: ${problem} (the last good configuration, version v1, stays in force)`);
  }
  // Only an edit of valid params removes a kind: an entry that is not listed any more is not in force.
  assert.equal(kindsInForce(previous, [{ gvr: rlp, good: { gvr: rlp, tag: 'rlp' } }]).inForce.has('authpolicies.kuadrant.io'), false);
  // With no previous configuration (start-up), a failing kind is simply not in force.
  assert.equal(kindsInForce(undefined, [{ gvr: good('v1').gvr, problem: 'Forbidden' }]).inForce.size, 0);
});

test('progressiveRolloutCondition: True when every kind can be gated on; False naming each kind that cannot, and that it is synced all the same', () => {
  assert.deepEqual(progressiveRolloutCondition({ generation: 4, ungated: [] }), {
    type: 'ProgressiveRolloutReady',
    status: 'True',
    reason: 'GenerationsReported',
    message: "the Progressive rolloutStrategy can gate on every synced kind: each one's CRD lets its controller say which generation it observed",
    observedGeneration: 4,
  });
  const one = progressiveRolloutCondition({ generation: 4, ungated: ['widgets.v1.example.com'] });
  assert.equal(one.status, 'False');
  assert.equal(one.reason, 'NoObservedGeneration');
  assert.equal(
    one.message,
    'under the Progressive rolloutStrategy no cluster can succeed for widgets.v1.example.com: its CRD has no status.observedGeneration, status.conditions[].observedGeneration or status.ancestors[].conditions[].observedGeneration, ' +
      'so no verdict of the controller is known to be about the revision a cluster runs, and each cluster fails at progressDeadline. ' +
      'They are synced all the same; roll their policies out All (the annotation policysync.kuadrant.io/rollout-strategy: All)',
  );
  const two = progressiveRolloutCondition({ generation: 4, ungated: ['widgets.v1.example.com', 'gadgets.v2.example.com'] });
  assert.match(two.message, /^under the Progressive rolloutStrategy no cluster can succeed for gadgets\.v2\.example\.com, widgets\.v1\.example\.com: their CRDs have no /);
});
