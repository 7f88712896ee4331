// What the property tests of src/core share (fast-check, with shrinking): running a property with a stated
// number of inputs and saying how many were tried, JSON documents mutated from valid ones, the field paths of
// a document as the parsers' errors name them, and text with the characters that break naive code.
import type { TestContext } from 'node:test';
import fc from 'fast-check';

/**
 * Every property test runs through this: `numRuns` inputs (times POLICY_SYNC_PROPERTY_RUNS_SCALE, 1 unless set,
 * for a longer hunt), and the count tried is printed as a test diagnostic (the spec reporter shows it). A failure
 * names the seed and shrunk counterexample fast-check found; POLICY_SYNC_PROPERTY_SEED replays a seed, and
 * POLICY_SYNC_PROPERTY_NO_SHRINK reports the first counterexample as found.
 */
export function checkProperty<Ts extends [unknown, ...unknown[]]>(
  t: TestContext,
  numRuns: number,
  arbitraries: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> },
  predicate: (...args: Ts) => void,
): void {
  const scale = Number(process.env.POLICY_SYNC_PROPERTY_RUNS_SCALE ?? '1');
  const runs = Math.max(1, Math.round(numRuns * (Number.isFinite(scale) && scale > 0 ? scale : 1)));
  const seed = process.env.POLICY_SYNC_PROPERTY_SEED;
  const started = performance.now();
  // fast-check's own types take the arbitraries as a rest parameter; the tuple here is the same thing.
  const property = (fc.property as unknown as (...a: unknown[]) => fc.IPropertyWithHooks<Ts>)(...arbitraries, predicate);
  // Shrinking a fleet of hundreds of clusters takes minutes: bounded, it reports the smallest found by then.
  const shrink = process.env.POLICY_SYNC_PROPERTY_NO_SHRINK === undefined ? { interruptAfterTimeLimit: 120_000, markInterruptAsFailure: false } : { endOnFailure: true };
  fc.assert(property, { numRuns: runs, ...shrink, ...(seed === undefined ? {} : { seed: Number(seed) }) });
  t.diagnostic(`${runs} inputs tried in ${Math.round(performance.now() - started)} ms`);
}

/** Text with what breaks naive code: quotes, separators the error paths use, newlines, non-BMP characters, lone surrogates. */
export function oddText(options: { maxLength?: number } = {}): fc.Arbitrary<string> {
  const odd = fc.constantFrom('"', "'", ':', ';', '.', '[', ']', '{', '}', '/', '\\', '\n', '\t', ' ', '…', 'é', '😀', '\u0000', '\ud800', '\udfff', '%');
  return fc.string({ unit: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...'abcxyz019-') }, { weight: 2, arbitrary: odd }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) }), maxLength: options.maxLength ?? 40 });
}

/** A field path segment of a JSON document: a key or a list index. */
export type PathSegment = string | number;

/** `a.b[0].c`, as the params' and the strategy's errors name a field (params.ts formatPath). */
export function formatFieldPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? segment : `.${segment}`;
  }
  return out;
}

/** Every path in a JSON value (the root `[]` included), objects and lists walked. */
export function jsonPaths(value: unknown, at: PathSegment[] = []): PathSegment[][] {
  const out: PathSegment[][] = [at];
  if (Array.isArray(value)) value.forEach((item, i) => out.push(...jsonPaths(item, [...at, i])));
  else if (isObject(value)) for (const [key, item] of Object.entries(value)) out.push(...jsonPaths(item, [...at, key]));
  return out;
}

/** The value at `path`, or undefined when there is none. */
export function valueAt(value: unknown, path: readonly PathSegment[]): unknown {
  let here = value;
  for (const segment of path) {
    if (typeof segment === 'number' ? !Array.isArray(here) : !isObject(here)) return undefined;
    here = (here as Record<string | number, unknown>)[segment];
  }
  return here;
}

/** One edit of a document: where (an index into its paths, modulo their number) and what. */
type Mutation =
  | { at: number; op: 'replace'; value: unknown }
  | { at: number; op: 'delete' }
  | { at: number; op: 'addKey'; key: string; value: unknown }
  | { at: number; op: 'wrap' }
  | { at: number; op: 'repeat' };

const mutation = (likely: fc.Arbitrary<unknown>): fc.Arbitrary<Mutation> => fc.oneof(
  fc.record({ at: fc.nat(), op: fc.constant('replace' as const), value: fc.oneof(fc.jsonValue({ maxDepth: 2 }), likely) }),
  fc.record({ at: fc.nat(), op: fc.constant('delete' as const) }),
  fc.record({ at: fc.nat(), op: fc.constant('addKey' as const), key: fc.oneof(oddText({ maxLength: 8 }), fc.constantFrom('type', 'name', 'group', 'progressive', 'canary', 'namespace')), value: fc.jsonValue({ maxDepth: 1 }) }),
  fc.record({ at: fc.nat(), op: fc.constant('wrap' as const) }),
  fc.record({ at: fc.nat(), op: fc.constant('repeat' as const) }),
);

/**
 * Documents from `valid` with a few edits anywhere: a subtree replaced by any JSON or by a `likely` value (one
 * that is nearly right: a reserved name, a wrong case, an empty string), a key or list item removed, a key
 * added, a value wrapped in a list, a list's first item repeated. What a user's typo, a wrong indentation or a
 * bad merge produces.
 */
export function mutatedJson(valid: fc.Arbitrary<unknown>, options: { maxMutations?: number; likely?: fc.Arbitrary<unknown> } = {}): fc.Arbitrary<unknown> {
  const edits = fc.array(mutation(options.likely ?? fc.constant('')), { maxLength: options.maxMutations ?? 3 });
  return fc.tuple(valid, edits).map(([doc, list]) => list.reduce(applyMutation, structuredClone(doc)));
}

function applyMutation(doc: unknown, m: Mutation): unknown {
  const paths = jsonPaths(doc);
  const path = paths[m.at % paths.length]!;
  const edit = (old: unknown): unknown => {
    switch (m.op) {
      case 'replace':
        return structuredClone(m.value);
      case 'delete':
        return REMOVE;
      case 'addKey':
        return isObject(old) ? { ...old, [m.key]: structuredClone(m.value) } : old;
      case 'wrap':
        return [old];
      case 'repeat':
        return Array.isArray(old) && old.length > 0 ? [...(old as unknown[]), structuredClone(old[0] as unknown)] : old;
    }
  };
  return setAt(doc, path, edit);
}

/** What an edit returns to remove the value (a key or a list item; the root becomes null). */
const REMOVE = Symbol('remove');

function setAt(doc: unknown, path: readonly PathSegment[], edit: (old: unknown) => unknown): unknown {
  if (path.length === 0) {
    const next = edit(doc);
    return next === REMOVE ? null : next;
  }
  const [head, ...rest] = path as [PathSegment, ...PathSegment[]];
  if (Array.isArray(doc) && typeof head === 'number') {
    const copy: unknown[] = [...(doc as unknown[])];
    const next = rest.length === 0 ? edit(copy[head]) : setAt(copy[head], rest, edit);
    if (next === REMOVE) copy.splice(head, 1);
    else copy[head] = next;
    return copy;
  }
  if (isObject(doc) && typeof head === 'string') {
    const copy: Record<string, unknown> = { ...doc };
    const next = rest.length === 0 ? edit(copy[head]) : setAt(copy[head], rest, edit);
    if (next === REMOVE) delete copy[head];
    else copy[head] = next;
    return copy;
  }
  return doc;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
