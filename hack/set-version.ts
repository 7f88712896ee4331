// Releasing is one command: `npx tsx hack/set-version.ts <x.y.z>` writes the version everywhere it is written —
// package.json (and package-lock.json), the image tag of the kustomize bases (deploy/hub and deploy/spoke
// `images: newTag`), the agents' image in deploy/addon's AddOnDeploymentConfig, the Dockerfile's VERSION — then
// regenerates deploy/addon/addontemplate.yaml (hack/gen-addon.ts) and the Helm chart (hack/gen-chart.ts, whose
// version and appVersion are package.json's). The CLI's --version reads package.json at run time.
// test/unit/version.test.ts fails when any of them disagrees with package.json.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '../testkit/sandbox/layout.ts';
import { TEMPLATE_FILE, renderAddonTemplate } from './gen-addon.ts';
import { writeChart } from './gen-chart.ts';

/** Semantic Versioning 2.0.0, without a leading `v` (the image tag and the chart's version both take it as is). */
export const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

export const IMAGE = 'ghcr.io/kuadrant/policy-sync';
export const KUSTOMIZATIONS = ['deploy/hub/kustomization.yaml', 'deploy/spoke/kustomization.yaml'];
export const ADDON_CONFIG = 'deploy/addon/addondeploymentconfig.yaml';

/** A file's text with `pattern` (one match exactly, its last group the version) set to `version`. */
export function replaceOnce(file: string, text: string, pattern: RegExp, version: string): string {
  const matches = [...text.matchAll(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`))];
  if (matches.length !== 1) throw new Error(`${file}: expected one match of ${pattern}, found ${matches.length}`);
  return text.replace(pattern, (whole, old: string) => {
    // The group stands last in each pattern's match but a separator: its last occurrence is the value.
    const at = whole.lastIndexOf(old);
    return `${whole.slice(0, at)}${version}${whole.slice(at + old.length)}`;
  });
}

/** Where the version is written, each as a file and the pattern whose first group is the version. */
export const PLACES: { file: string; pattern: RegExp }[] = [
  ...KUSTOMIZATIONS.map((file) => ({ file, pattern: /\n {4}newTag: (\S+)(?=\n)/ })),
  { file: 'Dockerfile', pattern: /\nARG VERSION=(\S+)(?=\n)/ },
];

function edit(file: string, change: (text: string) => string): void {
  const path = join(repoRoot, file);
  writeFileSync(path, change(readFileSync(path, 'utf8')));
}

export function setVersion(version: string): void {
  if (!SEMVER.test(version)) throw new Error(`"${version}" is not a semantic version x.y.z (no leading v)`);
  edit('package.json', (t) => replaceOnce('package.json', t, /\n {2}"version": "([^"]+)",(?=\n)/, version));
  edit('package-lock.json', (t) => {
    const lock = JSON.parse(t) as { version: string; packages: Record<string, { version?: string }> };
    lock.version = version;
    if (lock.packages['']) lock.packages[''].version = version;
    return `${JSON.stringify(lock, null, 2)}\n`;
  });
  for (const { file, pattern } of PLACES) edit(file, (t) => replaceOnce(file, t, pattern, version));
  // The registries entry's source is the template's image (replaced by the addon manager), its mirror the image the agents run.
  edit(ADDON_CONFIG, (t) => t.replaceAll(new RegExp(`${IMAGE.replaceAll('.', '\\.')}:\\S+`, 'g'), `${IMAGE}:${version}`));
  writeFileSync(TEMPLATE_FILE, renderAddonTemplate());
  writeChart();
}

function main(): number {
  const version = process.argv[2];
  if (version === undefined || process.argv.length > 3) {
    console.error('usage: npx tsx hack/set-version.ts <x.y.z>');
    return 2;
  }
  try {
    setVersion(version);
  } catch (e) {
    console.error((e as Error).message);
    return 1;
  }
  console.log(`version ${version} written: package.json, package-lock.json, ${PLACES.map((p) => p.file).join(', ')}, ${ADDON_CONFIG}; addon template and chart regenerated`);
  return 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exit(main());
