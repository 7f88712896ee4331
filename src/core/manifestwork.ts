// One ManifestWork per (policy, cluster) carrying the spoke copy (DESIGN §4.1).
import { z } from 'zod';
import { canonicalJson, sha256Hex, specHash } from './canonical.ts';
import type { FeedbackRule } from './feedbackrules.ts';
import { parseJson } from './parsejson.ts';
import type { GroupVersionResource } from './gvr.ts';
import {
  CONTROLLER_LABEL,
  DELETE_OPTION_ANNOTATION,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  SOURCE_LABEL,
  SOURCE_REF_ANNOTATION,
  SPEC_HASH_ANNOTATION,
} from './metadatakeys.ts';
import type { KubeObject, ObjectMeta } from './objects.ts';

export const WORK_API_VERSION = 'work.open-cluster-management.io/v1';
export const WORK_KIND = 'ManifestWork';
/** The OCM agent's field manager must start with `work-agent`. */
export const WORK_AGENT_FIELD_MANAGER = 'work-agent-policy-sync';

/**
 * Longest ManifestWork name we produce. The spoke agent names its AppliedManifestWork
 * `<64-hex hub hash>-<work name>`, which must itself fit 253 characters (OCM HubHash note:
 * "the length of manifestwork name should be less than 189"), so 188, not 253.
 */
export const MAX_WORK_NAME_LENGTH = 188;
const NAME_HASH_LENGTH = 6;
const SOURCE_HASH_LENGTH = 16;

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
  /** ReadOnly: the agent only reads the object (for its feedback), never writes or deletes it. */
  updateStrategy: { type: 'ServerSideApply'; serverSideApply: { force: true; fieldManager: string } } | { type: 'ReadOnly' };
  feedbackRules: FeedbackRule[];
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

function sourceDigest(gvr: Pick<GroupVersionResource, 'group' | 'resource'>, namespace: string, name: string): string {
  return sha256Hex(`${gvr.group}/${gvr.resource}/${namespace}/${name}`);
}

/** 16 hex characters identifying the source policy; the value of the source label. */
export function sourceHash(gvr: Pick<GroupVersionResource, 'group' | 'resource'>, namespace: string, name: string): string {
  return sourceDigest(gvr, namespace, name).slice(0, SOURCE_HASH_LENGTH);
}

/**
 * `<resource>-<namespace>-<name>-<hash6>`, DNS-1123-subdomain-safe and at most MAX_WORK_NAME_LENGTH.
 * The hash covers the group, so equal resource names of different groups never share a name.
 */
export function manifestWorkName(gvr: GroupVersionResource, namespace: string, name: string): string {
  const suffix = sourceDigest(gvr, namespace, name).slice(0, NAME_HASH_LENGTH);
  const readable = toDnsSubdomainChars(`${gvr.resource}-${namespace}-${name}`.toLowerCase());
  const head = trimSeparators(readable.slice(0, MAX_WORK_NAME_LENGTH - NAME_HASH_LENGTH - 1));
  return head === '' ? suffix : `${head}-${suffix}`;
}

function toDnsSubdomainChars(text: string): string {
  const replaced = text
    .replace(/[^a-z0-9.-]/g, '-')
    .replace(/-+/g, '-')
    // A dot must sit between two alphanumerics: "a-.-b" and "a..b" become "a.b".
    .replace(/[-.]*\.[-.]*/g, '.');
  return trimSeparators(replaced);
}

function trimSeparators(text: string): string {
  return text.replace(/^[-.]+|[-.]+$/g, '');
}

/** Hub annotation `policysync.kuadrant.io/delete-option: Orphan` keeps spoke copies; anything else is Foreground. */
export function deleteOptionFor(policy: KubeObject): DeleteOption {
  return policy.metadata.annotations?.[DELETE_OPTION_ANNOTATION] === 'Orphan' ? 'Orphan' : 'Foreground';
}

export interface BuildManifestWorkInput {
  gvr: GroupVersionResource;
  policy: KubeObject;
  cluster: string;
  copy: KubeObject;
  feedbackRules: FeedbackRule[];
  deleteOption: DeleteOption;
  /** Value of the controller label (see controllerLabelValue); omitted when undefined. */
  controller?: string;
  /** metadata.uid of the kind's CRD (see SourceRef.crdUid); omitted when undefined. */
  crdUid?: string;
}

/** The controller label value for a --controller-name: a hash, since the name holds `/`. */
export function controllerLabelValue(controllerName: string): string {
  return sha256Hex(controllerName).slice(0, SOURCE_HASH_LENGTH);
}

export function buildManifestWork(input: BuildManifestWorkInput): ManifestWork {
  const { gvr, policy, cluster, copy, feedbackRules, deleteOption } = input;
  const namespace = policy.metadata.namespace ?? '';
  const { name, uid } = policy.metadata;
  const sourceRef: SourceRef = { group: gvr.group, version: gvr.version, resource: gvr.resource, namespace, name };
  if (uid !== undefined) sourceRef.uid = uid;
  if (input.crdUid !== undefined) sourceRef.crdUid = input.crdUid;

  const labels: Record<string, string> = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [SOURCE_LABEL]: sourceHash(gvr, namespace, name) };
  if (input.controller !== undefined) labels[CONTROLLER_LABEL] = input.controller;
  const spec: ManifestWorkSpec = {
    workload: { manifests: [copy] },
    deleteOption: { propagationPolicy: deleteOption },
    manifestConfigs: [
      {
        resourceIdentifier: {
          group: gvr.group,
          resource: gvr.resource,
          name: copy.metadata.name,
          namespace: copy.metadata.namespace ?? '',
        },
        updateStrategy: {
          type: 'ServerSideApply',
          serverSideApply: { force: true, fieldManager: WORK_AGENT_FIELD_MANAGER },
        },
        feedbackRules,
        feedbackScrapeType: 'Watch',
      },
    ],
  };
  const annotations: Record<string, string> = { [SOURCE_REF_ANNOTATION]: canonicalJson(sourceRef) };
  // Covers labels and source-ref too: a recreated policy (new uid, same spec) must be rewritten.
  annotations[SPEC_HASH_ANNOTATION] = specHash({ metadata: { labels, annotations }, spec });

  return {
    apiVersion: WORK_API_VERSION,
    kind: WORK_KIND,
    metadata: { name: manifestWorkName(gvr, namespace, name), namespace: cluster, labels, annotations },
    spec,
  };
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
  const parsed = parseJson(annotations[SOURCE_REF_ANNOTATION], sourceRefSchema);
  let ref: SourceRef | undefined;
  if (parsed) {
    const { uid, crdUid, ...rest } = parsed;
    ref = { ...rest, ...(uid === undefined ? {} : { uid }), ...(crdUid === undefined ? {} : { crdUid }) };
  }
  if (Object.isFrozen(annotations)) sourceRefs.set(annotations, ref ? Object.freeze(ref) : null);
  return ref;
}
const sourceRefs = new WeakMap<object, SourceRef | null>();

/** The spec-hash annotation of an observed work. */
export function readSpecHash(work: KubeObject): string | undefined {
  return work.metadata.annotations?.[SPEC_HASH_ANNOTATION];
}

/** Size of the work as sent to the apiserver, for the `--max-work-bytes` limit. */
export function workSizeBytes(work: KubeObject): number {
  return Buffer.byteLength(JSON.stringify(work), 'utf8');
}
