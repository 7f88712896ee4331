// What the core/status unit tests judge: a spoke's feedback for a copy applied just before NOW (within the
// status grace), and the helpers that judge one cluster.
import assert from 'node:assert/strict';
import type { ClusterFeedback } from '../src/core/works/feedback.ts';
import { aggregatePolicyStatus, type ClusterInput, type ClusterStatus } from '../src/core/status/policystatus.ts';

/** The time statuses are judged at; works in these tests were applied just before, within the grace. */
export const NOW = Date.parse('2026-01-01T00:10:00Z');
export const JUST_APPLIED = NOW - 5_000;

/** A copy applied, available and enforced at its current generation, unless `extra` says otherwise. */
export function feedback(extra: Partial<ClusterFeedback> = {}): ClusterFeedback {
  return {
    applied: true,
    available: true,
    appliedObservedCurrent: true,
    generation: 2,
    enforcedGeneration: 2,
    accepted: { status: 'True', reason: 'Accepted', message: 'accepted' },
    enforced: { status: 'True', reason: 'Enforced', message: 'AuthPolicy has been successfully enforced' },
    ancestors: [],
    appliedAt: JUST_APPLIED,
    extra: {},
    ...extra,
  };
}

export const work = (extra: Partial<ClusterFeedback> = {}): ClusterInput => ({ state: 'work', feedback: feedback(extra) });

/** The status the hub gives one cluster `c1` with this input, at NOW. */
export function one(input: ClusterInput): ClusterStatus {
  const status = aggregatePolicyStatus({ now: NOW, clusters: { c1: input } });
  const cluster = status.clusters?.c1;
  assert.ok(cluster);
  return cluster;
}

/** `count` clusters, each Overridden with a long message: enough of them overflow the annotation. */
export function manyClusters(count: number): Record<string, ClusterInput> {
  const clusters: Record<string, ClusterInput> = {};
  for (let i = 0; i < count; i += 1) {
    clusters[`cluster-${String(i).padStart(4, '0')}`] = work({
      enforced: { status: 'False', reason: 'Overridden', message: `AuthPolicy is overridden by [ns/${'l'.repeat(400)}${i}]` },
    });
  }
  return clusters;
}
