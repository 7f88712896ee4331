// The spoke agent's report (docs/design/tenancy.md#local-policies-win, #reports-are-evidence-not-orders): every object of each watched kind whose watch is live, by
// namespace — local policies reduced to their Gateway targets and whether their own controller rejected
// them, synced copies to the hub policy they copy. The agent writes it into a ConfigMap on its spoke when
// what it says changes; the hub reads it back as a status feedback value of the spoke-configuration
// ManifestWork (a ReadOnly manifest) and decides from it where a copy is overridden (localPoliciesIn) and
// who holds a copy's name there (occupantOf). It is the agent's only channel: it never writes a condition
// the spoke's policy controller owns. That it is current is said apart, by a small heartbeat that names
// the report's digest (spokeheartbeat.ts): a heartbeat never rewrites the report.
//
// Version 3 carries 50,000 objects of a kind: a namespace of up to LISTED_WHOLE_MAX objects is listed
// whole; a larger one is condensed to what the hub decides with — its synced copies (name and source),
// its covering local policies (not rejected, with a Gateway target) named up to NAMED_PER_TARGET_SET per
// distinct target set and counted past that, and every other name in a hashed set (hashednames.ts) that
// never answers "free" for a name it holds (a false "held" is doubt, which only holds a copy back).
//
// The report is evidence, not orders: a kind absent is unknown, never free; a report past its schema or
// caps is refused whole (parseSpokeReport), and the agent degrades by leaving kinds out rather than ever
// writing one the hub would refuse (buildSpokeReport validates with the hub's own schema). Pure.
import { z } from 'zod';
import { canonicalJson } from '../k8s/canonical.ts';
import { localPolicyOf, rejectedByController, type GatewayTarget, type LocalPolicy } from './conflicts.ts';
import { decodeHashedNames, encodeHashedNames, type HashedNames } from './hashednames.ts';
import { isDns1123Label, isDns1123Subdomain } from '../k8s/dns.ts';
import { kubeTimeMillis } from '../k8s/kubetime.ts';
import { POLICY_SYNCED_ANNOTATION } from '../metadatakeys.ts';
import type { KubeObject } from '../k8s/objects.ts';

/** The report ConfigMap's name: beside the spoke configuration ConfigMap, named after it. */
export function spokeReportName(configMapName: string): string {
  return `${configMapName}-report`;
}
/** Its data key, and the name of the feedback value that carries it to the hub. */
export const SPOKE_REPORT_KEY = 'report';
/** How often the agent says it is alive (its heartbeat), whether or not the report changed. */
export const DEFAULT_REPORT_HEARTBEAT_MS = 30_000;
/**
 * How long a report counts after the hub last saw its agent alive (a new heartbeat vouching for the
 * report the hub holds; for an agent before version 3, new report text), on the hub's clock. Past it,
 * what it says is not acted on.
 */
export const DEFAULT_REPORT_STALE_MS = 120_000;

/** The format this agent writes. Version 2 (heartbeat inside) and 1 (no version field) are read from older agents. */
export const SPOKE_REPORT_VERSION = 3;

/**
 * Caps on a report, the agent's and the hub's alike. 512 KiB of text: half a ConfigMap's 1 MiB, leaving
 * room for the escaping of its quotes inside the ManifestWork status that carries it (under etcd's 1.5 MiB
 * request limit); the hashed names need no escaping. 50,000 objects of one kind take ~185 KB. The counts
 * bound the parsing work on their own.
 */
export const REPORT_CAPS = {
  bytes: 512 * 1024,
  kinds: 64,
  /** Objects listed one by one (and target sets counted past their named locals), over every kind and namespace. */
  objects: 8_192,
  /** Names in hashed sets, over every kind and namespace. */
  names: 131_072,
  /** Gateway targets of one local policy. */
  targetsPerObject: 64,
} as const;

/** A namespace of up to this many objects of a kind is listed whole (exact, and smaller than hashing it). */
export const LISTED_WHOLE_MAX = 16;
/** In a condensed namespace, how many covering local policies of one target set are named (Overridden messages name them); the rest are counted. */
export const NAMED_PER_TARGET_SET = 4;

/** A local policy: its Gateway targets (none: it covers nothing) and whether its own controller rejected it. */
export interface ReportedLocal {
  name: string;
  targets: GatewayTarget[];
  rejected?: true;
}

/** A synced copy: the hub policy (`namespace/name`) it is a copy of, by its annotation; '' when that names no policy. */
export interface ReportedCopy {
  name: string;
  synced: string;
}

