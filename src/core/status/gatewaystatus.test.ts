import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Condition } from '../k8s/conditions.ts';
import type { KubeObject } from '../k8s/objects.ts';
import {
  MAX_GATEWAY_CONDITIONS,
  MAX_GATEWAY_MESSAGE_LENGTH,
  POLICIES_ENFORCED,
  affectedConditionType,
  cachedFingerprint,
  classOfOurConditions,
  classStateOf,
  conditionsToApply,
  gatewayConditions,
  ownedConditionTypes,
  ownedConditionsEntry,
  desiredFingerprint,
  type GatewayStatusInput,
  policyStandings,
  type PolicyStandings,
  type TargetingPolicy,
} from './gatewaystatus.ts';
import type { ClusterStatus, PolicyStatus } from './policystatus.ts';

const AUTH = { group: 'kuadrant.io', resource: 'authpolicies', kind: 'AuthPolicy' };
const RLP = { group: 'kuadrant.io', resource: 'ratelimitpolicies', kind: 'RateLimitPolicy' };

function cluster(state: ClusterStatus['state'], reason: string = state): ClusterStatus {
  return { state, applied: state !== 'Overridden', available: true, enforced: state === 'Enforced' ? 'True' : 'False', reason, message: '', upToDate: true };
}

function status(clusters: Record<string, ClusterStatus>): PolicyStatus {
  const states = Object.values(clusters).map((c) => c.state);
  const n = (s: string): number => states.filter((x) => x === s).length;
  return { summary: { clusters: states.length, applied: states.length, enforced: n('Enforced'), overridden: n('Overridden'), pending: n('Pending'), failed: n('Failed') }, clusters };
}

function policy(name: string, s: PolicyStandings | undefined, kind = AUTH, namespace = 'ns'): TargetingPolicy {
  return { ...kind, namespace, name, status: s };
}

function input(over: Partial<GatewayStatusInput> = {}): GatewayStatusInput {
  return {
    namespace: 'ns',
    name: 'gw',
    generation: 3,
    className: 'gc',
    classState: { accepted: true },
    placement: { placement: 'ns/p', clusters: ['c1', 'c2'], unavailable: [], refused: [] },
    kinds: [AUTH, RLP],
    policies: [],
    existing: [],
    owned: new Set(),
    ...over,
  };
}

function byType(conditions: Condition[]): Map<string, Condition> {
  return new Map(conditions.map((c) => [c.type, c]));
}

function one(conditions: Condition[], type: string): Condition {
  const c = byType(conditions).get(type);
  assert.ok(c, `condition ${type} in ${JSON.stringify(conditions)}`);
  return c;
}

test('a placed Gateway of an accepted class: Accepted and Programmed True, observedGeneration on every condition', () => {
  const conditions = gatewayConditions(input({ policies: [policy('a', status({ c1: cluster('Enforced'), c2: cluster('Enforced') }))] }));
  assert.deepEqual(
    conditions.map((c) => c.type),
    ['Accepted', 'Programmed', POLICIES_ENFORCED, 'policysync.kuadrant.io/AuthPolicyAffected'],
  );
  for (const c of conditions) {
    assert.equal(c.observedGeneration, 3);
    assert.equal(c.lastTransitionTime, undefined, 'stamped only when applied');
  }
  assert.deepEqual(one(conditions, 'Accepted'), { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'GatewayClass gc: params in force', observedGeneration: 3 });
  assert.deepEqual(one(conditions, 'Programmed'), { type: 'Programmed', status: 'True', reason: 'Programmed', message: 'placed on 2 clusters: c1, c2', observedGeneration: 3 });
  const affected = one(conditions, 'policysync.kuadrant.io/AuthPolicyAffected');
  assert.deepEqual([affected.status, affected.reason, affected.message], ['True', 'Affected', 'affected by AuthPolicy ns/a']);
  const enforced = one(conditions, POLICIES_ENFORCED);
  assert.deepEqual([enforced.status, enforced.reason, enforced.message], ['True', 'Enforced', '1 policy enforced on every placed cluster (2: c1, c2)']);
});

test('no generation: no observedGeneration field at all', () => {
  for (const c of gatewayConditions(input({ generation: undefined }))) assert.equal('observedGeneration' in c, false);
});

