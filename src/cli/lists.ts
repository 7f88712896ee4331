// Lists the CLI reads the hub with.
import type { KubeObject } from '../core/k8s/objects.ts';
import { isNotFound, type KubeHttp } from '../kube/http.ts';
import { collectionPath, type ResourceRef } from '../kube/resource.ts';

/** A list; empty when the resource is not served (no OCM, or no PolicyVariant CRD, on this hub). */
export async function listAll(http: KubeHttp, resource: ResourceRef, query: Record<string, string> = {}): Promise<KubeObject[]> {
  try {
    return (await http.request<{ items: KubeObject[] }>('GET', collectionPath(resource), { query })).items;
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}
