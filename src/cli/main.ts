// The `policy-sync` command: one program, one entry point per role (docs/architecture.md#components).
import { Command } from 'commander';
import { hubCommand } from './hub.ts';
import { spokeCommand } from './spoke.ts';
import { explainCommand, statusCommand } from './status.ts';

export function buildProgram(): Command {
  return new Command('policy-sync')
    .description('Sync Gateway API policies from a hub cluster to spoke clusters through OCM ManifestWorks')
    .version('0.1.0')
    .addCommand(hubCommand())
    .addCommand(spokeCommand())
    .addCommand(statusCommand())
    .addCommand(explainCommand());
}

await buildProgram().parseAsync(process.argv);
