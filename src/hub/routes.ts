// The hub's routes: which work-queue keys a cache change maps to (level-triggered: a change only names what
// to look at again; the reconcilers read everything else from the caches). One named route per event, pure:
// the cache lookups are passed in (HubLookups, implemented by caches.ts), so each is unit-tested alone.
// Which cache feeds which route, and into which queue, is the assembly's wiring (assembly.ts).
import { canonicalJson } from '../core/k8s/canonical.ts';
import { clusterHealth } from '../core/fleet/clusterhealth.ts';
import { clusterClaimsOf } from '../core/pipeline/hubview.ts';
import { groupResourceKey, type GroupResource } from '../core/k8s/gvr.ts';
import { readSourceRef } from '../core/works/manifestwork.ts';
import { heldLanes } from '../core/works/heldlanes.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { SPEC_HASH_ANNOTATION, STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import { isSpokeConfigWork } from '../core/spoke/spokeconfig.ts';
import { WHOLE_KIND, type ReportScope } from '../core/spoke/spokereport.ts';
import { hubNamespacesRendering } from '../core/targets/rivals.ts';
import { placementOfDecision, targetedGateways } from './indexes.ts';
import { policyKey, type PolicyKey } from '../core/keys.ts';
import { namespacedKey, objectKey } from '../core/k8s/objects.ts';

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

/** What the routes read of the caches. */
export interface HubLookups {
  /** The policy kinds watched now. */
  watchedKinds(): readonly GroupResource[];
  policiesOfKind(gr: GroupResource): readonly KubeObject[];
  policiesInNamespace(gr: GroupResource, namespace: string): readonly KubeObject[];
  /** Whether the kind's cache has listed; undefined when the kind is not watched. */
  kindSynced(gr: GroupResource): boolean | undefined;
  policyCached(gr: GroupResource, namespace: string, name: string): boolean;
  /** Every watched policy targeting the Gateway. */
  policiesTargeting(gateway: KubeObject): readonly KindedPolicy[];
  /** The same-named policies of the kind whose copies could collide with this one's on a spoke (core/targets/rivals.ts). */
  rivalsOf(gr: GroupResource, policy: KubeObject): readonly KubeObject[];
  allGateways(): readonly KubeObject[];
  sameNamedGateways(name: string): readonly KubeObject[];
  /** The Gateways of the GatewayClass. */
  gatewaysOfClass(className: string): readonly KubeObject[];
  /** The Gateways naming the Placement `namespace/name`. */
  gatewaysOfPlacement(placementKey: string): readonly KubeObject[];
  /** The clusters among the labelled decisions of the Gateway's Placement (counted or not). */
  clustersDecidedFor(gateway: KubeObject): readonly string[];
  worksOnCluster(cluster: string): readonly KubeObject[];
  allWorks(): readonly KubeObject[];
  /** The downstream-namespace templates of the classes in force. */
  downstreamTemplates(): readonly string[];
  /** Some PolicyVariant exists: a cluster's labels and claims may be read into copies. */
  anyVariants(): boolean;
}

/** The old and new object of a change: a label or reference may have moved. */
function sides(change: Change): KubeObject[] {
  return change.old && change.old !== change.object ? [change.old, change.object] : [change.object];
}

function keyOf({ gr, policy }: KindedPolicy): PolicyKey {
  return policyKey(gr, policy.metadata.namespace ?? '', policy.metadata.name);
}

function unique<T>(keys: T[]): T[] {
  return [...new Set(keys)];
}

function keysTargeting(gateways: readonly KubeObject[], l: Pick<HubLookups, 'policiesTargeting'>): PolicyKey[] {
  return unique(gateways.flatMap((gw) => l.policiesTargeting(gw).map(keyOf)));
}

/**
 * A policy changed: itself, and the same-named policies of its kind whose copies could collide with its
 * own on a spoke, before or after the change (the outcome for them may have changed).
 */
export function routePolicyChange(gr: GroupResource, change: Change, l: Pick<HubLookups, 'rivalsOf'>): PolicyKey[] {
  return unique([keyOf({ gr, policy: change.object }), ...sides(change).flatMap((p) => l.rivalsOf(gr, p).map((rival) => keyOf({ gr, policy: rival })))]);
}

/**
 * A Gateway changed (class, placement label, deletion): the policies targeting it, before and after, and
 * those targeting the Gateways of the same name elsewhere — with a downstream namespace shared by several
 * hub namespaces, the change may open or close a conflict between their lanes (core/targets/lanes.ts).
 */
export function routeGatewayChange(change: Change, l: Pick<HubLookups, 'policiesTargeting' | 'sameNamedGateways'>): PolicyKey[] {
  return keysTargeting(sides(change).flatMap((gw) => [gw, ...l.sameNamedGateways(gw.metadata.name)]), l);
}

