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
