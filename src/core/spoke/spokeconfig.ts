// The two extra ManifestWorks per cluster between the hub and the spoke agent (docs/design/tenancy.md#local-policies-win):
// - the spoke configuration: it places a ConfigMap holding the params document (the kinds in force, which
//   the agent watches), and reads back the agent's report of local policies (spokereport.ts) as a ReadOnly
//   manifest with a String feedback value — the agent's only channel to the hub;
// - the heartbeat: it reads back, ReadOnly too, the small ConfigMap the agent rewrites every interval
//   (spokeheartbeat.ts). Apart, because a work's status is one object: a heartbeat in the configuration's
//   work would rewrite the report's hundreds of KiB into etcd with it every 30 s.
import { canonicalJson, specHash } from '../k8s/canonical.ts';
import { gvrKey, type GroupVersionResource } from '../k8s/gvr.ts';
import { WORK_API_VERSION, WORK_KIND, type ManifestWork } from '../works/manifestwork.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { parseParamsJson } from '../params/params.ts';
import { parseSpokeReport } from './reportwire.ts';
import { SPOKE_REPORT_KEY, spokeReportName, type SpokeReport } from './spokereport.ts';
import { SPOKE_HEARTBEAT_KEY, spokeHeartbeatName } from './spokeheartbeat.ts';
import { CONTROLLER_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE, SPEC_HASH_ANNOTATION } from '../metadatakeys.ts';

export const SPOKE_CONFIG_WORK_NAME = 'policy-sync-spoke-config';
export const SPOKE_HEARTBEAT_WORK_NAME = 'policy-sync-spoke-heartbeat';
/** On both works: they are the spoke configuration's, placed and deleted together, and no policy's. */
export const SPOKE_CONFIG_LABEL = 'policysync.kuadrant.io/spoke-config';

/** A work of the spoke configuration (the configuration and report, or the heartbeat), not a policy's. */
export function isSpokeConfigWork(work: KubeObject): boolean {
  return work.metadata.labels?.[SPOKE_CONFIG_LABEL] === 'true';
}

/** The spoke configuration's heartbeat work. */
export function isSpokeHeartbeatWork(work: KubeObject): boolean {
  return isSpokeConfigWork(work) && work.metadata.name === SPOKE_HEARTBEAT_WORK_NAME;
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
  // Only its identity: ReadOnly, the work agent neither writes it nor deletes it with the work.
  const reportName = spokeReportName(input.configMap.name);
  const report = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: reportName, namespace: input.configMap.namespace } };
  const labels = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [CONTROLLER_LABEL]: input.controller, [SPOKE_CONFIG_LABEL]: 'true' };
  const spec = {
    workload: { manifests: [configMap, report] },
    deleteOption: { propagationPolicy: 'Foreground' as const },
    manifestConfigs: [
      {
        resourceIdentifier: { group: '', resource: 'configmaps', name: reportName, namespace: input.configMap.namespace },
        updateStrategy: { type: 'ReadOnly' as const },
        // A String value: no agent feature gate, and no length limit beyond the work's own.
        feedbackRules: [{ type: 'JSONPaths' as const, jsonPaths: [{ name: SPOKE_REPORT_KEY, path: `.data.${SPOKE_REPORT_KEY}` }] }],
        feedbackScrapeType: 'Watch' as const,
      },
    ],
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

/** The work that reads the agent's heartbeat back: one ReadOnly manifest, nothing placed. */
export function buildSpokeHeartbeatWork(input: { cluster: string; configMap: { namespace: string; name: string }; controller: string }): ManifestWork {
  const name = spokeHeartbeatName(input.configMap.name);
  const heartbeat = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: input.configMap.namespace } };
  const labels = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [CONTROLLER_LABEL]: input.controller, [SPOKE_CONFIG_LABEL]: 'true' };
  const spec = {
    workload: { manifests: [heartbeat] },
    deleteOption: { propagationPolicy: 'Foreground' as const },
    manifestConfigs: [
      {
        resourceIdentifier: { group: '', resource: 'configmaps', name, namespace: input.configMap.namespace },
        updateStrategy: { type: 'ReadOnly' as const },
        feedbackRules: [{ type: 'JSONPaths' as const, jsonPaths: [{ name: SPOKE_HEARTBEAT_KEY, path: `.data.${SPOKE_HEARTBEAT_KEY}` }] }],
        feedbackScrapeType: 'Watch' as const,
      },
    ],
  };
  return {
    apiVersion: WORK_API_VERSION,
    kind: WORK_KIND,
    metadata: {
      name: SPOKE_HEARTBEAT_WORK_NAME,
      namespace: input.cluster,
      labels,
      annotations: { [SPEC_HASH_ANNOTATION]: specHash({ metadata: { labels }, spec }) },
    },
    spec,
  };
}

