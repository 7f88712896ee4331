// The copy of a hub policy placed on a spoke (docs/design/works.md#the-spoke-copy): only what the spoke needs, and never
// our own hub annotations (a status write on the hub would otherwise re-apply every copy: a loop).
import { formatKubeTime } from '../k8s/kubetime.ts';
import {
  LAST_APPLIED_ANNOTATION,
  ORIGIN_CREATION_ANNOTATION,
  OWN_KEY_PREFIX,
  POLICIES_SYNCED_ANNOTATION,
  POLICY_SYNCED_ANNOTATION,
  REVISION_ANNOTATION,
} from '../metadatakeys.ts';
import { objectKey } from '../k8s/objects.ts';
import type { KubeObject, ObjectMeta } from '../k8s/objects.ts';

export interface SpokeCopyOptions {
  /** The rendered downstream namespace of the targeted Gateway(s) on this cluster. */
  downstreamNamespace: string;
  /** The policy spec with targets already rewritten for this cluster (see rewriteTargets). */
  spec: Record<string, unknown>;
}

/** Whether a hub annotation must stay on the hub. */
export function isHubOnlyAnnotation(key: string): boolean {
  return key === LAST_APPLIED_ANNOTATION || key === POLICIES_SYNCED_ANNOTATION || key.startsWith(OWN_KEY_PREFIX);
}

export function buildSpokeCopy(policy: KubeObject, options: SpokeCopyOptions): KubeObject {
  const metadata: ObjectMeta = { name: policy.metadata.name, namespace: options.downstreamNamespace };

  const labels = stringEntries(policy.metadata.labels);
  if (labels.length > 0) metadata.labels = Object.fromEntries(labels);

  const annotations: Record<string, string> = Object.fromEntries(
    stringEntries(policy.metadata.annotations).filter(([key]) => !isHubOnlyAnnotation(key)),
  );
  annotations[POLICY_SYNCED_ANNOTATION] = objectKey(policy);
  const originCreation = formatKubeTime(policy.metadata.creationTimestamp);
  if (originCreation !== undefined) annotations[ORIGIN_CREATION_ANNOTATION] = originCreation;
  // The revision (the hub spec's generation) travels with the copy and comes back by feedback, so the hub
  // knows which revision the spoke controller's verdict is about (docs/design/rollout.md#rolling-out-a-change).
  // It changes only with the hub spec: no loop through status writes.
  const { generation } = policy.metadata;
  if (typeof generation === 'number') annotations[REVISION_ANNOTATION] = String(generation);
  metadata.annotations = annotations;

  return { apiVersion: policy.apiVersion, kind: policy.kind, metadata, spec: options.spec };
}

function stringEntries(map: Record<string, unknown> | undefined): [string, string][] {
  return Object.entries(map ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
}
