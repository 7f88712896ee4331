import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterHealth } from '../fleet/clusterhealth.ts';
import type { PlacementState } from '../fleet/placement.ts';
import { decideRemoval, type ClassKnowledge, type CrdState, type RemovalInput } from './removal.ts';

const KIND = 'authpolicies.kuadrant.io';
const synced = { works: true, classes: true, gateways: true, decisions: true, clusters: true, placements: true };
const none: ReadonlySet<string> = new Set();
const healthy: RemovalInput['cluster'] = { health: { state: 'healthy' }, placements: { state: 'settled' } };

function cls(state: ClassKnowledge['state'], listed: boolean, validated: boolean): ClassKnowledge {
  return { state, listed: new Set(listed ? [KIND] : []), synced: new Set(listed && validated ? [KIND] : []) };
}

test('a policy deleted from a synced cache is confirmed live before its works go', () => {
  const input: RemovalInput = { groupResource: KIND, caches: synced, classes: new Map([['a', cls('inForce', true, true)]]), absentClasses: none, watch: { synced: true } };
  assert.deepEqual(decideRemoval(input), { action: 'confirm' });
  assert.deepEqual(decideRemoval({ ...input, confirmation: { policyExists: false, crd: 'live' } }), { action: 'delete', reason: 'PolicyDeleted' });
  assert.equal(decideRemoval({ ...input, confirmation: { policyExists: true, crd: 'live' } }).action, 'keep');
});

test('policies that went with their CRD keep their works (CRD absent, terminating, re-created, unreadable)', () => {
  const base: RemovalInput = { groupResource: KIND, caches: synced, classes: new Map([['a', cls('inForce', true, true)]]), absentClasses: none, watch: { synced: true } };
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
    absentClasses: none,
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
    absentClasses: none,
    watch: { synced: true },
    policy: { deleting: false, targetClasses: ['a'], locallyOverridden: true },
  });
  assert.deepEqual(decideRemoval(input('inForce')), { action: 'delete', reason: 'LocallyOverridden' });
  assert.equal(decideRemoval(input('unknown')).action, 'keep');
  assert.equal(decideRemoval({ ...input('inForce'), caches: { ...synced, decisions: false } }).action, 'keep');
});

test('a kind not watched is removed only when every owned class is in force and none lists it', () => {
  const input = (classes: [string, ClassKnowledge][]): RemovalInput => ({ groupResource: KIND, caches: synced, classes: new Map(classes), absentClasses: none });
  assert.deepEqual(decideRemoval(input([['a', cls('inForce', false, false)]])), { action: 'delete', reason: 'KindRemoved' });
  assert.equal(decideRemoval(input([['a', cls('inForce', false, false)], ['b', cls('lastKnownGood', false, false)]])).action, 'keep');
  assert.equal(decideRemoval(input([['a', cls('inForce', false, false)], ['b', cls('unknown', false, false)]])).action, 'keep');
  // Listed but not validated (Forbidden during an RBAC aggregation gap at start-up, CRD briefly absent).
  assert.equal(decideRemoval(input([['a', cls('inForce', true, false)]])).action, 'keep');
  // No owned class at all: every GatewayClass handed to another controller by an admin.
  assert.deepEqual(decideRemoval(input([])), { action: 'delete', reason: 'KindRemoved' });
  // The class deleted (perhaps to be created again): a Gateway names it, so what it listed is unknown.
  assert.deepEqual(decideRemoval({ ...input([]), absentClasses: new Set(['a']) }), {
    action: 'keep',
    reason: 'ClassAbsent',
    message: 'GatewayClass a is named by a Gateway but does not exist: whether authpolicies.kuadrant.io is still wanted is unknown',
  });
});

test('a GatewayClass replaced (deleted, then created again) keeps the works of the policies on its Gateways meanwhile', () => {
  const input: RemovalInput = {
    groupResource: KIND,
    caches: synced,
    classes: new Map([['other', cls('inForce', true, true)]]),
    absentClasses: new Set(['replaced']),
    watch: { synced: true },
    policy: { deleting: false, targetClasses: ['replaced'] },
    cluster: healthy,
  };
  assert.equal(decideRemoval(input).action, 'keep');
  assert.equal((decideRemoval(input) as { reason: string }).reason, 'ClassAbsent');
  // Back, and ours again: the policy's need decides.
  assert.deepEqual(decideRemoval({ ...input, absentClasses: none, classes: new Map([['replaced', cls('inForce', true, true)]]) }), { action: 'delete', reason: 'NoLongerTargeted' });
});

