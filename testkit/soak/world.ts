// The soak's world on the real plane: the logical names of ops.ts mapped to real ones for one run, the objects
// the runner writes (hub policies of three kinds, local policies, Gateways, classes and params, the tenants'
// ManagedClusterSet, bindings and Placements), and the set-up and tear-down around a run.
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { workName } from '../../src/core/works/manifestwork.ts';
import { isConflict, type KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, collectionPath, type ResourceRef } from '../../src/kube/resource.ts';
import { deleteObject, mergePatch, serverSideApply } from '../../src/kube/writes.ts';
import { eventually } from '../eventually.ts';
import { AUTH_POLICIES, RATE_LIMIT_POLICIES } from '../fixtures.ts';
import { CLASSES, GATEWAYS, INITIAL_CLASS_KINDS, LISTENERS, SPOKES, TENANTS, type ClassName, type GatewayName, type Kind, type Spoke, type Target, type Tenant } from './ops.ts';
import type { ModelState } from './model.ts';

/** DELETE (with preconditions, if given): false when nothing of that name is there (404). */
export { deleteObject };

export const SOAK_GROUP = 'soak.policysync.io';
export const SOAK_POLICIES: ResourceRef = { group: SOAK_GROUP, version: 'v1', resource: 'soakpolicies', namespaced: true };
export const FIELD_MANAGER = 'policy-sync-soak';
/** The soak's own writes carry this user agent: the audit checks tell them from everyone else's. */
export const SOAK_USER_AGENT = 'policy-sync-soak';
/** The hub replicas' user agent begins so (src/cli/connectionflags.ts `connectionFrom`: `policy-sync-hub (identity)`). */
export const HUB_USER_AGENT = 'policy-sync-hub';
const OCM = 'cluster.open-cluster-management.io';
export const PLACEMENT = 'spokes';

