// Removes from the spoke copies the labels and annotations the hub copy dropped (docs/design/works.md#manifestworks).
// OCM's work agent applies a copy under the `Update` strategy by merging its labels and annotations into the spoke
// object, so a key the hub policy lost stays on the copy; the copy names such keys in its dropped-keys annotation
// (core/works/droppedkeys.ts), and this reconciler removes them. It writes only copies of ours (the sync's
// `kuadrant.io/policy-synced` annotation), only the keys the copy names, and only the object as it read it (the
// patch carries its resourceVersion: a copy the work agent rewrote meanwhile is looked at again). A spoke team's
// own policy carries neither annotation and is never written.
import type { Logger } from 'pino';
import { groupResourceKey, gvrKey, parseGroupResourceKey, type GroupResource } from '../core/k8s/gvr.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { objectKey } from '../core/k8s/objects.ts';
import { droppedKeysPatch } from '../core/works/droppedkeys.ts';
import type { DynamicInformers } from '../kube/dynamicinformers.ts';
import { isForbidden, isConflict, isNotFound, type KubeHttp } from '../kube/http.ts';
import { mergePatch } from '../kube/writes.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import { SPOKE_FIELD_MANAGER } from './reportreconciler.ts';

/** Without the grant to patch a kind (a ClusterRole not updated), how soon to try again. */
const FORBIDDEN_RETRY_MS = 5 * 60_000;

export interface DroppedKeysReconcilerDeps {
  http: KubeHttp;
  informers: DynamicInformers;
  logger: Logger;
}

/** The queue key of one spoke object: `<groupResourceKey>|<namespace>/<name>`. */
export function droppedKeysKey(gr: GroupResource, object: KubeObject): string {
  return `${groupResourceKey(gr)}|${objectKey(object)}`;
}

/** Whether a change of `object` may need the reconciler: it names keys it still carries. */
export function carriesDroppedKeys(object: KubeObject): boolean {
  return droppedKeysPatch(object) !== undefined;
}

export class DroppedKeysReconciler {
  /** Kinds the agent may not patch, logged once each until a patch of them works. */
  private readonly forbidden = new Set<string>();

  constructor(private readonly deps: DroppedKeysReconcilerDeps) {}

  async reconcile(key: string): Promise<ReconcileResult> {
    const bar = key.indexOf('|');
    const gr = parseGroupResourceKey(key.slice(0, bar));
    const objectKey = key.slice(bar + 1);
    // A kind no longer watched, or the object gone: nothing to remove. The patch goes to the version watched.
    const gvr = this.deps.informers.kind(gr)?.gvr;
    const object = this.deps.informers.informer(gr)?.store.get(objectKey);
    if (!gvr || !object) return;
    const patch = droppedKeysPatch(object);
    if (!patch) return;
    const { namespace, name } = object.metadata;
    const log = this.deps.logger.child({ kind: gvrKey(gvr), object: objectKey });
    const resource = { ...gvr, namespaced: namespace !== undefined };
    try {
      await mergePatch(this.deps.http, resource, namespace, name, patch, { fieldManager: SPOKE_FIELD_MANAGER, discardResponse: true });
    } catch (err) {
      // Changed since it was read (the work agent applied it again), or gone: the watch brings what it is now.
      if (isConflict(err) || isNotFound(err)) return;
      if (isForbidden(err)) {
        if (!this.forbidden.has(gvrKey(gvr))) {
          log.error({ err: String(err) }, 'cannot remove the labels and annotations the hub copy dropped: the spoke agent needs `patch` on this kind (its ClusterRole)');
          this.forbidden.add(gvrKey(gvr));
        }
        return { requeueAfterMs: FORBIDDEN_RETRY_MS };
      }
      throw err;
    }
    this.forbidden.delete(gvrKey(gvr));
    log.info({ removed: patch.metadata }, 'labels and annotations the hub copy dropped removed from the spoke copy');
  }
}
