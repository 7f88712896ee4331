// One ManifestWork's status read into what the hub aggregates for one cluster (docs/design/works.md#feedback-rules, #status-on-the-hub).
// Work status is written by the spoke agent: every field is checked, nothing is trusted to be there,
// and every string and size is capped (core/sanitize.ts) before the hub holds or shows it.
import { readConditions } from '../k8s/conditions.ts';
import type { Condition } from '../k8s/conditions.ts';
import { ancestorFeedbackGateways } from './feedbackrules.ts';
import { RAW_CONDITIONS_FEEDBACK, RESERVED_FEEDBACK_NAMES, ancestorFeedbackName } from '../feedbacknames.ts';
import type { AncestorField } from '../feedbacknames.ts';
import { kubeTimeMillis } from '../k8s/kubetime.ts';
import { parseRevisionAnnotation } from '../revisionannotation.ts';
import { REVISION_ANNOTATION } from '../metadatakeys.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { deepFreeze } from '../k8s/freeze.ts';
import { FEEDBACK_RULE_NAME, MAX_FEEDBACK_RULE_NAME_LENGTH, MAX_STATUS_FEEDBACK_RULES } from '../params/params.ts';
import { MAX_SPOKE_JSON_BYTES, MAX_SPOKE_NAME_LENGTH, eventReason, spokeText } from '../k8s/sanitize.ts';

export type ConditionStatus = Condition['status'];

/** A spoke policy condition as reported by feedback. */
export interface FeedbackCondition {
  status: ConditionStatus;
  /** A valid Event reason (sanitize.ts eventReason), never empty. */
  reason?: string;
  /** At most MAX_SPOKE_TEXT_LENGTH code points, control characters replaced. */
  message?: string;
}

export type FeedbackScalar = string | number | boolean;

/** The Accepted condition of one GEP-713 `status.ancestors[]` entry, with what else the entry says. */
export interface AncestorCondition extends FeedbackCondition {
  observedGeneration?: number;
  controllerName?: string;
}

/** What the spoke copy's status says for one of its Gateways (docs/design/status.md#reading-spoke-status). */
export interface AncestorFeedback {
  /** The downstream Gateway's name. */
  gateway: string;
  /**
   * One per ancestor entry naming the Gateway that has an Accepted condition: every such entry with the
   * agent's RawFeedbackJsonString gate, the first without it. Empty: no entry for this Gateway.
   */
  entries: AncestorCondition[];
}

export interface ClusterFeedback {
  /** Work condition Applied=True. */
  applied: boolean;
  /** Work condition Available=True. */
  available: boolean;
  /** The work's Applied condition observed the work's current metadata.generation. */
  appliedObservedCurrent: boolean;
  /** The spoke copy's metadata.generation. */
  generation?: number;
  /** The hub revision the spoke copy carries (its revision annotation), in the snapshot the status was read in. */
  revision?: number;
  /**
   * The tag of the spoke copy's revision annotation (`<generation>/<tag>`, core/revisionannotation.ts): the copy
   * was rendered with variants, and the tag names its spec. Absent for a copy no variant changes.
   */
  revisionTag?: string;
  /**
   * The revision (and tag) of the copy the work places now, from its manifest's revision annotation: what the
   * fed-back `revision` and `revisionTag` must say for the values to describe this copy. Absent for a copy from
   * before revisions were recorded.
   */
  placed?: { revision: number; tag?: string };
  /** observedGeneration of the spoke copy's Enforced condition. */
  enforcedGeneration?: number;
  /** The copy's status.observedGeneration (the Kuadrant operator sets it at status level only). */
  statusGeneration?: number;
  accepted?: FeedbackCondition;
  enforced?: FeedbackCondition;
  /** Per Gateway of the copy that has ancestor rules (ancestorFeedbackGateways), in that order. */
  ancestors: AncestorFeedback[];
  /** Type of the copy's first `status.conditions` entry: a status exists, whatever its shape. */
  firstConditionType?: string;
  /** Gateway name of the copy's first `status.ancestors` entry: ancestors exist, maybe for other Gateways. */
  firstAncestorName?: string;
  /**
   * When the current spec was applied (ms since the epoch): the later of the work's Applied
   * lastTransitionTime and the last write of the work's spec or metadata (managedFields entries without
   * a subresource: the hub's applies; Applied stays True across a spec change, so it alone would date
   * a retargeted copy back to its first apply).
   */
  appliedAt?: number;
  /**
   * The kind's own statusFeedback values (names outside the reserved ones); JsonRaw stays a string. At
   * most MAX_STATUS_FEEDBACK_RULES of them (the params' limit), each named as a rule may be.
   */
  extra: Record<string, FeedbackScalar>;
  /** The manifest could not be applied on the spoke (e.g. its namespace is missing). */
  applyError?: string;
  /** The agent could not evaluate the feedback rules (manifest condition StatusFeedbackSynced=False). */
  feedbackError?: string;
}

