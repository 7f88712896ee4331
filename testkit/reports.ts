// Spoke reports for unit tests: built from objects the way the agent builds them, and read back the way the hub
// reads them, failing the test where either would leave something out or refuse it.
import assert from 'node:assert/strict';
import type { KubeObject } from '../src/core/k8s/objects.ts';
import { buildSpokeReport } from '../src/core/spoke/reportbuild.ts';
import { parseSpokeReport } from '../src/core/spoke/reportwire.ts';
import type { SpokeReport } from '../src/core/spoke/spokereport.ts';

/** The report of these objects, by `resource.group`, written at `now`; every kind must fit. */
export function builtReport(kinds: readonly [string, readonly KubeObject[]][], now: Date): SpokeReport {
  const { report, leftOut } = buildSpokeReport(new Map(kinds), now);
  assert.deepEqual(leftOut, []);
  return report;
}

/** The report the hub reads from `text`; it must not be refused. */
export function parsedReport(text: string): SpokeReport {
  const result = parseSpokeReport(text);
  assert.ok(result.ok, JSON.stringify(result));
  return result.report;
}

/**
 * `work` (a spoke-configuration or heartbeat work) with the status OCM's work agent writes once it applied the spec as
 * it is: the String feedback `key` = `text` for the ConfigMap the spec holds at `ordinal`, named as the spec names it.
 */
export function withConfigMapFeedback(work: KubeObject, ordinal: number, key: string, text: string): KubeObject {
  const manifest = (work.spec as { workload: { manifests: KubeObject[] } }).workload.manifests[ordinal]!;
  const resourceMeta = { ordinal, group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', name: manifest.metadata.name, namespace: manifest.metadata.namespace };
  return { ...work, status: { resourceStatus: { manifests: [{ resourceMeta, conditions: [], statusFeedback: { values: [{ name: key, fieldValue: { type: 'String', string: text } }] } }] } } };
}
