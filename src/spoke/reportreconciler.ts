// The spoke agent's one reconciler (docs/design/tenancy.md#local-policies-win, #reports-are-evidence-not-orders): the report of the watched kinds' objects
// (core/spokereport.ts), written into a ConfigMap on the spoke whenever what it says changes, and a small
// heartbeat ConfigMap (core/spokeheartbeat.ts) written every heartbeat interval, naming the digest of the
// report it vouches for, so that the hub can tell a live agent from a stopped one without the report being
// rewritten: a heartbeat costs the hub a few hundred bytes, not the report's size. The agent writes nothing
// else: no policy, no condition.
//
// The report is written before the heartbeat that names it. The report ConfigMap is followed (a cache of
// it alone): one that is not what the agent last wrote — deleted, edited, or left by an earlier run that
// saw something else — is written again; one an earlier run left saying the same is kept as it is.
//
// A kind is reported only while its watch is live (synced, and no list or watch failing since the last
// that worked): a cache that lost its watch keeps objects that are gone, and the hub would act on them.
// A kind whose watch fails drops out at once (the controller wakes this reconciler on the failure), and
// comes back only with a state taken afresh after the failure (the spoke's informers relist: Informer.live).
import type { Logger } from 'pino';
import { canonicalJson } from '../core/k8s/canonical.ts';
import { groupResourceKey, type GroupVersionResource } from '../core/k8s/gvr.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { namespacedKey } from '../core/k8s/objects.ts';
import { buildSpokeReport } from '../core/spoke/reportbuild.ts';
import { reportedCount } from '../core/spoke/reportquery.ts';
import { parseSpokeReport, reportContent, serializeSpokeReport } from '../core/spoke/reportwire.ts';
import { SPOKE_REPORT_KEY } from '../core/spoke/spokereport.ts';
import { reportDigest, serializeSpokeHeartbeat, SPOKE_HEARTBEAT_KEY } from '../core/spoke/spokeheartbeat.ts';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../core/metadatakeys.ts';
import type { DynamicInformers } from '../kube/dynamicinformers.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { Informer } from '../kube/informer.ts';
import { RESOURCES } from '../kube/resource.ts';
import { serverSideApply } from '../kube/writes.ts';
import type { ReconcileResult } from '../runtime/runner.ts';

export const REPORT_KEY = 'report';
export const SPOKE_FIELD_MANAGER = 'policy-sync-spoke';
/**
 * While a kind's watch has not synced or is failing, how soon to look again: a watch that recovers with
 * no change to deliver is live again only once its relist is delivered (informer onLive wakes this
 * reconciler too; this is the fallback).
 */
const NOT_LIVE_RETRY_MS = 1_000;
/** How long the report cache may lag the agent's own write before a difference counts as the ConfigMap changed by someone else. */
const OWN_WRITE_ECHO_MS = 10_000;

export interface ReportReconcilerDeps {
  http: KubeHttp;
  informers: DynamicInformers;
  /** The kinds the agent watches now. */
  kinds: () => readonly GroupVersionResource[];
  /** Where the report goes (spokeReportName: beside the configuration ConfigMap). */
  report: { namespace: string; name: string };
  /** The report ConfigMap as it is on the spoke (a cache of it alone). */
  reportCache: Informer;
  /** Where the heartbeat goes (spokeHeartbeatName). */
  heartbeat: { namespace: string; name: string };
  heartbeatMs: number;
  logger: Logger;
  now?: () => number;
}

export class ReportReconciler {
  /** The report text last written (or found on the spoke saying the same), and its content. */
  private last: { text: string; content: string } | undefined;
  private lastHeartbeat: number | undefined;
  /** Until when (agent clock) the report cache may still show what was there before the last write. */
  private echoUntil = 0;
  /** The kinds left out last time and why, to log a change of them once. */
  private lastGaps = '{}';
  private readonly startedAt: number;
  private readonly now: () => number;

  constructor(private readonly deps: ReportReconcilerDeps) {
    this.now = deps.now ?? Date.now;
    this.startedAt = this.now();
  }

