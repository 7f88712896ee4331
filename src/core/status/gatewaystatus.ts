// The hub Gateway's status (docs/design/status.md#gateway-status): policy-sync is the controller of its
// GatewayClasses, so it writes the conditions of their hub Gateways — `Accepted` (the class's params in
// force), `Programmed` (where the Gateway is placed), one GEP-713-style `<Kind>Affected` per synced kind
// with policies on the Gateway, and `PoliciesEnforced` (every policy enforced on every placed cluster?).
// Computed here from what the hub already knows: the class reconciler's conditions on the class, the
// placement, and each policy's per-cluster verdicts as the status reporter wrote them (its status
// annotation, core/status/report.ts). Pure: the hub's gatewaystatusreconciler.ts reads and writes.
import { canonicalJson, sha256Hex } from '../k8s/canonical.ts';
import { readConditions, type Condition } from '../k8s/conditions.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { cleanText, cutCodePoints } from '../k8s/sanitize.ts';
import { ACCEPTED, POLICIES_SYNCED } from '../params/classparams.ts';
import { Generations } from '../k8s/intern.ts';
import { LINGERING, type ClusterState, type ClusterStatus, type PolicyStatus, type StatusSummary } from './policystatus.ts';

/** Prefix of the condition types this controller adds beside Gateway API's own. */
export const GATEWAY_CONDITION_PREFIX = 'policysync.kuadrant.io/';
export const PROGRAMMED = 'Programmed';
export const POLICIES_ENFORCED = `${GATEWAY_CONDITION_PREFIX}PoliciesEnforced`;
/** The Gateway CRD's `status.conditions` maxItems: ours and everyone else's together. */
export const MAX_GATEWAY_CONDITIONS = 8;
/** Longest message written (code points); the CRD allows 32768, nobody reads that much in `kubectl describe`. */
export const MAX_GATEWAY_MESSAGE_LENGTH = 1024;
/** Longest condition type the CRD accepts. */
const MAX_CONDITION_TYPE_LENGTH = 316;
/** How many names a message lists before it says how many more there are. */
const MAX_LISTED = 10;

/** The class's params as the class reconciler judged them (its conditions on the GatewayClass). */
export type ClassState = { accepted: true; kindProblems?: string } | { accepted: false; message: string };

export interface GatewayPlacement {
  /** `namespace/name` of the Placement the Gateway's label names; undefined when it names none. */
  placement?: string;
  /** The clusters it is placed on (decisions that count). */
  clusters: readonly string[];
  /** Of those, the ones OCM cannot vouch for now. */
  unavailable: readonly { cluster: string; message: string }[];
  /** Decided clusters, or decisions, that do not count, with why. */
  refused: readonly { cluster?: string; message: string }[];
  /** Set while the decisions are in flux (the Placement absent, not decided, or rewriting them). */
  unsettled?: { reason: string; message: string };
}

/** A synced kind of the Gateway's class; `kind` its Kind name when known (from a cached policy of it). */
export interface SyncedKind {
  group: string;
  resource: string;
  kind?: string;
}

/** A hub policy targeting the Gateway, with its per-cluster verdicts (its status annotation, parsed). */
export interface TargetingPolicy {
  group: string;
  resource: string;
  kind?: string;
  namespace: string;
  name: string;
  /** Undefined while the status reporter wrote none (or it cannot be read). */
  status: PolicyStandings | undefined;
}

/** What the Gateway's status reads of a policy's verdicts: its summary, each cluster's state and reason, its first problem's reason. */
export interface PolicyStandings {
  summary: StatusSummary;
  clusters?: Readonly<Record<string, Pick<ClusterStatus, 'state' | 'reason'>>>;
  problems?: readonly { reason: string }[];
}

/**
 * A policy's verdicts cut to what the Gateway's status reads. The hub keeps them for every cached policy
 * (parsed once per annotation): the whole status is ~2 KB a policy on 10 clusters, its messages and feedback
 * parsed anew each time, where the states and reasons it needs are a few values shared by all.
 */
export function policyStandings(status: PolicyStatus | undefined): PolicyStandings | undefined {
  if (!status) return undefined;
  const standings: PolicyStandings = { summary: status.summary };
  if (status.clusters) {
    const clusters: Record<string, Pick<ClusterStatus, 'state' | 'reason'>> = {};
    for (const [cluster, { state, reason }] of Object.entries(status.clusters)) clusters[cluster] = standing(state, reason);
    standings.clusters = clusters;
  }
  const first = status.problems?.[0];
  if (first) standings.problems = [{ reason: first.reason }];
  return standings;
}

