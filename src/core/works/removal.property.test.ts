// Properties of the one deletion rule (removal.ts, docs/design/deletion.md#never-delete-on-doubt) over its whole
// input space — every cache synced or not, owned classes in every state listing the kind or not, classes named
// but absent (overlapping the owned ones too, an input the reconciler should never give), the kind watched or
// not, the policy present, deleting or gone, every cluster health and Placement state, every live read: a
// deletion happens only for a reason whose every condition holds, as the documentation states each (written
// here independently of the rule's order of checks), and adding any doubt to an input never turns it into a
// deletion.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkProperty } from '../../../testkit/arbitraries.ts';
import type { ClusterHealth } from '../fleet/clusterhealth.ts';
import type { PlacementState } from '../fleet/placement.ts';
import { decideRemoval, type ClassKnowledge, type CrdState, type RemovalInput, type RemovalReason } from './removal.ts';

const KIND = 'authpolicies.kuadrant.io';
const OTHER_KIND = 'ratelimitpolicies.kuadrant.io';
const CLASS_NAMES = ['a', 'b', 'c'] as const;
const NAMED = ['a', 'b', 'c', 'd', 'e'] as const;
const CRD_STATES: CrdState[] = ['live', 'absent', 'terminating', 'replaced', 'unreadable', 'builtin'];

const kinds = fc.subarray([KIND, OTHER_KIND]).map((list) => new Set(list));
const classKnowledge: fc.Arbitrary<ClassKnowledge> = fc.record({ state: fc.constantFrom('inForce', 'lastKnownGood', 'unknown'), listed: kinds, synced: kinds });
const health: fc.Arbitrary<ClusterHealth> = fc.oneof(
  fc.constant({ state: 'healthy' as const }),
  fc.constant({ state: 'absent' as const }),
  fc.constant({ state: 'deleting' as const }),
  fc.record(
    { state: fc.constant('unavailable' as const), reason: fc.constantFrom('Unreachable', 'Unavailable', 'Recovering'), message: fc.constant('OCM cannot vouch for it'), since: fc.constant('2026-01-01T00:00:00Z'), recheckAt: fc.nat() },
    { requiredKeys: ['state', 'reason', 'message'] },
  ),
);
const placements: fc.Arbitrary<PlacementState> = fc.oneof(
  fc.constant({ state: 'settled' as const }),
  fc.record({ state: fc.constant('unsettled' as const), reason: fc.constantFrom('PlacementAbsent', 'DecisionsUpdating', 'ClustersRefused'), message: fc.constant('in flux') }),
);
const bool = fc.boolean();

/** Any input the rule can be given, and some it should never be. */
const removalInput: fc.Arbitrary<RemovalInput> = fc.record(
  {
    groupResource: fc.constant(KIND),
    caches: fc.record({ works: bool, classes: bool, gateways: bool, decisions: bool, clusters: bool, placements: bool }),
    classes: fc.dictionary(fc.constantFrom(...CLASS_NAMES), classKnowledge, { maxKeys: 3 }).map((d) => new Map(Object.entries(d))),
    absentClasses: fc.subarray([...NAMED]).map((list) => new Set(list)),
    watch: fc.record({ synced: bool }),
    policy: fc.record(
      { deleting: bool, targetClasses: fc.subarray([...NAMED, 'not-ours']), locallyOverridden: bool },
      { requiredKeys: ['deleting', 'targetClasses'] },
    ),
    cluster: fc.record({ health, placements }),
    confirmation: fc.record({ policyExists: bool, crd: fc.constantFrom(...CRD_STATES) }),
  },
  { requiredKeys: ['groupResource', 'caches', 'classes', 'absentClasses'] },
);

/**
 * The reasons for which the documentation lets the works go, each stated as all its conditions (an
 * independent reading of docs/design/deletion.md#never-delete-on-doubt and the rule's header, not of its code).
 */
function justified(input: RemovalInput): Set<RemovalReason> {
  const reasons = new Set<RemovalReason>();
  const { caches } = input;
  const classes = [...input.classes];
  const allCaches = Object.values(caches).every(Boolean);
  const ownCaches = caches.works && caches.classes;
  if (!ownCaches) return reasons;

  // KindRemoved: the kind is no longer watched, every owned class's params are valid and in force and none
  // lists it, and no Gateway its works were for names a class that is absent.
  if (input.watch === undefined && input.absentClasses.size === 0 && classes.every(([, c]) => c.state === 'inForce' && !c.listed.has(KIND))) reasons.add('KindRemoved');

  // PolicyDeleted: gone from a synced cache (or being deleted), a live read confirms it gone, its CRD live.
  const gone = input.policy === undefined || input.policy.deleting;
  if (input.watch?.synced && gone && input.confirmation?.policyExists === false && (input.confirmation.crd === 'live' || input.confirmation.crd === 'builtin')) reasons.add('PolicyDeleted');

  // The policy exists: what it wants is known only from every cache, and configurations known for every
  // class it targets (present, valid since start-up at least once, the kind validated where listed).
  const policy = input.policy;
  if (input.watch?.synced && policy && !policy.deleting && allCaches) {
    const targeted = policy.targetClasses;
    const known = targeted.every((name) => {
      if (input.absentClasses.has(name)) return false;
      const c = input.classes.get(name);
      return c === undefined || (c.state !== 'unknown' && (!c.listed.has(KIND) || c.synced.has(KIND)));
    });
    if (known && policy.locallyOverridden) reasons.add('LocallyOverridden');
    // NoLongerTargeted: and the cluster's absence is a decision: OCM vouches for it (or it is deleted), its Placements settled.
    const cluster = input.cluster;
    if (known && !policy.locallyOverridden && cluster && cluster.health.state !== 'unavailable' && cluster.placements.state === 'settled') reasons.add('NoLongerTargeted');
  }
  return reasons;
}