const CONDITION_STATUSES: readonly string[] = ['True', 'False', 'Unknown'];
const RESERVED = new Set(RESERVED_FEEDBACK_NAMES);
/**
 * The most feedback values one work can rightly carry: one per rule the hub writes (the reserved ones and
 * the kind's own). Entries past it are not read: an agent cannot make the hub walk or keep more.
 */
export const MAX_FEEDBACK_VALUES = RESERVED_FEEDBACK_NAMES.length + MAX_STATUS_FEEDBACK_RULES;

/**
 * What a work's feedback says, read once per version of the work: a status change of one copy reconciles a
 * policy on thousands of clusters, whose other works the caches hold unchanged. Kept per status object, and
 * only for works whose read parts the caches froze (core/works/cacheview.ts): a part that can change in place is read
 * each time. The feedback kept is frozen: every reader shares it.
 */
const readFeedbacks = new WeakMap<object, { spec: unknown; generation: unknown; managedFields: unknown; feedback: ClusterFeedback }>();

export function readClusterFeedback(work: KubeObject): ClusterFeedback {
  const { status, spec } = work;
  const { generation, managedFields } = work.metadata;
  if (!isRecord(status) || !frozenOrAbsent(status) || !frozenOrAbsent(spec) || !frozenOrAbsent(managedFields)) return readFeedbackOf(work);
  const known = readFeedbacks.get(status);
  if (known && known.spec === spec && known.generation === generation && known.managedFields === managedFields) return known.feedback;
  const feedback = deepFreeze(readFeedbackOf(work));
  readFeedbacks.set(status, { spec, generation, managedFields, feedback });
  return feedback;
}

function frozenOrAbsent(value: unknown): boolean {
  return value === undefined || value === null || typeof value !== 'object' || Object.isFrozen(value);
}

