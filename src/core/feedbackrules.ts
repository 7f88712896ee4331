// ManifestWork feedback rules (DESIGN §4.3). Scalar JSONPaths work without OCM's
// RawFeedbackJsonString gate; only the opt-in raw `conditions` rule needs it.

export type FeedbackJsonPath = { name: string; path: string };
export type FeedbackRule = { type: 'JSONPaths'; jsonPaths: FeedbackJsonPath[] };

function conditionField(type: string, field: string): string {
  return `.status.conditions[?(@.type=="${type}")].${field}`;
}

const DEFAULT_JSON_PATHS: readonly FeedbackJsonPath[] = [
  { name: 'generation', path: '.metadata.generation' },
  { name: 'acceptedStatus', path: conditionField('Accepted', 'status') },
  { name: 'acceptedReason', path: conditionField('Accepted', 'reason') },
  { name: 'acceptedMessage', path: conditionField('Accepted', 'message') },
  { name: 'enforcedStatus', path: conditionField('Enforced', 'status') },
  { name: 'enforcedReason', path: conditionField('Enforced', 'reason') },
  { name: 'enforcedMessage', path: conditionField('Enforced', 'message') },
  { name: 'enforcedGeneration', path: conditionField('Enforced', 'observedGeneration') },
];

export const DEFAULT_FEEDBACK_NAMES: readonly string[] = DEFAULT_JSON_PATHS.map((rule) => rule.name);

/** The `--raw-feedback` rule: whole conditions list as JsonRaw (≤ 1024 bytes on the agent). */
export const RAW_CONDITIONS_FEEDBACK: FeedbackJsonPath = { name: 'conditions', path: '.status.conditions' };

/** Names a kind's `statusFeedback` may not use: they would shadow a built-in rule. */
export const RESERVED_FEEDBACK_NAMES: readonly string[] = [...DEFAULT_FEEDBACK_NAMES, RAW_CONDITIONS_FEEDBACK.name];

export function feedbackRulesFor(options: {
  rawFeedback: boolean;
  statusFeedback?: readonly FeedbackJsonPath[];
}): FeedbackRule[] {
  const jsonPaths = DEFAULT_JSON_PATHS.map((rule) => ({ ...rule }));
  if (options.rawFeedback) jsonPaths.push({ ...RAW_CONDITIONS_FEEDBACK });
  // Params validation rejects clashing names; skipping here keeps a work valid regardless.
  const taken = new Set(RESERVED_FEEDBACK_NAMES);
  for (const rule of options.statusFeedback ?? []) {
    if (taken.has(rule.name)) continue;
    taken.add(rule.name);
    jsonPaths.push({ name: rule.name, path: rule.path });
  }
  return [{ type: 'JSONPaths', jsonPaths }];
}
