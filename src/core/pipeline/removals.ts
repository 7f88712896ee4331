// Which of a policy's observed ManifestWorks go, and which copies left lingering on a spoke are handed back to OCM,
// by the one deletion rule (core/works/removal.ts, docs/design/deletion.md#never-delete-on-doubt): a stage of the
// decision pipeline, so the hub controller and `policy-sync diff` decide each removal alike and say why. The hub
// keeps only what a pure decision cannot do: the work applier's own view of what is there (write expectations),
// the live reads behind a deleted policy's removal (src/hub/workremovals.ts) and the deletes.
import type { KubeObject } from '../k8s/objects.ts';
import { workKeyOf, type WorkKey } from '../keys.ts';
import type { LingeringCopy } from '../spoke/spoketruth.ts';
import type { UnknownCluster } from '../status/statusinput.ts';
import { GATEWAY_GROUP, GATEWAY_KIND, readTargets } from '../targets/targetrefs.ts';
import type { ManifestWork } from '../works/manifestwork.ts';
import { decideRemoval, type RemovalDecision, type RemovalInput } from '../works/removal.ts';
import type { HubView } from './hubview.ts';
import type { GroupResource } from '../k8s/gvr.ts';

/** The rule's word on one observed work the policy no longer wants. */
export interface WorkRemoval {
  cluster: string;
  work: WorkKey;
  decision: RemovalDecision;
  /** Local policies cover the copy there (the verdict's message): the work is withdrawn for them. */
  overriddenBy?: string;
  /** Kept because OCM cannot vouch for the cluster or its Placements are in flux: what the status says of it. */
  doubt?: UnknownCluster;
}

/** The rule's word on one copy that lingers where the policy has no work (core/spoke/spoketruth.ts). */
export interface LingeringRemoval {
  copy: LingeringCopy;
  decision: RemovalDecision;
}

export interface Removals {
  /** Every observed work neither desired nor retained, by cluster then name. */
  works: WorkRemoval[];
  /** Every copy past its grace where the policy now has no work, by cluster. */
  lingering: LingeringRemoval[];
  /** When a cluster's recovery grace ends (ms since the epoch): no event marks it, so decide again then. */
  recheckAt?: number;
}

export interface RemovalStageInput {
  gr: GroupResource;
  policy: KubeObject;
  observed: readonly KubeObject[];
  /** The works the hub writes now, by cluster, and the keys of the observed works it keeps as they are. */
  desired: ReadonlyMap<string, ManifestWork>;
  retain: ReadonlySet<WorkKey>;
  /** The GatewayClasses of the Gateways the policy targets. */
  targetClasses: readonly string[];
  /** The clusters where local policies cover the copy, with the verdict's message. */
  overridden: ReadonlyMap<string, string>;
  lingering: readonly LingeringCopy[];
  now: number;
}

/** The deletion rule's decision for every work the policy no longer wants, and for each copy left lingering. */
export function decideRemovals(view: HubView, input: RemovalStageInput): Removals {
  const { policy } = input;
  // Read once, and only when something is to be decided (most passes remove nothing).
  let grounds: ReturnType<HubView['removalGrounds']> | undefined;
  const gateways = readTargets(policy)
    .filter((t) => t.group === GATEWAY_GROUP && t.kind === GATEWAY_KIND)
    .flatMap((t) => view.gateway(t.namespace ?? policy.metadata.namespace ?? '', t.name) ?? []);
  let recheckAt: number | undefined;
  const decide = (cluster: string): { decision: RemovalDecision; overriddenBy?: string; fleet?: NonNullable<RemovalInput['cluster']> } => {
    const overriddenBy = input.overridden.get(cluster);
    const locallyOverridden = overriddenBy !== undefined;
    const fleet = locallyOverridden ? undefined : clusterStanding(view, cluster, gateways, input.now);
    grounds ??= view.removalGrounds(input.gr, input.targetClasses);
    const decision = decideRemoval({ ...grounds, policy: { deleting: false, targetClasses: input.targetClasses, locallyOverridden }, ...(fleet ? { cluster: fleet } : {}) });
    if (decision.action === 'keep' && fleet?.health.state === 'unavailable' && fleet.health.recheckAt !== undefined) recheckAt = Math.min(recheckAt ?? Infinity, fleet.health.recheckAt);
    return { decision, ...(overriddenBy === undefined ? {} : { overriddenBy }), ...(fleet ? { fleet } : {}) };
  };

  const desiredKeys = new Set([...input.desired.values()].map(workKeyOf));
  const works: WorkRemoval[] = [];
  for (const work of input.observed) {
    const key = workKeyOf(work);
    if (desiredKeys.has(key) || input.retain.has(key)) continue;
    const cluster = work.metadata.namespace ?? '';
    const { decision, overriddenBy, fleet } = decide(cluster);
    const removal: WorkRemoval = { cluster, work: key, decision, ...(overriddenBy === undefined ? {} : { overriddenBy }) };
    const doubt = fleet && decision.action === 'keep' ? doubtOf(cluster, fleet, decision, work) : undefined;
    if (doubt) removal.doubt = doubt;
    works.push(removal);
  }
  works.sort((a, b) => cmp(a.work, b.work));
  const lingering = input.lingering
    .filter((l) => l.lingering && !input.desired.has(l.cluster))
    .map((copy) => ({ copy, decision: decide(copy.cluster).decision }));
  return { works, lingering, ...(recheckAt === undefined ? {} : { recheckAt }) };
}

/** What OCM says of `cluster`, and whether the Placements of the policy's Gateways are settled. */
function clusterStanding(view: HubView, cluster: string, gateways: readonly KubeObject[], now: number): NonNullable<RemovalInput['cluster']> {
  const health = view.clusterHealth(cluster, now);
  let placements: NonNullable<RemovalInput['cluster']>['placements'] = { state: 'settled' };
  for (const gateway of gateways) {
    const state = view.placement(gateway).state;
    if (state.state === 'unsettled') placements = state;
  }
  return { health, placements };
}

/** A work kept for doubt of its cluster or its Placements, as the status tells it; undefined for other keeps. */
function doubtOf(cluster: string, fleet: NonNullable<RemovalInput['cluster']>, decision: RemovalDecision, work: KubeObject): UnknownCluster | undefined {
  if (decision.action !== 'keep' || (decision.reason !== 'ClusterUnavailable' && decision.reason !== 'PlacementUnsettled')) return undefined;
  const doubt = fleet.health.state === 'unavailable' ? fleet.health : fleet.placements.state === 'unsettled' ? fleet.placements : undefined;
  if (!doubt) return undefined;
  return { cluster, reason: doubt.reason, message: doubt.message, ...('since' in doubt && doubt.since ? { since: doubt.since } : {}), work: work as ManifestWork };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
