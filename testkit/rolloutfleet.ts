// A simulated fleet for the rollout planner (src/core/rollout/plan.ts): the hub writes what a plan says (as the
// applier does: a work whose spec-hash is unchanged is not written again), each cluster's OCM work agent
// applies its work and feeds the spoke copy's status back (statusFeedback values, as the default feedback rules
// read them), and the spoke controller judges the copy's generation. The works the next plan reads are those,
// as the work cache keeps them (src/core/works/cacheview.ts). Shared by plan.test.ts and the planner's property test.
import assert from 'node:assert/strict';
import { workCacheView } from '../src/core/works/cacheview.ts';
import { canonicalJson } from '../src/core/k8s/canonical.ts';
import { formatKubeTime } from '../src/core/k8s/kubetime.ts';
import type { KubeObject } from '../src/core/k8s/objects.ts';
import { desiredWorksForPolicy } from '../src/core/works/desiredworks.ts';
import { ancestorFeedbackGateways } from '../src/core/works/feedbackrules.ts';
import { readSpecHash, type ManifestWork } from '../src/core/works/manifestwork.ts';
import { planRollout, recordedRollout, rolloutVariants, type RolloutInput, type RolloutPlan } from '../src/core/rollout/plan.ts';
import type { RolloutStatus } from '../src/core/status/rolloutstatus.ts';
import { workCopy, workRevision } from '../src/core/works/revision.ts';
import { PROGRESSIVE_DEFAULTS, type ProgressiveRollout, type RolloutStrategy } from '../src/core/params/strategy.ts';
import type { CopyRendering } from '../src/core/variants/render.ts';

export const GW = 'gateway.networking.k8s.io';
export const AUTH = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };
export const BTP = { group: 'gateway.envoyproxy.io', version: 'v1alpha1', resource: 'backendtrafficpolicies' };
export const T0 = Date.parse('2026-03-01T10:00:00Z');
export const SEC = 1000;
export const MIN = 60 * SEC;
export const MAX_WORK_BYTES = 500 * 1024;

export function progressive(settings: Partial<ProgressiveRollout> = {}): RolloutStrategy {
  return { type: 'Progressive', ...PROGRESSIVE_DEFAULTS, ...settings };
}

// ---------------------------------------------------------------------------------------------------------
// Hub policies

export type Kind = 'AuthPolicy' | 'BackendTrafficPolicy';

export interface PolicyOptions {
  kind?: Kind;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  /** Gateways targeted (BackendTrafficPolicy: targetRefs; AuthPolicy: targetRef, the first). */
  gateways?: string[];
}

