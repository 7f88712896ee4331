// ManifestWork feedback rules (docs/design/works.md#feedback-rules). Scalar JSONPaths work without OCM's
// RawFeedbackJsonString gate; only the opt-in raw `conditions` rule needs it.
//
// How the agent evaluates them (open-cluster-management.io/ocm pkg/work/spoke/statusfeedback, with
// k8s.io/client-go/util/jsonpath and AllowMissingKeys): a path that matches nothing yields no value and
// no error; without the gate only the first match is kept, with it several matches become one JsonRaw
// list (≤ 1024 bytes); an error in any path (e.g. `[0]` of an empty list: "array index out of bounds")
// sets StatusFeedbackSynced=False on the manifest. So every path here, and every fixed one of core/feedbacknames.ts
// (the built-in rules' names and paths), is one that cannot error.
import { sharedCanonical } from '../k8s/canonical.ts';
import { isDns1123Subdomain } from '../k8s/dns.ts';
import { Generations } from '../k8s/intern.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { GATEWAY_GROUP, GATEWAY_KIND, readTargets } from '../targets/targetrefs.ts';
import { ANCESTOR_FIELDS, DEFAULT_JSON_PATHS, MAX_ANCESTOR_GATEWAYS, RAW_CONDITIONS_FEEDBACK, RESERVED_FEEDBACK_NAMES, ancestorFeedbackName } from '../feedbacknames.ts';
import type { AncestorField, FeedbackJsonPath } from '../feedbacknames.ts';

export type FeedbackRule = { type: 'JSONPaths'; jsonPaths: FeedbackJsonPath[] };

const ANCESTOR_FIELD_PATHS: Record<AncestorField, string> = {
  Status: 'conditions[?(@.type=="Accepted")].status',
  Reason: 'conditions[?(@.type=="Accepted")].reason',
  Message: 'conditions[?(@.type=="Accepted")].message',
  Generation: 'conditions[?(@.type=="Accepted")].observedGeneration',
  Controller: 'controllerName',
};

/**
 * The Gateways of a spoke copy whose `status.ancestors` entries are read: the distinct names of its
 * Gateway targets, sorted, at most MAX_ANCESTOR_GATEWAYS. The hub builds the rules from this and reads
 * the values back with it, from the copy held in the work. Only DNS-1123 names (what a Gateway's name
 * is) are used: a name is quoted inside the JSONPath, and a path that does not parse fails every rule.
 */
export function ancestorFeedbackGateways(copy: KubeObject): string[] {
  const names = readTargets(copy)
    .filter((target) => target.group === GATEWAY_GROUP && target.kind === GATEWAY_KIND && isDns1123Subdomain(target.name))
    .map((target) => target.name);
  return [...new Set(names)].sort().slice(0, MAX_ANCESTOR_GATEWAYS);
}

function ancestorJsonPaths(gateways: readonly string[]): FeedbackJsonPath[] {
  return gateways.slice(0, MAX_ANCESTOR_GATEWAYS).flatMap((gateway, index) =>
    ANCESTOR_FIELDS.map((field) => ({
      name: ancestorFeedbackName(index, field),
      path: `.status.ancestors[?(@.ancestorRef.name=="${gateway}")].${ANCESTOR_FIELD_PATHS[field]}`,
    })),
  );
}

/**
 * The feedback rules of a copy. Every work carries them (~2.2 KB of its ~3.6 KB), alike for every copy with
 * the same options: one deep-frozen value per set of options, whose canonical JSON the spec-hash of each work
 * holding it reuses (sharedCanonical).
 */
export function feedbackRulesFor(options: {
  rawFeedback: boolean;
  statusFeedback?: readonly FeedbackJsonPath[];
  /** The copy's Gateways (ancestorFeedbackGateways), in that order. */
  ancestorGateways?: readonly string[];
}): readonly FeedbackRule[] {
  const key = JSON.stringify([options.rawFeedback, options.statusFeedback ?? [], options.ancestorGateways ?? []]);
  const known = sharedRules.get(key);
  if (known !== undefined) return known;
  const rules = sharedCanonical(buildFeedbackRules(options));
  sharedRules.set(key, rules);
  return rules;
}
const sharedRules = new Generations<string, readonly FeedbackRule[]>(1024, 1 << 16);

function buildFeedbackRules(options: Parameters<typeof feedbackRulesFor>[0]): FeedbackRule[] {
  const jsonPaths = DEFAULT_JSON_PATHS.map((rule) => ({ ...rule }));
  jsonPaths.push(...ancestorJsonPaths(options.ancestorGateways ?? []));
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
