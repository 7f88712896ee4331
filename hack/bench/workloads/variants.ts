// Workload 6, per-cluster copies (docs/concepts/variants.md): each bench cluster bench-cN carries label
// bench.policy-sync.io/zone=zN, and each of the P policies a PolicyVariant setting its copy's denial message from
// that label, so that every one of the P×C copies is different. On the fan-out's world, its Gateway and works
// removed first:
//   a. the fan-out again (fanout.ts, its rounds and timing), against bare creates of the same rendered works (no
//      OCM: its replica sets give every cluster the same copy), and the controller's peak RSS;
//   b. one variant edit changing one cluster's copy (an entry for bench-c1 alone): one work written;
//   c. bench-c1's zone label changed, which all P variants read: P works written, all on bench-c1, nothing else.
// The works expected are the core's own decisions (core/pipeline/policypipeline.ts decidePolicy) over the hub as
// read before the fan-out, and as each step leaves it, as `policy-sync diff` makes them: the controller's
// rendering, schema check and all.
import { performance } from 'node:perf_hooks';
import { groupResourceKey } from '../../../src/core/k8s/gvr.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { parseParamsJson } from '../../../src/core/params/params.ts';
import { decidePolicy } from '../../../src/core/pipeline/policypipeline.ts';
import { SnapshotView, type HubSnapshot } from '../../../src/core/pipeline/snapshotview.ts';
import type { OpenApiSchema } from '../../../src/core/variants/schemacheck.ts';
import { controllerLabelValue, readSourceRef, type ManifestWork } from '../../../src/core/works/manifestwork.ts';
import { crdVersionHasStatus, crdVersionSchema, readCrd } from '../../../src/kube/discovery.ts';
import { RESOURCES } from '../../../src/kube/resource.ts';
import { mergePatch, serverSideApply } from '../../../src/kube/writes.ts';
import { delta, waitQuiet } from '../../../testkit/counters.ts';
import { AUTH_POLICIES, gateway } from '../../../testkit/fixtures.ts';
import { BENCH_LABEL, FIELD_MANAGER, hashes, listAll, pool } from '../../../testkit/world.ts';
import { log, type Bench, type ResultDraft } from '../config.ts';
import { rssOf } from '../controller.ts';
import { median, type VariantsResult, type WriteReport } from '../report.ts';
import { Tracker } from '../tracker.ts';
import { policyWrites, report, variantStatusWrites, workWrites } from '../writes.ts';
import { fanout, policySyncSelector, policySyncTrackers, resetPolicySync } from './fanout.ts';
import type { World } from './world.ts';

/** The cluster label every variant reads, and the field of the AuthPolicy copy it sets (a string). */
export const ZONE_LABEL = 'bench.policy-sync.io/zone';
export const ZONE_FIELD = 'spec.rules.response.unauthorized.message.value';
/** The edit of workload 6b: an entry for this cluster alone, with a patch of its copy. */
const EDITED_CLUSTER_INDEX = 0;
const EDIT_PATCH = { spec: { rules: { response: { unauthorized: { code: 451 } } } } };

const zoneOf = (clusterIndex: number): string => `z${clusterIndex + 1}`;

function zoneVariant(namespace: string, policy: string, extraEntries: unknown[] = []): KubeObject {
  return {
    apiVersion: 'policysync.kuadrant.io/v1alpha1',
    kind: 'PolicyVariant',
    metadata: { namespace, name: `${policy}-zone`, labels: { [BENCH_LABEL]: 'run' } },
    spec: {
      targetRef: { group: 'kuadrant.io', kind: 'AuthPolicy', name: policy },
      entries: [{ values: [{ path: ZONE_FIELD, valueFrom: { clusterLabel: { key: ZONE_LABEL } } }] }, ...extraEntries],
    },
  };
}

/** The hub as the controller's decisions read it for the run's policies, read once; Gateway `gw` as the fan-out creates it. */
async function readHub(bench: Bench): Promise<HubSnapshot> {
  const { http } = bench;
  const { ns, className } = bench.cfg;
  const [managedClusters, clusterSets, bindings, placements, decisions, variants, crd, params] = await Promise.all([
    listAll(http, RESOURCES.managedClusters),
    listAll(http, RESOURCES.managedClusterSets),
    listAll(http, RESOURCES.managedClusterSetBindings, ns),
    listAll(http, RESOURCES.placements, ns),
    listAll(http, RESOURCES.placementDecisions, ns),
    listAll(http, RESOURCES.policyVariants, ns),
    readCrd(http, AUTH_POLICIES),
    http.request<KubeObject & { data?: Record<string, string> }>('GET', `/api/v1/namespaces/${ns}/configmaps/params`),
  ]);
  const parsed = parseParamsJson(params.data?.params ?? '');
  if (!parsed.ok) throw new Error(`the run's params do not parse: ${parsed.errors.join('; ')}`);
  const schema = crdVersionSchema(crd, AUTH_POLICIES.version) as OpenApiSchema | undefined;
  return {
    classes: new Map([[className, parsed.params]]),
    gateways: [gateway(ns, 'gw', className, 'bench')],
    placements,
    decisions,
    managedClusters,
    clusterSets,
    bindings,
    trustDecisionLabels: false,
    reports: new Map(),
    kinds: new Map([[groupResourceKey(AUTH_POLICIES), { ...(crd ? { crdUid: crd.uid } : {}), statusSubresource: crdVersionHasStatus(crd, AUTH_POLICIES.version), ...(schema ? { schema } : {}) }]]),
    variants,
  };
}

