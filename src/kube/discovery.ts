// What the apiserver serves and allows, for validating `policiesToSync` entries (docs/design/configuration.md#params-validation):
// discovery of a group/version, the CRD's openAPIV3Schema, and SelfSubjectAccessReview.
import type { GroupVersionResource } from '../core/k8s/gvr.ts';
import { isNotFound, type KubeHttp } from './http.ts';
import { RESOURCES, collectionPath, groupVersionPath, objectPath } from './resource.ts';

export interface ServedResource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

interface ApiResourceList {
  resources: ServedResource[];
}

/** The resource as served, or undefined when the group/version does not exist or lacks it. */
export async function findServedResource(http: KubeHttp, gvr: GroupVersionResource): Promise<ServedResource | undefined> {
  try {
    const list = await http.request<ApiResourceList>('GET', groupVersionPath(gvr));
    return list.resources.find((r) => r.name === gvr.resource);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

interface CrdVersion {
  name: string;
  schema?: { openAPIV3Schema?: JsonSchema };
  subresources?: { status?: unknown };
}
export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
}

/** What the controller reads of a CustomResourceDefinition. */
export interface CrdInfo {
  uid: string;
  terminating: boolean;
  versions: CrdVersion[];
}

/**
 * The CRD `<resource>.<group>` (read raw: client-node's typed model renames `x-kubernetes-*` keys);
 * undefined when there is no such CRD (e.g. a built-in resource).
 */
export async function readCrd(http: KubeHttp, gr: { group: string; resource: string }, signal?: AbortSignal): Promise<CrdInfo | undefined> {
  if (gr.group === '') return undefined;
  try {
    const crd = await http.request<{ metadata: { uid: string; deletionTimestamp?: string }; spec: { versions: CrdVersion[] } }>(
      'GET',
      objectPath(RESOURCES.crds, undefined, `${gr.resource}.${gr.group}`),
      { signal },
    );
    return { uid: crd.metadata.uid, terminating: crd.metadata.deletionTimestamp !== undefined, versions: crd.spec.versions };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Whether `version` of a CRD has the status subresource (its status is written apart from the rest). */
export function crdVersionHasStatus(crd: CrdInfo | undefined, version: string): boolean {
  return crd?.versions.find((v) => v.name === version)?.subresources?.status !== undefined;
}

/** The openAPIV3Schema of `version` in a CRD. */
export function crdVersionSchema(crd: CrdInfo | undefined, version: string): JsonSchema | undefined {
  return crd?.versions.find((v) => v.name === version)?.schema?.openAPIV3Schema;
}

/** A GEP-713 policy: `spec.targetRef` (object) or `spec.targetRefs` (array) in its schema. */
export function schemaIsPolicy(schema: JsonSchema | undefined): boolean {
  const spec = schema?.properties?.spec?.properties;
  return spec?.targetRef?.type === 'object' || spec?.targetRefs?.type === 'array';
}

/**
 * Where a policy's controller says which generation of it it observed — the three places the Progressive
 * rollout judges a verdict by (core/rollout/plan.ts judgedRevision): at status level, on its conditions
 * (Enforced), on its GEP-713 ancestors' conditions.
 */
export const OBSERVED_GENERATION_PATHS: readonly (readonly string[])[] = [
  ['status', 'observedGeneration'],
  ['status', 'conditions', '[]', 'observedGeneration'],
  ['status', 'ancestors', '[]', 'conditions', '[]', 'observedGeneration'],
];

/** The field paths of OBSERVED_GENERATION_PATHS as a person reads them (`status.conditions[].observedGeneration`). */
export const OBSERVED_GENERATION_FIELDS: readonly string[] = OBSERVED_GENERATION_PATHS.map((p) => p.join('.').replaceAll('.[]', '[]'));

/**
 * Whether a kind's schema lets its controller say which generation it observed: true when it has one of
 * OBSERVED_GENERATION_PATHS; false when it has none and keeps no unknown field on the way to them (the
 * apiserver prunes what a controller would write there); undefined when it cannot tell (no schema, or a
 * part of the way kept open: x-kubernetes-preserve-unknown-fields, a map).
 */
export function schemaHasObservedGeneration(schema: JsonSchema | undefined): boolean | undefined {
  const found = OBSERVED_GENERATION_PATHS.map((path) => reach(schema, path));
  if (found.includes('yes')) return true;
  return found.includes('open') ? undefined : false;
}

function reach(schema: JsonSchema | undefined, path: readonly string[]): 'yes' | 'no' | 'open' {
  let node = schema;
  for (const step of path) {
    if (node === undefined || node['x-kubernetes-preserve-unknown-fields'] === true) return 'open';
    if (step === '[]') {
      if (node.items !== undefined) node = node.items;
      else return node.type === 'array' ? 'open' : 'no';
      continue;
    }
    const next = node.properties?.[step];
    if (next !== undefined) node = next;
    else if (node.additionalProperties !== undefined && node.additionalProperties !== false) return 'open';
    // A structural schema that lists neither the field nor keeps unknown ones prunes it; one that
    // describes no structure at all (no type) says nothing.
    else return node.type === undefined && node.properties === undefined ? 'open' : 'no';
  }
  return 'yes';
}

/** Whether this client may perform every verb on the resource in all namespaces. */
export async function canI(http: KubeHttp, gvr: GroupVersionResource, verbs: string[]): Promise<boolean> {
  const results = await Promise.all(
    verbs.map((verb) =>
      http.request<{ status?: { allowed?: boolean } }>('POST', collectionPath(RESOURCES.selfSubjectAccessReviews), {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { group: gvr.group, version: gvr.version, resource: gvr.resource, verb } },
        },
      }),
    ),
  );
  return results.every((r) => r.status?.allowed === true);
}
