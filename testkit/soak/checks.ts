// The soak's judgement, pure: the spokes' audited writes and objects, and the hub's status annotations, held
// against the model's timeline. Each finding is a Violation; a run passes with none.
//  - deletion: a DELETE of a synced kind on a spoke (by anyone but the soak) that no model state of the
//    window before it justifies (model.ts removalReason);
//  - takeover: a write (create, update, patch, delete) by anyone but the soak to a local policy while it
//    lived; and at the end, a living local policy whose resourceVersion, owner references or
//    policy-synced annotation changed;
//  - joined: a copy created on a spoke while local policies cover its every target there, each of them shown
//    by the report the hub holds at least SLACK_MS before;
//  - crossing: a copy in a namespace other than its hub policy's, or targeting a Gateway its tenant has not;
//  - convergence: a spoke or hub status that does not match the model within the bound after faults stop;
//  - drift (issue 42): a drift edit the hub never reported `Drifted`, or that the copy still carried at the end of
//    the round's convergence wait (judgeDrift);
//  - lingering (issue 42): a copy that ran on a spoke where the model wants none for more than LINGER_BOUND_MS
//    after the round's faults stopped (checkLingering).
import type { AuditedWrite } from '../audit.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { POLICIES_SYNCED_ANNOTATION, POLICY_SYNCED_ANNOTATION, STATUS_ANNOTATION } from '../../src/core/metadatakeys.ts';
import { LINGER_GRACE_MS } from '../../src/core/spoke/spoketruth.ts';
import type { DriftRecord } from './drift.ts';
import { coveringLocals, copyId, expected, removalReason, sentCopyChanged, syncedTargets, type ModelState } from './model.ts';
import { SPOKES, policyKey, targetId, type Kind, type Spoke, type Tenant } from './ops.ts';
import { KIND_OF_RESOURCE, SOAK_USER_AGENT, markerOf, targetsOf, type SoakNames } from './world.ts';
import type { AvailabilityChange, LocalLife, SpokeObject } from './evidence.ts';

export type ViolationKind = 'deletion' | 'takeover' | 'joined' | 'crossing' | 'convergence' | 'drift' | 'lingering';

export interface Violation {
  kind: ViolationKind;
  at: string;
  message: string;
}

export interface Snapshot {
  /** ms since the epoch, when the operation (or its phase) had been written. */
  at: number;
  state: ModelState;
  /** What the operation was, for messages. */
  label: string;
}

export interface FaultSpan {
  kind: string;
  target?: string;
  start: number;
  end: number;
}

/** How far back a state may still explain a deletion: the hub may act on a state this old (failover, backlog). */
export const JUSTIFY_WINDOW_MS = 120_000;
/** How long after the hub holds a report showing a local policy a copy it covers may still be created (work agent lag). */
export const SLACK_MS = 5_000;
/** A copy wanted this long before a same-named local policy was created may still have been on its way to the spoke. */
const RACE_WINDOW_MS = 15_000;
/**
 * How long a cluster that OCM vouches for again is still in doubt: the hub's own recovery grace (30 s from the
 * Available condition's lastTransitionTime), which the model's rule 5 states. The seed-11 and seed-12 soaks
 * inferred the doubt from the registration fault's times and flagged the hub three times at that boundary; it is
 * now read from the ManagedClusters' own transitions (AvailabilityWatch), which also sees the doubt a spoke
 * apiserver restart causes (OCM marks the cluster unavailable while its apiserver is down).
 */
const AVAILABILITY_GRACE_MS = 30_000;
/** How long after OCM stops vouching for a cluster a deletion may still come from a decision made before the hub saw it. */
const DOUBT_SEEN_MS = 1_000;

export function stateAt(timeline: readonly Snapshot[], at: number): ModelState {
  let s = timeline[0]!.state;
  for (const snap of timeline) {
    if (snap.at > at) break;
    s = snap.state;
  }
  return s;
}

/** The snapshots that may have been the hub's view at `at`: the one current at `at - window`, and every later one up to `at`. */
function candidates(timeline: readonly Snapshot[], at: number, windowMs: number): Snapshot[] {
  const from = at - windowMs;
  let first = 0;
  for (let i = 0; i < timeline.length; i++) if (timeline[i]!.at <= from) first = i;
  return timeline.slice(first).filter((s) => s.at <= at);
}

