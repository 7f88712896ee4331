// One ManifestWork per (policy, cluster) carrying the spoke copy (docs/design/works.md#manifestworks).
import { z } from 'zod';
import { canonicalJson, sha256Hex, sharedCanonical, specHash } from '../k8s/canonical.ts';
import type { FeedbackRule } from './feedbackrules.ts';
import { Generations } from '../k8s/intern.ts';
import { parseJson } from '../k8s/parsejson.ts';
import type { GroupVersionResource } from '../k8s/gvr.ts';
import {
  CONTROLLER_LABEL,
  DELETE_OPTION_ANNOTATION,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  SOURCE_LABEL,
  SOURCE_REF_ANNOTATION,
  REAPPLY_LABEL,
  SPEC_HASH_ANNOTATION,
} from '../metadatakeys.ts';
import type { KubeObject, ObjectMeta } from '../k8s/objects.ts';
import { dnsSubdomainChars, trimSeparators } from '../k8s/sanitize.ts';

export const WORK_API_VERSION = 'work.open-cluster-management.io/v1';
export const WORK_KIND = 'ManifestWork';

/**
 * Longest ManifestWork name we produce. The spoke agent names its AppliedManifestWork
 * `<64-hex hub hash>-<work name>`, which must itself fit 253 characters (OCM HubHash note:
 * "the length of manifestwork name should be less than 189"), so 188, not 253.
 */
export const MAX_WORK_NAME_LENGTH = 188;
/**
 * Hex characters of the identity hash ending a work name: 128 bits. Two policies sharing a work delete
 * each other's copy, so a shared name must not be craftable, not even as a pair of the crafter's own
 * (a birthday search costs 2^64 hashes here; at 64 bits it would cost 2^32, an afternoon).
 */
export const WORK_NAME_HASH_LENGTH = 32;
/** The 24-bit hash of names written before the identity hash (legacyWorkName). */
const LEGACY_NAME_HASH_LENGTH = 6;
const SOURCE_HASH_LENGTH = 16;
/** Domain of the name hash: its input cannot be mistaken for any other hash input of ours. */
const WORK_NAME_HASH_DOMAIN = 'policysync.kuadrant.io/work-name/v2';

export type DeleteOption = 'Foreground' | 'Orphan';

export type SourceRef = {
  group: string;
  version: string;
  resource: string;
  namespace: string;
  name: string;
  uid?: string;
  /**
   * metadata.uid of the kind's CRD when the work was written: a policy that vanished with its CRD
   * (deleted or re-created) is told apart from one a user deleted (core/removal.ts).
   */
  crdUid?: string;
};

export type ManifestConfig = {
  resourceIdentifier: { group: string; resource: string; name: string; namespace: string };
  /**
   * Update: the copy's strategy (see COPY_UPDATE_STRATEGY). ReadOnly: the agent only reads the object (for its
   * feedback), never writes or deletes it.
   */
  updateStrategy: { type: 'Update' } | { type: 'ServerSideApply'; serverSideApply: { force: true; fieldManager: string } } | { type: 'ReadOnly' };
  feedbackRules: readonly FeedbackRule[];
  feedbackScrapeType: 'Watch';
};

export type ManifestWorkSpec = {
  workload: { manifests: KubeObject[] };
  deleteOption: { propagationPolicy: DeleteOption };
  manifestConfigs: ManifestConfig[];
};

