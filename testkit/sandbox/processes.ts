// Starting and stopping the sandbox's processes. Each is started detached (its own process group, output
// to its own log) so that it outlives the command that started it, and is stopped later by the pid
// recorded in the sandbox state. A pid is only ever signalled after checking that it still runs the
// binary we started: pids are reused, and `down` must never hit an unrelated process.
import { spawn } from 'node:child_process';
import { openSync, closeSync, readFileSync, existsSync, writeSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ProcessSpec {
  /** Component name, e.g. `etcd`, `apiserver/hub`, `work-agent/spoke-1`. */
  name: string;
  command: string;
  args: string[];
  log: string;
  env?: Record<string, string>;
  /**
   * When `command` is a launcher that ends by exec'ing other programs on the same pid (unshare → /bin/sh →
   * envoy-gateway): those programs, in order. The pid counts as ours while it runs any of them.
   */
  execs?: string[];
}

export interface RunningProcess extends ProcessSpec {
  pid: number;
  startedAt: string;
}

export function startProcess(spec: ProcessSpec): RunningProcess {
  const out = openSync(spec.log, 'a');
  try {
    writeSync(out, `==== ${new Date().toISOString()} starting ${spec.name}: ${spec.command} ${spec.args.join(' ')}\n`);
    const child = spawn(spec.command, spec.args, {
      detached: true,
      stdio: ['ignore', out, out],
      env: { ...process.env, ...spec.env },
    });
    if (child.pid === undefined) throw new Error(`could not start ${spec.name} (${spec.command})`);
    child.unref();
    return { ...spec, pid: child.pid, startedAt: new Date().toISOString() };
  } finally {
    closeSync(out);
  }
}

/** True while `pid` is alive (not a zombie) and still runs `command` (or one of the programs it execs). */
export function isRunning(proc: Pick<RunningProcess, 'pid' | 'command' | 'execs'>): boolean {
  const stat = `/proc/${proc.pid}/stat`;
  if (!existsSync(stat)) return false;
  try {
    return runsCommand(readFileSync(stat, 'utf8'), readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8'), proc);
  } catch {
    return false;
  }
}

/**
 * Whether a process, as `/proc/<pid>/stat` and `/proc/<pid>/cmdline` show it, is alive and runs `command` (or
 * one of `execs`). A process in the middle of its exec has an empty cmdline: spawn() returns once the exec has
 * closed the close-on-exec pipe, but the kernel sets the new argv's bounds only after that, so a loaded
 * machine can show a just-started process with no argv for a moment (a CI run once read it as "exited while
 * starting"). Its name in stat is already the new program's then (the first 15 bytes of its file name), so
 * that is what an empty cmdline is judged by.
 */
export function runsCommand(statText: string, cmdline: string, proc: Pick<RunningProcess, 'command' | 'execs'>): boolean {
  // The command name is in parentheses and may itself contain spaces and parentheses; the state follows the last.
  const close = statText.lastIndexOf(') ');
  const state = statText.charAt(close + 2);
  if (close < 0 || state === 'Z' || state === 'X') return false;
  const programs = [proc.command, ...(proc.execs ?? [])];
  const argv0 = cmdline.split('\0')[0]!;
  if (argv0 !== '') return programs.includes(argv0);
  const comm = statText.slice(statText.indexOf('(') + 1, close);
  return programs.some((p) => basename(p).slice(0, 15) === comm);
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stopProcess(proc: RunningProcess, graceMs = 10_000): Promise<void> {
  if (!isRunning(proc)) return;
  signal(proc.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isRunning(proc)) return;
    await sleep(50);
  }
  signal(proc.pid, 'SIGKILL');
  while (isRunning(proc)) await sleep(20);
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** The last `lines` lines of a log, for error messages. */
export function logTail(path: string, lines = 30): string {
  if (!existsSync(path)) return `(no log at ${path})`;
  return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}
