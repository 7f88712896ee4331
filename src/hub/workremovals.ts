// The deletes the one deletion rule (core/works/removal.ts, docs/design/deletion.md#never-delete-on-doubt) allows.
// For a policy that exists the rule is asked in the decision pipeline, once per cluster (core/pipeline/removals.ts:
// the hub and `policy-sync diff` alike); here only what a pure decision cannot do: the applier's plan of what is
// there, and, for a policy gone from the cache or a kind no longer watched, the live reads that confirm it is gone
// and that its CRD is the one its works were written under — then the deletes.
import type { Logger } from 'pino';
import type { GroupResource, GroupVersionResource } from '../core/k8s/gvr.ts';
import { namespacedKey, type KubeObject } from '../core/k8s/objects.ts';
import type { WorkKey } from '../core/keys.ts';
import { ownsClass } from '../core/params/classparams.ts';
import type { HubView } from '../core/pipeline/hubview.ts';
import type { WorkRemoval } from '../core/pipeline/removals.ts';
import { REPORTED_ANNOTATIONS } from '../core/status/report.ts';
import type { UnknownCluster } from '../core/status/statusinput.ts';
import { GATEWAY_GROUP, GATEWAY_KIND, readTargets } from '../core/targets/targetrefs.ts';
import { readSourceRef, type ManifestWork } from '../core/works/manifestwork.ts';
import { decideRemoval, type CrdState, type RemovalDecision, type RemovalInput } from '../core/works/removal.ts';
import { readCrd } from '../kube/discovery.ts';
import { isForbidden, isNotFound, type KubeHttp } from '../kube/http.ts';
import type { DerivedStore } from '../kube/derivedstore.ts';
import type { Informer } from '../kube/informer.ts';
import { objectPath } from '../kube/resource.ts';
import { mergePatch } from '../kube/writes.ts';
import type { ClassConfigs } from './classconfigs.ts';
import { gatewayClassOf } from './indexes.ts';
import type { WorkApplier } from './workapplier.ts';

export interface WorkRemovalsDeps {
  http: KubeHttp;
  /** What the deletion rule reads of the hub, as the decision pipeline reads it. */
  view: Pick<HubView, 'removalGrounds'>;
  classes: Informer;
  gateways: Informer;
  works: DerivedStore;
  configs: ClassConfigs;
  applier: WorkApplier;
  controllerName: string;
}

/** The per-cluster outcome for the works a policy no longer wants. */
export interface ClusterRemovals {
  /** Works the rule lets go. */
  deletions: WorkKey[];
  /** Clusters whose work is kept because OCM cannot vouch for them or their placement is in flux. */
  unknown: UnknownCluster[];
  /** Some work was kept. */
  kept: boolean;
  /** When a recovery grace ends (ms since the epoch): no event marks it, so look again then. */
  recheckAt?: number;
}

export class WorkRemovals {
  constructor(private readonly deps: WorkRemovalsDeps) {}

  /**
   * What the pipeline's deletion rule said of the works the applier would delete (`candidates`: its plan's, a
   * subset of the decision's), told per cluster: a work the decision does not name is kept (never deleted unasked).
   */
  fromDecision(log: Logger, decided: readonly WorkRemoval[], candidates: readonly WorkKey[], recheckAt?: number): ClusterRemovals {
    const byKey = new Map(decided.map((r) => [r.work, r]));
    const out: ClusterRemovals = { deletions: [], unknown: [], kept: false, ...(recheckAt === undefined ? {} : { recheckAt }) };
    for (const workKey of candidates) {
      const r = byKey.get(workKey);
      if (r?.decision.action === 'delete') {
        out.deletions.push(workKey);
        if (r.overriddenBy !== undefined) log.info({ work: workKey, overriddenBy: r.overriddenBy }, 'local policies cover the copy: its ManifestWork is withdrawn');
        continue;
      }
      out.kept = true;
      if (r) logKept(log, [workKey], r.decision);
      if (r?.doubt) out.unknown.push(r.doubt);
    }
    return out;
  }

  /**
   * The works of a kind no longer watched go only once the rule is sure (the classes of their Gateways known).
   * Before they go, the policy loses the report annotations this controller wrote on it: with its kind no
   * longer watched no reconcile would correct them, and `policies-synced` would name clusters whose copy is
   * gone (the soak found it, issue 29). Cleared first, so that a failure leaves the works to retry with.
   */
  async removeOfUnwatchedKind(log: Logger, key: string, gr: GroupResource, observed: readonly KubeObject[]): Promise<void> {
    const input = this.input(gr, undefined, this.classesOfWorks(observed));
    const decision = decideRemoval(input);
    if (decision.action === 'delete') await this.clearReport(log, observed);
    await this.removeAll(log, key, observed, input, decision);
  }