export type ReportedObject = ReportedLocal | ReportedCopy;

/** What a condensed namespace says besides the objects it lists. */
export interface CondensedNamespace {
  /** Covering local policies past the first NAMED_PER_TARGET_SET of their target set: by target set, how many. */
  unnamed: { targets: GatewayTarget[]; count: number }[];
  /** Every object of the namespace not listed (local ones: copies are always listed), as a hashed set (hashednames.ts). */
  names: { count: number; data: string };
}

export interface SpokeReport {
  /**
   * 3; 2 for an older agent's (every object listed, heartbeat inside); 1 for an older one still, whose kinds
   * list only the local policies that take a Gateway (it says nothing of rejections nor of who holds a
   * name: occupantOf is unknown there).
   */
  version: 1 | 2 | 3;
  /**
   * On the spoke's clock, only ever compared with the previous one: version 3, when its content was
   * written (its heartbeat is apart); before, the heartbeat it was rewritten with.
   */
  heartbeat: string;
  /**
   * By `resource.group` of each kind whose watch is live, by namespace, the objects listed one by one,
   * sorted by name: every object of the namespace, unless `condensed` has the namespace. A kind absent is
   * unknown, not free of objects.
   */
  objects: Record<string, Record<string, ReportedObject[]>>;
  /** Version 3: the namespaces condensed, by kind and namespace (each also in `objects`, with what it lists). */
  condensed?: Record<string, Record<string, CondensedNamespace>>;
}

/**
 * Who holds an object name on the spoke. `hashed`: the report names the holder only in a hashed set — a
 * local object, or about once in a million, nothing (doubt: the name is not free).
 */
export type Occupant = { state: 'unknown' } | { state: 'free' } | { state: 'local'; hashed?: true } | { state: 'synced'; source: string };

/** A (kind, namespace) whose content changed; namespace WHOLE_KIND: the kind came, went or changed format. */
export interface ReportScope {
  kind: string;
  namespace: string;
}
/** Not a namespace (a DNS label cannot be `*`): the kind as a whole, namespaces not in the report included. */
export const WHOLE_KIND = '*';

export type ParsedReport = { ok: true; report: SpokeReport } | { ok: false; field: string; message: string };

export interface ReportBuild {
  report: SpokeReport;
  /** The kinds given but not in the report (so unknown to the hub), and why. */
  leftOut: { kind: string; reason: string }[];
}