/**
 * The spokes in doubt when the hub deleted at `at`: OCM did not vouch for them then (as the last change seen a
 * moment before says), or vouched again for less than the grace. Judged at the deletion, not at the state it acted
 * on: the hub reads availability from its cache when it decides, whatever the age of the other facts (seed 12
 * flagged deletions made 35 s after the agent was back, because the deselection they acted on came 28 s after it).
 */
export function unavailableAt(changes: readonly AvailabilityChange[], at: number): Set<Spoke> {
  const out = new Set<Spoke>();
  for (const spoke of SPOKES) {
    let last: AvailabilityChange | undefined;
    for (const c of changes) if (c.spoke === spoke && c.at + DOUBT_SEEN_MS <= at) last = c;
    if (!last) continue;
    if (!last.available || (last.since !== undefined && at < last.since + AVAILABILITY_GRACE_MS)) out.add(spoke);
  }
  return out;
}

export interface PolicyWrite {
  w: AuditedWrite;
  spoke: Spoke;
  kind: Kind;
  tenant: Tenant;
  at: number;
}

/** The audited writes of the synced kinds in the tenants' namespaces, by anyone but the soak itself. */
export function policyWrites(spoke: Spoke, writes: readonly AuditedWrite[], names: SoakNames): PolicyWrite[] {
  const out: PolicyWrite[] = [];
  for (const w of writes) {
    const kind = KIND_OF_RESOURCE[w.resource];
    const tenant = w.namespace === undefined ? undefined : names.tenantOf(w.namespace);
    if (!kind || !tenant || !w.name || w.userAgent.startsWith(SOAK_USER_AGENT)) continue;
    out.push({ w, spoke, kind, tenant, at: Date.parse(w.at) });
  }
  return out;
}

function describe(p: PolicyWrite): string {
  return `${p.w.at} ${p.w.verb} ${p.w.resource} ${p.w.namespace}/${p.w.name} on ${p.spoke} → ${p.w.code} by ${p.w.user} (${p.w.userAgent})`;
}

/**
 * `decidedAt`: when the hub made the decision a deletion carries out, where the hub's audit log shows it — its last
 * write of the ManifestWork that placed the copy, before the work agent's DELETE on the spoke. A spoke apiserver down
 * when the hub deleted the work gets that DELETE only once it is back, seconds later, when OCM may well doubt the
 * cluster (seed 4303): the decision is judged where it was made, as well as where it landed.
 */
export function checkDeletions(
  writes: readonly PolicyWrite[],
  timeline: readonly Snapshot[],
  availability: readonly AvailabilityChange[],
  decidedAt: (p: PolicyWrite) => number | undefined = () => undefined,
): { checked: number; violations: Violation[] } {
  const violations: Violation[] = [];
  let checked = 0;
  for (const p of writes) {
    if (p.w.verb !== 'delete' && p.w.verb !== 'deletecollection') continue;
    if (p.w.code >= 300) continue;
    checked += 1;
    const decided = decidedAt(p);
    const moments = decided !== undefined && decided < p.at ? [p.at, decided] : [p.at];
    const justified = moments.some((at) => {
      const doubt = { unavailable: unavailableAt(availability, at) };
      return candidates(timeline, at, JUSTIFY_WINDOW_MS).some((snap) => removalReason(snap.state, doubt, p.spoke, p.kind, p.tenant, p.w.name!) !== undefined);
    });
    if (!justified) {
      violations.push({ kind: 'deletion', at: p.w.at, message: `unjustified: ${describe(p)}; no model state of the ${JUSTIFY_WINDOW_MS / 1000} s before makes the copy unwanted there` });
    }
  }
  return { checked, violations };
}

/**
 * Writes by anyone but the soak to a local policy while it lived. One whose copy the model wanted on that spoke
 * within RACE_WINDOW_MS before the local policy was created, written before the report showed the local policy, is a race the hub could not see (the copy was on its
 * way as the team took the name): counted apart, not a violation.
 */