test('refused params: Accepted False, reason Invalid, naming the bad field; kinds not synced are named on an accepted class', () => {
  const refused = one(gatewayConditions(input({ classState: { accepted: false, message: 'policiesToSync.0.group: Required; the last valid configuration stays in force' } })), 'Accepted');
  assert.deepEqual([refused.status, refused.reason], ['False', 'Invalid']);
  assert.equal(refused.message, 'GatewayClass gc: params refused: policiesToSync.0.group: Required; the last valid configuration stays in force');
  const partly = one(gatewayConditions(input({ classState: { accepted: true, kindProblems: 'a.v1.x: NotFound\nb.v1.y: Forbidden' } })), 'Accepted');
  assert.deepEqual([partly.status, partly.message], ['True', 'GatewayClass gc: params in force; policy kinds not synced: a.v1.x: NotFound; b.v1.y: Forbidden']);
});

test('classStateOf reads the class reconciler conditions, only when they describe the current generation', () => {
  const cls = (conditions: Condition[], generation = 2): KubeObject => ({ apiVersion: 'v1', kind: 'GatewayClass', metadata: { name: 'gc', generation }, status: { conditions } });
  const c = (type: string, s: Condition['status'], message = '', observedGeneration = 2): Condition => ({ type, status: s, reason: 'R', message, observedGeneration });
  assert.equal(classStateOf(cls([])), undefined, 'not written yet');
  assert.equal(classStateOf(cls([c('Accepted', 'True', '', 1)])), undefined, 'stale: an older generation');
  assert.equal(classStateOf(cls([c('Accepted', 'Unknown')])), undefined);
  assert.deepEqual(classStateOf(cls([c('Accepted', 'True'), c('PoliciesSynced', 'True')])), { accepted: true });
  assert.deepEqual(classStateOf(cls([c('Accepted', 'True'), c('PoliciesSynced', 'False', 'x: NotFound')])), { accepted: true, kindProblems: 'x: NotFound' });
  assert.deepEqual(classStateOf(cls([c('Accepted', 'False', 'params bad')])), { accepted: false, message: 'params bad' });
});

test('Programmed: nowhere is NoResources; decisions in flux or a cluster down is Pending; refused clusters are NoResources; each named', () => {
  const programmed = (placement: GatewayStatusInput['placement']): Condition => one(gatewayConditions(input({ placement })), 'Programmed');
  const none = programmed({ clusters: [], unavailable: [], refused: [] });
  assert.deepEqual([none.status, none.reason, none.message], ['False', 'NoResources', 'placed on no cluster: no Placement named (label cluster.open-cluster-management.io/placement)']);
  const empty = programmed({ placement: 'ns/p', clusters: [], unavailable: [], refused: [] });
  assert.equal(empty.message, 'placed on no cluster: Placement ns/p places it on no available cluster');
  const down = programmed({ placement: 'ns/p', clusters: ['c1', 'c2'], unavailable: [{ cluster: 'c2', message: 'cluster c2 is not available' }], refused: [] });
  assert.deepEqual([down.status, down.reason, down.message], ['False', 'Pending', 'placed on 1 of 2 clusters: c1; missing c2: cluster c2 is not available']);
  const allDown = programmed({ placement: 'ns/p', clusters: ['c1'], unavailable: [{ cluster: 'c1', message: 'cluster c1 is not available' }], refused: [] });
  assert.deepEqual([allDown.status, allDown.reason], ['False', 'NoResources']);
  assert.match(allDown.message, /c1 is not available/);
  const flux = programmed({ placement: 'ns/p', clusters: ['c1'], unavailable: [], refused: [], unsettled: { reason: 'DecisionsUpdating', message: 'Placement ns/p has not decided yet' } });
  assert.deepEqual([flux.status, flux.reason, flux.message], ['False', 'Pending', 'placed on 1 cluster: c1: Placement ns/p has not decided yet']);
  const refused = programmed({
    placement: 'ns/p',
    clusters: ['c1'],
    unavailable: [],
    refused: [{ cluster: 'c9', message: 'cluster c9 is in no ManagedClusterSet bound to ns' }],
    unsettled: { reason: 'ClustersRefused', message: 'Placement ns/p decides clusters its namespace is not bound to: c9' },
  });
  assert.deepEqual([refused.status, refused.reason], ['False', 'NoResources']);
  assert.match(refused.message, /^placed on 1 of 2 clusters: c1; missing c9: /);
});

