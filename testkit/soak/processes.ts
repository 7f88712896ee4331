// The soak's policy-sync processes, as a Deployment and a DaemonSet would run them: two leader-elected hub
// replicas and one spoke agent per spoke, each a real process (src/cli/main.ts) whose output goes to a log
// file of the run. A supervisor starts a hub replica again 2 s after it exits (a leader that lost its lease
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
import type { SoakNames } from './world.ts';

export const LEASE = 'soak-hub';
/** The spoke agents' heartbeat and the hub's stale limit: short, so the soak sees evidence come and go. */
export const REPORT_HEARTBEAT = '1s';
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
  private readonly agents = new Map<Spoke, Managed>();
  private stopping = false;

  private constructor(private readonly logDir: string) {}

  static async start(sandbox: Sandbox, names: SoakNames, spokes: readonly Spoke[], logDir: string): Promise<SoakProcesses> {
    mkdirSync(logDir, { recursive: true });
    const p = new SoakProcesses(logDir);
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
          '--leader-election-lease-duration=4s',
          '--leader-election-renew-deadline=3s',
          '--leader-election-retry-period=1s',
          '--watch-idle-timeout=20s',
        ],
      });
    }
    for (const spoke of spokes) {
      const port = await freePort();
      p.agents.set(spoke, {
        name: `agent-${spoke}`,
        port,
        log: join(logDir, `agent-${spoke}.log`),
        wanted: true,
        restarts: 0,
        args: [
          'spoke',
          `--kubeconfig=${sandbox.cluster(spoke).kubeconfig}`,
          `--config-map=${names.spokeConfig.namespace}/${names.spokeConfig.name}`,
          `--report-interval=${REPORT_HEARTBEAT}`,
          `--health-probe-bind-address=127.0.0.1:${port}`,
          '--metrics-bind-address=0',
          '--watch-idle-timeout=20s',
        ],
      });
    }
    for (const m of [...p.hubs, ...p.agents.values()]) p.launch(m);
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
      // A hub replica comes back as a Deployment's would; an agent only when its fault is lifted.
      if (!this.stopping && m.wanted && m.name.startsWith('hub-')) {
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

  /** SIGKILLs the spoke's agent and keeps it stopped until startAgent. */
  stopAgent(spoke: Spoke): void {
    const m = this.agents.get(spoke)!;
    m.wanted = false;
    m.child?.kill('SIGKILL');
  }

  startAgent(spoke: Spoke): void {
    const m = this.agents.get(spoke)!;
    m.wanted = true;
    if (!m.child) this.launch(m);
  }

  agentRunning(spoke: Spoke): boolean {
    return this.agents.get(spoke)?.child !== undefined;
  }

  restarts(): Record<string, number> {
    return Object.fromEntries([...this.hubs, ...this.agents.values()].map((m) => [m.name, m.restarts]));
  }

  /** Stops every process (SIGTERM, then SIGKILL after 5 s). */
  async stop(): Promise<void> {
    this.stopping = true;
    const all = [...this.hubs, ...this.agents.values()].flatMap((m) => (m.child ? [m.child] : []));
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
