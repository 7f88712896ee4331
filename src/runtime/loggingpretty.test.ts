import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatPretty } from './loggingpretty.ts';

const T = Date.parse('2026-01-02T10:04:05.123Z');

test('a JSON entry becomes one line: time, level, name and message, then its fields as key=value', () => {
  const line = JSON.stringify({ level: 'info', time: T, pid: 7, hostname: 'h', name: 'policy-sync-hub', msg: 'caches synced', kinds: 2, policy: 'ns/a b', ok: true, gvr: { group: 'g' } });
  assert.equal(formatPretty(`${line}\n`), '2026-01-02T10:04:05.123Z INFO  policy-sync-hub: caches synced kinds=2 policy="ns/a b" ok=true gvr={"group":"g"}\n');
});

test("numeric levels are named; colours only when asked; an error's stack goes below the line", () => {
  const line = JSON.stringify({ level: 50, time: T, msg: 'failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (x.ts:1:1)' } });
  assert.equal(formatPretty(line), '2026-01-02T10:04:05.123Z ERROR failed err=boom\n    Error: boom\n        at f (x.ts:1:1)\n');
  assert.equal(formatPretty(JSON.stringify({ level: 'warn', time: T, msg: 'm' }), { colors: true }), '2026-01-02T10:04:05.123Z \u001b[33mWARN \u001b[39m m\n');
});

test('a line that is not a JSON object is passed on as it is', () => {
  assert.equal(formatPretty('not json\n'), 'not json\n');
  assert.equal(formatPretty('[1,2]'), '[1,2]\n');
});
