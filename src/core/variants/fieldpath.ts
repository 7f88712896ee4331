// Field paths of a PolicyVariant (`spec.loadBalancing.geo`, `spec.limits["per.user"].rates[0].limit`): parsed once,
// printed back the same way, compared for overlap (two variants setting one field), and set in a copy. Pure.

/** One step of a path: an object member or a list index. */
export type PathSegment = string | number;

export type ParsedPath = { ok: true; segments: PathSegment[] } | { ok: false; message: string };

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*/;

/**
 * Parses a dotted path whose first segment is `spec` (a variant changes what the policy says, never the copy's
 * metadata, which is the sync's own): members by name (`a.b`), by quoted name (`a["x.y"]`), list items by index
 * (`a[0]`).
 */
export function parseFieldPath(text: string): ParsedPath {
  const segments: PathSegment[] = [];
  let rest = text;
  let first = true;
  while (rest.length > 0) {
    if (!first) {
      if (rest.startsWith('.')) rest = rest.slice(1);
      else if (!rest.startsWith('[')) return { ok: false, message: `unexpected "${rest[0]}" at "${rest}"` };
    }
    if (rest.startsWith('[')) {
      const index = /^\[(\d{1,6})\]/.exec(rest);
      const quoted = /^\["((?:[^"\\]|\\.)*)"\]/.exec(rest);
      if (index) {
        segments.push(Number(index[1]));
        rest = rest.slice(index[0].length);
      } else if (quoted) {
        segments.push(JSON.parse(`"${quoted[1]}"`) as string);
        rest = rest.slice(quoted[0].length);
      } else return { ok: false, message: `a "[" opens an index ([0]) or a quoted name (["a.b"]) at "${rest}"` };
    } else {
      const name = IDENTIFIER.exec(rest);
      if (!name) return { ok: false, message: `a field name is expected at "${rest}"` };
      segments.push(name[0]);
      rest = rest.slice(name[0].length);
    }
    first = false;
  }
  if (segments.length < 2 || segments[0] !== 'spec') return { ok: false, message: 'a path starts with spec. and names a field under it' };
  return { ok: true, segments };
}

/** A path as a person writes it (parseFieldPath's inverse). */
export function formatFieldPath(segments: readonly PathSegment[]): string {
  return segments
    .map((s, i) => {
      if (typeof s === 'number') return `[${s}]`;
      if (IDENTIFIER.exec(s)?.[0] === s) return i === 0 ? s : `.${s}`;
      return `[${JSON.stringify(s)}]`;
    })
    .join('');
}

/** One path is the other or inside it: setting both sets the same field. */
export function pathsOverlap(a: readonly PathSegment[], b: readonly PathSegment[]): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * `value` set at `segments` in a copy of `root` (objects along the way made as needed; `root` is not changed).
 * A list index past the end, or a step through a value of another type, is an error naming where.
 */
export function setAtPath(root: Record<string, unknown>, segments: readonly PathSegment[], value: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  const step = (node: unknown, i: number): { ok: true; value: unknown } | { ok: false; message: string } => {
    if (i === segments.length) return { ok: true, value };
    const segment = segments[i]!;
    // Named only in an error: a copy is rendered per cluster, and most set their paths without one.
    const here = (): string => formatFieldPath(segments.slice(0, i)) || '(the copy)';
    if (typeof segment === 'number') {
      if (!Array.isArray(node)) return { ok: false, message: `${here()} is not a list` };
      if (segment >= node.length) return { ok: false, message: `${here()} has ${node.length} items, no [${segment}]` };
      const inner = step(node[segment], i + 1);
      if (!inner.ok) return inner;
      const list = [...(node as unknown[])];
      list[segment] = inner.value;
      return { ok: true, value: list };
    }
    if (node !== undefined && node !== null && (typeof node !== 'object' || Array.isArray(node))) return { ok: false, message: `${here()} is not an object` };
    const record = (node ?? {}) as Record<string, unknown>;
    const inner = step(record[segment], i + 1);
    if (!inner.ok) return inner;
    return { ok: true, value: { ...record, [segment]: inner.value } };
  };
  const result = step(root, 0);
  return result.ok ? { ok: true, value: result.value as Record<string, unknown> } : result;
}