export const RESOURCE_OF: Record<Kind, ResourceRef> = { auth: AUTH_POLICIES, rl: RATE_LIMIT_POLICIES, soak: SOAK_POLICIES };
export const KIND_OF_RESOURCE: Record<string, Kind> = { authpolicies: 'auth', ratelimitpolicies: 'rl', soakpolicies: 'soak' };
export const API_KIND: Record<Kind, string> = { auth: 'AuthPolicy', rl: 'RateLimitPolicy', soak: 'SoakPolicy' };
const GVR: Record<Kind, { group: string; version: string; resource: string }> = {
  auth: { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' },
  rl: { group: 'kuadrant.io', version: 'v1', resource: 'ratelimitpolicies' },
  soak: { group: SOAK_GROUP, version: 'v1', resource: 'soakpolicies' },
};

/** The name of the ManifestWork that places hub policy `name` of `kind` in `namespace` (a mending work has it too). */
export function copyWorkName(kind: Kind, namespace: string, name: string): string {
  return workName(GVR[kind], namespace, name);
}

/** The real names of one run. */
export class SoakNames {
  constructor(readonly run: string) {}
  get controllerName(): string {
    return `soak.policy-sync.io/${this.run}`;
  }
  get system(): string {
    return `${this.run}-sys`;
  }
  get spokeConfig(): { namespace: string; name: string } {
    return { namespace: this.system, name: 'spoke-config' };
  }
  get clusterSet(): string {
    return this.run;
  }
  get memberLabel(): string {
    return `soak.policysync.io/${this.run}`;
  }
  namespace(tenant: Tenant): string {
    return `${this.run}-${tenant}`;
  }
  tenantOf(namespace: string): Tenant | undefined {
    return TENANTS.find((t) => this.namespace(t) === namespace);
  }
  className(c: ClassName): string {
    return `${this.run}-${c}`;
  }
  params(c: ClassName): string {
    return `params-${c}`;
  }
}

function targetRef(t: Target): Record<string, string> {
  return { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: t.gateway, ...(t.sectionName === undefined ? {} : { sectionName: t.sectionName }) };
}

/** A policy object of `kind` (hub or local): single targetRef for Kuadrant's kinds, targetRefs for the soak's own. */
export function policyObject(kind: Kind, namespace: string, name: string, targets: Target[], marker: number, labels: Record<string, string> = {}): KubeObject {
  const metadata = { name, namespace, ...(Object.keys(labels).length > 0 ? { labels } : {}) };
  switch (kind) {
    case 'auth':
      return {
        apiVersion: 'kuadrant.io/v1',
        kind: API_KIND.auth,
        metadata,
        spec: { targetRef: targetRef(targets[0]!), rules: { authorization: { soak: { opa: { rego: `allow = false # ${marker}` } } } } },
      };
    case 'rl':
      return { apiVersion: 'kuadrant.io/v1', kind: API_KIND.rl, metadata, spec: { targetRef: targetRef(targets[0]!), limits: { soak: { rates: [{ limit: marker, window: '1m' }] } } } };
    case 'soak':
      return { apiVersion: `${SOAK_GROUP}/v1`, kind: API_KIND.soak, metadata, spec: { targetRefs: targets.map(targetRef), rules: { marker } } };
  }
}

/**
 * The spec part of a drift edit's merge patch (ops.ts copy-drift): the one field that carries the marker, set to
 * `value` — for Kuadrant's kinds in the shape policyObject writes it, so that only that field's value differs.
 */
export function driftSpecPatch(kind: Kind, value: number): Record<string, unknown> {
  switch (kind) {
    case 'auth':
      return { rules: { authorization: { soak: { opa: { rego: `allow = false # ${value}` } } } } };
    case 'rl':
      return { limits: { soak: { rates: [{ limit: value, window: '1m' }] } } };
    case 'soak':
      return { rules: { marker: value } };
  }
}

/** The marker a policy object (hub policy or copy) carries in its spec. */
export function markerOf(kind: Kind, object: KubeObject): number | undefined {
  const spec = object.spec;
  if (!spec) return undefined;
  if (kind === 'auth') {
    const rego = (spec.rules as { authorization?: { soak?: { opa?: { rego?: string } } } } | undefined)?.authorization?.soak?.opa?.rego;
    const m = /# (\d+)$/.exec(rego ?? '');
    return m ? Number(m[1]) : undefined;
  }
  if (kind === 'rl') return (spec.limits as { soak?: { rates?: { limit?: number }[] } } | undefined)?.soak?.rates?.[0]?.limit;
  return (spec.rules as { marker?: number } | undefined)?.marker;
}

/** The targets of a policy object, as the model writes them (sorted by id). */
export function targetsOf(object: KubeObject): { gateway: string; sectionName?: string; namespace?: string }[] {
  const spec = object.spec as { targetRef?: Record<string, string>; targetRefs?: Record<string, string>[] } | undefined;
  const refs = [...(spec?.targetRef ? [spec.targetRef] : []), ...(spec?.targetRefs ?? [])];
  return refs
    .map((r) => ({ gateway: r.name ?? '', ...(r.sectionName ? { sectionName: r.sectionName } : {}), ...(r.namespace ? { namespace: r.namespace } : {}) }))
    .sort((a, b) => (tid(a) < tid(b) ? -1 : tid(a) > tid(b) ? 1 : 0));
}

function tid(t: { gateway: string; sectionName?: string }): string {
  return t.sectionName === undefined ? t.gateway : `${t.gateway}#${t.sectionName}`;
}

export function gatewayObject(names: SoakNames, tenant: Tenant, name: GatewayName, className: ClassName): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace: names.namespace(tenant), labels: { [`${OCM}/placement`]: PLACEMENT } },
    spec: {
      gatewayClassName: names.className(className),
      listeners: LISTENERS[name].map((l, i) => ({ name: l, port: 80 + i * 8000, protocol: 'HTTP' })),
    },
  };
}

export function paramsObject(names: SoakNames, c: ClassName, kinds: readonly Kind[] | 'invalid'): KubeObject {
  const params = kinds === 'invalid' ? { policiesToSync: 'every kind, please', downstreamNamespace: '{namespace}' } : { policiesToSync: kinds.map((k) => GVR[k]), downstreamNamespace: '{namespace}' };
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: names.params(c), namespace: names.system }, data: { params: JSON.stringify(params) } };
}

export function classObject(names: SoakNames, c: ClassName): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: names.className(c) },
    spec: { controllerName: names.controllerName, parametersRef: { group: '', kind: 'ConfigMap', name: names.params(c), namespace: names.system } },
  };
}

export function placementObject(names: SoakNames, tenant: Tenant): KubeObject {
  return {
    apiVersion: `${OCM}/v1beta1`,
    kind: 'Placement',
    metadata: { name: PLACEMENT, namespace: names.namespace(tenant) },
    spec: { clusterSets: [names.clusterSet] },
  };
}

export function bindingObject(names: SoakNames, tenant: Tenant): KubeObject {
  return {
    apiVersion: `${OCM}/v1beta2`,
    kind: 'ManagedClusterSetBinding',
    metadata: { name: names.clusterSet, namespace: names.namespace(tenant) },
    spec: { clusterSet: names.clusterSet },
  };
}

