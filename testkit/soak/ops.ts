// What the soak does, as data: the world's fixed shape (logical names the runner maps to real ones), the
// operations users and the fleet perform, the faults, and the rounds they are grouped in. A run is a list of
// rounds; its JSON is the replay file (`npm run soak -- --replay file.json`).

export const TENANTS = ['t1', 't2'] as const;
export type Tenant = (typeof TENANTS)[number];
export const SPOKES = ['spoke-1', 'spoke-2'] as const;
export type Spoke = (typeof SPOKES)[number];
/** Policy kinds: Kuadrant's AuthPolicy and RateLimitPolicy (single targetRef), and the soak's own CRD (targetRefs). */
export const KINDS = ['auth', 'rl', 'soak'] as const;
export type Kind = (typeof KINDS)[number];
export const CLASSES = ['a', 'b'] as const;
export type ClassName = (typeof CLASSES)[number];
export const GATEWAYS = ['gw1', 'gw2'] as const;
export type GatewayName = (typeof GATEWAYS)[number];
/** gw2 has two listeners; gw1 one. */
export const LISTENERS: Record<GatewayName, readonly string[]> = { gw1: ['http'], gw2: ['http', 'api'] };

export const HUB_POLICY_NAMES: Record<Kind, readonly string[]> = {
  auth: ['auth-1', 'auth-2', 'auth-3'],
  rl: ['rl-1', 'rl-2'],
  soak: ['soak-1', 'soak-2'],
};
/** Local policy names: the hub's (same-named) and two of the spoke team's own. */
export const LOCAL_POLICY_NAMES: Record<Kind, readonly string[]> = {
  auth: [...HUB_POLICY_NAMES.auth, 'own-1', 'own-2'],
  rl: [...HUB_POLICY_NAMES.rl, 'own-1'],
  soak: [...HUB_POLICY_NAMES.soak, 'own-1'],
};
/** The kinds each class's valid params may list (class b starts without rl). */
export const INITIAL_CLASS_KINDS: Record<ClassName, readonly Kind[]> = { a: ['auth', 'rl', 'soak'], b: ['auth', 'soak'] };

export interface Target {
  gateway: GatewayName;
  sectionName?: string;
}

export type Op =
  /** Create or change a hub policy (server-side apply of the whole object): an edit (marker), a relabel, a retarget. */
  | { op: 'policy-apply'; kind: Kind; tenant: Tenant; name: string; targets: Target[]; marker: number; labels: Record<string, string> }
  | { op: 'policy-delete'; kind: Kind; tenant: Tenant; name: string }
  /** A spoke team's own policy (created, never updated by the soak); `created` is filled in by the runner (false: the name was taken, 409). */
  | { op: 'local-create'; spoke: Spoke; kind: Kind; tenant: Tenant; name: string; targets: Target[]; created?: boolean }
  | { op: 'local-delete'; spoke: Spoke; kind: Kind; tenant: Tenant; name: string }
  /** Create a hub Gateway, or move it to another class. */
  | { op: 'gateway-apply'; tenant: Tenant; name: GatewayName; className: ClassName }
  | { op: 'gateway-delete'; tenant: Tenant; name: GatewayName }
  /** A valid edit of a class's params: the kinds it syncs. */
  | { op: 'params-set'; className: ClassName; kinds: Kind[] }
  /** The params made invalid for `holdMs`, then valid again as they were. */
  | { op: 'params-invalid'; className: ClassName; holdMs: number }
  /** The GatewayClass deleted and created again `holdMs` later (kubectl replace --force, a GitOps prune). */
  | { op: 'class-replace'; className: ClassName; holdMs: number }
  /** The tenant's Placement deleted (its decisions with it) and created again `holdMs` later. */
  | { op: 'placement-replace'; tenant: Tenant; holdMs: number }
  /** The tenant's ManagedClusterSetBinding created or deleted. */
  | { op: 'binding-set'; tenant: Tenant; bound: boolean }
  /** The ManagedCluster label that puts the spoke in the soak's ManagedClusterSet. */
  | { op: 'cluster-member'; spoke: Spoke; member: boolean }
  /**
   * Another hand on a spoke edits a synced copy (issue 42): a merge patch, as field manager DRIFT_FIELD_MANAGER, of the
   * one spec field that carries the hub's marker, to driftValue(drift), a value the hub never sends. `edited` is filled
   * in by the runner (false: no copy of that name ran there to edit within DRIFT_FIND_MS).
   */
  | { op: 'copy-drift'; spoke: Spoke; kind: Kind; tenant: Tenant; name: string; drift: number; edited?: boolean };

/** The field manager of the soak's drift edits: a hand on the spoke other than OCM's work agent (`kubectl edit`, a GitOps tool). */
export const DRIFT_FIELD_MANAGER = 'soak-drift';

/** The marker value a drift edit writes: far above any marker the generator gives a hub policy. */
export function driftValue(drift: number): number {
  return 1_000_000 + drift;
}

export type FaultKind =
  | 'none'
  /** The leading hub replica SIGKILLed; a Deployment starts it again 2 s later; the standby takes over. */
  | 'hub-kill'
  /** The spoke's policy-sync agent stopped for the hold, then started again. */
  | 'spoke-agent-stop'
  /** The spoke's OCM registration agent stopped for the hold: the cluster goes unavailable for real. */
  | 'registration-stop'
  /** The spoke's kube-apiserver restarted. */
  | 'spoke-apiserver-restart'
  /** etcd compacted at its current revision, then the hub's kube-apiserver restarted: watches resume with 410 Gone. */
  | 'hub-apiserver-restart-compaction'
  /** Every TCP connection to an apiserver reset (ss -K): each watch is cut. */
  | 'watch-cut'
  /** A spoke kube-apiserver frozen (SIGSTOP) for the hold, then thawed (SIGCONT). */
  | 'spoke-apiserver-freeze';

export const FAULT_KINDS: readonly FaultKind[] = [
  'none',
  'hub-kill',
  'spoke-agent-stop',
  'registration-stop',
  'spoke-apiserver-restart',
  'hub-apiserver-restart-compaction',
  'watch-cut',
  'spoke-apiserver-freeze',
];

export interface Fault {
  kind: FaultKind;
  /** The spoke it hits (spoke faults), or for watch-cut: 'hub' or a spoke. */
  target?: Spoke | 'hub';
  /** Injected after this many of the round's operations. */
  afterOps: number;
  /** How long it lasts (for faults that last). */
  holdMs: number;
}

export interface Round {
  ops: Op[];
  /** The pause after each operation, ms (same length as ops). */
  gaps: number[];
  fault: Fault;
}

export interface SoakPlan {
  seed: number;
  rounds: Round[];
}

export function policyKey(kind: Kind, tenant: Tenant, name: string): string {
  return `${kind}/${tenant}/${name}`;
}

export function targetId(t: Target): string {
  return t.sectionName === undefined ? t.gateway : `${t.gateway}#${t.sectionName}`;
}
