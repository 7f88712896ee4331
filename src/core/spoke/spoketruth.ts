// What each spoke really runs of a hub policy, by its spoke agent's fresh report (docs/design/tenancy.md#what-runs-on-a-spoke):
// - Drifted: the copy a work of the policy places runs there, but it is not what the hub sent (core/spoke/copydrift.ts);
// - Lingering: a copy of the policy runs where no work of the policy places it — OCM's work agent let its work go and
//   left the copy (docs/reliability.md), or it was placed by a work gone while the spoke was cut off. A copy seen so
//   for less than LINGER_GRACE_MS is only `removing`: a work deleted a moment ago takes its copy with it a moment later,
//   and the report that says so travels behind it. A copy no AppliedManifestWork owns (left on purpose by the Orphan
//   delete option) is no one's any more: not lingering.
// A report that is absent, stale or refused says nothing here, and a kind the report does not cover neither. The
// first time each lingering copy was seen is the caller's memory (like a rollout's soak clocks): this is pure.
import { namespacedKey, type KubeObject } from '../k8s/objects.ts';
import type { ReportEvidence } from './firstcopy.ts';
import { copiesBySource, copyAt, type ListedCopy } from './reportquery.ts';
import type { CopyDrift, SpokeReport } from './spokereport.ts';
import { partHash } from '../works/copydigest.ts';

/**
 * How long a copy may be reported where the policy has no work before it is said to linger: the agent deletes a
 * work's copy within a second of the work (measured: 0.2–0.4 s), the spoke agent rewrites its report at once, and
 * the report comes back through the work agent's status feedback (10 s status sync by default): three times that.
 */
export const LINGER_GRACE_MS = 30_000;

/** A copy that runs where the policy's work places it, not as sent. */
export interface DriftedCopy {
  cluster: string;
  kind: string;
  namespace: string;
  name: string;
  drift: CopyDrift;
}

/** A copy of the policy reported where none of its works places it. */
export interface LingeringCopy {
  cluster: string;
  /** `resource.group` of the copy's kind. */
  kind: string;
  namespace: string;
  name: string;
  /** When (ms since the epoch, the hub's wall clock) this process first saw it reported so. */
  seenSince: number;
  /** Seen so for LINGER_GRACE_MS: it lingers. Before, it is being removed, as far as the hub can tell. */
  lingering: boolean;
  /** Not what was sent either, when the report says so. */
  drift?: CopyDrift;
}

/** What the spoke reports say runs of a policy: drifted copies, lingering ones, and whether drift is put back. */
export interface SpokeTruth {
  drifted: DriftedCopy[];
  lingering: LingeringCopy[];
  /** Drift is put back (every class of the policy's Gateways says `drift: Correct`, the default). */
  correct: boolean;
  /**
   * The policy is this controller's only by its withdrawal mark (core/pipeline/withdrawal.ts): nothing is placed for
   * it, and what its copies left behind is still this controller's to witness and mend.
   */
  withdrawn?: boolean;
}

/** A reported copy of a policy on one cluster, as the view finds it. */
export interface ReportedCopyOn extends ListedCopy {
  cluster: string;
}

/** The key of a copy on a cluster, for the caller's memory of when each was first seen lingering. */
export function lingerKey(cluster: string, kind: string, namespace: string, name: string): string {
  return `${cluster}|${kind}|${namespace}/${name}`;
}

/** The cluster a lingerKey names. */
export function clusterOfLingerKey(key: string): string {
  return key.slice(0, key.indexOf('|'));
}

/** A copy first seen where no work places it at `seenSince` lingers at `now` once LINGER_GRACE_MS have passed; before, it is being removed. */
export function pastLingerGrace(seenSince: number, now: number): boolean {
  return now - seenSince >= LINGER_GRACE_MS;
}

/**
 * The copies the policy's works place that their cluster's fresh report shows drifted. `observed`: the policy's
 * works as cached, by cluster (the copy each places); `kind`: `resource.group`; `source`: the policy's `namespace/name`.
 */
