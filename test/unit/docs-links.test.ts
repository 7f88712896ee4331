// Every link in the docs resolves: the relative links and anchors (GitHub's heading slugs) of README.md,
// CHANGELOG.md and docs/**, and the `docs/<page>.md#<anchor>` references code comments make. The checker is
// hack/docs/links.ts.
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { anchors, brokenCodeReferences, brokenMarkdownLinks, filesUnder, missingNamedFiles, slug } from '../../hack/docs/links.ts';

const ROOT = join(import.meta.dirname, '..', '..');

function markdownPages(): string[] {
  return [join(ROOT, 'README.md'), join(ROOT, 'CHANGELOG.md'), ...filesUnder(join(ROOT, 'docs'), (n) => n.endsWith('.md'))];
}

/** The code that may name docs: this file aside, whose references are data. */
function codeFiles(): string[] {
  const self = join(import.meta.dirname, 'docs-links.test.ts');
  return ['src', 'testkit', 'test', 'hack', 'deploy'].flatMap((d) => filesUnder(join(ROOT, d), (n) => /\.(ts|js|sh|ya?ml)$/.test(n))).filter((f) => f !== self);
}

test('every relative link and anchor in README.md, CHANGELOG.md and docs/ resolves', () => {
  const broken = brokenMarkdownLinks(ROOT, markdownPages());
  assert.deepEqual(
    broken.map((b) => `${b.file}:${b.line}: ${b.target}: ${b.why}`),
    [],
  );
});

test('every file the docs name exists', () => {
  assert.deepEqual(
    missingNamedFiles(ROOT, markdownPages()).map((b) => `${b.file}:${b.line}: ${b.target}`),
    [],
  );
});

test('every docs reference in the code resolves', () => {
  assert.deepEqual(
    brokenCodeReferences(ROOT, codeFiles()).map((b) => `${b.file}:${b.line}: ${b.target}: ${b.why}`),
    [],
  );
});

test('anchors are GitHub\'s heading slugs: case, punctuation, code, links, repeats', () => {
  assert.equal(slug('Local policies win: Overridden, PartiallyEnforced, OverridesLocal'), 'local-policies-win-overridden-partiallyenforced-overrideslocal');
  assert.equal(slug("Tenants' lanes"), 'tenants-lanes');
  assert.equal(slug('`status`, `explain`, `wait` and `diff`'), 'status-explain-wait-and-diff');
  assert.equal(slug('The spoke side, from the hub: an OCM addon'), 'the-spoke-side-from-the-hub-an-ocm-addon');
  assert.equal(slug('See [the hub](#the-hub) now'), 'see-the-hub-now');
  assert.deepEqual([...anchors('# A\n## A\n```\n# not a heading\n```\n### b_c\n<a id="kept"></a>\n')], ['a', 'a-1', 'b_c', 'kept']);
});

test('the checker finds a missing page, a missing anchor and a bad code reference, and passes good ones', () => {
  const root = mkdtempSync(join(tmpdir(), 'docs-links-'));
  mkdirSync(join(root, 'docs'));
  writeFileSync(join(root, 'README.md'), '# Top\n\n## Set up\n\n[ok](docs/a.md#a-heading) [bad](docs/a.md#nowhere) [gone](docs/b.md) [web](https://example.com) `[code](docs/none.md)`\n');
  writeFileSync(join(root, 'docs', 'a.md'), '# A heading\n\n[up](../README.md#set-up) [self](#a-heading) [not](#not-here)\n');
  writeFileSync(join(root, 'code.ts'), '// docs/a.md#a-heading and README.md#set-up are fine, docs/a.md#gone is not\n');
  const broken = brokenMarkdownLinks(root, [join(root, 'README.md'), join(root, 'docs', 'a.md')]);
  assert.deepEqual(
    broken.map((b) => `${b.file}:${b.line} ${b.target}`),
    ['README.md:5 docs/a.md#nowhere', 'README.md:5 docs/b.md', 'docs/a.md:3 #not-here'],
  );
  assert.deepEqual(
    brokenCodeReferences(root, [join(root, 'code.ts')]).map((b) => b.target),
    ['docs/a.md#gone'],
  );
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'here.ts'), '');
  writeFileSync(join(root, 'docs', 'files.md'), '`src/here.ts`, `here.ts`, `src/gone.ts`, `gone.ts`, `src/**/*.ts`, `<name>.ts`\n```\nsrc/fenced.ts\n```\n');
  assert.deepEqual(
    missingNamedFiles(root, [join(root, 'docs', 'files.md')]).map((b) => b.target),
    ['src/gone.ts', 'gone.ts'],
  );
});