  async reconcile(): Promise<ReconcileResult> {
    const now = this.now();
    // What is on the spoke must be known before it is kept or replaced.
    if (!this.deps.reportCache.synced) return { requeueAfterMs: NOT_LIVE_RETRY_MS };
    const live = new Map<string, readonly KubeObject[]>();
    const unsynced: string[] = [];
    const failing: Record<string, string> = {};
    for (const gvr of this.deps.kinds()) {
      const key = groupResourceKey(gvr);
      const informer = this.deps.informers.informer(gvr);
      if (!informer?.synced) unsynced.push(key);
      else if (!informer.live) failing[key] = String(informer.lastError);
      else live.set(key, informer.store.list());
    }
    const anyFailing = Object.keys(failing).length > 0;
    // A report leaving out a kind whose watch is still listing would say "unknown" where the last one
    // knew: wait for it, up to one heartbeat (a kind that never syncs must not silence the others) — but
    // not once a watch fails: that kind must leave the report now.
    const waitingSince = this.lastHeartbeat ?? this.startedAt;
    if (unsynced.length > 0 && !anyFailing && now - waitingSince < this.deps.heartbeatMs) return { requeueAfterMs: NOT_LIVE_RETRY_MS };

    const { report, leftOut } = buildSpokeReport(live, new Date(now));
    const gaps = canonicalJson({ failing, leftOut });
    if (gaps !== this.lastGaps) {
      if (anyFailing) this.deps.logger.warn({ failing }, 'watch of a policy kind failing: the kind is left out of the report (unknown to the hub) until it works again');
      // Never cut short: a kind that does not fit is left out whole, so the hub knows it does not know.
      if (leftOut.length > 0) this.deps.logger.warn({ leftOut }, 'policy kinds left out of the report: they would break its schema or caps');
      if (!anyFailing && leftOut.length === 0) this.deps.logger.info('every live policy kind is in the report again');
      this.lastGaps = gaps;
    }
    const content = reportContent(report);
    const onSpoke = this.reportOnSpoke();
    // At start, a report an earlier run left that says the same is kept: a restart rewrites nothing.
    if (!this.last && onSpoke !== undefined) {
      const found = parseSpokeReport(onSpoke);
      if (found.ok && reportContent(found.report) === content) this.last = { text: onSpoke, content };
    }
    // The cache shows the agent's own write a moment after it: until then, a difference is only the lag.
    if (onSpoke === this.last?.text) this.echoUntil = 0;
    const drifted = onSpoke !== this.last?.text && now >= this.echoUntil;
    let wrote = false;
    if (content !== this.last?.content || drifted) {
      const text = serializeSpokeReport(report);
      await this.apply(this.deps.report, SPOKE_REPORT_KEY, text);
      if (content !== this.last?.content) {
        this.deps.logger.info({ kinds: Object.keys(report.objects), unsynced, failing: Object.keys(failing), leftOut: leftOut.map((l) => l.kind), objects: reportedCount(report), bytes: text.length }, 'report of policy objects written');
      } else {
        this.deps.logger.warn({ report: this.deps.report }, 'report ConfigMap missing or not as written: written again');
      }
      this.last = { text, content };
      this.echoUntil = now + OWN_WRITE_ECHO_MS;
      wrote = true;
    }
    // The heartbeat that names the report follows it at once, so that the hub counts the new content.
    if (wrote || this.lastHeartbeat === undefined || now - this.lastHeartbeat >= this.deps.heartbeatMs) {
      const heartbeat = serializeSpokeHeartbeat({ heartbeat: new Date(now).toISOString(), report: reportDigest(this.last.text) });
      await this.apply(this.deps.heartbeat, SPOKE_HEARTBEAT_KEY, heartbeat);
      this.lastHeartbeat = now;
    }
    const echoPending = this.echoUntil > now && onSpoke !== this.last.text;
    const next = unsynced.length > 0 || anyFailing || echoPending ? NOT_LIVE_RETRY_MS : this.lastHeartbeat + this.deps.heartbeatMs - now;
    return { requeueAfterMs: Math.max(1, next) };
  }

  /** The report's text as the spoke has it now (cached); undefined when there is none. */
  private reportOnSpoke(): string | undefined {
    const cm = this.deps.reportCache.store.get(namespacedKey(this.deps.report.namespace, this.deps.report.name));
    const text = (cm?.data as Record<string, unknown> | undefined)?.[SPOKE_REPORT_KEY];
    return typeof text === 'string' ? text : undefined;
  }

  private async apply(at: { namespace: string; name: string }, key: string, text: string): Promise<void> {
    await serverSideApply(this.deps.http, RESOURCES.configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: at.name, namespace: at.namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } },
      data: { [key]: text },
    }, { fieldManager: SPOKE_FIELD_MANAGER, force: true });
  }
}
