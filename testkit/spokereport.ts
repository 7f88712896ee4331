// A spoke agent's report for clusters that have no spoke (a namespace on the hub, as the bench's and the
// integration tests' clusters are): the status OCM's work agent would write on the cluster's spoke-configuration
// ManifestWork once the agent reported. With the spoke configuration placed, the hub gives a cluster no first
// copy of a policy until such a report vouches for the copy's name (docs/design/tenancy.md#reports-are-evidence-not-orders).
import { canonicalJson } from '../src/core/k8s/canonical.ts';
import { CONTROLLER_LABEL } from '../src/core/metadatakeys.ts';
import { SPOKE_CONFIG_WORK_NAME } from '../src/core/spoke/spokeconfig.ts';
import { SPOKE_REPORT_KEY, spokeReportName } from '../src/core/spoke/spokereport.ts';
import { controllerLabelValue } from '../src/core/works/manifestwork.ts';
import type { KubeHttp } from '../src/kube/http.ts';
import { RESOURCES } from '../src/kube/resource.ts';
import { mergePatch } from '../src/kube/writes.ts';
import { eventually } from './eventually.ts';
import { get } from './fixtures.ts';

/**
 * Once the hub has placed the spoke configuration on `cluster`, writes into that work's status a report that
 * lists no object of `kinds` (`resource.group`): every name free, no local policy. It is in the format of a
 * version-2 agent (its heartbeat inside: new text is a sign of life), so it counts from when the hub reads it,
 * for the stale limit; works placed meanwhile stay after that. `configMap`: the hub's --spoke-config.
 */
export async function reportNothingLocal(
  http: KubeHttp,
  cluster: string,
  o: { controllerName: string; configMap: { namespace: string; name: string }; kinds: readonly string[] },
): Promise<void> {
  await eventually(
    async () => {
      const work = await get(http, RESOURCES.manifestWorks, cluster, SPOKE_CONFIG_WORK_NAME);
      return work?.metadata.labels?.[CONTROLLER_LABEL] === controllerLabelValue(o.controllerName) || undefined;
    },
    { what: `the spoke configuration work on cluster ${cluster}`, timeoutMs: 30_000 },
  );
  const report = canonicalJson({ version: 2, heartbeat: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), objects: Object.fromEntries(o.kinds.map((k) => [k, {}])) });
  const name = spokeReportName(o.configMap.name);
  const status = {
    resourceStatus: {
      manifests: [
        {
          resourceMeta: { ordinal: 1, group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', name, namespace: o.configMap.namespace },
          conditions: [],
          statusFeedback: { values: [{ name: SPOKE_REPORT_KEY, fieldValue: { type: 'String', string: report } }] },
        },
      ],
    },
  };
  await mergePatch(http, RESOURCES.manifestWorks, cluster, SPOKE_CONFIG_WORK_NAME, { status }, { subresource: 'status', fieldManager: 'work-agent' });
}
