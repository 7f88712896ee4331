// The seeded soak's pure parts (issue 29; docs/reliability.md#seeded-soak): the model (testkit/soak/model.ts)
// against a worked example, and the generator's determinism. The run on the real plane is `npm run soak`
// (hack/soak/main.ts): it is not in the suite until it has passed on a machine of its own (docs/reliability.md
// says what has run).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generate } from '../../testkit/soak/generator.ts';
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
