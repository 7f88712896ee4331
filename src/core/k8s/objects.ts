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
  return namespacedKey(object.metadata.namespace ?? '', object.metadata.name);
}

/** The cache key of `name` in `namespace` (`name` alone when the namespace is empty: cluster-scoped). */
export function namespacedKey(namespace: string, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** A cache key's namespace (empty when cluster-scoped) and name; the name may itself hold slashes. */
export function splitObjectKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * The two versions of an object differ in nothing but the given annotations (and what every write
 * changes: resourceVersion, managedFields). A false "no" is safe for callers (they look again); a key
 * order the apiserver changed between two versions gives one.
 */
export function differsOnlyInAnnotations(a: KubeObject, b: KubeObject, keys: readonly string[]): boolean {
  const rest = (o: KubeObject): string => {
    const { resourceVersion: _rv, managedFields: _mf, annotations, ...metadata } = o.metadata;
    const kept = Object.entries(annotations ?? {}).filter(([k]) => !keys.includes(k));
    return JSON.stringify([{ ...o, metadata }, kept]);
  };
  return rest(a) === rest(b);
}
