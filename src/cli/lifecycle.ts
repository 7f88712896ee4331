// Runs a controller until SIGTERM/SIGINT, then stops it (draining in-flight work) and exits.
import type { Logger } from 'pino';

export interface Runnable {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function runUntilSignalled(controller: Runnable, logger: Logger): Promise<void> {
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
}
