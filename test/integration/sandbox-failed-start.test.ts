// A sandbox that fails to start stops what it started: a test whose `before` fails never gets a sandbox
// to stop, and an etcd or apiserver left behind would hold ports and CPU for the rest of the suite.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import { Sandbox } from '../../testkit/sandbox/sandbox.ts';

const root = mkdtempSync(join(repoRoot, '.local', 'failed-start-'));

after(() => rmSync(root, { recursive: true, force: true }));

/** Live processes whose command line names a path under `dir`. */
function processesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue;
    }
    if (cmdline.includes(dir) && Number(pid) !== process.pid) found.push(`${pid}: ${cmdline.slice(0, 160)}`);
  }
  return found;
}

test('a sandbox whose start fails stops every process it started, and keeps its logs', async () => {
  const logs: string[] = [];
  // Too short for anything to get ready: etcd starts, and the wait for it fails.
  await assert.rejects(Sandbox.up({ root, spokes: 1, timeoutMs: 1, log: (m) => logs.push(m) }));
  assert.deepEqual(processesUnder(root), [], `nothing started under ${root} runs on (log: ${logs.join('; ')})`);
  assert.equal(Sandbox.attach(root), undefined, 'no sandbox is recorded as running there');
  assert.ok(readdirSync(join(root, 'logs')).length > 0, 'the logs of what was started are kept');
});
