// Hands a lingering copy back to OCM's own machinery (docs/design/tenancy.md#what-runs-on-a-spoke): a copy OCM's work
// agent left on its spoke when it let the copy's work go (v1.2.1: a terminating work's finalizer dropped on a cache
// miss, its AppliedManifestWork left behind, evicted only after an hour). Once the deletion rule says the copy is
// unwanted there, a ManifestWork of the lost work's very name is created again (the agent names an
// AppliedManifestWork `<hub hash>-<work name>`: it takes the left one up), holding no copy — only the copy's namespace,
// ReadOnly, which the agent reads and never owns. The agent then deletes what that AppliedManifestWork owns and the
// work no longer holds (appliedmanifestwork_reconciler.go: resources "no longer maintained", deleted only where the
// AppliedManifestWork is their owner): the lingering copy, and nothing the sync did not create. Once the agent has
// applied it, the mending work is deleted with the Orphan option, taking nothing with it.
//
// Measured on the real agent (test/e2e/spoke-truth.test.ts): the copy goes within a second of the mending work's
// create. A mending work that the agent does not take up within MEND_TIMEOUT_MS is deleted; a copy still reported
// after MAX_MENDS tries is left, and said (the agent's eviction removes it within its grace, an hour by default).
import type { Logger } from 'pino';
import { readConditions } from '../core/k8s/conditions.ts';
import { kubeTimeMillis } from '../core/k8s/kubetime.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { CONTROLLER_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE, MEND_LABEL, SOURCE_REF_ANNOTATION } from '../core/metadatakeys.ts';
import { WORK_API_VERSION, WORK_KIND } from '../core/works/manifestwork.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { Informer } from '../kube/informer.ts';
import { RESOURCES } from '../kube/resource.ts';
import { createObject, deleteObject } from '../kube/writes.ts';
import { BY_MEND } from './indexes.ts';

/** How long the agent has to take a mending work up (its Applied condition) before the hub deletes it again. */
export const MEND_TIMEOUT_MS = 60_000;
/** Tries per lingering copy (a new mending work each) before it is left to the agent's eviction. */
export const MAX_MENDS = 3;

/** A lingering copy the deletion rule lets go: where, and the name of the work that placed it. */
export interface Mend {
  cluster: string;
  /** The lost work's name: a mending work takes this name (and so the left AppliedManifestWork). */
  workName: string;
  /** The copy's namespace: the one object the mending work reads. */
  namespace: string;
}

export interface LingeringMenderDeps {
  http: KubeHttp;
  /** Our ManifestWorks as cached (works of their own and bundles), indexed BY_MEND. */
  workObjects: Informer;
  /** The controller label value of this hub controller. */
  controller: string;
  logger: Logger;
  now?: () => number;
}

export interface MendOutcome {
  /** Mends that could not start: a work of that name is in the way, or the tries are spent. */
  refused: { mend: Mend; why: string }[];
  /** When to look again (ms since the epoch), while a mending work waits for the agent. */
  recheckAt?: number;
}

export class LingeringMender {
  /** Tries so far per `cluster/workName`, and when the last mending work of each was deleted. */
  private readonly tries = new Map<string, { count: number; doneAt?: number }>();
  private readonly now: () => number;

