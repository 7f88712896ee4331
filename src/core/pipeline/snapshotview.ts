// A HubView (hubview.ts) over lists read once: what `policy-sync diff` and the tests hand the decision pipeline.
// It answers as the hub controller's caches would for the same objects (src/hub/cachedhubview.ts), with two
// readings of its own, said where they are: a readable spoke report counts as fresh (a snapshot cannot tell its
// age; the hub judges it by when it saw the report change), and a kind listed in a class's params is in force
// when the hub serves it (the hub also validated its CRD).
import { clusterHealth, type ClusterHealth } from '../fleet/clusterhealth.ts';
import { boundSets, clustersBoundTo } from '../fleet/clustersets.ts';
import { PLACEMENT_LABEL, placedClusters, type PlacedClusters } from '../fleet/placement.ts';
import { groupResourceKey, type GroupResource } from '../k8s/gvr.ts';
import { namespacedKey, type KubeObject } from '../k8s/objects.ts';
import type { PolicyKindConfig, SyncParams } from '../params/params.ts';
import type { ReportEvidence } from '../spoke/firstcopy.ts';
import { copiesBySource } from '../spoke/reportquery.ts';
import type { ReportedCopyOn } from '../spoke/spoketruth.ts';
import type { SpokeReport } from '../spoke/spokereport.ts';
import { clusterClaimsOf, variantTargetKey, type HubView, type KindFacts } from './hubview.ts';
import { copyWorks } from '../works/bundle.ts';
import type { ClassKnowledge, RemovalInput } from '../works/removal.ts';

/** The hub as its lists show it, for one or more policies' decisions. */
export interface HubSnapshot {
  /** The GatewayClasses of this controller whose params are in force, by name. */
  classes: ReadonlyMap<string, SyncParams>;
  /**
   * Every GatewayClass with this controller's name, those whose params are not valid included: the hub keeps what
   * such a class's Gateways run (the deletion rule: its configuration is unknown here). Absent: those of `classes`.
   */
  ownedClasses?: readonly string[];
  /** The names of every GatewayClass on the hub. Absent: every class a Gateway names is taken to exist. */
  classNames?: ReadonlySet<string>;
  /** The kinds the hub serves (`resource.group`): a kind listed in params but not served is not in force. Absent: every listed kind. */
  servedKinds?: ReadonlySet<string>;
  gateways: readonly KubeObject[];
  placements: readonly KubeObject[];
  decisions: readonly KubeObject[];
  managedClusters: readonly KubeObject[];
  clusterSets: readonly KubeObject[];
  bindings: readonly KubeObject[];
  /** As the hub's `--trust-decision-labels`. */
  trustDecisionLabels: boolean;
  /** The spoke agents' readable reports, by cluster; refused ones by why (`<field>: <problem>`). */
  reports: ReadonlyMap<string, SpokeReport>;
  refusedReports?: ReadonlyMap<string, string>;
  /**
   * The hub places the spoke agents' configuration (its `--spoke-config` is not `none`): a cluster without a
   * readable report gets no first copy, as on the hub (core/spoke/firstcopy.ts). Absent: no-agent mode.
   */
  spokeAgents?: boolean;
  /**
   * The hub controller's ManifestWorks on every cluster (of every policy), for who holds a tenant lane there
   * (core/works/heldlanes.ts). Absent: no lane counts as held, and the older Gateway takes a shared one.
   */
  works?: readonly KubeObject[];
  /** Hub policies of the synced kinds, any namespace, by `resource.group` (for same-named rivals). */
  policies?: ReadonlyMap<string, readonly KubeObject[]>;
  /** What is known of each synced kind, by `resource.group`. Absent: no CRD uid, the status subresource. */
  kinds?: ReadonlyMap<string, KindFacts>;
  /** The PolicyVariants (every namespace). Absent: none. */
  variants?: readonly KubeObject[];
  /** The kinds a Progressive rollout cannot gate on, as `apiVersion` + kind → `resource.version.group`. */
  ungatedKinds?: readonly { apiVersion: string; kind: string; name: string }[];
}

export class SnapshotView implements HubView {
  private readonly gateways = new Map<string, KubeObject>();
  private readonly byName = new Map<string, KubeObject[]>();
  private readonly clusters = new Map<string, KubeObject>();
  private readonly sets = new Map<string, KubeObject>();
  private readonly placed = new Map<KubeObject, PlacedClusters>();
  private readonly works = new Map<string, KubeObject[]>();
  private readonly variants = new Map<string, KubeObject[]>();
  readonly spokeAgents: boolean;

  constructor(private readonly hub: HubSnapshot) {
    this.spokeAgents = hub.spokeAgents === true;
    // The works as the hub reads them: one per copy, bundles unpacked.
    for (const w of copyWorks(hub.works ?? [])) push(this.works, w.metadata.namespace ?? '', w);
    for (const g of hub.gateways) {
      this.gateways.set(namespacedKey(g.metadata.namespace ?? '', g.metadata.name), g);
      push(this.byName, g.metadata.name, g);
    }
    for (const c of hub.managedClusters) this.clusters.set(c.metadata.name, c);
    for (const v of hub.variants ?? []) {
      const ref = (v.spec as { targetRef?: { group?: unknown; kind?: unknown; name?: unknown } } | undefined)?.targetRef;
      if (typeof ref?.kind !== 'string' || typeof ref.name !== 'string') continue;
      push(this.variants, namespacedKey(v.metadata.namespace ?? '', variantTargetKey(typeof ref.group === 'string' ? ref.group : '', ref.kind, ref.name)), v);
    }
    for (const s of hub.clusterSets) this.sets.set(s.metadata.name, s);
  }

