import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SHELLS } from './completion.ts';
import { completionModel, completionScript } from './completion.ts';
import { buildProgram, PROGRAM_NAMES } from './program.ts';

const model = completionModel(buildProgram(), PROGRAM_NAMES);

function scriptFile(shell: (typeof SHELLS)[number]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'completion-')), `policy-sync.${shell}`);
  writeFileSync(file, completionScript(model, shell));
  return file;
}

function installed(shell: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
}

test('the model is the program: every command, its flags and their choices', () => {
  assert.deepEqual(model.commands.map((c) => c.name), ['hub', 'spoke', 'status', 'explain', 'wait', 'diff', 'completion']);
  const status = model.commands.find((c) => c.name === 'status')!;
  const output = status.options.find((o) => o.long === '--output')!;
  assert.deepEqual([output.short, output.takesValue, output.choices], ['-o', true, ['table', 'wide', 'json', 'yaml', 'name']]);
  for (const flag of ['--namespace', '--all-namespaces', '--context', '--kubeconfig', '--watch', '--help']) assert.ok(status.options.some((o) => o.long === flag), flag);
  assert.deepEqual(model.commands.find((c) => c.name === 'wait')!.options.find((o) => o.long === '--for')!.choices, ['enforced', 'synced']);
  assert.deepEqual(model.commands.find((c) => c.name === 'completion')!.argChoices, ['bash', 'zsh', 'fish']);
});

test('bash: valid (bash -n), and completes commands, flags and flag values', () => {
  const file = scriptFile('bash');
  execFileSync('bash', ['-n', file]);
  const complete = (...words: string[]): string[] => {
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const out = execFileSync('bash', ['-c', `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _policy_sync_complete; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
    return out.split('\n').filter((l) => l !== '');
  };
  assert.deepEqual(complete('policy-sync', 'st'), ['status']);
  assert.deepEqual(complete('policy-sync', 'status', '-o', ''), ['table', 'wide', 'json', 'yaml', 'name']);
  assert.deepEqual(complete('policy-sync', 'status', '--all'), ['--all-namespaces']);
  assert.deepEqual(complete('kubectl-policy_sync', 'wait', '--for', '=', ''), ['enforced', 'synced']);
  assert.deepEqual(complete('policy-sync', 'completion', 'z'), ['zsh']);
  assert.deepEqual(complete('policy-sync', 'wait', '-n', ''), [], 'no fixed values for a namespace');
  assert.match(execFileSync('bash', ['-c', `source '${file}'; complete -p policy-sync kubectl-policy_sync`], { encoding: 'utf8' }), /complete -F _policy_sync_complete policy-sync\ncomplete -F _policy_sync_complete kubectl-policy_sync/);
});

test('zsh: a #compdef function with _arguments per command (zsh -n where zsh is installed)', () => {
  const text = completionScript(model, 'zsh');
  assert.match(text, /^#compdef policy-sync kubectl-policy_sync\n/);
  assert.match(text, /'\(-o --output\)'\{-o,--output\}'\[[^\]]*\]:value:\(table wide json yaml name\)'/);
  assert.match(text, /wait\) _arguments .*'--for\[[^\]]*\]:value:\(enforced synced\)'/);
  assert.match(text, /compdef _policy_sync policy-sync kubectl-policy_sync\n$/);
  // Every quote opened is closed: the line-level quoting the generator relies on.
  for (const line of text.split('\n')) assert.equal((line.match(/'/g) ?? []).length % 2, 0, line);
  if (installed('zsh')) execFileSync('zsh', ['-n', scriptFile('zsh')]);
});

test('fish: complete lines per command and flag (fish -n where fish is installed)', () => {
  const text = completionScript(model, 'fish');
  assert.match(text, /^complete -c policy-sync -n '__fish_use_subcommand' -a status -d '[^']+'$/m);
  assert.match(text, /^complete -c kubectl-policy_sync -n '__fish_seen_subcommand_from status' -s o -l output -x -a 'table wide json yaml name' -d '[^']+'$/m);
  assert.match(text, /^complete -c policy-sync -n '__fish_seen_subcommand_from wait' -l for -x -a 'enforced synced' -d '[^']+'$/m);
  for (const line of text.split('\n')) assert.equal((line.match(/'/g) ?? []).length % 2, 0, line);
  if (installed('fish')) execFileSync('fish', ['-n', scriptFile('fish')]);
});