export function checkTakeovers(writes: readonly PolicyWrite[], lives: readonly LocalLife[], timeline: readonly Snapshot[]): { violations: Violation[]; races: string[] } {
  const violations: Violation[] = [];
  const races: string[] = [];
  for (const life of lives) {
    const l = life.local;
    const touched = writes.filter((p) => p.spoke === l.spoke && p.kind === l.kind && p.tenant === l.tenant && p.w.name === l.name && p.at >= life.createdAt && (life.deletedAt === undefined || p.at < life.deletedAt));
    if (touched.length === 0) continue;
    const id = copyId(l.spoke, l.kind, l.tenant, l.name);
    const wanted = candidates(timeline, life.createdAt, RACE_WINDOW_MS).some((s) => expected(s.state).copies.has(id));
    const what = `${touched.map(describe).join('; ')} — local policy ${l.kind} ${l.tenant}/${l.name} on ${l.spoke}, created ${new Date(life.createdAt).toISOString()}${life.reportedAt ? `, reported ${new Date(life.reportedAt).toISOString()}` : ', never reported'}`;
    if (wanted && (life.reportedAt === undefined || touched.every((p) => p.at < life.reportedAt! + SLACK_MS))) races.push(what);
    else violations.push({ kind: 'takeover', at: touched[0]!.w.at, message: `written by someone else: ${what}` });
  }
  return { violations, races };
}

/** At the end: a living local policy must be the object the soak created, untouched. */
export function checkLocalsIntact(lives: readonly LocalLife[], now: readonly SpokeObject[], names: SoakNames): Violation[] {
  const violations: Violation[] = [];
  for (const life of lives) {
    if (life.deletedAt !== undefined) continue;
    const l = life.local;
    const found = now.find((o) => o.spoke === l.spoke && o.kind === l.kind && o.object.metadata.namespace === names.namespace(l.tenant) && o.object.metadata.name === l.name);
    const problems: string[] = [];
    if (!found) problems.push('gone');
    else {
      const m = found.object.metadata;
      if (m.uid !== life.uid) problems.push(`uid ${m.uid} (was ${life.uid})`);
      if (m.resourceVersion !== life.resourceVersion) problems.push(`resourceVersion ${m.resourceVersion} (was ${life.resourceVersion})`);
      if ((m.ownerReferences ?? []).length > 0) problems.push(`owner references ${JSON.stringify(m.ownerReferences)}`);
      if (m.annotations?.[POLICY_SYNCED_ANNOTATION] !== undefined) problems.push(`marked a copy of ${m.annotations[POLICY_SYNCED_ANNOTATION]}`);
    }
    if (problems.length > 0) violations.push({ kind: 'takeover', at: new Date().toISOString(), message: `local policy ${l.kind} ${l.tenant}/${l.name} on ${l.spoke}: ${problems.join(', ')}` });
  }
  return violations;
}

/**
 * Copies created (201) on a spoke while local policies covered their every target there, each shown by the
 * report the hub holds SLACK_MS before, in the states both then and SLACK_MS before. `decidedAt`: the hub's last
 * write that placed the copy's work before the create (its audit log) — a work agent that takes a work up late
 * (seed 4401: 76 s, its spoke's peer frozen) lands a copy the hub placed before any report showed the local
 * policies, so the create is judged where the hub decided too, and is a join only if they covered it there as well.
 */
export function checkJoins(
  writes: readonly PolicyWrite[],
  lives: readonly LocalLife[],
  timeline: readonly Snapshot[],
  decidedAt: (p: PolicyWrite) => number | undefined = () => undefined,
): Violation[] {
  const violations: Violation[] = [];
  for (const p of writes) {
    if (p.w.code !== 201) continue;
    const name = p.w.name!;
    const coveredAt = (at: number): boolean =>
      [stateAt(timeline, at), stateAt(timeline, at - SLACK_MS)].every((s) => {
        const policy = s.policies[policyKey(p.kind, p.tenant, name)];
        if (!policy) return false;
        const targets = syncedTargets(s, policy);
        if (targets.length === 0) return false;
        return targets.every((t) =>
          coveringLocals(s, p.spoke, p.kind, p.tenant, t).some((key) => {
            const localName = key.slice(key.indexOf('/') + 1);
            const life = lives.find((x) => x.local.spoke === p.spoke && x.local.kind === p.kind && x.local.tenant === p.tenant && x.local.name === localName && x.createdAt <= at && (x.deletedAt === undefined || x.deletedAt > at));
            return life?.reportedAt !== undefined && life.reportedAt <= at - SLACK_MS;
          }),
        );
      });
    const decided = decidedAt(p);
    const moments = decided !== undefined && decided < p.at ? [p.at, decided] : [p.at];
    if (moments.every(coveredAt)) {
      const where = moments.length > 1 ? ` (the hub placed its work at ${new Date(decided!).toISOString()})` : '';
      violations.push({ kind: 'joined', at: p.w.at, message: `a copy joined local policies that cover its every target, reported more than ${SLACK_MS / 1000} s before: ${describe(p)}${where}` });
    }
  }
  return violations;
}

