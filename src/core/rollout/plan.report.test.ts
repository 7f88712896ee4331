// Each cluster's revision, and where a Progressive rollout stands, as the status report (core/status/report.ts)
// shows the planner's plans: beside the planner, which imports the status (the status does not import it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { POLICIES_SYNCED_ANNOTATION, STATUS_ANNOTATION } from '../metadatakeys.ts';
import { cutMessage } from '../k8s/sanitize.ts';
import { desiredWorksForPolicy } from '../works/desiredworks.ts';
import { ALL, PROGRESSIVE_DEFAULTS } from '../params/strategy.ts';
import { readPolicyStatus } from '../status/annotation.ts';
import { reportPolicyStatus } from '../status/report.ts';
import type { StatusInput } from '../status/statusinput.ts';
import { planRollout, type RolloutPlan } from './plan.ts';
import { NOW } from '../../../testkit/statusfixtures.ts';
import { desired, live, policy } from '../../../testkit/reportfixtures.ts';

const gvr = { group: 'gateway.envoyproxy.io', version: 'v1alpha1', resource: 'backendtrafficpolicies' };

function desiredAt(generation: number, clusters: string[]) {
  return desiredWorksForPolicy({
    gvr,
    policy: { ...policy, metadata: { ...policy.metadata, generation }, spec: { ...policy.spec, timeout: { http: { requestTimeout: `${generation}s` } } } },
    gateways: () => ({ managed: true, downstreamNamespaceTemplate: '{namespace}', clusters, kindAllowed: true }),
    rawFeedback: false,
    statusFeedback: [],
    maxWorkBytes: 500 * 1024,
  });
}

/**
 * Revision 3 rolling out one cluster a wave over c1..c3: c1 reached, c2 runs revision 2 and waits, c3 joined with
 * no work and gets revision 2 (held). `fresh`: no cluster ran the policy before, c2 and c3 wait with no copy.
 */
function rollingOut(fresh = false): { input: StatusInput; plan: RolloutPlan } {
  const d = desiredAt(3, ['c1', 'c2', 'c3']);
  const c2At2 = live(desiredAt(2, ['c2']).works.get('c2')!, NOW - 99_000, true);
  const observed = fresh ? [] : [c2At2];
  const plan = planRollout({
    strategy: { type: 'Progressive', ...PROGRESSIVE_DEFAULTS, maxConcurrency: { count: 1 } },
    revision: 3,
    resume: false,
    clusters: [...d.works].map(([cluster, desired]) => ({ cluster, labels: {}, desired, ...(cluster === 'c2' && !fresh ? { observed: c2At2 } : {}) })),
    soak: new Map(),
    now: NOW,
    maxWorkBytes: 500 * 1024,
  });
  assert.deepEqual([...plan.write.keys()], fresh ? ['c1'] : ['c1', 'c3']);
  assert.deepEqual([...plan.keep], fresh ? [] : ['c2']);
  assert.deepEqual(plan.waiting, fresh ? ['c2', 'c3'] : []);
  const input: StatusInput = {
    desired: d,
    losses: [],
    observed,
    written: [...plan.write.values()],
    kept: observed,
    rollout: { status: plan.status, clusters: plan.clusters, waiting: plan.waiting },
  };
  return { input, plan };
}

const pendingWork = {
  state: 'Pending',
  applied: false,
  available: false,
  enforced: 'Unknown',
  reason: 'Pending',
  message: 'waiting for the ManifestWork status from the cluster',
  upToDate: false,
} as const;