test('a cluster that left the decisions goes only when OCM vouches for it and the Placement is settled', () => {
  const input = (cluster: RemovalInput['cluster']): RemovalInput => ({
    groupResource: KIND,
    caches: synced,
    classes: new Map([['a', cls('inForce', true, true)]]),
    absentClasses: none,
    watch: { synced: true },
    policy: { deleting: false, targetClasses: ['a'] },
    ...(cluster ? { cluster } : {}),
  });
  const unreachable: ClusterHealth = { state: 'unavailable', reason: 'ManagedClusterLeaseUpdateStopped', message: 'OCM marks cluster c2 unreachable', since: '2026-11-25T05:00:00Z' };
  assert.deepEqual(decideRemoval(input(healthy)), { action: 'delete', reason: 'NoLongerTargeted' });
  assert.deepEqual(decideRemoval(input({ health: { state: 'absent' }, placements: { state: 'settled' } })), { action: 'delete', reason: 'NoLongerTargeted' });
  assert.deepEqual(decideRemoval(input({ health: { state: 'deleting' }, placements: { state: 'settled' } })), { action: 'delete', reason: 'NoLongerTargeted' });
  assert.deepEqual(decideRemoval(input({ health: unreachable, placements: { state: 'settled' } })), { action: 'keep', reason: 'ClusterUnavailable', message: 'OCM marks cluster c2 unreachable' });
  const unsettled: PlacementState = { state: 'unsettled', reason: 'PlacementAbsent', message: 'Placement ns/p does not exist (deleted, or being re-created)' };
  assert.deepEqual(decideRemoval(input({ health: { state: 'healthy' }, placements: unsettled })), { action: 'keep', reason: 'PlacementUnsettled', message: unsettled.message });
  // Not looked at: unknown, kept.
  assert.equal(decideRemoval(input(undefined)).action, 'keep');
  // A deleted policy goes whatever its clusters' state: the user asked for it.
  assert.equal(decideRemoval({ ...input({ health: unreachable, placements: unsettled }), policy: { deleting: true, targetClasses: [] }, confirmation: { policyExists: false, crd: 'live' } }).action, 'delete');
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
  const settled: PlacementState = { state: 'settled' };
  const clusterInputs: RemovalInput['cluster'][] = [
    undefined,
    ...(['healthy', 'absent', 'deleting'] as const).map((state) => ({ health: { state }, placements: settled })),
    { health: { state: 'unavailable', reason: 'R', message: 'm' }, placements: settled },
    { health: { state: 'healthy' }, placements: { state: 'unsettled', reason: 'DecisionsUpdating', message: 'm' } },
  ];
  const absents: ReadonlySet<string>[] = [none, new Set(['a'])];
  const crds: CrdState[] = ['live', 'absent', 'terminating', 'replaced', 'unreadable', 'builtin'];
  const confirmations = [undefined, ...crds.flatMap((crd) => bools.map((policyExists) => ({ policyExists, crd })))];
  let cases = 0;
  let deletions = 0;
  for (const works of bools) for (const classesSynced of bools) for (const gateways of bools) for (const decisions of bools) for (const fleet of bools) {
    // The ManagedCluster and Placement caches are asked together with the Gateway and decision ones.
    const caches = { works, classes: classesSynced, gateways, decisions, clusters: fleet, placements: fleet };
    for (const a of classStates) for (const b of [undefined, ...classStates]) {
      const classes = new Map<string, ClassKnowledge>([['a', a], ...(b ? [['b', b] as [string, ClassKnowledge]] : [])]);
      for (const watch of watches) for (const policy of policies) for (const confirmation of confirmations) for (const cluster of clusterInputs) for (const absentClasses of absents) {
        // Confirmations matter only for a policy gone, clusters only for one that stays: skip the rest.
        if ((confirmation && policy && !policy.deleting) || (cluster && (!watch || !policy || policy.deleting))) continue;
        const input: RemovalInput = { groupResource: KIND, caches, classes, absentClasses, watch, policy, confirmation, ...(cluster ? { cluster } : {}) };
        const d = decideRemoval(input);
        cases++;
        const all = [...classes.values()];
        const targeted = [...classes].filter(([name]) => policy?.targetClasses.includes(name)).map(([, c]) => c);
        const kindRemoved = works && classesSynced && !watch && absentClasses.size === 0 && all.every((c) => c.state === 'inForce' && !c.listed.has(KIND));
        const gone = !policy || policy.deleting;
        const policyDeleted =
          works && classesSynced && watch?.synced === true && gone && confirmation !== undefined && !confirmation.policyExists && ['live', 'builtin'].includes(confirmation.crd);
        const knownTargets =
          works && classesSynced && gateways && decisions && fleet && watch?.synced === true && !gone &&
          !policy.targetClasses.some((name) => absentClasses.has(name)) &&
          targeted.every((c) => c.state !== 'unknown' && (!c.listed.has(KIND) || c.synced.has(KIND)));
        const clusterKnown = cluster !== undefined && cluster.health.state !== 'unavailable' && cluster.placements.state === 'settled';
        const overridden = knownTargets && policy?.locallyOverridden === true;
        const noLongerTargeted = knownTargets && !policy?.locallyOverridden && clusterKnown;
        const expected = kindRemoved ? 'KindRemoved' : policyDeleted ? 'PolicyDeleted' : overridden ? 'LocallyOverridden' : noLongerTargeted ? 'NoLongerTargeted' : undefined;
        if (expected) {
          deletions++;
          assert.deepEqual(d, { action: 'delete', reason: expected }, JSON.stringify({ caches, a, b, watch, policy, confirmation, cluster, absentClasses }, (_, v: unknown) => (v instanceof Set ? [...v] : v)));
        } else {
          assert.notEqual(d.action, 'delete', JSON.stringify({ caches, watch, policy, confirmation, cluster, absentClasses }, (_, v: unknown) => (v instanceof Set ? [...v] : v)));
          // A confirmation is asked only where it could lead to a deletion.
          if (d.action === 'confirm') assert.ok(works && classesSynced && watch?.synced && gone && !confirmation);
          else assert.ok(d.action === 'keep' && d.message.length > 0, 'a kept work says why');
        }
      }
    }
  }
  assert.ok(cases > 100_000 && deletions > 1000, `${cases} cases, ${deletions} deletions`);
});
