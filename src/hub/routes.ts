// Which work-queue keys a cache change maps to (level-triggered: a change only names what to look at
// again; the reconcilers read everything else from the caches). Pure: the lookups are passed in.
import { canonicalJson } from '../core/k8s/canonical.ts';
import { clusterHealth } from '../core/fleet/clusterhealth.ts';
import type { GroupResource } from '../core/k8s/gvr.ts';
import { readSourceRef } from '../core/works/manifestwork.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { SPEC_HASH_ANNOTATION } from '../core/metadatakeys.ts';
import { isSpokeConfigWork } from '../core/spoke/spokeconfig.ts';
import { placementOfDecision } from './indexes.ts';
import { policyKey } from '../core/keys.ts';

/** A change as the store reports it: the new object and, for updates and deletes, the old one. */
export interface Change {
  old?: KubeObject;
  object: KubeObject;
}

/** A watched policy with its kind. */
export interface KindedPolicy {
  gr: GroupResource;
  policy: KubeObject;
}

/** The old and new object of a change: a label or reference may have moved. */
function sides(change: Change): KubeObject[] {
  return change.old && change.old !== change.object ? [change.old, change.object] : [change.object];
}

function keyOf({ gr, policy }: KindedPolicy): string {
  return policyKey(gr, policy.metadata.namespace ?? '', policy.metadata.name);
}

function unique(keys: string[]): string[] {
  return [...new Set(keys)];
}

/**
 * A policy changed: itself, and the same-named policies of its kind whose copies could collide with its
 * own on a spoke, before or after the change (the outcome for them may have changed).
 */
export function keysForPolicyChange(gr: GroupResource, change: Change, rivalsOf: (policy: KubeObject) => readonly KubeObject[]): string[] {
  return unique([keyOf({ gr, policy: change.object }), ...sides(change).flatMap((p) => rivalsOf(p).map((rival) => keyOf({ gr, policy: rival })))]);
}

/**
 * A Gateway changed (class, placement label, deletion): the policies targeting it, before and after, and
 * those targeting the Gateways of the same name elsewhere — with a downstream namespace shared by several
 * hub namespaces, the change may open or close a conflict between their lanes (core/lanes.ts).
 */
export function keysForGatewayChange(
  change: Change,
  policiesTargeting: (gatewayKey: string) => readonly KindedPolicy[],
  sameNamed: (name: string) => readonly KubeObject[] = () => [],
): string[] {
  const gateways = sides(change).flatMap((gw) => [gw, ...sameNamed(gw.metadata.name)]);
  return unique(gateways.flatMap((gw) => policiesTargeting(`${gw.metadata.namespace}/${gw.metadata.name}`).map(keyOf)));
}

/** A PlacementDecision changed: the policies targeting the Gateways of its Placement, before and after. */
export function keysForDecisionChange(
  change: Change,
  gatewaysOfPlacement: (placementKey: string) => readonly KubeObject[],
  policiesTargeting: (gatewayKey: string) => readonly KindedPolicy[],
): string[] {
  return unique(
    sides(change)
      .flatMap(placementOfDecision)
      .flatMap((placement) => gatewaysOfPlacement(placement))
      .flatMap((gw) => policiesTargeting(`${gw.metadata.namespace}/${gw.metadata.name}`).map(keyOf)),
  );
}

/** A Placement changed (created, deleted, its status settled): the policies targeting the Gateways it places. */
export function keysForPlacementChange(
  change: Change,
  gatewaysOfPlacement: (placementKey: string) => readonly KubeObject[],
  policiesTargeting: (gatewayKey: string) => readonly KindedPolicy[],
): string[] {
  const placement = `${change.object.metadata.namespace}/${change.object.metadata.name}`;
  return unique(gatewaysOfPlacement(placement).flatMap((gw) => policiesTargeting(`${gw.metadata.namespace}/${gw.metadata.name}`).map(keyOf)));
}

/**
 * A ManagedCluster changed: when what OCM vouches for changed (available or not, tainted, deleted), the
 * policies with works on that cluster — a work kept while the cluster was in doubt may go now, or one
 * reported Unknown is known again. Lease renewals and other status updates map to nothing.
 */
export function keysForManagedClusterChange(change: Change, worksOnCluster: (cluster: string) => readonly KubeObject[]): string[] {
  if (change.old && change.old !== change.object && canonicalJson(clusterHealth(change.old)) === canonicalJson(clusterHealth(change.object))) return [];
  return unique(worksOnCluster(change.object.metadata.name).flatMap(sourceKeyOfWork));
}

/**
 * A ManifestWork changed: the spoke configuration, or the policy it was written for. The spoke
 * configuration's status changes with every report heartbeat of its agent; only a change to what the
 * syncer wrote (its spec-hash), its deletion or its appearance is the syncer's business.
 */
export function keysForWorkChange(change: Change): { spokeConfig: boolean; policies: string[] } {
  if (isSpokeConfigWork(change.object)) return { spokeConfig: !statusOnly(change), policies: [] };
  return { spokeConfig: false, policies: unique(sides(change).flatMap(sourceKeyOfWork)) };
}

function statusOnly({ old, object }: Change): boolean {
  if (!old || old === object) return false;
  const written = (o: KubeObject): string => JSON.stringify([o.metadata.annotations?.[SPEC_HASH_ANNOTATION], o.metadata.deletionTimestamp ?? null]);
  return written(old) === written(object);
}

/** The policy key a work was written for (from its source-ref), if it names one. */
export function sourceKeyOfWork(work: KubeObject): string[] {
  const ref = readSourceRef(work);
  return ref ? [policyKey(ref, ref.namespace, ref.name)] : [];
}
