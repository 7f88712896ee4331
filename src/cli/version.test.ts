import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageVersion } from './version.ts';

test('packageVersion: package.json\'s version, read from the sources\' place', () => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  assert.equal(packageVersion(), version);
});

test('packageVersion: from a compiled tree, the nearest package.json of policy-sync above it (not another package\'s)', () => {
  const root = mkdtempSync(join(tmpdir(), 'version-'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'policy-sync', version: '9.8.7' }));
  mkdirSync(join(root, 'build', 'cli'), { recursive: true });
  writeFileSync(join(root, 'build', 'package.json'), JSON.stringify({ name: 'something-else', version: '1.0.0' }));
  assert.equal(packageVersion(pathToFileURL(join(root, 'build', 'cli') + '/')), '9.8.7');
});