/**
 * The works controller `controllerName` writes for `policies` over `hub`, as the core decides them; `observed`:
 * the works in place (a copy an edit leaves as it is keeps its record of the variants' generations). Every copy
 * must render: a bench variant that fails is a broken bench.
 */
function decidedWorks(hub: HubSnapshot, policies: readonly KubeObject[], controllerName: string, crdUid: string | undefined, observed: readonly KubeObject[] = []): ManifestWork[] {
  const key = groupResourceKey(AUTH_POLICIES);
  const facts = hub.kinds?.get(key) ?? { statusSubresource: true };
  const { crdUid: _ignored, ...withoutUid } = facts;
  const view = new SnapshotView({ ...hub, kinds: new Map([[key, { ...withoutUid, ...(crdUid === undefined ? {} : { crdUid }) }]]) });
  const byPolicy = new Map<string, KubeObject[]>();
  for (const w of observed) {
    const ref = readSourceRef(w);
    const k = `${ref?.namespace}/${ref?.name}`;
    byPolicy.set(k, [...(byPolicy.get(k) ?? []), w]);
  }
  return policies.flatMap((policy) => {
    const decision = decidePolicy(view, {
      gvr: AUTH_POLICIES,
      policy,
      observed: byPolicy.get(`${policy.metadata.namespace}/${policy.metadata.name}`) ?? [],
      controller: controllerLabelValue(controllerName),
      rawFeedback: false,
      maxWorkBytes: 500 * 1024,
      now: Date.now(),
    });
    const failed = decision.variantFailures[0];
    if (failed) throw new Error(`policy ${policy.metadata.name}: cluster ${failed.cluster}'s copy does not render: ${failed.message}`);
    return [...decision.desired.works.values()];
  });
}

/** The works whose spec-hash differs between two readings of the tracker. */
function changedWorks(before: ReadonlyMap<string, string | undefined>, after: ReadonlyMap<string, string | undefined>): string[] {
  return [...after].filter(([k, v]) => before.get(k) !== v).map(([k]) => k).sort();
}

