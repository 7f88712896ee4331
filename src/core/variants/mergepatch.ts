// JSON merge patch (RFC 7386), the fixed values of a PolicyVariant entry, and the fields a patch sets (to find two
// variants setting the same field of one cluster's copy). Pure.
import type { PathSegment } from './fieldpath.ts';

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** RFC 7386 MergePatch(target, patch): objects merge member by member, null removes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/**
 * The fields a merge patch sets or removes, deepest first met: a member whose value is an object is merged into
 * (its own members are the fields), any other value (a list, a scalar, null) is the field.
 */
export function mergePatchFields(patch: unknown, at: readonly PathSegment[] = []): PathSegment[][] {
  if (!isObject(patch)) return [[...at]];
  const fields: PathSegment[][] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (isObject(value) && Object.keys(value).length > 0) fields.push(...mergePatchFields(value, [...at, key]));
    else fields.push([...at, key]);
  }
  return fields;
}
