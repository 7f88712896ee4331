// What a file (a log the sandbox's processes append to) gained past `offset`: its text and its size now.
import { closeSync, openSync, readSync, statSync } from 'node:fs';

export function appendedSince(path: string, offset: number): { text: string; size: number } {
  const size = statSync(path).size;
  if (size <= offset) return { text: '', size };
  const buf = Buffer.alloc(size - offset);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buf, 0, buf.length, offset);
  } finally {
    closeSync(fd);
  }
  return { text: buf.toString('utf8'), size };
}
