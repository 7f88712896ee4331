// The soak's model: from the operations alone, what each spoke should run. Pure, and written from the rules
// as docs/architecture.md and the README state them, not from src's decision code (which it must be able to
// contradict). The rules it holds, for a hub policy P of kind K in tenant namespace N, on spoke C:
//
//  1. Synced targets. A target of P (a Gateway of N, optionally a listener) is synced when that hub Gateway
//     exists and its GatewayClass (owned by the soak's controller) lists K in its params. While the class is
//     absent (replaced) or its params invalid, the last valid configuration stands ("keep": nothing is known
//     to be unwanted).
//  2. Placement. Every Gateway of N is placed by N's Placement over the soak's ManagedClusterSet: on C when
//     N's ManagedClusterSetBinding exists and C carries the set's label, and C is available. Every
//     downstream namespace is `{namespace}`: the copy of N/P lives in namespace N on C, so tenants never share
//     a lane; a copy of N/P anywhere but namespace N, or targeting a Gateway N has not, is a crossing.
//  3. The copy. C should run a copy of P when P has synced targets (all of them go to C, since one Placement
//     places all of N's Gateways) and C is placed, unless
//       - the name is held: a local policy of kind K named P exists in namespace N on C (nothing is placed
//         there, nothing of it is touched), or
//       - local policies win: every synced target is covered by local policies of kind K in namespace N on C
//         (a local policy on the whole Gateway covers the Gateway and each listener; one on a listener covers
//         that listener only).
//     The copy carries P's spec (its marker), P's labels (and possibly labels P dropped: under Update a
//     removed label stays, a gap noted in issue 29), the annotation kuadrant.io/policy-synced N/P, and
//     the targets rewritten (same Gateway names, namespace dropped).
//  4. Evidence (issue 29, h1): no FIRST copy on C without a fresh report from C's running spoke agent; a stale
//     or absent report keeps what runs. At quiescence every agent runs and reports, so this rule changes
//     nothing in the expected state; during a spoke-agent fault it forbids new copies (checked as safety).
//  5. Unavailable keeps what runs: while C is unavailable (its registration agent stopped, and 30 s after it
//     is back) nothing on C is removed for deselection; its copies are unknown to the model.
//  6. A copy leaves C only when the hub knows it is unwanted there (removalReasons): P deleted, P no longer
//     targets a synced Gateway (Gateway deleted, kind removed from valid params, retargeted), C deselected
//     while available, or local policies cover it. A replaced class or Placement, invalid params, an
//     unavailable cluster: never.
//  7. Drift (issue 42). A copy another hand edits on its spoke (the soak's `copy-drift`) is still expected as the
//     hub sends it: the hub reports the cluster `Drifted` from the spoke agent's fresh report and puts the copy back
//     (the classes' `drift` param is the default, Correct: the soak's params set none). The edit changes nothing the
//     model expects; the model only remembers which drift each copy last had (`drifted`). A change the hub itself
//     makes to that copy (a new marker, targets or labels; the copy withdrawn) overwrites the edit, and then nothing
//     may be left to report (sentCopyChanged).
// Rollout strategies are not in the model (no spoke controllers run in the soak, so a Progressive rollout
// could never succeed): every policy rolls out under All.
import {
  CLASSES,
  GATEWAYS,
  INITIAL_CLASS_KINDS,
  SPOKES,
  TENANTS,
  policyKey,
  targetId,
  type ClassName,
  type GatewayName,
  type Kind,
  type Op,
  type Spoke,
  type Target,
  type Tenant,
} from './ops.ts';

export interface HubPolicy {
  kind: Kind;
  tenant: Tenant;
  name: string;
  targets: Target[];
  marker: number;
  labels: Record<string, string>;
}

export interface LocalPolicy {
  spoke: Spoke;
  kind: Kind;
  tenant: Tenant;
  name: string;
  targets: Target[];
}

export interface ModelState {
  member: Record<Spoke, boolean>;
  bound: Record<Tenant, boolean>;
  placementPresent: Record<Tenant, boolean>;
  classPresent: Record<ClassName, boolean>;
  paramsValid: Record<ClassName, boolean>;
  /** The kinds of each class's last valid params. */
  classKinds: Record<ClassName, Kind[]>;
  /** `tenant/gateway` → its class; absent: no such hub Gateway. */
  gateways: Record<string, ClassName>;
  policies: Record<string, HubPolicy>;
  /** `spoke/kind/tenant/name` → the local policy. */
  locals: Record<string, LocalPolicy>;
  /** copyId → the number of the last drift edit made to that copy on its spoke (rule 7). */
  drifted: Record<string, number>;
}