test('one Affected condition per kind with policies, none for a kind without; only synced kinds and the Gateway namespace count', () => {
  const conditions = gatewayConditions(
    input({
      kinds: [AUTH],
      policies: [policy('b', undefined), policy('a', undefined), policy('r', undefined, RLP), policy('far', undefined, AUTH, 'elsewhere')],
    }),
  );
  const types = conditions.map((c) => c.type);
  assert.ok(types.includes('policysync.kuadrant.io/AuthPolicyAffected'));
  assert.ok(!types.includes('policysync.kuadrant.io/RateLimitPolicyAffected'), 'a kind the class does not sync');
  assert.equal(one(conditions, 'policysync.kuadrant.io/AuthPolicyAffected').message, 'affected by AuthPolicy ns/a, ns/b');
  assert.equal(one(conditions, POLICIES_ENFORCED).message.includes('far'), false, 'another namespace is not synced');
  const none = gatewayConditions(input());
  assert.deepEqual(
    none.map((c) => c.type),
    ['Accepted', 'Programmed', POLICIES_ENFORCED],
  );
  assert.deepEqual([one(none, POLICIES_ENFORCED).status, one(none, POLICIES_ENFORCED).reason], ['False', 'NoPolicies']);
});

test('two synced kinds sharing a Kind name in different groups get unambiguous types', () => {
  const other = { group: 'example.com', resource: 'authpolicies', kind: 'AuthPolicy' };
  const conditions = gatewayConditions(input({ kinds: [AUTH, other], policies: [policy('a', undefined), policy('x', undefined, other)] }));
  const types = conditions.map((c) => c.type).filter((t) => t.endsWith('Affected'));
  assert.deepEqual(types, ['policysync.kuadrant.io/example.com.AuthPolicyAffected', 'policysync.kuadrant.io/kuadrant.io.AuthPolicyAffected']);
  assert.equal(affectedConditionType('AuthPolicy', 'kuadrant.io', false), 'policysync.kuadrant.io/AuthPolicyAffected');
  const long = affectedConditionType('AuthPolicy', `${'a'.repeat(290)}.io`, true);
  assert.match(long, /^policysync\.kuadrant\.io\/[0-9a-f]{16}\.AuthPolicyAffected$/);
  // Gateway API's pattern for condition types.
  const pattern = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
  for (const t of [...types, long]) assert.match(t, pattern);
});

test('PoliciesEnforced: False naming the clusters and policies not enforced; Failed before Unknown before Pending', () => {
  const enforced = (policies: TargetingPolicy[]): Condition => one(gatewayConditions(input({ policies })), POLICIES_ENFORCED);
  const failed = enforced([
    policy('a', status({ c1: cluster('Enforced'), c2: cluster('Failed', 'TargetNotFound') })),
    policy('b', status({ c1: cluster('Pending'), c2: cluster('Enforced') })),
  ]);
  assert.deepEqual([failed.status, failed.reason], ['False', 'Failed']);
  assert.equal(failed.message, 'not enforced on 2 of 2 placed clusters: c1: AuthPolicy ns/b Pending; c2: AuthPolicy ns/a Failed (TargetNotFound)');
  const pending = enforced([policy('a', status({ c1: cluster('Enforced') }))]);
  assert.deepEqual([pending.reason, pending.message], ['Pending', 'not enforced on 1 of 2 placed clusters: c2: AuthPolicy ns/a Pending']);
  const unreported = enforced([policy('a', undefined)]);
  assert.equal(unreported.reason, 'Pending');
  assert.equal(unreported.message, 'not enforced on 2 of 2 placed clusters: c1: AuthPolicy ns/a Pending; c2: AuthPolicy ns/a Pending', 'the same words as once reported Pending: no write for that move');
  const unknown = enforced([policy('a', status({ c1: cluster('Unknown', 'ClusterUnreachable'), c2: cluster('Pending', 'Applying') }))]);
  assert.deepEqual([unknown.reason, unknown.message], ['Unknown', 'not enforced on 2 of 2 placed clusters: c1: AuthPolicy ns/a Unknown (ClusterUnreachable); c2: AuthPolicy ns/a Pending']);
});

