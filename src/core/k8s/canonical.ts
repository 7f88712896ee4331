// Deterministic JSON for hashing and for annotation values: unordered output causes write loops.
import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted (by UTF-16 code units) at every level; arrays keep their order.
 * Dates become ISO strings; undefined object members are dropped and undefined array items
 * become null, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  return serialize(value) ?? 'null';
}

function serialize(value: unknown): string | undefined {
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map((item) => serialize(item) ?? 'null').join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const members: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const member = serialize(record[key]);
      if (member !== undefined) members.push(`${JSON.stringify(key)}:${member}`);
    }
    return `{${members.join(',')}}`;
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
