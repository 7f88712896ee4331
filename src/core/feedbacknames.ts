// The built-in ManifestWork feedback rules by name (docs/design/works.md#feedback-rules): the values the hub reads
// back from each copy's status, which are the names a kind's own `statusFeedback` may not use (core/params/params.ts
// refuses them), with the fixed JSONPaths of the rules every copy carries. The rules of one copy, and why none of
// their paths can error on the agent: core/works/feedbackrules.ts. Beside the metadata keys, below the params that
// check the names and the works that build and read the rules.

export type FeedbackJsonPath = { name: string; path: string };

function conditionField(type: string, field: string): string {
  return `.status.conditions[?(@.type=="${type}")].${field}`;
}

export const DEFAULT_JSON_PATHS: readonly FeedbackJsonPath[] = [
  { name: 'generation', path: '.metadata.generation' },
  // The hub revision the copy carries (works/spokecopy.ts): read in the same snapshot as the status, so a verdict
  // is known to be about that revision. The annotation key's dots are escaped (client-go jsonpath).
  { name: 'revision', path: '.metadata.annotations.policysync\\.kuadrant\\.io/revision' },
  { name: 'acceptedStatus', path: conditionField('Accepted', 'status') },
  { name: 'acceptedReason', path: conditionField('Accepted', 'reason') },
  { name: 'acceptedMessage', path: conditionField('Accepted', 'message') },
  { name: 'enforcedStatus', path: conditionField('Enforced', 'status') },
  { name: 'enforcedReason', path: conditionField('Enforced', 'reason') },
  { name: 'enforcedMessage', path: conditionField('Enforced', 'message') },
  { name: 'enforcedGeneration', path: conditionField('Enforced', 'observedGeneration') },
  // The Kuadrant operator writes its whole status at once with observedGeneration at status level only,
  // never on its conditions: what its Enforced condition observed is read from there.
  { name: 'statusObservedGeneration', path: '.status.observedGeneration' },
  // Evidence of a status the hub does not read (no Accepted/Enforced condition, no ancestor entry for the
  // copy's Gateways): the first entry of each list. `[::100]` is the first entry without `[0]`'s error on
  // an empty list; Gateway API caps ancestors at 16 and conditions at 8, so one entry is all it gives.
  { name: 'firstConditionType', path: '.status.conditions[::100].type' },
  { name: 'firstAncestorName', path: '.status.ancestors[::100].ancestorRef.name' },
];

export const DEFAULT_FEEDBACK_NAMES: readonly string[] = DEFAULT_JSON_PATHS.map((rule) => rule.name);

/** The `--raw-feedback` rule: whole conditions list as JsonRaw (≤ 1024 bytes on the agent). */
export const RAW_CONDITIONS_FEEDBACK: FeedbackJsonPath = { name: 'conditions', path: '.status.conditions' };

/**
 * GEP-713 `status.ancestors[]` is read per Gateway the copy targets, so rules are made per copy. At most
 * this many distinct Gateways of a copy get them (the first in name order; the rest are not read): five
 * rules each keep a work small, and a copy targets one or two Gateways in practice.
 */
export const MAX_ANCESTOR_GATEWAYS = 8;

/** What is read of the ancestor entries naming one Gateway; the rule name is `ancestor<index><field>`. */
export const ANCESTOR_FIELDS = ['Status', 'Reason', 'Message', 'Generation', 'Controller'] as const;
export type AncestorField = (typeof ANCESTOR_FIELDS)[number];

/** The feedback rule name of one field of the index-th Gateway of ancestorFeedbackGateways (works/feedbackrules.ts). */
export function ancestorFeedbackName(index: number, field: AncestorField): string {
  return `ancestor${index}${field}`;
}

const ANCESTOR_FEEDBACK_NAMES: readonly string[] = Array.from({ length: MAX_ANCESTOR_GATEWAYS }, (_, index) =>
  ANCESTOR_FIELDS.map((field) => ancestorFeedbackName(index, field)),
).flat();

/** Names a kind's `statusFeedback` may not use: they would shadow a built-in rule. */
export const RESERVED_FEEDBACK_NAMES: readonly string[] = [...DEFAULT_FEEDBACK_NAMES, ...ANCESTOR_FEEDBACK_NAMES, RAW_CONDITIONS_FEEDBACK.name];
