// The spoke agent's report built from the objects of each kind whose watch is live (the model: spokereport.ts):
// each object reduced to what the hub decides with — a local policy to its Gateway targets and whether its
// controller rejected it, a synced copy to its source and, when it is not what the hub sent, what differs
// (copydrift.ts) — each namespace listed whole or condensed, and each kind checked with the hub's own schema
// (reportwire.ts) before it goes in: a kind that would break it is left out whole, never cut. Pure.
import { canonicalJson } from '../k8s/canonical.ts';
import { localPolicyOf, rejectedByController, type GatewayTarget } from './conflicts.ts';
import { copyDriftOf, ownedByAppliedWork } from './copydrift.ts';
import { encodeHashedNames } from './hashednames.ts';
import { isDns1123Subdomain } from '../k8s/dns.ts';
import { POLICY_SYNCED_ANNOTATION } from '../metadatakeys.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { serializeSpokeReport, wireSectionProblem, type WireNamespace } from './reportwire.ts';
import { LISTED_WHOLE_MAX, NAMED_PER_TARGET_SET, REPORT_CAPS, SPOKE_REPORT_VERSION, compare, copyTarget, isPolicyKey, type CondensedNamespace, type ReportedCopy, type ReportedObject, type SpokeReport } from './spokereport.ts';

export interface ReportBuild {
  report: SpokeReport;
  /** The kinds given but not in the report (so unknown to the hub), and why. */
  leftOut: { kind: string; reason: string }[];
}

/** What the report says of one object of a watched kind. */
export function reportedObjectOf(object: KubeObject): ReportedObject {
  const name = object.metadata.name;
  const source = object.metadata.annotations?.[POLICY_SYNCED_ANNOTATION];
  if (source !== undefined) {
    const copy: ReportedCopy = { name, synced: isPolicyKey(source) ? source : '' };
    const drift = copyDriftOf(object);
    if (drift) copy.drift = drift;
    if (!ownedByAppliedWork(object)) copy.unowned = true;
    return copy;
  }
  // Being deleted, or without Gateway targets: no targets. A target whose names could not be a Gateway's
  // or a listener's (the policy's CRD may allow any string) covers nothing either.
  const targets = (localPolicyOf(object)?.targets ?? []).filter((t) => isDns1123Subdomain(t.gateway) && (t.sectionName === undefined || isDns1123Subdomain(t.sectionName)));
  return rejectedByController(object) ? { name, targets, rejected: true } : { name, targets };
}


/** One kind's part of the report, as written and as held. */
interface KindSection {
  wire: Record<string, WireNamespace>;
  objects: Record<string, ReportedObject[]>;
  condensed: Record<string, CondensedNamespace>;
  /** Objects listed (and target sets counted), and names hashed. */
  listed: number;
  hashed: number;
}

/**
 * The report of one spoke, from the objects of each kind whose watch is live, by `resource.group`. A kind
 * that would break the schema or the caps is left out (and named in `leftOut`), never cut: the hub would
 * refuse the whole report, and a kind cut short would say names are free that are not. Within the byte and
 * count caps, the smallest kinds go in first, so that as many kinds as possible are known.
 */
