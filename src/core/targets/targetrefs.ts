// GEP-713 policy targets: reading `spec.targetRef` / `spec.targetRefs`, deciding which can be
// synced, and rewriting them for a spoke copy.
import type { KubeObject } from '../k8s/objects.ts';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';
export const GATEWAY_KIND = 'Gateway';

export interface PolicyTargetRef {
  group: string;
  kind: string;
  name: string;
  namespace?: string;
  sectionName?: string;
}

export interface GatewayRef {
  namespace: string;
  name: string;
}

/**
 * One target as written in the policy. `path` (`spec.targetRef`, `spec.targetRefs[2]`) identifies
 * it; malformed entries carry an error instead of a ref.
 */
export type TargetEntry = { path: string; ref: PolicyTargetRef } | { path: string; error: string };

export type TargetRejectReason = 'CrossNamespace' | 'NotAGateway' | 'GatewayNotManaged' | 'Invalid';

export type TargetClassification =
  | { path: string; target: PolicyTargetRef; state: 'syncable'; gateway: GatewayRef; sectionName?: string }
  | { path: string; target?: PolicyTargetRef; state: 'rejected'; reason: TargetRejectReason; message: string };

/** Every target entry of the policy, well-formed or not, in spec order (targetRef first). */
export function readTargetEntries(policy: KubeObject): TargetEntry[] {
  const spec = policy.spec ?? {};
  const entries: TargetEntry[] = [];
  if (spec.targetRef !== undefined && spec.targetRef !== null) entries.push(readEntry('spec.targetRef', spec.targetRef));
  if (spec.targetRefs !== undefined && spec.targetRefs !== null) {
    if (Array.isArray(spec.targetRefs)) {
      spec.targetRefs.forEach((raw: unknown, index) => entries.push(readEntry(`spec.targetRefs[${index}]`, raw)));
    } else {
      entries.push({ path: 'spec.targetRefs', error: 'must be a list' });
    }
  }
  return entries;
}

/** The well-formed targets of the policy, in spec order. */
export function readTargets(policy: KubeObject): PolicyTargetRef[] {
  return readTargetEntries(policy).flatMap((entry) => ('ref' in entry ? [entry.ref] : []));
}

function readEntry(path: string, raw: unknown): TargetEntry {
  if (!isRecord(raw)) return { path, error: 'must be an object' };
  const { group, kind, name, namespace, sectionName } = raw;
  if (typeof group !== 'string') return { path, error: 'group must be a string' };
  if (typeof kind !== 'string' || kind === '') return { path, error: 'kind is required' };
  if (typeof name !== 'string' || name === '') return { path, error: 'name is required' };
  if (namespace !== undefined && namespace !== null && typeof namespace !== 'string') {
    return { path, error: 'namespace must be a string' };
  }
  if (sectionName !== undefined && sectionName !== null && typeof sectionName !== 'string') {
    return { path, error: 'sectionName must be a string' };
  }
  const ref: PolicyTargetRef = { group, kind, name };
  if (namespace) ref.namespace = namespace;
  if (sectionName) ref.sectionName = sectionName;
  return { path, ref };
}

/** Decides for each target whether it can be synced (docs/design/configuration.md#which-targets-are-synced). */
export function classifyTargets(
  policy: KubeObject,
  isManagedGateway: (namespace: string, name: string) => boolean,
): TargetClassification[] {
  const policyNamespace = policy.metadata.namespace;
  return readTargetEntries(policy).map((entry): TargetClassification => {
    const { path } = entry;
    if (!('ref' in entry)) return { path, state: 'rejected', reason: 'Invalid', message: `${path}: ${entry.error}` };
    const target = entry.ref;
    if (!policyNamespace) {
      return { path, target, state: 'rejected', reason: 'Invalid', message: 'the policy has no namespace' };
    }
    if (target.group !== GATEWAY_GROUP || target.kind !== GATEWAY_KIND) {
      const group = target.group === '' ? 'core' : target.group;
      return {
        path,
        target,
        state: 'rejected',
        reason: 'NotAGateway',
        message: `${target.kind} ${target.name} (group ${group}) is not a Gateway; only ${GATEWAY_KIND}.${GATEWAY_GROUP} targets are synced`,
      };
    }
    if (target.namespace !== undefined && target.namespace !== policyNamespace) {
      return {
        path,
        target,
        state: 'rejected',
        reason: 'CrossNamespace',
        message: `Gateway ${target.namespace}/${target.name} is not in the policy's namespace ${policyNamespace}; cross-namespace targets are not supported`,
      };
    }
    const gateway = { namespace: policyNamespace, name: target.name };
    if (!isManagedGateway(gateway.namespace, gateway.name)) {
      return {
        path,
        target,
        state: 'rejected',
        reason: 'GatewayNotManaged',
        message: `Gateway ${gateway.namespace}/${gateway.name} does not exist or its GatewayClass is not managed by policy-sync`,
      };
    }
    const syncable: TargetClassification = { path, target, state: 'syncable', gateway };
    if (target.sectionName !== undefined) syncable.sectionName = target.sectionName;
    return syncable;
  });
}

/**
 * The policy's spec for one cluster's copy: only the targets at the given paths remain, each
 * renamed to its downstream Gateway, `namespace` dropped (the copy lives in the downstream
 * namespace), `sectionName` and any other fields kept. `targetRef` stays an object (removed when
 * not kept) and `targetRefs` stays a list (removed when it is not one). The input is not modified.
 */
export function rewriteTargets(
  policy: KubeObject,
  targetsForCluster: readonly { path: string }[],
  downstreamName: (target: PolicyTargetRef) => string,
): Record<string, unknown> {
  const keep = new Set(targetsForCluster.map((target) => target.path));
  const refs = new Map<string, PolicyTargetRef>();
  for (const entry of readTargetEntries(policy)) if ('ref' in entry) refs.set(entry.path, entry.ref);

  const rewrite = (path: string, raw: unknown): Record<string, unknown>[] => {
    const ref = refs.get(path);
    if (!keep.has(path) || ref === undefined || !isRecord(raw)) return [];
    const { namespace: _namespace, ...rest } = raw;
    return [{ ...rest, name: downstreamName(ref) }];
  };

  const spec = structuredClone(policy.spec ?? {});
  if ('targetRef' in spec) {
    const [kept] = rewrite('spec.targetRef', spec.targetRef);
    if (kept) spec.targetRef = kept;
    else delete spec.targetRef;
  }
  if (Array.isArray(spec.targetRefs)) {
    spec.targetRefs = spec.targetRefs.flatMap((raw: unknown, index) => rewrite(`spec.targetRefs[${index}]`, raw));
  } else if ('targetRefs' in spec) {
    // Not a list: none of it is read as a target, so none of it may reach the copy (verbatim, it would name the
    // hub Gateway, and its namespace, on the spoke).
    delete spec.targetRefs;
  }
  return spec;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
