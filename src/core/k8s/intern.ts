// Hash-consing of cached objects: a value equal to one seen before is replaced by that one, so that what
// many cached objects hold alike is held once. 100k ManifestWorks are 5000 policies × 20 clusters: the 20
// works of a policy carry the same labels, annotations, spec and names, every work the same condition
// types, reasons and feedback names — and JSON.parse gives each its own copy (V8 shares only the keys
// and strings of up to 10 characters).
//
// Shared values are frozen: one reader must never see another's change. An object or array is kept for
// sharing only once every string in it has been seen before: one holding a string seen for the first time
// (a work's own status times, say) is likely to stay the only one of its kind, and would only fill the
// table. The tables are bounded (see Generations); what a dropped entry held stays with the objects
// holding it, it is just no longer shared with newer ones.

/** Strings longer than this are not shared: rarely repeated, and costly to keep in a table once stale. */
const MAX_SHARED_STRING = 256;
/** JSON.parse itself shares strings up to this long (V8 internalises them): no table needed. */
const MAX_PARSER_SHARED_STRING = 10;

/** A shared string and its hash, computed once. */
interface SharedString {
  text: string;
  hash: number;
}

export class Interner {
  private readonly strings: Generations<string, SharedString>;
  private readonly values: Generations<number, object>;
  // What `intern` found out about the value it returned last (fields, not a returned tuple: nothing to
  // allocate per part): its hash, and whether it holds a string seen for the first time.
  private hash = 0;
  private fresh = false;

  /**
   * `capacity`: the most entries of a generation of each table (strings; objects and arrays); `lookups`:
   * the most lookups in one, so that what no cached object holds any more is dropped in time.
   */
  constructor(capacity = 1 << 16, lookups = 1 << 20) {
    this.strings = new Generations(capacity, lookups);
    this.values = new Generations(capacity, lookups);
  }

  /**
   * A deep-frozen value equal to `value` (JSON data: plain objects, arrays, strings, numbers, booleans,
   * null), the one seen before if there was one. Takes `value` over: each of its parts equal to one seen
   * before is replaced by that one in place, and the rest is frozen. (In place: a copy of an object would
   * not be as compact as one JSON.parse made, and copies made by spreading get a map of their own each
   * once frozen.)
   */
  value<T>(value: T): T {
    return this.intern(value) as T;
  }

  private intern(value: unknown): unknown {
    if (typeof value === 'string') return this.internString(value);
    if (typeof value !== 'object' || value === null) {
      this.hash = hashPrimitive(value);
      this.fresh = false;
      return value;
    }
    if (Array.isArray(value)) return this.internArray(value);
    const proto: unknown = Object.getPrototypeOf(value);
    // Not JSON data (a Date, say): kept as it is, equal to nothing else.
    if (proto !== Object.prototype && proto !== null) return this.opaque(value);
    return this.internObject(value as Record<string, unknown>);
  }

  private internString(text: string): string {
    if (text.length <= MAX_PARSER_SHARED_STRING || text.length > MAX_SHARED_STRING) {
      this.hash = hashString(text);
      this.fresh = text.length > MAX_SHARED_STRING;
      return text;
    }
    const shared = this.strings.get(text);
    this.fresh = shared === undefined;
    if (shared !== undefined) {
      this.hash = shared.hash;
      return shared.text;
    }
    this.hash = hashString(text);
    this.strings.set(text, { text, hash: this.hash });
    return text;
  }

  private internArray(array: unknown[]): unknown {
    let hash = ARRAY;
    let fresh = false;
    // A frozen part (shared elsewhere already) keeps its own items: it is then kept as a value of its own.
    const frozen = Object.isFrozen(array);
    for (let i = 0; i < array.length; i++) {
      const item = this.intern(array[i]);
      hash = mix(hash, this.hash);
      fresh ||= this.fresh;
      // Stored even when `item === array[i]`: for strings that compares text, not identity, and the shared
      // string must replace the parser's equal copy.
      if (!frozen) array[i] = item;
    }
    return this.share(array, hash, fresh, sameArray);
  }

