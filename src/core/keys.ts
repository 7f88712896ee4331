// The keys the hub's queues and caches use, each with one constructor and one parser (docs/architecture.md,
// "Keys"). A cache key is `namespace/name` (core/k8s/objects.ts); these are the product's own.
import { groupResourceKey, parseGroupResourceKey, type GroupResource } from './k8s/gvr.ts';
import { splitObjectKey, type KubeObject } from './k8s/objects.ts';

/** Work-queue key of a hub policy: `<resource>.<group>|<namespace>/<name>` — no version, so a served-version switch keeps its key. */
export type PolicyKey = string & { readonly __key: 'policy' };

export function policyKey(gr: GroupResource, namespace: string, name: string): PolicyKey {
  return `${groupResourceKey(gr)}|${namespace}/${name}` as PolicyKey;
}

export function parsePolicyKey(key: string): { gr: GroupResource; namespace: string; name: string } {
  const bar = key.indexOf('|');
  const { namespace, name } = splitObjectKey(key.slice(bar + 1));
  if (bar <= 0 || !namespace || !name) throw new Error(`malformed policy key ${key}`);
  return { gr: parseGroupResourceKey(key.slice(0, bar)), namespace, name };
}

/** Identity of a ManifestWork: `cluster/name` (its namespace is the cluster). */
export type WorkKey = string & { readonly __key: 'work' };

export function workKey(cluster: string, name: string): WorkKey {
  return `${cluster}/${name}` as WorkKey;
}

export function workKeyOf(work: KubeObject): WorkKey {
  return workKey(work.metadata.namespace ?? '', work.metadata.name);
}

export function parseWorkKey(key: string): { cluster: string; name: string } {
  const { namespace, name } = splitObjectKey(key);
  return { cluster: namespace, name };
}
