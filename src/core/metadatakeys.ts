// Every label and annotation key the controller reads or writes, in one place so that
// the spoke copy can strip exactly "our own" keys.

/** Prefix of every annotation and label this controller owns. */
export const OWN_KEY_PREFIX = 'policysync.kuadrant.io/';

/** RFC annotation on the hub policy: where it was synced (see policiessynced.ts). */
export const POLICIES_SYNCED_ANNOTATION = 'kuadrant.io/policies-synced';
/** Aggregated per-cluster status on the hub policy. */
export const STATUS_ANNOTATION = `${OWN_KEY_PREFIX}status`;
/**
 * On a hub policy this controller stopped placing while spoke agents report to it (its Gateways deleted, or
 * retargeted to none of ours): the controller's label value. Once its works are gone nothing else on the hub says
 * the policy was ours, and a copy OCM's work agent left behind would be nobody's to witness and hand back
 * (core/pipeline/withdrawal.ts). Written with the clearing of our other annotations; removed once no report shows a
 * copy, or when the policy is ours again.
 */
export const WITHDRAWN_BY_ANNOTATION = `${OWN_KEY_PREFIX}withdrawn-by`;
/** Hub policy opt-in: `Orphan` leaves the spoke copy behind when its work is deleted. */
export const DELETE_OPTION_ANNOTATION = `${OWN_KEY_PREFIX}delete-option`;

/** On a spoke copy: `<hub namespace>/<hub name>` of its source; marks it as synced (not local). */
export const POLICY_SYNCED_ANNOTATION = 'kuadrant.io/policy-synced';
/** On a spoke copy: the hub policy's creationTimestamp, for GEP-713 oldest-wins on the spoke. */
export const ORIGIN_CREATION_ANNOTATION = 'kuadrant.io/origin-creation';

/**
 * On a spoke copy: the digest of what the hub sent in it (core/works/copydigest.ts): the spoke agent reads the copy
 * against it and reports what differs (core/spoke/copydrift.ts).
 */
export const DIGEST_ANNOTATION = `${OWN_KEY_PREFIX}digest`;

/** kubectl's client-side apply record: large, and meaningless on the spoke. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** ManifestWork label: which controller manages it. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'policy-sync';
/** ManifestWork label: 16-hex hash of the source policy, to select all works of one policy. */
export const SOURCE_LABEL = `${OWN_KEY_PREFIX}source`;
/** Which hub controller (by a hash of its --controller-name) owns a work: several may share a hub. */
export const CONTROLLER_LABEL = `${OWN_KEY_PREFIX}controller`;
/** ManifestWork annotation: canonical JSON {group, version, resource, namespace, name, uid} of the source. */
export const SOURCE_REF_ANNOTATION = `${OWN_KEY_PREFIX}source-ref`;
/**
 * ManifestWork label: the token of the last drift of its copy the hub asked to put back (core/spoke/spoketruth.ts).
 * OCM's work agent applies a work again at once when its labels change (v1.2.1, manifestwork_controller.go
 * onUpdateFunc), rather than at its next resync.
 */
export const REAPPLY_LABEL = `${OWN_KEY_PREFIX}reapply`;
/**
 * ManifestWork label: a mending work (src/hub/lingeringmender.ts), valued with its policy's SOURCE_LABEL value: it
 * takes a lingering copy's lost work's name so that OCM's work agent deletes the copy, and holds no copy itself.
 */
export const MEND_LABEL = `${OWN_KEY_PREFIX}mend`;
/** ManifestWork annotation: hash of what we write, for no-op detection. */
export const SPEC_HASH_ANNOTATION = `${OWN_KEY_PREFIX}spec-hash`;

/** Hub policy: its rollout strategy, overriding its class's (`All`, `Progressive`, or a rolloutStrategy as JSON). */
export const ROLLOUT_STRATEGY_ANNOTATION = `${OWN_KEY_PREFIX}rollout-strategy`;
/** Hub policy: resumes the halted rollout of the revision (metadata.generation) it names. */
export const ROLLOUT_RESUME_ANNOTATION = `${OWN_KEY_PREFIX}rollout-resume`;
/**
 * On a spoke copy: the hub policy's metadata.generation the copy carries (its revision). Read back by a
 * feedback rule, so the hub knows which revision the spoke controller's verdict is about.
 */
export const REVISION_ANNOTATION = `${OWN_KEY_PREFIX}revision`;
/**
 * On a spoke copy: the PolicyVariants applied to it, `name@generation` in name order (core/variants/render.ts);
 * absent when none selects its cluster. Part of the revision a cluster runs (works/revision.ts).
 */
export const VARIANTS_ANNOTATION = `${OWN_KEY_PREFIX}variants`;
/** ManifestWork annotation (Progressive): canonical JSON of the copy the cluster ran before this revision. */
export const PREVIOUS_COPY_ANNOTATION = `${OWN_KEY_PREFIX}previous-copy`;
/**
 * ManifestWork annotation (Progressive): the cluster is held at an earlier revision during the rollout of the
 * one named, because it joined during it or was rolled back by its halt (canonical JSON, works/revision.ts).
 */
export const ROLLOUT_HOLD_ANNOTATION = `${OWN_KEY_PREFIX}rollout-hold`;
