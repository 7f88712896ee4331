import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RolloutPlan } from '../core/rollout/plan.ts';
import { Rollouts } from './rollouts.ts';

function plan(state: RolloutPlan['status']['state'], soak: [string, number][]): RolloutPlan {
  return {
    write: new Map(),
    keep: new Set(),
    waiting: [],
    status: { strategy: 'Progressive', revision: 2, state, message: '' },
    clusters: { c1: { phase: 'Succeeded', wave: 1 }, c2: { phase: 'Progressing', wave: 2 } },
    soak: new Map(soak),
    ungated: new Set(),
  };
}

test('the soak clocks of a revision are handed back for that revision only; All (no plan) forgets them', () => {
  const rollouts = new Rollouts();
  rollouts.record('k', 2, plan('Progressing', [['c1', 1_000]]));
  assert.deepEqual([...(rollouts.soakOf('k', 2) ?? [])], [['c1', 1_000]]);
  assert.equal(rollouts.soakOf('k', 3), undefined, 'a new revision soaks afresh');
  assert.equal(rollouts.progressing('k'), true);
  assert.deepEqual(rollouts.counts().rollouts, { Progressing: 1, Halted: 0, Complete: 0 });
  assert.equal(rollouts.counts().clusters.Succeeded, 1);
  rollouts.record('k', 2, undefined);
  assert.equal(rollouts.soakOf('k', 2), undefined);
  assert.equal(rollouts.progressing('k'), false);
  assert.deepEqual(rollouts.counts().rollouts, { Progressing: 0, Halted: 0, Complete: 0 });
});