export interface ManifestWork extends KubeObject {
  metadata: ObjectMeta & { namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: ManifestWorkSpec;
}

/** Unambiguous for valid names: none of group, resource, namespace or name can hold a `/`. */
function sourceDigest(gvr: Pick<GroupVersionResource, 'group' | 'resource'>, namespace: string, name: string): string {
  return lastDigest(`${gvr.group}/${gvr.resource}/${namespace}/${name}`);
}

/**
 * sha256Hex, remembering the last text: a policy's works are built one after another, one per cluster whose copy
 * differs (PolicyVariants make each differ), and each names the same source.
 */
function rememberLast(): (text: string) => string {
  let last: { text: string; digest: string } | undefined;
  return (text) => {
    if (last?.text !== text) last = { text, digest: sha256Hex(text) };
    return last.digest;
  };
}
const lastDigest = rememberLast();
const lastNameDigest = rememberLast();

/** 16 hex characters identifying the source policy; the value of the source label. */
export function sourceHash(gvr: Pick<GroupVersionResource, 'group' | 'resource'>, namespace: string, name: string): string {
  return sourceDigest(gvr, namespace, name).slice(0, SOURCE_HASH_LENGTH);
}

type GroupResource = Pick<GroupVersionResource, 'group' | 'resource'>;

/**
 * The work name of a policy: `<resource>-<namespace>-<name>` made DNS-safe and cut (to read), then `-`
 * and WORK_NAME_HASH_LENGTH hex of sha256 over the JSON list [group, resource, namespace, name] (to
 * identify: a JSON list cannot be read two ways, where `a-b`+`c` and `a`+`b-c` read alike). At most
 * MAX_WORK_NAME_LENGTH characters, a DNS-1123 subdomain. The version is left out: works are keyed by
 * group and resource (docs/architecture.md#keys).
 */
export function workName(gr: GroupResource, namespace: string, name: string): string {
  const identity = JSON.stringify([gr.group, gr.resource, namespace, name]);
  const suffix = lastNameDigest(`${WORK_NAME_HASH_DOMAIN}\n${identity}`).slice(0, WORK_NAME_HASH_LENGTH);
  return readableWithSuffix(`${gr.resource}-${namespace}-${name}`, suffix);
}

/**
 * The name earlier versions gave a work: the same readable part, `-<hash6>` of
 * `group/resource/namespace/name`. Only read (workIdentity): such a work is adopted under its name,
 * never renamed, since deleting a work deletes the spoke copy and switches the policy off there.
 */
export function legacyWorkName(gr: GroupResource, namespace: string, name: string): string {
  const suffix = sourceDigest(gr, namespace, name).slice(0, LEGACY_NAME_HASH_LENGTH);
  return readableWithSuffix(`${gr.resource}-${namespace}-${name}`, suffix);
}

/**
 * `<readable>-<suffix>`, the readable part made DNS-safe and cut so that the whole fits
 * MAX_WORK_NAME_LENGTH. A legacy name ends in 6 hex after its last `-`, a current one in 32: the two
 * schemes never give one name.
 */
function readableWithSuffix(readable: string, suffix: string): string {
  const head = trimSeparators(dnsSubdomainChars(readable).slice(0, MAX_WORK_NAME_LENGTH - suffix.length - 1));
  return head === '' ? suffix : `${head}-${suffix}`;
}

/** Hub annotation `policysync.kuadrant.io/delete-option: Orphan` keeps spoke copies; anything else is Foreground. */
export function deleteOptionFor(policy: KubeObject): DeleteOption {
  return policy.metadata.annotations?.[DELETE_OPTION_ANNOTATION] === 'Orphan' ? 'Orphan' : 'Foreground';
}

/** The OCM agent's field manager must start with `work-agent`. */
export const WORK_AGENT_FIELD_MANAGER = 'work-agent-policy-sync';

/** How the OCM work agent applies a copy: see copyUpdateStrategy. */
export type CopyUpdateStrategy = 'Update' | 'ServerSideApply';

/**
 * How the OCM work agent (v1.2.1) applies a copy of a kind. `Update` where the kind's status is a subresource:
 * the agent creates a missing copy with its owner reference (the AppliedManifestWork, for the Foreground delete)
 * in one write, and afterwards, at each pass (a change of the work, or its 4-minute resync), reads it and writes
 * it whole again only when its spec, or one of our labels, annotations or that owner reference, differs — a
 * spoke drift is put back, the status (a subresource) untouched, and an existing copy converts in place with no
 * write. Not `ServerSideApply` there: after an apply that creates the copy, the agent merge-patches the owner
 * reference on in a second write 4–90 ms later (helper.ApplyOwnerReferences). A spoke controller that judged the
 * copy between the two, such as the Kuadrant operator v1.2.0, has its status write refused for the stale
 * resourceVersion, drops it, and ignores the patch (a metadata-only change): the copy would stay without a
 * verdict until something else changed on that cluster (test/e2e/fresh-copy-status.test.ts).
 *
 * `ServerSideApply` (forced, our field manager) for a kind without the status subresource: a whole write there
 * would replace the status the spoke's controller wrote. What Update does not do: remove a label or annotation
 * the hub copy no longer carries (it merges them, and OCM's `<key>-` removal marker cannot travel in a work: the hub
 * apiserver refuses it). Such keys are named on the copy instead (core/works/droppedkeys.ts).
 */
export function copyUpdateStrategy(strategy: CopyUpdateStrategy): ManifestConfig['updateStrategy'] {
  return strategy === 'Update' ? { type: 'Update' } : { type: 'ServerSideApply', serverSideApply: { force: true, fieldManager: WORK_AGENT_FIELD_MANAGER } };
}

export interface BuildManifestWorkInput {
  gvr: GroupVersionResource;
  policy: KubeObject;
  cluster: string;
  copy: KubeObject;
  feedbackRules: readonly FeedbackRule[];
  deleteOption: DeleteOption;
  /** Value of the controller label (see controllerLabelValue); omitted when undefined. */
  controller?: string;
  /** metadata.uid of the kind's CRD (see SourceRef.crdUid); omitted when undefined. */
  crdUid?: string;
  /** How the agent applies the copy (copyUpdateStrategy); default Update. */
  updateStrategy?: CopyUpdateStrategy;
}

/** The controller label value for a --controller-name: a hash, since the name holds `/`. */
export function controllerLabelValue(controllerName: string): string {
  return sha256Hex(controllerName).slice(0, SOURCE_HASH_LENGTH);
}

export function buildManifestWork(input: BuildManifestWorkInput): ManifestWork {
  const { gvr, policy, cluster, copy } = input;
  const namespace = policy.metadata.namespace ?? '';
  const { name } = policy.metadata;
  const parts = policyParts(input);
  const labels = parts.labels as Record<string, string>;
  const spec: ManifestWorkSpec = { workload: { manifests: [copy] }, deleteOption: parts.deleteOption, manifestConfigs: parts.manifestConfigs as ManifestConfig[] };
  const annotations: Record<string, string> = { [SOURCE_REF_ANNOTATION]: parts.sourceRef };
  // Covers labels and source-ref too: a recreated policy (new uid, same spec) must be rewritten.
  const hashed = canonicalJson({ metadata: { labels, annotations }, spec });
  annotations[SPEC_HASH_ANNOTATION] = sha256Hex(hashed);

  const work: ManifestWork = {
    apiVersion: WORK_API_VERSION,
    kind: WORK_KIND,
    metadata: { name: workName(gvr, namespace, name), namespace: cluster, labels, annotations },
    spec,
  };
  // The work's JSON is the hashed text and five members more, each with a comma (sizes add up whatever the order
  // of members): the JSON of those five alone, less its two braces, plus one comma more than its four.
  const members = { apiVersion: work.apiVersion, kind: work.kind, name: work.metadata.name, namespace: cluster, [SPEC_HASH_ANNOTATION]: annotations[SPEC_HASH_ANNOTATION] };
  builtBytes.set(work, utf8Bytes(hashed) + utf8Bytes(JSON.stringify(members)) - 1);
  return work;
}

/** What the works of one policy (its copy alike but for per-cluster values) hold alike, frozen and serialised once. */
interface PolicyParts {
  key: string;
  feedbackRules: readonly FeedbackRule[];
  sourceRef: string;
  labels: Readonly<Record<string, string>>;
  deleteOption: ManifestWorkSpec['deleteOption'];
  manifestConfigs: readonly ManifestConfig[];
}

/**
 * The parts of the last policy's works: its works are built one after another, one per cluster whose copy differs
 * (PolicyVariants make each differ), and their spec-hashes then serialise each part once.
 */
let lastParts: PolicyParts | undefined;

function policyParts(input: BuildManifestWorkInput): PolicyParts {
  const { gvr, policy, copy, feedbackRules } = input;
  const namespace = policy.metadata.namespace ?? '';
  const { name, uid } = policy.metadata;
  const updateStrategy = copyUpdateStrategy(input.updateStrategy ?? 'Update');
  const copyNamespace = copy.metadata.namespace ?? '';
  const key = JSON.stringify([gvr.group, gvr.version, gvr.resource, namespace, name, uid, input.crdUid, input.controller, input.deleteOption, copy.metadata.name, copyNamespace, updateStrategy]);
  if (lastParts?.key === key && lastParts.feedbackRules === feedbackRules) return lastParts;
  const sourceRef = sourceRefOf(gvr, policy, input.crdUid);
  const labels: Record<string, string> = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [SOURCE_LABEL]: sourceHash(gvr, namespace, name) };
  if (input.controller !== undefined) labels[CONTROLLER_LABEL] = input.controller;
  const resourceIdentifier = { group: gvr.group, resource: gvr.resource, name: copy.metadata.name, namespace: copyNamespace };
  lastParts = {
    key,
    feedbackRules,
    sourceRef: canonicalJson(sourceRef),
    labels: sharedCanonical(labels),
    deleteOption: sharedCanonical({ propagationPolicy: input.deleteOption }),
    manifestConfigs: sharedCanonical([{ resourceIdentifier, updateStrategy, feedbackRules, feedbackScrapeType: 'Watch' as const }]),
  };
  return lastParts;
}

