// Checks that links resolve: the relative links and anchors of Markdown pages (GitHub's heading slugs), and
// the `docs/<page>.md#<anchor>` references that comments in the code make. test/unit/docs-links.test.ts runs
// it over README.md, CHANGELOG.md, docs/ and the code.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export interface BrokenLink {
  /** Where the link is: a path relative to the root, and its line. */
  file: string;
  line: number;
  target: string;
  why: string;
}

/** Markdown outside fenced code blocks, line by line; fenced lines are blank, so line numbers hold. */
function outsideFences(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence === undefined && open) {
      fence = open[1]![0]!.repeat(open[1]!.length);
      return '';
    }
    if (fence !== undefined) {
      if (line.trim().startsWith(fence)) fence = undefined;
      return '';
    }
    return line;
  });
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown page offers: its headings' slugs (repeats numbered as GitHub does) and explicit ids. */
export function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of outsideFences(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  }
  return out;
}

/** The links of a Markdown page, outside code: `[text](target)` and `<a href="target">`. */
export function links(markdown: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  outsideFences(markdown).forEach((raw, i) => {
    const line = raw.replace(/(`+)[^`]*?\1/g, ''); // code spans hold no links
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: i + 1, target: m[1]! });
    for (const m of line.matchAll(/<a\s+href="([^"]+)"/g)) out.push({ line: i + 1, target: m[1]! });
  });
  return out;
}

const anchorCache = new Map<string, Set<string>>();

function anchorsOf(file: string): Set<string> {
  let found = anchorCache.get(file);
  if (!found) {
    found = anchors(readFileSync(file, 'utf8'));
    anchorCache.set(file, found);
  }
  return found;
}

/** Why `target` (a path, `#anchor`, or both) does not resolve from `fromDir`; undefined when it does. */
export function unresolved(fromFile: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:: not ours to check
  const hash = target.indexOf('#');
  const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const file = path === '' ? fromFile : resolve(dirname(fromFile), path);
  if (!existsSync(file)) return `no such file ${path}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `#${anchor} into a file that is not Markdown`;
  return anchorsOf(file).has(anchor) ? undefined : `no heading #${anchor} in ${relative(dirname(fromFile), file) || path}`;
}

/** The broken links of Markdown pages. */
export function brokenMarkdownLinks(root: string, files: readonly string[]): BrokenLink[] {
  return files.flatMap((file) =>
    links(readFileSync(file, 'utf8')).flatMap(({ line, target }) => {
      const why = unresolved(file, target);
      return why === undefined ? [] : [{ file: relative(root, file), line, target, why }];
    }),
  );
}

/** `docs/<page>.md#<anchor>` and `README.md#<anchor>` references in code comments, relative to the root. */
const CODE_REFERENCE = /(?<![\w./-])((?:\.\.\/)*(?:docs\/[\w./-]+\.md|README\.md|CHANGELOG\.md))(#[\w-]+)?/g;

/** The references code makes to the docs that do not resolve from the repository root. */
export function brokenCodeReferences(root: string, files: readonly string[]): BrokenLink[] {
  const out: BrokenLink[] = [];
  for (const file of files) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        for (const m of text.matchAll(CODE_REFERENCE)) {
          const path = m[1]!.replace(/^(\.\.\/)+/, '');
          const target = `${path}${m[2] ?? ''}`;
          const why = unresolved(join(root, 'README.md'), target);
          if (why !== undefined) out.push({ file: relative(root, file), line: i + 1, target, why });
        }
      });
  }
  return out;
}

/** The files under `dir` (recursively) whose names `keep` accepts, skipping node_modules and dot folders. */
export function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules' || e.name.startsWith('.')) return [];
    const path = join(dir, e.name);
    return e.isDirectory() ? filesUnder(path, keep) : keep(e.name) ? [path] : [];
  });
}

/** Top-level folders whose paths the docs name in code spans. */
const NAMED_ROOTS = /^(?:src|testkit|hack|test|deploy|charts|crds|examples|bin|docs)\//;

/**
 * The files the docs name that do not exist: a code span holding a repository path (`src/hub/routes.ts`), or a
 * bare source file name (`routes.ts`) that no file of the repository has. Spans with wildcards or placeholders
 * (`*`, `<…>`, `{…}`, `…`) name no one file and are skipped.
 */
export function missingNamedFiles(root: string, files: readonly string[]): BrokenLink[] {
  const names = new Set(['src', 'testkit', 'hack', 'test', 'deploy', 'bin', 'charts'].flatMap((d) => filesUnder(join(root, d), () => true)).map((f) => f.slice(f.lastIndexOf('/') + 1)));
  const out: BrokenLink[] = [];
  for (const file of files) {
    outsideFences(readFileSync(file, 'utf8')).forEach((line, i) => {
      for (const m of line.matchAll(/`([^`\s]+)`/g)) {
        const span = m[1]!.replace(/[.,:;)]+$/, '');
        if (/[*<>{}…]/.test(span)) continue;
        const missing = NAMED_ROOTS.test(span) ? !existsSync(join(root, span)) : /^[\w-]+\.(?:ts|js|sh)$/.test(span) && !names.has(span);
        if (missing) out.push({ file: relative(root, file), line: i + 1, target: span, why: 'no such file in the repository' });
      }
    });
  }
  return out;
}
