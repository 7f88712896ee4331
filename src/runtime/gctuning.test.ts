import assert from 'node:assert/strict';
import { test } from 'node:test';
import { heapGrowthPercent } from './gctuning.ts';

const MiB = 1024 * 1024;

test('heap growth: about the garbage budget in MiB past the live heap, within the bounds', () => {
  assert.equal(heapGrowthPercent(48 * MiB, { budgetMiB: 24 }), 50, 'a small heap may grow by half');
  assert.equal(heapGrowthPercent(120 * MiB, { budgetMiB: 24 }), 20);
  assert.equal(heapGrowthPercent(400 * MiB, { budgetMiB: 24 }), 10, 'a large heap no less than the floor');
  assert.equal(heapGrowthPercent(8 * MiB, { budgetMiB: 24 }), 100, 'a tiny heap no more than the ceiling');
  assert.equal(heapGrowthPercent(0), 100);
  assert.equal(heapGrowthPercent(300 * MiB, { budgetMiB: 24, minPercent: 5 }), 8);
});