/** Reasons are the spoke controllers' too, so the table is bounded (core/k8s/intern.ts Generations). */
const standings = new Generations<string, Pick<ClusterStatus, 'state' | 'reason'>>(256, 1 << 16);
function standing(state: ClusterState, reason: string): Pick<ClusterStatus, 'state' | 'reason'> {
  const key = `${state}\n${reason}`;
  const known = standings.get(key);
  if (known) return known;
  const made = Object.freeze({ state, reason });
  standings.set(key, made);
  return made;
}

/**
 * A policy deleted from the hub whose copies still run where it targeted the Gateway, by the fresh spoke reports
 * (core/spoke/spoketruth.ts): no policy is left to carry them in its status, so the Gateway does.
 */
export interface DeletedPolicyLingering {
  group: string;
  resource: string;
  kind?: string;
  namespace: string;
  name: string;
  /** The clusters where a copy of it lingers (seen so past the grace), sorted. */
  clusters: readonly string[];
}

export interface GatewayStatusInput {
  namespace: string;
  name: string;
  generation: number | undefined;
  className: string;
  classState: ClassState;
  placement: GatewayPlacement;
  /** The kinds in force for the class. Policies of other kinds, or of other namespaces, are not ours to count. */
  kinds: readonly SyncedKind[];
  policies: readonly TargetingPolicy[];
  /** Deleted policies that targeted the Gateway and whose copies linger; absent or empty when none. */
  lingering?: readonly DeletedPolicyLingering[];
  /** The Gateway's conditions as cached: others' types take room in the list (MAX_GATEWAY_CONDITIONS). */
  existing: readonly Condition[];
  /** The condition types this controller owns on the Gateway (its managed fields). */
  owned: ReadonlySet<string>;
}

/**
 * What the class reconciler decided for the class, from its conditions; undefined while they do not
 * describe the class's current generation (not written yet): the Gateway's status waits for them.
 */
export function classStateOf(gatewayClass: KubeObject): ClassState | undefined {
  const generation = gatewayClass.metadata.generation;
  const conditions = readConditions(gatewayClass);
  const current = (type: string): Condition | undefined => conditions.find((c) => c.type === type && c.observedGeneration === generation);
  const accepted = current(ACCEPTED);
  if (accepted?.status === 'False') return { accepted: false, message: accepted.message };
  if (accepted?.status !== 'True') return undefined;
  const synced = current(POLICIES_SYNCED);
  return synced?.status === 'False' ? { accepted: true, kindProblems: synced.message } : { accepted: true };
}

/**
 * The conditions this controller wants on the Gateway, without lastTransitionTime (conditionsToApply
 * stamps it), in priority order: Accepted, Programmed, PoliciesEnforced, then one `<Kind>Affected` per
 * kind with policies on the Gateway, by type. Only as many as the list has room for beside the
 * conditions of other writers: the kind conditions are the first to go.
 */
export function gatewayConditions(input: GatewayStatusInput): Condition[] {
  const observedGeneration = input.generation;
  const policies = ourPolicies(input);
  const candidates: Omit<Condition, 'observedGeneration'>[] = [acceptedCondition(input), programmedCondition(input.placement), enforcedCondition(policies, input.placement, lingeringOf(input)), ...affectedConditions(input.kinds, policies)];
  const candidateTypes = new Set(candidates.map((c) => c.type));
  const others = input.existing.filter((c) => !input.owned.has(c.type) && !candidateTypes.has(c.type)).length;
  const room = Math.max(0, MAX_GATEWAY_CONDITIONS - others);
  return candidates.slice(0, room).map((c) => ({ ...c, message: message(c.message), ...(observedGeneration === undefined ? {} : { observedGeneration }) }));
}

/**
 * The conditions to apply: `desired`, each keeping the cached condition's lastTransitionTime when its
 * status did not change, else stamped `now`. Only ours: server-side apply leaves the other types alone
 * and removes the types we owned and no longer apply.
 */
export function conditionsToApply(existing: readonly Condition[], desired: readonly Condition[], now: string): Condition[] {
  const byType = new Map(existing.map((c) => [c.type, c]));
  return desired.map((d) => {
    const old = byType.get(d.type);
    return { ...d, lastTransitionTime: old && old.status === d.status && old.lastTransitionTime ? old.lastTransitionTime : now };
  });
}

/**
 * What of the cached Gateway a write of ours would change, as text: the conditions of our types (those
 * we own and those we want), as the ones wanted are compared. Equal to `desiredFingerprint(desired)`
 * exactly when nothing needs writing.
 */
