// Go-style durations for flags (`15s`, `500ms`, `1m30s`), as milliseconds.
import { InvalidArgumentError } from 'commander';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function duration(value: string): number {
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) {
    throw new InvalidArgumentError(`expected a duration such as 15s, 500ms or 1m30s, got "${value}"`);
  }
  return parts.reduce((ms, p) => ms + Number(p[1]) * UNITS[p[2]!]!, 0);
}

/**
 * A duration longer than zero, or — for a flag that once took milliseconds (`--status-coalesce 200`) — a
 * bare positive integer, read as milliseconds.
 */
export function positiveDurationOrMs(value: string): number {
  const ms = /^\d+$/.test(value) ? Number(value) : duration(value);
  if (ms <= 0) throw new InvalidArgumentError(`expected a duration longer than zero such as 200ms or 1s, got "${value}"`);
  return ms;
}
