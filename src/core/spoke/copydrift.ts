// Whether a synced copy on a spoke is what the hub sent, as its spoke agent reads it (docs/design/tenancy.md#what-runs-on-a-spoke):
// the copy carries the digest of what was sent (core/works/copydigest.ts); the agent hashes the copy as it is, part by
// part, and where a part differs names the fields and the field managers other than OCM's work agent that own them
// (metadata.managedFields), and since when.
//
// What counts as sent, and so as drift when it differs:
// - the spec, whole: a field another hand adds is drift (OCM's Update apply writes the spec whole, and takes it out);
// - of the labels and annotations, those the work agent owns: the ones it wrote. One another hand adds is not what
//   the hub sent, and not drift; one the hub sent that another hand changes leaves the work agent's set and so
//   changes the hash: drift, named with its new owner.
// Without managedFields (an apiserver that does not keep them) every label and annotation counts. A copy without a
// digest (written by an older hub) says nothing: unknown, not "as sent". Pure.
import { canonicalJson } from '../k8s/canonical.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { digestedAnnotations, partHash, readCopyDigest } from '../works/copydigest.ts';
import { readDroppedKeys } from '../works/droppedkeys.ts';
import { REPORT_CAPS, compare, type CopyDrift } from './spokereport.ts';

/** OCM's work agent writes as `work-agent` (its user agent, Update) or as a manager of ours starting so (ServerSideApply). */
export function isWorkAgentManager(manager: string): boolean {
  return manager.startsWith('work-agent');
}

/** Managers whose writes to a copy are the sync's own: the spoke agent's removal of keys the hub dropped. */
const SYNC_MANAGERS: ReadonlySet<string> = new Set(['policy-sync-spoke']);

/** One managedFields entry, as far as drift reads it. */
interface FieldsEntry {
  manager: string;
  operation?: string;
  time?: string;
  subresource?: string;
  fieldsV1?: unknown;
}

/** The copy is owned by an AppliedManifestWork: OCM's work agent applied it and still holds it. */
export function ownedByAppliedWork(object: KubeObject): boolean {
  return (object.metadata.ownerReferences ?? []).some((r) => {
    const { kind, apiVersion } = (r ?? {}) as { kind?: unknown; apiVersion?: unknown };
    return kind === 'AppliedManifestWork' && typeof apiVersion === 'string' && apiVersion.startsWith('work.open-cluster-management.io/');
  });
}

/** How the copy differs from what the hub sent; undefined when it does not, or when that cannot be known. */
export function copyDriftOf(object: KubeObject): CopyDrift | undefined {
  const digest = readCopyDigest(object);
  if (!digest) return undefined;
  const entries = managedEntries(object);
  const agentPaths = new Set<string>();
  for (const e of entries) if (isWorkAgentManager(e.manager)) for (const p of leafPaths(e.fieldsV1)) agentPaths.add(p);
  const known = entries.length > 0;
  // Keys the hub dropped stay on the copy until the spoke agent removes them (core/works/droppedkeys.ts): not sent.
  const dropped = readDroppedKeys(object);
  const sentKeys = (kind: 'labels' | 'annotations', values: Readonly<Record<string, string>>): Record<string, string> =>
    Object.fromEntries(Object.entries(values).filter(([key]) => !dropped[kind].includes(key) && (!known || agentPaths.has(`metadata.${kind}.${key}`))));

  const differing: string[] = [];
  const spec = (object as { spec?: unknown }).spec;
  const live = spec !== null && typeof spec === 'object' && !Array.isArray(spec) ? (spec as Record<string, unknown>) : {};
  for (const key of [...new Set([...Object.keys(digest.spec), ...Object.keys(live)])].sort(compare)) {
    const sent = digest.spec[key];
    if (sent === undefined || !Object.hasOwn(live, key) || partHash(live[key]) !== sent) differing.push(`spec.${key}`);
  }
  if (partHash(sentKeys('labels', object.metadata.labels ?? {})) !== digest.labels) differing.push('metadata.labels');
  if (partHash(sentKeys('annotations', digestedAnnotations(object.metadata.annotations))) !== digest.annotations) differing.push('metadata.annotations');
  if (differing.length === 0) return undefined;

  // The fields other managers own inside the parts that differ name the drift more closely than the parts do.
  const foreign = entries.filter((e) => !isWorkAgentManager(e.manager) && !SYNC_MANAGERS.has(e.manager) && e.subresource === undefined);
  const owners = new Map<string, FieldsEntry>();
  const fields = new Set<string>();
  for (const part of differing) {
    let named = false;
    for (const e of foreign) {
      for (const path of leafPaths(e.fieldsV1)) {
        if (path !== part && !path.startsWith(`${part}.`) && !path.startsWith(`${part}[`)) continue;
        fields.add(path);
        owners.set(e.manager, e);
        named = true;
      }
    }
    if (!named) fields.add(part);
  }
  const sorted = [...fields].map(printable).sort(compare);
  const managers = [...owners.values()]
    .sort((a, b) => compare(a.manager, b.manager))
    .slice(0, REPORT_CAPS.driftManagers)
    .map((e) => ({ manager: printable(e.manager), ...(e.operation === 'Apply' || e.operation === 'Update' ? { operation: e.operation } : {}), ...(e.time ? { time: e.time } : {}) }));
  const times = managers.flatMap((m) => (m.time ? [m.time] : [])).sort(compare);
  const drift: CopyDrift = { fields: [...new Set(sorted)].slice(0, REPORT_CAPS.driftFields), managers };
  const more = new Set(sorted).size - drift.fields.length;
  if (more > 0) drift.more = more;
  if (times[0] !== undefined) drift.since = times[0];
  return drift;
}

