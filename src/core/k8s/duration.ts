// Go-style durations (`15s`, `500ms`, `1m30s`) as milliseconds: the form Kubernetes and OCM users write
// (OCM's rollout strategy, controller flags).

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** The duration in milliseconds; undefined when `value` is not one (`0` alone is zero). */
export function parseDuration(value: string): number | undefined {
  if (value === '0') return 0;
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) return undefined;
  return parts.reduce((ms, p) => ms + Number(p[1]) * UNITS[p[2]!]!, 0);
}

/** `1m30s`, `45s`, `250ms`: the shortest Go-style form of a whole number of milliseconds. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = Math.round(ms);
  let out = '';
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000], ['ms', 1]] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out;
}
