// The desired ManifestWorks of one hub policy, collisions between policies, and the write plan
// against what is observed. Pure: the hub reconciler reads caches, calls these, writes the diff.
import { isDns1123Label } from '../k8s/dns.ts';
import { ancestorFeedbackGateways, feedbackRulesFor } from './feedbackrules.ts';
import type { FeedbackRule } from './feedbackrules.ts';
import type { FeedbackJsonPath } from '../feedbacknames.ts';
import { gvrKey } from '../k8s/gvr.ts';
import type { GroupVersionResource } from '../k8s/gvr.ts';
import { kubeTimeMillis } from '../k8s/kubetime.ts';
import { buildManifestWork, deleteOptionFor, readSpecHash, workSizeBytes } from './manifestwork.ts';
import type { CopyUpdateStrategy, ManifestWork } from './manifestwork.ts';
import { namespacedKey, objectKey, splitObjectKey, type KubeObject } from '../k8s/objects.ts';
import type { WorkKey } from '../keys.ts';
import { renderDownstreamNamespace } from '../params/params.ts';
import { DROPPED_KEYS_ANNOTATION, withDroppedKeys } from './droppedkeys.ts';
import { buildSpokeCopy } from './spokecopy.ts';
import { withCopyDigest } from './copydigest.ts';
import type { DefaultingSchema } from '../k8s/schemadefaults.ts';
import { classifyTargets, rewriteTargets } from '../targets/targetrefs.ts';
import { renderingKey, type CopyRendering, type VariantFailureReason } from '../variants/render.ts';
import type { GatewayRef, PolicyTargetRef, TargetRejectReason } from '../targets/targetrefs.ts';

/** What the hub knows about one Gateway, from its GatewayClass params and its placement. */
export interface GatewayPlacement {
  /** Its class is owned by this controller. */
  managed: boolean;
  /** The class's `downstreamNamespace` template. */
  downstreamNamespaceTemplate: string;
  /** Clusters from its PlacementDecisions (see clustersFromDecisions). */
  clusters: readonly string[];
  /** Its class lists the policy's resource in `policiesToSync`. */
  kindAllowed: boolean;
}

export type GatewayLookup = (namespace: string, name: string) => GatewayPlacement | undefined;

export type TargetReason = TargetRejectReason | 'KindNotSynced' | 'InvalidDownstreamNamespace' | 'NamespaceMismatch';

export type TargetReport =
  | {
      path: string;
      target: PolicyTargetRef;
      state: 'syncable';
      gateway: GatewayRef;
      sectionName?: string;
      downstreamNamespace: string;
      /** Clusters whose copy holds this target (may be empty: no placement decisions). */
      clusters: string[];
    }
  | { path: string; target?: PolicyTargetRef; state: 'rejected'; reason: TargetReason; message: string };

/** A target left out of one cluster's copy: another targeted Gateway there renders another namespace. */
export interface NamespaceMismatch {
  cluster: string;
  path: string;
  gateway: GatewayRef;
  downstreamNamespace: string;
  keptGateway: GatewayRef;
  keptNamespace: string;
  message: string;
}

export interface DesiredWorksInput {
  gvr: GroupVersionResource;
  policy: KubeObject;
  gateways: GatewayLookup;
  rawFeedback: boolean;
  /** The kind's extra feedback rules from params. */
  statusFeedback: readonly FeedbackJsonPath[];
  maxWorkBytes: number;
  /** The owning controller's label value (controllerLabelValue). */
  controller?: string;
  /** metadata.uid of the kind's CRD, recorded in each work's source-ref. */
  crdUid?: string;
  /** How the agent applies the copies (core/works/manifestwork.ts copyUpdateStrategy); default Update. */
  updateStrategy?: CopyUpdateStrategy;
  /**
   * The copy as last sent to the cluster (the copy of the policy's observed work there); undefined where none
   * was. Under Update, the keys it had that the new copy lacks are named on the copy (core/works/droppedkeys.ts).
   */
  sentCopy?: (cluster: string) => KubeObject | undefined;
  /**
   * The cluster's copy with the policy's variants applied (core/variants/render.ts); absent: no variant targets
   * the policy. A cluster whose rendering fails gets no work here (variantFailures).
   */
  render?: (cluster: string, copy: KubeObject, running: KubeObject | undefined) => CopyRendering;
  /**
   * The `spec` schema of the kind as the hub serves it: each copy's digest (core/works/copydigest.ts) hashes its
   * spec with the schema's defaults, as the spoke apiserver stores it. Undefined when not known.
   */
  specSchema?: DefaultingSchema;
}

