// A GatewayClass's params (docs/design/configuration.md#gatewayclass-params, #params-validation): which object its parametersRef names, the params document
// that object holds, and the conditions reporting both and the validation of each policy kind.
import type { Condition } from '../k8s/conditions.ts';
import { groupResourceKey, gvrKey, type GroupVersionResource } from '../k8s/gvr.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { parseParams, parseParamsJson, type ParamsResult } from './params.ts';

export const POLICIES_SYNCED = 'PoliciesSynced';
export const ACCEPTED = 'Accepted';
export const PARAMS_GROUP = 'policysync.kuadrant.io';

export type ParamsObjectKind = 'ConfigMap' | 'PolicySyncParams';

export type ParamsRefResult =
  | { ok: true; ref: { kind: ParamsObjectKind; namespace: string; name: string } }
  | { ok: false; error: string };

/** Reads `spec.parametersRef` of a GatewayClass. */
export function readParamsRef(gatewayClass: KubeObject): ParamsRefResult {
  const ref = (gatewayClass.spec as { parametersRef?: Record<string, unknown> } | undefined)?.parametersRef;
  if (!ref) return { ok: false, error: 'spec.parametersRef is required: it names the params (a ConfigMap or a PolicySyncParams)' };
  const { group, kind, name, namespace } = ref;
  const g = typeof group === 'string' ? group : '';
  if (typeof name !== 'string' || name === '') return { ok: false, error: 'spec.parametersRef.name is required' };
  if (typeof namespace !== 'string' || namespace === '') return { ok: false, error: 'spec.parametersRef.namespace is required' };
  if (g === '' && kind === 'ConfigMap') return { ok: true, ref: { kind: 'ConfigMap', namespace, name } };
  if (g === PARAMS_GROUP && kind === 'PolicySyncParams') return { ok: true, ref: { kind: 'PolicySyncParams', namespace, name } };
  return {
    ok: false,
    error: `spec.parametersRef: unsupported ${String(kind)} of group "${g}" (use a ConfigMap, or a PolicySyncParams of group ${PARAMS_GROUP})`,
  };
}

/** Parses the params document held by the referenced object. */
export function parseParamsObject(kind: ParamsObjectKind, object: KubeObject): ParamsResult {
  if (kind === 'PolicySyncParams') return parseParams(object.spec ?? {});
  const text = (object.data as Record<string, unknown> | undefined)?.params;
  if (typeof text !== 'string') {
    return { ok: false, errors: [`ConfigMap ${object.metadata.namespace}/${object.metadata.name} has no key "params"`] };
  }
  return parseParamsJson(text);
}

/** Why a kind is not synced: not served, not a GEP-713 policy, not allowed, or the check itself failed. */
export type KindProblem = 'NotFound' | 'NotAPolicy' | 'Forbidden' | 'CheckFailed';

export interface KindCheck {
  gvr: GroupVersionResource;
  problem?: KindProblem;
  /** The version whose earlier, good validation stays in force despite the problem (docs/design/deletion.md#never-delete-on-doubt). */
  keptVersion?: string;
}

/** The result of validating one `policiesToSync` entry against the apiserver. */
export interface KindValidation<Good> {
  gvr: GroupVersionResource;
  problem?: KindProblem;
  /** What a valid kind puts in force (absent when there is a problem). */
  good?: Good;
}

/**
 * The kinds in force for a class after validating its (valid) params, by `resource.group`: each entry that
 * validated; and each that failed but was in force before (same group+resource, any version) keeps its
 * last good entry — a transient failure (RBAC gap, CRD re-installed, discovery error) must not remove a
 * kind; only an edit of valid params does (docs/design/deletion.md#never-delete-on-doubt). Also the per-entry report for the class status.
 */
export function kindsInForce<Good extends { gvr: GroupVersionResource }>(
  previous: ReadonlyMap<string, Good> | undefined,
  validations: readonly KindValidation<Good>[],
): { inForce: Map<string, Good>; checks: KindCheck[] } {
  const inForce = new Map<string, Good>();
  const checks = validations.map((v): KindCheck => {
    const key = groupResourceKey(v.gvr);
    if (!v.problem && v.good) {
      inForce.set(key, v.good);
      return { gvr: v.gvr };
    }
    const lastGood = previous?.get(key);
    if (lastGood) inForce.set(key, lastGood);
    return { gvr: v.gvr, problem: v.problem ?? 'CheckFailed', ...(lastGood ? { keptVersion: lastGood.gvr.version } : {}) };
  });
  return { inForce, checks };
}

