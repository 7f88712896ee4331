// Caps and clean-up for text the hub does not control — a spoke's ManifestWork status (written by its
// agent, from whatever the spoke's controllers put in a policy's status) — before it reaches an
// annotation, an Event or the hub's memory (docs/design/runtime.md#bounded-everything). Pure: no I/O.
import { DNS1123_SUBDOMAIN_MAX_LENGTH } from './dns.ts';

/** Marks a cut: the reader knows there was more. */
export const CUT_MARK = '…';

/** events.k8s.io/v1 validation's limit for `reason` (core/v1 checks none; we keep to the stricter one). */
export const MAX_EVENT_REASON_LENGTH = 128;
/** events.k8s.io/v1 validation's limit for the note (`message`), in bytes. */
export const MAX_EVENT_MESSAGE_BYTES = 1024;
/** The reason used when a reason has nothing usable left (no letter or digit). */
export const FALLBACK_REASON = 'SpokeReason';

/**
 * Longest spoke string kept in memory (code points): a condition message, an apply error, a feedback
 * value. Kubernetes allows 32 KiB condition messages; nothing the hub shows uses more than 256
 * characters (the status annotation) or 1 KiB (an Event), so 4 KiB keeps every useful word and bounds
 * what one spoke can make the hub hold per work.
 */
export const MAX_SPOKE_TEXT_LENGTH = 4096;
/** Longest name-like spoke string (a condition type, a Gateway or controller name): an object name's limit. */
export const MAX_SPOKE_NAME_LENGTH = DNS1123_SUBDOMAIN_MAX_LENGTH;
/**
 * Longest JsonRaw feedback value parsed, in bytes. The OCM agent itself refuses JsonRaw values over
 * 1 KiB; anything much longer did not come from a well-behaved agent. A cut JSON text is not JSON,
 * so a longer one is dropped, never cut.
 */
export const MAX_SPOKE_JSON_BYTES = 4096;

const UPPER_CAMEL_CASE = /^[A-Z][A-Za-z0-9]*$/;

/** Whether `text` is a reason a Kubernetes Event accepts and `kubectl` shows as intended. */
export function isEventReason(text: string): boolean {
  return text.length <= MAX_EVENT_REASON_LENGTH && UPPER_CAMEL_CASE.test(text);
}

/**
 * `text` as an Event (and condition) reason: UpperCamelCase, letters and digits only, at most
 * MAX_EVENT_REASON_LENGTH. A valid reason is returned as is; otherwise the runs of letters and digits
 * become capitalised words (`target_not_found` → `TargetNotFound`), leading digits are dropped, and the
 * result is cut. When nothing is left, `fallback` (which must itself be a valid reason).
 */
export function eventReason(text: string, fallback: string = FALLBACK_REASON): string {
  if (isEventReason(text)) return text;
  // Only the head matters: the result is at most 128 characters. The bound keeps the work small.
  const words = text.slice(0, MAX_SPOKE_TEXT_LENGTH).split(/[^A-Za-z0-9]+/);
  const joined = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
  const rest = joined.replace(/^[0-9]+/, '');
  const reason = (rest.charAt(0).toUpperCase() + rest.slice(1)).slice(0, MAX_EVENT_REASON_LENGTH);
  return reason === '' ? fallback : reason;
}

// C0 controls but tab and newline, DEL and C1 controls: terminal escapes (the status CLI prints these
// strings), carriage returns that overwrite a line, NULs. Lone surrogates cannot be encoded as UTF-8.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` with control characters (but tab and newline) and lone surrogates replaced by U+FFFD. */
export function cleanText(text: string): string {
  return text.replace(CONTROL, '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');
}

/** At most `max` code points (never splitting a surrogate pair), CUT_MARK ending a cut text. */
export function cutCodePoints(text: string, max: number): string {
  // UTF-16 length is at least the code point count: most texts are decided without counting.
  if (text.length <= max) return text;
  const chars = Array.from(text.slice(0, 2 * max + 2));
  if (chars.length <= max) return text;
  return `${chars.slice(0, Math.max(0, max - 1)).join('')}${CUT_MARK}`;
}

/** Longest message in the status annotation (a cluster's, a problem's, a statusFeedback string value), in code points. */
export const MAX_STATUS_MESSAGE_LENGTH = 256;

/** `message` as the status annotation holds it: at most MAX_STATUS_MESSAGE_LENGTH code points, CUT_MARK ending a cut. */
export function cutMessage(message: string): string {
  return cutCodePoints(message, MAX_STATUS_MESSAGE_LENGTH);
}

/** At most `maxBytes` bytes of UTF-8 (never splitting a character), CUT_MARK ending a cut text. */
export function cutUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const budget = maxBytes - Buffer.byteLength(CUT_MARK, 'utf8');
  let used = 0;
  let out = '';
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (used + size > budget) break;
    used += size;
    out += char;
  }
  return `${out}${CUT_MARK}`;
}

/**
 * A string from a spoke, fit to keep: cut to `max` code points (marked), control characters replaced.
 * Undefined for anything that is not a string.
 */
export function spokeText(value: unknown, max: number = MAX_SPOKE_TEXT_LENGTH): string | undefined {
  return typeof value === 'string' ? cleanText(cutCodePoints(value, max)) : undefined;
}

/** An Event's message: control characters replaced, cut to MAX_EVENT_MESSAGE_BYTES (marked). */
export function eventMessage(text: string): string {
  return cutUtf8(cleanText(text), MAX_EVENT_MESSAGE_BYTES);
}

/**
 * `text` reduced to what a DNS-1123 subdomain may hold: lowercased, other characters replaced by `-`,
 * runs of `-` made one, a dot only between two alphanumerics; no separator at either end. May be empty.
 */
export function dnsSubdomainChars(text: string): string {
  const replaced = text
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .replace(/-+/g, '-')
    // A dot must sit between two alphanumerics: "a-.-b" and "a..b" become "a.b".
    .replace(/[-.]*\.[-.]*/g, '.');
  return trimSeparators(replaced);
}

/** `text` without `-` or `.` at either end. */
export function trimSeparators(text: string): string {
  return text.replace(/^[-.]+|[-.]+$/g, '');
}

/**
 * The name of an Event about the object named `objectName`: `<object name>.<suffix>`, the object-name
 * part made DNS-safe and cut so that the whole is a DNS-1123 subdomain of at most 253 characters. The
 * suffix (lowercase alphanumerics, e.g. random hex) is what makes the name unique, so it is kept whole.
 */
export function eventName(objectName: string, suffix: string): string {
  const room = DNS1123_SUBDOMAIN_MAX_LENGTH - suffix.length - 1;
  const prefix = trimSeparators(dnsSubdomainChars(objectName).slice(0, Math.max(0, room)));
  return prefix === '' ? suffix : `${prefix}.${suffix}`;
}
