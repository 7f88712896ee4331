// `hub` and `spoke` started with no usable kubeconfig: one fatal log line naming the flag, exit code 2 — what a pod's
// logs show an operator whose Deployment mounts none — and no stack trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

function run(args: string[], home: string): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home };
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', MAIN, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, out: stdout + stderr });
    });
  });
}

for (const command of ['hub', 'spoke']) {
  test(`${command} with no kubeconfig, or one with no current cluster: a fatal log line naming --kubeconfig, exit code 2, no stack`, async () => {
    const home = mkdtempSync(join(tmpdir(), 'controllerstart-'));
    const empty = join(home, 'empty.kubeconfig');
    writeFileSync(empty, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    for (const [args, problem] of [
      [[command], /no kubeconfig: pass --kubeconfig/],
      [[command, '--kubeconfig', empty], /no current cluster in the kubeconfig/],
    ] as const) {
      const { code, out } = await run([...args, '--metrics-bind-address', '0', '--health-probe-bind-address', '127.0.0.1:0'], home);
      assert.equal(code, 2, out);
      const lines = out.trim().split('\n');
      assert.equal(lines.length, 1, `one line:\n${out}`);
      const line = JSON.parse(lines[0]!) as { level: string; flag: string; problem: string; msg: string };
      assert.equal(line.level, 'fatal');
      assert.equal(line.flag, '--kubeconfig');
      assert.match(line.problem, problem);
      assert.equal(line.msg, 'cannot start: no usable kubeconfig');
    }
  });
}
