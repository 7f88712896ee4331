// Structured logs (pino) on stderr: JSON lines for machines by default, with string levels
// (`"level":"info"`, as log pipelines expect, not pino's numbers); or `pretty`, one readable line per entry
// for a person at a terminal. The pretty format is our own small formatter (loggingpretty.ts), in the
// main thread: it needs no development dependency (the image has none) and no worker thread.
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { prettyDestination } from './loggingpretty.ts';

export type LogFormat = 'json' | 'pretty';

export interface LoggerSettings {
  level?: string;
  format?: LogFormat;
  name?: string;
  /** Where the lines go (tests); default stderr. */
  destination?: DestinationStream;
}

/** pino's options for our logs: the level as its label. */
export function loggerOptions(level = 'info', name = 'policy-sync'): LoggerOptions {
  return { level, name, formatters: { level: (label) => ({ level: label }) } };
}

export function createLogger(settings: LoggerSettings = {}): Logger {
  const out = settings.destination ?? pino.destination(2);
  const colors = settings.destination === undefined && process.stderr.isTTY === true;
  return pino(loggerOptions(settings.level, settings.name), settings.format === 'pretty' ? prettyDestination(out, { colors }) : out);
}

export type { Logger };