export function initialState(): ModelState {
  return {
    member: { 'spoke-1': true, 'spoke-2': true },
    bound: { t1: true, t2: true },
    placementPresent: { t1: true, t2: true },
    classPresent: { a: true, b: true },
    paramsValid: { a: true, b: true },
    classKinds: { a: [...INITIAL_CLASS_KINDS.a], b: [...INITIAL_CLASS_KINDS.b] },
    gateways: { 't1/gw1': 'a', 't1/gw2': 'a', 't2/gw1': 'b', 't2/gw2': 'a' },
    policies: {},
    locals: {},
    drifted: {},
  };
}

export function localKey(spoke: Spoke, kind: Kind, tenant: Tenant, name: string): string {
  return `${spoke}/${kind}/${tenant}/${name}`;
}

/** A copy on a spoke: `spoke/kind/tenant/name`. */
export function copyId(spoke: Spoke, kind: Kind, tenant: Tenant, name: string): string {
  return `${spoke}/${kind}/${tenant}/${name}`;
}

/** Composite operations have a middle (`begin`: the class or Placement gone, the params invalid) and an end. */
export type Phase = 'begin' | 'end' | 'whole';

/** The state after `op` (or its phase), `state` untouched. */
export function applyOp(state: ModelState, op: Op, phase: Phase = 'whole'): ModelState {
  const s: ModelState = structuredClone(state);
  switch (op.op) {
    case 'policy-apply':
      s.policies[policyKey(op.kind, op.tenant, op.name)] = { kind: op.kind, tenant: op.tenant, name: op.name, targets: op.targets, marker: op.marker, labels: op.labels };
      break;
    case 'policy-delete':
      delete s.policies[policyKey(op.kind, op.tenant, op.name)];
      break;
    case 'local-create':
      if (op.created !== false) s.locals[localKey(op.spoke, op.kind, op.tenant, op.name)] = { spoke: op.spoke, kind: op.kind, tenant: op.tenant, name: op.name, targets: op.targets };
      break;
    case 'local-delete':
      delete s.locals[localKey(op.spoke, op.kind, op.tenant, op.name)];
      break;
    case 'gateway-apply':
      s.gateways[`${op.tenant}/${op.name}`] = op.className;
      break;
    case 'gateway-delete':
      delete s.gateways[`${op.tenant}/${op.name}`];
      break;
    case 'params-set':
      s.classKinds[op.className] = [...op.kinds];
      s.paramsValid[op.className] = true;
      break;
    case 'params-invalid':
      s.paramsValid[op.className] = phase === 'begin' ? false : true;
      break;
    case 'class-replace':
      s.classPresent[op.className] = phase !== 'begin';
      break;
    case 'placement-replace':
      s.placementPresent[op.tenant] = phase !== 'begin';
      break;
    case 'binding-set':
      s.bound[op.tenant] = op.bound;
      break;
    case 'cluster-member':
      s.member[op.spoke] = op.member;
      break;
    case 'copy-drift':
      // What each spoke should run is unchanged (rule 7): the hub puts the copy back.
      if (op.edited !== false) s.drifted[copyId(op.spoke, op.kind, op.tenant, op.name)] = op.drift;
      break;
  }
  return s;
}

/** The targets of `p` that are synced (rule 1), in a canonical order; classes absent count with their last configuration. */
export function syncedTargets(s: ModelState, p: HubPolicy): Target[] {
  const out = new Map<string, Target>();
  for (const t of p.targets) {
    const cls = s.gateways[`${p.tenant}/${t.gateway}`];
    if (cls === undefined) continue;
    if (!s.classKinds[cls].includes(p.kind)) continue;
    out.set(targetId(t), t);
  }
  return [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, t]) => t);
}

/** Whether the spoke is placed for the tenant (rule 2; availability is the caller's). */
export function placed(s: ModelState, tenant: Tenant, spoke: Spoke): boolean {
  return s.bound[tenant] && s.member[spoke];
}

/** The local policies (keys `tenant/name`) covering `target` on the spoke, among those of `kind` in the tenant's namespace. */
export function coveringLocals(s: ModelState, spoke: Spoke, kind: Kind, tenant: Tenant, target: Target): string[] {
  const by: string[] = [];
  for (const l of Object.values(s.locals)) {
    if (l.spoke !== spoke || l.kind !== kind || l.tenant !== tenant) continue;
    const covers = l.targets.some((lt) => lt.gateway === target.gateway && (lt.sectionName === undefined || lt.sectionName === target.sectionName));
    if (covers) by.push(`${tenant}/${l.name}`);
  }
  return by.sort();
}

