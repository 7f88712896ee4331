// What the hub asks of a spoke agent's report (the model: spokereport.ts): the local policies that count for
// coverage in a namespace, who holds a name, the copies it lists (and what of them drifted), and which
// (kind, namespace) scopes changed between two reports. A kind the report does not cover answers "unknown",
// never "free" or "none". Pure.
import { canonicalJson } from '../k8s/canonical.ts';
import type { LocalPolicy } from './conflicts.ts';
import { decodeHashedNames, type HashedNames } from './hashednames.ts';
import { WHOLE_KIND, compare, copyTarget, type CondensedNamespace, type Occupant, type ReportScope, type ReportedCopy, type ReportedObject, type SpokeReport } from './spokereport.ts';

/** How many objects a report speaks of, listed and hashed (the agent logs it). */
export function reportedCount(report: SpokeReport): number {
  let count = 0;
  for (const [kind, namespaces] of Object.entries(report.objects)) {
    for (const [namespace, listed] of Object.entries(namespaces)) {
      const condensed = condensedIn(report, kind, namespace);
      count += listed.length + (condensed ? condensed.names.count : 0);
    }
  }
  return count;
}

/**
 * The local policies of one kind in one namespace that count for coverage: not rejected by their own
 * controller, with a Gateway target. In a condensed namespace, the named ones: those past the first few of
 * a target set cover the same targets, so coverage is the same. Undefined when the report does not cover
 * the kind (unknown: nothing may be concluded from it).
 */
export function localPoliciesIn(report: SpokeReport, kind: string, namespace: string): LocalPolicy[] | undefined {
  const namespaces = kindIn(report, kind);
  if (!namespaces) return undefined;
  const entries = Object.hasOwn(namespaces, namespace) ? namespaces[namespace]! : [];
  return entries.flatMap((e) => ('targets' in e && !e.rejected && e.targets.length > 0 ? [{ key: `${namespace}/${e.name}`, targets: e.targets.map(copyTarget) }] : []));
}

/**
 * Who holds the name `namespace/name` of the kind on the spoke ('unknown' when the report does not cover
 * the kind, or predates occupancy). Never 'free' for a name the spoke holds: in a condensed namespace, a
 * name in the hashed set is held by a local object ('local', hashed) — or, about once in a million, by
 * nothing, which is only doubt.
 */
export function occupantOf(report: SpokeReport, kind: string, namespace: string, name: string): Occupant {
  const namespaces = kindIn(report, kind);
  if (!namespaces || report.version < 2) return { state: 'unknown' };
  const entry = Object.hasOwn(namespaces, namespace) ? findByName(namespaces[namespace]!, name) : undefined;
  if (entry) return 'synced' in entry ? { state: 'synced', source: entry.synced } : { state: 'local' };
  const condensed = condensedIn(report, kind, namespace);
  if (condensed && hashedNamesOf(condensed).has(name)) return { state: 'local', hashed: true };
  return { state: 'free' };
}

/** The covering local policies a condensed namespace counts past those it names, by target set; [] elsewhere. */
export function unnamedLocalsIn(report: SpokeReport, kind: string, namespace: string): CondensedNamespace['unnamed'] {
  return condensedIn(report, kind, namespace)?.unnamed ?? [];
}

/**
 * The (kind, namespace) pairs whose content differs between two reports (either absent: nothing known). A
 * kind that comes or goes, or whose format changes what can be known of it (version 1 to 2), changes
 * as a whole: every namespace of it in either report, and WHOLE_KIND for those in neither (there, names
 * went from free to unknown or back). Sorted, WHOLE_KIND first within a kind.
 */
export function changedScopes(before: SpokeReport | undefined, after: SpokeReport | undefined): ReportScope[] {
  const scopes: ReportScope[] = [];
  const kinds = new Set([...Object.keys(before?.objects ?? {}), ...Object.keys(after?.objects ?? {})]);
  for (const kind of [...kinds].sort(compare)) {
    const b = before && kindIn(before, kind);
    const a = after && kindIn(after, kind);
    const namespaces = [...new Set([...Object.keys(b ?? {}), ...Object.keys(a ?? {})])].sort(compare);
    // Versions 2 and 3 know the same things: only version 1 differs in what can be known.
    if (!a || !b || (before.version === 1) !== (after.version === 1)) {
      scopes.push({ kind, namespace: WHOLE_KIND }, ...namespaces.map((namespace) => ({ kind, namespace })));
      continue;
    }
    // A heartbeat's report shares the previous one's objects (parseSpokeReport): nothing to compare.
    if (a === b && condensedOf(before, kind) === condensedOf(after, kind)) continue;
    for (const namespace of namespaces) {
      if (namespaceContent(before, kind, namespace) !== namespaceContent(after, kind, namespace)) scopes.push({ kind, namespace });
    }
  }
  return scopes;
}