/** What the report says of one object of a watched kind. */
export function reportedObjectOf(object: KubeObject): ReportedObject {
  const name = object.metadata.name;
  const source = object.metadata.annotations?.[POLICY_SYNCED_ANNOTATION];
  if (source !== undefined) return { name, synced: isPolicyKey(source) ? source : '' };
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
type WireNamespace = ReportedObject[] | { listed: ReportedObject[]; unnamed: CondensedNamespace['unnamed']; names: CondensedNamespace['names'] };

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
    const problem = firstProblem(kindKeySchema, kind) ?? sectionProblem(section.wire);
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

/**
 * The first problem the hub's schema finds with one kind's part of the report as it would be written;
 * undefined when none. (The names a condensed namespace hashes reach the hub only as hashes.)
 */
function sectionProblem(wire: Record<string, WireNamespace>): { field: string; message: string } | undefined {
  for (const [namespace, value] of Object.entries(wire)) {
    if (!isDns1123Label(namespace)) return { field: fieldPath([namespace]), message: 'must be a DNS-1123 label of at most 63 characters' };
    const r = Array.isArray(value) ? entriesSchema.safeParse(value) : condensedSchema.safeParse(value);
    if (!r.success) {
      const problem = refusal(r.error.issues, [namespace]);
      if (!problem.ok) return { field: problem.field, message: problem.message };
    }
  }
  return undefined;
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

/** The report as written: canonical JSON in the current format, so that the same objects give the same text. */
export function serializeSpokeReport(report: SpokeReport): string {
  return canonicalJson({ version: SPOKE_REPORT_VERSION, written: report.heartbeat, objects: wireObjects(report) });
}

/** What the report says, without when it was written: equal when nothing changed. */
export function reportContent(report: SpokeReport): string {
  return canonicalJson({ version: report.version, objects: wireObjects(report) });
}

function wireObjects(report: SpokeReport): Record<string, Record<string, WireNamespace>> {
  const objects: Record<string, Record<string, WireNamespace>> = {};
  for (const [kind, namespaces] of Object.entries(report.objects)) {
    const section: Record<string, WireNamespace> = {};
    for (const [namespace, listed] of Object.entries(namespaces)) {
      const condensed = condensedIn(report, kind, namespace);
      section[namespace] = condensed ? { listed, unnamed: condensed.unnamed, names: condensed.names } : listed;
    }
    objects[kind] = section;
  }
  return objects;
}

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

// The schema. Names are what the apiserver allows for them, so that nothing else reaches the hub's memory,
// logs or annotations: object names and Gateway names DNS-1123 subdomains (CRD objects are validated so;
// a policy's targetRef name need not be, but then it names no Gateway), namespaces DNS-1123 labels,
// section names subdomains (Gateway API's SectionName pattern, ≤ 253).
const subdomain = z.string().refine(isDns1123Subdomain, 'must be a DNS-1123 subdomain of at most 253 characters');
const label = z.string().refine(isDns1123Label, 'must be a DNS-1123 label of at most 63 characters');
const kindKeySchema = z.string().refine(isKindKey, 'must be resource.group (a DNS-1123 label, then a DNS-1123 subdomain)');
const heartbeatSchema = z.string().max(64, 'must be an RFC 3339 time').refine((s) => kubeTimeMillis(s) !== undefined, 'must be an RFC 3339 time');
const targetSchema = z.strictObject({ gateway: subdomain, sectionName: subdomain.optional() });
const targetsSchema = z.array(targetSchema).max(REPORT_CAPS.targetsPerObject, `at most ${REPORT_CAPS.targetsPerObject} targets`);
const entrySchema = z
  .strictObject({
    name: subdomain,
    targets: targetsSchema.optional(),
    rejected: z.literal(true).optional(),
    synced: z.string().refine((s) => s === '' || isPolicyKey(s), 'must be namespace/name of a policy, or empty').optional(),
  })
  .superRefine((entry, ctx) => {
    // Exactly one of the two shapes: an entry that could be read both ways says nothing.
    if ((entry.targets === undefined) === (entry.synced === undefined)) ctx.addIssue({ code: 'custom', message: 'must have either targets (a local policy) or synced (a copy)' });
    else if (entry.rejected && entry.synced !== undefined) ctx.addIssue({ code: 'custom', path: ['rejected'], message: 'only a local policy can be rejected' });
  });
const uniqueNames = (entries: readonly { name: string }[], ctx: z.RefinementCtx): void => {
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    if (seen.has(entry.name)) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: 'duplicate name' });
    seen.add(entry.name);
  });
};
const entriesSchema = z.array(entrySchema).min(1, 'a namespace is listed only with objects').superRefine(uniqueNames);
const condensedSchema = z.strictObject({
  listed: z.array(entrySchema).superRefine(uniqueNames),
  unnamed: z.array(z.strictObject({ targets: targetsSchema.min(1, 'a target set has a target'), count: z.number().int().min(1).max(REPORT_CAPS.names) })),
  names: z.strictObject({ count: z.number().int().min(0).max(REPORT_CAPS.names), data: z.string() }),
});
const kindSectionSchema = z.record(label, entriesSchema);
const v3Schema = z.strictObject({
  version: z.literal(3),
  written: heartbeatSchema,
  // Each namespace is checked apart (listed whole or condensed): see parseV3.
  objects: z.record(kindKeySchema, z.record(label, z.unknown())),
});
const v2Schema = z
  .strictObject({ version: z.literal(2), heartbeat: heartbeatSchema, objects: z.record(kindKeySchema, kindSectionSchema) })
  .superRefine((report, ctx) => checkCounts(report.objects, ctx));
const v1Schema = z
  .strictObject({
    heartbeat: heartbeatSchema,
    kinds: z.record(kindKeySchema, z.record(label, z.array(z.strictObject({ name: subdomain, targets: targetsSchema })))),
  })
  .superRefine((report, ctx) => checkCounts(report.kinds, ctx, 'kinds'));

function checkCounts(byKind: Record<string, Record<string, unknown[]>>, ctx: z.RefinementCtx, field = 'objects'): void {
  const kinds = Object.keys(byKind).length;
  if (kinds > REPORT_CAPS.kinds) ctx.addIssue({ code: 'custom', path: [field], message: `${kinds} kinds, over the cap of ${REPORT_CAPS.kinds}` });
  let objects = 0;
  for (const namespaces of Object.values(byKind)) for (const list of Object.values(namespaces)) objects += list.length;
  if (objects > REPORT_CAPS.objects) ctx.addIssue({ code: 'custom', path: [field], message: `${objects} objects, over the cap of ${REPORT_CAPS.objects}` });
}

