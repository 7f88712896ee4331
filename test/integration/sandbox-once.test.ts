// The sandbox's components run once (sandbox.run's `once`: the benchmark's controllers): one killed midway — its
// run interrupted — is forgotten by the next `up` rather than started again, which failed that `up` (the
// component's flags were its run's own). A component run without `once` is started again, as before.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { freePort } from '../../testkit/sandbox/ports.ts';
import { testSandbox, testSandboxRoot } from '../../testkit/test-sandbox.ts';

let sandbox: Sandbox | undefined;

after(async () => {
  for (const name of ['test/once', 'test/again']) await sandbox?.remove(name, 2_000);
});

/** A process that serves /healthz on `port` until killed. */
async function server(sandbox: Sandbox, name: string, once: boolean) {
  const port = await freePort();
  const script = `require('node:http').createServer((_, res) => res.end('ok')).listen(${port}, '127.0.0.1')`;
  return sandbox.run({ name, command: process.execPath, args: ['-e', script], log: join(sandbox.layout.logs, `${name.replace('/', '-')}.log`) }, { url: `http://127.0.0.1:${port}/healthz` }, 30_000, { once });
}

test('a component run once and killed is forgotten by the next up; one run without once is started again', async () => {
  sandbox = await testSandbox();
  const once = await server(sandbox, 'test/once', true);
  const again = await server(sandbox, 'test/again', false);
  for (const p of [once, again]) process.kill(p.pid, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 500));
  const logs: string[] = [];
  sandbox = await Sandbox.up({ root: testSandboxRoot, log: (m) => logs.push(m) });
  const names = (await sandbox.status()).map((c) => c.name);
  assert.ok(!names.includes('test/once'), `forgotten: ${names.join(', ')}`);
  assert.ok(logs.some((m) => m.includes('test/once') && m.includes('run once')), logs.join('\n'));
  const restarted = (await sandbox.status()).find((c) => c.name === 'test/again');
  assert.equal(restarted?.running, true, 'run without once: started again by up');
  assert.notEqual(restarted?.pid, again.pid);
});
