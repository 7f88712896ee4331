// The spoke agent's report (docs/architecture.md#local-policies-win, #reports-are-evidence-not-orders): every object of each watched kind whose watch is live, by
// namespace — local policies reduced to their Gateway targets and whether their own controller rejected
// them, synced copies to the hub policy they copy — with a heartbeat. The agent writes it into a ConfigMap
// on its spoke; the hub reads it back as a status feedback value of the spoke-configuration ManifestWork
// (a ReadOnly manifest) and decides from it where a copy is overridden (localPoliciesIn) and who holds a
// copy's name there (occupantOf). It is the agent's only channel: it never writes a condition the spoke's
// policy controller owns.
//
// The report is evidence, not orders: a kind absent is unknown, never free; a report past its schema or
// caps is refused whole (parseSpokeReport), and the agent degrades by leaving kinds out rather than ever
// writing one the hub would refuse (buildSpokeReport validates with the hub's own schema). Pure.
import { z } from 'zod';
import { canonicalJson } from '../k8s/canonical.ts';
import { localPolicyOf, rejectedByController, type GatewayTarget, type LocalPolicy } from './conflicts.ts';
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
/** How often the agent rewrites an unchanged report, so that the hub can tell it is alive. */
export const DEFAULT_REPORT_HEARTBEAT_MS = 30_000;
/**
 * How long a report counts after the hub last saw it change (a new heartbeat or new content), on the
 * hub's clock. Past it, what it says is not acted on: a copy it kept off a cluster is placed again (an
 * absent or stopped agent never withdraws anything).
 */
export const DEFAULT_REPORT_STALE_MS = 120_000;

/** The format this agent writes. Version 1 (no version field) is what agents before it wrote. */
export const SPOKE_REPORT_VERSION = 2;

/**
 * Caps on a report, the agent's and the hub's alike. 256 KiB of text: a quarter of a ConfigMap's 1 MiB,
 * leaving room for the escaping it gets inside the ManifestWork status that carries it (which must stay
 * under etcd's 1.5 MiB request limit), and a few hundred KiB of hub memory per cluster at worst. About
 * 3,000 objects of ordinary name lengths fit; the counts bound the parsing work on their own.
 */
export const REPORT_CAPS = {
  bytes: 256 * 1024,
  kinds: 64,
  /** Reported objects, over every kind and namespace. */
  objects: 8_192,
  /** Gateway targets of one local policy. */
  targetsPerObject: 64,
} as const;

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

export interface SpokeReport {
  /**
   * 2; 1 for an older agent's report, whose kinds list only the local policies that take a Gateway (it
   * says nothing of rejections nor of who holds a name: occupantOf is unknown there).
   */
  version: 1 | 2;
  /** When the agent wrote it, on the spoke's clock: only ever compared with the previous one. */
  heartbeat: string;
  /**
   * By `resource.group` of each kind whose watch is live, by namespace, every object of the kind there,
   * sorted by name. A kind absent is unknown, not free of objects.
   */
  objects: Record<string, Record<string, ReportedObject[]>>;
}

/** Who holds an object name on the spoke. */
export type Occupant = { state: 'unknown' } | { state: 'free' } | { state: 'local' } | { state: 'synced'; source: string };

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

/**
 * The report of one spoke, from the objects of each kind whose watch is live, by `resource.group`. A kind
 * that would break the schema or the caps is left out (and named in `leftOut`), never cut: the hub would
 * refuse the whole report, and a kind cut short would say names are free that are not. Within the byte and
 * count caps, the smallest kinds go in first, so that as many kinds as possible are known.
 */