/**
 * The report read back, or why it is refused as a whole (the field at fault and what is wrong with it,
 * both bounded: they go to logs and to the hub's status). A report without a version field is read as
 * version 1 (agents before this one); any version other than 1, 2 and 3 is refused.
 */
export function parseSpokeReport(text: string, previous?: { text: string; report: SpokeReport }): ParsedReport {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > REPORT_CAPS.bytes) return { ok: false, field: '(report)', message: `${bytes} bytes, over the cap of ${REPORT_CAPS.bytes}` };
  // A version 2 report is rewritten at every heartbeat: the text of the last one read, but for the heartbeat
  // that leads it (canonical JSON sorts it first). Then only the heartbeat is new, and the rest need not be
  // parsed again. (A version 3 report's text changes only with its content.)
  const rest = afterHeartbeat(text);
  if (previous && rest !== undefined && rest.text === afterHeartbeat(previous.text)?.text) {
    const heartbeat = heartbeatSchema.safeParse(rest.heartbeat);
    if (heartbeat.success) return { ok: true, report: { ...previous.report, heartbeat: heartbeat.data } };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, field: '(report)', message: 'not JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, field: '(report)', message: 'not a JSON object' };
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, 'version') && record.version !== 2 && record.version !== 3) {
    return { ok: false, field: 'version', message: `unsupported version ${cut(JSON.stringify(record.version) ?? '', 32)}: this hub reads versions 3, 2, and 1 (no version field)` };
  }
  if (record.version === 3) return parseV3(value);
  if (Object.hasOwn(record, 'version')) {
    const parsed = v2Schema.safeParse(value);
    if (!parsed.success) return refusal(parsed.error.issues);
    const objects: SpokeReport['objects'] = {};
    for (const [kind, namespaces] of Object.entries(parsed.data.objects)) {
      objects[kind] = Object.fromEntries(Object.entries(namespaces).map(([namespace, entries]) => [namespace, sortedEntries(entries)]));
    }
    return { ok: true, report: { version: 2, heartbeat: parsed.data.heartbeat, objects } };
  }
  const parsed = v1Schema.safeParse(value);
  if (!parsed.success) return refusal(parsed.error.issues);
  const objects: SpokeReport['objects'] = {};
  for (const [kind, namespaces] of Object.entries(parsed.data.kinds)) {
    objects[kind] = Object.fromEntries(
      Object.entries(namespaces)
        .filter(([, locals]) => locals.length > 0)
        .map(([namespace, locals]) => [namespace, sortedEntries(locals.map((l) => ({ name: l.name, targets: l.targets })))]),
    );
  }
  return { ok: true, report: { version: 1, heartbeat: parsed.data.heartbeat, objects } };
}

/** Decoded hashed sets, by the condensed namespace that holds them (decoded once, when first asked or parsed). */
const decodedNames = new WeakMap<CondensedNamespace, HashedNames>();

function parseV3(value: unknown): ParsedReport {
  const parsed = v3Schema.safeParse(value);
  if (!parsed.success) return refusal(parsed.error.issues);
  const kinds = Object.keys(parsed.data.objects).length;
  if (kinds > REPORT_CAPS.kinds) return { ok: false, field: 'objects', message: `${kinds} kinds, over the cap of ${REPORT_CAPS.kinds}` };
  // First the shapes and the counts, then the hashed sets decoded: the caps bound the work.
  const sections: [string, [string, ReportedObject[], z.infer<typeof condensedSchema> | undefined][]][] = [];
  let listedCount = 0;
  let hashedCount = 0;
  for (const [kind, namespaces] of Object.entries(parsed.data.objects)) {
    const section: (typeof sections)[number][1] = [];
    for (const [namespace, raw] of Object.entries(namespaces)) {
      const at = ['objects', kind, namespace];
      if (Array.isArray(raw)) {
        const entries = entriesSchema.safeParse(raw);
        if (!entries.success) return refusal(entries.error.issues, at);
        section.push([namespace, sortedEntries(entries.data), undefined]);
        listedCount += raw.length;
      } else {
        const c = condensedSchema.safeParse(raw);
        if (!c.success) return refusal(c.error.issues, at);
        section.push([namespace, sortedEntries(c.data.listed), c.data]);
        listedCount += c.data.listed.length + c.data.unnamed.length;
        hashedCount += c.data.names.count;
      }
    }
    sections.push([kind, section]);
  }
  if (listedCount > REPORT_CAPS.objects) return { ok: false, field: 'objects', message: `${listedCount} objects listed, over the cap of ${REPORT_CAPS.objects}` };
  if (hashedCount > REPORT_CAPS.names) return { ok: false, field: 'objects', message: `${hashedCount} hashed names, over the cap of ${REPORT_CAPS.names}` };
  const report: SpokeReport = { version: 3, heartbeat: parsed.data.written, objects: {} };
  for (const [kind, section] of sections) {
    const objects: Record<string, ReportedObject[]> = {};
    const condensed: Record<string, CondensedNamespace> = {};
    for (const [namespace, listed, c] of section) {
      objects[namespace] = listed;
      if (!c) continue;
      const names = decodeHashedNames(c.names.count, c.names.data);
      if (!names.ok) return { ok: false, field: cut(fieldPath(['objects', kind, namespace, 'names', 'data']), 256), message: cut(names.message, 256) };
      const entry: CondensedNamespace = {
        unnamed: c.unnamed.map((u) => ({ targets: u.targets.map(copyTarget), count: u.count })),
        names: { count: c.names.count, data: c.names.data },
      };
      decodedNames.set(entry, names.names);
      condensed[namespace] = entry;
    }
    report.objects[kind] = objects;
    if (Object.keys(condensed).length > 0) (report.condensed ??= {})[kind] = condensed;
  }
  return { ok: true, report };
}

