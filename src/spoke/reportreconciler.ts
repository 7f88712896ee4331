// The spoke agent's one reconciler (docs/architecture.md#local-policies-win, #reports-are-evidence-not-orders): the report of the watched kinds' objects
// (core/spokereport.ts), written into a ConfigMap on the spoke whenever what it says changes, and at least
// every heartbeat interval so that the hub can tell a live agent from a stopped one. The agent writes
// nothing else: no policy, no condition.
//
// A kind is reported only while its watch is live (synced, and no list or watch failing since the last
// that worked): a cache that lost its watch keeps objects that are gone, and the hub would act on them.
// A kind whose watch fails drops out at once (the controller wakes this reconciler on the failure), and
// comes back when the watch works again.
import type { Logger } from 'pino';
import { canonicalJson } from '../core/k8s/canonical.ts';
import { groupResourceKey, type GroupVersionResource } from '../core/k8s/gvr.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { buildSpokeReport, reportContent, serializeSpokeReport, SPOKE_REPORT_KEY } from '../core/spoke/spokereport.ts';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../core/metadatakeys.ts';
import type { DynamicInformers } from '../kube/dynamicinformers.ts';
import type { KubeHttp } from '../kube/http.ts';
import { RESOURCES } from '../kube/resource.ts';
import { serverSideApply } from '../kube/writes.ts';
import type { ReconcileResult } from '../runtime/runner.ts';

export const REPORT_KEY = 'report';
export const SPOKE_FIELD_MANAGER = 'policy-sync-spoke';
/**
 * While a kind's watch has not synced or is failing, how soon to look again: a watch that recovers with
 * no change to deliver (only a bookmark) wakes nobody.
 */
const NOT_LIVE_RETRY_MS = 1_000;

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
  /** The kinds left out last time and why, to log a change of them once. */
  private lastGaps = '{}';
  private readonly startedAt: number;
  private readonly now: () => number;

  constructor(private readonly d: ReportReconcilerDeps) {
    this.now = d.now ?? Date.now;
    this.startedAt = this.now();
  }

  async reconcile(): Promise<ReconcileResult> {
    const now = this.now();
    const live = new Map<string, readonly KubeObject[]>();
    const unsynced: string[] = [];
    const failing: Record<string, string> = {};
    for (const gvr of this.d.kinds()) {
      const key = groupResourceKey(gvr);
      const informer = this.d.informers.informer(gvr);
      if (!informer?.synced) unsynced.push(key);
      else if (!informer.live) failing[key] = String(informer.lastError);
      else live.set(key, informer.store.list());
    }
    const anyFailing = Object.keys(failing).length > 0;
    // A report leaving out a kind whose watch is still listing would say "unknown" where the last one
    // knew: wait for it, up to one heartbeat (a kind that never syncs must not silence the others) — but
    // not once a watch fails: that kind must leave the report now.
    const waitingSince = this.lastWrite ?? this.startedAt;
    if (unsynced.length > 0 && !anyFailing && now - waitingSince < this.d.heartbeatMs) return { requeueAfterMs: NOT_LIVE_RETRY_MS };

    const { report, leftOut } = buildSpokeReport(live, new Date(now));
    const gaps = canonicalJson({ failing, leftOut });
    if (gaps !== this.lastGaps) {
      if (anyFailing) this.d.logger.warn({ failing }, 'watch of a policy kind failing: the kind is left out of the report (unknown to the hub) until it works again');
      // Never cut short: a kind that does not fit is left out whole, so the hub knows it does not know.
      if (leftOut.length > 0) this.d.logger.warn({ leftOut }, 'policy kinds left out of the report: they would break its schema or caps');
      if (!anyFailing && leftOut.length === 0) this.d.logger.info('every live policy kind is in the report again');
      this.lastGaps = gaps;
    }
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
        const objects = Object.values(report.objects).reduce((n, namespaces) => n + Object.values(namespaces).reduce((m, l) => m + l.length, 0), 0);
        this.d.logger.info({ kinds: Object.keys(report.objects), unsynced, failing: Object.keys(failing), leftOut: leftOut.map((l) => l.kind), objects }, 'report of policy objects written');
      }
      this.lastContent = content;
      this.lastWrite = now;
    }
    const next = unsynced.length > 0 || anyFailing ? NOT_LIVE_RETRY_MS : this.lastWrite! + this.d.heartbeatMs - now;
    return { requeueAfterMs: Math.max(1, next) };
  }
}
