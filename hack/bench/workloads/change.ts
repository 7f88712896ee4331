// Workload 2b, one policy changed after the fan-out: timed to its C works rewritten, and its writes (C work
// updates and at most one annotation patch).
import { performance } from 'node:perf_hooks';
import { delta, waitQuiet, type Snapshot } from '../../../testkit/counters.ts';
import { AUTH_POLICIES, apply, authPolicy, get } from '../../../testkit/fixtures.ts';
import { hashes, worksFor } from '../../../testkit/world.ts';
import { log, type Bench, type ResultDraft } from '../config.ts';
import { report, workWrites } from '../writes.ts';
import type { PolicySyncTrackers } from './fanout.ts';
import type { World } from './world.ts';

/** Changes the first policy; fills in `result.writes.change`. `afterFanout`: the counters the fan-out ended on. */
export async function changeOnePolicy(bench: Bench, world: World, trackers: PolicySyncTrackers, afterFanout: { snapshot: Snapshot }, result: ResultDraft): Promise<void> {
  const { kubeConfig, http } = bench;
  const { C, ns, runId, controllerName } = bench.cfg;
  const { clusters, policies } = world;
  const { works, expected, crdUid } = trackers;
  const changed = authPolicy(ns, policies[0]!.metadata.name, 'gw', { rules: { authorization: { deny: { opa: { rego: `allow = input.bench == "${runId}"` } } } } });
  const beforeChange = afterFanout.snapshot;
  const changeStart = performance.now();
  await apply(http, changed);
  const stored = (await get(http, AUTH_POLICIES, ns, changed.metadata.name))!;
  const next = new Map(expected);
  for (const [k, v] of hashes(worksFor([{ ...stored, apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy' }], ns, clusters, controllerName, crdUid))) next.set(k, v);
  const changeMs = (await works.expect(next, `the ${C} works of the changed policy`, 120_000)) - changeStart;
  const afterChange = await waitQuiet(kubeConfig);
  result.writes.change = {
    ...report(delta(beforeChange, afterChange.snapshot), { 'APPLY kuadrant.io/authpolicies': 1 }, C, afterChange.quiet, {
      text: `${C} work updates + ≤ 1 patch`,
      ok: (w) => workWrites(w) === C && w.total <= C + 1,
    }),
    ms: changeMs,
  };
  log(`one policy changed: its ${C} works rewritten in ${changeMs.toFixed(0)} ms`);
}
