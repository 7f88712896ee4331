// Readiness probes: one HTTP(S) GET, and a loop that waits for it while watching the process.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { isRunning, logTail, type RunningProcess } from './processes.ts';
import type { Pki } from './pki.ts';

export interface Probe {
  url: string;
  /** Present for the apiservers: verify with the sandbox CA and present the admin certificate. */
  clientTls?: boolean;
}

function get(probe: Probe, pki: Pki): Promise<boolean> {
  return new Promise((resolve) => {
    const url = new URL(probe.url);
    const options = url.protocol === 'https:'
      ? probe.clientTls
        ? { ca: readFileSync(pki.caCert), cert: readFileSync(pki.adminCert), key: readFileSync(pki.adminKey) }
        : { rejectUnauthorized: false } // the work agent's health endpoint serves a self-signed certificate
      : {};
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { ...options, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Waits until the probe answers 200; fails early, with the log's tail, when the process exits. */
export async function waitReady(proc: RunningProcess, probe: Probe, pki: Pki, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isRunning(proc)) {
      throw new Error(`${proc.name} exited while starting; its log is ${proc.log}:\n${logTail(proc.log)}`);
    }
    if (await get(probe, pki)) return;
    await sleep(200);
  }
  throw new Error(`${proc.name} not ready at ${probe.url} after ${timeoutMs} ms; its log is ${proc.log}:\n${logTail(proc.log)}`);
}

export function probeOnce(probe: Probe, pki: Pki): Promise<boolean> {
  return get(probe, pki);
}
