// What the spoke agents' reports say about one hub policy's copies (docs/architecture.md#local-policies-win,
// #never-take-over): where the copy's name is held by something that is not this policy's copy (nothing is
// placed there), where local policies cover the copy (it is withdrawn, Overridden) or part of it, and where a
// report was refused. Only a fresh report counts: a stale or absent one says nothing, and the copy is placed
// as if no agent ran.
import { groupResourceKey, type GroupResource } from '../core/k8s/gvr.ts';
import { namespacedKey, objectKey, type KubeObject } from '../core/k8s/objects.ts';
import { coverage, usesOverrides } from '../core/spoke/conflicts.ts';
import { localPoliciesIn, occupantOf } from '../core/spoke/spokereport.ts';
import type { LocalNote, PolicyProblem } from '../core/status/policystatus.ts';
import type { LocalVerdicts } from '../core/status/statusinput.ts';
import type { ManifestWork } from '../core/works/manifestwork.ts';
import type { SpokeReports } from './spokereports.ts';

export interface ClusterRefusal {
  cluster: string;
  message: string;
}

export class SpokeEvidence {
  /** `reports` undefined: no spoke configuration is placed, so no agent reports and nothing is known. */
  constructor(private readonly reports: SpokeReports | undefined) {}

  /** The clusters among `clusters` whose report is refused (schema, caps): their local policies are not known. */
  refusedReports(clusters: Iterable<string>): PolicyProblem[] {
    const problems: PolicyProblem[] = [];
    for (const cluster of clusters) {
      const why = this.reports?.refused(cluster);
      if (why !== undefined) problems.push({ reason: 'SpokeReportRefused', message: `cluster ${cluster}: the spoke agent's report is refused (${why}); local policies there are not known` });
    }
    return problems;
  }

  /**
   * Clusters whose fresh report shows the copy's kind, namespace and name held by an object that is not a
   * copy of this hub policy: a local policy, or a copy of another hub policy. A report that does not cover
   * the kind says nothing.
   */
  nameTaken(gr: GroupResource, policy: KubeObject, works: ReadonlyMap<string, ManifestWork>): ClusterRefusal[] {
    const kind = groupResourceKey(gr);
    const source = objectKey(policy);
    const taken: ClusterRefusal[] = [];
    for (const [cluster, work] of works) {
      const report = this.reports?.fresh(cluster);
      const copy = work.spec.workload.manifests[0];
      if (!report || !copy) continue;
      const at = namespacedKey(copy.metadata.namespace ?? '', copy.metadata.name);
      const occupant = occupantOf(report, kind, copy.metadata.namespace ?? '', copy.metadata.name);
      if (occupant.state === 'local') {
        taken.push({ cluster, message: `${copy.kind} ${at} on cluster ${cluster} is the cluster's own policy, not a copy of this one: nothing is placed there until the name is free` });
      } else if (occupant.state === 'synced' && occupant.source !== source) {
        taken.push({ cluster, message: `${copy.kind} ${at} on cluster ${cluster} is a copy of hub policy ${occupant.source}, not of this one: nothing is placed there until the name is free` });
      }
    }
    return taken;
  }

  /** What local policies do to each cluster's copy. A hub policy using GEP-713 overrides is placed anyway. */
  localVerdicts(gr: GroupResource, policy: KubeObject, works: ReadonlyMap<string, ManifestWork>): LocalVerdicts {
    const overridden: ClusterRefusal[] = [];
    const notes = new Map<string, LocalNote>();
    const kind = groupResourceKey(gr);
    for (const [cluster, work] of works) {
      const report = this.reports?.fresh(cluster);
      const copy = work.spec.workload.manifests[0];
      if (!report || !copy) continue;
      const locals = localPoliciesIn(report, kind, copy.metadata.namespace ?? '');
      if (!locals || locals.length === 0) continue;
      const verdict = coverage(copy.kind, copy, locals);
      if (verdict.state === 'None') continue;
      if (usesOverrides(policy)) {
        notes.set(cluster, { reason: 'OverridesLocal', message: `${copy.kind} overrides [${verdict.by.join(', ')}] on the cluster: the hub policy uses overrides` });
      } else if (verdict.state === 'Overridden') overridden.push({ cluster, message: verdict.message });
      else notes.set(cluster, { reason: 'PartiallyEnforced', message: verdict.message });
    }
    return { overridden, notes };
  }
}