/** The source-ref of a work of `policy` (SOURCE_REF_ANNOTATION holds its canonical JSON). */
export function sourceRefOf(gvr: GroupVersionResource, policy: KubeObject, crdUid?: string): SourceRef {
  const { name, uid } = policy.metadata;
  const sourceRef: SourceRef = { group: gvr.group, version: gvr.version, resource: gvr.resource, namespace: policy.metadata.namespace ?? '', name };
  if (uid !== undefined) sourceRef.uid = uid;
  if (crdUid !== undefined) sourceRef.crdUid = crdUid;
  return sourceRef;
}

/** The JSON size of each work buildManifestWork made, taken from the text it hashed. */
const builtBytes = new WeakMap<ManifestWork, number>();

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The work with REAPPLY_LABEL at `token` (the spec-hash with it); the work itself when it carries it already. */
export function withReapplyLabel(work: ManifestWork, token: string): ManifestWork {
  if (work.metadata.labels[REAPPLY_LABEL] === token) return work;
  return rehashWork({ ...work, metadata: { ...work.metadata, labels: { ...work.metadata.labels, [REAPPLY_LABEL]: token } } });
}

/**
 * Whether `written` is the `live` work but for its reapply label: a drift being put back (the same copy, the agent
 * told to apply it again), not a new revision. Cheap when the labels agree or `written` carries none.
 */