export function driftedCopies(kind: string, source: string, placed: ReadonlyMap<string, KubeObject>, evidenceOf: (cluster: string) => ReportEvidence): DriftedCopy[] {
  const out: DriftedCopy[] = [];
  for (const [cluster, copy] of [...placed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const evidence = evidenceOf(cluster);
    if (evidence.state !== 'fresh') continue;
    const namespace = copy.metadata.namespace ?? '';
    const reported = copyAt(evidence.report, kind, namespace, copy.metadata.name);
    if (reported?.synced !== source || !reported.drift) continue;
    out.push({ cluster, kind, namespace, name: copy.metadata.name, drift: reported.drift });
  }
  return out;
}

/**
 * The copies of the policy that fresh reports list where none of the policy's works places them: `reported` (every
 * copy of the policy's kind and `namespace/name` the fresh reports list, from the view), `placed` (the copy each
 * observed work places, by cluster: of the policy's kind), `seen` (when each was first seen so, by lingerKey; the
 * caller keeps what this returns), `now`.
 */
export function lingeringCopies(reported: readonly ReportedCopyOn[], placed: ReadonlyMap<string, KubeObject>, seen: ReadonlyMap<string, number>, now: number): LingeringCopy[] {
  const out: LingeringCopy[] = [];
  for (const r of reported) {
    if (r.copy.unowned) continue;
    const here = placed.get(r.cluster);
    if (here && namespacedKey(here.metadata.namespace ?? '', here.metadata.name) === namespacedKey(r.namespace, r.copy.name)) continue;
    const key = lingerKey(r.cluster, r.kind, r.namespace, r.copy.name);
    const seenSince = Math.min(seen.get(key) ?? now, now);
    out.push({ cluster: r.cluster, kind: r.kind, namespace: r.namespace, name: r.copy.name, seenSince, lingering: pastLingerGrace(seenSince, now), ...(r.copy.drift ? { drift: r.copy.drift } : {}) });
  }
  return out.sort((a, b) => cmp(lingerKey(a.cluster, a.kind, a.namespace, a.name), lingerKey(b.cluster, b.kind, b.namespace, b.name)));
}

/** When the next copy seen being removed would be said to linger (ms since the epoch); undefined when none waits. */
export function lingerRecheckAt(copies: readonly LingeringCopy[]): number | undefined {
  const waiting = copies.filter((c) => !c.lingering).map((c) => c.seenSince + LINGER_GRACE_MS);
  return waiting.length > 0 ? Math.min(...waiting) : undefined;
}

/**
 * A short token naming one drift: its fields, the managers' names, and the ten seconds it started in. A new drift, a
 * new token — and so a put-back (the work relabelled); but a hand on the spoke that fights the put-back, writing the
 * same fields again within those ten seconds, gets the same token: at most one put-back of the same fields by the same
 * hand in ten seconds, not a write loop with it (the agent's own resync puts back the rest, every 4–6 minutes).
 */
export function driftToken(drift: CopyDrift): string {
  return partHash([drift.fields, drift.more ?? 0, drift.managers.map((m) => m.manager), drift.since?.slice(0, DRIFT_TOKEN_TIME_CHARS) ?? null]);
}

/** `2026-12-02T02:33:5`: an RFC 3339 time cut to its ten seconds. */
const DRIFT_TOKEN_TIME_CHARS = 18;

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A copy a spoke report lists where no work of its policy places it, with the policy it copies. */
export interface UnplacedCopy extends LingeringCopy {
  /** The hub policy it copies, `namespace/name`. */
  source: string;
}

/**
 * Over the whole hub (`policy-sync status --lingering`): the copies the reports list where no work of their policy
 * places them, policy by policy by the very rule the hub applies (lingeringCopies), the policy gone or not.
 * `reports`: by cluster; `placed(kind, source)`: the copy each work of that policy places, by cluster.
 */
export function unplacedCopies(
  reports: ReadonlyMap<string, SpokeReport>,
  placed: (kind: string, source: string) => ReadonlyMap<string, KubeObject>,
  seen: ReadonlyMap<string, number>,
  now: number,
): UnplacedCopy[] {
  const bySource = new Map<string, ReportedCopyOn[]>();
  for (const [cluster, report] of reports) {
    for (const [source, copies] of copiesBySource(report)) {
      for (const c of copies) {
        const key = `${c.kind}|${source}`;
        const list = bySource.get(key) ?? [];
        list.push({ cluster, ...c });
        bySource.set(key, list);
      }
    }
  }
  const out: UnplacedCopy[] = [];
  for (const [key, reported] of [...bySource].sort(([a], [b]) => cmp(a, b))) {
    const bar = key.indexOf('|');
    const [kind, source] = [key.slice(0, bar), key.slice(bar + 1)];
    for (const l of lingeringCopies(reported, placed(kind, source), seen, now)) out.push({ ...l, source });
  }
  return out;
}
