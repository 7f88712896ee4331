// No evidence is not evidence of absence (docs/design/tenancy.md#reports-are-evidence-not-orders): which clusters
// get no FIRST copy of a policy for want of a spoke agent's fresh report that vouches for the copy's name. A
// first copy is one the policy has no work for on the cluster (never placed, or withdrawn because local policies
// covered it), or one whose work would now place a copy of another kind, namespace or name: its name has not been
// checked there. A work whose copy keeps its identity is not held: the spoke object is this policy's copy
// already, so an edit takes nothing over and places nothing new — unless the work is being deleted. Pure: the decision pipeline
// (core/pipeline/policypipeline.ts) calls it with the evidence its view holds.
import { namespacedKey, type KubeObject } from '../k8s/objects.ts';
import type { ManifestWork } from '../works/manifestwork.ts';
import { occupantOf } from './reportquery.ts';
import { type SpokeReport } from './spokereport.ts';

/** What the hub holds from one cluster's agent: a fresh report, or the evidence missing. */
export type ReportEvidence =
  | { state: 'fresh'; report: SpokeReport }
  | { state: 'absent' }
  /** Stale since this hub wall time (ISO). */
  | { state: 'stale'; since: string }
  | { state: 'refused'; why: string };

export interface AwaitingCluster {
  cluster: string;
  message: string;
}

/**
 * The clusters of `desired` whose first copy of `kind` (`resource.group`) waits for evidence, with what is
 * missing. `observed`: the policy's works as cached; `evidenceOf`: what is held from each cluster's agent.
 */
export function awaitingFirstCopies(kind: string, desired: ReadonlyMap<string, ManifestWork>, observed: readonly KubeObject[], evidenceOf: (cluster: string) => ReportEvidence): AwaitingCluster[] {
  // A work being deleted (its policy was deleted and re-created, or its copy withdrawn) is no copy in place: its
  // agent is removing the spoke object, and what the hub writes next there is a first copy again.
  const placed = new Map(observed.filter((w) => !w.metadata.deletionTimestamp).map((w) => [w.metadata.namespace ?? '', placedCopy(w)]));
  const held: AwaitingCluster[] = [];
  for (const [cluster, work] of desired) {
    const copy = work.spec.workload.manifests[0];
    if (!copy || sameIdentity(placed.get(cluster), copy)) continue;
    const missing = missingEvidence(evidenceOf(cluster), kind, copy);
    if (missing === undefined) continue;
    const at = namespacedKey(copy.metadata.namespace ?? '', copy.metadata.name);
    held.push({ cluster, message: `${missing}; ${copy.kind} ${at} is placed once a fresh report shows the name free there` });
  }
  return held;
}

/** What is missing to place a first `copy` of `kind`; undefined when a fresh report vouches for it. */
function missingEvidence(evidence: ReportEvidence, kind: string, copy: KubeObject): string | undefined {
  switch (evidence.state) {
    case 'absent':
      return 'no report from the spoke agent yet';
    case 'stale':
      return `the spoke agent's report is stale since ${evidence.since} (hub time)`;
    case 'refused':
      return `the spoke agent's report is refused: ${evidence.why}`;
    case 'fresh':
      return uncovered(evidence.report, kind, copy);
  }
}

/**
 * Why a fresh report does not vouch for `copy`: who holds its name must be known (occupantOf), which it is only
 * where the report lists the kind, so that the local policies there are known too; undefined when it is. A
 * binary search: the gate costs a first copy next to nothing.
 */
function uncovered(report: SpokeReport, kind: string, copy: KubeObject): string | undefined {
  if (occupantOf(report, kind, copy.metadata.namespace ?? '', copy.metadata.name).state !== 'unknown') return undefined;
  if (!Object.hasOwn(report.objects, kind)) return `kind ${kind} is not in the spoke agent's report (its watch is not live, or it was left out)`;
  if (report.version < 2) return "the spoke agent's report predates name occupancy (an older agent)";
  return `the spoke agent's report does not say who holds names of kind ${kind} there`;
}

/** The copy a cached work places (its first manifest), if it has one. */
function placedCopy(work: KubeObject): KubeObject | undefined {
  const manifests = (work.spec as { workload?: { manifests?: unknown } } | undefined)?.workload?.manifests;
  const copy: unknown = Array.isArray(manifests) ? manifests[0] : undefined;
  return copy !== null && typeof copy === 'object' && 'metadata' in copy ? (copy as KubeObject) : undefined;
}

/** The same object on the spoke: kind, namespace and name (the apiVersion may move with the served version). */
function sameIdentity(placed: KubeObject | undefined, copy: KubeObject): boolean {
  return placed !== undefined && placed.kind === copy.kind && (placed.metadata.namespace ?? '') === (copy.metadata.namespace ?? '') && placed.metadata.name === copy.metadata.name;
}
