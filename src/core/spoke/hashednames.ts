// A set of object names held as truncated hashes, Golomb-Rice coded (docs/design/tenancy.md#local-policies-win):
// how a spoke report names the objects of a namespace too large to list one by one, for the one question
// the hub asks of them — is this name held? Each name is hashed (SHA-256) into [0, count·2^P); the sorted
// values are written as their gaps, each gap as its quotient by 2^P in unary and its remainder in P bits.
// About P + 1.6 bits a name whatever its length: 50,000 names take ~135 KB, ~180 KB in base64.
//
// Membership has no false negatives: a name in the set always answers "held" (no copy is ever placed
// over it). A name not in it answers "held" with probability about 2^-P (another name's hash equal to its
// own), which is only doubt: the copy waits where it was free. Pure.
import { hash } from 'node:crypto';

/** Remainder bits of each gap: a false "held" about once in 2^20 (~10^-6) questions. */
export const NAME_HASH_BITS = 20;
const P = NAME_HASH_BITS;
const RANGE_PER_NAME = 2 ** P;
/** Every how many names the decoded set keeps where it is, so that a question decodes at most this many. */
const CHECKPOINT_EVERY = 64;

/** A decoded set: `has` answers in O(log(count) + 64). */
export interface HashedNames {
  readonly count: number;
  /** Whether `name` may be in the set: true for every name that is, and about 2^-P of the others. */
  has(name: string): boolean;
}

/** The names' set in base64, for `count` = the number of distinct names given. */
export function encodeHashedNames(names: readonly string[]): { count: number; data: string } {
  const distinct = [...new Set(names)];
  const count = distinct.length;
  const range = rangeFor(count);
  const values = distinct.map((n) => hashOf(n, range)).sort((a, b) => a - b);
  const writer = new BitWriter(Math.ceil((count * (P + 2)) / 8) + 8);
  let previous = 0;
  for (const value of values) {
    const gap = value - previous;
    previous = value;
    const quotient = Math.floor(gap / RANGE_PER_NAME);
    for (let i = 0; i < quotient; i++) writer.bit(1);
    writer.bit(0);
    writer.bits(gap - quotient * RANGE_PER_NAME, P);
  }
  return { count, data: Buffer.from(writer.bytes()).toString('base64') };
}

/**
 * The set `data` (base64) of `count` names, or what is wrong with it: the data must be canonical base64 and
 * hold exactly `count` values, each below the range, then at most seven zero bits of padding.
 */
export function decodeHashedNames(count: number, data: string): { ok: true; names: HashedNames } | { ok: false; message: string } {
  if (!Number.isSafeInteger(count) || count < 0) return { ok: false, message: 'count must be a whole number' };
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(data)) return { ok: false, message: 'must be base64' };
  const bytes = Buffer.from(data, 'base64');
  if (bytes.toString('base64') !== data) return { ok: false, message: 'must be canonical base64' };
  // Each name takes at least P + 1 bits: a count the data cannot hold is refused before any decoding.
  if (count * (P + 1) > bytes.length * 8) return { ok: false, message: `${bytes.length} bytes cannot hold ${count} names` };
  const range = rangeFor(count);
  const reader = new BitReader(bytes);
  const checkpointValues = new Float64Array(Math.ceil(count / CHECKPOINT_EVERY));
  const checkpointOffsets = new Float64Array(checkpointValues.length);
  let value = 0;
  for (let i = 0; i < count; i++) {
    const gap = reader.gap();
    if (gap === undefined) return { ok: false, message: `ends after ${i} of ${count} names` };
    value += gap;
    if (value >= range) return { ok: false, message: `value ${i} is out of range` };
    if (i % CHECKPOINT_EVERY === 0) {
      checkpointValues[i / CHECKPOINT_EVERY] = value;
      checkpointOffsets[i / CHECKPOINT_EVERY] = reader.offset;
    }
  }
  if (!reader.restIsPadding()) return { ok: false, message: `more data than ${count} names` };
  return { ok: true, names: new DecodedNames(count, bytes, range, checkpointValues, checkpointOffsets) };
}

