// The one extra ManifestWork per cluster that tells the spoke agent which policy kinds to watch
// (DESIGN §6): a ConfigMap holding the params document, with the kinds in force for the hub.
import { canonicalJson, specHash } from './canonical.ts';
import { gvrKey, type GroupVersionResource } from './gvr.ts';
import { WORK_API_VERSION, WORK_KIND, type ManifestWork } from './manifestwork.ts';
import type { KubeObject } from './objects.ts';
import { CONTROLLER_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE, SPEC_HASH_ANNOTATION } from './metadatakeys.ts';

export const SPOKE_CONFIG_WORK_NAME = 'policy-sync-spoke-config';
export const SPOKE_CONFIG_LABEL = 'policysync.kuadrant.io/spoke-config';

/** The work carrying the spoke configuration (not a policy's). */
export function isSpokeConfigWork(work: KubeObject): boolean {
  return work.metadata.labels?.[SPOKE_CONFIG_LABEL] === 'true';
}

export function buildSpokeConfigWork(input: {
  cluster: string;
  kinds: readonly GroupVersionResource[];
  configMap: { namespace: string; name: string };
  controller: string;
}): ManifestWork {
  const policiesToSync = [...input.kinds]
    .map(({ group, version, resource }) => ({ group, version, resource }))
    .sort((a, b) => (gvrKey(a) < gvrKey(b) ? -1 : gvrKey(a) > gvrKey(b) ? 1 : 0));
  const configMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: input.configMap.name, namespace: input.configMap.namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } },
    data: { params: canonicalJson({ policiesToSync }) },
  };
  const labels = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [CONTROLLER_LABEL]: input.controller, [SPOKE_CONFIG_LABEL]: 'true' };
  const spec = {
    workload: { manifests: [configMap] },
    deleteOption: { propagationPolicy: 'Foreground' as const },
    manifestConfigs: [],
  };
  return {
    apiVersion: WORK_API_VERSION,
    kind: WORK_KIND,
    metadata: {
      name: SPOKE_CONFIG_WORK_NAME,
      namespace: input.cluster,
      labels,
      annotations: { [SPEC_HASH_ANNOTATION]: specHash({ metadata: { labels }, spec }) },
    },
    spec,
  };
}
