import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from './logging.ts';

function capture(): { lines: string[]; destination: { write: (line: string) => void } } {
  const lines: string[] = [];
  return { lines, destination: { write: (line: string) => void lines.push(line) } };
}

test('JSON logs carry the level as its label, the logger name and the fields', () => {
  const { lines, destination } = capture();
  const logger = createLogger({ level: 'debug', name: 'policy-sync-hub', destination });
  logger.info({ cluster: 'spoke-1' }, 'hello');
  logger.child({ policy: 'ns/p' }).warn('careful');
  logger.trace('not shown at debug');
  const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(entries.map((e) => [e.level, e.name, e.msg]), [['info', 'policy-sync-hub', 'hello'], ['warn', 'policy-sync-hub', 'careful']]);
  assert.equal(entries[0]!.cluster, 'spoke-1');
  assert.equal(entries[1]!.policy, 'ns/p');
});

test('the pretty format writes readable lines, without a worker thread or any other package', () => {
  const { lines, destination } = capture();
  const logger = createLogger({ format: 'pretty', name: 'policy-sync-spoke', destination });
  logger.error({ err: new Error('boom'), cluster: 'c1' }, 'it failed');
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ERROR policy-sync-spoke: it failed err=boom cluster=c1\n {4}Error: boom\n/);
});