function readFeedbackOf(work: KubeObject): ClusterFeedback {
  const workConditions = readConditions(work);
  const appliedCondition = findCondition(workConditions, 'Applied');
  const generation = work.metadata.generation;
  const feedback: ClusterFeedback = {
    applied: appliedCondition?.status === 'True',
    available: findCondition(workConditions, 'Available')?.status === 'True',
    appliedObservedCurrent:
      appliedCondition !== undefined &&
      typeof generation === 'number' &&
      appliedCondition.observedGeneration === generation,
    ancestors: [],
    extra: {},
  };
  const appliedAt = appliedSince(work, appliedCondition);
  if (appliedAt !== undefined) feedback.appliedAt = appliedAt;

  const manifest = ourManifest(work.status);
  const values = readValues(manifest?.statusFeedback);
  const raw = rawConditions(values.get(RAW_CONDITIONS_FEEDBACK.name));

  const spokeGeneration = integer(values.get('generation'));
  if (spokeGeneration !== undefined) feedback.generation = spokeGeneration;
  const revision = string(values.get('revision'));
  const annotation = parseRevisionAnnotation(revision);
  if (annotation !== undefined) feedback.revision = annotation.revision;
  if (annotation?.tag !== undefined) feedback.revisionTag = annotation.tag;
  const accepted = scalarCondition(values, 'accepted') ?? rawCondition(raw, 'Accepted');
  if (accepted !== undefined) feedback.accepted = accepted;
  const enforced = scalarCondition(values, 'enforced') ?? rawCondition(raw, 'Enforced');
  if (enforced !== undefined) feedback.enforced = enforced;
  // A condition without its own observedGeneration observed what the status as a whole did.
  const statusObserved = integer(values.get('statusObservedGeneration'));
  if (statusObserved !== undefined) feedback.statusGeneration = statusObserved;
  const statusGeneration = enforced === undefined ? undefined : statusObserved;
  const enforcedGeneration = integer(values.get('enforcedGeneration')) ?? rawGeneration(raw, 'Enforced') ?? statusGeneration;
  if (enforcedGeneration !== undefined) feedback.enforcedGeneration = enforcedGeneration;
  const copy = placedCopy(work);
  const placedAnnotation = isRecord(copy?.metadata) && isRecord(copy.metadata.annotations) ? copy.metadata.annotations[REVISION_ANNOTATION] : undefined;
  const placed = parseRevisionAnnotation(typeof placedAnnotation === 'string' ? placedAnnotation : undefined);
  if (placed !== undefined) feedback.placed = placed;
  feedback.ancestors = copyGateways(copy).map((gateway, index) => ({ gateway, entries: ancestorEntries(values, index) }));
  const firstConditionType = spokeText(string(values.get('firstConditionType')), MAX_SPOKE_NAME_LENGTH);
  if (firstConditionType !== undefined) feedback.firstConditionType = firstConditionType;
  const firstAncestorName = spokeText(string(values.get('firstAncestorName')), MAX_SPOKE_NAME_LENGTH);
  if (firstAncestorName !== undefined) feedback.firstAncestorName = firstAncestorName;

  let extras = 0;
  for (const [name, value] of values) {
    if (RESERVED.has(name)) continue;
    if (extras++ >= MAX_STATUS_FEEDBACK_RULES) break;
    // A JsonRaw value is cut only here, where it is shown as text; above, it is parsed whole or not at all.
    feedback.extra[name] = value.type === 'JsonRaw' ? spokeText(value.value)! : value.value;
  }

  const manifestConditions = asConditionList(manifest?.conditions);
  const applyFailure = findCondition(manifestConditions, 'Applied');
  if (applyFailure?.status === 'False') {
    feedback.applyError = describe(applyFailure, 'the manifest was not applied');
  } else if (applyFailure === undefined && appliedCondition?.status === 'False') {
    // No per-manifest detail (e.g. the agent rejected the whole work): the work's own condition is all there is.
    feedback.applyError = describe(appliedCondition, 'the ManifestWork was not applied');
  }
  const feedbackFailure = findCondition(manifestConditions, 'StatusFeedbackSynced');
  if (feedbackFailure?.status === 'False') feedback.feedbackError = describe(feedbackFailure, 'status feedback failed');

  return feedback;
}

/** The Gateways whose ancestor rules the work carries, from the copy it holds (as the rules were made). */
function copyGateways(copy: Record<string, unknown> | undefined): string[] {
  if (!copy || !isRecord(copy.spec)) return [];
  return ancestorFeedbackGateways({ apiVersion: '', kind: '', metadata: { name: '' }, spec: copy.spec });
}

/** The copy the work places: its first manifest, unvalidated. */
function placedCopy(work: KubeObject): Record<string, unknown> | undefined {
  const workload = isRecord(work.spec) && isRecord(work.spec.workload) ? work.spec.workload : undefined;
  const manifests: unknown = workload?.manifests;
  const copy: unknown = Array.isArray(manifests) ? manifests[0] : undefined;
  return isRecord(copy) ? copy : undefined;
}

/**
 * The spoke's controller judged the copy the fed-back values were read from: the work agent applied the work's
 * current spec, and the copy's status observed the copy's current generation — on its Enforced condition, else
 * at status level (the Kuadrant operator's Accepted=False TargetNotFound says no more), else on every ancestor
 * entry. Whether that copy is the one wanted is the caller's question (judgedPlacedCopy, judgedRevision).
 */
export function judgedFedBackCopy(feedback: ClusterFeedback): boolean {
  const { generation } = feedback;
  if (!feedback.applied || !feedback.appliedObservedCurrent || generation === undefined) return false;
  if (feedback.enforcedGeneration !== undefined) return feedback.enforcedGeneration === generation;
  if (feedback.statusGeneration !== undefined) return feedback.statusGeneration === generation;
  const observed = feedback.ancestors.flatMap((a) => a.entries.map((e) => e.observedGeneration));
  return observed.length > 0 && observed.every((g) => g === generation);
}

