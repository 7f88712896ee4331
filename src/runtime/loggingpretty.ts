// `--log-format pretty`: each JSON log line as one line a person reads,
//   2026-01-02T10:04:05.123Z INFO  policy-sync-hub: caches synced kinds=2 policy="ns/a b"
// with an error's stack on the lines below it. Written in the main thread, synchronously, to the
// destination the JSON would have gone to; a line that is not a JSON object is passed on as it is.
import type { DestinationStream } from 'pino';

/** pino's numeric levels, for lines written without the string-level formatter. */
const LEVEL_LABELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
/** ANSI colours of each level's label. */
const LEVEL_COLORS: Record<string, number> = { trace: 90, debug: 36, info: 32, warn: 33, error: 31, fatal: 35 };
/** Shown in the line's head, or not worth a terminal's width. */
const HEAD_FIELDS = new Set(['level', 'time', 'name', 'msg', 'pid', 'hostname']);

/** A value as `key=` shows it: a bare word when unambiguous, else JSON. */
function shown(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

function levelLabel(level: unknown): string {
  if (typeof level === 'string') return level;
  if (typeof level === 'number') return LEVEL_LABELS[level] ?? String(level);
  return 'log';
}

/** One JSON log line as its pretty line (ending in a newline). */
export function formatPretty(line: string, options: { colors?: boolean } = {}): string {
  const text = line.endsWith('\n') ? line.slice(0, -1) : line;
  let entry: unknown;
  try {
    entry = JSON.parse(text);
  } catch {
    return `${text}\n`;
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return `${text}\n`;
  const e = entry as Record<string, unknown>;
  const time = typeof e.time === 'number' ? new Date(e.time).toISOString() : '';
  const label = levelLabel(e.level);
  const padded = label.toUpperCase().padEnd(5);
  const level = options.colors && LEVEL_COLORS[label] !== undefined ? `\u001b[${LEVEL_COLORS[label]}m${padded}\u001b[39m` : padded;
  const name = typeof e.name === 'string' ? `${e.name}: ` : '';
  const msg = typeof e.msg === 'string' ? e.msg : '';
  const fields: string[] = [];
  const stacks: string[] = [];
  for (const [key, value] of Object.entries(e)) {
    if (HEAD_FIELDS.has(key)) continue;
    // pino's error serializer: {type, message, stack}; the message inline, the stack below.
    const stack = value !== null && typeof value === 'object' ? (value as { stack?: unknown }).stack : undefined;
    if (typeof stack === 'string') {
      fields.push(`${key}=${shown((value as { message?: unknown }).message ?? '')}`);
      stacks.push(...stack.split('\n').map((l) => `    ${l}`));
    } else {
      fields.push(`${key}=${shown(value)}`);
    }
  }
  const head = [time, level, `${name}${msg}`, ...fields].filter((part) => part.length > 0).join(' ');
  return [head, ...stacks].join('\n') + '\n';
}

/** A pino destination that writes each entry pretty to `out`. */
export function prettyDestination(out: DestinationStream, options: { colors?: boolean } = {}): DestinationStream {
  return { write: (line: string) => out.write(formatPretty(line, options)) };
}