function namespaceContent(report: SpokeReport, kind: string, namespace: string): string {
  const namespaces = kindIn(report, kind)!;
  const listed = Object.hasOwn(namespaces, namespace) ? namespaces[namespace]! : [];
  return canonicalJson([listed, condensedIn(report, kind, namespace) ?? null]);
}

function kindIn(report: SpokeReport, kind: string): Record<string, ReportedObject[]> | undefined {
  return Object.hasOwn(report.objects, kind) ? report.objects[kind] : undefined;
}

function condensedOf(report: SpokeReport, kind: string): Record<string, CondensedNamespace> | undefined {
  return report.condensed && Object.hasOwn(report.condensed, kind) ? report.condensed[kind] : undefined;
}

export function condensedIn(report: SpokeReport, kind: string, namespace: string): CondensedNamespace | undefined {
  const namespaces = condensedOf(report, kind);
  return namespaces && Object.hasOwn(namespaces, namespace) ? namespaces[namespace] : undefined;
}

/** Decoded hashed sets, by the condensed namespace that holds them (decoded once, when first asked or parsed). */
const decodedNames = new WeakMap<CondensedNamespace, HashedNames>();

/** The parser's decoding of a condensed namespace's hashed set, kept for hashedNamesOf. */
export function rememberDecoded(condensed: CondensedNamespace, names: HashedNames): void {
  decodedNames.set(condensed, names);
}

/** The condensed namespace's hashed set, decoded once (a report built by the agent is decoded when first asked). */
function hashedNamesOf(condensed: CondensedNamespace): HashedNames {
  let names = decodedNames.get(condensed);
  if (!names) {
    const decoded = decodeHashedNames(condensed.names.count, condensed.names.data);
    // Built by encodeHashedNames or checked when parsed: it decodes. Were it not to, every name is doubt.
    names = decoded.ok ? decoded.names : { count: condensed.names.count, has: () => true };
    decodedNames.set(condensed, names);
  }
  return names;
}

/** Entries are sorted by name (the agent writes them so, the parser sorts them again). */
function findByName(entries: readonly ReportedObject[], name: string): ReportedObject | undefined {
  let lo = 0;
  let hi = entries.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const c = compare(entries[mid]!.name, name);
    if (c === 0) return entries[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/**
 * The synced copy of the kind at `namespace/name` the report lists; undefined when it lists none there (or does not
 * cover the kind: ask occupantOf what that means).
 */
export function copyAt(report: SpokeReport, kind: string, namespace: string, name: string): ReportedCopy | undefined {
  const namespaces = kindIn(report, kind);
  const entry = namespaces && Object.hasOwn(namespaces, namespace) ? findByName(namespaces[namespace]!, name) : undefined;
  return entry && 'synced' in entry ? entry : undefined;
}

/** One synced copy as the report lists it, with its namespace. */
export interface ListedCopy {
  kind: string;
  namespace: string;
  copy: ReportedCopy;
}

/**
 * Every synced copy the report lists, by the hub policy (`namespace/name`) it copies — copies are always listed,
 * condensed namespaces too. Made once per report (the hub asks for each policy).
 */
export function copiesBySource(report: SpokeReport): ReadonlyMap<string, readonly ListedCopy[]> {
  let index = copyIndexes.get(report.objects);
  if (!index) {
    const made = new Map<string, ListedCopy[]>();
    for (const [kind, namespaces] of Object.entries(report.objects)) {
      for (const [namespace, entries] of Object.entries(namespaces)) {
        for (const entry of entries) {
          if (!('synced' in entry) || entry.synced === '') continue;
          const list = made.get(entry.synced);
          const listed = { kind, namespace, copy: entry };
          if (list) list.push(listed);
          else made.set(entry.synced, [listed]);
        }
      }
    }
    index = made;
    copyIndexes.set(report.objects, index);
  }
  return index;
}

/** copiesBySource's index, by the report's objects (a heartbeat's report shares its predecessor's). */
const copyIndexes = new WeakMap<SpokeReport['objects'], ReadonlyMap<string, readonly ListedCopy[]>>();
