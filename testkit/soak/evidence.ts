// What the soak reads from the real plane to judge a run: when each spoke agent's report (as the hub holds it,
// in the spoke-config work's feedback) first showed each local policy, and what runs on the spokes and what
// the hub says on its policies, and when OCM stopped or started vouching for each spoke. Reading only: the
// judging is checks.ts.
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { readSpokeReport, SPOKE_CONFIG_WORK_NAME } from '../../src/core/spoke/spokeconfig.ts';
import { occupantOf } from '../../src/core/spoke/reportquery.ts';
import { isNotFound, type KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, collectionPath, objectPath } from '../../src/kube/resource.ts';
import { Watcher } from '../../src/kube/watcher.ts';
import { KINDS, SPOKES, TENANTS, type Kind, type Spoke } from './ops.ts';
import { RESOURCE_OF, type SoakNames } from './world.ts';
import type { LocalPolicy } from './model.ts';

const GROUP_RESOURCE: Record<Kind, string> = { auth: 'authpolicies.kuadrant.io', rl: 'ratelimitpolicies.kuadrant.io', soak: 'soakpolicies.soak.policysync.io' };

/** A local policy the soak created, and what became of it. */
export interface LocalLife {
  local: LocalPolicy;
  createdAt: number;
  deletedAt?: number;
  uid: string;
  resourceVersion: string;
  /** When the hub's copy of the spoke's report first showed it (this life), if it did. */
  reportedAt?: number;
}

/**
 * Polls the spoke-config works on the hub every `intervalMs`: for each living local policy, when the report
 * the hub holds first showed it; and when each spoke's report last changed.
 */
export class ReportWatch {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  readonly lastChange = new Map<Spoke, number>();
  private readonly lastText = new Map<Spoke, string>();

  constructor(
    private readonly hub: KubeHttp,
    private readonly names: SoakNames,
    private readonly lives: () => LocalLife[],
  ) {}

  start(intervalMs = 500): void {
    this.timer = setInterval(() => void this.poll(), intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Whether the hub holds a report of every spoke (its freshness, since version 3, rides on a heartbeat work apart). */
  reported(): boolean {
    return SPOKES.every((s) => this.lastChange.has(s));
  }

  private async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      for (const spoke of SPOKES) {
        let work: KubeObject;
        try {
          work = await this.hub.request<KubeObject>('GET', objectPath(RESOURCES.manifestWorks, spoke, SPOKE_CONFIG_WORK_NAME));
        } catch {
          continue;
        }
        const report = readSpokeReport(work);
        if (!report) continue;
        const text = JSON.stringify(report);
        if (text !== this.lastText.get(spoke)) {
          this.lastText.set(spoke, text);
          this.lastChange.set(spoke, Date.now());
        }
        for (const life of this.lives()) {
          if (life.local.spoke !== spoke || life.reportedAt !== undefined || life.deletedAt !== undefined) continue;
          const occupant = occupantOf(report, GROUP_RESOURCE[life.local.kind], this.names.namespace(life.local.tenant), life.local.name);
          if (occupant.state === 'local') life.reportedAt = Date.now();
        }
      }
    } finally {
      this.busy = false;
    }
  }
}

/** A change, seen on the hub, of whether OCM vouches for a spoke (AvailabilityWatch). */
export interface AvailabilityChange {
  spoke: Spoke;
  /** ms since the epoch, when the watch delivered it. */
  at: number;
  /** The Available condition True and no unreachable/unavailable taint. */
  available: boolean;
  /** When available: the Available condition's lastTransitionTime (ms since the epoch). */
  since?: number;
}

/**
 * The spokes' ManagedClusters as the hub's apiserver serves them, watched: each change of whether OCM vouches for
 * a spoke (its Available condition True and no unreachable/unavailable taint), when the watch delivered it, and
 * since when it is available by the condition's lastTransitionTime (the moment the hub's recovery grace counts
 * from). Read here from the object itself, not through the hub's code: the checker is an oracle of its own.
 */
export class AvailabilityWatch {
  readonly changes: AvailabilityChange[] = [];
  private readonly last = new Map<Spoke, string>();
  private readonly watcher: Watcher;

  constructor(hub: KubeHttp) {
    this.watcher = new Watcher(hub, RESOURCES.managedClusters, {
      replace: (items) => {
        for (const item of items) this.observe(item);
      },
      event: (type, object) => {
        if (type !== 'DELETED') this.observe(object);
      },
    });
  }

  start(): this {
    this.watcher.start();
    return this;
  }

  async stop(): Promise<void> {
    await this.watcher.stop();
  }

  private observe(cluster: KubeObject): void {
    const spoke = SPOKES.find((s) => s === cluster.metadata.name);
    if (!spoke) return;
    const change = availabilityOf(spoke, cluster, Date.now());
    const key = `${change.available}/${change.since ?? ''}`;
    if (this.last.get(spoke) === key) return;
    this.last.set(spoke, key);
    this.changes.push(change);
  }
}

const DOUBT_TAINTS = new Set(['cluster.open-cluster-management.io/unreachable', 'cluster.open-cluster-management.io/unavailable']);

/** Whether OCM vouches for `spoke` as `cluster` says, seen at `at`. */
export function availabilityOf(spoke: Spoke, cluster: KubeObject, at: number): AvailabilityChange {
  const spec = cluster.spec as { taints?: { key?: string }[] } | undefined;
  const status = cluster.status as { conditions?: { type?: string; status?: string; lastTransitionTime?: string }[] } | undefined;
  const tainted = (spec?.taints ?? []).some((t) => DOUBT_TAINTS.has(t.key ?? ''));
  const condition = (status?.conditions ?? []).find((c) => c.type === 'ManagedClusterConditionAvailable');
  const available = !tainted && condition?.status === 'True';
  const since = available && condition?.lastTransitionTime ? Date.parse(condition.lastTransitionTime) : undefined;
  return { spoke, at, available, ...(since !== undefined && !Number.isNaN(since) ? { since } : {}) };
}

/** A policy object found on a spoke. */
export interface SpokeObject {
  spoke: Spoke;
  kind: Kind;
  object: KubeObject;
}

/** Every object of the three kinds in the tenants' namespaces on every spoke. */
export async function spokeObjects(spokes: ReadonlyMap<Spoke, KubeHttp>, names: SoakNames): Promise<SpokeObject[]> {
  const out: SpokeObject[] = [];
  for (const [spoke, http] of spokes) {
    for (const kind of KINDS) {
      for (const tenant of TENANTS) {
        const list = await http.request<{ items: KubeObject[] }>('GET', collectionPath(RESOURCE_OF[kind], names.namespace(tenant)));
        for (const object of list.items) out.push({ spoke, kind, object });
      }
    }
  }
  return out;
}

/** The hub policies of the three kinds in the tenants' namespaces. */
export async function hubPolicies(hub: KubeHttp, names: SoakNames): Promise<{ kind: Kind; object: KubeObject }[]> {
  const out: { kind: Kind; object: KubeObject }[] = [];
  for (const kind of KINDS) {
    for (const tenant of TENANTS) {
      const list = await hub.request<{ items: KubeObject[] }>('GET', collectionPath(RESOURCE_OF[kind], names.namespace(tenant)));
      for (const object of list.items) out.push({ kind, object });
    }
  }
  return out;
}

export async function getOrUndefined(http: KubeHttp, path: string): Promise<KubeObject | undefined> {
  try {
    return await http.request<KubeObject>('GET', path);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
