// One version, package.json's, everywhere a release writes one: the CLI's --version, the image tag of the
// kustomize bases, the addon's image, the Helm chart's version and appVersion, the image's OCI labels, the
// CHANGELOG. `npx tsx hack/set-version.ts <x.y.z>` writes them all; this file fails when one disagrees.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { ADDON_CONFIG, IMAGE, KUSTOMIZATIONS, SEMVER, replaceOnce } from '../../hack/set-version.ts';
import { readPackage } from '../../hack/gen-chart.ts';
import { repoRoot } from '../../testkit/sandbox/layout.ts';

const pkg = readPackage();
const version = pkg.version;
const read = (file: string): string => readFileSync(join(repoRoot, file), 'utf8');

test('package.json\'s version is a semantic version, and package-lock.json agrees', () => {
  assert.match(version, SEMVER);
  const lock = JSON.parse(read('package-lock.json')) as { version: string; packages: Record<string, { version?: string }> };
  assert.equal(lock.version, version);
  assert.equal(lock.packages['']?.version, version);
});

test('the CLI prints package.json\'s version', () => {
  const run = spawnSync(process.execPath, [join(repoRoot, 'bin/policy-sync.js'), '--version'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), version);
});

test('the kustomize bases tag the image with the version, and nothing in deploy/ says :latest', () => {
  for (const file of KUSTOMIZATIONS) {
    const k = parse(read(file)) as { images?: { name: string; newTag?: string }[] };
    assert.deepEqual(k.images?.filter((i) => i.name === IMAGE).map((i) => i.newTag), [version], file);
  }
  const files = readdirSync(join(repoRoot, 'deploy'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  for (const e of files) {
    const file = relative(repoRoot, join(e.parentPath, e.name));
    assert.doesNotMatch(read(file), /:latest\b|newTag: latest/, `${file} names a :latest image`);
  }
});

test('the addon runs the version\'s image: the AddOnTemplate and the AddOnDeploymentConfig registries', () => {
  const template = parse(read('deploy/addon/addontemplate.yaml')) as {
    spec: { agentSpec: { workload: { manifests: { kind: string; spec?: { template?: { spec?: { containers: { image: string }[] } } } }[] } } };
  };
  const images = template.spec.agentSpec.workload.manifests.filter((m) => m.kind === 'Deployment').flatMap((m) => m.spec?.template?.spec?.containers.map((c) => c.image) ?? []);
  assert.deepEqual(images, [`${IMAGE}:${version}`]);
  const config = parseAllDocuments(read(ADDON_CONFIG))[0]?.toJS() as { spec: { registries: { source: string; mirror: string }[] } };
  assert.deepEqual(config.spec.registries, [{ source: `${IMAGE}:${version}`, mirror: `${IMAGE}:${version}` }]);
});

test('the Helm chart\'s version and appVersion are the version', () => {
  const chart = parse(read('charts/policy-sync/Chart.yaml')) as { version: string; appVersion: string; name: string };
  assert.equal(chart.name, pkg.name);
  assert.equal(chart.version, version);
  assert.equal(chart.appVersion, version);
});

test('the image\'s OCI labels: version (the Dockerfile\'s VERSION), source and licenses', () => {
  const dockerfile = read('Dockerfile');
  // Labels of the final stage only: the build stage's do not reach the image.
  const final = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  assert.match(final, new RegExp(`\\nARG VERSION=${version.replaceAll('.', '\\.')}\\n`));
  const labels = new Map([...final.matchAll(/(org\.opencontainers\.image\.[a-z]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
  assert.equal(labels.get('org.opencontainers.image.version'), '${VERSION}');
  assert.equal(labels.get('org.opencontainers.image.licenses'), pkg.license);
  assert.match(labels.get('org.opencontainers.image.source') ?? '', /^https:\/\/github\.com\//);
  assert.equal(labels.get('org.opencontainers.image.title'), pkg.name);
});

test('CHANGELOG.md has an entry for the version, and LICENSE is the license package.json names', () => {
  assert.match(read('CHANGELOG.md'), new RegExp(`\\n## \\[${version.replaceAll('.', '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}\\n`));
  assert.equal(pkg.license, 'Apache-2.0');
  const license = read('LICENSE');
  assert.match(license, /^\s+Apache License\n\s+Version 2\.0, January 2004\n/);
  assert.match(license, /END OF TERMS AND CONDITIONS/);
});

test('set-version replaces exactly one occurrence, and refuses a pattern found twice or not at all', () => {
  assert.equal(replaceOnce('f', 'a\n    newTag: 1.0.0\nb', /\n {4}newTag: (\S+)(?=\n)/, '1.1.0'), 'a\n    newTag: 1.1.0\nb');
  assert.throws(() => replaceOnce('f', 'x\n    newTag: 1\n    newTag: 2\n', /\n {4}newTag: (\S+)(?=\n)/, '3.0.0'), /found 2/);
  assert.throws(() => replaceOnce('f', 'nothing', /\n {4}newTag: (\S+)(?=\n)/, '3.0.0'), /found 0/);
  for (const bad of ['v1.0.0', '1.0', 'latest', '01.0.0']) assert.doesNotMatch(bad, SEMVER, bad);
  for (const good of ['0.1.0', '1.2.3-rc.1', '1.0.0+build.5']) assert.match(good, SEMVER, good);
});
