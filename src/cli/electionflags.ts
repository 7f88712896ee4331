// The leader-election flags shared by `hub` and `spoke` (controller-runtime's names and defaults).
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeAccess } from '../kube/kubeconfig.ts';
import { Option, type Command } from 'commander';
import { DEFAULT_LEADER_ELECTION, validateTiming } from '../kube/leaderelection.ts';
import { duration } from './duration.ts';
import type { ElectionOptions } from '../kube/manager.ts';

export interface ElectionFlags {
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionId: string;
  leaderElectionLeaseDuration: number;
  leaderElectionRenewDeadline: number;
  leaderElectionRetryPeriod: number;
}

export function addElectionOptions(command: Command, defaultId: string): Command {
  const d = DEFAULT_LEADER_ELECTION;
  return command
    .option('--leader-elect', 'run as one of several replicas: only the holder of the lease writes', false)
    .addOption(
      new Option('--leader-election-namespace <namespace>', 'namespace of the lease').default(process.env.POD_NAMESPACE ?? 'policy-sync-system', '$POD_NAMESPACE or policy-sync-system'),
    )
    .option('--leader-election-id <name>', 'name of the lease', defaultId)
    .addOption(new Option('--leader-election-lease-duration <duration>', 'how long standbys wait before taking an unrenewed lease').argParser(duration).default(d.leaseDurationMs, '15s'))
    .addOption(new Option('--leader-election-renew-deadline <duration>', 'how long the leader retries renewing before giving up').argParser(duration).default(d.renewDeadlineMs, '10s'))
    .addOption(new Option('--leader-election-retry-period <duration>', 'time between attempts to acquire or renew').argParser(duration).default(d.retryPeriodMs, '2s'));
}

/** The election to run, or undefined without --leader-elect. Bad timings fail here, naming the rule. */
export function electionFrom(flags: ElectionFlags, kubeConfig: KubeAccess): ElectionOptions | undefined {
  if (!flags.leaderElect) return undefined;
  const timing = {
    leaseDurationMs: flags.leaderElectionLeaseDuration,
    renewDeadlineMs: flags.leaderElectionRenewDeadline,
    retryPeriodMs: flags.leaderElectionRetryPeriod,
  };
  validateTiming(timing);
  return {
    ...timing,
    kubeConfig,
    namespace: flags.leaderElectionNamespace,
    name: flags.leaderElectionId,
    // client-go's form: unique per process even when pods share a hostname.
    identity: `${hostname()}_${randomUUID()}`,
  };
}