export function cachedFingerprint(existing: readonly Condition[], owned: ReadonlySet<string>, desired: readonly Condition[]): string {
  const types = new Set([...owned, ...desired.map((c) => c.type)]);
  return fingerprint(existing.filter((c) => types.has(c.type)));
}

export function desiredFingerprint(desired: readonly Condition[]): string {
  return fingerprint(desired);
}

function fingerprint(conditions: readonly Condition[]): string {
  const compared = conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message, observedGeneration: c.observedGeneration ?? null }));
  return canonicalJson(compared.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0)));
}

/**
 * The condition types `manager`'s server-side applies of the status subresource own, read from the
 * object's managedFields (`f:status` → `f:conditions` → `k:{"type":"…"}`). An apply that leaves out one of
 * these removes it; a type anyone else owns is left alone by our applies, so it is never ours to remove.
 */
export function ownedConditionTypes(managedFields: unknown, manager: string): Set<string> {
  const types = new Set<string>();
  if (!Array.isArray(managedFields)) return types;
  for (const entry of managedFields as unknown[]) {
    const e = entry as { manager?: unknown; operation?: unknown; subresource?: unknown; fieldsV1?: unknown } | null;
    if (e?.manager !== manager || e.operation !== 'Apply' || e.subresource !== 'status') continue;
    const conditions = ((e.fieldsV1 as Record<string, unknown> | undefined)?.['f:status'] as Record<string, unknown> | undefined)?.['f:conditions'];
    if (conditions === null || typeof conditions !== 'object') continue;
    for (const key of Object.keys(conditions)) {
      if (!key.startsWith('k:')) continue;
      try {
        const type = (JSON.parse(key.slice(2)) as { type?: unknown }).type;
        if (typeof type === 'string') types.add(type);
      } catch {
        // Not a key of the list map: nothing of ours.
      }
    }
  }
  return types;
}

/**
 * The GatewayClass our conditions on a Gateway were written for: the class our `Accepted` condition's
 * message names (it always starts `GatewayClass <name>: `), when our field manager owns that condition.
 * Undefined when we own no Accepted condition there, or its message names no class.
 */
export function classOfOurConditions(existing: readonly Condition[], owned: ReadonlySet<string>): string | undefined {
  if (!owned.has(ACCEPTED)) return undefined;
  const message = existing.find((c) => c.type === ACCEPTED)?.message ?? '';
  return /^GatewayClass ([^\s:]+): /.exec(message)?.[1];
}

