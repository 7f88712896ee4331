// The hub Gateway's status (docs/design/status.md#gateway-status): for each Gateway of a class we own, the
// conditions core/status/gatewaystatus.ts computes from the caches — the class reconciler's conditions,
// the placement, and the verdicts the status reporter wrote on the policies targeting it — applied
// server-side on the status subresource when they differ from what the cache shows (or from what we
// wrote and the cache does not show yet). Our applies own only our condition types: everyone else's stay.
// The writes give way to ManifestWork writes (the hub's YieldingWrites) and, after one, the next one of
// the same Gateway driven by its policies' status waits out the coalescing window.
import type { Logger } from 'pino';
import { clusterHealth } from '../core/fleet/clusterhealth.ts';
import type { GroupResource } from '../core/k8s/gvr.ts';
import { readConditions } from '../core/k8s/conditions.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import { ownsClass } from '../core/params/classparams.ts';
import { readPolicyStatus } from '../core/status/annotation.ts';
import {
  cachedFingerprint,
  classOfOurConditions,
  classStateOf,
  conditionsToApply,
  gatewayConditions,
  ownedConditionTypes,
  desiredFingerprint,
  type DeletedPolicyLingering,
  type GatewayPlacement,
  type SyncedKind,
  policyStandings,
  type PolicyStandings,
  type TargetingPolicy,
} from '../core/status/gatewaystatus.ts';
import { isNotFound, type KubeHttp } from '../kube/http.ts';
import type { Informer } from '../kube/informer.ts';
import { RESOURCES } from '../kube/resource.ts';
import { FIELD_MANAGER, serverSideApply } from '../kube/writes.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import type { YieldingWrites } from '../runtime/yieldingwrites.ts';
import type { ClassConfigs } from './classconfigs.ts';
import { gatewayClassOf, placementOfGateway } from './indexes.ts';
import type { GatewayPlacements } from './placements.ts';
import type { KindedPolicy } from './routes.ts';
import { WriteExpectations } from './writeexpectations.ts';

/** The key of a Gateway's status write among the hub's yielding status writes (policy keys never start so). */
const WRITE_KEY_PREFIX = 'gateway-status:';
/** The longest a Gateway's status write waits for the policies to be reconciled first. */
const MAX_DEFER_MS = 60_000;
const DEFER_POLL_MS = 250;

export function gatewayStatusWriteKey(gatewayKey: string): string {
  return `${WRITE_KEY_PREFIX}${gatewayKey}`;
}

/** The Gateway key of a yielding write's key, if it is a Gateway status write. */
export function gatewayOfWriteKey(writeKey: string): string | undefined {
  return writeKey.startsWith(WRITE_KEY_PREFIX) ? writeKey.slice(WRITE_KEY_PREFIX.length) : undefined;
}

export interface GatewayStatusDeps {
  http: KubeHttp;
  controllerName: string;
  gateways: Informer;
  classes: Informer;
  managedClusters: Informer;
  placed: GatewayPlacements;
  configs: ClassConfigs;
  policiesTargeting(gateway: KubeObject): readonly KindedPolicy[];
  policiesOfKind(gr: GroupResource): readonly KubeObject[];
  /** The deleted policies that targeted the Gateway (by key) whose copies linger (lingerclocks.ts). */
  deletedLingering(gatewayKey: string): readonly DeletedPolicyLingering[];
  /** The hub's status writes, which give way to ManifestWork writes. */
  writes: YieldingWrites;
  /**
   * True while policies wait to be reconciled: their verdicts are about to change, so a write now would
   * be followed by another. A write waits for them (up to MAX_DEFER_MS), polling every DEFER_POLL_MS.
   */
  policiesPending: () => boolean;
  /** Least time between two policy-driven writes of one Gateway's status. */
  coalesceMs: number;
  logger: Logger;
}

export class GatewayStatusReconciler {
  /** What we applied and the cache may not show yet, by Gateway key: its fingerprint. */
  private readonly expectations = new WriteExpectations();
  private readonly lastWrite = new Map<string, number>();
  /**
   * When each Gateway's status was last computed. With many policies on one Gateway, each policy's status
   * echo asked for a computation over all of them, and most write nothing (a fan-out to agentless clusters
   * stays Pending): 1000 policies made ~1000 computations of 1000 policies × 10 clusters, a quarter of the
   * controller's CPU in the fan-out. Policy-driven looks are spaced by the coalescing window from either.
   */
  private readonly lastComputed = new Map<string, number>();
  /**
   * The Gateways this controller holds (their class is ours), by key: the class. Kept while the class is
   * absent (doubt), dropped once our conditions are removed or the Gateway is gone.
   */
  private readonly held = new Map<string, string>();
  /** Since when a write of the Gateway has waited for the policies (policiesPending). */
  private readonly deferredSince = new Map<string, number>();
  /** Each cached policy's status annotation, parsed once (the cache replaces the object when it changes), as the Gateway's status reads it. */
  private readonly verdicts = new WeakMap<KubeObject, PolicyStandings | undefined>();

