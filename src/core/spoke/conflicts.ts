// Spoke-local conflicts (docs/design/tenancy.md#local-policies-win): a locally authored policy wins over a synced copy targeting the same
// Gateway (or listener) in the same namespace. The spoke agent reduces its local policies to their Gateway
// targets (localPolicyOf) and reports them (spokereport.ts); the hub weighs them against the copy it would
// place (coverage) and, when they cover it whole, does not place it there. A local policy that its own
// controller rejected covers nothing (rejectedByController). Pure.
import { POLICY_SYNCED_ANNOTATION } from '../metadatakeys.ts';
import { objectKey } from '../k8s/objects.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { GATEWAY_GROUP, GATEWAY_KIND, readTargets } from '../targets/targetrefs.ts';

/** A part of a synced policy's targets that local policies override. */
export interface CoveredTarget {
  /** Gateway name, in the policy's namespace. */
  gateway: string;
  /** The listener covered; absent: the whole Gateway. */
  sectionName?: string;
  /** `namespace/name` of the covering local policies, sorted. */
  by: string[];
}

/**
 * `by`: the covering local policies' `namespace/name`, sorted — what the cluster's status names
 * (ClusterStatus.overriddenBy); the message says the same for people and is never parsed back.
 */
export type ConflictVerdict =
  /** Every target is covered: the local policies are enforced instead of the copy. */
  | { state: 'Overridden'; message: string; by: string[] }
  /** Some targets, or some listeners of a whole-Gateway target, are covered. */
  | { state: 'PartiallyEnforced'; message: string; by: string[]; covered: CoveredTarget[] }
  | { state: 'None' };

/** A Gateway target: the Gateway's name in the policy's own namespace, and the listener if one. */
export interface GatewayTarget {
  gateway: string;
  sectionName?: string;
}

/** A local policy as far as coverage goes: who it is and the Gateways (or listeners) it takes. */
export interface LocalPolicy {
  /** `namespace/name`. */
  key: string;
  targets: GatewayTarget[];
}

/**
 * The local policy `policy` is, for coverage: undefined for a synced copy, a policy being deleted, or
 * one without Gateway targets (it covers nothing).
 */
export function localPolicyOf(policy: KubeObject): LocalPolicy | undefined {
  if (isSynced(policy) || policy.metadata.deletionTimestamp) return undefined;
  const targets = gatewayTargets(policy);
  return targets.length === 0 ? undefined : { key: objectKey(policy), targets };
}

/**
 * GEP-713's reason for a policy that lost to another on the same target. Envoy Gateway lets the older of
 * two win and marks the newer one so — a local policy made after our synced copy among them.
 */
export const CONFLICTED_REASON = 'Conflicted';

/**
 * Whether the policy's own controller rejected it, by the status it wrote (docs/design/status.md#reading-spoke-status):
 * - Kuadrant style, `status.conditions`: Accepted=False;
 * - GEP-713, `status.ancestors[]`: some ancestor entry Accepted=False and none Accepted=True (accepted on
 *   one Gateway, it is in force there).
 * Either shape saying so is enough: a rejected local policy left counting would withdraw the hub's copy
 * and leave its targets with neither policy, the worse mistake of the two.
 *
 * Accepted=False with reason Conflicted is no rejection, and an ancestor entry Conflicted keeps the policy
 * from being rejected: a controller that lets the older policy win (Envoy Gateway) marks a local policy
 * made after the synced copy Conflicted, yet the local one must win (docs/design/tenancy.md#local-policies-win). It has to count so that
 * the hub withdraws the copy; its controller then accepts it.
 *
 * No status, no Accepted condition or an unreadable status: not rejected (a controller that has not
 * spoken has rejected nothing). observedGeneration is not looked at: the controller's latest word stands
 * until it speaks again, which it does for each new generation.
 */
export function rejectedByController(policy: KubeObject): boolean {
  const status = policy.status;
  if (!isRecord(status)) return false;
  if (acceptedOf(status.conditions) === 'rejected') return true;
  if (!Array.isArray(status.ancestors)) return false;
  const verdicts = status.ancestors.map((entry) => (isRecord(entry) ? acceptedOf(entry.conditions) : 'unknown'));
  return verdicts.includes('rejected') && !verdicts.includes('accepted') && !verdicts.includes('conflicted');
}

