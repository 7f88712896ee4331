// Deterministic JSON for hashing and for annotation values: unordered output causes write loops.
import { createHash } from 'node:crypto';
import { deepFreeze } from './freeze.ts';

/**
 * JSON with object keys sorted (by UTF-16 code units) at every level; arrays keep their order.
 * Dates become ISO strings; undefined object members are dropped and undefined array items
 * become null, as JSON.stringify does. With `indent` (spaces), laid out as JSON.stringify's
 * `space` argument lays it out, for people to read: the one serialiser for hashes, annotation
 * values and the CLI's JSON alike, so each shows the same order.
 */
export function canonicalJson(value: unknown, indent = 0): string {
  return serialize(value, indent > 0 ? ' '.repeat(indent) : '', '') ?? 'null';
}

/**
 * A value many hashed objects hold alike (a kind's feedback rules, in every work of it), deep-frozen and
 * serialised once: the compact canonical JSON of anything holding it reads its text from here. Only values
 * passed here are remembered, for as long as they live.
 */
export function sharedCanonical<T extends object>(value: T): T {
  if (!compactText.has(value)) {
    deepFreeze(value);
    compactText.set(value, serialize(value, '', '') ?? 'null');
  }
  return value;
}
const compactText = new WeakMap<object, string>();

/** `gap`: one level's indent ('' for compact JSON); `at`: the indent of the line `value` starts on. */
function serialize(value: unknown, gap: string, at: string): string | undefined {
  if (gap === '' && value !== null && typeof value === 'object') {
    const known = compactText.get(value);
    if (known !== undefined) return known;
  }
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const inner = at + gap;
    const items = value.map((item) => serialize(item, gap, inner) ?? 'null');
    return gap === '' ? `[${items.join(',')}]` : `[\n${inner}${items.join(`,\n${inner}`)}\n${at}]`;
  }
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const inner = at + gap;
    const members: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const member = serialize(record[key], gap, inner);
      if (member !== undefined) members.push(gap === '' ? `${JSON.stringify(key)}:${member}` : `${JSON.stringify(key)}: ${member}`);
    }
    if (members.length === 0) return '{}';
    return gap === '' ? `{${members.join(',')}}` : `{\n${inner}${members.join(`,\n${inner}`)}\n${at}}`;
  }
  // Primitives follow JSON.stringify exactly; it yields undefined for undefined, functions and symbols.
  const primitive: string | undefined = JSON.stringify(value);
  return primitive;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The hash of a value's canonical JSON: equal for semantically equal JSON values. */
export function specHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