/** A cluster whose copy the variants could not render: it gets no new work, and keeps the one it runs. */
export interface VariantFailure {
  cluster: string;
  reason: VariantFailureReason;
  message: string;
  /** The variants at fault, by name. */
  variants: string[];
}

export interface DesiredWorks {
  /** By cluster name, in sorted cluster order; clusters in tooLarge are absent. */
  works: Map<string, ManifestWork>;
  /** One report per target entry of the policy, in spec order. */
  targets: TargetReport[];
  mismatches: NamespaceMismatch[];
  /**
   * Clusters whose work exceeds maxWorkBytes: not written. Pass their work keys to diffWorks'
   * `retain` so that an existing, last good work there is not deleted.
   */
  tooLarge: string[];
  /** The policy has syncable targets but none of their Gateways is placed on any cluster. */
  noClusters: boolean;
  /** Clusters whose variants could not be rendered (absent from works). */
  variantFailures: VariantFailure[];
  /** What the variants set in each cluster's copy (clusters with none are absent). */
  renderings: Map<string, Extract<CopyRendering, { state: 'rendered' }>>;
}

type Placed = Extract<TargetReport, { state: 'syncable' }>;

export function desiredWorksForPolicy(input: DesiredWorksInput): DesiredWorks {
  const { gvr, policy, gateways } = input;
  const reports = classifyTargets(policy, (namespace, name) => gateways(namespace, name)?.managed === true).map(
    (classified): TargetReport => {
      if (classified.state === 'rejected') return classified;
      const { path, target, gateway } = classified;
      const placement = gateways(gateway.namespace, gateway.name);
      if (!placement?.kindAllowed) {
        return {
          path,
          target,
          state: 'rejected',
          reason: 'KindNotSynced',
          message: `the GatewayClass of Gateway ${gatewayKey(gateway)} does not list ${gvrKey(gvr)} in policiesToSync`,
        };
      }
      const template = placement.downstreamNamespaceTemplate;
      const downstreamNamespace = renderDownstreamNamespace(template, gateway.namespace);
      if (!isDns1123Label(downstreamNamespace)) {
        return {
          path,
          target,
          state: 'rejected',
          reason: 'InvalidDownstreamNamespace',
          message: `downstream namespace "${downstreamNamespace}" (template "${template}") of Gateway ${gatewayKey(gateway)} is not a valid DNS-1123 label`,
        };
      }
      return { ...classified, downstreamNamespace, clusters: [...new Set(placement.clusters)].sort() };
    },
  );

  const syncable = reports.filter((report): report is Placed => report.state === 'syncable');
  const allClusters = [...new Set(syncable.flatMap((report) => report.clusters))].sort();
  const placedOn = new Map<Placed, string[]>(syncable.map((report) => [report, []]));
  const mismatches: NamespaceMismatch[] = [];
  const works = new Map<string, ManifestWork>();
  const tooLarge: string[] = [];
  const deleteOption = deleteOptionFor(policy);
  const copies = new Map<string, { copy: KubeObject; feedbackRules: readonly FeedbackRule[] }>();
  const shapes = new Map<string, { work: ManifestWork; bytesWithoutCluster: number }>();
  const variantFailures: VariantFailure[] = [];
  const renderings = new Map<string, Extract<CopyRendering, { state: 'rendered' }>>();

  // Looked up once per cluster and target: an array's includes here made a reconcile O(C²) (3,500 clusters: 12M compares).
  const clustersOf = new Map<Placed, ReadonlySet<string>>(syncable.map((report) => [report, new Set(report.clusters)]));
  for (const cluster of allClusters) {
    const here = syncable.filter((report) => clustersOf.get(report)!.has(cluster));
    const split = splitByNamespace(here);
    if (split === undefined) continue;
    const { chosen, kept, dropped } = split;
    for (const report of kept) placedOn.get(report)?.push(cluster);
    for (const report of dropped) mismatches.push(namespaceMismatch(cluster, report, chosen));

    // Clusters whose copy holds the same targets in the same namespace (and, under Update, names the same
    // dropped keys) get the same work but for its namespace (the cluster): the copy, its spec-hash and size
    // are computed once per such group, not once per cluster (a policy on 100 clusters would hash the same
    // JSON 100 times per reconcile).
    const shape = JSON.stringify([chosen.downstreamNamespace, kept.map((report) => report.path)]);
    let shaped = copies.get(shape);
    if (shaped === undefined) {
      // The downstream Gateway has the hub Gateway's name (docs/design/configuration.md#placement).
      const spec = rewriteTargets(policy, kept, (target) => target.name);
      const made = buildSpokeCopy(policy, { downstreamNamespace: chosen.downstreamNamespace, spec });
      // The ancestor rules name the copy's own Gateways: its targets, which no variant changes (policyvariant.ts).
      const feedbackRules = feedbackRulesFor({ rawFeedback: input.rawFeedback, statusFeedback: input.statusFeedback, ancestorGateways: ancestorFeedbackGateways(made) });
      shaped = { copy: made, feedbackRules };
      copies.set(shape, shaped);
    }
    const { copy, feedbackRules } = shaped;
    // The variants that select the cluster change its copy; clusters rendered alike share one work build.
    const rendering = input.render?.(cluster, copy, input.sentCopy?.(cluster)) ?? { state: 'base' as const };
    if (rendering.state === 'failed') {
      variantFailures.push({ cluster, reason: rendering.reason, message: rendering.message, variants: rendering.variants });
      continue;
    }
    if (rendering.state === 'rendered') renderings.set(cluster, rendering);
    const rendered = rendering.state === 'rendered' ? rendering.copy : copy;
    // Update merges labels and annotations into the spoke copy: the ones this cluster's copy had and the new
    // one lacks are named (core/works/droppedkeys.ts), and the spoke agent removes them. ServerSideApply removes them itself.
    const sent = (input.updateStrategy ?? 'Update') === 'Update' ? input.sentCopy?.(cluster) : undefined;
    // Last, the digest of what is sent: the spoke agent reads the copy against it (core/spoke/copydrift.ts).
    const clusterCopy = withCopyDigest(sent === undefined ? rendered : withDroppedKeys(rendered, sent), input.specSchema);
    const buildKey = JSON.stringify([shape, renderingKey(rendering), clusterCopy.metadata.annotations?.[DROPPED_KEYS_ANNOTATION] ?? null]);
    let built = shapes.get(buildKey);
    if (built === undefined) {
      const first = buildManifestWork({ gvr, policy, cluster, copy: clusterCopy, feedbackRules, deleteOption, controller: input.controller, crdUid: input.crdUid, updateStrategy: input.updateStrategy });
      built = { work: first, bytesWithoutCluster: workSizeBytes(first) - jsonBytes(cluster) };
      shapes.set(buildKey, built);
    }
    // Only metadata.namespace depends on the cluster; the rest is shared (works are never mutated).
    const work = built.work.metadata.namespace === cluster ? built.work : { ...built.work, metadata: { ...built.work.metadata, namespace: cluster } };
    if (built.bytesWithoutCluster + jsonBytes(cluster) > input.maxWorkBytes) tooLarge.push(cluster);
    else works.set(cluster, work);
  }

  const targets = reports.map((report): TargetReport => {
    if (report.state !== 'syncable') return report;
    const clusters = placedOn.get(report) ?? [];
    if (clusters.length > 0 || report.clusters.length === 0) return { ...report, clusters };
    const clash = mismatches.find((mismatch) => mismatch.path === report.path);
    return {
      path: report.path,
      target: report.target,
      state: 'rejected',
      reason: 'NamespaceMismatch',
      message: clash?.message ?? `Gateway ${gatewayKey(report.gateway)} renders another downstream namespace`,
    };
  });

  return { works, targets, mismatches, tooLarge, noClusters: syncable.length > 0 && allClusters.length === 0, variantFailures, renderings };
}

