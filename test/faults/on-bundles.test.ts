// The fault tier again with the hub writing bundles (`--work-shape bundled`, docs/design/fleet.md): every invariant
// the tier checks — no deletion on doubt, no takeover, local policies win, the seeded soak's model — must hold per
// copy whatever the work shape. The other fault files run unchanged, in a runner of their own, with
// POLICY_SYNC_TEST_WORK_SHAPE=bundled (testkit/hub.ts: the in-process hubs, the spawned ones, the soak's); their
// own assertions decide, and a failure names the tests that failed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../testkit/sandbox/layout.ts';

const HERE = join(repoRoot, 'test', 'faults');
/** Not about works: the spoke agents' reports (spoke-configuration works, never bundled) under skewed clocks. */
const SHAPE_FREE = new Set(['clockskew.test.ts']);
const files = readdirSync(HERE)
  .filter((f) => f.endsWith('.test.ts') && f !== basename(import.meta.filename) && !SHAPE_FREE.has(f))
  .sort()
  .map((f) => join(HERE, f));

test('the fault tier on bundles: every fault file passes with the hub writing bundles', { timeout: 30 * 60_000 }, async (t) => {
  assert.ok(files.length >= 5, `the fault files: ${files.join(', ')}`);
  // A runner of its own: without NODE_TEST_CONTEXT, which makes a runner inside a test file report to its parent.
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=tap', ...files], {
    cwd: repoRoot,
    env: { ...env, POLICY_SYNC_TEST_WORK_SHAPE: 'bundled' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const passed = out.match(/^# pass (\d+)$/m)?.[1];
  const failed = [...out.matchAll(/^\s*not ok \d+ - (.+)$/gm)].map((m) => m[1]);
  t.diagnostic(`on bundles: ${passed ?? '?'} passed, ${failed.length} failed`);
  assert.deepEqual(failed, [], `fault tests failing on bundles:\n${out.slice(-20_000)}`);
  assert.equal(code, 0, out.slice(-20_000));
  assert.ok(Number(passed) >= files.length, `at least one test per file passed: ${passed}`);
});
