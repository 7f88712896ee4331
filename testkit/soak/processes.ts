// The soak's policy-sync components: two leader-elected hub replicas as real processes (src/cli/main.ts), as a
// Deployment would run them, their output in log files of the run, and one spoke agent per spoke in-process
// (testkit/hub.ts startSpoke: two more node processes cost a 2-core machine shared by several sandboxes too
// much start-up). A supervisor starts a hub replica again 2 s after it exits (a leader that lost its lease
// exits by design; a SIGKILLed one is restarted as a kubelet would); a spoke agent stopped by a fault stays
// stopped until the fault is lifted.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot } from '../sandbox/layout.ts';
import { freePort } from '../sandbox/ports.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import { samples } from '../metrics.ts';
import type { Spoke } from './ops.ts';
import { startSpoke, workShapeArgs, type RunningSpoke } from '../hub.ts';
import type { SoakNames } from './world.ts';

export const LEASE = 'soak-hub';
/** The spoke agents' heartbeat and the hub's stale limit: short, so the soak sees evidence come and go. */
export const REPORT_HEARTBEAT_MS = 1_000;
export const REPORT_STALE_AFTER = '8s';

interface Managed {
  name: string;
  args: string[];
  log: string;
  port: number;
  child?: ChildProcess;
  /** False while a fault holds it stopped, or once the run ends. */
  wanted: boolean;
  restarts: number;
}

export class SoakProcesses {
  private readonly hubs: Managed[] = [];
  private readonly agents = new Map<Spoke, RunningSpoke | undefined>();
  private stopping = false;

  private constructor(
    private readonly logDir: string,
    private readonly sandbox: Sandbox,
    private readonly names: SoakNames,
  ) {}

  static async start(sandbox: Sandbox, names: SoakNames, spokes: readonly Spoke[], logDir: string): Promise<SoakProcesses> {
    mkdirSync(logDir, { recursive: true });
    const p = new SoakProcesses(logDir, sandbox, names);
    for (const i of [0, 1]) {
      const port = await freePort();
      p.hubs.push({
        name: `hub-${i}`,
        port,
        log: join(logDir, `hub-${i}.log`),
        wanted: true,
        restarts: 0,
        args: [
          'hub',
          `--kubeconfig=${sandbox.hub.kubeconfig}`,
          `--controller-name=${names.controllerName}`,
          `--spoke-config=${names.spokeConfig.namespace}/${names.spokeConfig.name}`,
          `--spoke-report-stale-after=${REPORT_STALE_AFTER}`,
          `--health-probe-bind-address=127.0.0.1:${port}`,
          `--metrics-bind-address=127.0.0.1:${port}`,
          '--leader-elect',
          `--leader-election-namespace=${names.system}`,
          `--leader-election-id=${LEASE}`,
          // controller-runtime's default timings: shorter ones make a leader on a machine this loaded (two
          // cores shared by several sandboxes) lose its lease without any fault injected.
          '--leader-election-lease-duration=15s',
          '--leader-election-renew-deadline=10s',
          '--leader-election-retry-period=2s',
          ...workShapeArgs(),
        ],
      });
    }
    for (const m of p.hubs) p.launch(m);
    for (const spoke of spokes) await p.startAgent(spoke);
    return p;
  }

  get logs(): string {
    return this.logDir;
  }

  private launch(m: Managed): void {
    const out = openSync(m.log, 'a');
    // The sources, through tsx: a dist/ left by an earlier build would be another version than the one under test.
    const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'src', 'cli', 'main.ts'), ...m.args], { stdio: ['ignore', out, out], cwd: repoRoot });
    closeSync(out);
    m.child = child;
    child.once('exit', () => {
      if (m.child !== child) return;
      m.child = undefined;
      // A hub replica comes back as a Deployment's would.
      if (!this.stopping && m.wanted) {
        m.restarts += 1;
        setTimeout(() => {
          if (!this.stopping && m.wanted && !m.child) this.launch(m);
        }, 2_000);
      }
    });
  }

  /** The replica holding the lease (by its metrics), or undefined when none says so within `timeoutMs`. */
  async leader(timeoutMs = 15_000): Promise<string | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      for (const m of this.hubs) {
        if (!m.child) continue;
        try {
          const text = await (await fetch(`http://127.0.0.1:${m.port}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
          if (samples(text, 'leader_election_master_status').some((s) => s.labels.name === LEASE && s.value === 1)) return m.name;
        } catch {
          // not serving yet
        }
      }
      await sleep(250);
    }
    return undefined;
  }

  /** SIGKILLs the leading hub replica (the supervisor starts it again); its name, or undefined when none led. */
  async killLeader(): Promise<string | undefined> {
    const name = await this.leader();
    const m = this.hubs.find((h) => h.name === name);
    m?.child?.kill('SIGKILL');
    return name;
  }

  /** Stops the spoke's agent (its watches and report writes end) until startAgent. */
  async stopAgent(spoke: Spoke): Promise<void> {
    const agent = this.agents.get(spoke);
    this.agents.set(spoke, undefined);
    await agent?.stop();
  }

  async startAgent(spoke: Spoke): Promise<void> {
    if (this.agents.get(spoke)) return;
    this.agents.set(spoke, await startSpoke(this.sandbox.kubeConfig(spoke), spoke, this.names.spokeConfig, { reportHeartbeatMs: REPORT_HEARTBEAT_MS }));
  }

  agentRunning(spoke: Spoke): boolean {
    return this.agents.get(spoke) !== undefined;
  }

  restarts(): Record<string, number> {
    return Object.fromEntries(this.hubs.map((m) => [m.name, m.restarts]));
  }

  /** Stops every process (SIGTERM, then SIGKILL after 5 s). */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const spoke of [...this.agents.keys()]) await this.stopAgent(spoke);
    const all = this.hubs.flatMap((m) => (m.child ? [m.child] : []));
    await Promise.all(
      all.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const timer = setTimeout(() => c.kill('SIGKILL'), 5_000);
            c.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
  }
}
