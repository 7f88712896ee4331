// Workload 7, the cost of the evidence gate (docs/design/tenancy.md#reports-are-evidence-not-orders): the same
// fan-out with the spoke configuration placed and every cluster's agent reporting, against the fan-out of the
// explicit no-agent mode (`--spoke-config=none`, the other workloads' mode), back to back on the same world. The
// bench's clusters have no spoke: each cluster's report is the status OCM's work agent would write once a spoke
// agent reported that no policy of its own exists there (testkit/spokereport.ts), read by the hub before the clock
// starts. The hub places the spoke configuration only where a Gateway of its classes is: a second Gateway, which
// no policy targets, is placed on the clusters before the clock (in both legs, alike). With reports, the hub gives a cluster a first copy only once its fresh report vouches for the name,
// for each of the P×C (policy, cluster) pairs.
import { DEFAULT_SPOKE_CONFIG } from '../../../src/cli/spoke.ts';
import { RESOURCES } from '../../../src/kube/resource.ts';
import { eventually } from '../../../testkit/eventually.ts';
import { AUTH_POLICIES, apply, gateway, remove } from '../../../testkit/fixtures.ts';
import { reportNothingLocal } from '../../../testkit/spokereport.ts';
import { listAll } from '../../../testkit/world.ts';
import { log, type Bench, type ResultDraft } from '../config.ts';
import { controllerMetrics } from '../controller.ts';
import { Tracker } from '../tracker.ts';
import { policySyncLeg, policySyncSelector, policySyncTrackers, resetPolicySync } from './fanout.ts';
import type { World } from './world.ts';

/** The hub's default `--spoke-config`. */
const [namespace = '', name = ''] = DEFAULT_SPOKE_CONFIG.split('/');
const SPOKE_CONFIG = { namespace, name };

/** Fills in `result.evidence`; leaves the no-agent leg's controller running on its works, as the fan-out's. */
export async function evidence(bench: Bench, baseWorld: World, result: ResultDraft): Promise<void> {
  const { http } = bench;
  const { ns, controllerName, className } = bench.cfg;
  const { clusters } = baseWorld;
  const gone = await new Tracker(http, RESOURCES.manifestWorks, { labelSelector: policySyncSelector(bench) }, () => '').start();
  await resetPolicySync(bench, baseWorld, gone);
  await gone.stop();
  // The policies as they are now (workload 2b changed one).
  const policies = (await listAll(http, AUTH_POLICIES, ns)).map((p) => ({ ...p, apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy' }));
  const world: World = { clusters, policies };
  const trackers = await policySyncTrackers(bench, world);
  const anchor = gateway(ns, 'evidence-anchor', className, 'bench');
  await apply(http, anchor);
  try {
    // Gated first: the last leg's controller goes on to the next workloads, which run without spoke agents.
    const gated = await policySyncLeg(bench, world, trackers, 'evidence: policy-sync, every cluster reporting', {
      // Reports count for an hour from when the hub reads them: no heartbeat needs writing during the run.
      extraArgs: [`--spoke-config=${SPOKE_CONFIG.namespace}/${SPOKE_CONFIG.name}`, '--spoke-report-stale-after=1h'],
      beforeClock: async (controller) => {
        await Promise.all(clusters.map((cluster) => reportNothingLocal(http, cluster, { controllerName, configMap: SPOKE_CONFIG, kinds: ['authpolicies.kuadrant.io'] })));
        await eventually(
          async () => (await controllerMetrics(controller)).split('\n').filter((l) => l.startsWith('policysync_spoke_report_age_seconds{')).length === clusters.length || undefined,
          { what: `the hub to hold the reports of the ${clusters.length} clusters`, timeoutMs: 60_000 },
        );
      },
    });
    await resetPolicySync(bench, world, trackers.works);
    const ungated = await policySyncLeg(bench, world, trackers, 'evidence: policy-sync, no agents (--spoke-config=none)');
    result.evidence = { ungatedMs: ungated.fanout.ms, gatedMs: gated.fanout.ms, ratio: gated.fanout.ms / ungated.fanout.ms, works: gated.fanout.works, clusters: clusters.length };
    log(`evidence: ${gated.fanout.works} works in ${(gated.fanout.ms / 1000).toFixed(2)} s with every cluster reporting, ${(ungated.fanout.ms / 1000).toFixed(2)} s without agents (×${result.evidence.ratio.toFixed(2)})`);
  } finally {
    await remove(http, anchor);
    await trackers.stop();
  }
}