export function buildSpokeReport(objectsByKind: ReadonlyMap<string, readonly KubeObject[]>, now: Date): ReportBuild {
  const written = now.toISOString().replace(/\.\d+Z$/, 'Z');
  const leftOut: ReportBuild['leftOut'] = [];
  const candidates: { kind: string; section: KindSection; text: string }[] = [];
  for (const [kind, objects] of objectsByKind) {
    // A Map: a namespace may be called `constructor`.
    const byNamespace = new Map<string, ReportedObject[]>();
    for (const object of objects) {
      const namespace = object.metadata.namespace ?? '';
      const list = byNamespace.get(namespace) ?? [];
      list.push(reportedObjectOf(object));
      byNamespace.set(namespace, list);
    }
    const section = kindSection(byNamespace);
    const problem = wireSectionProblem(kind, section.wire);
    if (problem) {
      leftOut.push({ kind, reason: `${problem.field ? `${problem.field}: ` : ''}${problem.message}` });
      continue;
    }
    candidates.push({ kind, section, text: canonicalJson(section.wire) });
  }
  candidates.sort((a, b) => a.text.length - b.text.length || compare(a.kind, b.kind));

  const included = new Map<string, KindSection>();
  // Every string is ASCII once validated (names, and base64): lengths are bytes.
  let bytes = serializeSpokeReport({ version: SPOKE_REPORT_VERSION, heartbeat: written, objects: {} }).length;
  let listed = 0;
  let hashed = 0;
  for (const c of candidates) {
    const added = JSON.stringify(c.kind).length + 1 + c.text.length + (included.size > 0 ? 1 : 0);
    if (included.size + 1 > REPORT_CAPS.kinds) leftOut.push({ kind: c.kind, reason: `more than ${REPORT_CAPS.kinds} kinds` });
    else if (listed + c.section.listed > REPORT_CAPS.objects) leftOut.push({ kind: c.kind, reason: `its ${c.section.listed} objects listed would pass the report's cap of ${REPORT_CAPS.objects}` });
    else if (hashed + c.section.hashed > REPORT_CAPS.names) leftOut.push({ kind: c.kind, reason: `its ${c.section.hashed} hashed names would pass the report's cap of ${REPORT_CAPS.names}` });
    else if (bytes + added > REPORT_CAPS.bytes) leftOut.push({ kind: c.kind, reason: `its ${c.text.length} bytes would pass the report's cap of ${REPORT_CAPS.bytes}` });
    else {
      included.set(c.kind, c.section);
      bytes += added;
      listed += c.section.listed;
      hashed += c.section.hashed;
    }
  }
  const report: SpokeReport = { version: SPOKE_REPORT_VERSION, heartbeat: written, objects: {} };
  for (const kind of [...included.keys()].sort(compare)) {
    const section = included.get(kind)!;
    report.objects[kind] = section.objects;
    if (Object.keys(section.condensed).length > 0) (report.condensed ??= {})[kind] = section.condensed;
  }
  leftOut.sort((a, b) => compare(a.kind, b.kind));
  return { report, leftOut };
}

/** One kind's objects by namespace, each namespace listed whole or condensed. */
function kindSection(byNamespace: ReadonlyMap<string, ReportedObject[]>): KindSection {
  const section: KindSection = { wire: {}, objects: {}, condensed: {}, listed: 0, hashed: 0 };
  for (const [namespace, list] of [...byNamespace].sort(([a], [b]) => compare(a, b))) {
    list.sort((a, b) => compare(a.name, b.name));
    if (list.length <= LISTED_WHOLE_MAX) {
      section.wire[namespace] = list;
      section.objects[namespace] = list;
      section.listed += list.length;
      continue;
    }
    const listed: ReportedObject[] = [];
    const hashed: string[] = [];
    const bySet = new Map<string, { targets: GatewayTarget[]; named: number; unnamed: number }>();
    for (const entry of list) {
      if ('synced' in entry) {
        listed.push(entry);
        continue;
      }
      if (entry.rejected || entry.targets.length === 0) {
        hashed.push(entry.name);
        continue;
      }
      const targets = canonicalTargets(entry.targets);
      const key = canonicalJson(targets);
      const set = bySet.get(key) ?? { targets, named: 0, unnamed: 0 };
      bySet.set(key, set);
      if (set.named < NAMED_PER_TARGET_SET) {
        set.named += 1;
        listed.push(entry);
      } else {
        set.unnamed += 1;
        hashed.push(entry.name);
      }
    }
    const unnamed = [...bySet.entries()].filter(([, s]) => s.unnamed > 0).sort(([a], [b]) => compare(a, b)).map(([, s]) => ({ targets: s.targets, count: s.unnamed }));
    const names = encodeHashedNames(hashed);
    section.wire[namespace] = { listed, unnamed, names };
    section.objects[namespace] = listed;
    section.condensed[namespace] = { unnamed, names };
    section.listed += listed.length + unnamed.length;
    section.hashed += names.count;
  }
  return section;
}

/** A target set in one order: by Gateway, the whole Gateway before its listeners, then by listener. */
function canonicalTargets(targets: readonly GatewayTarget[]): GatewayTarget[] {
  const unique = new Map(targets.map((t) => [canonicalJson([t.gateway, t.sectionName ?? null]), copyTarget(t)]));
  return [...unique.entries()].sort(([a], [b]) => compare(a, b)).map(([, t]) => t);
}
