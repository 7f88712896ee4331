// What every fault-injection scenario measures: ManifestWork deletions on the hub apiserver (its own
// request counter, so every client's deletes count), the uids of the spoke copies (a copy deleted and
// re-created has a new one), and how long convergence took after the fault was lifted.
import assert from 'node:assert/strict';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Sandbox } from '../../hack/sandbox/sandbox.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import type { ResourceRef } from '../../src/kube/resource.ts';
import { get } from './fixtures.ts';
import { metricsText, samples } from './metrics.ts';

/** DELETE requests on manifestworks the hub apiserver has answered so far (any client, any code). */
export async function workDeletions(kubeConfig: KubeConfig): Promise<number> {
  const text = await metricsText(kubeConfig);
  return samples(text, 'apiserver_request_total')
    .filter((s) => s.labels.verb === 'DELETE' && s.labels.resource === 'manifestworks')
    .reduce((sum, s) => sum + s.value, 0);
}

/** Records the deletions counter now; `assertNone()` later fails if any ManifestWork was deleted since. */
export async function deletionWatch(sandbox: Sandbox): Promise<{ assertNone(what: string): Promise<void> }> {
  const kubeConfig = sandbox.kubeConfig('hub');
  const start = await workDeletions(kubeConfig);
  return {
    async assertNone(what: string) {
      assert.equal((await workDeletions(kubeConfig)) - start, 0, `no ManifestWork may be deleted: ${what}`);
    },
  };
}

/** `cluster → uid` of one spoke copy on every spoke (undefined where it does not exist). */
export async function copyUids(spokes: Map<string, KubeHttp>, resource: ResourceRef, namespace: string, name: string): Promise<Map<string, string | undefined>> {
  const uids = new Map<string, string | undefined>();
  for (const [cluster, http] of spokes) uids.set(cluster, (await get(http, resource, namespace, name))?.metadata.uid);
  return uids;
}

/** Runs `converge` and returns how long it took, in ms. */
export async function timed(converge: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await converge();
  return Math.round(performance.now() - started);
}

/** A line for docs/reliability.md, printed with the test output. */
export function report(scenario: string, measures: Record<string, number | string>): void {
  console.log(`fault ${scenario}: ${Object.entries(measures).map(([k, v]) => `${k}=${v}`).join(' ')}`);
}
