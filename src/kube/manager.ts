// The manager both binaries (`hub`, `spoke`) run their controller under: health and readiness endpoints
// (and /metrics) until SIGTERM/SIGINT; caches first, then — when it holds the leader lease, or at once
// without leader election — the reconcilers that write. On a signal: stop taking work, drain in-flight reconciles, release the lease, exit. On a
// lost lease: exit at once (a restart rejoins as a standby).
import type { KubeAccess } from './kubeconfig.ts';
import type { Logger } from 'pino';
import { KubeHttp } from './http.ts';
import { LeaderElector, type LeaderElectionTiming } from './leaderelection.ts';
import type { Leadership } from '../runtime/leadership.ts';
import type { Metrics } from '../runtime/metrics.ts';
import { ProbeServer } from '../runtime/probeserver.ts';

export interface Runnable {
  /** Watches and caches; writes nothing. */
  startCaches(): Promise<void>;
  /** Starts the reconcilers that write. */
  lead(): void;
  stop(): Promise<void>;
  readonly cachesSynced: boolean;
}

export interface ElectionOptions extends LeaderElectionTiming {
  kubeConfig: KubeAccess;
  namespace: string;
  name: string;
  identity: string;
}

export interface RunOptions {
  probeAddress: string;
  /** /metrics: served at `address` (`host:port`; "0": not served; the probe address: served there too). */
  metrics?: { address: string; metrics: Metrics };
  /** Leader election; undefined: this process leads at once. */
  election?: ElectionOptions;
  /** Follows the elector, so that every write path of the controller checks leadership. */
  leadership?: Leadership;
}

export async function runUntilSignalled(controller: Runnable, logger: Logger, options: RunOptions): Promise<void> {
  const ready = (): boolean => controller.cachesSynced;
  const m = options.metrics?.address === '0' ? undefined : options.metrics;
  const scrape = m && (() => m.metrics.scrape());
  const shared = m?.address === options.probeAddress;
  const servers = [
    { serves: shared ? '/healthz, /readyz and /metrics' : '/healthz and /readyz', server: new ProbeServer({ address: options.probeAddress, ready, metrics: shared ? scrape : undefined }) },
  ];
  if (m && !shared) servers.push({ serves: '/metrics', server: new ProbeServer({ address: m.address, ready, metrics: scrape }) });
  const metrics = options.metrics?.metrics;
  const election = options.election;
  const leaseHttp = election && new KubeHttp(election.kubeConfig);
  const elector =
    election &&
    leaseHttp &&
    new LeaderElector({
      ...election,
      http: leaseHttp,
      lease: { namespace: election.namespace, name: election.name },
      logger,
      onStartedLeading: () => {
        metrics?.setLeader(election.name, true);
        controller.lead();
      },
      onStoppedLeading: () => {
        metrics?.setLeader(election.name, false);
        logger.error({ lease: election.name }, 'lost the leader lease; exiting so that a restart rejoins as a standby');
        process.exit(1);
      },
    });
  if (elector) options.leadership?.follow(elector);
  if (election) metrics?.setLeader(election.name, false);
  const shutdown = (signal: string): void => {
    logger.info({ signal }, 'shutting down');
    controller
      .stop()
      .then(() => elector?.release())
      .then(() => leaseHttp?.destroy())
      .then(() => Promise.all(servers.map((s) => s.server.stop())))
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
  for (const { serves, server } of servers) {
    const bound = await server.start();
    logger.info({ address: `${bound.address}:${bound.port}` }, `serving ${serves}`);
  }
  await controller.startCaches();
  if (elector) {
    logger.info({ lease: `${election.namespace}/${election.name}`, identity: election.identity }, 'caches synced; campaigning for the leader lease');
    elector.start();
  } else {
    controller.lead();
  }
}
