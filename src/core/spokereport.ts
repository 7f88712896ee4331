// The spoke agent's report (DESIGN §6): the local policies of each watched kind, by namespace, reduced to
// their Gateway targets, with a heartbeat. The agent writes it into a ConfigMap on its spoke; the hub
// reads it back as a status feedback value of the spoke-configuration ManifestWork (a ReadOnly manifest)
// and decides from it where a copy is overridden. It is the agent's only channel: it never writes a
// condition the spoke's policy controller owns. Pure.
import { z } from 'zod';
import { canonicalJson } from './canonical.ts';
import { localPolicyOf, type LocalPolicy } from './conflicts.ts';
import { kubeTimeMillis } from './kubetime.ts';
import type { KubeObject } from './objects.ts';
import { parseJson } from './parsejson.ts';

/** The report ConfigMap's name: beside the spoke configuration ConfigMap, named after it. */
export function spokeReportName(configMapName: string): string {
  return `${configMapName}-report`;
}
/** Its data key, and the name of the feedback value that carries it to the hub. */
export const SPOKE_REPORT_KEY = 'report';
/** How often the agent rewrites an unchanged report, so that the hub can tell it is alive. */
export const DEFAULT_REPORT_HEARTBEAT_MS = 30_000;
/**
 * How old a report may be and still count. Past it, what it says of local policies is not acted on: a copy
 * it kept off a cluster is placed again (an absent or stopped agent never withdraws anything).
 */
export const DEFAULT_REPORT_STALE_MS = 120_000;

export interface SpokeReport {
  /** When the agent wrote it (RFC 3339, the spoke's clock). */
  heartbeat: string;
  /**
   * By `resource.group` of each kind the agent watches with a synced cache, by namespace, the local
   * policies there that take at least one Gateway. A kind absent is unknown, not free of local policies.
   */
  kinds: Record<string, Record<string, { name: string; targets: LocalPolicy['targets'] }[]>>;
}

/** The report of one spoke, from each watched kind's policies (cached and synced), by `resource.group`. */
export function buildSpokeReport(policiesByKind: ReadonlyMap<string, readonly KubeObject[]>, now: Date): SpokeReport {
  const kinds: SpokeReport['kinds'] = {};
  for (const [kind, policies] of [...policiesByKind].sort(([a], [b]) => compare(a, b))) {
    const namespaces: SpokeReport['kinds'][string] = {};
    for (const policy of policies) {
      const local = localPolicyOf(policy);
      if (!local) continue;
      const namespace = policy.metadata.namespace ?? '';
      (namespaces[namespace] ??= []).push({ name: policy.metadata.name, targets: local.targets });
    }
    for (const list of Object.values(namespaces)) list.sort((a, b) => compare(a.name, b.name));
    kinds[kind] = namespaces;
  }
  return { heartbeat: now.toISOString().replace(/\.\d+Z$/, 'Z'), kinds };
}

/** The report as written: canonical JSON, so that the same local policies give the same text. */
export function serializeSpokeReport(report: SpokeReport): string {
  return canonicalJson(report);
}

/** What the report says of local policies, without the heartbeat: equal when nothing changed. */
export function reportContent(report: SpokeReport): string {
  return canonicalJson(report.kinds);
}

const targetSchema = z.object({ gateway: z.string(), sectionName: z.string().optional() });
const reportSchema = z.object({
  heartbeat: z.string(),
  kinds: z.record(z.string(), z.record(z.string(), z.array(z.object({ name: z.string(), targets: z.array(targetSchema) })))),
});

/** The report parsed back; undefined when absent or not of this shape (then it says nothing). */
export function parseSpokeReport(text: string | undefined): SpokeReport | undefined {
  const parsed = parseJson(text, reportSchema);
  if (!parsed || kubeTimeMillis(parsed.heartbeat) === undefined) return undefined;
  const kinds: SpokeReport['kinds'] = {};
  for (const [kind, namespaces] of Object.entries(parsed.kinds)) {
    kinds[kind] = Object.fromEntries(
      Object.entries(namespaces).map(([namespace, locals]) => [
        namespace,
        locals.map((l) => ({ name: l.name, targets: l.targets.map((t) => (t.sectionName === undefined ? { gateway: t.gateway } : { gateway: t.gateway, sectionName: t.sectionName })) })),
      ]),
    );
  }
  return { heartbeat: parsed.heartbeat, kinds };
}

/**
 * Until when (ms since the epoch) the report counts. The heartbeat is the spoke's clock and `now` the hub's:
 * the stale limit is several heartbeats, so that ordinary clock skew does not matter.
 */
export function reportFreshUntil(report: SpokeReport, staleAfterMs: number): number {
  return (kubeTimeMillis(report.heartbeat) ?? Number.NEGATIVE_INFINITY) + staleAfterMs;
}

/**
 * The local policies of one kind in one namespace; undefined when the report does not cover the kind
 * (unknown: nothing may be concluded from it).
 */
export function localPoliciesIn(report: SpokeReport, kind: string, namespace: string): LocalPolicy[] | undefined {
  if (!Object.hasOwn(report.kinds, kind)) return undefined;
  const namespaces = report.kinds[kind]!;
  const locals = Object.hasOwn(namespaces, namespace) ? namespaces[namespace]! : [];
  return locals.map((l) => ({ key: `${namespace}/${l.name}`, targets: l.targets }));
}

/** The kinds whose local policies differ between two reports (either absent: every kind of the other). */
export function changedKinds(before: SpokeReport | undefined, after: SpokeReport | undefined): string[] {
  const kinds = new Set([...Object.keys(before?.kinds ?? {}), ...Object.keys(after?.kinds ?? {})]);
  return [...kinds]
    .filter((kind) => canonicalJson(kindOf(before, kind)) !== canonicalJson(kindOf(after, kind)))
    .sort(compare);
}

function kindOf(report: SpokeReport | undefined, kind: string): SpokeReport['kinds'][string] | null {
  return report && Object.hasOwn(report.kinds, kind) ? report.kinds[kind]! : null;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