/** A PlacementDecision changed: the policies targeting the Gateways of its Placement, before and after. */
export function routeDecisionChange(change: Change, l: Pick<HubLookups, 'policiesTargeting' | 'gatewaysOfPlacement'>): PolicyKey[] {
  return keysTargeting(sides(change).flatMap(placementOfDecision).flatMap((placement) => l.gatewaysOfPlacement(placement)), l);
}

/** A Placement changed (created, deleted, its status settled): the policies targeting the Gateways it places. */
export function routePlacementChange(change: Change, l: Pick<HubLookups, 'policiesTargeting' | 'gatewaysOfPlacement'>): PolicyKey[] {
  return keysTargeting(l.gatewaysOfPlacement(namespacedKey(change.object.metadata.namespace ?? '', change.object.metadata.name)), l);
}

/**
 * A ManagedCluster changed. When what OCM vouches for changed (available or not, tainted, deleted): the
 * policies with works on that cluster — a work kept while the cluster was in doubt may go now, or one
 * reported Unknown is known again. When its labels changed (unless decisions are taken by their labels
 * alone): the policies on the Gateways it is decided for, since it may have moved into or out of a
 * ManagedClusterSet. Lease renewals and other status updates map to nothing.
 */
export function routeManagedClusterChange(
  change: Change,
  l: Pick<HubLookups, 'worksOnCluster' | 'allGateways' | 'clustersDecidedFor' | 'policiesTargeting' | 'anyVariants'>,
  trustDecisionLabels: boolean,
): PolicyKey[] {
  const updated = change.old !== undefined && change.old !== change.object;
  const name = change.object.metadata.name;
  const healthMoved = !updated || canonicalJson(clusterHealth(change.old)) !== canonicalJson(clusterHealth(change.object));
  const relabelled = !updated || canonicalJson(change.old?.metadata.labels ?? {}) !== canonicalJson(change.object.metadata.labels ?? {});
  // What a PolicyVariant may read of the cluster (core/variants/render.ts): its labels and its claims.
  const variantInputs = l.anyVariants() && (relabelled || canonicalJson(clusterClaimsOf(change.old)) !== canonicalJson(clusterClaimsOf(change.object)));
  const ofWorks = healthMoved || variantInputs ? l.worksOnCluster(name).flatMap(sourceKeyOfWork) : [];
  const ofSets = (!trustDecisionLabels && relabelled) || variantInputs ? keysTargeting(l.allGateways().filter((g) => l.clustersDecidedFor(g).includes(name)), l) : [];
  return unique([...ofWorks, ...ofSets]);
}

/**
 * A PolicyVariant changed: the policy it targets, before and after (same namespace; each watched kind of its
 * group that caches a policy of that name — the kind is checked by the pipeline).
 */
export function routeVariantChange(change: Change, l: Pick<HubLookups, 'watchedKinds' | 'policyCached'>): PolicyKey[] {
  return unique(
    sides(change).flatMap((variant) => {
      const ref = (variant.spec as { targetRef?: { group?: unknown; name?: unknown } } | undefined)?.targetRef;
      if (typeof ref?.name !== 'string' || typeof ref.group !== 'string') return [];
      const namespace = variant.metadata.namespace ?? '';
      const name = ref.name;
      return l.watchedKinds().filter((gr) => gr.group === ref.group && l.policyCached(gr, namespace, name)).map((gr) => policyKey(gr, namespace, name));
    }),
  );
}

/**
 * A ManagedClusterSet or a binding changed: which clusters each namespace may place on. Rare; every
 * Gateway's policies are looked at (nothing when decisions are taken by their labels alone).
 */
export function routeClusterSetChange(l: Pick<HubLookups, 'allGateways' | 'policiesTargeting'>, trustDecisionLabels: boolean): PolicyKey[] {
  return trustDecisionLabels ? [] : keysTargeting(l.allGateways(), l);
}

/**
 * A ManifestWork changed: the spoke configuration, or the policy it was written for. The spoke
 * configuration's status changes with every report heartbeat of its agent; only a change to what the
 * syncer wrote (its spec-hash), its deletion or its appearance is the syncer's business. A work gone (or
 * moved) that held a tenant lane on its cluster (core/works/heldlanes.ts) frees it: the policies on the
 * same-named Gateways of other namespaces, refused there while it was held, may take it now.
 */
