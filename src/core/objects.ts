// Minimal shapes of Kubernetes objects as the core sees them: plain JSON-like values.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** RFC 3339 string from raw JSON, or a Date from @kubernetes/client-node. */
  creationTimestamp?: string | Date;
  deletionTimestamp?: string | Date;
  resourceVersion?: string;
  generation?: number;
  ownerReferences?: unknown[];
  finalizers?: string[];
  managedFields?: unknown[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: unknown;
  [key: string]: unknown;
}

/** The cache key of an object: `namespace/name`, or `name` when cluster-scoped. */
export function objectKey(object: { metadata: Pick<ObjectMeta, 'name' | 'namespace'> }): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${namespace}/${name}` : name;
}