test('PoliciesEnforced: a deleted policy\'s copy still running where it targeted the Gateway makes it False, Lingering (Failed alone outranks it), naming the policy and its clusters', () => {
  const enforced = (over: Partial<GatewayStatusInput>): Condition => one(gatewayConditions(input(over)), POLICIES_ENFORCED);
  const gone = { ...AUTH, namespace: 'ns', name: 'deny-all', clusters: ['c2'] };
  const alone = enforced({ lingering: [gone] });
  assert.deepEqual([alone.status, alone.reason], ['False', 'Lingering']);
  assert.equal(alone.message, 'no policy of a kind the GatewayClass syncs targets this Gateway; copies of policies deleted from the hub still run: AuthPolicy ns/deny-all on c2');
  const beside = enforced({ policies: [policy('a', status({ c1: cluster('Enforced'), c2: cluster('Enforced') }))], lingering: [gone] });
  assert.deepEqual([beside.status, beside.reason], ['False', 'Lingering'], 'every hub policy enforced is not all that runs');
  assert.equal(beside.message, '1 policy enforced on every placed cluster (2: c1, c2); copies of policies deleted from the hub still run: AuthPolicy ns/deny-all on c2');
  const pending = enforced({ policies: [policy('a', status({ c1: cluster('Enforced') }))], lingering: [gone] });
  assert.deepEqual([pending.reason, pending.message], ['Lingering', 'not enforced on 1 of 2 placed clusters: c2: AuthPolicy ns/a Pending; copies of policies deleted from the hub still run: AuthPolicy ns/deny-all on c2']);
  assert.equal(enforced({ policies: [policy('a', status({ c1: cluster('Failed'), c2: cluster('Enforced') }))], lingering: [gone] }).reason, 'Failed');
  assert.equal(enforced({ placement: { clusters: [], unavailable: [], refused: [] }, policies: [policy('a', undefined)], lingering: [gone] }).reason, 'Lingering', 'it runs even where the Gateway is no longer placed');
  assert.deepEqual([enforced({ lingering: [{ ...gone, namespace: 'far' }] }).reason, enforced({ lingering: [{ ...gone, clusters: [] }] }).reason], ['NoPolicies', 'NoPolicies'], 'another namespace, or no cluster, is nothing here');
});

test('policyStandings: the Gateway\'s conditions from the cut verdicts are those from the whole status; equal standings are one object', () => {
  const withProblem: PolicyStatus = { ...status({ c1: cluster('Pending', 'Applying') }), problems: [{ reason: 'TargetNotFound', message: 'the Gateway gw is not found' }] };
  const truncated: PolicyStatus = { summary: { clusters: 2, applied: 2, enforced: 1, overridden: 0, pending: 1, failed: 0, truncated: true } };
  const cases: Array<Array<PolicyStatus | undefined>> = [
    [status({ c1: cluster('Enforced'), c2: cluster('Overridden') }), status({ c1: cluster('Failed', 'TargetNotFound'), c2: cluster('Unknown', 'ClusterUnreachable') })],
    [withProblem, undefined],
    [truncated, status({ c2: { ...cluster('Enforced'), message: 'a long message the Gateway never shows', variants: ['v@1'] } })],
  ];
  for (const statuses of cases) {
    const whole = gatewayConditions(input({ policies: statuses.map((s, i) => policy(`p${i}`, s)) }));
    const cut = gatewayConditions(input({ policies: statuses.map((s, i) => policy(`p${i}`, policyStandings(s))) }));
    assert.deepEqual(cut, whole);
  }
  const [a, b] = [policyStandings(status({ c1: cluster('Enforced') })), policyStandings(status({ c1: cluster('Enforced'), c2: cluster('Enforced') }))];
  assert.equal(a?.clusters?.c1, b?.clusters?.c2, 'one shared { state, reason } for every Enforced cluster');
  assert.deepEqual(policyStandings(withProblem), { summary: withProblem.summary, clusters: { c1: { state: 'Pending', reason: 'Applying' } }, problems: [{ reason: 'TargetNotFound' }] });
  assert.equal(policyStandings(undefined), undefined);
});