export function routeWorkChange(change: Change, l: Pick<HubLookups, 'sameNamedGateways' | 'policiesTargeting'>): { spokeConfig: boolean; policies: PolicyKey[] } {
  if (isSpokeConfigWork(change.object)) return { spokeConfig: !statusOnly(change), policies: [] };
  const own = sides(change).flatMap(sourceKeyOfWork);
  // A work that appears releases nothing: its lanes are read only when it had an old side (a fan-out's creates skip them).
  const held = change.old ? heldLanes(change.old) : [];
  const kept = held.length === 0 || change.old === change.object ? [] : heldLanes(change.object);
  const released = held.filter((lane) => !kept.some((k) => k.downstream === lane.downstream && k.holder === lane.holder));
  const newcomers = released.flatMap((lane) => {
    const slash = lane.holder.indexOf('/');
    const [namespace, name] = [lane.holder.slice(0, slash), lane.holder.slice(slash + 1)];
    return l.sameNamedGateways(name).filter((g) => g.metadata.namespace !== namespace);
  });
  return { spokeConfig: false, policies: unique([...own, ...keysTargeting(newcomers, l)]) };
}

function statusOnly({ old, object }: Change): boolean {
  if (!old || old === object) return false;
  const written = (o: KubeObject): string => JSON.stringify([o.metadata.annotations?.[SPEC_HASH_ANNOTATION], o.metadata.deletionTimestamp ?? null]);
  return written(old) === written(object);
}

/**
 * A spoke's report changed in these (kind, downstream namespace) scopes: the watched policies whose copies
 * land there — those in the hub namespaces that a class's template renders into it — and no others, so
 * that one spoke whose report flaps does not re-queue the whole fleet's policies of the kind.
 */
export function routeReportChange(scopes: readonly ReportScope[], l: Pick<HubLookups, 'watchedKinds' | 'policiesOfKind' | 'policiesInNamespace' | 'downstreamTemplates'>): PolicyKey[] {
  const templates = l.downstreamTemplates();
  const keys: PolicyKey[] = [];
  for (const gr of l.watchedKinds()) {
    const mine = scopes.filter((s) => s.kind === groupResourceKey(gr));
    if (mine.length === 0) continue;
    const namespaces = new Set<string>();
    let all = false;
    for (const scope of mine) {
      if (scope.namespace === WHOLE_KIND) all = true;
      for (const template of all ? [] : templates) {
        const rendering = hubNamespacesRendering(template, scope.namespace);
        if (rendering === 'any') all = true;
        else rendering.forEach((n) => namespaces.add(n));
      }
    }
    const policies = all ? l.policiesOfKind(gr) : [...namespaces].flatMap((n) => l.policiesInNamespace(gr, n));
    for (const policy of policies) keys.push(keyOf({ gr, policy }));
  }
  return unique(keys);
}

/**
 * The hub policies whose copies a changed report lists (or listed) where it changed, of the watched kinds, whether
 * or not they still exist: a copy of a policy deleted on the hub may linger, and only its key leads to it
 * (core/spoke/spoketruth.ts).
 */
export function routeReportedCopies(copies: readonly { kind: string; source: string }[], l: Pick<HubLookups, 'watchedKinds'>): PolicyKey[] {
  const watched = new Map(l.watchedKinds().map((gr) => [groupResourceKey(gr), gr]));
  const keys: PolicyKey[] = [];
  for (const c of copies) {
    const gr = watched.get(c.kind);
    const slash = c.source.indexOf('/');
    if (gr && slash > 0) keys.push(policyKey(gr, c.source.slice(0, slash), c.source.slice(slash + 1)));
  }
  return unique(keys);
}

/**
 * The kinds in force changed: every watched policy, and the policies of every work — except the works of a
 * kind still listing, which wait for its sync (routeKindSynced): a reconcile now would decide nothing.
 */
export function routeConfigChange(l: Pick<HubLookups, 'watchedKinds' | 'policiesOfKind' | 'allWorks' | 'kindSynced'>): PolicyKey[] {
  const ofPolicies = l.watchedKinds().flatMap((gr) => l.policiesOfKind(gr).map((policy) => keyOf({ gr, policy })));
  const ofWorks = l.allWorks().filter((w) => {
    const source = readSourceRef(w);
    return !source || l.kindSynced(source) !== false;
  });
  return unique([...ofPolicies, ...ofWorks.flatMap(sourceKeyOfWork)]);
}

/**
 * A newly watched kind listed. Keys of a kind whose watch was not synced were dropped (nothing is decided on
 * an unsynced cache); its first list brought every policy that exists, and the works of those that do not
 * (deleted while it listed) are looked at now.
 */
export function routeKindSynced(gr: GroupResource, l: Pick<HubLookups, 'allWorks' | 'policyCached'>): PolicyKey[] {
  const orphaned = l.allWorks().filter((w) => {
    const source = readSourceRef(w);
    return source !== undefined && groupResourceKey(source) === groupResourceKey(gr) && !l.policyCached(gr, source.namespace, source.name);
  });
  return unique(orphaned.flatMap(sourceKeyOfWork));
}