interface FeedbackValue {
  name?: string;
  fieldValue?: { string?: string };
}
interface ManifestStatus {
  resourceMeta?: { ordinal?: number; resource?: string; name?: string; namespace?: string };
  statusFeedback?: { values?: FeedbackValue[] };
}
/** The spoke configuration ConfigMap a hub places (its `--spoke-config`): the report and heartbeat are named after it. */
export interface SpokeConfigRef {
  namespace: string;
  name: string;
}

/**
 * The String feedback value `key` of the ConfigMap the work's spec holds at `ordinal` — only when the status is about
 * that very ConfigMap, and (given `expected`) that ConfigMap is the one expected. A status is the work agent's, written
 * at its last apply: right after the spec names another ConfigMap (another spoke configuration: the hub's flag changed,
 * or another hub's work of the same name was taken over), the status still carries the feedback of the one named
 * before, a report no agent of this configuration wrote. Until the agent applies the spec as it is, there is none.
 */
function configMapFeedback(work: KubeObject, ordinal: number, key: string, expected: { namespace: string; name: string } | undefined): string | undefined {
  const manifest = (work.spec as { workload?: { manifests?: (KubeObject | undefined)[] } } | undefined)?.workload?.manifests?.[ordinal];
  const name = manifest?.metadata?.name;
  const namespace = manifest?.metadata?.namespace ?? '';
  if (manifest?.kind !== 'ConfigMap' || name === undefined) return undefined;
  if (expected && (expected.name !== name || expected.namespace !== namespace)) return undefined;
  const manifests = (work.status as { resourceStatus?: { manifests?: ManifestStatus[] } } | undefined)?.resourceStatus?.manifests ?? [];
  const entry = manifests.find((m) => m.resourceMeta?.ordinal === ordinal && m.resourceMeta.resource === 'configmaps' && m.resourceMeta.name === name && (m.resourceMeta.namespace ?? '') === namespace);
  const value = entry?.statusFeedback?.values?.find((v) => v.name === key)?.fieldValue?.string;
  return typeof value === 'string' ? value : undefined;
}

/**
 * The text of the spoke agent's report as the spoke-configuration work's feedback carries it; undefined when there is
 * none, or it is not the report of the configuration the work places now (of `config`, given: the hub's own).
 */
export function spokeReportText(work: KubeObject, config?: SpokeConfigRef): string | undefined {
  if (isSpokeHeartbeatWork(work)) return undefined;
  // The second manifest; the first is the configuration.
  return configMapFeedback(work, 1, SPOKE_REPORT_KEY, config && { namespace: config.namespace, name: spokeReportName(config.name) });
}

/** The text of the spoke agent's heartbeat as the heartbeat work's feedback carries it; undefined as for the report. */
export function spokeHeartbeatText(work: KubeObject, config?: SpokeConfigRef): string | undefined {
  return configMapFeedback(work, 0, SPOKE_HEARTBEAT_KEY, config && { namespace: config.namespace, name: spokeHeartbeatName(config.name) });
}

/** The spoke agent's report from the work's feedback; undefined when there is none or it is refused (parseSpokeReport says why). */
export function readSpokeReport(work: KubeObject): SpokeReport | undefined {
  const text = spokeReportText(work);
  if (text === undefined) return undefined;
  const parsed = parseSpokeReport(text);
  return parsed.ok ? parsed.report : undefined;
}

/**
 * The policy kinds the params ConfigMap placed on a spoke asks its agent to watch, or why it cannot be
 * used (missing, or its `params` key not a valid params document): the agent then keeps what it watches.
 */
export function kindsOfParamsConfigMap(configMap: KubeObject | undefined): { ok: true; kinds: GroupVersionResource[] } | { ok: false; missing: boolean; errors: string[] } {
  if (!configMap) return { ok: false, missing: true, errors: ['params ConfigMap not found'] };
  const text = (configMap.data as Record<string, unknown> | undefined)?.params;
  const parsed = parseParamsJson(typeof text === 'string' ? text : '');
  return parsed.ok ? { ok: true, kinds: parsed.params.policiesToSync } : { ok: false, missing: false, errors: parsed.errors };
}