  constructor(private readonly deps: LingeringMenderDeps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * Converges the mending works of one policy (`sourceRef`: its source-ref annotation text, `sourceHash`: its
   * SOURCE_LABEL value): those of `mends` are created, those the agent applied (or that timed out) deleted.
   */
  async converge(log: Logger, sourceRef: string, sourceHash: string, mends: readonly Mend[]): Promise<MendOutcome> {
    const outcome: MendOutcome = { refused: [] };
    const now = this.now();
    const later = (at: number): void => {
      outcome.recheckAt = Math.min(outcome.recheckAt ?? at, at);
    };
    const existing = this.deps.workObjects.store.byIndex(BY_MEND, sourceHash);
    for (const work of existing) {
      const cluster = work.metadata.namespace ?? '';
      const key = `${cluster}/${work.metadata.name}`;
      const applied = readConditions(work).some((c) => c.type === 'Applied' && c.status === 'True');
      const created = kubeTimeMillis(work.metadata.creationTimestamp) ?? now;
      if (work.metadata.deletionTimestamp) continue;
      if (!applied && now - created < MEND_TIMEOUT_MS) {
        later(Math.min(created + MEND_TIMEOUT_MS, now + 1_000));
        continue;
      }
      const uid = work.metadata.uid;
      await deleteObject(this.deps.http, RESOURCES.manifestWorks, cluster, work.metadata.name, uid ? { uid } : undefined);
      const t = this.tries.get(key) ?? { count: 1 };
      this.tries.set(key, { count: t.count, doneAt: now });
      if (applied) log.info({ cluster, work: work.metadata.name }, 'mending ManifestWork applied by the work agent (the lingering copy handed back to it): deleted, with the Orphan option');
      else log.warn({ cluster, work: work.metadata.name, timeoutMs: MEND_TIMEOUT_MS }, 'mending ManifestWork not taken up by the work agent in time: deleted');
    }
    const inFlight = new Set(existing.map((w) => `${w.metadata.namespace ?? ''}/${w.metadata.name}`));
    for (const mend of mends) {
      const key = `${mend.cluster}/${mend.workName}`;
      if (inFlight.has(key)) continue;
      const t = this.tries.get(key);
      // The report that shows the copy gone travels behind the mend: a copy is tried again only after that.
      if (t?.doneAt !== undefined && now - t.doneAt < MEND_TIMEOUT_MS) {
        later(t.doneAt + MEND_TIMEOUT_MS);
        continue;
      }
      if ((t?.count ?? 0) >= MAX_MENDS) {
        outcome.refused.push({ mend, why: `${MAX_MENDS} mending works did not remove it: OCM's work agent evicts it after its eviction grace (--appliedmanifestwork-eviction-grace-period, 1 h by default)` });
        continue;
      }
      const inTheWay = this.deps.workObjects.store.get(key);
      if (inTheWay) {
        outcome.refused.push({ mend, why: `a ManifestWork ${key} exists that is no mending work: nothing is created in its place` });
        continue;
      }
      await createObject(this.deps.http, RESOURCES.manifestWorks, mendingWork(mend, this.deps.controller, sourceRef, sourceHash), {});
      this.tries.set(key, { count: (t?.count ?? 0) + 1 });
      log.warn({ cluster: mend.cluster, work: mend.workName, namespace: mend.namespace }, 'lingering copy handed back to OCM: a ManifestWork of its lost work\'s name created, holding no copy, so that the work agent deletes the copy its AppliedManifestWork still owns');
      later(now + 1_000);
    }
    return outcome;
  }

  /** Whether mending works of the policy (by its SOURCE_LABEL value) are in the cache: converge must see them through. */
  pending(sourceHash: string): boolean {
    return this.deps.workObjects.store.byIndex(BY_MEND, sourceHash).length > 0;
  }
}

/** The mending work: the lost work's name, the copy's namespace read only, nothing owned, nothing deleted with it. */
export function mendingWork(mend: Mend, controller: string, sourceRef: string, sourceHash: string): KubeObject {
  const identifier = { group: '', resource: 'namespaces', name: mend.namespace, namespace: '' };
  return {
    apiVersion: WORK_API_VERSION,
    kind: WORK_KIND,
    metadata: {
      name: mend.workName,
      namespace: mend.cluster,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [CONTROLLER_LABEL]: controller, [MEND_LABEL]: sourceHash },
      // Routes a change of it to its policy (routes.ts sourceKeyOfWork); no SOURCE_LABEL: it is none of the policy's works.
      annotations: { [SOURCE_REF_ANNOTATION]: sourceRef },
    },
    spec: {
      workload: { manifests: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: mend.namespace } }] },
      deleteOption: { propagationPolicy: 'Orphan' },
      manifestConfigs: [{ resourceIdentifier: identifier, updateStrategy: { type: 'ReadOnly' } }],
    },
  };
}
