// GatewayClass params reconciler (DESIGN §2.1–2.2): for each class whose controllerName is ours, read
// the params object, validate the document and every policy kind it lists, record the configuration in
// force, and write the `Accepted` and `PoliciesSynced` conditions — recomputed on every pass, written
// only when they changed.
import type { Logger } from 'pino';
import { classConditions, readParamsRef, parseParamsObject, type KindCheck, type KindProblem } from '../core/classparams.ts';
import { conditionsUpToDate, mergeConditions, readConditions } from '../core/conditions.ts';
import { gvrKey, type GroupVersionResource } from '../core/gvr.ts';
import type { KubeObject } from '../core/objects.ts';
import type { SyncParams } from '../core/params.ts';
import { canI, crdSchema, findServedResource, schemaIsPolicy } from '../kube/discovery.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { Informer } from '../kube/informer.ts';
import { RESOURCES } from '../kube/resource.ts';
import { mergePatch } from '../kube/writes.ts';
import type { ReconcileResult } from '../runtime/runner.ts';
import type { ClassConfigs, KindInForce } from './classconfigs.ts';
import type { ParamsRefs } from './paramsrefs.ts';

/** Kinds that failed validation may appear later (a CRD installed, a ClusterRole granted): look again. */
const RECHECK_INVALID_MS = 30_000;
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
  logger: Logger;
}

export function ownsClass(gatewayClass: KubeObject | undefined, controllerName: string): boolean {
  return (gatewayClass?.spec as { controllerName?: unknown } | undefined)?.controllerName === controllerName;
}

export class GatewayClassReconciler {
  constructor(private readonly d: GatewayClassReconcilerDeps) {}

  async reconcile(name: string): Promise<ReconcileResult> {
    const gatewayClass = this.d.classes.store.get(name);
    if (!gatewayClass || !ownsClass(gatewayClass, this.d.controllerName)) {
      await this.d.paramsRefs.use(name, undefined);
      if (this.d.configs.remove(name)) this.d.onConfigChanged(name);
      return;
    }
    const log = this.d.logger.child({ gatewayClass: name });
    const read = await this.readParams(name, gatewayClass);
    if (read === 'pending') return { requeueAfterMs: 200 };

    let kinds: KindCheck[] = [];
    let keepingLastGood = false;
    let changed: boolean;
    if ('params' in read) {
      const checks = await Promise.all(read.params.policiesToSync.map((k) => this.checkKind(k)));
      kinds = checks.map((c) => ({ gvr: c.gvr, problem: c.problem }));
      const inForce = new Map<string, KindInForce>();
      read.params.policiesToSync.forEach((config, i) => {
        const check = checks[i]!;
        if (!check.problem) inForce.set(gvrKey(config), { gvr: check.gvr, namespaced: check.namespaced, config });
      });
      changed = this.d.configs.setValid(name, { params: read.params, kinds: inForce });
      for (const k of kinds.filter((x) => x.problem)) log.warn({ kind: gvrKey(k.gvr), problem: k.problem }, 'policy kind in params is not synced');
    } else {
      ({ keepingLastGood } = this.d.configs.setInvalid(name));
      changed = false;
      log.warn({ errors: read.errors, keepingLastGood }, 'GatewayClass params are invalid');
    }
    if (changed) this.d.onConfigChanged(name);

    const desired = classConditions({
      generation: gatewayClass.metadata.generation,
      paramsErrors: 'errors' in read ? read.errors : [],
      keepingLastGood,
      kinds,
    });
    const existing = readConditions(gatewayClass);
    if (this.d.canWrite() && !conditionsUpToDate(existing, desired)) {
      await mergePatch(this.d.http, RESOURCES.gatewayClasses, undefined, name, {
        status: { conditions: mergeConditions(existing, desired, new Date().toISOString().replace(/\.\d+Z$/, 'Z')) },
      }, { subresource: 'status' });
      log.info({ conditions: desired.map((c) => `${c.type}=${c.status}/${c.reason}`) }, 'GatewayClass status written');
    }
    const anyInvalid = 'errors' in read || kinds.some((k) => k.problem);
    return { requeueAfterMs: anyInvalid ? RECHECK_INVALID_MS : RECHECK_VALID_MS };
  }

  private async readParams(className: string, gatewayClass: KubeObject): Promise<'pending' | { params: SyncParams } | { errors: string[] }> {
    const ref = readParamsRef(gatewayClass);
    await this.d.paramsRefs.use(className, ref.ok ? ref.ref : undefined);
    if (!ref.ok) return { errors: [ref.error] };
    const { synced, object } = this.d.paramsRefs.read(ref.ref);
    if (!synced) return 'pending';
    if (!object) return { errors: [`${ref.ref.kind} ${ref.ref.namespace}/${ref.ref.name} (spec.parametersRef) not found`] };
    const parsed = parseParamsObject(ref.ref.kind, object);
    return parsed.ok ? { params: parsed.params } : { errors: parsed.errors };
  }

  /** DESIGN §2.2: served by discovery, a policy by its CRD schema, and list/watch allowed. */
  private async checkKind(gvr: GroupVersionResource): Promise<{ gvr: GroupVersionResource; problem?: KindProblem; namespaced: boolean }> {
    const plain = { group: gvr.group, version: gvr.version, resource: gvr.resource };
    const served = await findServedResource(this.d.http, plain);
    if (!served) return { gvr: plain, problem: 'NotFound', namespaced: true };
    if (!schemaIsPolicy(await crdSchema(this.d.http, plain))) return { gvr: plain, problem: 'NotAPolicy', namespaced: served.namespaced };
    if (!(await canI(this.d.http, plain, ['list', 'watch']))) return { gvr: plain, problem: 'Forbidden', namespaced: served.namespaced };
    return { gvr: plain, namespaced: served.namespaced };
  }
}