export function buildSpokeReport(objectsByKind: ReadonlyMap<string, readonly KubeObject[]>, now: Date): ReportBuild {
  const heartbeat = now.toISOString().replace(/\.\d+Z$/, 'Z');
  const leftOut: ReportBuild['leftOut'] = [];
  const candidates: { kind: string; section: Record<string, ReportedObject[]>; text: string; count: number }[] = [];
  for (const [kind, objects] of objectsByKind) {
    // A Map: a namespace may be called `constructor`.
    const byNamespace = new Map<string, ReportedObject[]>();
    for (const object of objects) {
      const namespace = object.metadata.namespace ?? '';
      const list = byNamespace.get(namespace) ?? [];
      list.push(reportedObjectOf(object));
      byNamespace.set(namespace, list);
    }
    const section = Object.fromEntries([...byNamespace].sort(([a], [b]) => compare(a, b)).map(([ns, list]) => [ns, list.sort((a, b) => compare(a.name, b.name))]));
    const problem = firstProblem(kindKeySchema, kind) ?? firstProblem(kindSectionSchema, section);
    if (problem) {
      leftOut.push({ kind, reason: `${problem.field ? `${problem.field}: ` : ''}${problem.message}` });
      continue;
    }
    candidates.push({ kind, section, text: canonicalJson(section), count: objects.length });
  }
  candidates.sort((a, b) => a.text.length - b.text.length || compare(a.kind, b.kind));

  const included: Record<string, Record<string, ReportedObject[]>> = {};
  // Every string is ASCII once validated: lengths are bytes.
  let bytes = serializeSpokeReport({ version: SPOKE_REPORT_VERSION, heartbeat, objects: {} }).length;
  let count = 0;
  let kinds = 0;
  for (const c of candidates) {
    const added = JSON.stringify(c.kind).length + 1 + c.text.length + (kinds > 0 ? 1 : 0);
    if (kinds + 1 > REPORT_CAPS.kinds) leftOut.push({ kind: c.kind, reason: `more than ${REPORT_CAPS.kinds} kinds` });
    else if (count + c.count > REPORT_CAPS.objects) leftOut.push({ kind: c.kind, reason: `its ${c.count} objects would pass the report's cap of ${REPORT_CAPS.objects}` });
    else if (bytes + added > REPORT_CAPS.bytes) leftOut.push({ kind: c.kind, reason: `its ${c.text.length} bytes would pass the report's cap of ${REPORT_CAPS.bytes}` });
    else {
      included[c.kind] = c.section;
      bytes += added;
      count += c.count;
      kinds += 1;
    }
  }
  const objects: SpokeReport['objects'] = {};
  for (const kind of Object.keys(included).sort(compare)) objects[kind] = included[kind]!;
  leftOut.sort((a, b) => compare(a.kind, b.kind));
  return { report: { version: SPOKE_REPORT_VERSION, heartbeat, objects }, leftOut };
}

/** The report as written: canonical JSON in the current format, so that the same objects give the same text. */
export function serializeSpokeReport(report: SpokeReport): string {
  return canonicalJson({ version: SPOKE_REPORT_VERSION, heartbeat: report.heartbeat, objects: report.objects });
}

/** What the report says, without the heartbeat: equal when nothing changed. */
export function reportContent(report: SpokeReport): string {
  return canonicalJson({ version: report.version, objects: report.objects });
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
const entriesSchema = z
  .array(entrySchema)
  .min(1, 'a namespace is listed only with objects')
  .superRefine((entries, ctx) => {
    const seen = new Set<string>();
    entries.forEach((entry, index) => {
      if (seen.has(entry.name)) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: 'duplicate name' });
      seen.add(entry.name);
    });
  });
const kindSectionSchema = z.record(label, entriesSchema);
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
 * version 1 (agents before this one); any version other than 1 and 2 is refused.
 */
