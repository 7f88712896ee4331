// The sandbox's pid check: a recorded pid counts as ours only while it runs the program we started.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runsCommand } from '../../testkit/sandbox/processes.ts';

const apiserver = { command: '/work/.local/bin/kube-apiserver' };
const stat = (comm: string, state: string): string => `4242 (${comm}) ${state} 1 4242 4242 0 -1 4194560`;

test('a live process running the command is ours; a zombie or a dead one is not', () => {
  assert.equal(runsCommand(stat('kube-apiserver', 'S'), '/work/.local/bin/kube-apiserver\0--v=1\0', apiserver), true);
  assert.equal(runsCommand(stat('kube-apiserver', 'Z'), '', apiserver), false);
  assert.equal(runsCommand(stat('kube-apiserver', 'X'), '', apiserver), false);
});

test('a reused pid running another program is not ours', () => {
  assert.equal(runsCommand(stat('bash', 'S'), '/bin/bash\0', apiserver), false);
  assert.equal(runsCommand(stat('kube-apiserver', 'S'), '/other/kube-apiserver\0', apiserver), false, 'the same name elsewhere');
});

test('a process in the middle of its exec (no argv yet) is judged by its name: ours when it is the new program', () => {
  assert.equal(runsCommand(stat('kube-apiserver', 'R'), '', apiserver), true);
  assert.equal(runsCommand(stat('node', 'R'), '', apiserver), false);
  // The kernel keeps the first 15 bytes of the file name.
  assert.equal(runsCommand(stat('kube-controller', 'R'), '', { command: '/bin/kube-controller-manager' }), true);
  assert.equal(runsCommand(stat('sh', 'R'), '', { command: '/usr/bin/unshare', execs: ['/bin/sh', '/bin/envoy-gateway'] }), true);
});

test('a command name with spaces and parentheses is read up to the last parenthesis', () => {
  assert.equal(runsCommand(stat('a) b', 'S'), '/x/a) b\0', { command: '/x/a) b' }), true);
  assert.equal(runsCommand(stat('a) b', 'Z'), '', { command: '/x/a) b' }), false);
});
