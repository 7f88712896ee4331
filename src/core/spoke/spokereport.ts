// The spoke agent's report (docs/design/tenancy.md#local-policies-win, #reports-are-evidence-not-orders): every object of each watched kind whose watch is live, by
// namespace — local policies reduced to their Gateway targets and whether their own controller rejected
// them, synced copies to the hub policy they copy and, where a copy is not what the hub sent, what differs
// (copydrift.ts). The agent writes it into a ConfigMap on its spoke when what it says changes; the hub reads
// it back as a status feedback value of the spoke-configuration ManifestWork (a ReadOnly manifest) and decides
// from it where a copy is overridden (localPoliciesIn), who holds a copy's name there (occupantOf), which copies
// run there (copiesOf) and which drifted. It is the agent's only channel: it never writes a condition the
// spoke's policy controller owns. That it is current is said apart, by a small heartbeat that names the
// report's digest (spokeheartbeat.ts): a heartbeat never rewrites the report.
//
// Version 3 carries 50,000 objects of a kind: a namespace of up to LISTED_WHOLE_MAX objects is listed
// whole; a larger one is condensed to what the hub decides with — its synced copies (name and source),
// its covering local policies (not rejected, with a Gateway target) named up to NAMED_PER_TARGET_SET per
// distinct target set and counted past that, and every other name in a hashed set (hashednames.ts) that
// never answers "free" for a name it holds (a false "held" is doubt, which only holds a copy back). Version 4
// adds, to a copy only, what differs from what the hub sent and whether it lost its AppliedManifestWork owner:
// bytes in proportion to what differs.
//
// The report is evidence, not orders: a kind absent is unknown, never free; a report past its schema or
// caps is refused whole (reportwire.ts parseSpokeReport), and the agent degrades by leaving kinds out rather
// than ever writing one the hub would refuse (reportbuild.ts buildSpokeReport validates with the hub's own
// schema). This file is the model: its names, caps and types; reportbuild.ts builds it from the spoke's
// objects, reportwire.ts writes and reads it, reportquery.ts answers the hub's questions. Pure.
import type { GatewayTarget } from './conflicts.ts';
import { isDns1123Label, isDns1123Subdomain } from '../k8s/dns.ts';

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

/** The format this agent writes. Version 3 (no drift), 2 (heartbeat inside) and 1 (no version field) are read from older agents. */
export const SPOKE_REPORT_VERSION = 4;

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
  /** Fields a drifted copy names (the rest are counted), and field managers. */
  driftFields: 16,
  driftManagers: 8,
  /** Characters of one field path or manager name. */
  driftText: 256,
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
  /** Version 4: the copy is not what the hub sent (copydrift.ts); absent when it is, or when that is not known. */
  drift?: CopyDrift;
  /**
   * Version 4: no AppliedManifestWork owns the copy — OCM's agent let it go (a work deleted with the Orphan
   * option) or never applied it: no work of any hub holds it, and none deletes it.
   */
  unowned?: true;
}

/**
 * How a synced copy differs from what the hub sent, as its spoke agent reads it (copydrift.ts): the fields
 * that differ, the field managers other than OCM's work agent that wrote them, and since when.
 */
export interface CopyDrift {
  /** Paths of the fields that differ (`spec.rules.a`, `metadata.labels.k`), sorted, at most REPORT_CAPS.driftFields. */
  fields: string[];
  /** How many differing fields `fields` leaves out; absent when none. */
  more?: number;
  /**
   * The field managers other than the work agent that own differing fields, each with its operation and when it
   * last wrote (the spoke apiserver's clock), sorted by name; empty when the difference is a removal no
   * manager owns.
   */
  managers: { manager: string; operation?: string; time?: string }[];
  /** The earliest of those writes (the spoke apiserver's clock); absent when none is dated. */
  since?: string;
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
   * 4; 3 for an older agent's (copies without drift); 2 for an older one still (every object listed,
   * heartbeat inside); 1 for the oldest, whose kinds list only the local policies that take a Gateway (it
   * says nothing of rejections nor of who holds a name: occupantOf is unknown there).
   */
  version: 1 | 2 | 3 | 4;
  /**
   * On the spoke's clock, only ever compared with the previous one: from version 3, when its content was
   * written (its heartbeat is apart); before, the heartbeat it was rewritten with.
   */
  heartbeat: string;
  /**
   * By `resource.group` of each kind whose watch is live, by namespace, the objects listed one by one,
   * sorted by name: every object of the namespace, unless `condensed` has the namespace. A kind absent is
   * unknown, not free of objects.
   */
  objects: Record<string, Record<string, ReportedObject[]>>;
  /** From version 3: the namespaces condensed, by kind and namespace (each also in `objects`, with what it lists). */
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



/** A target as the report holds it: no `sectionName` member when it has none. */
export function copyTarget(t: { gateway: string; sectionName?: string | undefined }): GatewayTarget {
  return t.sectionName === undefined ? { gateway: t.gateway } : { gateway: t.gateway, sectionName: t.sectionName };
}

/** `resource.group`, or a core resource alone. */
export function isKindKey(key: string): boolean {
  const dot = key.indexOf('.');
  return dot < 0 ? isDns1123Label(key) : isDns1123Label(key.slice(0, dot)) && isDns1123Subdomain(key.slice(dot + 1));
}

/** `namespace/name` of a namespaced object. */
export function isPolicyKey(key: string): boolean {
  const parts = key.split('/');
  return parts.length === 2 && isDns1123Label(parts[0]!) && isDns1123Subdomain(parts[1]!);
}

/** Byte order, as the report is sorted. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