test('reportPolicyStatus: a Progressive rollout shows each cluster\'s revision and phase, and the rollout on the policy', () => {
  const { input, plan } = rollingOut();
  const report = reportPolicyStatus(input, 500 * 1024, NOW);
  const { clusters } = report.status;
  assert.ok(clusters);
  assert.deepEqual(clusters.c1, { ...pendingWork, revision: 3, rollout: { phase: 'Progressing', message: 'revision 3 being placed' } });
  assert.equal(clusters.c2?.state, 'Enforced', 'a kept work is judged by its own status');
  assert.equal(clusters.c2?.revision, 2);
  assert.deepEqual(clusters.c2?.rollout, { phase: 'Waiting', message: 'runs revision 2 until its wave' });
  assert.deepEqual(clusters.c3, {
    ...pendingWork,
    revision: 2,
    rollout: { phase: 'Held', message: 'joined during the rollout: gets revision 2, the last completed, until revision 3 completes' },
  });
  assert.deepEqual(report.status.rollout, plan.status);
  assert.deepEqual(report.status.rollout, { strategy: 'Progressive', revision: 3, state: 'Progressing', wave: 1, waves: 3, message: 'wave 1 of 3: c1' });
  assert.deepEqual(report.counts, { enforced: 1, overridden: 0, pending: 2, failed: 0, unknown: 0, drifted: 0, lingering: 0 });
  assert.deepEqual((JSON.parse(report.annotations[POLICIES_SYNCED_ANNOTATION]!) as { cluster: string }[]).map((e) => e.cluster), ['c1', 'c2', 'c3']);
  assert.deepEqual(readPolicyStatus(report.annotations[STATUS_ANNOTATION]), report.status, 'the annotation holds it all and reads back');
});

test('reportPolicyStatus: a cluster a new policy\'s rollout has not reached has no copy: Pending, RolloutWaiting, no revision', () => {
  const { input } = rollingOut(true);
  const report = reportPolicyStatus(input, 500 * 1024, NOW);
  const waiting = {
    state: 'Pending',
    applied: false,
    available: false,
    enforced: 'Unknown',
    reason: 'RolloutWaiting',
    message: 'no copy until its wave',
    upToDate: false,
    rollout: { phase: 'Waiting', message: 'no copy until its wave' },
  };
  assert.deepEqual(report.status.clusters?.c2, waiting);
  assert.deepEqual(report.status.clusters?.c3, waiting);
  assert.equal(report.status.clusters?.c1?.revision, 3);
  assert.deepEqual(report.counts, { enforced: 0, overridden: 0, pending: 3, failed: 0, unknown: 0, drifted: 0, lingering: 0 });
  assert.deepEqual((JSON.parse(report.annotations[POLICIES_SYNCED_ANNOTATION]!) as { cluster: string }[]).map((e) => e.cluster), ['c1'], 'synced only where a copy is');
});

test('reportPolicyStatus: the rollout\'s messages are cut like the clusters\'', () => {
  const { input } = rollingOut();
  const long = `halted: ${'x'.repeat(400)}`;
  const rollout = input.rollout!;
  const halted: StatusInput = {
    ...input,
    rollout: {
      ...rollout,
      status: { ...rollout.status, state: 'Halted', halted: { cluster: 'c1', reason: 'TargetNotFound', message: long, rolledBack: false }, message: long },
      clusters: { ...rollout.clusters, c1: { phase: 'Failed', wave: 1, reason: 'TargetNotFound', message: long } },
    },
  };
  const status = reportPolicyStatus(halted, 500 * 1024, NOW).status;
  assert.equal(status.rollout?.message, cutMessage(long));
  assert.equal(status.rollout?.halted?.message, cutMessage(long));
  assert.equal(status.clusters?.c1?.rollout?.message, cutMessage(long));
  assert.notEqual(cutMessage(long), long);
});

test('reportPolicyStatus: with All (or no plan), each cluster\'s revision only; no rollout block', () => {
  const d = desiredAt(3, ['c1', 'c2']);
  const works = [...d.works.values()];
  const all = planRollout({ strategy: ALL, revision: 3, resume: false, clusters: works.map((w) => ({ cluster: w.metadata.namespace, labels: {}, desired: w })), soak: new Map(), now: NOW, maxWorkBytes: 500 * 1024 });
  const base: StatusInput = { desired: d, losses: [], observed: [live(works[0]!, NOW - 5_000, true)], written: works };
  for (const input of [base, { ...base, rollout: { status: all.status, clusters: all.clusters, waiting: all.waiting } }]) {
    const status = reportPolicyStatus(input, 500 * 1024, NOW).status;
    assert.equal(status.rollout, undefined);
    assert.equal(status.clusters?.c1?.revision, 3);
    assert.equal(status.clusters?.c2?.revision, 3);
    assert.equal(status.clusters?.c1?.rollout, undefined);
  }
  // A work from before revisions were recorded: no revision.
  const unrecorded = desired(['c1']);
  const status = reportPolicyStatus({ desired: unrecorded, losses: [], observed: [], written: [...unrecorded.works.values()] }, 500 * 1024, NOW).status;
  assert.equal('revision' in status.clusters!.c1!, false);
});
