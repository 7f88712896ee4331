import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultNamespace } from './kubecontext.ts';

function kubeconfig(dir: string, name: string, current: string | undefined, contexts: Record<string, string | undefined>): string {
  const file = join(dir, name);
  const lines = [current ? `current-context: ${current}` : '', 'contexts:'];
  for (const [n, ns] of Object.entries(contexts)) lines.push(`- name: ${n}`, '  context:', '    cluster: c', ...(ns ? [`    namespace: ${ns}`] : []));
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

test('defaultNamespace: the context in use names it; --context picks another; none: default', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubecontext-'));
  const file = kubeconfig(dir, 'config', 'a', { a: 'alpha', b: 'beta', c: undefined });
  const noSa = join(dir, 'no-service-account');
  assert.equal(defaultNamespace({ kubeconfig: file, serviceAccountDir: noSa }), 'alpha');
  assert.equal(defaultNamespace({ kubeconfig: file, context: 'b', serviceAccountDir: noSa }), 'beta');
  assert.equal(defaultNamespace({ kubeconfig: file, context: 'c', serviceAccountDir: noSa }), 'default');
  assert.equal(defaultNamespace({ kubeconfig: file, context: 'missing', serviceAccountDir: noSa }), 'default');
});

test('defaultNamespace: $KUBECONFIG files merged as kubectl merges them, the first to name a context wins', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubecontext-'));
  const first = kubeconfig(dir, 'one', undefined, { a: 'from-one' });
  const second = kubeconfig(dir, 'two', 'a', { a: 'from-two', b: 'beta' });
  const env = { KUBECONFIG: [first, join(dir, 'absent'), second].join(':'), HOME: dir };
  assert.equal(defaultNamespace({ env, serviceAccountDir: join(dir, 'none') }), 'from-one');
  assert.equal(defaultNamespace({ env, context: 'b', serviceAccountDir: join(dir, 'none') }), 'beta');
});

test('defaultNamespace: in a cluster without a kubeconfig, the service account\'s namespace', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubecontext-'));
  writeFileSync(join(dir, 'namespace'), 'policy-sync-system\n');
  assert.equal(defaultNamespace({ env: { HOME: join(dir, 'home') }, serviceAccountDir: dir }), 'policy-sync-system');
  assert.equal(defaultNamespace({ env: { HOME: join(dir, 'home') }, serviceAccountDir: join(dir, 'none') }), 'default');
});