/** The policy key a work was written for (from its source-ref), if it names one. */
export function sourceKeyOfWork(work: KubeObject): PolicyKey[] {
  const ref = readSourceRef(work);
  return ref ? [policyKey(ref, ref.namespace, ref.name)] : [];
}

// The hub Gateways' status (gatewaystatusreconciler.ts): keys are the Gateways' cache keys.

function gatewayKeys(gateways: readonly KubeObject[]): string[] {
  return unique(gateways.map(objectKey));
}

/**
 * A Gateway change that touched its status alone (ours coming back, or another writer's): nothing the
 * policies or the spoke configuration read of a Gateway (class, placement label, name, deletion) moved.
 * Its own status is looked at again all the same (gatewayStatusOfGateway).
 */
export function gatewayStatusOnly({ old, object }: Change): boolean {
  if (!old || old === object) return false;
  const read = (g: KubeObject): string => {
    const { resourceVersion: _rv, managedFields: _mf, ...metadata } = g.metadata;
    return canonicalJson([g.apiVersion, metadata, g.spec ?? null]);
  };
  return read(old) === read(object);
}

/** A Gateway changed (its generation, class, placement, status — or it was deleted): its own status. */
export function gatewayStatusOfGateway(change: Change): string[] {
  return gatewayKeys(sides(change));
}

/** A GatewayClass changed (its controllerName, or the conditions the class reconciler wrote): its Gateways. */
export function gatewayStatusOfClass(change: Change, l: Pick<HubLookups, 'gatewaysOfClass'>): string[] {
  return gatewayKeys(unique(sides(change).map((c) => c.metadata.name)).flatMap((name) => l.gatewaysOfClass(name)));
}

/** A Placement or PlacementDecision changed: the Gateways of its Placement, before and after. */
export function gatewayStatusOfPlacement(change: Change, l: Pick<HubLookups, 'gatewaysOfPlacement'>, isDecision: boolean): string[] {
  const placements = isDecision ? sides(change).flatMap(placementOfDecision) : [namespacedKey(change.object.metadata.namespace ?? '', change.object.metadata.name)];
  return gatewayKeys(unique(placements).flatMap((p) => l.gatewaysOfPlacement(p)));
}

/**
 * A ManagedCluster changed: when what OCM vouches for moved (or it came or went), the Gateways it is
 * decided for (Programmed names the clusters missing); when its labels moved and decisions are not
 * taken by their labels alone, the same (it may have moved into or out of a ManagedClusterSet).
 */
export function gatewayStatusOfCluster(change: Change, l: Pick<HubLookups, 'allGateways' | 'clustersDecidedFor'>, trustDecisionLabels: boolean): string[] {
  const updated = change.old !== undefined && change.old !== change.object;
  const healthMoved = !updated || canonicalJson(clusterHealth(change.old)) !== canonicalJson(clusterHealth(change.object));
  const relabelled = !trustDecisionLabels && (!updated || canonicalJson(change.old?.metadata.labels ?? {}) !== canonicalJson(change.object.metadata.labels ?? {}));
  if (!healthMoved && !relabelled) return [];
  const name = change.object.metadata.name;
  return gatewayKeys(l.allGateways().filter((g) => l.clustersDecidedFor(g).includes(name)));
}

/** A ManagedClusterSet or binding changed: every Gateway (nothing when decisions are taken by their labels alone). */
export function gatewayStatusOfClusterSets(l: Pick<HubLookups, 'allGateways'>, trustDecisionLabels: boolean): string[] {
  return trustDecisionLabels ? [] : gatewayKeys(l.allGateways());
}

/**
 * A policy changed: the Gateways it targets, before and after — when what the Gateway status reads of it
 * moved: its existence, its targets, or its status annotation (the per-cluster verdicts the status
 * reporter wrote, coming back). A spec edit that keeps the targets changes nothing there until its
 * status does.
 */
export function gatewayStatusOfPolicy(change: Change): string[] {
  const { old, object } = change;
  const targets = (p: KubeObject): string => JSON.stringify(targetedGateways(p).sort());
  const verdicts = (p: KubeObject): string | undefined => p.metadata.annotations?.[STATUS_ANNOTATION];
  const updated = old !== undefined && old !== object;
  if (updated && targets(old) === targets(object) && verdicts(old) === verdicts(object) && Boolean(old.metadata.deletionTimestamp) === Boolean(object.metadata.deletionTimestamp)) return [];
  return unique(sides(change).flatMap(targetedGateways));
}
