// Runs the hub controller in-process against the sandbox hub, with a controller name of its own so
// that test files (and their GatewayClasses and works) keep apart.
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Sandbox } from './sandbox/sandbox.ts';
import type { HubOptions } from '../src/hub/assembly.ts';
import { HubController } from '../src/hub/controller.ts';
import { KubeHttp } from '../src/kube/http.ts';
import { eventually } from './eventually.ts';
import { removeNamespace } from './fixtures.ts';
import { SpokeController } from '../src/spoke/controller.ts';

/** A name unique to this test process: DNS-safe, short. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`;
}

export function hubHttp(sandbox: Sandbox): KubeHttp {
  return new KubeHttp(sandbox.kubeConfig('hub'));
}

export interface RunningHub {
  controller: HubController;
  controllerName: string;
  stop(): Promise<void>;
}

/** The options the tests run a hub controller with, `options` on top. */
export function testHubOptions(kubeConfig: KubeConfig, options: Partial<HubOptions> & { controllerName: string }): HubOptions {
  return {
    kubeConfig,
    logger: pino({ level: process.env.POLICY_SYNC_TEST_LOG ?? 'silent' }),
    concurrency: 4,
    qps: 500,
    burst: 1000,
    maxWorkBytes: 500 * 1024,
    rawFeedback: false,
    statusCoalesceMs: 200,
    // The tests write PlacementDecisions themselves (fixtures.placementDecision) for clusters of any name;
    // the files about placement and tenancy run with the default (owned decisions, bound sets).
    trustDecisionLabels: true,
    // The tiers can be run on bundles (docs/design/fleet.md): POLICY_SYNC_TEST_WORK_SHAPE=bundled.
    ...(process.env.POLICY_SYNC_TEST_WORK_SHAPE === 'bundled' ? { workShape: 'bundled' as const } : {}),
    ...options,
  };
}

/** The `policy-sync hub` flags of the work shape the tiers run on (see testHubOptions). */
export function workShapeArgs(): string[] {
  return process.env.POLICY_SYNC_TEST_WORK_SHAPE === 'bundled' ? ['--work-shape=bundled'] : [];
}

export async function startHub(kubeConfig: KubeConfig, options: Partial<HubOptions> & { controllerName: string }): Promise<RunningHub> {
  const controller = new HubController(testHubOptions(kubeConfig, options));
  await controller.start();
  return { controller, controllerName: options.controllerName, stop: () => controller.stop() };
}

/** A controller name of the form Gateway API requires (`domain/path`). */
export function testControllerName(suite: string): string {
  return `test.policy-sync.io/${uniqueName(suite)}`;
}

export interface RunningSpoke {
  cluster: string;
  controller: SpokeController;
  stop(): Promise<void>;
}

/** The spoke agent in-process against one sandbox spoke, following the ConfigMap the hub places. */
export async function startSpoke(
  kubeConfig: KubeConfig,
  cluster: string,
  configMap: { namespace: string; name: string },
  options: { reportHeartbeatMs?: number; now?: () => number } = {},
): Promise<RunningSpoke> {
  const controller = new SpokeController({
    kubeConfig,
    logger: pino({ level: process.env.POLICY_SYNC_TEST_LOG ?? 'silent' }).child({ cluster }),
    configMap,
    reportHeartbeatMs: options.reportHeartbeatMs ?? 30_000,
    ...(options.now ? { now: options.now } : {}),
  });
  await controller.start();
  return { cluster, controller, stop: () => controller.stop() };
}

/** A client per sandbox spoke, by spoke name. */
export function spokeClients(sandbox: Sandbox): Map<string, KubeHttp> {
  return new Map(sandbox.spokes.map((s) => [s.name, new KubeHttp(sandbox.kubeConfig(s.name))]));
}

/** Teardown of spokeClients: removes `namespace` on each spoke, then closes the clients. */
export async function releaseSpokes(spokes: Map<string, KubeHttp>, namespace: string): Promise<void> {
  for (const spoke of spokes.values()) {
    await removeNamespace(spoke, namespace);
    spoke.destroy();
  }
}

/**
 * The in-process controller has nothing to do: caches synced, no key waiting or in progress, for several
 * polls in a row (a pass after this proves the controller looked and decided, not that it was slow).
 */
export async function quiescent(controller: HubController, what: string): Promise<void> {
  let calm = 0;
  await eventually(
    () => {
      calm = controller.cachesSynced && controller.idle() ? calm + 1 : 0;
      return Promise.resolve(calm >= 5 || undefined);
    },
    { what: `the controller to be idle: ${what}`, intervalMs: 100, timeoutMs: 60_000 },
  );
}