/**
 * The spoke's controller judged the copy this work places now: the values were read from that copy (its
 * revision and tag, where the copy records them: a variant change keeps the revision and changes the tag, and
 * the agent acknowledges the new copy before its feedback catches up) and it observed that copy's generation.
 */
export function judgedPlacedCopy(feedback: ClusterFeedback): boolean {
  const { placed } = feedback;
  return feedback.revision === placed?.revision && feedback.revisionTag === placed?.tag && judgedFedBackCopy(feedback);
}

/**
 * The ancestor entries of the index-th Gateway. Each field comes as a list of its matches (one value
 * without the gate). The i-th value of a list as long as the statuses belongs to the i-th entry; a
 * shorter list (a field some entry lacks) cannot be matched up with the entries and is left out.
 */
function ancestorEntries(values: ReadonlyMap<string, TypedValue>, index: number): AncestorCondition[] {
  const field = (name: AncestorField) => values.get(ancestorFeedbackName(index, name));
  const statuses = valueList(field('Status'));
  const aligned = <T>(list: T[]): (T | undefined)[] => statuses.map((_, i) => (list.length === statuses.length ? list[i] : undefined));
  const reasons = aligned(valueList(field('Reason')).map(optionalString));
  const messages = aligned(valueList(field('Message')).map(optionalString));
  const generations = aligned(valueList(field('Generation')).map(optionalInteger));
  const controllers = aligned(valueList(field('Controller')).map(optionalString));
  const entries: AncestorCondition[] = [];
  statuses.forEach((status, i) => {
    if (typeof status !== 'string' || !isConditionStatus(status)) return;
    const entry: AncestorCondition = withText(status, reasons[i], messages[i]);
    const generation = generations[i];
    if (generation !== undefined) entry.observedGeneration = generation;
    const controllerName = spokeText(controllers[i], MAX_SPOKE_NAME_LENGTH);
    if (controllerName !== undefined) entry.controllerName = controllerName;
    entries.push(entry);
  });
  return entries;
}

