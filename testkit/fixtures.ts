// Builders for the hub objects the tests author, and helpers to write them through the raw client.
import type { KubeObject } from '../src/core/k8s/objects.ts';
import type { KubeHttp} from '../src/kube/http.ts';
import { isConflict, isNotFound } from '../src/kube/http.ts';
import { RESOURCES, collectionPath, objectPath, type ResourceRef } from '../src/kube/resource.ts';
import { mergePatch, serverSideApply } from '../src/kube/writes.ts';

export const CONTROLLER_NAME = 'kuadrant.io/policy-sync-controller';
export const AUTH_POLICIES: ResourceRef = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', namespaced: true };
export const RATE_LIMIT_POLICIES: ResourceRef = { group: 'kuadrant.io', version: 'v1', resource: 'ratelimitpolicies', namespaced: true };
export const PLACEMENT_LABEL = 'cluster.open-cluster-management.io/placement';
const TEST_MANAGER = 'policy-sync-tests';

export function namespace(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

export function paramsConfigMap(ns: string, name: string, params: unknown): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns },
    data: { params: typeof params === 'string' ? params : JSON.stringify(params) },
  };
}

export function gatewayClass(name: string, params: { namespace: string; name: string }, controllerName = CONTROLLER_NAME): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name },
    spec: { controllerName, parametersRef: { group: '', kind: 'ConfigMap', name: params.name, namespace: params.namespace } },
  };
}

export function gateway(ns: string, name: string, className: string, placement?: string): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace: ns, ...(placement ? { labels: { [PLACEMENT_LABEL]: placement } } : {}) },
    spec: { gatewayClassName: className, listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  };
}

export function placementDecision(ns: string, placement: string, clusters: string[]): KubeObject {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1beta1',
    kind: 'PlacementDecision',
    metadata: { name: `${placement}-decision-1`, namespace: ns, labels: { [PLACEMENT_LABEL]: placement } },
    status: { decisions: clusters.map((clusterName) => ({ clusterName, reason: '' })) },
  };
}

export function authPolicy(ns: string, name: string, gatewayName: string, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: { name, namespace: ns },
    spec: {
      targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: gatewayName },
      rules: { authorization: { deny: { opa: { rego: 'allow = false' } } } },
      ...extra,
    },
  };
}

export function rateLimitPolicy(ns: string, name: string, gatewayName: string): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'RateLimitPolicy',
    metadata: { name, namespace: ns },
    spec: {
      targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: gatewayName },
      limits: { global: { rates: [{ limit: 10, window: '1m' }] } },
    },
  };
}

const RESOURCE_OF_KIND: Record<string, ResourceRef> = {
  Namespace: RESOURCES.namespaces,
  ConfigMap: RESOURCES.configMaps,
  GatewayClass: RESOURCES.gatewayClasses,
  Gateway: RESOURCES.gateways,
  PlacementDecision: RESOURCES.placementDecisions,
  ManifestWork: RESOURCES.manifestWorks,
  AuthPolicy: AUTH_POLICIES,
  RateLimitPolicy: RATE_LIMIT_POLICIES,
  PolicySyncParams: RESOURCES.policySyncParams,
  PolicyVariant: RESOURCES.policyVariants,
  ManagedCluster: RESOURCES.managedClusters,
  DNSPolicy: { group: 'kuadrant.io', version: 'v1', resource: 'dnspolicies', namespaced: true },
};

export function resourceOf(object: KubeObject): ResourceRef {
  const r = RESOURCE_OF_KIND[object.kind];
  if (!r) throw new Error(`no resource known for kind ${object.kind}`);
  return r;
}

/** Server-side applies the object (and its status, for PlacementDecisions and ManagedClusters: what OCM would write). */
export async function apply(http: KubeHttp, object: KubeObject): Promise<KubeObject> {
  const resource = resourceOf(object);
  const { status, ...rest } = object;
  const applied = await serverSideApply<KubeObject>(http, resource, rest, { fieldManager: TEST_MANAGER });
  if (status !== undefined && (object.kind === 'PlacementDecision' || object.kind === 'ManagedCluster')) {
    return serverSideApply(http, resource, { ...rest, status }, { fieldManager: TEST_MANAGER, subresource: 'status' });
  }
  return applied;
}

export async function createNamespace(http: KubeHttp, name: string): Promise<void> {
  try {
    await http.request('POST', collectionPath(RESOURCES.namespaces), { body: namespace(name) });
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}

export async function remove(http: KubeHttp, object: KubeObject): Promise<void> {
  try {
    await http.request('DELETE', objectPath(resourceOf(object), object.metadata.namespace, object.metadata.name));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

export async function patchData(http: KubeHttp, object: KubeObject, patch: unknown): Promise<void> {
  await mergePatch(http, resourceOf(object), object.metadata.namespace, object.metadata.name, patch, { fieldManager: TEST_MANAGER });
}

export async function list(http: KubeHttp, resource: ResourceRef, namespace?: string, labelSelector?: string): Promise<KubeObject[]> {
  const res = await http.request<{ items: KubeObject[] }>('GET', collectionPath(resource, namespace), { query: { labelSelector } });
  return res.items;
}

export async function get(http: KubeHttp, resource: ResourceRef, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
  try {
    return await http.request<KubeObject>('GET', objectPath(resource, namespace, name));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function removeNamespace(http: KubeHttp, name: string): Promise<void> {
  await remove(http, namespace(name));
}
