// The spoke agent's reconciler (DESIGN §6): for one policy kind in one namespace, computes which synced
// policies local policies override, and writes each synced policy's `Enforced` condition accordingly.
// Local policies are only read, never written.
import type { Logger } from 'pino';
import { computeConflicts, desiredEnforcedCondition } from '../core/conflicts.ts';
import { enforcedAction } from '../core/enforcement.ts';
import { parseGvrKey } from '../core/gvr.ts';
import { objectKey } from '../core/objects.ts';
import type { DynamicInformers } from '../kube/dynamicinformers.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import type { EnforcedWriter, SpokeKind } from './enforcedwriter.ts';

export const BY_NAMESPACE = 'namespace';

/** Work-queue key: `<resource>.<version>.<group>|<namespace>`. */
export function namespaceKey(kindKey: string, namespace: string): string {
  return `${kindKey}|${namespace}`;
}

export class ConflictReconciler {
  constructor(
    private readonly informers: DynamicInformers,
    private readonly kinds: () => Map<string, SpokeKind>,
    private readonly writer: EnforcedWriter,
    private readonly logger: Logger,
  ) {}

  async reconcile(key: string): Promise<ReconcileResult> {
    const [kindKey = '', namespace = ''] = key.split('|');
    const kind = this.kinds().get(kindKey);
    if (!kind) return; // no longer watched
    const informer = this.informers.informer(parseGvrKey(kindKey));
    if (!informer?.synced) return { requeueAfterMs: 500 };
    const policies = informer.store.byIndex(BY_NAMESPACE, namespace);
    const verdicts = computeConflicts(policies);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    for (const policy of policies) {
      const verdict = verdicts.get(objectKey(policy));
      if (!verdict) continue; // a local policy: never touched
      const action = enforcedAction(policy, desiredEnforcedCondition(verdict, kind.kind, policy.metadata.generation, now));
      if (action.action === 'none') continue;
      await this.writer.perform(kind, policy, action);
      this.logger.info(
        { policy: objectKey(policy), kind: kindKey, action: action.action, verdict: verdict.state, ...('by' in verdict ? { by: verdict.by } : {}) },
        'Enforced condition of synced policy written',
      );
    }
  }
}
