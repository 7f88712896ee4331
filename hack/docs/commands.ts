// Reference tables of the `policy-sync` commands and their flags, read from the commander program itself
// (src/cli/program.ts): a flag added, renamed or given another default changes these tables.
import type { Command, Option } from 'commander';
import { buildProgram } from '../../src/cli/program.ts';
import { code, table } from './markdown.ts';

/** Commands whose shared flags are told once, before each command's own. */
export const FLAG_GROUPS: Record<string, readonly string[]> = {
  controllers: ['hub', 'spoke'],
  readers: ['status', 'explain', 'wait', 'diff'],
};

function commands(): readonly Command[] {
  return buildProgram().commands;
}

function command(name: string): Command {
  const found = commands().find((c) => c.name() === name);
  if (!found) throw new Error(`policy-sync has no command ${name}`);
  return found;
}

function defaultOf(o: Option): string {
  if (o.mandatory) return 'required';
  // A description of a default in words (`$POD_NAMESPACE or policy-sync-system`) is prose; one word is a value.
  if (o.defaultValueDescription !== undefined) return /\s/.test(o.defaultValueDescription) ? o.defaultValueDescription : code(o.defaultValueDescription);
  const value: unknown = o.defaultValue;
  // A switch given no default is off; a `--no-…` switch turns off what is on.
  if (value === undefined) return o.required || o.optional || o.negate ? '' : 'off';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (typeof value === 'string' || typeof value === 'number') return code(String(value));
  return code(JSON.stringify(value));
}

function describe(o: Option): string {
  const choices = o.argChoices && o.argChoices.length > 0 ? ` (${o.argChoices.map(code).join(', ')})` : '';
  return `${o.description}${choices}`;
}

/** Same flags, same words, same default: one flag for every command that has it. */
function signature(o: Option): string {
  return JSON.stringify([o.flags, o.description, defaultOf(o)]);
}

function flagTable(options: readonly Option[]): string {
  if (options.length === 0) return '_none_';
  return table(
    ['flag', 'default', ''],
    options.filter((o) => !o.hidden).map((o) => [code(o.flags), defaultOf(o), describe(o)]),
  );
}

/** The table of commands: usage and what each does. */
export function commandsTable(): string {
  const program = buildProgram();
  const rows = program.commands.map((c) => [code(`${program.name()} ${c.name()} ${c.usage()}`), c.description()]);
  rows.push([code(`${program.name()} ${program.options.map((o) => o.flags).join(', ')}`), program.options.map((o) => o.description).join('; ')]);
  return table(['command', 'does'], rows);
}

/** The flags every command of a group has alike. */
export function sharedFlagsTable(group: string): string {
  const names = FLAG_GROUPS[group];
  if (!names) throw new Error(`no flag group ${group}`);
  const [first, ...rest] = names.map(command);
  const shared = first!.options.filter((o) => rest.every((c) => c.options.some((p) => signature(p) === signature(o))));
  return flagTable(shared);
}

/** A command's own flags: those not shared alike by every command of its group. */
export function ownFlagsTable(name: string): string {
  const group = Object.values(FLAG_GROUPS).find((g) => g.includes(name)) ?? [name];
  const others = group.filter((n) => n !== name).map(command);
  const own = command(name).options.filter((o) => others.length === 0 || !others.every((c) => c.options.some((p) => signature(p) === signature(o))));
  return flagTable(own);
}
