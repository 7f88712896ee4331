// The `policy-sync` program: its commands, one entry point per role (docs/architecture.md#components), and
// the commands that read the hub (status, explain, wait, diff) and print shell completion. main.ts runs it.
import { Argument, Command } from 'commander';
import { completionModel, completionScript, SHELLS, type Shell } from './completion.ts';
import { diffCommand } from './diffcommand.ts';
import { hubCommand } from './hub.ts';
import { spokeCommand } from './spoke.ts';
import { explainCommand, statusCommand } from './statuscommand.ts';
import { packageVersion } from './version.ts';
import { waitCommand } from './waitcommand.ts';

/** The names the program answers to: its own, and the kubectl plugin's. */
export const PROGRAM_NAMES = ['policy-sync', 'kubectl-policy_sync'] as const;

function completionCommand(program: () => Command): Command {
  return new Command('completion')
    .description('print a shell completion script: source <(policy-sync completion bash), zsh likewise, policy-sync completion fish | source')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action((shell: Shell) => {
      process.stdout.write(completionScript(completionModel(program(), PROGRAM_NAMES), shell));
    });
}

/** Every command reports a usage mistake by exit code 2 (common.ts), as the commands' own errors do. */
function exitOverride(command: Command): Command {
  command.exitOverride();
  for (const sub of command.commands) exitOverride(sub);
  return command;
}

export function buildProgram(name: string = PROGRAM_NAMES[0]): Command {
  const program: Command = new Command(name)
    .description('Sync Gateway API policies from a hub cluster to spoke clusters through OCM ManifestWorks')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addCommand(hubCommand())
    .addCommand(spokeCommand())
    .addCommand(statusCommand())
    .addCommand(explainCommand())
    .addCommand(waitCommand())
    .addCommand(diffCommand())
    .addCommand(completionCommand(() => program));
  return exitOverride(program);
}

