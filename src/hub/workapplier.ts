// Writes ManifestWorks: the plan that turns what the cache shows (seen through our own write expectations,
// since the cache lags our writes) into what is desired, and its execution — a create for a work that is
// missing (the apiserver's cheapest write, as OCM's own controllers do), server-side apply for one that
// changed, delete for the keys a caller has decided may go (core/removal.ts decides; this file never does).
// Used by the policy reconciler and the spoke-configuration syncer.
//
// A created work's fields belong to our manager's Update entry; the first apply of a change takes over
// every field it changes and shares the unchanged ones. A field an apply stops setting would stay while
// the create still owns it — so every work carries the same fields whatever its policy (lists are atomic;
// manifestwork.test.ts holds the shape), and an apply never needs to drop one.
//
// A delete is fenced: it carries the uid and resourceVersion of the work as the plan observed it, so a late
// delete (a deposed leader's, or one planned on a stale cache) cannot remove a work that was re-created or
// changed since; the apiserver refuses it with 409, which is no failure — the change's own event brings the
// owner back, and its next plan sees the work as it is.
//
// Copies may travel in bundles (docs/design/fleet.md): with a bundle writer, core/works/copyroutes.ts says per copy
// whether a write goes to a work of its own or into its bundle (and when a copy's own work, moved into a bundle, is
// retired), and a decided deletion of a bundled copy is a drop from its bundle — fenced on the copy's spec-hash and
// its bundle's uid as planned, as a delete is on the work's uid and resourceVersion.
//
// A delete of a work the agent is taking up (core/works/workstate.ts agentTakingUp: its finalizer on, no Applied
// condition yet) waits until the agent says Applied — the status event brings the owner back — and at most
// TAKE_UP_WAIT_MS from when this process first held it: deleted in that window, OCM's agent can leave the copy it
// was applying on the spoke for an hour. The wait changes when a delete happens, never whether.
import type { Logger } from 'pino';
import { diffWorks, type WorkPlan } from '../core/works/desiredworks.ts';
import { parseWorkKey, workKeyOf, type WorkKey } from '../core/keys.ts';
import { readSpecHash, type ManifestWork } from '../core/works/manifestwork.ts';
import { agentTakingUp } from '../core/works/workstate.ts';
import { bundleOf } from '../core/works/bundle.ts';
import { canonicalJson } from '../core/k8s/canonical.ts';
import { routeCopies, type WorkShape } from '../core/works/copyroutes.ts';
import type { BundleWriter, CopyDrop } from './bundlewriter.ts';
import { Backoff } from '../runtime/backoff.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { RESOURCES } from '../kube/resource.ts';
import { isAlreadyExists, isConflict, type KubeHttp } from '../kube/http.ts';
import { createObject, deleteObject, serverSideApply, type Preconditions } from '../kube/writes.ts';
import { WriteExpectations } from './writeexpectations.ts';

const SWEEP_MS = 5_000;
/** How long a delete waits for the agent to finish taking a work up (see above); past it, it goes anyway. */
export const TAKE_UP_WAIT_MS = 30_000;

/** A plan, with what it observed of each work it may delete: the preconditions of that delete. */
export interface FencedPlan extends WorkPlan {
  /** uid and resourceVersion by work key, for every key of `delete` (a key missing here is not deleted). */
  observed: ReadonlyMap<string, Required<Preconditions>>;
  /** Keys of `delete` whose work the agent is taking up: their delete waits (see TAKE_UP_WAIT_MS). */
  takingUp?: ReadonlySet<string>;
  /** Copies to put into their bundles (with a bundle writer). */
  put?: readonly ManifestWork[];
  /** Keys of `delete` a bundle carries: the drop each would be, as observed. */
  drops?: ReadonlyMap<string, CopyDrop>;
  /** Works of their own whose copy a bundle now carries, applied: deleted, their copy stays (copyroutes.ts). */
  retire?: readonly KubeObject[];
}

export interface WorkApplierDeps {
  http: KubeHttp;
  logger: Logger;
  /**
   * A write of `owner`'s that the cache never confirmed expired, or a delete it waits with reaches its deadline:
   * reconcile the owner again.
   */
  onExpired?: (owner: string) => void;
  /** The clock of the take-up wait (tests); default performance.now. */
  now?: () => number;
  /** Writes copies into bundles; without it every copy has a work of its own. */
  bundles?: BundleWriter;
  /** Where new copies go (with `bundles`); default per-placement. */
  shape?: WorkShape;
  /** Every work carrying the copy of a key, bundles' entries included (HubCaches.works.carriers). */
  carriers?: (key: WorkKey) => readonly KubeObject[];
  /** Copies handed to the bundle writer failed to be written after the owner's reconcile: reconcile it again after `afterMs`. */
  onWriteFailed?: (owner: string, afterMs: number) => void;
}