  constructor(private readonly deps: GatewayStatusDeps) {}

  /**
   * How long a policy-driven look at the Gateway should wait: none after a quiet spell, the rest of the
   * coalescing window right after a computation or a write (a burst of policy status changes ends in one
   * write, and costs one computation a window).
   */
  delay(gatewayKey: string, now = Date.now()): number {
    const last = Math.max(this.lastWrite.get(gatewayKey) ?? -Infinity, this.lastComputed.get(gatewayKey) ?? -Infinity);
    return last === -Infinity ? 0 : Math.max(0, last + this.deps.coalesceMs - now);
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const gateway = this.deps.gateways.store.get(key);
    const [className] = gateway ? gatewayClassOf(gateway) : [];
    const gatewayClass = className === undefined ? undefined : this.deps.classes.store.get(className);
    // Gone, or going: nothing is written, nothing of it is kept.
    if (!gateway || gateway.metadata.deletionTimestamp || className === undefined) {
      this.forget(key);
      this.held.delete(key);
      return;
    }
    if (!ownsClass(gatewayClass, this.deps.controllerName)) {
      this.forget(key);
      // Certain: the class exists and names another controller; what we wrote there goes. An absent class
      // is doubt (it may come back, ours): what the Gateway has stays, as for a class whose params are unknown.
      if (gatewayClass) await this.release(key, gateway);
      return;
    }
    this.held.set(key, className);
    // What is in force for the class is not known yet (params not read, or its conditions not written for
    // its generation): what the Gateway has stays; the class's change brings the key back.
    const classState = gatewayClass && this.deps.configs.paramsRead(className) ? classStateOf(gatewayClass) : undefined;
    if (!classState) return;

    // Enforcement first, and one write per change: while policies wait to be reconciled (a fan-out, a
    // start-up pass) their verdicts are about to move; the Gateway's status is computed and written once they
    // have (computing it on every poll of a fan-out cost more than the fan-out's own reconciles).
    const now = Date.now();
    const since = this.deferredSince.get(key) ?? now;
    if (this.deps.policiesPending() && now - since < MAX_DEFER_MS) {
      this.deferredSince.set(key, since);
      return { requeueAfterMs: DEFER_POLL_MS };
    }
    this.deferredSince.delete(key);

    const namespace = gateway.metadata.namespace ?? '';
    const existing = readConditions(gateway);
    const owned = ownedConditionTypes(gateway.metadata.managedFields, FIELD_MANAGER);
    this.lastComputed.set(key, now);
    const desired = gatewayConditions({
      namespace,
      name: gateway.metadata.name,
      generation: gateway.metadata.generation,
      className,
      classState,
      placement: this.placement(gateway),
      kinds: this.kinds(className),
      policies: this.policies(gateway),
      lingering: this.deps.deletedLingering(key),
      existing,
      owned,
    });
    const desiredHash = desiredFingerprint(desired);
    const writeKey = gatewayStatusWriteKey(key);
    if (this.expectations.observe(key, cachedFingerprint(existing, owned, desired)).specHash === desiredHash) {
      // What the Gateway has (or what we wrote and the cache does not show yet) is what is desiredHash.
      this.deps.writes.cancel(writeKey);
      return;
    }
    const body: KubeObject = {
      apiVersion: `${RESOURCES.gateways.group}/${RESOURCES.gateways.version}`,
      kind: 'Gateway',
      metadata: { namespace, name: gateway.metadata.name },
      status: { conditions: conditionsToApply(existing, desired, new Date().toISOString().replace(/\.\d+Z$/, 'Z')) },
    };
    await this.deps.writes.submit(writeKey, () => this.apply(key, body, desiredHash));
  }

