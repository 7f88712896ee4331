// A controller's log kept in memory for a test's assertions (and echoed to stderr with POLICY_SYNC_TEST_LOG).
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export class CapturedLog {
  readonly lines: string[] = [];
  readonly sink = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      this.lines.push(chunk.toString('utf8'));
      if (process.env.POLICY_SYNC_TEST_LOG) process.stderr.write(chunk);
      done();
    },
  });

  logger(level = 'info'): Logger {
    return pino({ level }, this.sink);
  }

  /** The last lines, shortened, for a failure message. */
  recent(count = 15): string {
    return this.lines.slice(-count).map((l) => (l.length > 600 ? `${l.slice(0, 600)}…\n` : l)).join('');
  }
}