export function parseSpokeReport(text: string, previous?: { text: string; report: SpokeReport }): ParsedReport {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > REPORT_CAPS.bytes) return { ok: false, field: '(report)', message: `${bytes} bytes, over the cap of ${REPORT_CAPS.bytes}` };
  // Most reports are heartbeats: the text of the last one read, but for the heartbeat that leads it
  // (canonical JSON sorts it first). Then only the heartbeat is new, and the rest need not be parsed again.
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
  if (Object.hasOwn(record, 'version') && record.version !== SPOKE_REPORT_VERSION) {
    return { ok: false, field: 'version', message: `unsupported version ${cut(JSON.stringify(record.version) ?? '', 32)}: this hub reads version 2, and 1 (no version field)` };
  }
  if (Object.hasOwn(record, 'version')) {
    const parsed = v2Schema.safeParse(value);
    if (!parsed.success) return refusal(parsed.error.issues);
    const objects: SpokeReport['objects'] = {};
    for (const [kind, namespaces] of Object.entries(parsed.data.objects)) {
      objects[kind] = Object.fromEntries(Object.entries(namespaces).map(([namespace, entries]) => [namespace, entries.map(normalEntry).sort((a, b) => compare(a.name, b.name))]));
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
        .map(([namespace, locals]) => [namespace, locals.map((l) => normalEntry({ name: l.name, targets: l.targets })).sort((a, b) => compare(a.name, b.name))]),
    );
  }
  return { ok: true, report: { version: 1, heartbeat: parsed.data.heartbeat, objects } };
}

/** A report's text split after its leading heartbeat (as canonical JSON writes it); undefined when it does not start so. */
function afterHeartbeat(text: string): { heartbeat: string; text: string } | undefined {
  const match = /^\{"heartbeat":"([0-9A-Za-z:.+-]{1,64})",/.exec(text);
  return match ? { heartbeat: match[1]!, text: text.slice(match[0].length) } : undefined;
}

/**
 * The local policies of one kind in one namespace that count for coverage: not rejected by their own
 * controller, with a Gateway target. Undefined when the report does not cover the kind (unknown: nothing
 * may be concluded from it).
 */
export function localPoliciesIn(report: SpokeReport, kind: string, namespace: string): LocalPolicy[] | undefined {
  const namespaces = kindIn(report, kind);
  if (!namespaces) return undefined;
  const entries = Object.hasOwn(namespaces, namespace) ? namespaces[namespace]! : [];
  return entries.flatMap((e) => ('targets' in e && !e.rejected && e.targets.length > 0 ? [{ key: `${namespace}/${e.name}`, targets: e.targets.map(copyTarget) }] : []));
}

/** Who holds the name `namespace/name` of the kind on the spoke ('unknown' when the report does not cover the kind, or predates occupancy). */
export function occupantOf(report: SpokeReport, kind: string, namespace: string, name: string): Occupant {
  const namespaces = kindIn(report, kind);
  if (!namespaces || report.version < 2) return { state: 'unknown' };
  const entry = Object.hasOwn(namespaces, namespace) ? findByName(namespaces[namespace]!, name) : undefined;
  if (!entry) return { state: 'free' };
  return 'synced' in entry ? { state: 'synced', source: entry.synced } : { state: 'local' };
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
    if (!a || !b || before.version !== after.version) {
      scopes.push({ kind, namespace: WHOLE_KIND }, ...namespaces.map((namespace) => ({ kind, namespace })));
      continue;
    }
    // A heartbeat's report shares the previous one's objects (parseSpokeReport): nothing to compare.
    if (a === b) continue;
    for (const namespace of namespaces) {
      const x = Object.hasOwn(b, namespace) ? b[namespace]! : [];
      const y = Object.hasOwn(a, namespace) ? a[namespace]! : [];
      if (canonicalJson(x) !== canonicalJson(y)) scopes.push({ kind, namespace });
    }
  }
  return scopes;
}

function kindIn(report: SpokeReport, kind: string): Record<string, ReportedObject[]> | undefined {
  return Object.hasOwn(report.objects, kind) ? report.objects[kind] : undefined;
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

function normalEntry(entry: { name: string; targets?: { gateway: string; sectionName?: string | undefined }[] | undefined; rejected?: true | undefined; synced?: string | undefined }): ReportedObject {
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

/** The first issue, as a field path and a message, neither longer than a log line should be. */
function refusal(issues: readonly z.core.$ZodIssue[]): ParsedReport {
  const issue = issues[0];
  if (!issue) return { ok: false, field: '(report)', message: 'invalid' };
  let path: PropertyKey[] = issue.path;
  let message = issue.message;
  if (issue.code === 'invalid_key') message = issue.issues[0]?.message ?? 'invalid key';
  else if (issue.code === 'unrecognized_keys') {
    path = [...issue.path, issue.keys[0] ?? ''];
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
