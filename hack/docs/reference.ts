// Generates the tables of docs/reference/ from the program: the commands and flags from the commander
// program, the params from the zod schema, the metrics from the prom-client registry, the annotations and
// labels from the key constants, the Events from a scan of the source (events.ts says why a scan). Each
// table is a marked section of a hand-written page (sections.ts); the prose around it is the author's.
// test/unit/docs-reference.test.ts fails when a committed page differs from what this writes.
//
//   npm run docs:reference              rewrite the generated sections of docs/reference/*.md
//   npm run docs:reference -- --check   exit 1 when a committed page differs from what would be written
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandsTable, ownFlagsTable, sharedFlagsTable } from './commands.ts';
import { eventsTable } from './events.ts';
import { keysTable } from './keys.ts';
import { metricsTable } from './metrics.ts';
import { paramsTable } from './params.ts';
import { fillSections, sectionIds } from './sections.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** The pages with generated sections, relative to the repository. */
export const REFERENCE_PAGES = ['docs/reference/commands.md', 'docs/reference/params.md', 'docs/reference/annotations.md', 'docs/reference/metrics.md', 'docs/reference/events.md'];

/** The text of generated section `id`. */
export async function renderSection(id: string): Promise<string> {
  const [what, arg] = id.split(':') as [string, string | undefined];
  switch (what) {
    case 'commands':
      return commandsTable();
    case 'shared-flags':
      return sharedFlagsTable(arg!);
    case 'flags':
      return ownFlagsTable(arg!);
    case 'params':
      return paramsTable();
    case 'keys':
      return keysTable();
    case 'metrics':
      return metricsTable(arg === 'own');
    case 'events':
      return eventsTable();
  }
  throw new Error(`no generated section ${id}`);
}

/** A page's text with every generated section rendered afresh. */
export async function renderPage(text: string): Promise<string> {
  const rendered = new Map<string, string>();
  for (const id of sectionIds(text)) rendered.set(id, await renderSection(id));
  return fillSections(text, (id) => rendered.get(id)!);
}

/** Each reference page: as committed, and as it would be written. */
export async function referencePages(): Promise<{ path: string; committed: string; rendered: string }[]> {
  const pages = [];
  for (const path of REFERENCE_PAGES) {
    const committed = readFileSync(join(ROOT, path), 'utf8');
    pages.push({ path, committed, rendered: await renderPage(committed) });
  }
  return pages;
}

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const page of await referencePages()) {
    if (page.rendered === page.committed) continue;
    if (check) {
      console.error(`${page.path} is out of date: run \`npx tsx hack/docs/reference.ts\``);
      stale++;
    } else {
      writeFileSync(join(ROOT, page.path), page.rendered);
      console.log(`wrote ${page.path}`);
    }
  }
  return stale === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exit(await main());
