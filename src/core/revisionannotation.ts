// The copy's revision annotation (REVISION_ANNOTATION), the one value that tells the hub which copy a spoke
// controller's fed-back verdict is about (docs/design/variants.md#the-revision-a-cluster-runs): `<generation>` for
// a copy no PolicyVariant changes, `<generation>/<tag>` for one rendered with variants, the tag naming the rendered
// spec. A variant created, edited or deleted, or a cluster label it reads changed, leaves the generation as it is:
// the tag is what tells the new copy from the one before while the work agent's status feedback still describes
// that one. One annotation key, always present: the base copy's `"3"` replaces `"3/…"` on the spoke (an annotation
// of its own would be left behind there, as OCM's Update strategy merges annotations). Pure.
import { canonicalJson, sha256Hex } from './k8s/canonical.ts';

/** Hex digits of a written tag: 40 bits, ample to tell one copy of a policy on one cluster from the one before. */
export const REVISION_TAG_LENGTH = 10;

/** A revision annotation as read: the policy generation, and the rendered copy's tag when it carries one. */
export interface RevisionAnnotation {
  revision: number;
  tag?: string;
}

/** Digits (at most 15: a safe integer), optionally `/` and a lowercase hex tag of bounded length. */
const FORMAT = /^([0-9]{1,15})(?:\/([0-9a-f]{1,64}))?$/;

/** The annotation's generation and tag; undefined for anything not in the format (not a revision). */
export function parseRevisionAnnotation(text: string | undefined): RevisionAnnotation | undefined {
  const match = text === undefined ? null : FORMAT.exec(text);
  if (!match) return undefined;
  return { revision: Number(match[1]), ...(match[2] === undefined ? {} : { tag: match[2] }) };
}

/** The tag of a copy rendered with variants: the start of the sha256 of its spec's canonical JSON. */
export function revisionTag(spec: unknown): string {
  return sha256Hex(canonicalJson(spec ?? {})).slice(0, REVISION_TAG_LENGTH);
}

/** The annotation's text: `<generation>`, or `<generation>/<tag>` for a copy rendered with variants. */
export function formatRevisionAnnotation(annotation: RevisionAnnotation): string {
  return annotation.tag === undefined ? String(annotation.revision) : `${annotation.revision}/${annotation.tag}`;
}
