// The spoke agent's report as written and read back (the model: spokereport.ts): canonical JSON in the current
// format, and the schema the hub reads it with — names are what the apiserver allows for them and every count
// is capped, so that nothing else reaches the hub's memory, logs or annotations; a report past its schema or
// caps is refused whole. The agent checks what it would write with the same schema (wireSectionProblem). Pure.
import { z } from 'zod';
import { canonicalJson } from '../k8s/canonical.ts';
import { decodeHashedNames } from './hashednames.ts';
import { isDns1123Label, isDns1123Subdomain } from '../k8s/dns.ts';
import { kubeTimeMillis } from '../k8s/kubetime.ts';
import { condensedIn, rememberDecoded } from './reportquery.ts';
import { REPORT_CAPS, compare, SPOKE_REPORT_VERSION, copyTarget, isKindKey, isPolicyKey, type CondensedNamespace, type CopyDrift, type ParsedReport, type ReportedObject, type SpokeReport } from './spokereport.ts';

/** One namespace of one kind as written: its objects, or (condensed) what it lists, counts and hashes. */
export type WireNamespace = ReportedObject[] | { listed: ReportedObject[]; unnamed: CondensedNamespace['unnamed']; names: CondensedNamespace['names'] };

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
// What a drifted copy says (copydrift.ts): paths and manager names are the spoke's text, printable and cut by the agent.
const driftText = z.string().min(1).max(REPORT_CAPS.driftText, `at most ${REPORT_CAPS.driftText} characters`).regex(/^[\x20-\x7e]+$/, 'must be printable ASCII');
const driftSchema = z
  .strictObject({
    fields: z.array(driftText).max(REPORT_CAPS.driftFields, `at most ${REPORT_CAPS.driftFields} fields`),
    more: z.number().int().min(1).max(1_000_000).optional(),
    managers: z
      .array(z.strictObject({ manager: driftText, operation: z.enum(['Apply', 'Update']).optional(), time: heartbeatSchema.optional() }))
      .max(REPORT_CAPS.driftManagers, `at most ${REPORT_CAPS.driftManagers} managers`),
    since: heartbeatSchema.optional(),
  })
  .refine((d) => d.fields.length > 0, { message: 'a drift names a field', path: ['fields'] });
const entrySchema = z
  .strictObject({
    name: subdomain,
    targets: targetsSchema.optional(),
    rejected: z.literal(true).optional(),
    synced: z.string().refine((s) => s === '' || isPolicyKey(s), 'must be namespace/name of a policy, or empty').optional(),
    drift: driftSchema.optional(),
    unowned: z.literal(true).optional(),
  })
  .superRefine((entry, ctx) => {
    // Exactly one of the two shapes: an entry that could be read both ways says nothing.
    if ((entry.targets === undefined) === (entry.synced === undefined)) ctx.addIssue({ code: 'custom', message: 'must have either targets (a local policy) or synced (a copy)' });
    else if (entry.rejected && entry.synced !== undefined) ctx.addIssue({ code: 'custom', path: ['rejected'], message: 'only a local policy can be rejected' });
    else if ((entry.drift !== undefined || entry.unowned) && entry.synced === undefined) ctx.addIssue({ code: 'custom', path: [entry.drift ? 'drift' : 'unowned'], message: 'only a copy can drift or be unowned' });
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
// Versions 3 and 4 alike: version 4 adds members to a copy's entry only (entrySchema).
const v3Schema = z.strictObject({
  version: z.union([z.literal(3), z.literal(4)]),
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
  if (Object.hasOwn(record, 'version') && record.version !== 2 && record.version !== 3 && record.version !== 4) {
    return { ok: false, field: 'version', message: `unsupported version ${cut(JSON.stringify(record.version) ?? '', 32)}: this hub reads versions 4, 3, 2, and 1 (no version field)` };
  }
  if (record.version === 3 || record.version === 4) return parseV3(value);
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
  const report: SpokeReport = { version: parsed.data.version, heartbeat: parsed.data.written, objects: {} };
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
      rememberDecoded(entry, names.names);
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


type WireDrift = { fields: string[]; more?: number | undefined; managers: { manager: string; operation?: string | undefined; time?: string | undefined }[]; since?: string | undefined };
type WireEntry = {
  name: string;
  targets?: { gateway: string; sectionName?: string | undefined }[] | undefined;
  rejected?: true | undefined;
  synced?: string | undefined;
  drift?: WireDrift | undefined;
  unowned?: true | undefined;
};

function sortedEntries(entries: readonly WireEntry[]): ReportedObject[] {
  return entries.map(normalEntry).sort((a, b) => compare(a.name, b.name));
}

function normalEntry(entry: WireEntry): ReportedObject {
  if (entry.synced !== undefined) {
    const copy: ReportedObject = { name: entry.name, synced: entry.synced };
    if (entry.drift) copy.drift = normalDrift(entry.drift);
    if (entry.unowned) copy.unowned = true;
    return copy;
  }
  const targets = (entry.targets ?? []).map(copyTarget);
  return entry.rejected ? { name: entry.name, targets, rejected: true } : { name: entry.name, targets };
}

function normalDrift(d: WireDrift): CopyDrift {
  const drift: CopyDrift = {
    fields: [...d.fields],
    managers: d.managers.map((m) => ({ manager: m.manager, ...(m.operation === undefined ? {} : { operation: m.operation }), ...(m.time === undefined ? {} : { time: m.time }) })),
  };
  if (d.more !== undefined) drift.more = d.more;
  if (d.since !== undefined) drift.since = d.since;
  return drift;
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

/**
 * The first problem the hub's schema finds with one kind's part of the report as it would be written;
 * undefined when none. (The names a condensed namespace hashes reach the hub only as hashes.)
 */
export function wireSectionProblem(kind: string, wire: Record<string, WireNamespace>): { field: string; message: string } | undefined {
  const problem = firstProblem(kindKeySchema, kind);
  if (problem) return problem;
  for (const [namespace, value] of Object.entries(wire)) {
    if (!isDns1123Label(namespace)) return { field: fieldPath([namespace]), message: 'must be a DNS-1123 label of at most 63 characters' };
    const r = Array.isArray(value) ? entriesSchema.safeParse(value) : condensedSchema.safeParse(value);
    if (!r.success) {
      const refused = refusal(r.error.issues, [namespace]);
      if (!refused.ok) return { field: refused.field, message: refused.message };
    }
  }
  return undefined;
}
