// What the tests with the real spoke policy controllers share: getting the Kuadrant operator past its start-up
// race, and reading what a controller wrote on a policy.
import type { KubeObject } from '../src/core/k8s/objects.ts';
import type { KubeHttp } from '../src/kube/http.ts';
import { RESOURCES } from '../src/kube/resource.ts';
import { getObject, serverSideApply } from '../src/kube/writes.ts';
import { eventually } from './eventually.ts';
import { ENVOY_GATEWAY_CONTROLLER_NAME, KUADRANT_NAMESPACE } from './sandbox/spokecontrollers.ts';
import { uniqueName } from './hub.ts';
import { logTail } from './sandbox/processes.ts';
import type { Sandbox } from './sandbox/sandbox.ts';

const FIELD_MANAGER = 'policy-sync-tests';

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

/** A policy as its controller writes it: Kuadrant-style conditions, or GEP-713 ancestors. */
export type Policy = KubeObject & {
  status?: {
    conditions?: Condition[];
    observedGeneration?: number;
    ancestors?: { ancestorRef: { name: string }; controllerName: string; conditions: Condition[] }[];
  };
};

export function condition(policy: Policy | undefined, type: string): Condition | undefined {
  return policy?.status?.conditions?.find((c) => c.type === type);
}

/** A GatewayClass of Envoy Gateway's: Envoy Gateway programs its Gateways where it runs; anywhere, the Kuadrant operator only needs them to exist. */
export function envoyGatewayClass(name: string): KubeObject {
  return { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name }, spec: { controllerName: ENVOY_GATEWAY_CONTROLLER_NAME } };
}

/**
 * The Kuadrant operator creates its `topology` ConfigMap on its first reconcile; when several events race at
 * start-up, a second create fails ("already exists") and, since it reconciles on events only, the policies of
 * that round get no status until something else changes. Its own start-up race, not what is under test: two
 * GatewayClasses one after the other, and the second shown in the ConfigMap proves it is past it.
 */
export async function warmUpKuadrant(http: KubeHttp, spokeName: string, context: () => string, gatewayClass: (name: string) => KubeObject = envoyGatewayClass): Promise<void> {
  const [first, second] = [uniqueName('warm-up'), uniqueName('warm-up')];
  await serverSideApply(http, RESOURCES.gatewayClasses, gatewayClass(first), { fieldManager: FIELD_MANAGER });
  await untilTopologyHolds(http, first, `the Kuadrant operator's topology on ${spokeName}`, context);
  await serverSideApply(http, RESOURCES.gatewayClasses, gatewayClass(second), { fieldManager: FIELD_MANAGER });
  await untilTopologyHolds(http, second, `the operator on ${spokeName} to update its topology past start-up`, context);
}

/**
 * Until the Kuadrant operator's topology on a spoke holds the Gateway `namespace/name`. A busy operator can take
 * a spoke Gateway and the first copy that targets it in one round (a CI run of fresh-copy-status did); that
 * round's status write of the copy was refused (409) and, reconciling on events only, the operator said nothing
 * of the copy again. Its own race between the target and the policy, not the copy's delivery under test: a test
 * that creates a spoke Gateway waits for the operator to see it before a copy targets it.
 */
export async function untilKuadrantSeesGateway(http: KubeHttp, spokeName: string, namespace: string, name: string, context: () => string): Promise<void> {
  // A node's label in the operator's DOT: its kind, an escaped newline, `namespace/name`.
  await untilTopologyHolds(http, `label="Gateway\\n${namespace}/${name}"`, `Gateway ${namespace}/${name} in the Kuadrant operator's topology on ${spokeName}`, context);
}

/** Until the operator's topology as it writes it (a DOT graph, a node per object) holds `text`. */
async function untilTopologyHolds(http: KubeHttp, text: string, what: string, context: () => string): Promise<void> {
  const topology = async (): Promise<string> =>
    String((await getObject<KubeObject & { data?: Record<string, string> }>(http, RESOURCES.configMaps, KUADRANT_NAMESPACE, 'topology'))?.data?.topology ?? '');
  await eventually(async () => (await topology()).includes(text) || undefined, { what, timeoutMs: 60_000, context });
}

/** The tail of a sandbox component's log, for a failure message. */
export function componentLog(sandbox: Sandbox, component: string): () => string {
  return () => `${component} log (${sandbox.logOf(component)}):\n${logTail(sandbox.logOf(component), 20)}`;
}
