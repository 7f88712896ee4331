// A free loopback TCP port for a component that starts later.
//
// The port comes from below the kernel's ephemeral range: a port the OS hands out for `listen(0)` lies in that
// range, and so does the source port of every outgoing connection, so between choosing it and the component
// binding it any process on the machine could take it (a CI run lost a work agent to exactly that). Below the
// range only another listener can, and a random pick that was bindable a moment ago makes that unlikely. A port is
// never handed out twice by one process: a sandbox lays out all its components' ports before any binds, and a CI
// run lost a placement controller to its own sandbox's apiserver, given the same random port a moment before.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { randomInt } from 'node:crypto';

const LOWEST = 20000;
const ATTEMPTS = 200;

/** The ports this process handed out: each component of a sandbox is given its own before any of them binds. */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const highest = Math.max(LOWEST + 1000, low) - 1;
  for (let i = 0; i < ATTEMPTS; i++) {
    const port = randomInt(LOWEST, highest + 1);
    if (handedOut.has(port)) continue;
    if (await bindable(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no bindable loopback port in ${LOWEST}-${highest} after ${ATTEMPTS} tries`);
}

/** The kernel's ephemeral port range (Linux); the IANA default elsewhere. */
export function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // not Linux
  }
  return [49152, 65535];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}
