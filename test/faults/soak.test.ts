// The seeded soak's pure parts (issue 29; docs/reliability.md#seeded-soak): the model (testkit/soak/model.ts)
// against a worked example, and the generator's determinism. The run on the real plane is `npm run soak`
// (hack/soak/main.ts) for hours and many seeds (docs/reliability.md says what has run), and soak-run.test.ts in
// the suite: one fixed seed, one round per fault kind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { checkDeletions, unavailableAt } from '../../testkit/soak/checks.ts';
import { availabilityOf } from '../../testkit/soak/evidence.ts';
import { generate } from '../../testkit/soak/generator.ts';
import { FAULT_KINDS } from '../../testkit/soak/ops.ts';
import { applyOp, expected, initialState, removalReason } from '../../testkit/soak/model.ts';

const SEED = 29;

test('the model: a copy is withheld where the name is held or local policies cover its every target, and removed only for a reason the hub can know', () => {
  let s = initialState();
  s = applyOp(s, { op: 'policy-apply', kind: 'soak', tenant: 't1', name: 'soak-1', targets: [{ gateway: 'gw1' }, { gateway: 'gw2', sectionName: 'api' }], marker: 1, labels: {} });
  assert.deepEqual([...expected(s).copies.keys()].sort(), ['spoke-1/soak/t1/soak-1', 'spoke-2/soak/t1/soak-1']);
  // A local policy on one listener of gw1 covers neither the whole gw1 nor gw2's api listener.
  s = applyOp(s, { op: 'local-create', spoke: 'spoke-1', kind: 'soak', tenant: 't1', name: 'own-1', targets: [{ gateway: 'gw1', sectionName: 'http' }] });
  assert.ok(expected(s).copies.has('spoke-1/soak/t1/soak-1'));
  // One on the whole gw2 covers its api listener; with one on the whole gw1, every target is covered.
  s = applyOp(s, { op: 'local-create', spoke: 'spoke-1', kind: 'soak', tenant: 't1', name: 'own-2', targets: [{ gateway: 'gw2' }] });
  s = applyOp(s, { op: 'local-create', spoke: 'spoke-1', kind: 'soak', tenant: 't1', name: 'own-3', targets: [{ gateway: 'gw1' }] });
  assert.deepEqual(expected(s).withheld.get('spoke-1/soak/t1/soak-1'), { reason: 'overridden', by: ['t1/own-2', 't1/own-3'] });
  assert.equal(removalReason(s, { unavailable: new Set() }, 'spoke-1', 'soak', 't1', 'soak-1'), 'local policies cover it');
  // A same-named local policy holds the name: nothing is placed there.
  s = applyOp(s, { op: 'local-create', spoke: 'spoke-2', kind: 'soak', tenant: 't1', name: 'soak-1', targets: [{ gateway: 'gw1' }] });
  assert.deepEqual(expected(s).withheld.get('spoke-2/soak/t1/soak-1'), { reason: 'name-held' });
  // Deselected: removed while available, kept while unavailable or while the Placement is being replaced.
  s = applyOp(s, { op: 'local-delete', spoke: 'spoke-2', kind: 'soak', tenant: 't1', name: 'soak-1' });
  s = applyOp(s, { op: 'cluster-member', spoke: 'spoke-2', member: false });
  assert.match(removalReason(s, { unavailable: new Set() }, 'spoke-2', 'soak', 't1', 'soak-1') ?? '', /deselected/);
  assert.equal(removalReason(s, { unavailable: new Set(['spoke-2']) }, 'spoke-2', 'soak', 't1', 'soak-1'), undefined);
  // A class replaced or its params invalid: nothing of its Gateways' policies is unwanted.
  const replacing = applyOp(s, { op: 'class-replace', className: 'a', holdMs: 1 }, 'begin');
  assert.equal(removalReason(replacing, { unavailable: new Set() }, 'spoke-2', 'soak', 't1', 'soak-1'), undefined);
  // A kind removed from valid params: unwanted.
  s = applyOp(s, { op: 'params-set', className: 'a', kinds: ['auth'] });
  assert.match(removalReason(s, { unavailable: new Set() }, 'spoke-1', 'soak', 't1', 'soak-1') ?? '', /no synced target/);
});

