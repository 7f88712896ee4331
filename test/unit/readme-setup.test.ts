// The README starts with the two set-up commands that work on a fresh machine — the main job and the whole
// test suite — and CI runs exactly the README's test command, so the README cannot promise a command CI does
// not run.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');
const SET_UP = ['npm ci && npm run demo', 'npm ci && npm test'];

function firstCodeBlock(markdown: string): string[] {
  const block = /^```[a-z]*\n([\s\S]*?)^```$/m.exec(markdown);
  assert.ok(block, 'the README has a code block');
  return block[1]!.trimEnd().split('\n');
}

test('the README\'s first code block is the two set-up commands: the main job, then the whole test suite', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const commands = firstCodeBlock(readme).map((line) => line.replace(/\s+#.*$/, ''));
  assert.deepEqual(commands, SET_UP);
  assert.ok(readme.indexOf('## Set up') < readme.indexOf('```'), 'under "Set up"');
});

test('CI runs the README\'s test command', () => {
  const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
  const lines = ci.split('\n').map((l) => l.trim());
  assert.ok(lines.includes(SET_UP[1]!), `.ci/run runs \`${SET_UP[1]}\``);
});