class DecodedNames implements HashedNames {
  constructor(
    readonly count: number,
    private readonly bytes: Uint8Array,
    private readonly range: number,
    /** The value of every CHECKPOINT_EVERY-th name, and the bit offset just after it. */
    private readonly checkpointValues: Float64Array,
    private readonly checkpointOffsets: Float64Array,
  ) {}

  has(name: string): boolean {
    if (this.count === 0) return false;
    const target = hashOf(name, this.range);
    // The last checkpoint at or below the target; decode onwards from it, within its run of names.
    let lo = 0;
    let hi = this.checkpointValues.length - 1;
    if (this.checkpointValues[0]! > target) return false;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.checkpointValues[mid]! <= target) lo = mid;
      else hi = mid - 1;
    }
    let value = this.checkpointValues[lo]!;
    if (value === target) return true;
    const reader = new BitReader(this.bytes, this.checkpointOffsets[lo]);
    const last = Math.min(this.count, (lo + 1) * CHECKPOINT_EVERY);
    for (let i = lo * CHECKPOINT_EVERY + 1; i < last; i++) {
      value += reader.gap()!;
      if (value === target) return true;
      if (value > target) return false;
    }
    return false;
  }
}

/** The hash range for `count` names: at least one name's worth, so that an empty set has a range too. */
function rangeFor(count: number): number {
  return Math.max(1, count) * RANGE_PER_NAME;
}

/** The first 48 bits of SHA-256(name), reduced into [0, range) (< 2^38: the bias is under 2^-10 of a value's share). */
function hashOf(name: string, range: number): number {
  // 48 bits and the remainder are exact in a double.
  return hash('sha256', name, 'buffer').readUIntBE(0, 6) % range;
}

class BitWriter {
  private buffer: Uint8Array;
  private length = 0;

  constructor(capacityBytes: number) {
    this.buffer = new Uint8Array(Math.max(8, capacityBytes));
  }

  bit(b: 0 | 1): void {
    const byte = this.length >> 3;
    if (byte >= this.buffer.length) {
      const grown = new Uint8Array(this.buffer.length * 2);
      grown.set(this.buffer);
      this.buffer = grown;
    }
    if (b) this.buffer[byte]! |= 0x80 >> (this.length & 7);
    this.length++;
  }

  /** `value`'s low `width` (at most 31) bits, most significant first. */
  bits(value: number, width: number): void {
    for (let i = width - 1; i >= 0; i--) this.bit(((value >>> i) & 1) as 0 | 1);
  }

  bytes(): Uint8Array {
    return this.buffer.slice(0, Math.ceil(this.length / 8));
  }
}

class BitReader {
  constructor(
    private readonly bytes: Uint8Array,
    /** In bits. */
    public offset = 0,
  ) {}

  /** One gap (unary quotient, then P bits); undefined when the data ends first. */
  gap(): number | undefined {
    const total = this.bytes.length * 8;
    let quotient = 0;
    for (;;) {
      if (this.offset >= total) return undefined;
      if (!this.bit()) break;
      quotient++;
    }
    if (this.offset + P > total) return undefined;
    let remainder = 0;
    for (let i = 0; i < P; i++) remainder = remainder * 2 + this.bit();
    return quotient * RANGE_PER_NAME + remainder;
  }

  /** What is left is under a byte, and zero. */
  restIsPadding(): boolean {
    const total = this.bytes.length * 8;
    if (total - this.offset >= 8) return false;
    while (this.offset < total) if (this.bit()) return false;
    return true;
  }

  private bit(): number {
    const b = (this.bytes[this.offset >> 3]! >> (7 - (this.offset & 7))) & 1;
    this.offset++;
    return b;
  }
}