/** The managedFields entries of an object that are readable (a manager name, fieldsV1 an object). */
function managedEntries(object: KubeObject): FieldsEntry[] {
  const raw = (object.metadata as { managedFields?: unknown }).managedFields;
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((e): FieldsEntry[] => {
    if (e === null || typeof e !== 'object') return [];
    const { manager, operation, time, subresource, fieldsV1 } = e as Record<string, unknown>;
    if (typeof manager !== 'string') return [];
    return [{ manager, ...(typeof operation === 'string' ? { operation } : {}), ...(typeof time === 'string' ? { time } : {}), ...(typeof subresource === 'string' && subresource !== '' ? { subresource } : {}), fieldsV1 }];
  });
}

/**
 * The leaf paths of a fieldsV1 set (`f:spec` → `spec`, `k:{"name":"a"}` → `[name=a]`, `v:"x"` → `[x]`, `i:0` →
 * `[0]`), each as a dotted path. A member `.` (the object itself) makes its parent a leaf too.
 */
export function leafPaths(fields: unknown, prefix = ''): string[] {
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) return [];
  const out: string[] = [];
  const members = Object.entries(fields as Record<string, unknown>);
  if (members.length === 0 && prefix !== '') return [prefix];
  for (const [member, value] of members) {
    if (member === '.') {
      if (prefix !== '') out.push(prefix);
      continue;
    }
    const step = pathStep(member);
    if (step === undefined) continue;
    out.push(...leafPaths(value, step.startsWith('[') ? `${prefix}${step}` : prefix === '' ? step : `${prefix}.${step}`));
  }
  return out;
}

function pathStep(member: string): string | undefined {
  const tag = member.slice(0, 2);
  const rest = member.slice(2);
  switch (tag) {
    case 'f:':
      return rest;
    case 'i:':
      return `[${rest}]`;
    case 'v:': {
      // A set member is its value as JSON: a string is named bare, as in a `k:` key.
      try {
        const value: unknown = JSON.parse(rest);
        return `[${typeof value === 'string' ? value : canonicalJson(value)}]`;
      } catch {
        return `[${rest}]`;
      }
    }
    case 'k:': {
      try {
        const key = JSON.parse(rest) as Record<string, unknown>;
        return `[${Object.entries(key).map(([k, v]) => `${k}=${typeof v === 'string' ? v : canonicalJson(v)}`).join(',')}]`;
      } catch {
        return `[${rest}]`;
      }
    }
    default:
      return undefined;
  }
}

/**
 * Printable ASCII, cut to the report's length for a path or a name (the spoke's text goes to the hub's status); never
 * empty (the apiserver allows a field manager named '', the report's schema does not: the kind would be left out).
 */
function printable(text: string): string {
  const ascii = text === '' ? '?' : text.replace(/[^\x20-\x7e]/g, '?');
  return ascii.length <= REPORT_CAPS.driftText ? ascii : `${ascii.slice(0, REPORT_CAPS.driftText - 1)}~`;
}