test('the generator is pure: one seed, one plan', () => {
  assert.deepEqual(generate({ seed: SEED, ops: 40 }), generate({ seed: SEED, ops: 40 }));
  assert.notDeepEqual(generate({ seed: SEED, ops: 40 }), generate({ seed: SEED + 1, ops: 40 }));
});

test('the generator can take the fault kinds in turn: a short run meets each kind once', () => {
  const plan = generate({ seed: SEED, ops: 80, faultOrder: 'in-turn' });
  assert.deepEqual(
    plan.rounds.slice(0, FAULT_KINDS.length).map((r) => r.fault.kind),
    FAULT_KINDS,
  );
  assert.equal(plan.rounds[FAULT_KINDS.length]?.fault.kind, FAULT_KINDS[0], 'then the turn starts again');
  assert.deepEqual(generate({ seed: SEED, ops: 80, faultOrder: 'in-turn', faults: ['hub-kill'] }).rounds.map((r) => r.fault.kind), plan.rounds.map(() => 'hub-kill'));
});

test('the deletion check: a deselection justifies a deletion once OCM has vouched for the cluster again for the hub\'s grace when the hub deletes, whenever the deselection came', () => {
  const placedState = applyOp(initialState(), { op: 'policy-apply', kind: 'soak', tenant: 't1', name: 'soak-1', targets: [{ gateway: 'gw1' }], marker: 1, labels: {} });
  const deselected = applyOp(placedState, { op: 'cluster-member', spoke: 'spoke-2', member: false });
  const back = Date.parse('2026-11-28T06:00:00Z'); // spoke-2's Available condition True again (its lastTransitionTime)
  // As the watch saw spoke-2's ManagedCluster: available, then not (its agent stopped, or its apiserver down), then
  // available again since `back`, seen 400 ms later.
  const availability = [
    availabilityOf('spoke-2', managedCluster('True', back - 600_000), back - 600_000),
    availabilityOf('spoke-2', managedCluster('Unknown', back - 40_000, true), back - 39_000),
    availabilityOf('spoke-2', managedCluster('True', back), back + 400),
  ];
  assert.deepEqual(availability.map((c) => c.available), [true, false, true]);
  // The label removed 28 s after the cluster was back; the hub holds its copies until its own grace ends.
  const timeline = [
    { at: back - 100_000, state: placedState, label: 'policy-apply' },
    { at: back + 28_000, state: deselected, label: 'cluster-member' },
  ];
  const deletion = (at: number) => ({
    w: { verb: 'delete', user: 'sandbox-admin', userAgent: 'work-agent', resource: 'soakpolicies', namespace: 'ns-t1', name: 'soak-1', code: 200, at: new Date(at).toISOString() },
    spoke: 'spoke-2' as const,
    kind: 'soak' as const,
    tenant: 't1' as const,
    at,
  });
  assert.deepEqual(checkDeletions([deletion(back + 31_000)], timeline, availability).violations, [], 'out of doubt when deleted: justified by the deselection');
  const early = checkDeletions([deletion(back + 29_000)], timeline, availability);
  assert.equal(early.violations.length, 1, 'still in the grace when deleted: unjustified');
  assert.match(early.violations[0]!.message, /unjustified/);
  assert.equal(checkDeletions([deletion(back - 50_000)], timeline, availability).violations.length, 1, 'wanted and placed: no state justifies it');
  // While OCM does not vouch for it, a deselection justifies nothing; the moment the watch saw it, it may.
  const whileDown = [{ at: back - 100_000, state: deselected, label: 'cluster-member' }];
  assert.equal(checkDeletions([deletion(back - 20_000)], whileDown, availability).violations.length, 1, 'unavailable when deleted');
  assert.deepEqual(checkDeletions([deletion(back - 38_500)], whileDown, availability).violations, [], 'decided before the hub could see it');
  assert.deepEqual([...unavailableAt(availability, back - 20_000)], ['spoke-2']);
  assert.deepEqual([...unavailableAt(availability, back + 30_000)], []);
});

function managedCluster(available: string, lastTransitionTime: number, tainted = false): KubeObject {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name: 'spoke-2' },
    spec: tainted ? { taints: [{ key: 'cluster.open-cluster-management.io/unreachable', effect: 'NoSelect' }] } : {},
    status: { conditions: [{ type: 'ManagedClusterConditionAvailable', status: available, lastTransitionTime: new Date(lastTransitionTime).toISOString().replace(/\.\d+Z$/, 'Z') }] },
  };
}