/** A report's text split after its leading heartbeat (as canonical JSON writes version 2); undefined when it does not start so. */
function afterHeartbeat(text: string): { heartbeat: string; text: string } | undefined {
  const match = /^\{"heartbeat":"([0-9A-Za-z:.+-]{1,64})",/.exec(text);
  return match ? { heartbeat: match[1]!, text: text.slice(match[0].length) } : undefined;
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

function condensedIn(report: SpokeReport, kind: string, namespace: string): CondensedNamespace | undefined {
  const namespaces = condensedOf(report, kind);
  return namespaces && Object.hasOwn(namespaces, namespace) ? namespaces[namespace] : undefined;
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

type WireEntry = { name: string; targets?: { gateway: string; sectionName?: string | undefined }[] | undefined; rejected?: true | undefined; synced?: string | undefined };

function sortedEntries(entries: readonly WireEntry[]): ReportedObject[] {
  return entries.map(normalEntry).sort((a, b) => compare(a.name, b.name));
}

function normalEntry(entry: WireEntry): ReportedObject {
  if (entry.synced !== undefined) return { name: entry.name, synced: entry.synced };
  const targets = (entry.targets ?? []).map(copyTarget);
  return entry.rejected ? { name: entry.name, targets, rejected: true } : { name: entry.name, targets };
}

function copyTarget(t: { gateway: string; sectionName?: string | undefined }): GatewayTarget {
  return t.sectionName === undefined ? { gateway: t.gateway } : { gateway: t.gateway, sectionName: t.sectionName };
}

/** `resource.group`, or a core resource alone. */
function isKindKey(key: string): boolean {
  const dot = key.indexOf('.');
  return dot < 0 ? isDns1123Label(key) : isDns1123Label(key.slice(0, dot)) && isDns1123Subdomain(key.slice(dot + 1));
}

/** `namespace/name` of a namespaced object. */
function isPolicyKey(key: string): boolean {
  const parts = key.split('/');
  return parts.length === 2 && isDns1123Label(parts[0]!) && isDns1123Subdomain(parts[1]!);
}

function firstProblem(schema: z.ZodType, value: unknown): { field: string; message: string } | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return undefined;
  const r = refusal(parsed.error.issues);
  return r.ok ? undefined : { field: r.field, message: r.message };
}

/** The first issue, as a field path (under `at`) and a message, neither longer than a log line should be. */
function refusal(issues: readonly z.core.$ZodIssue[], at: readonly PropertyKey[] = []): ParsedReport {
  const issue = issues[0];
  if (!issue) return { ok: false, field: '(report)', message: 'invalid' };
  let path: PropertyKey[] = [...at, ...issue.path];
  let message = issue.message;
  if (issue.code === 'invalid_key') message = issue.issues[0]?.message ?? 'invalid key';
  else if (issue.code === 'unrecognized_keys') {
    path = [...path, issue.keys[0] ?? ''];
    message = 'unknown field';
  }
  return { ok: false, field: cut(fieldPath(path), 256), message: cut(message, 256) };
}

function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const key = String(segment);
      // Keys come from the spoke: cut, and printable ASCII only.
      out += key.length <= 64 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${out ? '.' : ''}${key}` : `[${JSON.stringify(cut(key, 64).replace(/[^\x20-\x7e]/g, '?'))}]`;
    }
  }
  return out;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
