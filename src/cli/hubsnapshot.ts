// The hub as the hub controller's caches hold it, read once with GETs and LISTs, for the commands that run the
// hub's own decisions over it (core/pipeline/policypipeline.ts): `diff` previews a change with it, `explain`
// tells what the variants set in each cluster's copy. The kind's facts are read from its CRD with the class
// reconciler's own helpers (kube/discovery.ts), so a preview converts and checks variant values against the same
// schema as the hub. Nothing is written.
import { groupResourceKey, gvrKey } from '../core/k8s/gvr.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { CONTROLLER_LABEL } from '../core/metadatakeys.ts';
import type { KindFacts } from '../core/pipeline/hubview.ts';
import type { HubSnapshot } from '../core/pipeline/snapshotview.ts';
import { SPOKE_CONFIG_LABEL, spokeReportText } from '../core/spoke/spokeconfig.ts';
import { parseSpokeReport } from '../core/spoke/reportwire.ts';
import { type SpokeReport } from '../core/spoke/spokereport.ts';
import type { OpenApiSchema } from '../core/variants/schemacheck.ts';
import { controllerLabelValue, readSourceRef } from '../core/works/manifestwork.ts';
import { crdVersionHasStatus, crdVersionSchema, readCrd, schemaHasObservedGeneration, type CrdInfo } from '../kube/discovery.ts';
import type { KubeHttp } from '../kube/http.ts';
import { RESOURCES } from '../kube/resource.ts';
import { errorLine } from './common.ts';
import { listAll } from './lists.ts';
import type { SyncedKind, SyncedKinds } from './status.ts';

/** The hub controller's flags a snapshot depends on. */
export interface SnapshotFlags {
  controllerName: string;
  trustDecisionLabels: boolean;
}

/** What the hub controller's caches hold, as far as its decisions for a policy read them. */
export async function readSnapshot(http: KubeHttp, flags: SnapshotFlags, synced: SyncedKinds): Promise<HubSnapshot> {
  const [gatewayClasses, gateways, placements, decisions, managedClusters, clusterSets, bindings, spokeConfigs, variants] = await Promise.all([
    listAll(http, RESOURCES.gatewayClasses),
    listAll(http, RESOURCES.gateways),
    listAll(http, RESOURCES.placements),
    listAll(http, RESOURCES.placementDecisions),
    listAll(http, RESOURCES.managedClusters),
    listAll(http, RESOURCES.managedClusterSets),
    listAll(http, RESOURCES.managedClusterSetBindings),
    listAll(http, RESOURCES.manifestWorks, { labelSelector: `${SPOKE_CONFIG_LABEL}=true,${CONTROLLER_LABEL}=${controllerLabelValue(flags.controllerName)}` }),
    listAll(http, RESOURCES.policyVariants),
  ]);
  // The reports as the spoke agents last wrote them, each counted as fresh: what the hub controller does
  // with them right after a start (it cannot know their age before it sees them change).
  const reports = new Map<string, SpokeReport>();
  const refusedReports = new Map<string, string>();
  for (const work of spokeConfigs) {
    const text = spokeReportText(work);
    if (text === undefined) continue;
    const parsed = parseSpokeReport(text);
    if (parsed.ok) reports.set(work.metadata.namespace ?? '', parsed.report);
    else refusedReports.set(work.metadata.namespace ?? '', `${parsed.field}: ${parsed.message}`);
  }
  // Who holds a tenant lane on a cluster is what the works there show; read only where two hub Gateways of a
  // class in force share a name, the only way two may share a lane (a large fleet's works are many).
  const names = new Set<string>();
  let sharedName = false;
  for (const g of gateways) {
    const className = (g.spec as { gatewayClassName?: unknown } | undefined)?.gatewayClassName;
    if (typeof className !== 'string' || !synced.params.has(className)) continue;
    if (names.has(g.metadata.name)) sharedName = true;
    names.add(g.metadata.name);
  }
  const works = sharedName ? await listAll(http, RESOURCES.manifestWorks, { labelSelector: `${CONTROLLER_LABEL}=${controllerLabelValue(flags.controllerName)}` }) : [];
  return {
    classes: synced.params,
    ownedClasses: synced.classes,
    classNames: new Set(gatewayClasses.map((c) => c.metadata.name)),
    servedKinds: new Set(synced.kinds.map(groupResourceKey)),
    gateways,
    placements,
    decisions,
    managedClusters,
    clusterSets,
    bindings,
    trustDecisionLabels: flags.trustDecisionLabels,
    reports,
    refusedReports,
    spokeAgents: spokeConfigs.length > 0,
    works,
    variants,
  };
}

/** The kind's CRD as the hub's class reconciler reads it (kube/discovery.ts); why not, when it cannot be read. */
export interface KindCrd {
  /** Undefined when the kind has no CRD (a built-in or aggregated resource). */
  crd?: CrdInfo;
  unreadable?: string;
}

export async function readKindCrd(http: KubeHttp, kind: SyncedKind): Promise<KindCrd> {
  try {
    const crd = await readCrd(http, kind);
    return crd ? { crd } : {};
  } catch (err) {
    // No right to read CRDs: the file is taken as it is, and said so.
    return { unreadable: errorLine(err) };
  }
}

/**
 * What the hub controller knows of the kind, read from the same CRD with the same helpers as its class reconciler:
 * the uid recorded in each work (as the policy's works carry it, else the CRD's), whether its status is a
 * subresource (none without a CRD, as on the hub), the version's openAPIV3Schema (variants' values are converted
 * and their copies checked by it), and whether a Progressive rollout can gate on it. A CRD that cannot be read:
 * the update strategy the policy's works carry, else `Update`, and no schema (a variant's copy is refused, as on
 * a hub that could not read it).
 */
export function kindFacts(kind: SyncedKind, { crd, unreadable }: KindCrd, observed: readonly KubeObject[]): { facts: KindFacts; ungated?: { apiVersion: string; kind: string; name: string } } {
  const uid = observed.map((w) => readSourceRef(w)?.crdUid).find((u) => u !== undefined) ?? crd?.uid;
  const statusSubresource = unreadable === undefined ? crdVersionHasStatus(crd, kind.version) : observedStrategy(observed) === 'Update';
  const schema = crdVersionSchema(crd, kind.version);
  const facts: KindFacts = { ...(uid === undefined ? {} : { crdUid: uid }), statusSubresource, ...(schema ? { schema: schema as OpenApiSchema } : {}) };
  const ungated = crd !== undefined && schemaHasObservedGeneration(schema) === false;
  return { facts, ...(ungated ? { ungated: { apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, name: gvrKey(kind) } } : {}) };
}

/** The update strategy the policy's works carry for their copy; Update when none says. */
function observedStrategy(observed: readonly KubeObject[]): 'Update' | 'ServerSideApply' {
  for (const w of observed) {
    const type = (w.spec as { manifestConfigs?: { updateStrategy?: { type?: unknown } }[] } | undefined)?.manifestConfigs?.[0]?.updateStrategy?.type;
    if (type === 'ServerSideApply' || type === 'Update') return type;
  }
  return 'Update';
}
