// `policy-sync spoke`: the spoke agent.
import { Command, Option } from 'commander';
import { parseGvrKey, type GroupVersionResource } from '../core/k8s/gvr.ts';
import { SpokeController } from '../spoke/controller.ts';
import { boundHeapGrowth } from '../runtime/gctuning.ts';
import { createLogger, type LogFormat } from '../runtime/logging.ts';
import { Leadership } from '../runtime/leadership.ts';
import { Metrics } from '../runtime/metrics.ts';
import { addConnectionOptions, connectionFrom, processIdentity, type ConnectionFlags } from './connectionflags.ts';
import { addElectionOptions, electionFrom, type ElectionFlags } from './electionflags.ts';
import { controllerKubeConfig } from './common.ts';
import { runUntilSignalled } from '../kube/manager.ts';
import { namespacedName, type NamespacedName } from './options.ts';
import { duration } from './duration.ts';
import { DEFAULT_REPORT_HEARTBEAT_MS } from '../core/spoke/spokereport.ts';

export const DEFAULT_SPOKE_CONFIG = 'policy-sync-system/policy-sync-spoke';

interface SpokeFlags extends ElectionFlags, ConnectionFlags {
  kubeconfig?: string;
  policies?: GroupVersionResource[];
  configMap: NamespacedName;
  reportInterval: number;
  healthProbeBindAddress: string;
  metricsBindAddress: string;
  logLevel: string;
  logFormat: LogFormat;
}

function policyList(value: string): GroupVersionResource[] {
  return value.split(',').map((s) => s.trim()).filter(Boolean).map(parseGvrKey);
}

export function spokeCommand(): Command {
  const command = new Command('spoke')
    .description('run the spoke agent: report the local policies of the synced kinds to the hub, which keeps a synced policy off the Gateways they take')
    .option('--kubeconfig <path>', 'kubeconfig of the spoke (default: $KUBECONFIG, ~/.kube/config or in-cluster)')
    .option('--policies <kinds>', 'comma-separated kinds to watch, e.g. authpolicies.v1.kuadrant.io (instead of following the ConfigMap)', policyList)
    .addOption(
      new Option('--config-map <namespace/name>', 'params ConfigMap placed by the hub (key `params`); the report goes to its namespace')
        .argParser(namespacedName)
        .default(namespacedName(DEFAULT_SPOKE_CONFIG), DEFAULT_SPOKE_CONFIG),
    )
    .addOption(
      new Option('--report-interval <duration>', 'how often the heartbeat (naming the report it vouches for) is written, so the hub knows the report is current; the report itself is written only when it changes')
        .argParser(duration)
        .default(DEFAULT_REPORT_HEARTBEAT_MS, '30s'),
    )
    .option('--health-probe-bind-address <host:port>', 'where /healthz and /readyz are served', ':8081')
    .option('--metrics-bind-address <host:port>', 'where Prometheus /metrics is served, or "0" for nowhere', ':8080')
    .option('--log-level <level>', 'trace, debug, info, warn, error', 'info')
    .addOption(new Option('--log-format <format>', 'log format').choices(['json', 'pretty']).default('json'));
  return addElectionOptions(addConnectionOptions(command), 'policy-sync-spoke').action(async (flags: SpokeFlags) => {
    const logger = createLogger({ level: flags.logLevel, format: flags.logFormat, name: 'policy-sync-spoke' });
    const metrics = new Metrics();
    boundHeapGrowth();
    const kubeConfig = controllerKubeConfig(flags.kubeconfig, logger);
    if (!kubeConfig) return;
    const leadership = new Leadership(flags.leaderElect);
    const election = electionFrom(flags, kubeConfig);
    const controller = new SpokeController({
      kubeConfig,
      logger,
      policies: flags.policies,
      configMap: flags.configMap,
      reportHeartbeatMs: flags.reportInterval,
      metrics,
      leadership,
      connection: connectionFrom(flags, 'spoke', election?.identity ?? processIdentity()),
    });
    await runUntilSignalled(controller, logger, {
      election,
      leadership,
      probeAddress: flags.healthProbeBindAddress,
      metrics: { address: flags.metricsBindAddress, metrics },
    });
  });
}
