// Runs a controller with its health and readiness endpoints until SIGTERM/SIGINT, then stops it
// (draining in-flight work) and exits.
import type { Logger } from 'pino';
import { ProbeServer } from '../runtime/probeserver.ts';

export interface Runnable {
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly cachesSynced: boolean;
}

export async function runUntilSignalled(controller: Runnable, logger: Logger, options: { probeAddress: string }): Promise<void> {
  const probes = new ProbeServer({ address: options.probeAddress, ready: () => controller.cachesSynced });
  const shutdown = (signal: string): void => {
    logger.info({ signal }, 'shutting down');
    controller
      .stop()
      .then(() => probes.stop())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err: String(err) }, 'unclean shutdown');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  const bound = await probes.start();
  logger.info({ address: `${bound.address}:${bound.port}` }, 'serving /healthz and /readyz');
  await controller.start();
}