export type Withholding = { reason: 'name-held' } | { reason: 'overridden'; by: string[] };

export interface ExpectedCopy {
  spoke: Spoke;
  kind: Kind;
  tenant: Tenant;
  name: string;
  targets: Target[];
  marker: number;
  labels: Record<string, string>;
}

export interface Expected {
  /** copyId → the copy each spoke should run. */
  copies: Map<string, ExpectedCopy>;
  /** copyId → why a placed copy is withheld. */
  withheld: Map<string, Withholding>;
}

/** What every spoke should run at quiescence (every fault lifted, every composite operation ended). */
export function expected(s: ModelState): Expected {
  const copies = new Map<string, ExpectedCopy>();
  const withheld = new Map<string, Withholding>();
  for (const p of Object.values(s.policies)) {
    const targets = syncedTargets(s, p);
    if (targets.length === 0) continue;
    for (const spoke of SPOKES) {
      if (!placed(s, p.tenant, spoke)) continue;
      const id = copyId(spoke, p.kind, p.tenant, p.name);
      if (s.locals[localKey(spoke, p.kind, p.tenant, p.name)]) {
        withheld.set(id, { reason: 'name-held' });
        continue;
      }
      const covered = targets.map((t) => coveringLocals(s, spoke, p.kind, p.tenant, t));
      if (covered.every((by) => by.length > 0)) {
        withheld.set(id, { reason: 'overridden', by: [...new Set(covered.flat())].sort() });
        continue;
      }
      copies.set(id, { spoke, kind: p.kind, tenant: p.tenant, name: p.name, targets, marker: p.marker, labels: p.labels });
    }
  }
  return { copies, withheld };
}

/** Whether two expected copies are the same copy as the hub sends it (spec marker, targets, labels). */
export function sameCopy(a: ExpectedCopy | undefined, b: ExpectedCopy | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.marker === b.marker && a.targets.map(targetId).join(',') === b.targets.map(targetId).join(',') && JSON.stringify(sortedEntries(a.labels)) === JSON.stringify(sortedEntries(b.labels));
}

function sortedEntries(r: Record<string, string>): [string, string][] {
  return Object.entries(r).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
}

/**
 * Whether the hub itself changed, or withdrew, the copy `id` between states `before` and `after` (rule 7): its work
 * then writes the copy whole, which overwrites another hand's edit whether or not the hub saw it first.
 */
export function sentCopyChanged(before: ModelState, after: ModelState, id: string): boolean {
  return !sameCopy(expected(before).copies.get(id), expected(after).copies.get(id));
}

/** The facts of the moment the model cannot read from operations: which spokes are in doubt. */
export interface Doubt {
  /** Spokes whose cluster may be unavailable (registration fault, and its recovery grace). */
  unavailable: ReadonlySet<Spoke>;
}

/**
 * Why the hub may remove the copy `spoke/kind/tenant/name` in state `s` (rule 6), or undefined when nothing
 * in `s` makes it unwanted there as far as the hub can know.
 */
export function removalReason(s: ModelState, doubt: Doubt, spoke: Spoke, kind: Kind, tenant: Tenant, name: string): string | undefined {
  const p = s.policies[policyKey(kind, tenant, name)];
  if (!p) return 'policy deleted';
  // A class absent or its params invalid: the last valid configuration stands, so syncedTargets decides.
  const classes = new Set(p.targets.map((t) => s.gateways[`${tenant}/${t.gateway}`]).filter((c): c is ClassName => c !== undefined));
  if ([...classes].some((c) => !s.classPresent[c] || !s.paramsValid[c])) return undefined;
  const targets = syncedTargets(s, p);
  if (targets.length === 0) return 'no synced target (Gateway deleted, kind removed, retargeted)';
  if (!placed(s, tenant, spoke)) {
    if (doubt.unavailable.has(spoke)) return undefined;
    if (!s.placementPresent[tenant]) return undefined;
    return 'deselected while available (label or binding)';
  }
  const covered = targets.every((t) => coveringLocals(s, spoke, kind, tenant, t).length > 0);
  if (covered && !s.locals[localKey(spoke, kind, tenant, name)]) return 'local policies cover it';
  return undefined;
}

/** Gateways the tenant has on the hub (a copy's target must be one: else a crossing). */
export function tenantGateways(s: ModelState, tenant: Tenant): GatewayName[] {
  return GATEWAYS.filter((g) => s.gateways[`${tenant}/${g}`] !== undefined);
}

export { CLASSES, TENANTS };