/** The hub policy at `generation` (its revision), with `rules` as the part of its spec that changes. */
export function hubPolicy(generation: number, rules: Record<string, unknown>, options: PolicyOptions = {}): KubeObject {
  const kind = options.kind ?? 'AuthPolicy';
  const gateways = options.gateways ?? ['shop'];
  const ref = (name: string) => ({ group: GW, kind: 'Gateway', name });
  const spec = kind === 'AuthPolicy' ? { targetRef: ref(gateways[0]!), rules } : { targetRefs: gateways.map(ref), ...rules };
  return {
    apiVersion: kind === 'AuthPolicy' ? 'kuadrant.io/v1' : 'gateway.envoyproxy.io/v1alpha1',
    kind,
    metadata: {
      name: 'p',
      namespace: 'shop',
      uid: 'uid-1',
      generation,
      creationTimestamp: '2026-02-01T00:00:00Z',
      ...(options.labels ? { labels: options.labels } : {}),
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    spec,
  };
}

export const RULES_1 = { authentication: { 'api-key': { apiKey: { selector: { matchLabels: { app: 'shop' } } } } } };
export const RULES_2 = { authentication: { jwt: { jwt: { issuerUrl: 'https://sso.example.com/realms/shop' } } } };
export const RULES_3 = { authentication: { jwt: { jwt: { issuerUrl: 'https://sso.example.com/realms/shop-v3' } } } };

// ---------------------------------------------------------------------------------------------------------
// What a spoke controller says of a copy

export type Cond = [status: 'True' | 'False' | 'Unknown', reason: string, message: string];

/** The spoke controller's status of the copy: Kuadrant style (conditions, status.observedGeneration) or GEP-713 ancestors. */
export interface Verdict {
  accepted?: Cond;
  enforced?: Cond;
  /** GEP-713: the Accepted condition of the copy's ancestor entry for each of its Gateways. */
  ancestor?: Cond;
}

export const ENFORCED: Verdict = {
  accepted: ['True', 'Accepted', 'AuthPolicy has been accepted'],
  enforced: ['True', 'Enforced', 'AuthPolicy has been successfully enforced'],
};
/** Kuadrant drops the Enforced condition of a policy it does not accept. */
export const TARGET_NOT_FOUND: Verdict = { accepted: ['False', 'TargetNotFound', 'AuthPolicy target shop was not found'] };
export const MISSING_RESOURCE: Verdict = {
  accepted: ['True', 'Accepted', 'AuthPolicy has been accepted'],
  enforced: ['False', 'MissingResource', 'AuthPolicy waiting for the following components to sync: [AuthConfig]'],
};
export const OVERRIDDEN: Verdict = {
  accepted: ['True', 'Accepted', 'AuthPolicy has been accepted'],
  enforced: ['False', 'Overridden', 'AuthPolicy is overridden by [shop/local-auth]'],
};
export const ENFORCING: Verdict = {
  accepted: ['True', 'Accepted', 'AuthPolicy has been accepted'],
  enforced: ['Unknown', 'Pending', 'AuthPolicy is being enforced'],
};
export const EG_ACCEPTED: Verdict = { ancestor: ['True', 'Accepted', 'Policy has been accepted.'] };
export const EG_INVALID: Verdict = { ancestor: ['False', 'Invalid', 'Timeout: requestTimeout must be positive'] };

// ---------------------------------------------------------------------------------------------------------
// The fleet: works on the hub, copies on the spokes

export interface Spoke {
  /** The work as the hub last wrote it. */
  work: ManifestWork;
  generation: number;
  writtenAt: number;
  /** The agent's Applied condition: the work generation it observed, since when it has this status. */
  applied?: { generation: number; since: number; error?: string };
  /** The spoke copy as the agent last applied it. */
  copy?: { spec: string; generation: number; revision?: string; gateways: string[] };
  /** The spoke controller's status, about the copy generation it observed. */
  verdict?: Verdict & { generation: number };
  statusAt?: number;
}

export class Fleet {
  readonly spokes = new Map<string, Spoke>();
  /** Works written, by cluster, in order: what the hub sent. */
  readonly writes: string[] = [];
  private readonly view = workCacheView();

  constructor(private readonly kind: Kind = 'AuthPolicy') {}

  /** The hub applies the plan as the applier does: only works whose spec-hash changed; works neither written nor kept are deleted. */
  apply(plan: RolloutPlan, at: number): void {
    for (const [cluster, work] of plan.write) {
      const spoke = this.spokes.get(cluster);
      if (spoke && readSpecHash(spoke.work) === readSpecHash(work)) continue;
      this.writes.push(cluster);
      if (!spoke) {
        this.spokes.set(cluster, { work, generation: 1, writtenAt: at });
        continue;
      }
      // Metadata (labels, annotations) is no part of the work's generation.
      if (canonicalJson(spoke.work.spec) !== canonicalJson(work.spec)) spoke.generation += 1;
      spoke.work = work;
      spoke.writtenAt = at;
    }
    for (const cluster of [...this.spokes.keys()]) {
      if (!plan.write.has(cluster) && !plan.keep.has(cluster)) this.spokes.delete(cluster);
    }
  }

  /** The work agent applies the cluster's work (or fails to). */
  agent(cluster: string, at: number, error?: string): void {
    const spoke = this.spoke(cluster);
    const wasTrue = spoke.applied !== undefined && spoke.applied.error === undefined;
    const since = spoke.applied && wasTrue === (error === undefined) ? spoke.applied.since : at;
    spoke.applied = { generation: spoke.generation, since, ...(error === undefined ? {} : { error }) };
    spoke.statusAt = at;
    if (error !== undefined) return;
    const copy = workCopy(spoke.work)!;
    const spec = canonicalJson(copy.spec);
    const revision = copy.metadata.annotations?.['policysync.kuadrant.io/revision'];
    const generation = spoke.copy === undefined ? 1 : spoke.copy.spec === spec ? spoke.copy.generation : spoke.copy.generation + 1;
    spoke.copy = { spec, generation, gateways: ancestorFeedbackGateways(copy), ...(revision === undefined ? {} : { revision }) };
  }

  /**
   * The agent's apply controller acknowledges the work generation (Applied observes it) before its status feedback
   * sync (`--status-sync-interval`) has run: the fed-back values still describe the copy before, its revision, its
   * generation and its controller's verdict. The real agent updates the two apart; `agent` does both at once.
   */
  acknowledge(cluster: string): void {
    const spoke = this.spoke(cluster);
    assert.ok(spoke.applied && spoke.applied.error === undefined, `no applied work on ${cluster} to acknowledge`);
    spoke.applied = { generation: spoke.generation, since: spoke.applied.since };
  }

  /** The spoke controller judges the copy as it is now. */
  judge(cluster: string, verdict: Verdict, at: number): void {
    const spoke = this.spoke(cluster);
    assert.ok(spoke.copy, `no copy on ${cluster} to judge`);
    spoke.verdict = { ...verdict, generation: spoke.copy.generation };
    spoke.statusAt = at;
  }

  /** The agent applied the work and the controller judged what it placed. */
  roll(cluster: string, verdict: Verdict | undefined, at: number): void {
    this.agent(cluster, at);
    if (verdict) this.judge(cluster, verdict, at);
  }

  spoke(cluster: string): Spoke {
    const spoke = this.spokes.get(cluster);
    assert.ok(spoke, `no work on ${cluster}`);
    return spoke;
  }

  /** The work as the hub's cache holds it. */
  observed(cluster: string): KubeObject | undefined {
    const spoke = this.spokes.get(cluster);
    if (!spoke) return undefined;
    const managedFields: unknown[] = [{ manager: 'policy-sync', operation: 'Apply', apiVersion: 'work.open-cluster-management.io/v1', time: iso(spoke.writtenAt), fieldsType: 'FieldsV1', fieldsV1: {} }];
    if (spoke.statusAt !== undefined) managedFields.push({ manager: 'work-agent', operation: 'Update', subresource: 'status', time: iso(spoke.statusAt) });
    const work: KubeObject = { ...structuredClone(spoke.work), metadata: { ...structuredClone(spoke.work.metadata), generation: spoke.generation, managedFields } };
    if (spoke.applied) work.status = this.status(spoke);
    return this.view(work);
  }

  private status(spoke: Spoke): Record<string, unknown> {
    const applied = spoke.applied!;
    const ok = applied.error === undefined;
    const condition = (type: string, status: string, reason: string, message: string) => ({
      type,
      status,
      reason,
      message,
      observedGeneration: applied.generation,
      lastTransitionTime: iso(applied.since),
    });
    const values: { name: string; fieldValue: Record<string, unknown> }[] = [];
    const str = (name: string, value: string) => values.push({ name, fieldValue: { type: 'String', string: value } });
    const int = (name: string, value: number) => values.push({ name, fieldValue: { type: 'Integer', integer: value } });
    const { copy, verdict } = spoke;
    if (copy) {
      int('generation', copy.generation);
      if (copy.revision !== undefined) str('revision', copy.revision);
      for (const [prefix, condition] of [['accepted', verdict?.accepted], ['enforced', verdict?.enforced]] as const) {
        if (!condition) continue;
        str(`${prefix}Status`, condition[0]);
        str(`${prefix}Reason`, condition[1]);
        str(`${prefix}Message`, condition[2]);
      }
      if (verdict && (verdict.accepted || verdict.enforced)) {
        int('statusObservedGeneration', verdict.generation);
        str('firstConditionType', 'Accepted');
      }
      if (verdict?.ancestor) {
        copy.gateways.forEach((gateway, i) => {
          str(`ancestor${i}Status`, verdict.ancestor![0]);
          str(`ancestor${i}Reason`, verdict.ancestor![1]);
          str(`ancestor${i}Message`, verdict.ancestor![2]);
          int(`ancestor${i}Generation`, verdict.generation);
          str(`ancestor${i}Controller`, 'gateway.envoyproxy.io/gatewayclass-controller');
        });
        str('firstAncestorName', copy.gateways[0]!);
      }
    }
    const { name, namespace } = workCopy(spoke.work)!.metadata;
    const gvr = this.kind === 'AuthPolicy' ? AUTH : BTP;
    return {
      conditions: [
        condition('Applied', ok ? 'True' : 'False', ok ? 'AppliedManifestWorkComplete' : 'AppliedManifestWorkFailed', ok ? 'Apply manifest work complete' : 'Failed to apply manifest work'),
        condition('Available', ok ? 'True' : 'Unknown', ok ? 'ResourcesAvailable' : 'ResourcesStatusUnknown', ok ? 'All resources are available' : ''),
      ],
      resourceStatus: {
        manifests: [
          {
            resourceMeta: { ordinal: 0, group: gvr.group, version: gvr.version, kind: this.kind, resource: gvr.resource, name, namespace },
            statusFeedback: { values: ok ? values : [] },
            conditions: [
              { type: 'Applied', status: ok ? 'True' : 'False', reason: ok ? 'AppliedManifestComplete' : 'AppliedManifestFailed', message: ok ? 'Apply manifest complete' : applied.error, lastTransitionTime: iso(applied.since) },
              { type: 'StatusFeedbackSynced', status: 'True', reason: 'StatusFeedbackSynced', message: '', lastTransitionTime: iso(applied.since) },
            ],
          },
        ],
      },
    };
  }
}

function iso(ms: number): string {
  return formatKubeTime(new Date(ms))!;
}

// ---------------------------------------------------------------------------------------------------------
// The hub: desired works from the placement, a plan over the fleet, checked

export interface WorldOptions {
  clusters: Record<string, Record<string, string>>;
  kind?: Kind;
  /** Gateway → clusters it is placed on; default: Gateway `shop` on every cluster. */
  placement?: Record<string, string[]>;
  maxWorkBytes?: number;
}

export class World {
  readonly fleet: Fleet;
  labels: Record<string, Record<string, string>>;
  placement: Record<string, string[]>;
  readonly kind: Kind;
  soak = new Map<string, number>();
  private soakRevision: number | undefined;
  maxWorkBytes: number;
  last?: { input: RolloutInput; plan: RolloutPlan };
  /** Called with every plan and the input it was made from: what the test holds of every plan. */
  check?: (input: RolloutInput, plan: RolloutPlan) => void;
  /** The revision whose rollout the policy's status (as the hub wrote it) says completed. */
  completedRevision: number | undefined;
  /** The halt the policy's status (as the hub wrote it) records, for a revision. */
  haltedRecord: { revision: number; cause: { cluster: string; reason: string; message: string } } | undefined;
  /** The rollout status the hub last wrote on the policy: when set, read as the hub reads it (recordedRollout). */
  recorded: RolloutStatus | undefined;
  /** Each cluster's copy with the policy's variants applied (core/variants/render.ts), as the pipeline renders it; none: no variant. */
  render: ((cluster: string, copy: KubeObject) => CopyRendering) | undefined;

  constructor(options: WorldOptions) {
    this.kind = options.kind ?? 'AuthPolicy';
    this.fleet = new Fleet(this.kind);
    this.labels = options.clusters;
    this.placement = options.placement ?? { shop: Object.keys(options.clusters) };
    this.maxWorkBytes = options.maxWorkBytes ?? MAX_WORK_BYTES;
  }

  desired(policy: KubeObject): Map<string, ManifestWork> {
    return desiredWorksForPolicy({
      gvr: this.kind === 'AuthPolicy' ? AUTH : BTP,
      policy,
      gateways: (namespace, name) =>
        namespace === 'shop' && this.placement[name] ? { managed: true, downstreamNamespaceTemplate: '{namespace}', clusters: this.placement[name], kindAllowed: true } : undefined,
      rawFeedback: false,
      statusFeedback: [],
      maxWorkBytes: MAX_WORK_BYTES,
      ...(this.render ? { render: this.render } : {}),
    }).works;
  }

  /** The plan for `policy` now, from the fleet's works as cached; the soak clocks carried as the hub carries them. */
  plan(policy: KubeObject, strategy: RolloutStrategy, now: number, options: { soak?: ReadonlyMap<string, number> } = {}): RolloutPlan {
    const revision = policy.metadata.generation!;
    const resume = policy.metadata.annotations?.['policysync.kuadrant.io/rollout-resume']?.trim() === String(revision);
    const desired = this.desired(policy);
    const variants = rolloutVariants(desired);
    const input: RolloutInput = {
      strategy,
      revision,
      ...(variants === undefined ? {} : { variants }),
      resume,
      clusters: [...desired].map(([cluster, desired]) => {
        const observed = this.fleet.observed(cluster);
        return { cluster, labels: this.labels[cluster] ?? {}, desired, ...(observed ? { observed } : {}) };
      }),
      soak: options.soak ?? (this.soakRevision === revision ? this.soak : new Map()),
      ...(this.completedRevision === revision ? { completed: true } : {}),
      ...(this.haltedRecord?.revision === revision ? { halted: this.haltedRecord.cause } : {}),
      ...(this.recorded ? recordedRollout(this.recorded, revision, variants) : {}),
      now,
      maxWorkBytes: this.maxWorkBytes,
    };
    const before = structuredClone(input.clusters);
    const plan = planRollout(input);
    assert.deepEqual(input.clusters, before, 'planRollout modifies nothing it is given');
    this.check?.(input, plan);
    this.soak = plan.soak;
    this.soakRevision = revision;
    this.last = { input, plan };
    return plan;
  }

  /** Plan, and write what the plan says. */
  step(policy: KubeObject, strategy: RolloutStrategy, now: number): RolloutPlan {
    const plan = this.plan(policy, strategy, now);
    this.fleet.apply(plan, now);
    return plan;
  }

  /** The agents apply what was written on these clusters and the controllers judge it. */
  roll(clusters: readonly string[], verdict: Verdict | undefined, at: number): void {
    for (const c of clusters) this.fleet.roll(c, verdict, at);
  }

  revisions(): Record<string, number | undefined> {
    return Object.fromEntries([...this.fleet.spokes].sort(([a], [b]) => (a < b ? -1 : 1)).map(([c, s]) => [c, workRevision(s.work)]));
  }
}

