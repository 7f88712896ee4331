// `policy-sync hub`: the hub controller.
import { Command, Option } from 'commander';
import { DEFAULT_CONTROLLER_NAME, HubController } from '../hub/controller.ts';
import { createLogger, type LogFormat } from '../runtime/logging.ts';
import { loadKubeConfig } from './kubeconfig.ts';
import { positiveInt, positiveNumber } from './options.ts';

interface HubFlags {
  kubeconfig?: string;
  controllerName: string;
  concurrency: number;
  qps: number;
  burst: number;
  maxWorkBytes: number;
  rawFeedback: boolean;
  statusCoalesce: number;
  logLevel: string;
  logFormat: LogFormat;
}

export function hubCommand(): Command {
  return new Command('hub')
    .description('run the hub controller: GatewayClass params, policy watches, ManifestWorks per spoke')
    .option('--kubeconfig <path>', 'kubeconfig of the hub (default: $KUBECONFIG, ~/.kube/config or in-cluster)')
    .option('--controller-name <name>', 'GatewayClass spec.controllerName to own', DEFAULT_CONTROLLER_NAME)
    .option('--concurrency <n>', 'policies reconciled at once', positiveInt, 4)
    .option('--qps <n>', 'client-side write rate limit (writes per second)', positiveNumber, 100)
    .option('--burst <n>', 'client-side write burst', positiveInt, 200)
    .option('--max-work-bytes <n>', 'largest ManifestWork written (OCM default limit 500 KiB)', positiveInt, 500 * 1024)
    .option('--raw-feedback', 'add the raw `conditions` feedback rule (needs the agent gate RawFeedbackJsonString)', false)
    .option('--status-coalesce <ms>', 'least time between two status annotation writes of one policy', positiveInt, 200)
    .option('--log-level <level>', 'trace, debug, info, warn, error', 'info')
    .addOption(new Option('--log-format <format>', 'log format').choices(['json', 'pretty']).default('json'))
    .action(async (flags: HubFlags) => {
      const logger = createLogger({ level: flags.logLevel, format: flags.logFormat, name: 'policy-sync-hub' });
      const controller = new HubController({
        kubeConfig: loadKubeConfig(flags.kubeconfig),
        logger,
        controllerName: flags.controllerName,
        concurrency: flags.concurrency,
        qps: flags.qps,
        burst: flags.burst,
        maxWorkBytes: flags.maxWorkBytes,
        rawFeedback: flags.rawFeedback,
        statusCoalesceMs: flags.statusCoalesce,
      });
      const shutdown = (signal: string): void => {
        logger.info({ signal }, 'shutting down');
        controller.stop().then(
          () => process.exit(0),
          (err: unknown) => {
            logger.error({ err: String(err) }, 'unclean shutdown');
            process.exit(1);
          },
        );
      };
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
      await controller.start();
    });
}