/** One line of the PoliciesSynced message for a kind with a problem. */
export function kindProblemLine(k: KindCheck): string {
  const kept = k.keptVersion === undefined ? '' : ` (the last good configuration, version ${k.keptVersion}, stays in force)`;
  return `${gvrKey(k.gvr)}: ${k.problem ?? 'OK'}${kept}`;
}

/** The `Accepted` and `PoliciesSynced` conditions of an owned GatewayClass. */
export function classConditions(input: {
  generation: number | undefined;
  /** Errors that made the params unusable (missing, unreadable, not JSON, schema). */
  paramsErrors: string[];
  /** Whether an earlier valid configuration is still being used. */
  keepingLastGood: boolean;
  /** Validation of each policy kind; empty when the params are invalid. */
  kinds: KindCheck[];
}): Condition[] {
  const observedGeneration = input.generation;
  const accepted: Condition =
    input.paramsErrors.length === 0
      ? { type: ACCEPTED, status: 'True', reason: 'Accepted', message: 'params are valid', observedGeneration }
      : {
          type: ACCEPTED,
          status: 'False',
          reason: 'InvalidParameters',
          message:
            input.paramsErrors.join('; ') +
            (input.keepingLastGood
              ? '; the last valid configuration stays in force'
              : '; nothing is synced until the params are valid, and existing ManifestWorks are kept'),
          observedGeneration,
        };
  if (input.paramsErrors.length > 0) {
    return [
      accepted,
      {
        type: POLICIES_SYNCED,
        status: 'False',
        reason: 'InvalidParameters',
        message: input.keepingLastGood ? 'params are invalid; the last valid configuration stays in force' : 'params are invalid',
        observedGeneration,
      },
    ];
  }
  const bad = input.kinds.filter((k) => k.problem !== undefined);
  const synced: Condition =
    bad.length === 0
      ? { type: POLICIES_SYNCED, status: 'True', reason: 'AllKindsValid', message: `${input.kinds.length} policy kinds synced`, observedGeneration }
      : {
          type: POLICIES_SYNCED,
          status: 'False',
          reason: 'InvalidPolicyKinds',
          message: bad.map(kindProblemLine).join('\n'),
          observedGeneration,
        };
  return [accepted, synced];
}

/** The class condition saying whether its Progressive rolloutStrategy can gate on every kind it syncs. */
export const PROGRESSIVE_ROLLOUT_READY = 'ProgressiveRolloutReady';

/** The fields where a controller says which generation of a policy it observed (kube/discovery.ts OBSERVED_GENERATION_PATHS). */
export const OBSERVED_GENERATION_TEXT = 'status.observedGeneration, status.conditions[].observedGeneration or status.ancestors[].conditions[].observedGeneration';

/**
 * `ProgressiveRolloutReady` of a class whose rolloutStrategy is Progressive: True when every kind it syncs
 * can be gated on, False (`NoObservedGeneration`) naming the kinds whose CRD, in the version synced, has no
 * field where their controller could say which generation it observed — no cluster's verdict is then ever
 * known to be about the revision it runs, and each fails at progressDeadline. Those kinds are synced all
 * the same. A class rolling out All has no such condition.
 */
export function progressiveRolloutCondition(input: { generation: number | undefined; ungated: readonly string[] }): Condition {
  const observedGeneration = input.generation;
  if (input.ungated.length === 0) {
    return { type: PROGRESSIVE_ROLLOUT_READY, status: 'True', reason: 'GenerationsReported', message: 'the Progressive rolloutStrategy can gate on every synced kind: each one\'s CRD lets its controller say which generation it observed', observedGeneration };
  }
  const kinds = [...input.ungated].sort();
  const their = kinds.length === 1 ? 'its CRD has' : 'their CRDs have';
  return {
    type: PROGRESSIVE_ROLLOUT_READY,
    status: 'False',
    reason: 'NoObservedGeneration',
    message:
      `under the Progressive rolloutStrategy no cluster can succeed for ${kinds.join(', ')}: ${their} no ${OBSERVED_GENERATION_TEXT}, ` +
      'so no verdict of the controller is known to be about the revision a cluster runs, and each cluster fails at progressDeadline. ' +
      'They are synced all the same; roll their policies out All (the annotation policysync.kuadrant.io/rollout-strategy: All)',
    observedGeneration,
  };
}

/** The GatewayClass names this controller (its spec.controllerName): its Gateways and params are ours. */
export function ownsClass(gatewayClass: KubeObject | undefined, controllerName: string): boolean {
  return (gatewayClass?.spec as { controllerName?: unknown } | undefined)?.controllerName === controllerName;
}
