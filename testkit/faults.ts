// What every fault-injection scenario measures: ManifestWork deletions on the hub apiserver (its audit
// log, so every client's deletes count and are named), the uids of the spoke copies (a copy deleted and
// re-created has a new one), and how long convergence took after the fault was lifted.
import assert from 'node:assert/strict';
import type { Sandbox } from './sandbox/sandbox.ts';
import type { KubeHttp } from '../src/kube/http.ts';
import type { ResourceRef } from '../src/kube/resource.ts';
import { AuditCursor, describeWrite } from './audit.ts';
import { get } from './fixtures.ts';

/**
 * Records the hub's ManifestWork deletions from now on; `assertNone()` later fails if any was deleted
 * since (singly or by collection, by any client), naming each one and its client from the audit log.
 * The namespace controller emptying a namespace that a user deleted (an earlier test's cleanup, finishing
 * in the background) is that user's request, and is not counted.
 */
export function deletionWatch(sandbox: Sandbox): { assertNone(what: string): Promise<void> } {
  const audit = AuditCursor.at(sandbox, 'hub');
  return {
    assertNone(what: string) {
      const deletes = audit
        .since()
        .filter((w) => w.resource === 'manifestworks' && (w.verb === 'delete' || w.verb === 'deletecollection') && !w.userAgent.includes('/namespace-controller'));
      assert.equal(deletes.length, 0, `no ManifestWork may be deleted: ${what}; deleted:\n${deletes.map(describeWrite).join('\n')}`);
      return Promise.resolve();
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
