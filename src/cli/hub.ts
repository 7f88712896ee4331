// `policy-sync hub`: the hub controller.
import { Command, Option } from 'commander';
import { DEFAULT_BUNDLE_CAP_BYTES, DEFAULT_CONTROLLER_NAME, REQUESTS_PER_WORKER } from '../hub/assembly.ts';
import { WORK_SHAPES, type WorkShape } from '../core/works/copyroutes.ts';
import { HubController } from '../hub/controller.ts';
import { boundHeapGrowth } from '../runtime/gctuning.ts';
import { createLogger, type LogFormat } from '../runtime/logging.ts';
import { Leadership } from '../runtime/leadership.ts';
import { Metrics } from '../runtime/metrics.ts';
import { addConnectionOptions, connectionFrom, processIdentity, type ConnectionFlags } from './connectionflags.ts';
import { addDecisionOptions, type DecisionFlags } from './decisionflags.ts';
import { addElectionOptions, electionFrom, type ElectionFlags } from './electionflags.ts';
import { controllerKubeConfig } from './common.ts';
import { runUntilSignalled } from '../kube/manager.ts';
import { duration, positiveDurationOrMs } from './duration.ts';
import { DEFAULT_REPORT_STALE_MS } from '../core/spoke/spokereport.ts';
import { namespacedName, positiveInt, positiveNumber, type NamespacedName } from './options.ts';
import { DEFAULT_SPOKE_CONFIG } from './spoke.ts';

interface HubFlags extends ElectionFlags, ConnectionFlags, DecisionFlags {
  kubeconfig?: string;
  controllerName: string;
  concurrency: number;
  qps: number;
  burst: number;
  statusCoalesce: number;
  workShape: WorkShape;
  bundleCapBytes: number;
  spokeConfig?: NamespacedName;
  spokeReportStaleAfter: number;
  healthProbeBindAddress: string;
  metricsBindAddress: string;
  logLevel: string;
  logFormat: LogFormat;
}

/** `none`, or the ConfigMap placed on every spoke. */
function spokeConfigOption(value: string): NamespacedName | undefined {
  return value === 'none' ? undefined : namespacedName(value);
}

export function hubCommand(): Command {
  const command = new Command('hub')
    .description('run the hub controller: GatewayClass params, policy watches, ManifestWorks per spoke')
    .option('--kubeconfig <path>', 'kubeconfig of the hub (default: $KUBECONFIG, ~/.kube/config or in-cluster)')
    .option('--controller-name <name>', 'GatewayClass spec.controllerName to own', DEFAULT_CONTROLLER_NAME)
    .option('--concurrency <n>', `policies reconciled at once; at most max(64, ${REQUESTS_PER_WORKER} × n) requests to the hub apiserver are under way`, positiveInt, 4)
    .option('--qps <n>', 'client-side write rate limit (writes per second)', positiveNumber, 100)
    .option('--burst <n>', 'client-side write burst', positiveInt, 200)
    .addOption(
      new Option('--status-coalesce <duration>', 'least time between two status annotation writes of one policy (a bare number: milliseconds)')
        .argParser(positiveDurationOrMs)
        .default(200, '200ms'),
    )
    .addOption(
      new Option('--spoke-config <namespace/name>', 'ConfigMap placed on every spoke for the spoke agent, its report of local policies read beside it; or "none"')
        .argParser(spokeConfigOption)
        .default(spokeConfigOption(DEFAULT_SPOKE_CONFIG), DEFAULT_SPOKE_CONFIG),
    )
    .addOption(
      new Option('--spoke-report-stale-after <duration>', "how long a spoke agent's report counts after the hub last saw its heartbeat vouch for it (hub clock): past it, the cluster gets no first copy until a fresh report comes, and nothing is withdrawn")
        .argParser(duration)
        .default(DEFAULT_REPORT_STALE_MS, '2m'),
    )
    .addOption(
      new Option('--work-shape <shape>', 'where new policy copies go: a ManifestWork per copy, or bundles of one cluster\'s copies of a namespace (copies in works of their own then move into bundles, with no spoke DELETE; copies in bundles stay there)')
        .choices(WORK_SHAPES)
        .default('per-placement'),
    )
    .option('--bundle-cap-bytes <n>', "bytes of copies (manifest and record) a bundle takes new copies up to; a copy already carried grows in place", positiveInt, DEFAULT_BUNDLE_CAP_BYTES)
    .option('--health-probe-bind-address <host:port>', 'where /healthz and /readyz are served', ':8081')
    .option('--metrics-bind-address <host:port>', 'where Prometheus /metrics is served, or "0" for nowhere', ':8080')
    .option('--log-level <level>', 'trace, debug, info, warn, error', 'info')
    .addOption(new Option('--log-format <format>', 'log format').choices(['json', 'pretty']).default('json'));
  return addElectionOptions(addConnectionOptions(addDecisionOptions(command, { for: 'hub' })), 'policy-sync-hub').action(async (flags: HubFlags) => {
    const logger = createLogger({ level: flags.logLevel, format: flags.logFormat, name: 'policy-sync-hub' });
    const metrics = new Metrics();
    boundHeapGrowth();
    const kubeConfig = controllerKubeConfig(flags.kubeconfig, logger);
    if (!kubeConfig) return;
    const leadership = new Leadership(flags.leaderElect);
    const election = electionFrom(flags, kubeConfig);
    const controller = new HubController({
      kubeConfig,
      logger,
      controllerName: flags.controllerName,
      concurrency: flags.concurrency,
      qps: flags.qps,
      burst: flags.burst,
      maxWorkBytes: flags.maxWorkBytes,
      rawFeedback: flags.rawFeedback,
      statusCoalesceMs: flags.statusCoalesce,
      workShape: flags.workShape,
      bundleCapBytes: flags.bundleCapBytes,
      spokeConfig: flags.spokeConfig,
      spokeReportStaleAfterMs: flags.spokeReportStaleAfter,
      trustDecisionLabels: flags.trustDecisionLabels,
      metrics,
      leadership,
      connection: connectionFrom(flags, 'hub', election?.identity ?? processIdentity()),
    });
    await runUntilSignalled(controller, logger, {
      election,
      leadership,
      probeAddress: flags.healthProbeBindAddress,
      metrics: { address: flags.metricsBindAddress, metrics },
    });
  });
}
