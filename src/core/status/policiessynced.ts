// The RFC's `kuadrant.io/policies-synced` annotation value on the hub policy.

export interface PolicySyncedEntry {
  cluster: string;
  name: string;
  namespace: string;
}

/**
 * Past this many bytes the list names the clusters that fit, the first by name. An object's annotations may hold
 * 256 KiB in all (the apiserver refuses the write past that, status and all); an entry is ~75 bytes, so 3,500
 * clusters alone would take them all. With the status annotation's 64 KiB, 192 KiB of ours leave the rest to the
 * policy's own. About 1,700 clusters of the bench's names fit; the status annotation's summary counts them all.
 */
export const MAX_POLICIES_SYNCED_BYTES = 128 * 1024;

/**
 * `[{"cluster":"c1","name":"p","namespace":"ns"}]`: sorted by cluster, then namespace, then name,
 * duplicates removed, so the value only changes when placement does; cut to MAX_POLICIES_SYNCED_BYTES.
 * An empty list yields undefined: the annotation is removed.
 */
export function policiesSyncedAnnotation(entries: readonly PolicySyncedEntry[]): string | undefined {
  if (entries.length === 0) return undefined;
  const unique = new Map<string, PolicySyncedEntry>();
  for (const { cluster, name, namespace } of entries) unique.set(JSON.stringify([cluster, namespace, name]), { cluster, name, namespace });
  const sorted = [...unique.values()].sort(
    (a, b) => compare(a.cluster, b.cluster) || compare(a.namespace, b.namespace) || compare(a.name, b.name),
  );
  // Each entry's canonical JSON, its keys in sorted order; the list is `[` the entries comma-separated `]`, cut
  // where the next entry would pass the budget (counted, not made per try: thousands of entries each reconcile).
  const texts: string[] = [];
  let size = 2;
  for (const { cluster, name, namespace } of sorted) {
    const text = JSON.stringify({ cluster, name, namespace });
    const bytes = Buffer.byteLength(text, 'utf8') + (texts.length > 0 ? 1 : 0);
    if (size + bytes > MAX_POLICIES_SYNCED_BYTES) break;
    size += bytes;
    texts.push(text);
  }
  return `[${texts.join(',')}]`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
