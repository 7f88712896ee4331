// The version `--version` prints: package.json's, read at run time from the nearest package.json named
// policy-sync above the module (two levels up from src/cli under tsx, and from dist/cli in the image,
// which ships package.json beside dist), so the version is written in one place only.
import { readFileSync } from 'node:fs';

export function packageVersion(from: URL = new URL('.', import.meta.url)): string {
  for (let dir = from; ; dir = new URL('..', dir)) {
    const file = new URL('package.json', dir);
    try {
      const { name, version } = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (name === 'policy-sync' && typeof version === 'string' && version !== '') return version;
    } catch {
      // No package.json here (or not ours): look further up.
    }
    if (new URL('..', dir).href === dir.href) throw new Error(`no package.json of policy-sync above ${from.pathname}`);
  }
}