/** A scalar value as a one-item list, a JsonRaw list (several matches, with the gate) as its items. */
function valueList(value: TypedValue | undefined): unknown[] {
  if (value === undefined) return [];
  if (value.type !== 'JsonRaw') return [value.value];
  try {
    const parsed: unknown = JSON.parse(value.value);
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

/** See ClusterFeedback.appliedAt. */
function appliedSince(work: KubeObject, applied: Condition | undefined): number | undefined {
  const times = [kubeTimeMillis(applied?.lastTransitionTime)];
  for (const entry of Array.isArray(work.metadata.managedFields) ? work.metadata.managedFields : []) {
    if (isRecord(entry) && !entry.subresource) times.push(kubeTimeMillis(entry.time));
  }
  const known = times.filter((time): time is number => time !== undefined);
  return known.length === 0 ? undefined : Math.max(...known);
}

type TypedValue =
  | { type: 'Integer'; value: number }
  | { type: 'String'; value: string }
  | { type: 'Boolean'; value: boolean }
  | { type: 'JsonRaw'; value: string };

interface ManifestStatus {
  statusFeedback?: unknown;
  conditions?: unknown;
}

/** The status entry of our single manifest: ordinal 0, else the first entry. */
function ourManifest(status: unknown): ManifestStatus | undefined {
  const manifests = isRecord(status) && isRecord(status.resourceStatus) ? status.resourceStatus.manifests : undefined;
  if (!Array.isArray(manifests)) return undefined;
  const entries = manifests.filter(isRecord);
  return entries.find((entry) => isRecord(entry.resourceMeta) && entry.resourceMeta.ordinal === 0) ?? entries[0];
}

/**
 * Feedback values by name, from the first MAX_FEEDBACK_VALUES entries. Skipped: entries named as no rule
 * can be, and those whose fieldValue does not hold a value of its declared type (or holds one too big).
 */
function readValues(statusFeedback: unknown): Map<string, TypedValue> {
  const values = new Map<string, TypedValue>();
  const list = isRecord(statusFeedback) ? statusFeedback.values : undefined;
  if (!Array.isArray(list)) return values;
  for (const entry of list.slice(0, MAX_FEEDBACK_VALUES)) {
    if (!isRecord(entry) || !isRuleName(entry.name) || values.has(entry.name)) continue;
    const value = typedValue(entry.fieldValue);
    if (value !== undefined) values.set(entry.name, value);
  }
  return values;
}

function isRuleName(name: unknown): name is string {
  return typeof name === 'string' && name.length <= MAX_FEEDBACK_RULE_NAME_LENGTH && FEEDBACK_RULE_NAME.test(name);
}

function typedValue(field: unknown): TypedValue | undefined {
  if (!isRecord(field)) return undefined;
  switch (field.type) {
    case 'Integer':
      return typeof field.integer === 'number' && Number.isInteger(field.integer) ? { type: 'Integer', value: field.integer } : undefined;
    case 'String':
      return typeof field.string === 'string' ? { type: 'String', value: spokeText(field.string)! } : undefined;
    case 'Boolean':
      return typeof field.boolean === 'boolean' ? { type: 'Boolean', value: field.boolean } : undefined;
    case 'JsonRaw':
      // Parsed later (ancestor lists, raw conditions): a cut JSON text would not parse, so too long is dropped.
      return typeof field.jsonRaw === 'string' && Buffer.byteLength(field.jsonRaw, 'utf8') <= MAX_SPOKE_JSON_BYTES
        ? { type: 'JsonRaw', value: field.jsonRaw }
        : undefined;
    default:
      return undefined;
  }
}

function integer(value: TypedValue | undefined): number | undefined {
  return value?.type === 'Integer' ? value.value : undefined;
}

function string(value: TypedValue | undefined): string | undefined {
  return value?.type === 'String' ? value.value : undefined;
}

/** `<prefix>Status/Reason/Message`; undefined unless the status is a String holding a condition status. */
function scalarCondition(values: ReadonlyMap<string, TypedValue>, prefix: 'accepted' | 'enforced'): FeedbackCondition | undefined {
  const status = string(values.get(`${prefix}Status`));
  if (status === undefined || !isConditionStatus(status)) return undefined;
  return withText(status, string(values.get(`${prefix}Reason`)), string(values.get(`${prefix}Message`)));
}

/** The raw `conditions` JsonRaw parsed as a list; empty when absent or not a JSON list. */
function rawConditions(value: TypedValue | undefined): Record<string, unknown>[] {
  if (value?.type !== 'JsonRaw') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.value);
  } catch {
    return [];
  }
  return Array.isArray(parsed) ? parsed.filter(isRecord) : [];
}

function rawCondition(conditions: readonly Record<string, unknown>[], type: string): FeedbackCondition | undefined {
  const found = conditions.find((c) => c.type === type);
  if (found === undefined || typeof found.status !== 'string' || !isConditionStatus(found.status)) return undefined;
  return withText(found.status, optionalString(found.reason), optionalString(found.message));
}

function rawGeneration(conditions: readonly Record<string, unknown>[], type: string): number | undefined {
  const generation = conditions.find((c) => c.type === type)?.observedGeneration;
  return typeof generation === 'number' && Number.isInteger(generation) ? generation : undefined;
}

/** The condition with the spoke's reason made a valid reason and its message capped; an empty reason is none. */
function withText(status: ConditionStatus, reason: string | undefined, message: string | undefined): FeedbackCondition {
  const condition: FeedbackCondition = { status };
  if (reason) condition.reason = eventReason(reason);
  const text = spokeText(message);
  if (text !== undefined) condition.message = text;
  return condition;
}

/** Well-formed conditions only: a type and a status string are needed to use one. */
function asConditionList(value: unknown): Condition[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (c): c is Condition => isRecord(c) && typeof c.type === 'string' && typeof c.status === 'string',
  );
}

function findCondition(conditions: readonly Condition[], type: string): Condition | undefined {
  return conditions.find((c) => isRecord(c) && c.type === type);
}

/** The condition's message, else its reason, else the fallback: never an empty error. */
function describe(condition: Condition, fallback: string): string {
  const message = spokeText(condition.message);
  if (message) return message;
  const reason = optionalString(condition.reason);
  return reason ? `${eventReason(reason)}: ${fallback}` : fallback;
}

function isConditionStatus(value: string): value is ConditionStatus {
  return CONDITION_STATUSES.includes(value);
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function optionalInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
