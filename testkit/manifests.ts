// Applying manifests of any kind (the demo's examples, the addon's objects): each object's resource found
// through the apiserver's discovery, then server-side applied.
import type { KubeObject } from '../src/core/k8s/objects.ts';
import type { ServedResource } from '../src/kube/discovery.ts';
import type { KubeHttp } from '../src/kube/http.ts';
import { groupVersionPath, type ResourceRef } from '../src/kube/resource.ts';
import { getObject, serverSideApply } from '../src/kube/writes.ts';

interface ApiResourceList {
  resources: ServedResource[];
}

/** Maps apiVersion + kind to the served resource, through discovery (cached per group/version). */
export class KindResolver {
  private readonly lists = new Map<string, Promise<ApiResourceList>>();

  constructor(private readonly http: KubeHttp) {}

  async resolve(apiVersion: string, kind: string): Promise<ResourceRef> {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    const gv = { group: group ?? '', version: version ?? '' };
    let list = this.lists.get(apiVersion);
    if (!list) {
      list = this.http.request<ApiResourceList>('GET', groupVersionPath(gv));
      this.lists.set(apiVersion, list);
      list.catch(() => this.lists.delete(apiVersion));
    }
    const served = (await list).resources.find((r) => r.kind === kind && !r.name.includes('/'));
    if (!served) throw new Error(`${kind} is not served in ${apiVersion}`);
    return { ...gv, resource: served.name, namespaced: served.namespaced };
  }
}

/** Server-side applies each object, in order, as `fieldManager`. */
export async function applyManifests(http: KubeHttp, objects: readonly KubeObject[], fieldManager: string): Promise<void> {
  const kinds = new KindResolver(http);
  for (const o of objects) await serverSideApply(http, await kinds.resolve(o.apiVersion, o.kind), o, { fieldManager });
}

/** For each object, the live one on the cluster (undefined where absent). */
export async function liveObjects(http: KubeHttp, objects: readonly KubeObject[]): Promise<(KubeObject | undefined)[]> {
  const kinds = new KindResolver(http);
  return Promise.all(objects.map(async (o) => getObject(http, await kinds.resolve(o.apiVersion, o.kind), o.metadata.namespace, o.metadata.name)));
}