test('PoliciesEnforced: an overridden cluster counts as enforced (local wins) and is named', () => {
  const c = one(gatewayConditions(input({ policies: [policy('a', status({ c1: cluster('Enforced'), c2: cluster('Overridden') }))] })), POLICIES_ENFORCED);
  assert.deepEqual([c.status, c.reason], ['True', 'Enforced']);
  assert.equal(c.message, '1 policy enforced on every placed cluster (2: c1, c2); overridden by local policies, which win as the RFC intends: AuthPolicy ns/a on c2');
});

test('PoliciesEnforced: a truncated annotation counts by its summary; no cluster is NoClusters', () => {
  const truncated = (enforcedCount: number): PolicyStatus => ({ summary: { clusters: 2, applied: 2, enforced: enforcedCount, overridden: 0, pending: 2 - enforcedCount, failed: 0, truncated: true } });
  assert.equal(one(gatewayConditions(input({ policies: [policy('a', truncated(2))] })), POLICIES_ENFORCED).status, 'True');
  const partial = one(gatewayConditions(input({ policies: [policy('a', truncated(1))] })), POLICIES_ENFORCED);
  assert.deepEqual([partial.status, partial.reason], ['False', 'Unknown']);
  assert.match(partial.message, /StatusTruncated/);
  const nowhere = one(gatewayConditions(input({ placement: { clusters: [], unavailable: [], refused: [] }, policies: [policy('a', undefined)] })), POLICIES_ENFORCED);
  assert.deepEqual([nowhere.status, nowhere.reason, nowhere.message], ['False', 'NoClusters', '1 policy targets this Gateway, which is placed on no cluster']);
});

test('messages are capped and cleaned of control characters', () => {
  const many = Array.from({ length: 200 }, (_, i) => policy(`policy-with-a-rather-long-name-${i}\u001b[31m`, undefined));
  for (const c of gatewayConditions(input({ policies: many }))) {
    assert.ok(Array.from(c.message).length <= MAX_GATEWAY_MESSAGE_LENGTH, `${c.type}: ${c.message.length}`);
    assert.equal(c.message.includes('\u001b'), false);
  }
  assert.match(one(gatewayConditions(input({ policies: many })), 'policysync.kuadrant.io/AuthPolicyAffected').message, / and 190 more$/);
});

test('others\' conditions keep their room: the kind conditions are the first to go past the CRD limit of 8', () => {
  const foreign = (n: number): Condition[] => Array.from({ length: n }, (_, i) => ({ type: `kuadrant.io/Kind${i}Affected`, status: 'True', reason: 'Accepted', message: '' }));
  const kinds = Array.from({ length: 6 }, (_, i) => ({ group: 'kuadrant.io', resource: `k${i}s`, kind: `K${i}` }));
  const policies = kinds.map((k, i) => policy(`p${i}`, undefined, k));
  assert.equal(gatewayConditions(input({ kinds, policies })).length, MAX_GATEWAY_CONDITIONS);
  const withOthers = gatewayConditions(input({ kinds, policies, existing: foreign(3) }));
  assert.equal(withOthers.length, MAX_GATEWAY_CONDITIONS - 3);
  assert.deepEqual(withOthers.slice(0, 3).map((c) => c.type), ['Accepted', 'Programmed', POLICIES_ENFORCED]);
  // Our own types, and the defaults Accepted and Programmed, take no room from us.
  const owned = gatewayConditions(input({ kinds, policies, existing: [...foreign(1), { type: 'policysync.kuadrant.io/GoneAffected', status: 'True', reason: 'Affected', message: '' }], owned: new Set(['policysync.kuadrant.io/GoneAffected']) }));
  assert.equal(owned.length, MAX_GATEWAY_CONDITIONS - 1);
});