/** Fills in `result.variants`. Leaves the controller running on the P×C rendered works. */
export async function variants(bench: Bench, baseWorld: World, result: ResultDraft): Promise<void> {
  const { http, kubeConfig } = bench;
  const { P, C, ns, controllerName } = bench.cfg;
  const N = P * C;
  const { clusters } = baseWorld;
  // The fan-out's world taken down (controller, Gateway, works, annotations), with nothing written meanwhile.
  const gone = await new Tracker(http, RESOURCES.manifestWorks, { labelSelector: policySyncSelector(bench) }, () => '').start();
  await resetPolicySync(bench, baseWorld, gone);
  await gone.stop();
  await pool(clusters, 8, (name) => {
    const zone = zoneOf(clusters.indexOf(name));
    return mergePatch(http, RESOURCES.managedClusters, undefined, name, { metadata: { labels: { [ZONE_LABEL]: zone } } }, { fieldManager: FIELD_MANAGER });
  });
  // The policies as they are now (workload 2b changed one), each with its variant.
  const policies = (await listAll(http, AUTH_POLICIES, ns)).map((p) => ({ ...p, apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy' }));
  await pool(policies, 16, (p) => serverSideApply(http, RESOURCES.policyVariants, zoneVariant(ns, p.metadata.name), { fieldManager: FIELD_MANAGER }));
  log(`variants: ${C} clusters labelled ${ZONE_LABEL}, ${P} PolicyVariants setting ${ZONE_FIELD} from it`);
  const fanoutHub = await readHub(bench);
  const world: World = { clusters, policies, works: (controller, crdUid) => decidedWorks(fanoutHub, policies, controller, crdUid), variants: P };
  let hub = fanoutHub;

  // a. the fan-out of P×C copies, each its own, against bare creates of the same works.
  const trackers = await policySyncTrackers(bench, world);
  const draft: ResultDraft = { fanout: {}, writes: {} };
  try {
    const distinct = new Set(trackers.expected.values()).size;
    if (distinct !== N) throw new Error(`variants: ${distinct} distinct works of ${N}: the copies should all differ`);
    const fan = await fanout(bench, world, trackers, draft, { ssa: false, ocm: false });
    const rss = rssOf(fan.controller.pid);
    const { works, expected, crdUid } = trackers;

    // b. one variant edit: an entry giving the first cluster's copy of the first policy a patch of its own.
    const edited = clusters[EDITED_CLUSTER_INDEX]!;
    const first = policies[0]!;
    // What each step should write is decided before it, over the hub as it will be (the harness's decisions
    // out of the window; the same schema object, whose compiled check the core keeps).
    const before = new Map(works.seen);
    const running = decidedWorks(hub, [first], controllerName, crdUid);
    const editedVariant = zoneVariant(ns, first.metadata.name, [{ clusters: { names: [edited] }, patch: EDIT_PATCH }]);
    hub = { ...hub, variants: (hub.variants ?? []).map((v) => (v.metadata.name === editedVariant.metadata.name ? { ...v, metadata: { ...v.metadata, generation: (v.metadata.generation ?? 0) + 1 }, spec: editedVariant.spec } : v)) };
    const afterEdit = new Map(expected);
    for (const [k, v] of hashes(decidedWorks(hub, [first], controllerName, crdUid, running))) afterEdit.set(k, v);
    const quiet = (await waitQuiet(kubeConfig)).snapshot;
    const editStart = performance.now();
    await serverSideApply(http, RESOURCES.policyVariants, editedVariant, { fieldManager: FIELD_MANAGER });
    const editMs = (await works.expect(afterEdit, `the edited variant's work on ${edited}`, 120_000)) - editStart;
    const editQuiet = await waitQuiet(kubeConfig);
    const editChanged = changedWorks(before, works.seen);
    const editWrites: VariantsResult['writes']['edit'] = {
      ...report(delta(quiet, editQuiet.snapshot), { 'APPLY policysync.kuadrant.io/policyvariants': 1 }, 1, editQuiet.quiet, {
        text: `1 work write (${edited}) + ≤ 1 patch + ≤ 1 variant status`,
        ok: (w) =>
          workWrites(w) === 1 &&
          editChanged.length === 1 &&
          editChanged[0]!.startsWith(`${edited}/`) &&
          policyWrites(w) <= 1 &&
          variantStatusWrites(w) <= 1 &&
          w.total === 1 + policyWrites(w) + variantStatusWrites(w),
      }),
      ms: editMs,
      changed: editChanged,
    };
    log(`variants: one variant edit: ${editChanged.length} work(s) rewritten in ${editMs.toFixed(0)} ms`);

    // c. the edited cluster's zone label changed: every policy's copy there, and no other.
    const beforeLabel = new Map(works.seen);
    const inPlace = await listAll(http, RESOURCES.manifestWorks, undefined, policySyncSelector(bench));
    const newZone = `${zoneOf(EDITED_CLUSTER_INDEX)}-moved`;
    const relabel = (c: KubeObject): KubeObject => (c.metadata.name === edited ? { ...c, metadata: { ...c.metadata, labels: { ...c.metadata.labels, [ZONE_LABEL]: newZone } } } : c);
    hub = { ...hub, managedClusters: hub.managedClusters.map(relabel) };
    const afterLabel = hashes(decidedWorks(hub, policies, controllerName, crdUid, inPlace));
    const labelStart = performance.now();
    await mergePatch(http, RESOURCES.managedClusters, undefined, edited, { metadata: { labels: { [ZONE_LABEL]: newZone } } }, { fieldManager: FIELD_MANAGER });
    const labelMs = (await works.expect(afterLabel, `the ${P} works on ${edited}`, 120_000)) - labelStart;
    const labelQuiet = await waitQuiet(kubeConfig);
    const labelChanged = changedWorks(beforeLabel, works.seen);
    const labelWrites: VariantsResult['writes']['label'] = {
      ...report(delta(editQuiet.snapshot, labelQuiet.snapshot), { 'PATCH cluster.open-cluster-management.io/managedclusters': 1 }, P, labelQuiet.quiet, {
        text: `${P} work writes, all on ${edited}, nothing else`,
        ok: (w) => workWrites(w) === P && w.total === P && labelChanged.length === P && labelChanged.every((k) => k.startsWith(`${edited}/`)),
      }),
      ms: labelMs,
      changed: labelChanged,
    };
    log(`variants: ${edited}'s label changed: ${labelChanged.length} work(s) rewritten in ${labelMs.toFixed(0)} ms`);

    const rounds = fan.rounds;
    result.variants = {
      label: ZONE_LABEL,
      field: ZONE_FIELD,
      editedCluster: edited,
      policySync: draft.fanout.policySync!,
      ...(draft.fanout.bareCreate ? { bareCreate: draft.fanout.bareCreate } : {}),
      rounds,
      ...(rounds.length > 0 ? { ratioBareCreate: median(rounds.map((r) => r.ratio)) } : {}),
      memory: { peakRssMiB: rss.peakMiB, rssMiB: rss.rssMiB, works: N },
      writes: { fanout: draft.writes.fanout as WriteReport, edit: editWrites, label: labelWrites },
    };
  } finally {
    await trackers.stop();
  }
}
