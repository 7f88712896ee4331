// Parsers for numeric command-line options, failing with the option's name.
import { InvalidArgumentError } from 'commander';

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`expected a positive integer, got "${value}"`);
  return n;
}

export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`expected a positive number, got "${value}"`);
  return n;
}

export interface NamespacedName {
  namespace: string;
  name: string;
}

export function namespacedName(value: string): NamespacedName {
  const [namespace, name, ...rest] = value.split('/');
  if (!namespace || !name || rest.length > 0) throw new InvalidArgumentError(`expected <namespace>/<name>, got "${value}"`);
  return { namespace, name };
}