export class WorkApplier {
  private readonly expectations = new WriteExpectations();
  private sweeper: NodeJS.Timeout | undefined;
  private writesInFlight = 0;
  private lastWriteEnded = -Infinity;
  /** Deletes waiting for the agent to take their work up: since when, and the timer that brings the owner back. */
  private readonly held = new Map<string, { since: number; timer?: NodeJS.Timeout }>();
  private readonly now: () => number;
  /** Per owner, the backoff of bundle puts failing after its reconcile returned. */
  private readonly putBackoff = new Map<string, Backoff>();

  constructor(private readonly deps: WorkApplierDeps) {
    this.now = deps.now ?? (() => performance.now());
  }

  /** Starts handing back owners of expired expectations (see WriteExpectations.expired). */
  start(): void {
    if (this.sweeper || !this.deps.onExpired) return;
    const onExpired = this.deps.onExpired;
    this.sweeper = setInterval(() => {
      this.expectations.expired().forEach(onExpired);
      // A wait whose deadline passed long ago without its delete being asked for again (the work is wanted
      // after all, or gone) is over: a later delete of it starts a wait of its own.
      const now = this.now();
      for (const [key, { since }] of this.held) if (now - since > 2 * TAKE_UP_WAIT_MS) this.release(key);
    }, SWEEP_MS);
    this.sweeper.unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.deps.bundles?.stop();
    for (const { timer } of this.held.values()) clearTimeout(timer);
    this.held.clear();
  }

  /** A work write is under way, or one ended less than `withinMs` ago. */
  writing(withinMs: number): boolean {
    return this.writesInFlight > 0 || performance.now() - this.lastWriteEnded < withinMs;
  }

  /**
   * A work's first appearance in the cache that is exactly our create — the spec-hash written, no status
   * yet — ends its expectation, and says so: the reconcile it would trigger reads the same world its
   * plan assumed (a created work counted as present with that hash, its cluster Pending), so it need not
   * run. Halves the reconciles of a fan-out.
   */
  confirmsCreate(work: KubeObject): boolean {
    return work.status === undefined && this.expectations.confirm(workKeyOf(work), readSpecHash(work));
  }

  /**
   * The same for a copy put into a bundle: a bundled copy that changed to exactly the spec-hash still expected,
   * its status as it was (the agent has not written since), is this writer's echo and ends its expectation.
   * Without it, each bundle of a fan-out or an edit coming back reconciles its policy again — C times for one
   * policy's edit on C clusters.
   */
  confirmsBundledPut(change: { type: string; object: KubeObject; old?: KubeObject }): boolean {
    const { object: copy, old } = change;
    if (change.type !== 'MODIFIED' || !old || bundleOf(copy) === undefined) return false;
    if (readSpecHash(old) === readSpecHash(copy) || canonicalJson(old.status ?? null) !== canonicalJson(copy.status ?? null)) return false;
    return this.expectations.confirm(workKeyOf(copy), readSpecHash(copy));
  }

