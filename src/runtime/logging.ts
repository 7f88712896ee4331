// Structured logs (pino): JSON for machines by default, pretty-printed for a person at a terminal.
import { pino, type Logger } from 'pino';

export type LogFormat = 'json' | 'pretty';

export function createLogger(options: { level?: string; format?: LogFormat; name?: string } = {}): Logger {
  const base = { level: options.level ?? 'info', name: options.name ?? 'policy-sync' };
  if (options.format === 'pretty') {
    // pino-pretty is a development dependency: the container image logs JSON.
    return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: process.stderr.isTTY, destination: 2 } } });
  }
  return pino(base, pino.destination(2));
}

export type { Logger };
