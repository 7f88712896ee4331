import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WITNESS_FRESH_MS, WitnessWindows } from './witnesswindows.ts';

const WINDOW = 60_000;
const LOOK = 5_000;

test('a cluster witnesses for the window after its last work of ours, then, its report fresh for WITNESS_FRESH_MS, not', () => {
  const w = new WitnessWindows(WINDOW);
  w.worked('c1', 0);
  assert.equal(w.witnessing('c1', 1_000, true), true);
  assert.equal(w.endsIn(1_000, LOOK), WINDOW - 1_000);
  assert.equal(w.witnessing('c1', WINDOW - 1, true), true);
  assert.equal(w.witnessing('c1', WINDOW, true), false, 'fresh since 1 s: past both');
  assert.equal(w.witnessing('c1', 2 * WINDOW, false), false, 'a window closed stays closed, whatever the report then');
  assert.equal(w.endsIn(2 * WINDOW, LOOK), undefined);
});

test('no fresh report, no close: a window past its time waits for a report fresh for WITNESS_FRESH_MS (the agent down as the work went: the copy it left has no other witness)', () => {
  const w = new WitnessWindows(WINDOW);
  w.worked('c1', 0);
  assert.equal(w.witnessing('c1', 10 * WINDOW, false), true, 'stale: kept, however long after');
  assert.equal(w.endsIn(10 * WINDOW, LOOK), LOOK, 'looked at again while it waits');
  assert.equal(w.witnessing('c1', 10 * WINDOW + 1, true), true, 'fresh only now');
  assert.equal(w.endsIn(10 * WINDOW + 1, LOOK), WITNESS_FRESH_MS);
  assert.equal(w.witnessing('c1', 10 * WINDOW + 1 + WITNESS_FRESH_MS / 2, false), true, 'stale again: its fresh time starts over');
  assert.equal(w.witnessing('c1', 10 * WINDOW + WITNESS_FRESH_MS, true), true);
  assert.equal(w.witnessing('c1', 10 * WINDOW + 2 * WITNESS_FRESH_MS, true), false);
});

test('a cluster first looked at with no work of ours (a restart, a new leader) witnesses for the window from that look: when its last work left is not known', () => {
  const w = new WitnessWindows(WINDOW);
  assert.equal(w.witnessing('c1', 5_000, true), true, 'not known is not long ago');
  assert.equal(w.witnessing('c1', 5_000 + WINDOW - 1, true), true);
  assert.equal(w.witnessing('c1', 5_000 + WINDOW, true), false);
});

test('retain forgets the clusters no longer configured once not witnessing: a configuration placed again looks afresh; a work reopens a closed window', () => {
  const w = new WitnessWindows(WINDOW);
  w.worked('c1', 0);
  assert.equal(w.witnessing('c1', 0, true), true);
  assert.equal(w.witnessing('c1', WINDOW, true), false);
  w.retain(new Set(['c1']));
  assert.equal(w.witnessing('c1', WINDOW + 1, true), false, 'still configured: remembered as closed');
  w.retain(new Set());
  assert.equal(w.witnessing('c1', 3 * WINDOW, true), true, 'withdrawn, then placed again: a new first look');
  w.worked('c2', 0);
  w.retain(new Set());
  assert.equal(w.witnessing('c2', WINDOW - 1, true), true, 'a window still open is kept whether or not the configuration is observed');
  assert.equal(w.witnessing('c2', 2 * WINDOW, true), false);
  w.worked('c2', 2 * WINDOW);
  assert.equal(w.witnessing('c2', 2 * WINDOW + 1, true), true, 'a work there again opens a new window');
});
