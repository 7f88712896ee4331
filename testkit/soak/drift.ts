// The soak's drift edits (issue 42; ops.ts copy-drift) as data, and the pure readings of what was seen of them: the
// record the runner keeps of each edit, what a copy runs (its fingerprint), and the two witnesses of the hub saying
// `Drifted` for an edit — a status annotation write the runner's watch saw, and an Event the hub recorded after one.
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { DRIFT_FIELD_MANAGER, policyKey, type Kind, type Spoke, type Tenant } from './ops.ts';
import { API_KIND, markerOf, targetsOf, type SoakNames } from './world.ts';

/** A drift edit as the runner made it (ops.ts copy-drift) and what was seen of it afterwards (evidence.ts). */
export interface DriftRecord {
  /** Its operation's number. */
  drift: number;
  round: number;
  spoke: Spoke;
  kind: Kind;
  tenant: Tenant;
  name: string;
  /** When the patch that landed was sent (ms since the epoch). */
  editedAt: number;
  /** The copy's uid when edited. */
  uid: string;
  /** What the hub sent, as the copy ran just before the edit (copyFingerprint: marker, targets, labels). */
  sentBefore: string;
  /** The copy's work's reapply label (REAPPLY_LABEL) just before the edit, and at the end of the round; undefined: none. */
  tokenBefore?: string;
  tokenAfter?: string;
  /**
   * The first witness of the hub saying `Drifted` for this edit (its manager, at or after the edit's second): a status
   * annotation write seen by the watch of the hub policies, else a `Drifted` Event the hub recorded after such a write.
   */
  reportedAt?: number;
  reportedBy?: 'status' | 'event';
  /** When the copy was first seen without the edit's value, and what it then ran (copyFingerprint). */
  putBackAt?: number;
  sentAfter?: string;
  /** When the copy was seen gone (or another object in its name) while it still carried the edit. */
  goneAt?: number;
}

/** What the hub sent, as a copy runs it: its marker, targets and labels (the parts the model says). */
export function copyFingerprint(kind: Kind, object: KubeObject): string {
  const labels = Object.entries(object.metadata.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([markerOf(kind, object) ?? null, targetsOf(object), labels]);
}

/** The hub saying, in a policy's status annotation, that a cluster's copy is not what it sent or runs where no work places it. */
export interface TruthSighting {
  /** ms since the epoch, when the watch delivered the write. */
  at: number;
  /** policyKey of the hub policy. */
  policy: string;
  cluster: string;
  reason: 'Drifted' | 'Lingering' | 'Removing';
  /** Drifted: the field managers the status names, with their write times (the spoke apiserver's clock). */
  managers?: { manager: string; time?: string }[];
}

/** The second a drift edit landed in, as the spoke apiserver dates a field manager's write (RFC 3339, whole seconds), less one for rounding. */
function editSecond(d: DriftRecord): number {
  return Math.floor(d.editedAt / 1000) * 1000 - 1000;
}

/** The first status write seen that says `Drifted` for this edit: its cluster, its manager, written at or after the edit. */
export function driftStatusWitness(d: DriftRecord, sightings: readonly TruthSighting[]): number | undefined {
  const policy = policyKey(d.kind, d.tenant, d.name);
  for (const s of sightings) {
    if (s.policy !== policy || s.cluster !== d.spoke || s.reason !== 'Drifted' || s.at < d.editedAt) continue;
    const ours = (s.managers ?? []).find((m) => m.manager === DRIFT_FIELD_MANAGER);
    if (!ours) continue;
    const time = ours.time === undefined ? undefined : Date.parse(ours.time);
    if (time !== undefined && !Number.isNaN(time) && time < editSecond(d)) continue;
    return s.at;
  }
  return undefined;
}

/**
 * The first `Drifted` Event the hub recorded on the policy for this edit (the transitions of a status write it made:
 * core/status/transitions.ts), by its message: `cluster <spoke>: Drifted: … changed by soak-drift (Update, <time>)`.
 */
export function driftEventWitness(d: DriftRecord, events: readonly KubeObject[], names: SoakNames): number | undefined {
  const pattern = new RegExp(`${DRIFT_FIELD_MANAGER} \\((?:[^,)]*, )?([^)]+)\\)`);
  let first: number | undefined;
  for (const e of events) {
    const ev = e as KubeObject & { reason?: string; message?: string; firstTimestamp?: string; involvedObject?: { kind?: string; namespace?: string; name?: string } };
    if (ev.reason !== 'Drifted' || ev.involvedObject?.kind !== API_KIND[d.kind] || ev.involvedObject.namespace !== names.namespace(d.tenant) || ev.involvedObject.name !== d.name) continue;
    const message = ev.message ?? '';
    if (!message.startsWith(`cluster ${d.spoke}: `)) continue;
    const time = Date.parse(pattern.exec(message)?.[1] ?? '');
    if (Number.isNaN(time) || time < editSecond(d)) continue;
    const at = Date.parse(ev.firstTimestamp ?? '');
    if (!Number.isNaN(at) && (first === undefined || at < first)) first = at;
  }
  return first;
}

