// The full plane with spoke agents for one test file (test/e2e/spoke-truth.test.ts, agent-race.test.ts): a class of
// the file's own with the params it gives, one Gateway placed on one cluster, the hub controller (a work per
// placement) and an agent on every spoke reporting each second — and what such a file checks of the spokes' audit
// logs: that nothing but the sync's own objects was deleted.
import type { KubeObject } from '../src/core/k8s/objects.ts';
import type { KubeHttp } from '../src/kube/http.ts';
import { describeWrite, type AuditCursor } from './audit.ts';
import { apply, createNamespace, gateway, gatewayClass, placementDecision, remove, removeNamespace } from './fixtures.ts';
import { releaseSpokes, startHub, startSpoke, type RunningHub, type RunningSpoke } from './hub.ts';
import type { Sandbox } from './sandbox/sandbox.ts';

export interface AgentPlaneOptions {
  ns: string;
  className: string;
  controllerName: string;
  spokeConfig: { namespace: string; name: string };
  /** The class's params object (a ConfigMap named `params` in `ns`). */
  params: KubeObject;
  /** The cluster the Gateway `gw` is placed on (its PlacementDecision is named after it). */
  cluster: string;
}

export interface AgentPlane {
  controller: RunningHub;
  agents: RunningSpoke[];
  /** The agents and the controller stopped, the class, the spokes' namespace and the hub namespace removed. */
  stop(): Promise<void>;
}

export async function startAgentPlane(sandbox: Sandbox, hub: KubeHttp, spokes: Map<string, KubeHttp>, o: AgentPlaneOptions): Promise<AgentPlane> {
  for (const spoke of spokes.values()) for (const n of [o.spokeConfig.namespace, o.ns]) await createNamespace(spoke, n);
  await createNamespace(hub, o.ns);
  await apply(hub, o.params);
  await apply(hub, gatewayClass(o.className, { namespace: o.ns, name: 'params' }, o.controllerName));
  await apply(hub, gateway(o.ns, 'gw', o.className, o.cluster));
  await apply(hub, placementDecision(o.ns, o.cluster, [o.cluster]));
  const controller = await startHub(sandbox.kubeConfig('hub'), { controllerName: o.controllerName, spokeConfig: o.spokeConfig, workShape: 'per-placement' });
  const agents = await Promise.all(sandbox.spokes.map((s) => startSpoke(sandbox.kubeConfig(s.name), s.name, o.spokeConfig, { reportHeartbeatMs: 1_000 })));
  return {
    controller,
    agents,
    async stop() {
      await Promise.all(agents.map((a) => a.stop()));
      await controller.stop();
      await remove(hub, gatewayClass(o.className, { namespace: o.ns, name: 'params' }, o.controllerName)).catch(() => undefined);
      await releaseSpokes(spokes, o.ns);
      await removeNamespace(hub, o.ns);
    },
  };
}

/**
 * The deletions on a spoke since `audit` that are not of the AuthPolicy copies named (in `ns`), OCM's
 * AppliedManifestWorks, the spoke configuration, or the namespace controller's: what the sync must never delete.
 */
export function otherDeletions(audit: AuditCursor, ns: string, spokeConfig: { namespace: string; name: string }, copies: readonly string[]): string[] {
  const deletes = audit.since().filter((w) => w.verb === 'delete' || w.verb === 'deletecollection');
  const sync = (w: (typeof deletes)[number]): boolean =>
    (w.resource === 'authpolicies' && w.namespace === ns && copies.includes(w.name ?? '')) ||
    w.resource === 'appliedmanifestworks' ||
    (w.resource === 'configmaps' && w.namespace === spokeConfig.namespace && (w.name ?? '').startsWith(spokeConfig.name));
  return deletes.filter((w) => !sync(w) && !w.userAgent.includes('/namespace-controller')).map(describeWrite);
}