test('conditionsToApply keeps lastTransitionTime when the status is unchanged, stamps it otherwise', () => {
  const existing: Condition[] = [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'old', observedGeneration: 1, lastTransitionTime: '2020-01-01T00:00:00Z' },
    { type: 'Programmed', status: 'Unknown', reason: 'Pending', message: 'Waiting for controller', lastTransitionTime: '1970-01-01T00:00:00Z' },
    { type: 'other.io/Thing', status: 'True', reason: 'X', message: '', lastTransitionTime: '2020-01-01T00:00:00Z' },
  ];
  const desired = gatewayConditions(input());
  const applied = byType(conditionsToApply(existing, desired, '2025-05-05T05:05:05Z'));
  assert.equal(applied.get('Accepted')?.lastTransitionTime, '2020-01-01T00:00:00Z');
  assert.equal(applied.get('Accepted')?.message, 'GatewayClass gc: params in force');
  assert.equal(applied.get('Programmed')?.lastTransitionTime, '2025-05-05T05:05:05Z');
  assert.equal(applied.get(POLICIES_ENFORCED)?.lastTransitionTime, '2025-05-05T05:05:05Z');
  assert.equal(applied.has('other.io/Thing'), false, 'only our types are applied');
});

test('fingerprints: equal exactly when nothing needs writing — a changed field, or a type of ours no longer wanted, needs a write', () => {
  const desired = gatewayConditions(input());
  const written = conditionsToApply([], desired, '2025-01-01T00:00:00Z');
  const foreign: Condition = { type: 'other.io/Thing', status: 'True', reason: 'X', message: '' };
  const owned = new Set(desired.map((c) => c.type));
  assert.equal(cachedFingerprint([...written, foreign], owned, desired), desiredFingerprint(desired), 'others\' conditions and times do not count');
  assert.equal(cachedFingerprint([...written], new Set(), desired), desiredFingerprint(desired), 'ownership of what is already right does not matter');
  const bumped = gatewayConditions(input({ generation: 4 }));
  assert.notEqual(cachedFingerprint(written, owned, bumped), desiredFingerprint(bumped), 'a new generation is written');
  const stale: Condition = { type: 'policysync.kuadrant.io/GoneAffected', status: 'True', reason: 'Affected', message: '' };
  assert.notEqual(cachedFingerprint([...written, stale], new Set([...owned, stale.type]), desired), desiredFingerprint(desired), 'ours to remove');
  assert.equal(cachedFingerprint([...written, stale], owned, desired), desiredFingerprint(desired), 'the same type written by someone else is theirs');
});

test('ownedConditionTypes reads the types our status applies own from managedFields, and reads back what a cache keeps', () => {
  const managedFields = [
    { manager: 'policy-sync', operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"Accepted"}': { '.': {}, 'f:status': {} }, 'k:{"type":"policysync.kuadrant.io/PoliciesEnforced"}': {}, '.': {} } } } },
    // Our spec writes, others' status writes, and our non-apply status writes own nothing here.
    { manager: 'policy-sync', operation: 'Apply', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"Spec"}': {} } } } },
    { manager: 'other', operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"Programmed"}': {} } } } },
    { manager: 'policy-sync', operation: 'Update', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"Merged"}': {} } } } },
    { manager: 'policy-sync', operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': { 'k:not json': {} } } } },
    null,
  ];
  const owned = ownedConditionTypes(managedFields, 'policy-sync');
  assert.deepEqual([...owned].sort(), ['Accepted', 'policysync.kuadrant.io/PoliciesEnforced']);
  assert.deepEqual(ownedConditionTypes([ownedConditionsEntry('policy-sync', owned)], 'policy-sync'), owned);
  assert.equal(ownedConditionTypes(undefined, 'policy-sync').size, 0);
});

test('classOfOurConditions: the class our own Accepted condition names; none when the Accepted condition is not ours', () => {
  const accepted = (message: string): Condition => ({ type: 'Accepted', status: 'True', reason: 'Accepted', message });
  const ours = new Set(['Accepted', POLICIES_ENFORCED]);
  assert.equal(classOfOurConditions([accepted('GatewayClass gc-1: params in force')], ours), 'gc-1');
  assert.equal(classOfOurConditions([accepted('GatewayClass gc.example: params refused: x')], ours), 'gc.example');
  assert.equal(classOfOurConditions([accepted('GatewayClass gc-1: params in force')], new Set([POLICIES_ENFORCED])), undefined, 'Accepted written by another field manager');
  assert.equal(classOfOurConditions([accepted('Waiting for controller')], ours), undefined);
  assert.equal(classOfOurConditions([], ours), undefined);
});
