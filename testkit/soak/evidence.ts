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
import { CONTROLLER_LABEL, MEND_LABEL, REAPPLY_LABEL, SOURCE_REF_ANNOTATION, STATUS_ANNOTATION } from '../../src/core/metadatakeys.ts';
import { controllerLabelValue } from '../../src/core/works/manifestwork.ts';
import { ourWorks } from '../works.ts';
import { KINDS, SPOKES, TENANTS, driftValue, policyKey, type Kind, type Spoke } from './ops.ts';
import { API_KIND, RESOURCE_OF, markerOf, type SoakNames } from './world.ts';
import type { LocalPolicy } from './model.ts';
import { copyFingerprint, type DriftRecord, type TruthSighting } from './drift.ts';

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

const TRUTH_REASONS = new Set(['Drifted', 'Lingering', 'Removing']);

/**
 * The hub policies of the run, watched (one watch per kind and tenant namespace): every write of the status
 * annotation that says a cluster `Drifted`, `Lingering` or `Removing`, when the watch delivered it. Watched rather
 * than polled: under `drift: Correct` the hub puts a drift back within a second (76 ms in the e2e), and its
 * `Drifted` stands only until the next report says the copy is as sent — a poll could miss it, a watch sees every
 * write (but those a relist after a 410 Gone skips: the Drifted Events are the second witness, driftEventWitness).
 */
export class HubStatusWatch {
  readonly sightings: TruthSighting[] = [];
  /** Every change of what the hub said of a policy's cluster (state and reason), for the record of a run's drifts. */
  readonly history: { at: number; policy: string; cluster: string; state: string; reason: string }[] = [];
  /** What the hub last said of each policy's cluster (`policy|cluster`): its reason and the drift's managers. */
  private readonly last = new Map<string, string>();
  private readonly watchers: Watcher[] = [];

  constructor(hub: KubeHttp, private readonly names: SoakNames) {
    for (const kind of KINDS) {
      for (const tenant of TENANTS) {
        this.watchers.push(
          new Watcher(
            hub,
            RESOURCE_OF[kind],
            {
              replace: (items) => {
                for (const item of items) this.observe(kind, item);
              },
              event: (type, object) => this.observe(kind, type === 'DELETED' ? { ...object, metadata: { ...object.metadata, annotations: {} } } : object),
            },
            { namespace: names.namespace(tenant) },
          ),
        );
      }
    }
  }

  start(): this {
    for (const w of this.watchers) w.start();
    return this;
  }

  async stop(): Promise<void> {
    await Promise.all(this.watchers.map((w) => w.stop()));
  }

  private observe(kind: Kind, object: KubeObject): void {
    const tenant = this.names.tenantOf(object.metadata.namespace ?? '');
    const text = object.metadata.annotations?.[STATUS_ANNOTATION];
    if (!tenant) return;
    let clusters: Record<string, { state?: string; reason?: string; drift?: { managers?: { manager: string; time?: string }[] } }> = {};
    try {
      clusters = (JSON.parse(text ?? '{}') as { clusters?: typeof clusters }).clusters ?? {};
    } catch {
      return;
    }
    const policy = policyKey(kind, tenant, object.metadata.name);
    const at = Date.now();
    for (const [cluster, entry] of Object.entries(clusters)) {
      // Each change of what the hub says of a cluster (a write repeating it, or a relist, is no news).
      const managers = entry.drift?.managers;
      const said = JSON.stringify([entry.state ?? '', entry.reason ?? '', managers ?? null]);
      const where = `${policy}|${cluster}`;
      if (this.last.get(where) === said) continue;
      this.last.set(where, said);
      this.history.push({ at, policy, cluster, state: entry.state ?? '', reason: entry.reason ?? '' });
      if (!TRUTH_REASONS.has(entry.reason ?? '')) continue;
      this.sightings.push({ at, policy, cluster, reason: entry.reason as TruthSighting['reason'], ...(managers ? { managers } : {}) });
    }
    for (const where of this.last.keys()) if (where.startsWith(`${policy}|`) && !Object.hasOwn(clusters, where.slice(policy.length + 1))) this.last.delete(where);
  }
}

/** The Events in the run's tenant namespaces on the hub. */
export async function hubEvents(hub: KubeHttp, names: SoakNames): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const tenant of TENANTS) {
    const list = await hub.request<{ items: KubeObject[] }>('GET', collectionPath(RESOURCES.coreEvents, names.namespace(tenant)));
    out.push(...list.items);
  }
  return out;
}

/**
 * The reapply label (REAPPLY_LABEL) of the work that places a copy on its spoke (bundles unpacked): `found` false
 * when no work of the run places it. The hub relabels the work to put a drift back, and the label stays until the
 * next drift: read before an edit and at the end of its round, it says whether the hub acted on the edit.
 */
