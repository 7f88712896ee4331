// A hub policy's aggregated status (its `policysync.kuadrant.io/status` annotation) as the tests, bench and
// demo read it, and the status a spoke's policy controller writes on a copy.
import type { Condition } from '../src/core/k8s/conditions.ts';
import { STATUS_ANNOTATION } from '../src/core/metadatakeys.ts';
import type { PolicyStatus } from '../src/core/status/policystatus.ts';
import type { KubeHttp } from '../src/kube/http.ts';
import type { ResourceRef } from '../src/kube/resource.ts';
import { mergePatch } from '../src/kube/writes.ts';
import { get } from './fixtures.ts';

/** The status annotation of hub policy `namespace/name`, parsed (as `T`); undefined while it has none. */
export async function hubStatus<T = PolicyStatus>(http: KubeHttp, resource: ResourceRef, namespace: string, name: string): Promise<T | undefined> {
  const text = (await get(http, resource, namespace, name))?.metadata.annotations?.[STATUS_ANNOTATION];
  return text === undefined ? undefined : (JSON.parse(text) as T);
}

/** Accepted and Enforced (`enforced`, with `enforcedMessage`) on a spoke copy, as the spoke's policy controller would write them. */
export async function writeSpokeStatus(spoke: KubeHttp, resource: ResourceRef, namespace: string, name: string, enforcedMessage: string, enforced: 'True' | 'False' = 'True'): Promise<void> {
  const copy = await get(spoke, resource, namespace, name);
  if (!copy) throw new Error(`no copy ${namespace}/${name} on the spoke`);
  const generation = copy.metadata.generation;
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const conditions: Condition[] = [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'AuthPolicy has been accepted', observedGeneration: generation, lastTransitionTime: now },
    { type: 'Enforced', status: enforced, reason: enforced === 'True' ? 'Enforced' : 'Unknown', message: enforcedMessage, observedGeneration: generation, lastTransitionTime: now },
  ];
  await mergePatch(spoke, resource, namespace, name, { status: { conditions } }, { subresource: 'status', fieldManager: 'kuadrant-policy-controller' });
}