export function relabelledOnly(written: ManifestWork, live: KubeObject): boolean {
  const token = written.metadata.labels[REAPPLY_LABEL];
  const liveToken = live.metadata.labels?.[REAPPLY_LABEL];
  if (token === undefined || token === liveToken) return false;
  const { [REAPPLY_LABEL]: _token, ...labels } = written.metadata.labels;
  const asLive = rehashWork({ ...written, metadata: { ...written.metadata, labels: liveToken === undefined ? labels : { ...labels, [REAPPLY_LABEL]: liveToken } } });
  return readSpecHash(asLive) === readSpecHash(live);
}

/** The work with its spec-hash annotation recomputed, after its labels, annotations or spec were changed. */
export function rehashWork(work: ManifestWork): ManifestWork {
  const { [SPEC_HASH_ANNOTATION]: _old, ...annotations } = work.metadata.annotations;
  annotations[SPEC_HASH_ANNOTATION] = specHash({ metadata: { labels: work.metadata.labels, annotations }, spec: work.spec });
  return { ...work, metadata: { ...work.metadata, annotations } };
}

const sourceRefSchema = z.object({
  group: z.string(),
  version: z.string(),
  resource: z.string(),
  namespace: z.string(),
  name: z.string(),
  uid: z.string().optional(),
  crdUid: z.string().optional(),
});

