// Hub controller replicas as real processes (`policy-sync hub`), as a Deployment would run them: their
// probes and /metrics on one free port, their output kept for failure messages.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './sandbox/layout.ts';
import { freePort } from './sandbox/ports.ts';
import type { Sandbox } from './sandbox/sandbox.ts';
import { samples } from './metrics.ts';

export interface Replica {
  name: string;
  child: ChildProcess;
  port: number;
  output: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The flags of a leader-elected replica, with the lease in `namespace/name` and the given timings. */
export function electionArgs(lease: { namespace: string; name: string }, timing: { leaseMs: number; renewMs: number; retryMs: number }): string[] {
  return [
    '--leader-elect',
    `--leader-election-namespace=${lease.namespace}`,
    `--leader-election-id=${lease.name}`,
    `--leader-election-lease-duration=${timing.leaseMs}ms`,
    `--leader-election-renew-deadline=${timing.renewMs}ms`,
    `--leader-election-retry-period=${timing.retryMs}ms`,
  ];
}

export async function startReplica(sandbox: Sandbox, name: string, controllerName: string, args: readonly string[]): Promise<Replica> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, 'bin', 'policy-sync.js'),
      'hub',
      `--kubeconfig=${sandbox.hub.kubeconfig}`,
      `--controller-name=${controllerName}`,
      `--health-probe-bind-address=127.0.0.1:${port}`,
      `--metrics-bind-address=127.0.0.1:${port}`,
      '--spoke-config=none',
      // The tests write PlacementDecisions themselves (fixtures.placementDecision).
      '--trust-decision-labels',
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const output: string[] = [];
  child.stdout?.on('data', (d: Buffer) => output.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => output.push(d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { name, child, port, output, exit };
}

export async function metricsOf(r: Replica): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${r.port}/metrics`);
  return res.text();
}

export async function isLeader(r: Replica, lease: string): Promise<boolean> {
  return samples(await metricsOf(r), 'leader_election_master_status').some((s) => s.labels.name === lease && s.value === 1);
}

export async function writesOf(r: Replica): Promise<number> {
  return samples(await metricsOf(r), 'policysync_client_writes_total').reduce((sum, s) => sum + s.value, 0);
}

export function logOf(r: Replica, lines = 15): string {
  return `${r.name} output:\n${r.output.join('').split('\n').slice(-lines).join('\n')}`;
}

/** The replica's JSON log lines, parsed (lines that are not JSON are skipped). */
export function logRecords(r: Replica): Record<string, unknown>[] {
  return r.output
    .join('')
    .split('\n')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

/** The leader-election identity a replica campaigns with (logged once its caches synced). */
export function identityOf(r: Replica): string | undefined {
  const rec = logRecords(r).find((l) => typeof l.identity === 'string');
  return rec?.identity as string | undefined;
}
