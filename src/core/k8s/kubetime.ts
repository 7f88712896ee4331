// Kubernetes timestamps arrive as RFC 3339 strings from raw JSON but as Date objects from
// @kubernetes/client-node; both must produce the same text, or hashes and diffs flap.

/**
 * Formats a metav1.Time value (string or Date) the way the apiserver serialises it:
 * RFC 3339 in UTC at second precision, e.g. `2024-05-01T10:00:00Z`.
 * Returns undefined for absent or unparsable values.
 */
export function formatKubeTime(value: unknown): string | undefined {
  const millis = kubeTimeMillis(value);
  if (millis === undefined) return undefined;
  return new Date(millis).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Milliseconds since the epoch of a metav1.Time value (string or Date); undefined when absent or unparsable. */
export function kubeTimeMillis(value: unknown): number | undefined {
  let millis: number;
  if (value instanceof Date) millis = value.getTime();
  else if (typeof value === 'string' && value !== '') millis = Date.parse(value);
  else return undefined;
  return Number.isNaN(millis) ? undefined : millis;
}