/** Copies whose namespace or targets cross into another tenant's lane. */
export function checkCrossings(objects: readonly SpokeObject[]): Violation[] {
  const violations: Violation[] = [];
  for (const o of objects) {
    const source = o.object.metadata.annotations?.[POLICY_SYNCED_ANNOTATION];
    if (source === undefined) continue;
    const ns = o.object.metadata.namespace ?? '';
    const [sourceNs] = source.split('/');
    const foreign = targetsOf(o.object).filter((t) => t.namespace !== undefined && t.namespace !== ns);
    if (sourceNs !== ns || foreign.length > 0) {
      violations.push({ kind: 'crossing', at: new Date().toISOString(), message: `${o.kind} ${ns}/${o.object.metadata.name} on ${o.spoke} copies ${source}${foreign.length ? `, targets ${JSON.stringify(foreign)}` : ''}` });
    }
  }
  return violations;
}

/** Where the spokes differ from the model's expected copies (empty: converged). */
export function spokeDiffs(state: ModelState, objects: readonly SpokeObject[], names: SoakNames): string[] {
  const want = expected(state).copies;
  const diffs: string[] = [];
  const seen = new Set<string>();
  for (const o of objects) {
    const source = o.object.metadata.annotations?.[POLICY_SYNCED_ANNOTATION];
    const tenant = names.tenantOf(o.object.metadata.namespace ?? '');
    if (!tenant) continue;
    const name = o.object.metadata.name;
    if (source === undefined) {
      if (!state.locals[`${o.spoke}/${o.kind}/${tenant}/${name}`]) diffs.push(`${o.spoke}: unexpected local ${o.kind} ${tenant}/${name}`);
      continue;
    }
    const id = copyId(o.spoke, o.kind, tenant, name);
    seen.add(id);
    const w = want.get(id);
    if (!w) {
      diffs.push(`${id}: runs, not expected`);
      continue;
    }
    if (source !== `${names.namespace(tenant)}/${name}`) diffs.push(`${id}: policy-synced ${source}`);
    const marker = markerOf(o.kind, o.object);
    if (marker !== w.marker) diffs.push(`${id}: marker ${marker}, expected ${w.marker}`);
    const targets = targetsOf(o.object).map((t) => targetId({ gateway: t.gateway as 'gw1', ...(t.sectionName ? { sectionName: t.sectionName } : {}) })).join(',');
    const wantTargets = w.targets.map(targetId).join(',');
    if (targets !== wantTargets) diffs.push(`${id}: targets [${targets}], expected [${wantTargets}]`);
    const labels = o.object.metadata.labels ?? {};
    for (const [k, v] of Object.entries(w.labels)) if (labels[k] !== v) diffs.push(`${id}: label ${k}=${labels[k]}, expected ${v}`);
  }
  for (const id of want.keys()) if (!seen.has(id)) diffs.push(`${id}: expected, absent`);
  for (const l of Object.values(state.locals)) {
    const found = objects.some((o) => o.spoke === l.spoke && o.kind === l.kind && o.object.metadata.namespace === names.namespace(l.tenant) && o.object.metadata.name === l.name && o.object.metadata.annotations?.[POLICY_SYNCED_ANNOTATION] === undefined);
    if (!found) diffs.push(`${l.spoke}: local ${l.kind} ${l.tenant}/${l.name} missing or marked a copy`);
  }
  return diffs;
}

interface StatusEntry {
  state?: string;
  reason?: string;
}

