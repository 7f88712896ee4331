// The `policy-sync` command (docs/architecture.md#components); the program is program.ts. Installed also as
// `kubectl-policy_sync`, so that kubectl finds it on PATH as the plugin `kubectl policy-sync`.
import { basename } from 'node:path';
import { CommanderError } from 'commander';
import { EXIT_USAGE } from './common.ts';
import { buildProgram, PROGRAM_NAMES } from './program.ts';

/** `kubectl policy-sync …` in usage lines when run as the plugin. */
function programName(): string {
  return basename(process.argv[1] ?? '').startsWith('kubectl-') ? 'kubectl policy-sync' : PROGRAM_NAMES[0];
}

try {
  await buildProgram(programName()).parseAsync(process.argv);
} catch (err) {
  // commander has printed its one-line message already; help and --version are not errors.
  if (!(err instanceof CommanderError)) throw err;
  process.exitCode = err.exitCode === 0 ? 0 : EXIT_USAGE;
}