/** The managedFields entry that ownedConditionTypes reads back as `types` (what a cache keeps of a Gateway's). */
export function ownedConditionsEntry(manager: string, types: ReadonlySet<string>): Record<string, unknown> {
  const conditions = Object.fromEntries([...types].sort().map((type) => [`k:${JSON.stringify({ type })}`, {}]));
  return { manager, operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': conditions } } };
}

// Accepted: the class's params in force.

function acceptedCondition({ className, classState }: GatewayStatusInput): Omit<Condition, 'observedGeneration'> {
  if (!classState.accepted) {
    return { type: ACCEPTED, status: 'False', reason: 'Invalid', message: `GatewayClass ${className}: params refused: ${classState.message}` };
  }
  const problems = classState.kindProblems === undefined ? '' : `; policy kinds not synced: ${classState.kindProblems.split('\n').join('; ')}`;
  return { type: ACCEPTED, status: 'True', reason: 'Accepted', message: `GatewayClass ${className}: params in force${problems}` };
}

// Programmed: where the Gateway is placed.

function programmedCondition(p: GatewayPlacement): Omit<Condition, 'observedGeneration'> {
  const unavailable = new Set(p.unavailable.map((u) => u.cluster));
  const usable = p.clusters.filter((c) => !unavailable.has(c));
  const refusedClusters = p.refused.flatMap((r) => (r.cluster === undefined ? [] : [r.cluster]));
  const missing = [...unavailable, ...refusedClusters];
  const why = [...(p.unsettled ? [p.unsettled.message] : []), ...p.unavailable.map((u) => u.message), ...p.refused.map((r) => r.message)];
  if (usable.length === 0) {
    const none = p.placement === undefined ? 'no Placement named (label cluster.open-cluster-management.io/placement)' : `Placement ${p.placement} places it on no available cluster`;
    return { type: PROGRAMMED, status: 'False', reason: 'NoResources', message: `placed on no cluster: ${[none, ...why].join('; ')}` };
  }
  const total = usable.length + missing.length;
  const placed = `placed on ${usable.length}${missing.length > 0 ? ` of ${total}` : ''} cluster${total === 1 ? '' : 's'}: ${listed(usable)}`;
  if (why.length === 0) return { type: PROGRAMMED, status: 'True', reason: 'Programmed', message: placed };
  // Decisions in flux, or a cluster down, come right by themselves; clusters the bindings refuse need someone to act.
  const transient = (p.unsettled !== undefined && p.unsettled.reason !== 'ClustersRefused') || unavailable.size > 0;
  const named = missing.length > 0 ? `; missing ${listed(missing)}` : '';
  return { type: PROGRAMMED, status: 'False', reason: transient ? 'Pending' : 'NoResources', message: `${placed}${named}: ${why.join('; ')}` };
}

// The policies on the Gateway.

interface OurPolicy extends TargetingPolicy {
  kindName: string;
  label: string;
}

/** The policies of the class's synced kinds in the Gateway's own namespace (others are not synced), sorted. */
function ourPolicies(input: GatewayStatusInput): OurPolicy[] {
  const kinds = new Map(input.kinds.map((k) => [grKey(k), k]));
  return input.policies
    .filter((p) => p.namespace === input.namespace && kinds.has(grKey(p)))
    .map((p) => {
      const kindName = kindNameOf(kinds.get(grKey(p))?.kind ?? p.kind, p.resource);
      return { ...p, kindName, label: `${kindName} ${p.namespace}/${p.name}` };
    })
    .sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

/** One `<Kind>Affected` condition per kind with policies on the Gateway; none for a kind without. */
function affectedConditions(kinds: readonly SyncedKind[], policies: readonly OurPolicy[]): Omit<Condition, 'observedGeneration'>[] {
  const names = kinds.map((k) => kindNameOf(k.kind, k.resource));
  const byKind = new Map<string, OurPolicy[]>();
  for (const p of policies) {
    const ofKind = byKind.get(grKey(p));
    if (ofKind) ofKind.push(p);
    else byKind.set(grKey(p), [p]);
  }
  const conditions = [...byKind.values()].map((ofKind) => {
    const { group, kindName } = ofKind[0]!;
    const ambiguous = names.filter((n) => n === kindName).length > 1;
    return { type: affectedConditionType(kindName, group, ambiguous), status: 'True' as const, reason: 'Affected', message: `affected by ${kindName} ${listed(ofKind.map((p) => `${p.namespace}/${p.name}`))}` };
  });
  return conditions.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}

/**
 * `policysync.kuadrant.io/<Kind>Affected`; when two synced kinds share the Kind name in different groups,
 * `policysync.kuadrant.io/<group>.<Kind>Affected` (a group too long for the CRD's 316 characters is
 * replaced by 16 hex characters of its sha256).
 */
export function affectedConditionType(kindName: string, group: string, ambiguous: boolean): string {
  const plain = `${GATEWAY_CONDITION_PREFIX}${kindName}Affected`;
  if (!ambiguous) return plain;
  const qualified = `${GATEWAY_CONDITION_PREFIX}${group}.${kindName}Affected`;
  if (group !== '' && qualified.length <= MAX_CONDITION_TYPE_LENGTH) return qualified;
  return `${GATEWAY_CONDITION_PREFIX}${sha256Hex(group).slice(0, 16)}.${kindName}Affected`;
}

/** A Kind name as a condition type may hold it (letters and digits); the resource when there is none. */
function kindNameOf(kind: string | undefined, resource: string): string {
  const clean = (kind ?? '').replace(/[^A-Za-z0-9]/g, '').slice(0, 63);
  return clean !== '' ? clean : resource.replace(/[^A-Za-z0-9]/g, '').slice(0, 63) || 'Policy';
}

/** Where one policy stands on one placed cluster of the Gateway. */
interface Standing {
  state: ClusterState;
  reason: string;
}

/**
 * The policy's verdict on `cluster`, as its status annotation says. No annotation yet, or no entry for the
 * cluster (the Gateway just placed there, or a problem keeps the policy off it): Pending. An annotation
 * truncated past its budget drops the entries of applied copies first: such a cluster counts as enforced
 * when the summary says every cluster of the policy is, and as Unknown otherwise.
 */
function standingOn(status: PolicyStandings | undefined, cluster: string): Standing {
  if (!status) return { state: 'Pending', reason: 'NotReported' };
  const entry = status.clusters?.[cluster];
  if (entry) return { state: entry.state, reason: entry.reason };
  const { summary } = status;
  if (summary.truncated) {
    const all = summary.clusters > 0 && summary.enforced + summary.overridden === summary.clusters;
    return all ? { state: 'Enforced', reason: 'Enforced' } : { state: 'Unknown', reason: 'StatusTruncated' };
  }
  return { state: 'Pending', reason: status.problems?.[0]?.reason ?? 'NotReported' };
}

/** What still runs of deleted policies that targeted the Gateway, `<Kind> namespace/name on clusters`, sorted. */
function lingeringOf(input: GatewayStatusInput): string[] {
  const kinds = new Map(input.kinds.map((k) => [grKey(k), k]));
  return (input.lingering ?? [])
    .filter((p) => p.namespace === input.namespace && p.clusters.length > 0)
    .map((p) => `${kindNameOf(kinds.get(grKey(p))?.kind ?? p.kind, p.resource)} ${p.namespace}/${p.name} on ${listed(p.clusters)}`)
    .sort();
}

/**
 * `PoliciesEnforced`: True when every policy on the Gateway is enforced on every placed cluster. A cluster
 * where local policies override a policy counts as enforced — the RFC's hierarchy, local wins, is its
 * intended state — and the message names it. No policy, or no cluster: False (nothing protects it). A copy
 * of a deleted policy still running where it targeted the Gateway (`lingering`) makes it False too, reason
 * `Lingering` (`Failed` only outranks it): what runs there is not what the hub says.
 */
function enforcedCondition(policies: readonly OurPolicy[], placement: GatewayPlacement, lingering: readonly string[]): Omit<Condition, 'observedGeneration'> {
  const type = POLICIES_ENFORCED;
  const left = lingering.length === 0 ? '' : `; copies of policies deleted from the hub still run: ${listed(lingering)}`;
  if (policies.length === 0) {
    const none = 'no policy of a kind the GatewayClass syncs targets this Gateway';
    return left === '' ? { type, status: 'False', reason: 'NoPolicies', message: none } : { type, status: 'False', reason: LINGERING, message: `${none}${left}` };
  }
  const clusters = placement.clusters;
  const count = `${policies.length} polic${policies.length === 1 ? 'y' : 'ies'}`;
  const target = policies.length === 1 ? 'targets' : 'target';
  if (clusters.length === 0) return { type, status: 'False', reason: left === '' ? 'NoClusters' : LINGERING, message: `${count} ${target} this Gateway, which is placed on no cluster${left}` };
  const notEnforced = new Map<string, string[]>();
  const overridden: string[] = [];
  const states = new Set<ClusterState>();
  for (const cluster of clusters) {
    for (const p of policies) {
      const s = standingOn(p.status, cluster);
      if (s.state === 'Overridden') overridden.push(`${p.label} on ${cluster}`);
      if (s.state === 'Enforced' || s.state === 'Overridden') continue;
      states.add(s.state);
      // The reason of a failure or a doubt says what to fix; a wait's (not reported yet, applying, …) only
      // moves, and each move would be a write.
      const reason = (s.state === 'Failed' || s.state === 'Unknown') && s.reason !== '' && s.reason !== s.state ? ` (${s.reason})` : '';
      const what = `${p.label} ${s.state}${reason}`;
      const listedHere = notEnforced.get(cluster);
      if (listedHere) listedHere.push(what);
      else notEnforced.set(cluster, [what]);
    }
  }
  const overrides = overridden.length === 0 ? '' : `; overridden by local policies, which win as the RFC intends: ${listed(overridden)}`;
  if (notEnforced.size === 0) {
    const all = `${count} enforced on every placed cluster (${clusters.length}: ${listed(clusters)})${overrides}`;
    return left === '' ? { type, status: 'True', reason: 'Enforced', message: all } : { type, status: 'False', reason: LINGERING, message: `${all}${left}` };
  }
  const reason = states.has('Failed') ? 'Failed' : left !== '' ? LINGERING : states.has('Unknown') ? 'Unknown' : 'Pending';
  const where = [...notEnforced].map(([cluster, what]) => `${cluster}: ${listed(what)}`).join('; ');
  return { type, status: 'False', reason, message: `not enforced on ${notEnforced.size} of ${clusters.length} placed cluster${clusters.length === 1 ? '' : 's'}: ${where}${overrides}${left}` };
}

// Text.

function grKey(k: { group: string; resource: string }): string {
  return `${k.resource}.${k.group}`;
}

/** Names joined, at most MAX_LISTED of them, then how many more. */
function listed(names: readonly string[]): string {
  const shown = names.slice(0, MAX_LISTED).join(', ');
  return names.length > MAX_LISTED ? `${shown} and ${names.length - MAX_LISTED} more` : shown;
}

/** A message as written: control characters replaced, at most MAX_GATEWAY_MESSAGE_LENGTH code points. */
function message(text: string): string {
  return cleanText(cutCodePoints(text, MAX_GATEWAY_MESSAGE_LENGTH));
}