/**
 * One copy lives in one namespace: the first target by Gateway key (then spec order) chooses it;
 * targets rendering another namespace are dropped. Kept targets stay in spec order.
 */
function splitByNamespace(reports: readonly Placed[]): { chosen: Placed; kept: Placed[]; dropped: Placed[] } | undefined {
  const chosen = [...reports].sort((a, b) => compareStrings(gatewayKey(a.gateway), gatewayKey(b.gateway)))[0];
  if (chosen === undefined) return undefined;
  const namespace = chosen.downstreamNamespace;
  return {
    chosen,
    kept: reports.filter((report) => report.downstreamNamespace === namespace),
    dropped: reports.filter((report) => report.downstreamNamespace !== namespace),
  };
}

function namespaceMismatch(cluster: string, report: Placed, chosen: Placed): NamespaceMismatch {
  return {
    cluster,
    path: report.path,
    gateway: report.gateway,
    downstreamNamespace: report.downstreamNamespace,
    keptGateway: chosen.gateway,
    keptNamespace: chosen.downstreamNamespace,
    message:
      `on cluster ${cluster}, Gateway ${gatewayKey(report.gateway)} renders downstream namespace ` +
      `"${report.downstreamNamespace}" but Gateway ${gatewayKey(chosen.gateway)} renders ` +
      `"${chosen.downstreamNamespace}"; one copy lives in one namespace`,
  };
}

