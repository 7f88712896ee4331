// REST paths of API resources: `/api/v1/...` for the core group, `/apis/<group>/<version>/...` otherwise.
import { groupVersion, type GroupVersionResource } from '../core/k8s/gvr.ts';

export interface ResourceRef extends GroupVersionResource {
  namespaced: boolean;
}

function prefix(gvr: Pick<GroupVersionResource, 'group' | 'version'>): string {
  return gvr.group === '' ? `/api/${gvr.version}` : `/apis/${groupVersion(gvr)}`;
}

/** The collection: all namespaces when `namespace` is undefined (or the resource is cluster-scoped). */
export function collectionPath(r: ResourceRef, namespace?: string): string {
  return r.namespaced && namespace !== undefined
    ? `${prefix(r)}/namespaces/${encodeURIComponent(namespace)}/${r.resource}`
    : `${prefix(r)}/${r.resource}`;
}

export function objectPath(r: ResourceRef, namespace: string | undefined, name: string, subresource?: string): string {
  const base = `${collectionPath(r, r.namespaced ? namespace : undefined)}/${encodeURIComponent(name)}`;
  return subresource ? `${base}/${subresource}` : base;
}

export function groupVersionPath(gv: Pick<GroupVersionResource, 'group' | 'version'>): string {
  return prefix(gv);
}

/** Well-known resources the controllers use. */
export const RESOURCES = {
  namespaces: { group: '', version: 'v1', resource: 'namespaces', namespaced: false },
  configMaps: { group: '', version: 'v1', resource: 'configmaps', namespaced: true },
  coreEvents: { group: '', version: 'v1', resource: 'events', namespaced: true },
  leases: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespaced: true },
  crds: { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', namespaced: false },
  gatewayClasses: { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gatewayclasses', namespaced: false },
  gateways: { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways', namespaced: true },
  placementDecisions: { group: 'cluster.open-cluster-management.io', version: 'v1beta1', resource: 'placementdecisions', namespaced: true },
  placements: { group: 'cluster.open-cluster-management.io', version: 'v1beta1', resource: 'placements', namespaced: true },
  managedClusters: { group: 'cluster.open-cluster-management.io', version: 'v1', resource: 'managedclusters', namespaced: false },
  managedClusterSets: { group: 'cluster.open-cluster-management.io', version: 'v1beta2', resource: 'managedclustersets', namespaced: false },
  managedClusterSetBindings: { group: 'cluster.open-cluster-management.io', version: 'v1beta2', resource: 'managedclustersetbindings', namespaced: true },
  manifestWorks: { group: 'work.open-cluster-management.io', version: 'v1', resource: 'manifestworks', namespaced: true },
  policySyncParams: { group: 'policysync.kuadrant.io', version: 'v1alpha1', resource: 'policysyncparams', namespaced: true },
  policyVariants: { group: 'policysync.kuadrant.io', version: 'v1alpha1', resource: 'policyvariants', namespaced: true },
  selfSubjectAccessReviews: { group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectaccessreviews', namespaced: false },
} as const satisfies Record<string, ResourceRef>;
