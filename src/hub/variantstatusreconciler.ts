// The one writer of PolicyVariant status (docs/concepts/variants.md): whether the variant is accepted (the
// field named when not), whether its target is a synced hub policy, and what it came to in that policy's last
// reconcile — the clusters whose copy it changes, those it selects that keep the copy they run, and entries that
// select none of the policy's clusters. Decides nothing: the outcome is the decision pipeline's, recorded by the
// policy reconciler (variantoutcomes.ts). Its writes give way to ManifestWork writes, as the policies' and the
// Gateways' status writes do (the hub's YieldingWrites): a fan-out places the copies first.
import type { Logger } from 'pino';
import { canonicalJson } from '../core/k8s/canonical.ts';
import { conditionsUpToDate, mergeConditions, readConditions, type Condition } from '../core/k8s/conditions.ts';
import { namespacedKey, type KubeObject } from '../core/k8s/objects.ts';
import type { VariantOutcome } from '../core/pipeline/policypipeline.ts';
import { parseVariant, type PolicyVariant } from '../core/variants/policyvariant.ts';
import type { DynamicInformers } from '../kube/dynamicinformers.ts';
import type { EventRecorder } from '../kube/events.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { Informer } from '../kube/informer.ts';
import { RESOURCES } from '../kube/resource.ts';
import { mergePatch } from '../kube/writes.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import type { YieldingWrites } from '../runtime/yieldingwrites.ts';
import type { VariantOutcomes } from './variantoutcomes.ts';

export interface VariantStatusDeps {
  http: KubeHttp;
  variants: Informer;
  /** The synced kinds' informers: where the target policy is looked for. */
  watches: DynamicInformers;
  outcomes: VariantOutcomes;
  events?: EventRecorder;
  /** This replica leads (only the leader writes status). */
  canWrite: () => boolean;
  /** The hub's status writes, which wait while ManifestWorks are being written (keys: variantStatusWriteKey). */
  writes: YieldingWrites;
  logger: Logger;
}

/** The key of a variant's status write among the hub's yielding status writes (policy keys never start so). */
const WRITE_KEY_PREFIX = 'variant-status:';

export function variantStatusWriteKey(variantKey: string): string {
  return `${WRITE_KEY_PREFIX}${variantKey}`;
}

/** The variant key of a yielding write's key, if it is a variant status write. */
export function variantOfWriteKey(writeKey: string): string | undefined {
  return writeKey.startsWith(WRITE_KEY_PREFIX) ? writeKey.slice(WRITE_KEY_PREFIX.length) : undefined;
}

/** Most clusters the status names; the counts are whole. */
const MAX_NAMED_CLUSTERS = 100;
const MAX_NAMED_FAILURES = 20;
/** The policy's reconcile has not told yet what the variant came to: look again then (it also enqueues it). */
const OUTCOME_PENDING_MS = 5_000;

export const VARIANT_ACCEPTED = 'Accepted';
export const VARIANT_RESOLVED = 'Resolved';
export const VARIANT_APPLIED = 'Applied';

interface VariantStatus {
  observedGeneration: number;
  clusters: number;
  failing: number;
  appliedClusters: string[];
  failures: { cluster: string; reason: string; message: string }[];
}

export class VariantStatusReconciler {
  constructor(private readonly deps: VariantStatusDeps) {}

  async reconcile(key: string): Promise<ReconcileResult> {
    const due = this.due(key);
    if (due === undefined || 'requeueAfterMs' in due) return due;
    const writeKey = variantStatusWriteKey(key);
    if (!due.changed || !this.deps.canWrite()) {
      // What the variant says is what is due: a write held for it is moot.
      this.deps.writes.cancel(writeKey);
      return undefined;
    }
    // Held while works are written, the write holds only the key: it writes what is due when it is made.
    await this.deps.writes.submit(writeKey, () => this.write(key));
    return undefined;
  }

  /** The status the variant is due, from the caches and the policy's last outcome; undefined: none (deleted). */
  private due(key: string): { variant: KubeObject; status: VariantStatus; conditions: Condition[]; changed: boolean } | { requeueAfterMs: number } | undefined {
    const variant = this.deps.variants.store.get(key);
    if (!variant || variant.metadata.deletionTimestamp) return undefined;
    const generation = variant.metadata.generation ?? 0;
    const parsed = parseVariant(variant);
    let conditions: Condition[];
    let status: VariantStatus = { observedGeneration: generation, clusters: 0, failing: 0, appliedClusters: [], failures: [] };
    if (!parsed.ok) {
      conditions = [cond(VARIANT_ACCEPTED, 'False', 'Invalid', `${parsed.field}: ${parsed.message}`, generation), cond(VARIANT_APPLIED, 'False', 'Invalid', 'not applied: the variant is not accepted; every cluster of its policy keeps the copy it runs', generation)];
    } else {
      const accepted = cond(VARIANT_ACCEPTED, 'True', 'Accepted', `${parsed.variant.entries.length} entries`, generation);
      const target = this.target(parsed.variant);
      if (target.state !== 'found') {
        conditions = [accepted, cond(VARIANT_RESOLVED, 'False', target.reason, target.message, generation), cond(VARIANT_APPLIED, 'False', target.reason, 'not applied: no synced policy to apply it to', generation)];
      } else {
        const outcome = this.deps.outcomes.get(key);
        if (!outcome || outcome.generation !== generation) return { requeueAfterMs: OUTCOME_PENDING_MS };
        status = statusOf(outcome, generation);
        conditions = [accepted, cond(VARIANT_RESOLVED, 'True', 'Resolved', target.message, generation), applied(outcome, generation)];
      }
    }
    const current = (variant.status ?? {}) as Partial<VariantStatus>;
    const changed =
      canonicalJson([current.observedGeneration, current.clusters, current.failing, current.appliedClusters ?? [], current.failures ?? []]) !==
        canonicalJson([status.observedGeneration, status.clusters, status.failing, status.appliedClusters, status.failures]) || !conditionsUpToDate(readConditions(variant), conditions);
    return { variant, status, conditions, changed };
  }

