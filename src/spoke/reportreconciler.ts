// The spoke agent's one reconciler (DESIGN §6): the report of local policies (core/spokereport.ts), written
// into a ConfigMap on the spoke whenever what it says changes, and at least every heartbeat interval so that
// the hub can tell a live agent from a stopped one. The agent writes nothing else: no policy, no condition.
import type { Logger } from 'pino';
import { groupResourceKey, type GroupVersionResource } from '../core/gvr.ts';
import type { KubeObject } from '../core/objects.ts';
import { buildSpokeReport, reportContent, serializeSpokeReport, SPOKE_REPORT_KEY } from '../core/spokereport.ts';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../core/metadatakeys.ts';
import type { DynamicInformers } from '../kube/dynamicinformers.ts';
import type { KubeHttp } from '../kube/http.ts';
import { RESOURCES } from '../kube/resource.ts';
import { serverSideApply } from '../kube/writes.ts';
import type { ReconcileResult } from '../runtime/runner.ts';

export const REPORT_KEY = 'report';
export const SPOKE_FIELD_MANAGER = 'policy-sync-spoke';
/** While a kind's watch has not synced, how soon to look again. */
const UNSYNCED_RETRY_MS = 1_000;

export interface ReportReconcilerDeps {
  http: KubeHttp;
  informers: DynamicInformers;
  /** The kinds the agent watches now. */
  kinds: () => readonly GroupVersionResource[];
  /** Where the report goes (spokeReportName: beside the configuration ConfigMap). */
  report: { namespace: string; name: string };
  heartbeatMs: number;
  logger: Logger;
  now?: () => number;
}

export class ReportReconciler {
  private lastContent: string | undefined;
  private lastWrite: number | undefined;
  private readonly startedAt: number;
  private readonly now: () => number;

  constructor(private readonly d: ReportReconcilerDeps) {
    this.now = d.now ?? Date.now;
    this.startedAt = this.now();
  }

  async reconcile(): Promise<ReconcileResult> {
    const now = this.now();
    const kinds = this.d.kinds();
    const synced = new Map<string, readonly KubeObject[]>();
    const unsynced: string[] = [];
    for (const gvr of kinds) {
      const informer = this.d.informers.informer(gvr);
      if (informer?.synced) synced.set(groupResourceKey(gvr), informer.store.list());
      else unsynced.push(groupResourceKey(gvr));
    }
    // A report leaving out a kind whose watch is still listing would say "unknown" where the last one
    // knew: wait for it, up to one heartbeat (a kind that never syncs must not silence the others).
    const waitingSince = this.lastWrite ?? this.startedAt;
    if (unsynced.length > 0 && now - waitingSince < this.d.heartbeatMs) return { requeueAfterMs: UNSYNCED_RETRY_MS };

    const report = buildSpokeReport(synced, new Date(now));
    const content = reportContent(report);
    const due = this.lastWrite === undefined || content !== this.lastContent || now - this.lastWrite >= this.d.heartbeatMs;
    if (due) {
      await serverSideApply(this.d.http, RESOURCES.configMaps, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: this.d.report.name, namespace: this.d.report.namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } },
        data: { [SPOKE_REPORT_KEY]: serializeSpokeReport(report) },
      }, { fieldManager: SPOKE_FIELD_MANAGER, force: true });
      if (content !== this.lastContent) {
        const locals = Object.values(report.kinds).reduce((n, namespaces) => n + Object.values(namespaces).reduce((m, l) => m + l.length, 0), 0);
        this.d.logger.info({ kinds: Object.keys(report.kinds), unsynced, localPolicies: locals }, 'report of local policies written');
      }
      this.lastContent = content;
      this.lastWrite = now;
    }
    const next = unsynced.length > 0 ? UNSYNCED_RETRY_MS : this.lastWrite! + this.d.heartbeatMs - now;
    return { requeueAfterMs: Math.max(1, next) };
  }
}