  /**
   * The writes that make the observed works the desired ones. `delete` lists every observed work that is
   * not desired (and not retained): candidates only — the caller decides which of them really go.
   */
  plan(desired: readonly ManifestWork[], observed: readonly KubeObject[], retain: ReadonlySet<WorkKey> = new Set()): FencedPlan {
    const desiredByKey = new Map(desired.map((w) => [workKeyOf(w), w]));
    const seen = new Map<WorkKey, { specHash?: string }>();
    const byKey = new Map(observed.map((w) => [workKeyOf(w), w]));
    for (const work of observed) {
      const key = workKeyOf(work);
      const view = this.expectations.observe(key, readSpecHash(work) ?? '');
      if (view.present) seen.set(key, { specHash: view.specHash });
    }
    // Works we wrote that the cache does not show yet count as present.
    for (const key of desiredByKey.keys()) {
      if (seen.has(key)) continue;
      const view = this.expectations.observe(key, null);
      if (view.present) seen.set(key, { specHash: view.specHash });
    }
    const plan = diffWorks(desiredByKey, seen, retain);
    const carriers = (key: WorkKey): readonly KubeObject[] => this.deps.carriers?.(key) ?? (byKey.has(key) ? [byKey.get(key)!] : []);
    const routes = this.deps.bundles
      ? routeCopies({ shape: this.deps.shape ?? 'per-placement', desired: desiredByKey, create: plan.create, apply: plan.apply, carriers })
      : { create: plan.create, apply: plan.apply, put: [], retire: [] };
    // Deletion candidates are always works of `observed` (only desired keys come from expectations alone).
    const fences = new Map<string, Required<Preconditions>>();
    const drops = new Map<string, CopyDrop>();
    const takingUp = new Set<string>();
    for (const key of plan.delete) {
      for (const work of carriers(key)) {
        if (agentTakingUp(work)) takingUp.add(key);
        if (bundleOf(work) !== undefined) {
          const namespace = (work.spec as ManifestWork['spec']).workload.manifests[0]?.metadata.namespace ?? '';
          drops.set(key, { key, namespace, specHash: readSpecHash(work), bundleUid: work.metadata.uid });
          continue;
        }
        const { uid, resourceVersion } = work.metadata;
        if (uid && resourceVersion) fences.set(key, { uid, resourceVersion });
      }
    }
    return { ...plan, create: routes.create, apply: routes.apply, put: routes.put, retire: routes.retire, observed: fences, drops, takingUp };
  }

  /**
   * Whether the delete of `key` waits for the agent to take its work up: the first time, from now; each time,
   * with a timer that brings `owner` back at the deadline (the agent may never write a status).
   */
  private waitsForTakeUp(owner: string, key: string, takingUp: boolean): boolean {
    const entry = this.held.get(key);
    if (!takingUp) {
      if (entry) this.release(key);
      return false;
    }
    const now = this.now();
    const since = entry?.since ?? now;
    if (now - since >= TAKE_UP_WAIT_MS) {
      this.release(key);
      return false;
    }
    if (!entry?.timer) {
      const timer = this.deps.onExpired
        ? setTimeout(() => {
            const held = this.held.get(key);
            if (held) delete held.timer; // fired: a reconcile still short of the deadline sets another
            this.deps.onExpired?.(owner);
          }, since + TAKE_UP_WAIT_MS - now + 10)
        : undefined;
      timer?.unref();
      this.held.set(key, timer ? { since, timer } : { since });
    }
    return true;
  }

  private release(key: string): void {
    clearTimeout(this.held.get(key)?.timer);
    this.held.delete(key);
  }