/** What the Accepted condition of a condition list says. */
function acceptedOf(conditions: unknown): 'accepted' | 'rejected' | 'conflicted' | 'unknown' {
  if (!Array.isArray(conditions)) return 'unknown';
  const accepted = conditions.find((c): c is Record<string, unknown> => isRecord(c) && c.type === 'Accepted');
  if (accepted?.status === 'True') return 'accepted';
  if (accepted?.status !== 'False') return 'unknown';
  return accepted.reason === CONFLICTED_REASON ? 'conflicted' : 'rejected';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * How far `locals` — local policies of the copy's own kind and namespace — cover the copy `copy` of a
 * hub policy. `kind` names the kind in messages.
 */
export function coverage(kind: string, copy: KubeObject, locals: readonly LocalPolicy[]): ConflictVerdict {
  return verdictFor(kind || 'Policy', gatewayTargets(copy), locals);
}

/**
 * A hub policy using GEP-713 `overrides` is not overridden by a local policy (docs/design/tenancy.md#local-policies-win): it is placed
 * whatever the locals, and the spoke's controller says which one is in force.
 */
export function usesOverrides(policy: KubeObject): boolean {
  const spec = policy.spec;
  return spec?.overrides !== undefined && spec.overrides !== null;
}

function verdictFor(kind: string, targets: readonly GatewayTarget[], locals: readonly LocalPolicy[]): ConflictVerdict {
  const covered = new Map<string, CoveredTarget>();
  const cover = (gateway: string, sectionName: string | undefined, by: readonly string[]): void => {
    if (by.length === 0) return;
    const id = targetId({ gateway, sectionName });
    const entry = covered.get(id) ?? (sectionName === undefined ? { gateway, by: [] } : { gateway, sectionName, by: [] });
    entry.by = sortedUnique([...entry.by, ...by]);
    covered.set(id, entry);
  };

  let fullyCovered = 0;
  for (const target of targets) {
    const onGateway = locals.flatMap((local) =>
      local.targets.filter((t) => t.gateway === target.gateway).map((t) => ({ key: local.key, sectionName: t.sectionName })),
    );
    const whole = onGateway.filter((t) => t.sectionName === undefined).map((t) => t.key);
    if (target.sectionName !== undefined) {
      // A listener is covered by a local policy on the whole Gateway or on that listener.
      const by = [...whole, ...onGateway.filter((t) => t.sectionName === target.sectionName).map((t) => t.key)];
      if (by.length > 0) fullyCovered += 1;
      cover(target.gateway, target.sectionName, by);
    } else if (whole.length > 0) {
      fullyCovered += 1;
      cover(target.gateway, undefined, onGateway.map((t) => t.key));
    } else {
      // Local policies on single listeners override only those: the rest of the Gateway keeps the copy.
      for (const t of onGateway) cover(target.gateway, t.sectionName, [t.key]);
    }
  }

  if (covered.size === 0) return { state: 'None' };
  const list = [...covered.values()].sort(compareCovered);
  const by = sortedUnique(list.flatMap((entry) => entry.by));
  if (fullyCovered === targets.length) return { state: 'Overridden', message: overriddenMessage(kind, by), by };
  return { state: 'PartiallyEnforced', message: partialMessage(kind, list), by, covered: list };
}

/** `AuthPolicy is overridden by [ns/l1, ns/l2]` */
function overriddenMessage(kind: string, by: readonly string[]): string {
  return `${kind} is overridden by [${by.join(', ')}]`;
}

/** `AuthPolicy is partially overridden: Gateway a by [ns/l1]; listener "https" of Gateway b by [ns/l2]` */
function partialMessage(kind: string, covered: readonly CoveredTarget[]): string {
  const parts = covered.map((entry) => {
    const where = entry.sectionName === undefined ? `Gateway ${entry.gateway}` : `listener "${entry.sectionName}" of Gateway ${entry.gateway}`;
    return `${where} by [${entry.by.join(', ')}]`;
  });
  return `${kind} is partially overridden: ${parts.join('; ')}`;
}

/** Gateway targets in the policy's own namespace, deduplicated; other kinds and groups are ignored. */
function gatewayTargets(policy: KubeObject): GatewayTarget[] {
  const namespace = policy.metadata.namespace;
  const targets = new Map<string, GatewayTarget>();
  for (const ref of readTargets(policy)) {
    if (ref.group !== GATEWAY_GROUP || ref.kind !== GATEWAY_KIND) continue;
    if (ref.namespace !== undefined && ref.namespace !== namespace) continue;
    const target: GatewayTarget = ref.sectionName === undefined ? { gateway: ref.name } : { gateway: ref.name, sectionName: ref.sectionName };
    targets.set(targetId(target), target);
  }
  return [...targets.values()];
}

function isSynced(policy: KubeObject): boolean {
  return policy.metadata.annotations?.[POLICY_SYNCED_ANNOTATION] !== undefined;
}

function targetId(target: { gateway: string; sectionName?: string | undefined }): string {
  return JSON.stringify([target.gateway, target.sectionName ?? null]);
}

/** By Gateway, the whole Gateway before its listeners, listeners by name. */
function compareCovered(a: CoveredTarget, b: CoveredTarget): number {
  if (a.gateway !== b.gateway) return compareStrings(a.gateway, b.gateway);
  if (a.sectionName === undefined || b.sectionName === undefined) {
    return a.sectionName === b.sectionName ? 0 : a.sectionName === undefined ? -1 : 1;
  }
  return compareStrings(a.sectionName, b.sectionName);
}

function sortedUnique(values: readonly string[]): string[] {
  return [...new Set(values)].sort(compareStrings);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