  gateway(namespace: string, name: string): KubeObject | undefined {
    return this.gateways.get(namespacedKey(namespace, name));
  }

  gatewaysNamed(name: string): readonly KubeObject[] {
    return this.byName.get(name) ?? [];
  }

  params(className: string): SyncParams | undefined {
    return this.hub.classes.get(className);
  }

  kindInForce(className: string, gr: GroupResource): PolicyKindConfig | undefined {
    const listed = this.hub.classes.get(className)?.policiesToSync.find((k) => k.group === gr.group && k.resource === gr.resource);
    return listed && (this.hub.servedKinds === undefined || this.hub.servedKinds.has(groupResourceKey(gr))) ? listed : undefined;
  }

  placement(gateway: KubeObject): PlacedClusters {
    const known = this.placed.get(gateway);
    if (known) return known;
    const placementName = gateway.metadata.labels?.[PLACEMENT_LABEL];
    const namespace = gateway.metadata.namespace ?? '';
    let result: PlacedClusters;
    if (!placementName) result = { clusters: [], refused: [], state: { state: 'settled' } };
    else {
      const inNamespace = (o: KubeObject): boolean => (o.metadata.namespace ?? '') === namespace;
      result = placedClusters({
        placementKey: namespacedKey(namespace, placementName),
        placement: this.hub.placements.find((p) => inNamespace(p) && p.metadata.name === placementName),
        decisions: this.hub.decisions.filter((d) => inNamespace(d) && d.metadata.labels?.[PLACEMENT_LABEL] === placementName),
        trustDecisionLabels: this.hub.trustDecisionLabels,
        bind: (clusters) =>
          clustersBoundTo(
            namespace,
            clusters,
            boundSets(this.hub.bindings.filter(inNamespace)),
            (name) => this.clusters.get(name),
            (name) => this.sets.get(name),
          ),
      });
    }
    this.placed.set(gateway, result);
    return result;
  }

  clusterLabels(cluster: string): Readonly<Record<string, string>> {
    return this.clusters.get(cluster)?.metadata.labels ?? {};
  }

  clusterClaims(cluster: string): Readonly<Record<string, string>> {
    return clusterClaimsOf(this.clusters.get(cluster));
  }

  variantsTargeting(namespace: string, group: string, kind: string, name: string): readonly KubeObject[] {
    return this.variants.get(namespacedKey(namespace, variantTargetKey(group, kind, name))) ?? [];
  }

  worksOn(cluster: string): readonly KubeObject[] {
    return this.works.get(cluster) ?? [];
  }

  policiesNamed(gr: GroupResource, name: string): readonly KubeObject[] {
    return (this.hub.policies?.get(groupResourceKey(gr)) ?? []).filter((p) => p.metadata.name === name);
  }

  evidence(cluster: string): ReportEvidence {
    const report = this.hub.reports.get(cluster);
    if (report) return { state: 'fresh', report };
    const why = this.hub.refusedReports?.get(cluster);
    return why === undefined ? { state: 'absent' } : { state: 'refused', why };
  }

  reportedCopies(kind: string, source: string): readonly ReportedCopyOn[] {
    // A snapshot reads every readable report as fresh (it cannot tell their age).
    return [...this.hub.reports].flatMap(([cluster, report]) => (copiesBySource(report).get(source) ?? []).filter((c) => c.kind === kind).map((c) => ({ cluster, ...c })));
  }

  removalGrounds(gr: GroupResource, named: readonly string[]): Pick<RemovalInput, 'groupResource' | 'caches' | 'classes' | 'absentClasses' | 'watch'> {
    // Lists read once are synced by their nature; a class whose params are not valid now is unknown (a snapshot has
    // no last known good: the hub may hold one, and the preview keeps where the hub might delete, never the reverse).
    const classes = new Map<string, ClassKnowledge>();
    for (const name of this.hub.ownedClasses ?? this.hub.classes.keys()) {
      const params = this.hub.classes.get(name);
      const listed = new Set((params?.policiesToSync ?? []).map(groupResourceKey));
      const synced = new Set([...listed].filter((k) => this.hub.servedKinds?.has(k) ?? true));
      classes.set(name, { state: params ? 'inForce' : 'unknown', listed, synced });
    }
    const names = this.hub.classNames;
    return {
      groupResource: groupResourceKey(gr),
      caches: { works: true, classes: true, gateways: true, decisions: true, clusters: true, placements: true },
      classes,
      absentClasses: new Set(names ? named.filter((n) => !names.has(n)) : []),
      watch: { synced: true },
    };
  }

  clusterHealth(cluster: string, now: number): ClusterHealth {
    return clusterHealth(this.clusters.get(cluster), now);
  }

  kind(gr: GroupResource): KindFacts {
    return this.hub.kinds?.get(groupResourceKey(gr)) ?? { statusSubresource: true };
  }

  ungatedKind(apiVersion: string | undefined, kind: string | undefined): string | undefined {
    return this.hub.ungatedKinds?.find((k) => k.apiVersion === apiVersion && k.kind === kind)?.name;
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const here = map.get(key);
  if (here) here.push(value);
  else map.set(key, [value]);
}