  /**
   * Creates, applies and deletes (all attempted; the first failure is thrown after). A delete refused by its
   * preconditions (409: the work changed or was re-created since it was observed) or answered 404 is done.
   */
  async execute(owner: string, plan: FencedPlan, log: Logger = this.deps.logger): Promise<void> {
    const failures: unknown[] = [];
    const written = { created: [] as string[], applied: [] as string[], bundled: [] as string[] };
    const write = async (work: ManifestWork, create: boolean): Promise<void> => {
      const undo = this.expectations.applied(workKeyOf(work), readSpecHash(work), owner);
      this.writesInFlight++;
      try {
        const created = create && (await this.create(work));
        if (!created) await serverSideApply(this.deps.http, RESOURCES.manifestWorks, work, { discardResponse: true });
        (created ? written.created : written.applied).push(workKeyOf(work));
      } catch (err) {
        undo();
        failures.push(err);
        log.error({ cluster: work.metadata.namespace, work: work.metadata.name, err: String(err) }, 'ManifestWork write failed');
      } finally {
        this.writesInFlight--;
        this.lastWriteEnded = performance.now();
      }
    };
    const drops: CopyDrop[] = [];
    const dropUndos = new Map<string, () => void>();
    // A retired work's copy stays (a bundle carries it): its key is not expected gone.
    const deleteWork = async (key: WorkKey, preconditions: Required<Preconditions>, done: string, copyGoes = true): Promise<void> => {
      const { cluster, name } = parseWorkKey(key);
      const undo = copyGoes ? this.expectations.deleted(key, owner) : () => undefined;
      try {
        const deleted = await deleteObject(this.deps.http, RESOURCES.manifestWorks, cluster, name, preconditions);
        log.info({ cluster, work: name }, deleted ? done : 'ManifestWork already gone');
      } catch (err) {
        undo();
        if (isConflict(err)) {
          log.info({ cluster, work: name, observed: preconditions }, 'ManifestWork not deleted: it changed or was re-created since it was observed; its next reconcile sees it as it is');
          return;
        }
        failures.push(err);
        log.error({ cluster, work: name, err: String(err) }, 'ManifestWork delete failed');
      }
    };
    const writes = [
      ...plan.create.map((work) => write(work, true)),
      ...plan.apply.map((work) => write(work, false)),
      ...(plan.retire ?? []).map((work) => {
        const { uid, resourceVersion } = work.metadata;
        return uid && resourceVersion ? deleteWork(workKeyOf(work), { uid, resourceVersion }, 'ManifestWork retired: its copy is carried by a bundle, applied there', false) : Promise.resolve();
      }),
      ...plan.delete.map(async (key) => {
        const { cluster, name } = parseWorkKey(key);
        const preconditions = plan.observed.get(key);
        const drop = plan.drops?.get(key);
        if (!preconditions && !drop) {
          failures.push(new Error(`ManifestWork ${key} not deleted: its uid and resourceVersion were not observed`));
          return;
        }
        const since = this.held.get(key)?.since;
        if (this.waitsForTakeUp(owner, key, plan.takingUp?.has(key) ?? false)) {
          if (since === undefined) log.info({ cluster, work: name }, 'ManifestWork delete waits: the work agent is taking it up (its finalizer on, no Applied condition yet)');
          return;
        }
        if (since !== undefined && plan.takingUp?.has(key)) log.warn({ cluster, work: name, waitedMs: TAKE_UP_WAIT_MS }, 'the work agent did not report the work Applied in time: ManifestWork deleted without it');
        if (drop) {
          drops.push(drop);
          dropUndos.set(key, this.expectations.deleted(key, owner));
        }
        if (preconditions) await deleteWork(key, preconditions, 'ManifestWork deleted');
      }),
    ];
    await Promise.all(writes);
    const puts = plan.put ?? [];
    if (this.deps.bundles && puts.length + drops.length > 0) {
      const undos = [...puts.map((work) => this.expectations.applied(workKeyOf(work), readSpecHash(work), owner)), ...dropUndos.values()];
      this.writesInFlight++;
      const submitted = this.deps.bundles.submit(owner, puts, drops).then(
        (stale) => {
          // Not dropped (the copy changed since it was planned): not expected gone either.
          for (const key of stale) dropUndos.get(key)?.();
          this.putBackoff.delete(owner);
        },
        (err: unknown) => {
          for (const undo of undos) undo();
          throw err;
        },
      );
      void submitted.finally(() => {
        this.writesInFlight--;
        this.lastWriteEnded = performance.now();
      }).catch(() => undefined);
      written.bundled.push(...puts.map(workKeyOf));
      if (drops.length > 0) {
        // A deletion is awaited, as a work's delete is: its outcome is the reconcile's.
        try {
          await submitted;
        } catch (err) {
          failures.push(err);
          log.error({ puts: puts.length, drops: drops.length, err: String(err) }, 'bundle write failed');
        }
      } else {
        // Puts do not hold the reconcile: the policies of a fan-out hand theirs over together, and the writer writes
        // each bundle once (bundlewriter.ts). The expectations stand for them meanwhile; a failure undoes them and
        // brings the owner back, with a backoff of its own (its reconcile already succeeded).
        submitted.catch((err: unknown) => {
          const backoff = this.putBackoff.get(owner) ?? new Backoff({ initialMs: 200, maxMs: 60_000 });
          this.putBackoff.set(owner, backoff);
          const retryMs = backoff.next();
          log.error({ puts: puts.length, retryMs, err: String(err) }, 'bundle write failed; reconciling the policy again');
          this.deps.onWriteFailed?.(owner, retryMs);
        });
      }
    }
    // One line per reconcile, not per cluster (a policy on 100 clusters); each deletion has its own.
    if (written.created.length + written.applied.length + written.bundled.length > 0) {
      log.info({ created: written.created.sort(), applied: written.applied.sort(), ...(written.bundled.length > 0 ? { bundled: written.bundled.sort() } : {}) }, 'ManifestWorks written');
    }
    if (failures.length > 0) throw failures[0] instanceof Error ? failures[0] : new Error(String(failures[0]));
  }

  /** False when the work exists after all (the cache had not shown it yet): the caller applies instead. */
  private async create(work: ManifestWork): Promise<boolean> {
    try {
      await createObject(this.deps.http, RESOURCES.manifestWorks, work, { discardResponse: true });
      return true;
    } catch (err) {
      if (isAlreadyExists(err)) return false;
      throw err;
    }
  }
}
