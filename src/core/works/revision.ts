// Which revision of a hub policy a cluster runs, read from its ManifestWork: the works are the record of a
// rollout (docs/design/rollout.md#rolling-out-a-change). A copy carries the hub policy's metadata.generation it
// was rendered from (with variants, and a tag naming its rendered spec: core/revisionannotation.ts); under Progressive a work also carries the copy its cluster ran before (to roll back to),
// and, while a cluster is held at an earlier revision during a rollout (it joined during it, or the halt
// rolled it back), a hold naming that rollout's revision. Pure.
import { z } from 'zod';
import { canonicalJson } from '../k8s/canonical.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { parseJson } from '../k8s/parsejson.ts';
import { PREVIOUS_COPY_ANNOTATION, REVISION_ANNOTATION, ROLLOUT_HOLD_ANNOTATION, VARIANTS_ANNOTATION } from '../metadatakeys.ts';
import { rehashWork, type ManifestWork } from './manifestwork.ts';
import { parseRevisionAnnotation } from '../revisionannotation.ts';

/** Why a cluster runs an earlier revision during a rollout. */
export type HoldCause = 'Joined' | 'RolledBack';

/** Where and why a rollout halted: the first failed cluster, in its controller's words. */
export interface HaltCause {
  cluster: string;
  reason: string;
  message: string;
}

export interface RolloutHold {
  /** The revision whose rollout holds the cluster back. */
  revision: number;
  /** With PolicyVariants, what that rollout's copies carry besides the revision (RolloutInput.variants). */
  variants?: string;
  cause: HoldCause;
  /** For RolledBack: why the rollout halted. */
  halt?: HaltCause;
}

const holdSchema = z.object({
  revision: z.int(),
  variants: z.string().optional(),
  cause: z.enum(['Joined', 'RolledBack']),
  halt: z.object({ cluster: z.string(), reason: z.string(), message: z.string() }).optional(),
});

const copySchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string() }),
});

/**
 * The revision a copy carries (REVISION_ANNOTATION, `<generation>` or `<generation>/<tag>`): the generation;
 * undefined for one written before revisions were recorded.
 */
export function copyRevision(copy: KubeObject | undefined): number | undefined {
  return parseRevisionAnnotation(copy?.metadata.annotations?.[REVISION_ANNOTATION])?.revision;
}

/** The tag of a copy rendered with variants (core/revisionannotation.ts); undefined for a copy no variant changes. */
export function copyRevisionTag(copy: KubeObject | undefined): string | undefined {
  return parseRevisionAnnotation(copy?.metadata.annotations?.[REVISION_ANNOTATION])?.tag;
}

/** A copy's revision as told to a person: `(unrecorded)` for a copy from before revisions were recorded. */
export function revisionText(copy: KubeObject | undefined): string {
  const r = copyRevision(copy);
  return r === undefined ? '(unrecorded)' : String(r);
}

/** The spoke copy a work places (its only manifest). */
export function workCopy(work: KubeObject | undefined): KubeObject | undefined {
  const manifests = (work?.spec as { workload?: { manifests?: unknown } } | undefined)?.workload?.manifests;
  const copy: unknown = Array.isArray(manifests) ? manifests[0] : undefined;
  return copySchema.safeParse(copy).success ? (copy as KubeObject) : undefined;
}

/** The revision a work places. */
export function workRevision(work: KubeObject | undefined): number | undefined {
  return copyRevision(workCopy(work));
}

/** The PolicyVariants a copy carries (VARIANTS_ANNOTATION), `name@generation`; undefined when none. */
export function copyVariants(copy: KubeObject | undefined): string[] | undefined {
  const text = copy?.metadata.annotations?.[VARIANTS_ANNOTATION];
  return text ? text.split(',') : undefined;
}

/** The PolicyVariants the work's copy carries. */
export function workVariants(work: KubeObject | undefined): string[] | undefined {
  return copyVariants(workCopy(work));
}

/** The copy the work's cluster ran before the revision it runs now; undefined when not recorded. */
export function previousCopy(work: KubeObject | undefined): KubeObject | undefined {
  const value = parseJson(work?.metadata.annotations?.[PREVIOUS_COPY_ANNOTATION], copySchema);
  return value;
}

export function rolloutHold(work: KubeObject | undefined): RolloutHold | undefined {
  const hold = parseJson(work?.metadata.annotations?.[ROLLOUT_HOLD_ANNOTATION], holdSchema);
  if (!hold) return undefined;
  return { revision: hold.revision, ...(hold.variants === undefined ? {} : { variants: hold.variants }), cause: hold.cause, ...(hold.halt ? { halt: hold.halt } : {}) };
}

/** Two copies with the same spec: what the spoke controller judges is the same (metadata is not judged). */
export function sameSpec(a: KubeObject | undefined, b: KubeObject | undefined): boolean {
  return a !== undefined && b !== undefined && canonicalJson(a.spec ?? {}) === canonicalJson(b.spec ?? {});
}

/**
 * The desired work placing `copy` instead of its own, with the rollout's records: the previous copy (to roll
 * back to) and the hold. Everything else (feedback rules, delete option, identity) stays the desired work's.
 */
export function workPlacing(desired: ManifestWork, copy: KubeObject, records: { previous?: KubeObject; hold?: RolloutHold }): ManifestWork {
  const annotations = { ...desired.metadata.annotations };
  if (records.previous) annotations[PREVIOUS_COPY_ANNOTATION] = canonicalJson(records.previous);
  if (records.hold) annotations[ROLLOUT_HOLD_ANNOTATION] = canonicalJson(records.hold);
  const [, ...others] = desired.spec.workload.manifests;
  return rehashWork({
    ...desired,
    metadata: { ...desired.metadata, annotations },
    spec: { ...desired.spec, workload: { manifests: [copy, ...others] } },
  });
}