/** The source policy of a work, from its source-ref annotation; undefined when absent or malformed. */
export function readSourceRef(work: KubeObject): SourceRef | undefined {
  const annotations = work.metadata.annotations;
  if (!annotations) return undefined;
  // Cached works are read again and again (indexes, event keys, start-up passes over every work) and
  // never mutated: the annotation is parsed once per annotations object.
  const known = sourceRefs.get(annotations);
  if (known !== undefined) return known ?? undefined;
  const text = annotations[SOURCE_REF_ANNOTATION];
  const cached = Object.isFrozen(annotations);
  // A policy's works on many clusters carry one text, but not one annotations object when each cluster's
  // copy differs (its own spec-hash and revision tag, docs/concepts/variants.md): parsed once per text too.
  const shared = cached && text !== undefined ? sourceRefsByText.get(text) : undefined;
  const ref = shared !== undefined ? shared : parseSourceRef(text);
  if (cached) {
    if (shared === undefined && text !== undefined) sourceRefsByText.set(text, ref && Object.freeze(ref));
    sourceRefs.set(annotations, ref);
  }
  return ref ?? undefined;
}

function parseSourceRef(text: string | undefined): SourceRef | null {
  const parsed = parseJson(text, sourceRefSchema);
  if (!parsed) return null;
  const { uid, crdUid, ...rest } = parsed;
  return { ...rest, ...(uid === undefined ? {} : { uid }), ...(crdUid === undefined ? {} : { crdUid }) };
}
const sourceRefs = new WeakMap<object, SourceRef | null>();
/** Bounded: what no cached work reads any more is dropped within two generations. */
const sourceRefsByText = new Generations<string, SourceRef | null>(4096, 1 << 16);

/**
 * The source policy of a work, validated: only when its source-ref annotation parses, its source label is
 * sourceHash of that source, and its name is the one workName or legacyWorkName gives that source.
 * Undefined otherwise: a work whose parts disagree (edited by hand, or made to pose as another policy's)
 * is nobody's, so no policy's reconcile adopts, rewrites or deletes it as its own.
 */
export function workIdentity(work: KubeObject): SourceRef | undefined {
  const { annotations, labels, name } = work.metadata;
  const source = readSourceRef(work);
  if (!source || !labels) return undefined;
  // Cached works share frozen labels and annotations (cacheview.ts), and are read again and again.
  const known = annotations ? identities.get(annotations) : undefined;
  if (known && known.labels === labels && known.name === name) return known.identity ?? undefined;
  const { group, resource, namespace } = source;
  const valid =
    labels[SOURCE_LABEL] === sourceHash(source, namespace, source.name) &&
    (name === workName({ group, resource }, namespace, source.name) || name === legacyWorkName({ group, resource }, namespace, source.name));
  if (annotations && Object.isFrozen(annotations) && Object.isFrozen(labels)) identities.set(annotations, { labels, name, identity: valid ? source : null });
  return valid ? source : undefined;
}
const identities = new WeakMap<object, { labels: object; name: string; identity: SourceRef | null }>();

/**
 * The desired work under the name of the observed work of the same policy on the same cluster when that
 * one has its legacy name: the hub updates it in place rather than delete it and create another (which
 * would delete the spoke copy and create it again). Otherwise the desired work as it is.
 */
export function adoptLegacyName(desired: ManifestWork, observed: readonly KubeObject[]): ManifestWork {
  // Most often every work in place has the current name: nothing to read.
  if (observed.every((w) => w.metadata.name === desired.metadata.name)) return desired;
  const source = readSourceRef(desired);
  if (!source) return desired;
  const legacy = legacyWorkName(source, source.namespace, source.name);
  const adopted = observed.find(
    (w) => w.metadata.name === legacy && w.metadata.namespace === desired.metadata.namespace && sameSource(workIdentity(w), source),
  );
  return adopted ? { ...desired, metadata: { ...desired.metadata, name: legacy } } : desired;
}

function sameSource(a: SourceRef | undefined, b: SourceRef): boolean {
  return a !== undefined && a.group === b.group && a.resource === b.resource && a.namespace === b.namespace && a.name === b.name;
}

/** The spec-hash annotation of an observed work. */
export function readSpecHash(work: KubeObject): string | undefined {
  return work.metadata.annotations?.[SPEC_HASH_ANNOTATION];
}

/** Size of the work as sent to the apiserver, for the `--max-work-bytes` limit. */
export function workSizeBytes(work: KubeObject): number {
  return builtBytes.get(work as ManifestWork) ?? utf8Bytes(JSON.stringify(work));
}