/** Where the hub policies' annotations disagree with the model (which clusters run a copy; Overridden and Conflicted clusters). */
export function hubDiffs(state: ModelState, policies: readonly { kind: Kind; object: KubeObject }[], names: SoakNames): string[] {
  const want = expected(state);
  const diffs: string[] = [];
  for (const { kind, object } of policies) {
    const tenant = names.tenantOf(object.metadata.namespace ?? '');
    if (!tenant) continue;
    const name = object.metadata.name;
    if (!state.policies[policyKey(kind, tenant, name)]) {
      diffs.push(`hub ${kind} ${tenant}/${name}: exists, the model has none`);
      continue;
    }
    const annotations = object.metadata.annotations ?? {};
    const synced = ((JSON.parse(annotations[POLICIES_SYNCED_ANNOTATION] ?? '[]') as { cluster: string }[]).map((e) => e.cluster)).sort().join(',');
    const wantSynced = SPOKES.filter((s) => want.copies.has(copyId(s, kind, tenant, name))).join(',');
    if (synced !== wantSynced) diffs.push(`hub ${kind} ${tenant}/${name}: policies-synced [${synced}], expected [${wantSynced}]`);
    const clusters = (JSON.parse(annotations[STATUS_ANNOTATION] ?? '{}') as { clusters?: Record<string, StatusEntry> }).clusters ?? {};
    for (const spoke of SPOKES) {
      const w = want.withheld.get(copyId(spoke, kind, tenant, name));
      const got = clusters[spoke];
      if (w?.reason === 'overridden' && got?.state !== 'Overridden') diffs.push(`hub ${kind} ${tenant}/${name}: ${spoke} is ${got?.state ?? 'absent'}/${got?.reason ?? ''}, expected Overridden`);
      if (w?.reason === 'name-held' && !(got?.state === 'Failed' && got.reason === 'Conflicted')) diffs.push(`hub ${kind} ${tenant}/${name}: ${spoke} is ${got?.state ?? 'absent'}/${got?.reason ?? ''}, expected Failed/Conflicted`);
    }
  }
  return diffs;
}

/**
 * How long after a round's faults stop a copy may still run on a spoke where the model wants none: the hub says a
 * copy reported where no work places it `Lingering` after LINGER_GRACE_MS (30 s) and only then hands it back to OCM's
 * work agent (src/hub/lingeringmender.ts), which deletes it within a second of the mending work; before that grace
 * may come the longest hold a fault leaves behind — the hub's 30 s recovery grace after a cluster is Available again
 * (a removal held for doubt), or a leader failover (a 15 s lease), whose new leader starts the linger clocks again;
 * and after it the report's travel (the work agent's 1 s status sync), the Lingering status write and the mend, a few
 * seconds, given a minute here for a loaded machine. A mend the agent does not take up costs MEND_TIMEOUT_MS twice
 * more (the next try waits as long): past this bound, and reported.
 */
export const LINGER_BOUND_MS = LINGER_GRACE_MS + 30_000 + 60_000;

export interface DriftJudgement {
  record: DriftRecord;
  reported: boolean;
  putBack: boolean;
  /** Why a drift the hub never reported needed no report (the hub's own change, or another hand, took the edit away first). */
  excused?: string;
  violations: Violation[];
}

/**
 * One drift edit, at the end of its round's convergence wait (`endAt`), against the model's timeline. It passes when
 * the hub reported it `Drifted` and the copy no longer carries it (put back). A report is owed unless the edit went
 * before the hub could have seen it: the hub's own change of that copy overwrote it (the model's copy changed after
 * the edit, or the copy came back with other content than before it), or the copy went, or it was put back while the
 * copy's work kept its reapply label (not the hub's put-back: the work agent's own resync). A drift put back by the
 * hub — its work relabelled — with no report is a violation: the put-back was decided from the drift, and nothing
 * said so.
 */
export function judgeDrift(d: DriftRecord, timeline: readonly Snapshot[], endAt: number): DriftJudgement {
  const id = copyId(d.spoke, d.kind, d.tenant, d.name);
  const what = `drift ${d.drift} of ${d.kind} ${d.tenant}/${d.name} on ${d.spoke} (round ${d.round}, edited ${new Date(d.editedAt).toISOString()})`;
  const violations: Violation[] = [];
  const putBack = d.putBackAt !== undefined;
  const settled = d.putBackAt ?? d.goneAt;
  if (settled === undefined) {
    violations.push({ kind: 'drift', at: new Date(endAt).toISOString(), message: `${what}: still carries the edit ${((endAt - d.editedAt) / 1000).toFixed(1)} s later, at the end of the round's convergence wait: not put back` });
  }
  const reported = d.reportedAt !== undefined;
  let excused: string | undefined;
  if (!reported) {
    const atEdit = stateAt(timeline, d.editedAt);
    const modelChanged = timeline.some((snap) => snap.at > d.editedAt && snap.at <= endAt && sentCopyChanged(atEdit, snap.state, id));
    const cameBackOther = d.sentAfter !== undefined && d.sentAfter !== d.sentBefore;
    const relabelled = d.tokenAfter !== undefined && d.tokenAfter !== d.tokenBefore;
    if (relabelled) violations.push({ kind: 'drift', at: new Date(endAt).toISOString(), message: `${what}: put back by the hub (its work's reapply label ${d.tokenBefore ?? 'absent'} → ${d.tokenAfter}) but never reported Drifted (no status write seen, no Drifted Event)` });
    else if (modelChanged || cameBackOther) excused = "overwritten by the hub's own change of the copy";
    else if (settled !== undefined && !putBack) excused = 'the copy went before the hub saw the edit';
    else if (putBack) excused = 'put back before the hub saw it, not by the hub (its work kept its reapply label)';
    else violations.push({ kind: 'drift', at: new Date(endAt).toISOString(), message: `${what}: never reported Drifted on the hub (no status write seen, no Drifted Event)` });
  }
  return { record: d, reported, putBack, ...(excused ? { excused } : {}), violations };
}