export async function reapplyToken(hub: KubeHttp, controllerName: string, spoke: Spoke, kind: Kind, namespace: string, name: string): Promise<{ found: boolean; token?: string }> {
  for (const w of await ourWorks(hub, { controllerName, namespace: spoke })) {
    const manifest = ((w.spec as { workload?: { manifests?: KubeObject[] } } | undefined)?.workload?.manifests ?? [])[0];
    if (manifest?.kind !== API_KIND[kind] || manifest.metadata?.namespace !== namespace || manifest.metadata.name !== name) continue;
    const token = w.metadata.labels?.[REAPPLY_LABEL];
    return { found: true, ...(token === undefined ? {} : { token }) };
  }
  return { found: false };
}

/** A mending work the hub created (src/hub/lingeringmender.ts), as the watch saw it arrive. */
export interface MendSighting {
  at: number;
  cluster: string;
  /** The hub policy it mends for, by its source-ref: `resource`, `namespace/name`. */
  resource: string;
  source: string;
}

/** The hub's mending works (MEND_LABEL) of the run's controller, watched: each one created, when it was seen. */
export class MendWatch {
  readonly sightings: MendSighting[] = [];
  private readonly seen = new Set<string>();
  private readonly watcher: Watcher;

  constructor(hub: KubeHttp, controllerName: string) {
    this.watcher = new Watcher(
      hub,
      RESOURCES.manifestWorks,
      {
        replace: (items) => {
          for (const item of items) this.observe(item);
        },
        event: (type, object) => {
          if (type !== 'DELETED') this.observe(object);
        },
      },
      { labelSelector: `${CONTROLLER_LABEL}=${controllerLabelValue(controllerName)},${MEND_LABEL}` },
    );
  }

  start(): this {
    this.watcher.start();
    return this;
  }

  async stop(): Promise<void> {
    await this.watcher.stop();
  }

  private observe(work: KubeObject): void {
    const uid = work.metadata.uid ?? `${work.metadata.namespace}/${work.metadata.name}/${String(work.metadata.creationTimestamp)}`;
    if (this.seen.has(uid)) return;
    this.seen.add(uid);
    let ref: { resource?: string; namespace?: string; name?: string } = {};
    try {
      ref = JSON.parse(work.metadata.annotations?.[SOURCE_REF_ANNOTATION] ?? '{}') as typeof ref;
    } catch {
      // an unreadable source-ref: counted, not attributed
    }
    this.sightings.push({ at: Date.now(), cluster: work.metadata.namespace ?? '', resource: ref.resource ?? '', source: `${ref.namespace ?? ''}/${ref.name ?? ''}` });
  }
}

/**
 * The copies of drift edits not yet settled, polled on their spokes every `intervalMs`: when each is first seen
 * without the edit's value (put back, or rewritten by the hub's own change; what it then runs) or gone.
 */
export class DriftWatch {
  private readonly pending: DriftRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private busy: Promise<void> | undefined;

  constructor(
    private readonly spokes: ReadonlyMap<Spoke, KubeHttp>,
    private readonly names: SoakNames,
  ) {}

  start(intervalMs = 250): this {
    this.timer = setInterval(() => void this.poll(), intervalMs);
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  track(d: DriftRecord): void {
    this.pending.push(d);
  }

  /** Stops looking at what is still pending (its round was judged). */
  clear(): void {
    this.pending.length = 0;
  }

  /** One last look at each edit still pending (a round's end), after any poll under way. */
  async settle(): Promise<void> {
    await this.busy;
    await this.poll();
  }

  private poll(): Promise<void> {
    if (this.busy) return this.busy;
    this.busy = this.look().finally(() => {
      this.busy = undefined;
    });
    return this.busy;
  }

  private async look(): Promise<void> {
    for (const d of [...this.pending]) {
      let copy: KubeObject | undefined;
      try {
        copy = await getOrUndefined(this.spokes.get(d.spoke)!, objectPath(RESOURCE_OF[d.kind], this.names.namespace(d.tenant), d.name));
      } catch {
        continue; // the spoke's apiserver down or frozen: look again
      }
      const now = Date.now();
      if (!copy || copy.metadata.uid !== d.uid) d.goneAt = now;
      else if (markerOf(d.kind, copy) !== driftValue(d.drift)) {
        d.putBackAt = now;
        d.sentAfter = copyFingerprint(d.kind, copy);
      } else continue;
      const k = this.pending.indexOf(d);
      if (k >= 0) this.pending.splice(k, 1);
    }
  }
}
