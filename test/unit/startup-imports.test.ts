// Importing @kubernetes/client-node costs ~75 MiB RSS and ~1 s (issue 11), so the binaries must not load it
// at start: only a kubeconfig user with a legacy `auth-provider` pulls it in, lazily. The CLI is run in a
// child process whose module resolve hook refuses client-node, naming the module that asked for it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

const root = fileURLToPath(new URL('../..', import.meta.url));

// Registered after tsx, so it sees every resolution (ESM and tsx-compiled TypeScript alike) first.
const refuseClientNode = `
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.includes('/@kubernetes/client-node/')) {
    throw new Error('refused to load client-node: ' + (context.parentURL ?? '(entry)') + ' imports ' + specifier);
  }
  return resolved;
}`;
const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(refuseClientNode)}`)});`;

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(register)}`, ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The guard's own line, not the stack around it. */
function refusal(stderr: string): string {
  return stderr.split('\n').find((l) => l.includes('refused to load client-node')) ?? stderr;
}

test('the guard itself catches an import of client-node', () => {
  const r = run(['--input-type=module', '-e', "await import('@kubernetes/client-node');"]);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /refused to load client-node/);
});

for (const args of [['--help'], ['hub', '--help'], ['spoke', '--help'], ['status', '--help']]) {
  test(`policy-sync ${args.join(' ')} does not load @kubernetes/client-node`, () => {
    const r = run(['src/cli/main.ts', ...args]);
    assert.equal(r.status, 0, refusal(r.stderr));
    assert.match(r.stdout, /Usage: policy-sync/);
  });
}

test('loading a kubeconfig and applying its credentials loads client-node only for an auth-provider user', () => {
  const dir = mkdtempSync(join(tmpdir(), 'startup-imports-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = (user: object): string => {
    const file = join(dir, `config-${Object.keys(user).join()}`);
    const doc = {
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    };
    writeFileSync(file, JSON.stringify(doc)); // JSON is YAML
    return file;
  };
  const applyScript = (file: string): string =>
    `const { loadKubeConfig } = await import('./src/kube/kubeconfig.ts'); await loadKubeConfig(${JSON.stringify(file)}).applyToHTTPSOptions({});`;

  const token = run(['--input-type=module', '-e', applyScript(kubeconfig({ token: 't' }))]);
  assert.equal(token.status, 0, refusal(token.stderr));
  const gcp = run(['--input-type=module', '-e', applyScript(kubeconfig({ 'auth-provider': { name: 'gcp', config: { 'access-token': 't' } } }))]);
  assert.notEqual(gcp.status, 0);
  assert.match(gcp.stderr, /refused to load client-node: file:\/\/.*\/src\/kube\/kubeconfig\.ts imports @kubernetes\/client-node/);
});