  /** Removes `kuadrant.io/policies-synced` and the status annotation from the works' source policy; gone or forbidden: nothing to clear. */
  private async clearReport(log: Logger, observed: readonly KubeObject[]): Promise<void> {
    const source = observed.map(readSourceRef).find((s) => s !== undefined);
    if (!source) return;
    const patch = { metadata: { annotations: Object.fromEntries(REPORTED_ANNOTATIONS.map((a) => [a, null])) } };
    try {
      await mergePatch(this.deps.http, { ...source, namespaced: true }, source.namespace, source.name, patch, { discardResponse: true });
    } catch (err) {
      if (isNotFound(err)) return;
      // Without the right to patch the kind any more (its RBAC went with it), the annotations stay as they were.
      if (isForbidden(err)) {
        log.warn({ err }, 'the report annotations of a policy whose kind is no longer synced could not be removed');
        return;
      }
      throw err;
    }
  }

  /** The policy is gone (or going) from the cache: its works go once live reads confirm it. Kept: whether to look again. */
  async removeOfDeletedPolicy(log: Logger, key: string, gvr: GroupVersionResource, namespace: string, name: string, observed: readonly KubeObject[]): Promise<RemovalDecision> {
    const input = this.input(gvr, { deleting: true, targetClasses: [] });
    const decision = decideRemoval(input);
    const confirmed = decision.action === 'confirm' ? decideRemoval({ ...input, confirmation: await this.confirmGone(gvr, namespace, name, observed) }) : decision;
    await this.removeAll(log, key, observed, input, confirmed);
    return confirmed;
  }

  /** The targeted owned classes whose params are not known yet: what to report is unknown too. */
  unknownClasses(targetClasses: readonly string[]): string[] {
    const owned = targetClasses.filter((c) => ownsClass(this.deps.classes.store.get(c), this.deps.controllerName));
    return [...this.deps.configs.knowledge(owned)].filter(([, k]) => k.state === 'unknown').map(([n]) => n);
  }

  /** What the rule reads of the hub (the view's, as the pipeline reads it), for a policy gone or a kind no longer watched. */
  private input(gr: GroupResource, policy?: RemovalInput['policy'], worksClasses: readonly string[] = []): RemovalInput {
    // A policy's own Gateways' classes; for a kind no longer watched, those of the Gateways its works were for.
    return { ...this.deps.view.removalGrounds(gr, policy ? policy.targetClasses : worksClasses), ...(policy ? { policy } : {}) };
  }

  /** Deletes the observed works (all unwanted here), if the deletion rule allows it. */
  private async removeAll(log: Logger, key: string, observed: readonly KubeObject[], input: RemovalInput, decided?: RemovalDecision): Promise<void> {
    const plan = this.deps.applier.plan([], observed);
    if (plan.delete.length === 0) return;
    const decision = decided ?? decideRemoval(input);
    if (decision.action !== 'delete') {
      logKept(log, plan.delete, decision);
      return;
    }
    log.info({ reason: decision.reason, works: plan.delete.length }, 'deleting unwanted ManifestWorks');
    await this.deps.applier.execute(key, { ...plan, create: [], apply: [] }, log);
  }

  /** Live reads behind a deletion: is the policy really gone, and is its CRD the one its works were written under? */
  private async confirmGone(gvr: GroupVersionResource, namespace: string, name: string, observed: readonly KubeObject[]): Promise<{ policyExists: boolean; crd: CrdState }> {
    let policyExists = true;
    try {
      await this.deps.http.request('GET', objectPath({ ...gvr, namespaced: true }, namespace, name));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      policyExists = false;
    }
    return { policyExists, crd: await this.crdState(gvr, observed) };
  }

  private async crdState(gr: GroupResource, observed: readonly KubeObject[]): Promise<CrdState> {
    if (gr.group === '') return 'builtin';
    try {
      const crd = await readCrd(this.deps.http, gr);
      if (!crd) return 'absent';
      if (crd.terminating) return 'terminating';
      const recorded = new Set(observed.map((w) => readSourceRef(w)?.crdUid).filter((u): u is string => u !== undefined));
      return recorded.size > 0 && !recorded.has(crd.uid) ? 'replaced' : 'live';
    } catch {
      return 'unreadable';
    }
  }

  /**
   * The GatewayClass of every cached hub Gateway these works were written for: the copy's Gateway targets
   * carry the hub Gateway's name, and the hub policy's namespace is its Gateway's (cross-namespace targets
   * are never synced).
   */
  private classesOfWorks(works: readonly KubeObject[]): string[] {
    return works.flatMap((w) => {
      const source = readSourceRef(w);
      const copy = (w as ManifestWork).spec?.workload?.manifests?.[0];
      if (!source || !copy) return [];
      return readTargets(copy)
        .filter((t) => t.group === GATEWAY_GROUP && t.kind === GATEWAY_KIND)
        .flatMap((t) => {
          const gateway = this.deps.gateways.store.get(namespacedKey(source.namespace, t.name));
          return gateway ? gatewayClassOf(gateway) : [];
        });
    });
  }
}

function logKept(log: Logger, keys: readonly string[], decision: RemovalDecision): void {
  if (decision.action === 'keep') log.warn({ works: keys, reason: decision.reason, why: decision.message }, 'ManifestWorks no longer desired are kept: not known to be unwanted');
}
