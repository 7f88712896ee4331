// The PolicyVariants of a `policy-sync diff -f` file (docs/concepts/variants.md): each as it would be once
// applied (its namespace, the generation the apiserver would give it), the policy it targets checked before the
// hub's decisions are run, and the hub's variants with the file's in place of the hub's of the same
// namespace/name. The rendering itself is the decision pipeline's (core/pipeline/policypipeline.ts): nothing of
// it is here.
import { canonicalJson } from '../core/k8s/canonical.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { namespacedKey } from '../core/k8s/objects.ts';
import { POLICY_VARIANT_KIND, POLICY_VARIANTS } from '../core/variants/policyvariant.ts';
import type { KubeHttp } from '../kube/http.ts';
import { RESOURCES } from '../kube/resource.ts';
import { getObject } from '../kube/writes.ts';
import { CliError } from './common.ts';
import type { SyncedKind, SyncedKinds } from './status.ts';

/** How a file's object relates to the hub's of the same namespace and name. */
export type ObjectChange = 'new' | 'spec' | 'metadata';

/** A policy a variant targets: the variant's namespace, the kind its targetRef names, the name. */
export interface VariantTarget {
  kind: SyncedKind;
  name: string;
}

export interface FileVariant {
  /** As it would be once applied: namespace set, the generation the apiserver would give it, no status. */
  object: KubeObject;
  /** Where in the file (for errors that name it). */
  where: string;
  namespace: string;
  change: ObjectChange;
  target: VariantTarget;
  /** The policy the hub's version of the variant targets, when it is another one: its copies change too. */
  formerTarget?: VariantTarget;
}

/** A PolicyVariant of ours (group policysync.kuadrant.io), whatever its version. */
export function isVariantDocument(object: KubeObject): boolean {
  const slash = object.apiVersion.indexOf('/');
  return object.kind === POLICY_VARIANT_KIND && slash >= 0 && object.apiVersion.slice(0, slash) === POLICY_VARIANTS.group;
}

interface TargetRef {
  group: string;
  kind: string;
  name: string;
}

function readTargetRef(object: KubeObject): TargetRef | { field: string; message: string } {
  const ref = (object.spec as { targetRef?: unknown } | undefined)?.targetRef;
  if (ref === null || typeof ref !== 'object' || Array.isArray(ref)) return { field: 'spec.targetRef', message: 'required: the hub policy the variant changes (group, kind, name)' };
  const { group, kind, name } = ref as Record<string, unknown>;
  if (group !== undefined && typeof group !== 'string') return { field: 'spec.targetRef.group', message: 'must be a string' };
  if (typeof kind !== 'string' || kind === '') return { field: 'spec.targetRef.kind', message: 'required' };
  if (typeof name !== 'string' || name === '') return { field: 'spec.targetRef.name', message: 'required' };
  return { group: group ?? '', kind, name };
}

function syncedTarget(synced: SyncedKinds, ref: TargetRef): SyncedKind | undefined {
  return synced.kinds.find((k) => k.group === ref.group && k.kind === ref.kind);
}

/**
 * The file's variant as it would be once applied, its target a policy of a synced kind (CliError naming the
 * field otherwise; whether the policy exists is checked by the caller, which also knows the file's policies).
 */
export async function readFileVariant(http: KubeHttp, synced: SyncedKinds, controllerName: string, doc: { object: KubeObject; where: string }, defaultNamespace: string): Promise<FileVariant> {
  const { object, where } = doc;
  const ref = readTargetRef(object);
  if ('field' in ref) throw new CliError(`${where}: ${ref.field}: ${ref.message}`);
  const kind = syncedTarget(synced, ref);
  if (!kind) {
    const list = synced.kinds.length === 0 ? 'none' : synced.kinds.map((k) => `${k.kind} (${k.group})`).join(', ');
    throw new CliError(`${where}: spec.targetRef.kind: ${ref.kind} of group "${ref.group}" is not a policy kind synced by ${controllerName} (synced: ${list}): the variant would change no copy`);
  }
  const namespace = object.metadata.namespace ?? defaultNamespace;
  const live = await getObject(http, RESOURCES.policyVariants, namespace, object.metadata.name);
  const specChanged = live === undefined || canonicalJson(object.spec ?? {}) !== canonicalJson(live.spec ?? {});
  const liveGeneration = typeof live?.metadata.generation === 'number' ? live.metadata.generation : undefined;
  const generation = live === undefined ? 1 : specChanged ? (liveGeneration ?? 0) + 1 : (liveGeneration ?? 1);
  const { status: _status, ...rest } = object;
  const formerRef = live ? readTargetRef(live) : undefined;
  const formerKind = formerRef && !('field' in formerRef) ? syncedTarget(synced, formerRef) : undefined;
  const moved = formerRef && !('field' in formerRef) && formerKind && (formerKind !== kind || formerRef.name !== ref.name);
  return {
    object: { ...rest, metadata: { ...object.metadata, namespace, generation } },
    where,
    namespace,
    change: live === undefined ? 'new' : specChanged ? 'spec' : 'metadata',
    target: { kind, name: ref.name },
    ...(moved ? { formerTarget: { kind: formerKind, name: formerRef.name } } : {}),
  };
}

/** The hub's variants with the file's in place of the hub's of the same namespace and name (or added). */
export function variantsWith(hub: readonly KubeObject[], file: readonly FileVariant[]): KubeObject[] {
  const replaced = new Set(file.map((v) => namespacedKey(v.namespace, v.object.metadata.name)));
  return [...hub.filter((v) => !replaced.has(namespacedKey(v.metadata.namespace ?? '', v.metadata.name))), ...file.map((v) => v.object)];
}

/** A variant of a previewed policy, and whether it is the file's. */
export interface PreviewVariant {
  name: string;
  generation: number;
  /** The file's variant, and how it differs from the hub's; absent: the hub's, as it is. */
  change?: ObjectChange;
}

/** The variants among `variants` that target the policy (its namespace, group, kind and name), by name. */
export function variantsTargeting(variants: readonly KubeObject[], file: readonly FileVariant[], policy: { group: string; kind: string; namespace: string; name: string }): PreviewVariant[] {
  const fromFile = new Map(file.map((v) => [namespacedKey(v.namespace, v.object.metadata.name), v]));
  return variants
    .filter((v) => {
      const ref = readTargetRef(v);
      return (v.metadata.namespace ?? '') === policy.namespace && !('field' in ref) && ref.group === policy.group && ref.kind === policy.kind && ref.name === policy.name;
    })
    .map((v): PreviewVariant => {
      const mine = fromFile.get(namespacedKey(v.metadata.namespace ?? '', v.metadata.name));
      return { name: v.metadata.name, generation: v.metadata.generation ?? 0, ...(mine && mine.object === v ? { change: mine.change } : {}) };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
