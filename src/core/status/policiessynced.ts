// The RFC's `kuadrant.io/policies-synced` annotation value on the hub policy.
import { canonicalJson } from '../k8s/canonical.ts';

export interface PolicySyncedEntry {
  cluster: string;
  name: string;
  namespace: string;
}

/**
 * `[{"cluster":"c1","name":"p","namespace":"ns"}]`: sorted by cluster, then namespace, then name,
 * duplicates removed, so the value only changes when placement does.
 * An empty list yields undefined: the annotation is removed.
 */
export function policiesSyncedAnnotation(entries: readonly PolicySyncedEntry[]): string | undefined {
  if (entries.length === 0) return undefined;
  const unique = new Map<string, PolicySyncedEntry>();
  for (const { cluster, name, namespace } of entries) {
    unique.set(canonicalJson([cluster, namespace, name]), { cluster, name, namespace });
  }
  const sorted = [...unique.values()].sort(
    (a, b) => compare(a.cluster, b.cluster) || compare(a.namespace, b.namespace) || compare(a.name, b.name),
  );
  return canonicalJson(sorted);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
