import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideRemoval, type ClassKnowledge, type CrdState, type RemovalInput } from './removal.ts';

const KIND = 'authpolicies.kuadrant.io';
const synced = { works: true, classes: true, gateways: true, decisions: true };

function cls(state: ClassKnowledge['state'], listed: boolean, validated: boolean): ClassKnowledge {
  return { state, listed: new Set(listed ? [KIND] : []), synced: new Set(listed && validated ? [KIND] : []) };
}

test('a policy deleted from a synced cache is confirmed live before its works go', () => {
  const input: RemovalInput = { groupResource: KIND, caches: synced, classes: new Map([['a', cls('inForce', true, true)]]), watch: { synced: true } };
  assert.deepEqual(decideRemoval(input), { action: 'confirm' });
  assert.deepEqual(decideRemoval({ ...input, confirmation: { policyExists: false, crd: 'live' } }), { action: 'delete', reason: 'PolicyDeleted' });
  assert.equal(decideRemoval({ ...input, confirmation: { policyExists: true, crd: 'live' } }).action, 'keep');
});

test('policies that went with their CRD keep their works (CRD absent, terminating, re-created, unreadable)', () => {
  const base: RemovalInput = { groupResource: KIND, caches: synced, classes: new Map([['a', cls('inForce', true, true)]]), watch: { synced: true } };
  for (const crd of ['absent', 'terminating', 'unreadable', 'replaced'] as const) {
    const d = decideRemoval({ ...base, confirmation: { policyExists: false, crd } });
    assert.equal(d.action, 'keep', crd);
  }
});

test('a class whose params were never valid since start-up keeps the works of policies on its Gateways', () => {
  const d = decideRemoval({
    groupResource: KIND,
    caches: synced,
    classes: new Map([['a', cls('inForce', true, true)], ['b', cls('unknown', false, false)]]),
    watch: { synced: true },
    policy: { deleting: false, targetClasses: ['b'] },
  });
  assert.deepEqual(d, { action: 'keep', reason: 'ClassConfigurationUnknown', message: 'the params of GatewayClass b have not been valid since start-up' });
});

test('a copy that local policies cover on a cluster goes on the same terms as one no longer targeted, named for its reason', () => {
  const input = (state: ClassKnowledge['state']): RemovalInput => ({
    groupResource: KIND,
    caches: synced,
    classes: new Map([['a', cls(state, true, true)]]),
    watch: { synced: true },
    policy: { deleting: false, targetClasses: ['a'], locallyOverridden: true },
  });
  assert.deepEqual(decideRemoval(input('inForce')), { action: 'delete', reason: 'LocallyOverridden' });
  assert.equal(decideRemoval(input('unknown')).action, 'keep');
  assert.equal(decideRemoval({ ...input('inForce'), caches: { ...synced, decisions: false } }).action, 'keep');
});

test('a kind not watched is removed only when every owned class is in force and none lists it', () => {
  const input = (classes: [string, ClassKnowledge][]): RemovalInput => ({ groupResource: KIND, caches: synced, classes: new Map(classes) });
  assert.deepEqual(decideRemoval(input([['a', cls('inForce', false, false)]])), { action: 'delete', reason: 'KindRemoved' });
  assert.equal(decideRemoval(input([['a', cls('inForce', false, false)], ['b', cls('lastKnownGood', false, false)]])).action, 'keep');
  assert.equal(decideRemoval(input([['a', cls('inForce', false, false)], ['b', cls('unknown', false, false)]])).action, 'keep');
  // Listed but not validated (Forbidden during an RBAC aggregation gap at start-up, CRD briefly absent).
  assert.equal(decideRemoval(input([['a', cls('inForce', true, false)]])).action, 'keep');
  // No owned class at all: every GatewayClass deleted or handed to another controller by an admin.
  assert.deepEqual(decideRemoval(input([])), { action: 'delete', reason: 'KindRemoved' });
});

// Exhaustive: every combination of the inputs, against the rule stated independently.
test('exhaustively: a work is deleted exactly when the rule says it is known to be unwanted', () => {
  const bools = [false, true];
  const classStates: ClassKnowledge[] = [];
  for (const state of ['inForce', 'lastKnownGood', 'unknown'] as const) {
    for (const listed of bools) for (const validated of listed ? bools : [false]) classStates.push(cls(state, listed, validated));
  }
  const watches = [undefined, { synced: false }, { synced: true }];
  const policies: RemovalInput['policy'][] = [
    undefined,
    { deleting: true, targetClasses: ['a'] },
    ...[[], ['a'], ['b'], ['a', 'b']].flatMap((t) => bools.map((locallyOverridden) => ({ deleting: false, targetClasses: t, locallyOverridden }))),
  ];
  const crds: CrdState[] = ['live', 'absent', 'terminating', 'replaced', 'unreadable', 'builtin'];
  const confirmations = [undefined, ...crds.flatMap((crd) => bools.map((policyExists) => ({ policyExists, crd })))];
  let cases = 0;
  let deletions = 0;
  for (const works of bools) for (const classesSynced of bools) for (const gateways of bools) for (const decisions of bools) {
    const caches = { works, classes: classesSynced, gateways, decisions };
    for (const a of classStates) for (const b of [undefined, ...classStates]) {
      const classes = new Map<string, ClassKnowledge>([['a', a], ...(b ? [['b', b] as [string, ClassKnowledge]] : [])]);
      for (const watch of watches) for (const policy of policies) for (const confirmation of confirmations) {
        const input: RemovalInput = { groupResource: KIND, caches, classes, watch, policy, confirmation };
        const d = decideRemoval(input);
        cases++;
        const all = [...classes.values()];
        const targeted = [...classes].filter(([name]) => policy?.targetClasses.includes(name)).map(([, c]) => c);
        const kindRemoved = works && classesSynced && !watch && all.every((c) => c.state === 'inForce' && !c.listed.has(KIND));
        const gone = !policy || policy.deleting;
        const policyDeleted =
          works && classesSynced && watch?.synced === true && gone && confirmation !== undefined && !confirmation.policyExists && ['live', 'builtin'].includes(confirmation.crd);
        const noLongerTargeted =
          works && classesSynced && gateways && decisions && watch?.synced === true && !gone &&
          targeted.every((c) => c.state !== 'unknown' && (!c.listed.has(KIND) || c.synced.has(KIND)));
        const expected = kindRemoved ? 'KindRemoved' : policyDeleted ? 'PolicyDeleted' : noLongerTargeted ? (policy?.locallyOverridden ? 'LocallyOverridden' : 'NoLongerTargeted') : undefined;
        if (expected) {
          deletions++;
          assert.deepEqual(d, { action: 'delete', reason: expected }, JSON.stringify({ caches, a, b, watch, policy, confirmation }, (_, v: unknown) => (v instanceof Set ? [...v] : v)));
        } else {
          assert.notEqual(d.action, 'delete', JSON.stringify({ caches, watch, policy, confirmation }));
          // A confirmation is asked only where it could lead to a deletion.
          if (d.action === 'confirm') assert.ok(works && classesSynced && watch?.synced && gone && !confirmation);
          else assert.ok(d.action === 'keep' && d.message.length > 0, 'a kept work says why');
        }
      }
    }
  }
  assert.ok(cases > 100_000 && deletions > 1000, `${cases} cases, ${deletions} deletions`);
});
