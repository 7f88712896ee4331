// The hub as one policy's decisions read it (policypipeline.ts): a read-only view that the hub controller backs
// with its informers (src/hub/cachedhubview.ts) and `policy-sync diff` with lists it reads once
// (snapshotview.ts). Everything the hub decides for a policy is decided over this view and nothing else, so the
// controller and its preview cannot disagree. Pure: an interface and the small readings every view shares.
import type { ClusterHealth } from '../fleet/clusterhealth.ts';
import type { PlacedClusters } from '../fleet/placement.ts';
import type { GroupResource } from '../k8s/gvr.ts';
import type { KubeObject } from '../k8s/objects.ts';
import type { PolicyKindConfig, SyncParams } from '../params/params.ts';
import type { ReportEvidence } from '../spoke/firstcopy.ts';
import type { OpenApiSchema } from '../variants/schemacheck.ts';
import type { ReportedCopyOn } from '../spoke/spoketruth.ts';
import type { RemovalInput } from '../works/removal.ts';

/** What the hub knows of a synced kind itself (its CRD as the class reconciler validated it). */
export interface KindFacts {
  /** metadata.uid of the kind's CRD, recorded in each work's source-ref; undefined for built-in resources. */
  crdUid?: string;
  /** The CRD has the status subresource: copies are applied with `Update`, else `ServerSideApply`. */
  statusSubresource: boolean;
  /**
   * The openAPIV3Schema of the version synced, as the hub serves it: variants' values are converted and their
   * copies checked by it (core/variants). Undefined when it is not known (no CRD, or not read yet).
   */
  schema?: OpenApiSchema;
}

export interface HubView {
  /** A hub Gateway by namespace and name. */
  gateway(namespace: string, name: string): KubeObject | undefined;
  /** The hub Gateways of this name, in every namespace (same-named Gateways may share a tenant lane). */
  gatewaysNamed(name: string): readonly KubeObject[];
  /** The params in force of a GatewayClass this controller owns; undefined when not ours or never valid. */
  params(className: string): SyncParams | undefined;
  /** The kind as in force for the class (listed in its params and validated); undefined otherwise. */
  kindInForce(className: string, gr: GroupResource): PolicyKindConfig | undefined;
  /** Where OCM places the Gateway: its Placement's decisions that count, and what was refused. */
  placement(gateway: KubeObject): PlacedClusters;
  /** A ManagedCluster's labels (the canary group of a Progressive rollout, what variants select and read). */
  clusterLabels(cluster: string): Readonly<Record<string, string>>;
  /** A ManagedCluster's ClusterClaims as its registration agent reports them in its status, by name. */
  clusterClaims(cluster: string): Readonly<Record<string, string>>;
  /** The PolicyVariants in `namespace` whose targetRef names this group, kind and name. */
  variantsTargeting(namespace: string, group: string, kind: string, name: string): readonly KubeObject[];
  /** This controller's ManifestWorks on a cluster, of every policy (who holds a tenant lane there). */
  worksOn(cluster: string): readonly KubeObject[];
  /** The hub policies of the kind and name, in every namespace, the policy itself included when listed. */
  policiesNamed(gr: GroupResource, name: string): readonly KubeObject[];
  /** Spoke agents report to this hub (its spoke configuration is placed); false: the explicit no-agent mode. */
  readonly spokeAgents: boolean;
  /** What the hub holds from the cluster's spoke agent: a fresh report, or which evidence is missing. */
  evidence(cluster: string): ReportEvidence;
  /**
   * Every copy of the hub policy `source` (`namespace/name`) of `kind` (`resource.group`) that the fresh spoke
   * reports list, on every cluster (core/spoke/spoketruth.ts: what runs where the policy has no work).
   */
  reportedCopies(kind: string, source: string): readonly ReportedCopyOn[];
  /** What the hub knows of the kind itself. */
  kind(gr: GroupResource): KindFacts;
  /**
   * What the deletion rule (core/works/removal.ts) reads of the hub for a policy of `gr` whose Gateways name the
   * GatewayClasses `named`: the caches' sync, what is known of every owned class's params, which of `named` does
   * not exist, the kind's watch.
   */
  removalGrounds(gr: GroupResource, named: readonly string[]): Pick<RemovalInput, 'groupResource' | 'caches' | 'classes' | 'absentClasses' | 'watch'>;
  /** What OCM says of a cluster at `now` (ms since the epoch): whether a deselection of it is a decision. */
  clusterHealth(cluster: string, now: number): ClusterHealth;
  /**
   * The kind (`resource.version.group`) of objects of `apiVersion` and `kind` when its CRD has no field where a
   * controller says which generation it observed: a Progressive rollout can never gate on it
   * (src/hub/ungatedkinds.ts). Undefined when it can, or when that is not known.
   */
  ungatedKind(apiVersion: string | undefined, kind: string | undefined): string | undefined;
}

/** A ManagedCluster's ClusterClaims from its status (`status.clusterClaims[]`: name, value), by name. */
export function clusterClaimsOf(cluster: KubeObject | undefined): Record<string, string> {
  const claims = (cluster?.status as { clusterClaims?: unknown } | undefined)?.clusterClaims;
  const out: Record<string, string> = {};
  if (!Array.isArray(claims)) return out;
  for (const c of claims as { name?: unknown; value?: unknown }[]) if (typeof c?.name === 'string' && typeof c.value === 'string') out[c.name] = c.value;
  return out;
}

/** A PolicyVariant's targetRef as `group/kind/name`, the key its policy finds it by. */
export function variantTargetKey(group: string, kind: string, name: string): string {
  return `${group}/${kind}/${name}`;
}

/** The GatewayClass a Gateway names; undefined when it names none. */
export function classOfGateway(gateway: KubeObject): string | undefined {
  const cls = (gateway.spec as { gatewayClassName?: unknown } | undefined)?.gatewayClassName;
  return typeof cls === 'string' ? cls : undefined;
}