  /**
   * A Gateway whose class names another controller: our conditions there (the types our field manager
   * owns, as its managed fields say) are removed, leaving every other writer's. Only when they are known
   * to be this controller's: it held the Gateway since it started (under a class it owned then), or our
   * Accepted condition names a class this controller owns now (the Gateway moved from it). Another hub
   * controller sharing the hub applies with the same field manager: conditions that may be its are not
   * ours to remove, and the removal is made once (a class that moved to that controller is written by it).
   */
  private async release(key: string, gateway: KubeObject): Promise<void> {
    const existing = readConditions(gateway);
    const owned = ownedConditionTypes(gateway.metadata.managedFields, FIELD_MANAGER);
    if (owned.size === 0) {
      this.held.delete(key);
      return;
    }
    const writtenFor = classOfOurConditions(existing, owned);
    const ours = this.held.has(key) || (writtenFor !== undefined && ownsClass(this.deps.classes.store.get(writtenFor), this.deps.controllerName));
    if (!ours) return;
    const desiredHash = desiredFingerprint([]);
    if (this.expectations.observe(key, cachedFingerprint(existing, owned, [])).specHash === desiredHash) return;
    const namespace = gateway.metadata.namespace ?? '';
    const body: KubeObject = {
      apiVersion: `${RESOURCES.gateways.group}/${RESOURCES.gateways.version}`,
      kind: 'Gateway',
      metadata: { namespace, name: gateway.metadata.name },
      // No condition: the apply owns none, so server-side apply removes the ones we alone owned.
      status: { conditions: [] },
    };
    const className = gatewayClassOf(gateway)[0];
    await this.deps.writes.submit(gatewayStatusWriteKey(key), async () => {
      await this.apply(key, body, desiredHash);
      this.held.delete(key);
      this.deps.logger.info({ gateway: key, gatewayClass: className, removed: [...owned].sort() }, 'Gateway moved to a class of another controller: our conditions removed');
    });
  }

  /** The Gateway went, or is no longer ours: nothing of it is kept or held. */
  forget(key: string): void {
    this.deps.writes.cancel(gatewayStatusWriteKey(key));
    this.lastWrite.delete(key);
    this.lastComputed.delete(key);
    this.deferredSince.delete(key);
  }

  private async apply(key: string, body: KubeObject, desiredHash: string): Promise<void> {
    const undo = this.expectations.applied(key, desiredHash);
    try {
      // Forced: the types we apply are ours alone (the Gateway CRD's defaults, Accepted and Programmed
      // Pending, are taken over); the list is a map keyed by type, so no other type is touched.
      await serverSideApply(this.deps.http, RESOURCES.gateways, body, { subresource: 'status', force: true, discardResponse: true });
    } catch (err) {
      undo();
      // Deleted meanwhile: its DELETED event forgets it.
      if (isNotFound(err)) return;
      throw err;
    }
    this.lastWrite.set(key, Date.now());
    const conditions = (body.status as { conditions: { type: string; status: string; reason: string }[] }).conditions;
    this.deps.logger.debug({ gateway: key, conditions: conditions.map((c) => `${c.type}=${c.status}/${c.reason}`) }, 'Gateway status written');
  }

  private placement(gateway: KubeObject): GatewayPlacement {
    const placed = this.deps.placed.of(gateway);
    const [placement] = placementOfGateway(gateway);
    // A cluster OCM cannot vouch for now (or being deleted) is named missing. One absent from the
    // ManagedClusters is taken as decided (decisions written by a tool of one's own, --trust-decision-labels).
    const unavailable = placed.clusters.flatMap((cluster) => {
      const health = clusterHealth(this.deps.managedClusters.store.get(cluster));
      if (health.state === 'unavailable') return [{ cluster, message: health.message }];
      if (health.state === 'deleting') return [{ cluster, message: `cluster ${cluster} is being deleted` }];
      return [];
    });
    const { state } = placed;
    return {
      ...(placement === undefined ? {} : { placement }),
      clusters: placed.clusters,
      unavailable,
      refused: placed.refused,
      ...(state.state === 'unsettled' ? { unsettled: { reason: state.reason, message: state.message } } : {}),
    };
  }

  /** The kinds in force for the class, each with its Kind name as a cached policy of it says. */
  private kinds(className: string): SyncedKind[] {
    return [...(this.deps.configs.get(className)?.kinds.values() ?? [])].map(({ gvr }) => {
      const kind = this.deps.policiesOfKind(gvr)[0]?.kind;
      return { group: gvr.group, resource: gvr.resource, ...(kind ? { kind } : {}) };
    });
  }

  private policies(gateway: KubeObject): TargetingPolicy[] {
    return this.deps.policiesTargeting(gateway).map(({ gr, policy }) => ({
      group: gr.group,
      resource: gr.resource,
      ...(policy.kind ? { kind: policy.kind } : {}),
      namespace: policy.metadata.namespace ?? '',
      name: policy.metadata.name,
      status: this.verdictsOf(policy),
    }));
  }

  private verdictsOf(policy: KubeObject): PolicyStandings | undefined {
    if (this.verdicts.has(policy)) return this.verdicts.get(policy);
    const status = policyStandings(readPolicyStatus(policy.metadata.annotations?.[STATUS_ANNOTATION]));
    this.verdicts.set(policy, status);
    return status;
  }
}