  private internObject(object: Record<string, unknown>): unknown {
    let hash = OBJECT;
    let fresh = false;
    const frozen = Object.isFrozen(object);
    // for…in: JSON data inherits no enumerable keys.
    for (const key in object) {
      // JSON may name a key `__proto__`: assigning it would set the prototype. Left alone.
      if (key === '__proto__') return this.opaque(object);
      hash = mix(hash, hashKey(key));
      const item = this.intern(object[key]);
      hash = mix(hash, this.hash);
      fresh ||= this.fresh;
      if (!frozen) object[key] = item; // as in internArray: a shared string is equal to, not identical with, the parser's
    }
    return this.share(object, hash, fresh, sameObject);
  }

  /** The value kept under `hash` if equal to `value` (whose parts are shared already: compared by identity), else `value`. */
  private share<V extends object>(value: V, hash: number, fresh: boolean, same: (a: V, b: V) => boolean): V {
    this.hash = hash;
    const kept = this.values.get(hash) as V | undefined;
    this.fresh = false;
    if (kept !== undefined && same(kept, value)) return kept;
    this.fresh = fresh;
    Object.freeze(value);
    // On a collision the newer value is kept: the older one stays with the objects holding it.
    if (!fresh) this.values.set(hash, value);
    return value;
  }

  private opaque(value: unknown): unknown {
    this.hash = OPAQUE;
    this.fresh = true;
    return value;
  }
}

/**
 * Two generations of a table: a new one is started when the newer one is full (`capacity` entries) or
 * has been looked up in `lookups` times; the older one is then dropped, and with it what was not looked
 * up again meanwhile (what is moves to the newer one).
 */
export class Generations<K, V> {
  private newer = new Map<K, V>();
  private older = new Map<K, V>();
  private looked = 0;

  constructor(
    private readonly capacity: number,
    private readonly lookups: number,
  ) {}

  get(key: K): V | undefined {
    if (++this.looked >= this.lookups) this.rotate();
    const found = this.newer.get(key);
    if (found !== undefined) return found;
    const old = this.older.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  set(key: K, value: V): void {
    if (this.newer.size >= this.capacity) this.rotate();
    this.older.delete(key);
    this.newer.set(key, value);
  }

  private rotate(): void {
    this.older = this.newer;
    this.newer = new Map();
    this.looked = 0;
  }
}

function sameArray(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

function sameObject(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  let i = 0;
  // In the same order: a reader may see the order (Object.keys, JSON.stringify).
  for (const key in b) if (key !== keys[i++] || !Object.is(a[key], b[key])) return false;
  return i === keys.length;
}

// FNV-1a, 32 bits, with a tag per kind of value so that, say, "1" and 1 differ.
const FNV_OFFSET = 0x811c9dc5;
const ARRAY = mix(FNV_OFFSET, 1);
const OBJECT = mix(FNV_OFFSET, 2);
const OPAQUE = mix(FNV_OFFSET, 3);
const NUMBER = mix(FNV_OFFSET, 4);
const OTHER = mix(FNV_OFFSET, 5);
const STRING = mix(FNV_OFFSET, 6);

function mix(hash: number, value: number): number {
  return Math.imul(hash ^ value, 0x01000193);
}

function hashString(text: string, hash = STRING): number {
  for (let i = 0; i < text.length; i++) hash = mix(hash, text.charCodeAt(i));
  return mix(hash, text.length);
}

/** Keys are few and short: their length and ends tell them apart well enough (equal hashes are compared anyway). */
function hashKey(key: string): number {
  return mix(mix(key.length, key.charCodeAt(0)), key.charCodeAt(key.length - 1));
}

function hashPrimitive(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) < 2 ** 31) return mix(NUMBER, value);
  return hashString(String(value), OTHER);
}
