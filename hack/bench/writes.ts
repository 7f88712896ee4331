// The writes a workload made, as a report: the hub apiserver's counters over its window (testkit/counters.ts)
// less the bench's own writes, against the minimum the workload needs.
import { total, withoutOwn, type Delta } from '../../testkit/counters.ts';
import type { WriteReport } from './report.ts';

export function report(d: Delta, own: Record<string, number>, minimum: number, quiet: boolean, target?: { text: string; ok: (w: WriteReport) => boolean }): WriteReport {
  const writes = withoutOwn(d.writes, own);
  const w: WriteReport = {
    byRequest: Object.fromEntries(writes),
    total: total(writes),
    minimum,
    reviews: Object.fromEntries(d.reviews),
    background: Object.fromEntries(d.background),
    others: Object.fromEntries(d.others),
    own,
    quiet,
  };
  if (target) {
    w.target = target.text;
    w.ok = quiet && target.ok(w);
  }
  return w;
}

const WORKS_KEY = (verb: string): string => `${verb} work.open-cluster-management.io/manifestworks`;
/** The controller creates an absent work with POST and server-side applies only a change: both are work writes. */
const WORK_WRITE_VERBS = ['POST', 'APPLY'];
export const POLICY_PATCH = 'PATCH kuadrant.io/authpolicies';

export function workWrites(w: WriteReport): number {
  return WORK_WRITE_VERBS.reduce((n, verb) => n + (w.byRequest[WORKS_KEY(verb)] ?? 0), 0);
}

/** Writes to the policies themselves (the policies-synced and status annotations), whatever the verb. */
export function policyWrites(w: WriteReport): number {
  return Object.entries(w.byRequest).reduce((n, [k, v]) => n + (k.endsWith(' kuadrant.io/authpolicies') ? v : 0), 0);
}

/** The hub Gateway's status (docs/design/status.md#gateway-status), whatever the verb. */
export function gatewayStatusWrites(w: WriteReport): number {
  return Object.entries(w.byRequest).reduce((n, [k, v]) => n + (k.endsWith(' gateway.networking.k8s.io/gateways/status') ? v : 0), 0);
}

/** PolicyVariants' status (docs/concepts/variants.md, "Status"), whatever the verb. */
export function variantStatusWrites(w: WriteReport): number {
  return Object.entries(w.byRequest).reduce((n, [k, v]) => n + (k.endsWith(' policysync.kuadrant.io/policyvariants/status') ? v : 0), 0);
}

/**
 * The fan-out's writes: P×C work writes (creates, or applies) + ≤ P annotation writes + ≤ G Gateway status
 * writes (the workload's one Gateway, created with it) + ≤ V PolicyVariant status writes (the clusters each
 * variant changes, once they are placed), and nothing else.
 */
export function fanoutWrites(d: Delta, quiet: boolean, N: number, P: number, G = 1, V = 0): WriteReport {
  const variants = V > 0 ? ` + ≤ ${V} variant status` : '';
  return report(d, { 'APPLY gateway.networking.k8s.io/gateways': G }, N + P, quiet, {
    text: `${N} work writes + ≤ ${P} patches + ≤ ${G} Gateway status${variants}`,
    ok: (w) =>
      workWrites(w) === N &&
      policyWrites(w) <= P &&
      gatewayStatusWrites(w) <= G &&
      variantStatusWrites(w) <= V &&
      w.total === workWrites(w) + policyWrites(w) + gatewayStatusWrites(w) + variantStatusWrites(w),
  });
}
