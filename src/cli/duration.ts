// Go-style durations for flags (`15s`, `500ms`, `1m30s`), as milliseconds.
import { InvalidArgumentError } from 'commander';
import { parseDuration } from '../core/k8s/duration.ts';

export function duration(value: string): number {
  const ms = value === '0' ? undefined : parseDuration(value);
  if (ms === undefined) throw new InvalidArgumentError(`expected a duration such as 15s, 500ms or 1m30s, got "${value}"`);
  return ms;
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
