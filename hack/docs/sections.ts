// Generated sections inside hand-written pages: the text between
//   <!-- BEGIN GENERATED <id>: npx tsx hack/docs/reference.ts -->
//   <!-- END GENERATED <id> -->
// is the program's, the rest the author's. Replacing a section keeps the markers and everything around them.

const BEGIN = /<!-- BEGIN GENERATED ([a-z0-9:-]+): npx tsx hack\/docs\/reference\.ts -->\n/g;

export function beginMarker(id: string): string {
  return `<!-- BEGIN GENERATED ${id}: npx tsx hack/docs/reference.ts -->`;
}

export function endMarker(id: string): string {
  return `<!-- END GENERATED ${id} -->`;
}

/** The ids of the generated sections a page holds, in order. */
export function sectionIds(page: string): string[] {
  return [...page.matchAll(BEGIN)].map((m) => m[1]!);
}

/** The text of section `id` in `page`, without its markers; undefined when the page has no such section. */
export function sectionText(page: string, id: string): string | undefined {
  const begin = page.indexOf(`${beginMarker(id)}\n`);
  if (begin < 0) return undefined;
  const from = begin + beginMarker(id).length + 1;
  const end = page.indexOf(endMarker(id), from);
  if (end < 0) throw new Error(`generated section ${id} has no end marker`);
  return page.slice(from, end);
}

/** `page` with each generated section's text replaced by `render(id)`. */
export function fillSections(page: string, render: (id: string) => string): string {
  let out = page;
  for (const id of sectionIds(page)) {
    const old = sectionText(out, id)!;
    const at = out.indexOf(`${beginMarker(id)}\n`) + beginMarker(id).length + 1;
    out = out.slice(0, at) + ensureNewline(render(id)) + out.slice(at + old.length);
  }
  return out;
}

function ensureNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}
