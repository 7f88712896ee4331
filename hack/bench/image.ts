// How the container image runs the controller, so that the bench measures that process and not another.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../testkit/sandbox/layout.ts';

/** The node flags of the Dockerfile's `ENTRYPOINT ["node", <flags>..., <script>]`. */
export function imageNodeFlags(dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8')): string[] {
  const line = dockerfile.split('\n').find((l) => l.startsWith('ENTRYPOINT '));
  const argv: unknown = line ? JSON.parse(line.slice('ENTRYPOINT '.length)) : undefined;
  if (!Array.isArray(argv) || argv[0] !== 'node') throw new Error('the Dockerfile has no ENTRYPOINT ["node", ...]');
  return argv.slice(1).filter((a): a is string => typeof a === 'string' && a.startsWith('--'));
}