test('property: the deletion rule deletes only for a reason all of whose conditions hold, and confirms a gone policy first', (t) => {
  checkProperty(t, 20_000, [removalInput], (input) => {
    const decision = decideRemoval(input);
    const reasons = justified(input);
    if (decision.action === 'delete') assert.ok(reasons.has(decision.reason), `${decision.reason} without its conditions: ${describe(input)}`);
    // Where a reason holds, the rule does not keep the works for ever (liveness): it deletes, or reads first.
    if (reasons.size > 0) assert.notEqual(decision.action, 'keep', `kept though ${[...reasons].join(', ')} holds: ${JSON.stringify(decision)}`);
    if (decision.action === 'confirm') {
      assert.ok(input.watch?.synced && (input.policy === undefined || input.policy.deleting) && input.confirmation === undefined, 'a live read only for a policy gone from a synced cache, once');
    }
    if (decision.action === 'keep') assert.ok(decision.message.length > 0, 'a kept work says why');
  });
});

/** One doubt more: a cache not synced, a class unknown or absent, the kind not validated, the cluster unavailable, … */
type Doubt = (input: RemovalInput) => RemovalInput;
const DOUBTS: Record<string, Doubt> = {
  ...Object.fromEntries(
    (['works', 'classes', 'gateways', 'decisions', 'clusters', 'placements'] as const).map((cache) => [`cache ${cache} not synced`, (i: RemovalInput) => ({ ...i, caches: { ...i.caches, [cache]: false } })]),
  ),
  'the kind watch not synced': (i) => (i.watch ? { ...i, watch: { synced: false } } : i),
  'a targeted class unknown since start-up': (i) => withClass(i, targetOf(i), { state: 'unknown', listed: new Set([KIND]), synced: new Set() }),
  'a targeted class listing the kind, not validated': (i) => withClass(i, targetOf(i), { state: 'inForce', listed: new Set([KIND]), synced: new Set() }),
  'a class lost its params (last known good)': (i) => (i.watch === undefined ? withClass(i, 'a', { state: 'lastKnownGood', listed: new Set(), synced: new Set() }) : i),
  'a class named but absent': (i) => ({ ...i, absentClasses: new Set([...i.absentClasses, targetOf(i)]) }),
  'the cluster unavailable': (i) => (i.cluster ? { ...i, cluster: { ...i.cluster, health: { state: 'unavailable', reason: 'Unreachable', message: 'lease expired' } } } : i),
  'the placement in flux': (i) => (i.cluster ? { ...i, cluster: { ...i.cluster, placements: { state: 'unsettled', reason: 'DecisionsUpdating', message: 'rewriting' } } } : i),
  'what OCM says of the cluster not looked at': (i) => (i.policy?.locallyOverridden ? i : withoutKey(i, 'cluster')),
  'the policy still exists (live read)': (i) => (i.confirmation ? { ...i, confirmation: { ...i.confirmation, policyExists: true } } : i),
  'its CRD not live': (i) => (i.confirmation ? { ...i, confirmation: { ...i.confirmation, crd: 'replaced' } } : i),
  'no live read yet': (i) => withoutKey(i, 'confirmation'),
};

/** A class the policy targets (adding it to its targets when it has none), or `a` for a kind not watched. */
function targetOf(input: RemovalInput): string {
  return input.policy?.targetClasses[0] ?? 'a';
}

function withClass(input: RemovalInput, name: string, knowledge: ClassKnowledge): RemovalInput {
  const classes = new Map(input.classes);
  classes.set(name, knowledge);
  const policy = input.policy && !input.policy.targetClasses.includes(name) ? { ...input.policy, targetClasses: [...input.policy.targetClasses, name] } : input.policy;
  return { ...input, classes, ...(policy ? { policy } : {}) };
}

function withoutKey(input: RemovalInput, key: 'cluster' | 'confirmation'): RemovalInput {
  const { [key]: _dropped, ...rest } = input;
  return rest;
}

test('property: one doubt more never turns a decision into a deletion', (t) => {
  checkProperty(t, 10_000, [removalInput, fc.constantFrom(...Object.keys(DOUBTS))], (input, doubt) => {
    const before = decideRemoval(input);
    const after = decideRemoval(DOUBTS[doubt]!(input));
    if (before.action !== 'delete') assert.notEqual(after.action, 'delete', `${doubt}: ${before.action} became ${JSON.stringify(after)} for ${describe(input)}`);
  });
});

function describe(input: RemovalInput): string {
  return JSON.stringify(input, (_key, value: unknown): unknown => {
    if (value instanceof Map) return Object.fromEntries(value as Map<string, unknown>);
    if (value instanceof Set) return [...(value as Set<unknown>)];
    return value;
  });
}
