// GatewayClass params reconciler (docs/design/configuration.md#gatewayclass-params, #params-validation): for each class whose controllerName is ours, read
// the params object, validate the document and every policy kind it lists, record the configuration in
// force, and write the `Accepted` and `PoliciesSynced` conditions — recomputed on every pass, written
// only when they changed.
import type { Logger } from 'pino';
import {
  classConditions,
  kindProblemLine,
  kindsInForce,
  ownsClass,
  PROGRESSIVE_ROLLOUT_READY,
  progressiveRolloutCondition,
  readParamsRef,
  parseParamsObject,
  type KindCheck,
  type KindValidation,
} from '../core/params/classparams.ts';
import { conditionsUpToDate, mergeConditions, readConditions, type Condition } from '../core/k8s/conditions.ts';
import { gvrKey } from '../core/k8s/gvr.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import type { PolicyKindConfig, SyncParams } from '../core/params/params.ts';
import type { OpenApiSchema } from '../core/variants/schemacheck.ts';
import { canI, crdVersionHasStatus, crdVersionSchema, findServedResource, OBSERVED_GENERATION_FIELDS, readCrd, schemaHasObservedGeneration, schemaIsPolicy } from '../kube/discovery.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { Informer } from '../kube/informer.ts';
import { RESOURCES } from '../kube/resource.ts';
import { mergePatch } from '../kube/writes.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import type { ClassConfigs, KindInForce } from './classconfigs.ts';
import type { ParamsRefs } from './paramsrefs.ts';
import type { UngatedKind, UngatedKinds } from './ungatedkinds.ts';

/** A class with a problem (params or a kind) is looked at again with backoff, up to every 30 s. */
const RECHECK = { initialMs: 1_000, maxMs: 30_000 };
const RECHECK_VALID_MS = 5 * 60_000;

export interface GatewayClassReconcilerDeps {
  http: KubeHttp;
  controllerName: string;
  classes: Informer;
  paramsRefs: ParamsRefs;
  configs: ClassConfigs;
  /** The configuration in force for the class changed (or the class stopped being ours). */
  onConfigChanged: (className: string) => void;
  /** False on a standby: the configuration is still computed (caches stay warm), status is not written. */
  canWrite: () => boolean;
  /** Where the kinds a Progressive rollout cannot gate on are recorded for the rollouts (rollouts.ts). */
  ungatedKinds?: UngatedKinds;
  logger: Logger;
}

/** A kind's validation, with what its CRD says of the generation its controller observed. */
type KindChecked = KindValidation<KindInForce> & { detail?: string; ungated?: UngatedKind };

export class GatewayClassReconciler {
  /** Consecutive passes with a problem, per class: the re-check backoff. */
  private readonly failures = new Map<string, number>();

  constructor(private readonly deps: GatewayClassReconcilerDeps) {}

  async reconcile(name: string): Promise<ReconcileResult> {
    const gatewayClass = this.deps.classes.store.get(name);
    if (!gatewayClass || !ownsClass(gatewayClass, this.deps.controllerName)) {
      this.failures.delete(name);
      this.deps.ungatedKinds?.remove(name);
      await this.deps.paramsRefs.use(name, undefined);
      if (this.deps.configs.remove(name)) this.deps.onConfigChanged(name);
      return;
    }
    const log = this.deps.logger.child({ gatewayClass: name });
    const read = await this.readParams(name, gatewayClass);
    if (read === 'pending') return { requeueAfterMs: this.recheckDelay(name, true) };

    let kinds: KindCheck[] = [];
    let keepingLastGood = false;
    let changed: boolean;
    // Progressive: whether it can gate on every kind (a condition of its own); All: no such condition;
    // invalid params: what the class says of it stays, as the last valid configuration does.
    let rollout: 'keep' | 'none' | Condition = 'keep';
    if ('params' in read) {
      const validations = await Promise.all(read.params.policiesToSync.map((k) => this.checkKind(k)));
      const { inForce, checks } = kindsInForce(this.deps.configs.get(name)?.kinds, validations);
      kinds = checks;
      changed = this.deps.configs.setValid(name, { params: read.params, kinds: inForce });
      kinds.forEach((k, i) => {
        if (k.problem) log.warn({ kind: gvrKey(k.gvr), problem: k.problem, keptVersion: k.keptVersion, detail: validations[i]?.detail }, 'policy kind in params is not validated');
      });
      const ungated = validations.flatMap((v) => (v.ungated ? [v.ungated] : []));
      // A CRD's schema changed under the same params: its policies' problems may have too.
      if (this.deps.ungatedKinds?.set(name, ungated) === true) changed = true;
      rollout = read.params.rolloutStrategy.type === 'Progressive' ? progressiveRolloutCondition({ generation: gatewayClass.metadata.generation, ungated: ungated.map((k) => k.name) }) : 'none';
    } else {
      ({ keepingLastGood } = this.deps.configs.setInvalid(name));
      changed = false;
      log.warn({ errors: read.errors, keepingLastGood }, keepingLastGood ? 'GatewayClass params are invalid; the last valid configuration stays in force' : 'GatewayClass params are invalid and none was valid since start-up; its ManifestWorks are kept');
    }
    if (changed) this.deps.onConfigChanged(name);

    const desired = [
      ...classConditions({
        generation: gatewayClass.metadata.generation,
        paramsErrors: 'errors' in read ? read.errors : [],
        keepingLastGood,
        kinds,
      }),
      ...(typeof rollout === 'object' ? [rollout] : []),
    ];
    const written = readConditions(gatewayClass);
    // A class that no longer rolls out Progressive loses the condition (the merge patch replaces the list).
    const existing = rollout === 'none' ? written.filter((c) => c.type !== PROGRESSIVE_ROLLOUT_READY) : written;
    if (this.deps.canWrite() && (existing.length !== written.length || !conditionsUpToDate(existing, desired))) {
      await mergePatch(this.deps.http, RESOURCES.gatewayClasses, undefined, name, {
        status: { conditions: mergeConditions(existing, desired, new Date().toISOString().replace(/\.\d+Z$/, 'Z')) },
      }, { subresource: 'status' });
      log.info({ conditions: desired.map((c) => `${c.type}=${c.status}/${c.reason}`), kinds: kinds.filter((k) => k.problem).map(kindProblemLine) }, 'GatewayClass status written');
      if (typeof rollout === 'object' && rollout.status === 'False') {
        log.warn({ reason: rollout.reason, message: rollout.message }, 'GatewayClass rolls out Progressive, and some synced kinds cannot be gated on: their rollouts fail at progressDeadline');
      }
    }
    const anyProblem = 'errors' in read || kinds.some((k) => k.problem);
    return { requeueAfterMs: this.recheckDelay(name, anyProblem) };
  }