  /** The hub policy the variant targets, among the synced kinds of its group with that Kind. */
  private target(variant: PolicyVariant): { state: 'found'; message: string } | { state: 'missing'; reason: string; message: string } {
    const { group, kind, name } = variant.target;
    const of = `${kind} ${name}${group ? ` (${group})` : ''}`;
    let synced = false;
    for (const k of this.deps.watches.kinds()) {
      if (k.gvr.group !== group) continue;
      const policy = this.deps.watches.informer(k.gvr)?.store.get(namespacedKey(variant.namespace, name));
      if (policy && policy.kind === kind) return { state: 'found', message: `targets ${of}` };
      synced ||= this.deps.watches.informer(k.gvr)?.store.list().some((p) => p.kind === kind) ?? false;
    }
    if (!synced && !this.deps.watches.kinds().some((k) => k.gvr.group === group)) {
      return { state: 'missing', reason: 'KindNotSynced', message: `no GatewayClass of this controller syncs ${kind}${group ? `.${group}` : ''} (policiesToSync)` };
    }
    return { state: 'missing', reason: 'TargetNotFound', message: `${of} not found in namespace ${variant.namespace}` };
  }

  /** Writes the status due now, if it is still not what the variant says (a held write may have become moot). */
  private async write(key: string): Promise<void> {
    const due = this.due(key);
    if (due === undefined || 'requeueAfterMs' in due || !due.changed || !this.deps.canWrite()) return;
    const { variant, status, conditions: desired } = due;
    const namespace = variant.metadata.namespace ?? '';
    const { name } = variant.metadata;
    const existing = readConditions(variant);
    const conditions = mergeConditions(existing, desired, new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
    await mergePatch(this.deps.http, RESOURCES.policyVariants, namespace, name, { status: { ...status, conditions } }, { subresource: 'status' });
    const log = this.deps.logger.child({ variant: `${namespace}/${name}` });
    log.info({ conditions: desired.map((c) => `${c.type}=${c.status}/${c.reason}`), clusters: status.clusters, failing: status.failing }, 'PolicyVariant status written');
    // An Event when a condition turns False or says something new while False.
    for (const c of desired) {
      const before = existing.find((e) => e.type === c.type);
      if (c.status === 'False' && (before?.status !== 'False' || before.reason !== c.reason || before.message !== c.message)) {
        await this.deps.events?.record(variant, 'Warning', c.reason, c.message);
      }
    }
  }
}

function cond(type: string, status: Condition['status'], reason: string, message: string, observedGeneration: number): Condition {
  return { type, status, reason, message, observedGeneration };
}

function statusOf(outcome: VariantOutcome, generation: number): VariantStatus {
  return {
    observedGeneration: generation,
    clusters: outcome.applied.length,
    failing: outcome.failing.length,
    appliedClusters: outcome.applied.slice(0, MAX_NAMED_CLUSTERS),
    failures: outcome.failing.slice(0, MAX_NAMED_FAILURES).map((f) => ({ cluster: f.cluster, reason: f.reason, message: f.message })),
  };
}

function applied(outcome: VariantOutcome, generation: number): Condition {
  const first = outcome.failing[0];
  if (first) {
    const more = outcome.failing.length > 1 ? ` (and ${outcome.failing.length - 1} more clusters)` : '';
    return cond(VARIANT_APPLIED, 'False', first.reason, `${first.cluster} keeps the copy it runs: ${first.message}${more}`, generation);
  }
  if (outcome.unmatched.length > 0) {
    return cond(VARIANT_APPLIED, 'False', 'NoClustersSelected', `entries ${outcome.unmatched.map((i) => `[${i}]`).join(', ')} select none of the clusters the policy is placed on`, generation);
  }
  return cond(VARIANT_APPLIED, 'True', 'Applied', `changes the copy on ${outcome.applied.length} cluster${outcome.applied.length === 1 ? '' : 's'}`, generation);
}