/** Bytes of a string in JSON (a work's namespace appears once in its JSON: workSizeBytes' share of it). */
function jsonBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text), 'utf8');
}

function gatewayKey(gateway: GatewayRef): string {
  return namespacedKey(gateway.namespace, gateway.name);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One policy's would-be copy on one cluster, for collision detection across policies. */
export interface PlacementCandidate {
  cluster: string;
  copyNamespace: string;
  copyName: string;
  /** `namespace/name` of the hub policy. */
  policyKey: string;
  creationTimestamp?: string | Date;
  group: string;
  resource: string;
}

/** The spoke objects a policy's works would place, one candidate per cluster, for resolveCollisions. */
export function collisionCandidates(gr: { group: string; resource: string }, policy: KubeObject, works: ReadonlyMap<string, ManifestWork>): PlacementCandidate[] {
  return [...works].map(([cluster, work]) => {
    const copy = work.spec.workload.manifests[0]!;
    return {
      cluster,
      copyNamespace: copy.metadata.namespace ?? '',
      copyName: copy.metadata.name,
      policyKey: objectKey(policy),
      creationTimestamp: policy.metadata.creationTimestamp,
      group: gr.group,
      resource: gr.resource,
    };
  });
}

export interface CollisionLoss {
  cluster: string;
  group: string;
  resource: string;
  copyNamespace: string;
  copyName: string;
  /** The losing hub policy: report it `Conflicted` on this cluster and do not place it there. */
  policyKey: string;
  /** The hub policy that keeps the spoke object. */
  winner: string;
  message: string;
}

/**
 * Two hub policies whose copies would be the same spoke object (same cluster, group, resource,
 * namespace, name) collide: the older keeps it (creationTimestamp, then namespace, then name;
 * a missing timestamp counts as newest). Returns the losers, sorted by cluster then policy.
 */
export function resolveCollisions(candidates: readonly PlacementCandidate[]): CollisionLoss[] {
  const slots = new Map<string, PlacementCandidate[]>();
  for (const candidate of candidates) {
    const slot = JSON.stringify([candidate.cluster, candidate.group, candidate.resource, candidate.copyNamespace, candidate.copyName]);
    const list = slots.get(slot) ?? [];
    if (!list.some((other) => other.policyKey === candidate.policyKey)) list.push(candidate);
    slots.set(slot, list);
  }
  const losses: CollisionLoss[] = [];
  for (const list of slots.values()) {
    const [winner, ...losers] = [...list].sort(olderFirst);
    if (winner === undefined) continue;
    for (const loser of losers) {
      const object = `${loser.resource}${loser.group === '' ? '' : `.${loser.group}`} ${loser.copyNamespace}/${loser.copyName}`;
      losses.push({
        cluster: loser.cluster,
        group: loser.group,
        resource: loser.resource,
        copyNamespace: loser.copyNamespace,
        copyName: loser.copyName,
        policyKey: loser.policyKey,
        winner: winner.policyKey,
        message: `on cluster ${loser.cluster}, ${object} is already synced from the older policy ${winner.policyKey}`,
      });
    }
  }
  return losses.sort(
    (a, b) =>
      compareStrings(a.cluster, b.cluster) ||
      compareStrings(a.group, b.group) ||
      compareStrings(a.resource, b.resource) ||
      compareStrings(a.policyKey, b.policyKey),
  );
}

function olderFirst(a: PlacementCandidate, b: PlacementCandidate): number {
  const ageA = kubeTimeMillis(a.creationTimestamp) ?? Number.POSITIVE_INFINITY;
  const ageB = kubeTimeMillis(b.creationTimestamp) ?? Number.POSITIVE_INFINITY;
  if (ageA !== ageB) return ageA < ageB ? -1 : 1;
  const { namespace: namespaceA, name: nameA } = splitObjectKey(a.policyKey);
  const { namespace: namespaceB, name: nameB } = splitObjectKey(b.policyKey);
  // Namespace then name, not the joined key: "a-b/x" sorts before "a/x" as a string.
  return compareStrings(namespaceA, namespaceB) || compareStrings(nameA, nameB);
}


export interface WorkPlan {
  /** Works observed absent, to create (the cheapest write for the apiserver), by key order. */
  create: ManifestWork[];
  /** Works observed with another or an unknown spec-hash, to server-side apply, by key order. */
  apply: ManifestWork[];
  /** Keys of observed works to delete, sorted. */
  delete: WorkKey[];
}

/**
 * Writes needed to turn observed into desired: create when a work is missing, apply when its
 * spec-hash differs (equal hashes: zero writes), delete observed works no longer desired unless
 * retained (e.g. a TooLarge work: keep the last good copy rather than remove enforcement).
 */
export function diffWorks(
  desired: ReadonlyMap<WorkKey, ManifestWork>,
  observed: ReadonlyMap<WorkKey, { specHash?: string }>,
  retain: ReadonlySet<WorkKey> = new Set(),
): WorkPlan {
  const create: ManifestWork[] = [];
  const apply: ManifestWork[] = [];
  for (const key of [...desired.keys()].sort(compareStrings)) {
    const work = desired.get(key)!;
    const current = observed.get(key);
    if (current === undefined) create.push(work);
    else if (current.specHash === undefined || current.specHash !== readSpecHash(work)) apply.push(work);
  }
  const deletions = [...observed.keys()].filter((key) => !desired.has(key) && !retain.has(key)).sort(compareStrings);
  return { create, apply, delete: deletions };
}
