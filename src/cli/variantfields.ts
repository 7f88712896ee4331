// `policy-sync explain`: what the PolicyVariants of a policy set in each cluster's copy, and from where — taken
// from the hub's own decision for the policy (core/pipeline/policypipeline.ts, decidePolicy) over the hub read as
// `diff` reads it (hubsnapshot.ts). The fields are the core renderer's record of what it set
// (core/variants/render.ts, AppliedField): nothing is rendered again here, so explain and the hub cannot disagree
// about a value. The renderings are variantformat.ts.
import type { KubeObject } from '../core/k8s/objects.ts';
import { groupResourceKey } from '../core/k8s/gvr.ts';
import { decidePolicy } from '../core/pipeline/policypipeline.ts';
import { SnapshotView } from '../core/pipeline/snapshotview.ts';
import { controllerLabelValue, workIdentity } from '../core/works/manifestwork.ts';
import { isNotFound, type KubeHttp } from '../kube/http.ts';
import { RESOURCES, collectionPath } from '../kube/resource.ts';
import type { DecisionFlags } from './decisionflags.ts';
import { listAll } from './lists.ts';
import { kindFacts, readKindCrd, readSnapshot } from './hubsnapshot.ts';
import { policyResource, readPolicyWorks, type SyncedKind, type SyncedKinds } from './status.ts';
import type { ClusterVariantFields, VariantExplanation } from './variantformat.ts';

/** The PolicyVariants in the policy's namespace whose targetRef names it; none when the hub does not serve the kind. */
async function variantsOf(http: KubeHttp, kind: SyncedKind, policy: KubeObject): Promise<KubeObject[]> {
  let items: KubeObject[];
  try {
    items = (await http.request<{ items: KubeObject[] }>('GET', collectionPath(RESOURCES.policyVariants, policy.metadata.namespace ?? ''))).items;
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
  return items.filter((v) => {
    const ref = (v.spec as { targetRef?: { group?: unknown; kind?: unknown; name?: unknown } } | undefined)?.targetRef;
    return (ref?.group ?? '') === kind.group && ref?.kind === policy.kind && ref?.name === policy.metadata.name;
  });
}

/**
 * The variants of `policy` and what they set per cluster, from the hub's decision for it; undefined when no
 * variant targets it (the hub is then not read further).
 */
export async function explainVariants(http: KubeHttp, flags: DecisionFlags & { controllerName: string }, synced: SyncedKinds, kind: SyncedKind, policy: KubeObject): Promise<VariantExplanation | undefined> {
  if ((await variantsOf(http, kind, policy)).length === 0) return undefined;
  const namespace = policy.metadata.namespace ?? '';
  const id = { group: kind.group, resource: kind.resource, namespace, name: policy.metadata.name };
  const [hub, crd, works] = await Promise.all([
    readSnapshot(http, flags, synced),
    readKindCrd(http, kind),
    readPolicyWorks(http, flags.controllerName, id),
  ]);
  const observed = works.filter((w) => workIdentity(w) !== undefined);
  const sameName = (await listAll(http, policyResource(kind), { fieldSelector: `metadata.name=${policy.metadata.name}` })).filter((p) => p.metadata.namespace !== namespace);
  const { facts, ungated } = kindFacts(kind, crd, observed);
  const key = groupResourceKey(kind);
  const decision = decidePolicy(new SnapshotView({ ...hub, policies: new Map([[key, [policy, ...sameName]]]), kinds: new Map([[key, facts]]), ...(ungated ? { ungatedKinds: [ungated] } : {}) }), {
    gvr: kind,
    policy,
    observed,
    controller: controllerLabelValue(flags.controllerName),
    rawFeedback: flags.rawFeedback,
    maxWorkBytes: flags.maxWorkBytes,
    now: Date.now(),
  });
  const clusters = new Map<string, ClusterVariantFields>();
  for (const [cluster, rendering] of decision.desired.renderings) clusters.set(cluster, { carried: rendering.carried, fields: rendering.fields });
  const placed = new Set(decision.desired.targets.flatMap((t) => (t.state === 'syncable' ? t.clusters : [])));
  return { variants: decision.variants, clusters, failures: decision.variantFailures, placed };
}