  /** Backoff while the class has a problem (1 s doubling to 30 s); a long period once all is well. */
  private recheckDelay(className: string, problem: boolean): number {
    if (!problem) {
      this.failures.delete(className);
      return RECHECK_VALID_MS;
    }
    const n = this.failures.get(className) ?? 0;
    this.failures.set(className, n + 1);
    return Math.min(RECHECK.maxMs, RECHECK.initialMs * 2 ** n);
  }

  private async readParams(className: string, gatewayClass: KubeObject): Promise<'pending' | { params: SyncParams } | { errors: string[] }> {
    const ref = readParamsRef(gatewayClass);
    await this.deps.paramsRefs.use(className, ref.ok ? ref.ref : undefined);
    if (!ref.ok) return { errors: [ref.error] };
    const { synced, object, error } = this.deps.paramsRefs.read(ref.ref);
    if (!synced) {
      // The params object's watch has not listed yet: say why when the list fails (the PolicySyncParams
      // CRD not installed, no RBAC) rather than waiting in silence.
      if (error) return { errors: [`${ref.ref.kind} ${ref.ref.namespace}/${ref.ref.name} (spec.parametersRef) cannot be read: ${error}`] };
      return 'pending';
    }
    if (!object) return { errors: [`${ref.ref.kind} ${ref.ref.namespace}/${ref.ref.name} (spec.parametersRef) not found`] };
    const parsed = parseParamsObject(ref.ref.kind, object);
    return parsed.ok ? { params: parsed.params } : { errors: parsed.errors };
  }

  /** docs/design/configuration.md#params-validation: served by discovery, a policy by its CRD schema, and list/watch allowed. */
  private async checkKind(config: PolicyKindConfig): Promise<KindChecked> {
    const gvr = { group: config.group, version: config.version, resource: config.resource };
    try {
      const served = await findServedResource(this.deps.http, gvr);
      if (!served) return { gvr, problem: 'NotFound' };
      const crd = await readCrd(this.deps.http, gvr);
      const schema = crdVersionSchema(crd, gvr.version);
      if (!schemaIsPolicy(schema)) return { gvr, problem: 'NotAPolicy' };
      if (!(await canI(this.deps.http, gvr, ['list', 'watch']))) return { gvr, problem: 'Forbidden' };
      const good = { gvr, namespaced: served.namespaced, config, ...(crd ? { crdUid: crd.uid, statusSubresource: crdVersionHasStatus(crd, gvr.version) } : {}), ...(schema ? { schema: schema as OpenApiSchema } : {}) };
      // A schema that has none of the fields the rollout judges a verdict by (one that keeps some of the way
      // open may still have them: that is not named).
      if (schemaHasObservedGeneration(schema) !== false) return { gvr, good };
      this.deps.logger.debug({ kind: gvrKey(gvr), fields: OBSERVED_GENERATION_FIELDS }, 'policy kind has no observedGeneration in its CRD schema');
      const apiVersion = gvr.group === '' ? gvr.version : `${gvr.group}/${gvr.version}`;
      return { gvr, good, ungated: { apiVersion, kind: served.kind, name: gvrKey(gvr) } };
    } catch (err) {
      return { gvr, problem: 'CheckFailed', detail: String(err) };
    }
  }
}
