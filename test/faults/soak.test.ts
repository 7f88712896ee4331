// The short seeded soak (issue 29; docs/reliability.md#seeded-soak): a fixed seed's rounds of user and fleet
// operations — hub policies of three kinds created, edited, relabelled, retargeted and deleted; local policies
// on the spokes; Gateways, classes, params, Placements, bindings, ManagedCluster labels — interleaved with
// faults (hub leader SIGKILLed with a standby taking over, a spoke agent killed, apiservers restarted or frozen,
// etcd compacted under the hub's watches, connections reset), on the real plane: two leader-elected hub
// replicas and a spoke agent per spoke as processes, OCM's placement, registration and work agents. Every
// audited spoke write is judged against the model (testkit/soak/model.ts); after each round the spokes and the
// hub's status must match it within the bound. `npm run soak` runs longer seeds, the registration fault too.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import { generate } from '../../testkit/soak/generator.ts';
import { applyOp, expected, initialState, removalReason } from '../../testkit/soak/model.ts';
import type { FaultKind } from '../../testkit/soak/ops.ts';
import { runSoak } from '../../testkit/soak/runner.ts';
import { summarize } from '../../testkit/soak/summary.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

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
const FAULTS: FaultKind[] = [
  'none',
  'hub-kill',
  'spoke-agent-stop',
  'spoke-apiserver-restart',
  'hub-apiserver-restart-compaction',
  'spoke-apiserver-freeze',
  // Resetting another process's connections (ss -K) needs CAP_NET_ADMIN.
  ...(process.getuid?.() === 0 ? (['watch-cut'] as const) : []),
];

test(`seeded soak: seed ${SEED}, no unjustified deletion, takeover, join or crossing, and convergence to the model after every round`, { timeout: 10 * 60_000 }, async () => {
  const sandbox = await testSandbox();
  const result = await runSoak({
    sandbox,
    plan: generate({ seed: SEED, ops: 30, faults: FAULTS }),
    convergeBoundMs: 120_000,
    artifactsDir: join(repoRoot, '.local', 'soak'),
    log: (m) => console.log(`[soak] ${m}`),
  });
  console.log(summarize(result));
  assert.deepEqual(result.violations, [], summarize(result));
  assert.ok(result.deletionsChecked > 0, 'the run deleted copies the model wanted gone, and each was checked');
});
