// A lock between test processes sharing one sandbox (node's test runner runs files in parallel unless
// told otherwise): held by a directory that only one process can create, with the holder's pid inside
// so that a lock left by a dead process is taken over.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Date.now();
  }
}

/** Waits until this process holds the lock `name` under `root`; resolves with its release. */
export async function holdExclusive(root: string, name: string, timeoutMs = 300_000): Promise<() => void> {
  const dir = join(root, 'locks', name);
  mkdirSync(join(root, 'locks'), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(join(dir, 'pid'), String(process.pid));
      return () => rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder: number | undefined;
    try {
      holder = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    } catch {
      holder = undefined; // being created right now
    }
    const orphaned = holder === undefined && Date.now() - mtimeMs(dir) > 5_000; // its creator died before writing the pid
    if ((holder && !alive(holder)) || orphaned) {
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`lock ${dir} still held by pid ${holder ?? '?'} after ${timeoutMs} ms`);
    await sleep(250);
  }
}