/** A copy that runs on a spoke where the model wants none. */
export interface UnwantedCopy {
  id: string;
  spoke: Spoke;
  kind: Kind;
  tenant: Tenant;
  name: string;
}

/** The synced copies (their policy-synced annotation) on the spokes that the model does not expect. */
export function unwantedCopies(state: ModelState, objects: readonly SpokeObject[], names: SoakNames): UnwantedCopy[] {
  const want = expected(state).copies;
  const out: UnwantedCopy[] = [];
  for (const o of objects) {
    if (o.object.metadata.annotations?.[POLICY_SYNCED_ANNOTATION] === undefined) continue;
    const tenant = names.tenantOf(o.object.metadata.namespace ?? '');
    if (!tenant) continue;
    const id = copyId(o.spoke, o.kind, tenant, o.object.metadata.name);
    if (!want.has(id)) out.push({ id, spoke: o.spoke, kind: o.kind, tenant, name: o.object.metadata.name });
  }
  return out;
}

/** An unwanted copy as the round's convergence polls saw it: first and last seen, and whether the last poll still did. */
export interface UnwantedSighting extends UnwantedCopy {
  firstSeen: number;
  lastSeen: number;
  present: boolean;
}

/** Updates `sightings` with one poll at `at` that found `unwanted` running. */
export function sightUnwanted(sightings: Map<string, UnwantedSighting>, at: number, unwanted: readonly UnwantedCopy[]): void {
  const now = new Set(unwanted.map((u) => u.id));
  for (const s of sightings.values()) if (!now.has(s.id)) s.present = false;
  for (const u of unwanted) {
    const s = sightings.get(u.id);
    if (s) {
      s.lastSeen = at;
      s.present = true;
    } else sightings.set(u.id, { ...u, firstSeen: at, lastSeen: at, present: true });
  }
}

/** How long an unwanted copy ran after the faults stopped (at least: to its last sighting, or to `endAt` if still there). */
export interface LingerFigure extends UnwantedCopy {
  round: number;
  ranMs: number;
  stillRunning: boolean;
}

/**
 * The lingering bound: each copy seen running where the model wants none after the round's faults stopped
 * (`stoppedAt`, when its convergence wait began) until `endAt` (when it ended), and how long; a violation for each
 * that ran longer than `boundMs`.
 */
export function checkLingering(sightings: readonly UnwantedSighting[], round: number, stoppedAt: number, endAt: number, boundMs: number = LINGER_BOUND_MS): { figures: LingerFigure[]; violations: Violation[] } {
  const figures: LingerFigure[] = [];
  const violations: Violation[] = [];
  for (const s of sightings) {
    const ranMs = (s.present ? endAt : s.lastSeen) - stoppedAt;
    figures.push({ id: s.id, spoke: s.spoke, kind: s.kind, tenant: s.tenant, name: s.name, round, ranMs, stillRunning: s.present });
    if (ranMs > boundMs) {
      violations.push({
        kind: 'lingering',
        at: new Date(s.present ? endAt : s.lastSeen).toISOString(),
        message: `round ${round}: copy ${s.kind} ${s.tenant}/${s.name} ran on ${s.spoke} ${(ranMs / 1000).toFixed(1)} s after the faults stopped, where the model wants none (bound ${boundMs / 1000} s)${s.present ? '; still running' : ''}`,
      });
    }
  }
  return { figures, violations };
}