/** The soak's own policy kind: GEP-713 targetRefs with sectionName; no status subresource (its copies go by server-side apply). */
export const SOAK_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `soakpolicies.${SOAK_GROUP}` },
  spec: {
    group: SOAK_GROUP,
    scope: 'Namespaced',
    names: { plural: 'soakpolicies', singular: 'soakpolicy', kind: 'SoakPolicy', listKind: 'SoakPolicyList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  targetRefs: {
                    type: 'array',
                    items: { type: 'object', properties: { group: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' }, sectionName: { type: 'string' } } },
                  },
                  rules: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
};

export async function apply(http: KubeHttp, resource: ResourceRef, object: KubeObject): Promise<KubeObject> {
  return serverSideApply<KubeObject>(http, resource, object, { fieldManager: FIELD_MANAGER, force: true });
}


/** POST: false when the name is taken (409). */
export async function createObject(http: KubeHttp, resource: ResourceRef, object: KubeObject): Promise<KubeObject | undefined> {
  try {
    return await http.request<KubeObject>('POST', collectionPath(resource, object.metadata.namespace), { body: object });
  } catch (err) {
    if (isConflict(err)) return undefined;
    throw err;
  }
}

export async function ensureNamespace(http: KubeHttp, name: string): Promise<void> {
  await createObject(http, RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

async function installCrd(http: KubeHttp): Promise<void> {
  await serverSideApply(http, RESOURCES.crds, SOAK_CRD, { fieldManager: FIELD_MANAGER });
  await eventually(async () => {
    const list = await http.request<{ resources: { name: string }[] }>('GET', `/apis/${SOAK_GROUP}/v1`).catch(() => undefined);
    return list?.resources.some((r) => r.name === 'soakpolicies');
  }, { what: `${SOAK_CRD.metadata.name} served` });
}

export async function setMember(hub: KubeHttp, names: SoakNames, spoke: Spoke, member: boolean): Promise<void> {
  await mergePatch(hub, RESOURCES.managedClusters, undefined, spoke, { metadata: { labels: { [names.memberLabel]: member ? 'member' : null } } }, { fieldManager: FIELD_MANAGER });
}

/** The world of `state` (the model's initial state) on the hub and spokes, before any controller of the run starts. */
export async function setUpWorld(hub: KubeHttp, spokes: ReadonlyMap<Spoke, KubeHttp>, names: SoakNames, state: ModelState): Promise<void> {
  for (const http of [hub, ...spokes.values()]) {
    await installCrd(http);
    for (const ns of [names.system, ...TENANTS.map((t) => names.namespace(t))]) await ensureNamespace(http, ns);
  }
  for (const spoke of SPOKES) await setMember(hub, names, spoke, state.member[spoke]);
  await apply(hub, RESOURCES.managedClusterSets, {
    apiVersion: `${OCM}/v1beta2`,
    kind: 'ManagedClusterSet',
    metadata: { name: names.clusterSet },
    spec: { clusterSelector: { selectorType: 'LabelSelector', labelSelector: { matchLabels: { [names.memberLabel]: 'member' } } } },
  });
  for (const c of CLASSES) {
    await apply(hub, RESOURCES.configMaps, paramsObject(names, c, INITIAL_CLASS_KINDS[c]));
    await apply(hub, RESOURCES.gatewayClasses, classObject(names, c));
  }
  for (const t of TENANTS) {
    if (state.bound[t]) await apply(hub, RESOURCES.managedClusterSetBindings, bindingObject(names, t));
    await apply(hub, RESOURCES.placements, placementObject(names, t));
    for (const g of GATEWAYS) {
      const cls = state.gateways[`${t}/${g}`];
      if (cls) await apply(hub, RESOURCES.gateways, gatewayObject(names, t, g, cls));
    }
  }
}

/** Removes what the run made (its controllers already stopped): works, classes, set, labels, namespaces. */
export async function tearDownWorld(hub: KubeHttp, spokes: ReadonlyMap<Spoke, KubeHttp>, names: SoakNames, works: () => Promise<KubeObject[]>): Promise<void> {
  for (const w of await works()) await deleteObject(hub, RESOURCES.manifestWorks, w.metadata.namespace, w.metadata.name).catch(() => undefined);
  for (const c of CLASSES) await deleteObject(hub, RESOURCES.gatewayClasses, undefined, names.className(c)).catch(() => undefined);
  await deleteObject(hub, RESOURCES.managedClusterSets, undefined, names.clusterSet).catch(() => undefined);
  for (const spoke of SPOKES) await setMember(hub, names, spoke, false).catch(() => undefined);
  for (const http of [hub, ...spokes.values()]) {
    for (const ns of [names.system, ...TENANTS.map((t) => names.namespace(t))]) await deleteObject(http, RESOURCES.namespaces, undefined, ns).catch(() => undefined);
  }
}
