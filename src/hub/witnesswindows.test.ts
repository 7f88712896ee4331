import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WitnessWindows } from './witnesswindows.ts';

const WINDOW = 60_000;

test('a cluster witnesses for the window after its last work of ours, then not', () => {
  const w = new WitnessWindows(WINDOW);
  w.worked('c1', 1_000);
  assert.equal(w.witnessing('c1', 1_000 + WINDOW - 1), true);
  assert.equal(w.endsIn(1_000 + WINDOW - 1), 1);
  assert.equal(w.witnessing('c1', 1_000 + WINDOW), false);
  assert.equal(w.witnessing('c1', 1_000 + 2 * WINDOW), false, 'a window closed stays closed');
  assert.equal(w.endsIn(1_000 + WINDOW), undefined);
});

test('a cluster first looked at with no work of ours (a restart, a new leader) witnesses for the window from that look: when its last work left is not known', () => {
  const w = new WitnessWindows(WINDOW);
  assert.equal(w.witnessing('c1', 5_000), true, 'not known is not long ago');
  assert.equal(w.witnessing('c1', 5_000 + WINDOW - 1), true);
  assert.equal(w.witnessing('c1', 5_000 + WINDOW), false);
});

test('retain forgets the clusters no longer configured once their window closed: a configuration placed again looks afresh', () => {
  const w = new WitnessWindows(WINDOW);
  w.worked('c1', 0);
  assert.equal(w.witnessing('c1', WINDOW), false);
  w.retain(new Set(['c1']));
  assert.equal(w.witnessing('c1', WINDOW + 1), false, 'still configured: remembered as closed');
  w.retain(new Set());
  assert.equal(w.witnessing('c1', 3 * WINDOW), true, 'withdrawn, then placed again: a new first look');
  w.worked('c2', 0);
  w.retain(new Set());
  assert.equal(w.witnessing('c2', WINDOW - 1), true, 'a window still open is kept whether or not the configuration is observed');
});
