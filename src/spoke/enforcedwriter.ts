// Writes the agent's decision about a synced policy's `Enforced` condition. Where the CRD declares
// `status.conditions` a map list keyed by `type`, the agent owns that one entry through server-side
// apply on the status subresource with its own field manager; otherwise it does a resourceVersion-
// guarded read-modify-write of that one entry (a conflict fails the pass, which is retried).
import type { Condition } from '../core/conditions.ts';
import { ENFORCED_CONDITION } from '../core/conflicts.ts';
import type { EnforcedAction } from '../core/enforcement.ts';
import { DISPLACED_ENFORCED_ANNOTATION } from '../core/metadatakeys.ts';
import type { KubeObject } from '../core/objects.ts';
import type { KubeHttp } from '../kube/http.ts';
import { objectPath, type ResourceRef } from '../kube/resource.ts';
import { getObject, mergePatch, serverSideApply } from '../kube/writes.ts';

export const SPOKE_FIELD_MANAGER = 'policy-sync-spoke';

export interface SpokeKind extends ResourceRef {
  kind: string;
  conditionsMapList: boolean;
}

export class EnforcedWriter {
  constructor(
    private readonly http: KubeHttp,
    private readonly fieldManager = SPOKE_FIELD_MANAGER,
  ) {}

  async perform(kind: SpokeKind, policy: KubeObject, action: EnforcedAction): Promise<void> {
    switch (action.action) {
      case 'none':
        return;
      case 'takeOver':
        // Record first: if the condition write then fails, the next pass still knows what to restore.
        await this.annotate(kind, policy, JSON.stringify(action.displaced));
        await this.writeCondition(kind, policy, action.condition);
        return;
      case 'update':
        await this.writeCondition(kind, policy, action.condition);
        return;
      case 'release':
        await this.writeCondition(kind, policy, action.restore);
        await this.annotate(kind, policy, null);
        return;
    }
  }

  private async annotate(kind: SpokeKind, policy: KubeObject, value: string | null): Promise<void> {
    await mergePatch(this.http, kind, policy.metadata.namespace, policy.metadata.name, {
      metadata: { annotations: { [DISPLACED_ENFORCED_ANNOTATION]: value } },
    }, { fieldManager: this.fieldManager });
  }

  /** Sets (or, with undefined, removes) the Enforced entry, leaving every other condition alone. */
  private async writeCondition(kind: SpokeKind, policy: KubeObject, condition: Condition | undefined): Promise<void> {
    const { name, namespace } = policy.metadata;
    if (kind.conditionsMapList) {
      await serverSideApply(this.http, kind, {
        apiVersion: policy.apiVersion,
        kind: kind.kind,
        metadata: { name, namespace },
        status: { conditions: condition ? [condition] : [] },
      }, { fieldManager: this.fieldManager, force: true, subresource: 'status' });
      return;
    }
    const live = await getObject(this.http, kind, namespace, name);
    if (!live) return;
    const others = ((live.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).filter((c) => c.type !== ENFORCED_CONDITION);
    const status = { ...(live.status as Record<string, unknown> | undefined), conditions: condition ? [...others, condition] : others };
    // PUT carries live.metadata.resourceVersion: a concurrent change answers 409 and the pass is retried.
    await this.http.request('PUT', objectPath(kind, namespace, name, 'status'), { body: { ...live, status } });
  }
}
