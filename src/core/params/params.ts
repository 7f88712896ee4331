// The GatewayClass params document (docs/design/configuration.md#gatewayclass-params), from a ConfigMap's `params` key or a
// PolicySyncParams spec. Errors name the field, since they are shown on GatewayClass status.
import { z } from 'zod';
import { DNS1123_LABEL_MAX_LENGTH, DNS1123_SUBDOMAIN_MAX_LENGTH, isDns1123Label } from '../k8s/dns.ts';
import { RESERVED_FEEDBACK_NAMES } from '../feedbacknames.ts';
import type { FeedbackJsonPath } from '../feedbacknames.ts';
import { gvrKey } from '../k8s/gvr.ts';
import type { GroupVersionResource } from '../k8s/gvr.ts';
import { ALL, rolloutStrategyErrors, rolloutStrategySchema, toRolloutStrategy, type RolloutStrategy } from './strategy.ts';

export const NAMESPACE_PLACEHOLDER = '{namespace}';
export const DEFAULT_DOWNSTREAM_NAMESPACE = NAMESPACE_PLACEHOLDER;
/** The namespace a template is test-rendered with when params are validated. */
export const SAMPLE_NAMESPACE = 'default';

export interface PolicyKindConfig extends GroupVersionResource {
  /** Extra feedback rules for this kind, after the defaults; empty when not given. */
  statusFeedback: FeedbackJsonPath[];
}

export type SyncParams = {
  policiesToSync: PolicyKindConfig[];
  downstreamNamespace: string;
  /** How a new revision of a policy reaches its clusters, unless the policy says otherwise (strategy.ts). */
  rolloutStrategy: RolloutStrategy;
  /**
   * What the hub does with a copy a spoke changed (core/spoke/spoketruth.ts): `Correct` (the default) reports it and
   * has OCM's work agent put it back at once; `Report` reports it and leaves it, until the next apply of its work.
   */
  drift: DriftMode;
};

export type DriftMode = 'Correct' | 'Report';
export const DRIFT_MODES: readonly DriftMode[] = ['Correct', 'Report'];

export type ParamsResult = { ok: true; params: SyncParams } | { ok: false; errors: string[] };

/** Most policy kinds one params document lists (also the CRD's maxItems: test/unit/params-crd.test.ts). */
export const MAX_POLICY_KINDS = 64;
/** Most statusFeedback rules of one kind: each is a value on every work of the kind, on every cluster. */
export const MAX_STATUS_FEEDBACK_RULES = 16;
/** A statusFeedback rule name: letters, digits, `_`, `.`, `-`, at most MAX_FEEDBACK_RULE_NAME_LENGTH. */
export const FEEDBACK_RULE_NAME = /^[A-Za-z0-9_.-]+$/;
export const MAX_FEEDBACK_RULE_NAME_LENGTH = 63;
const MAX_FEEDBACK_PATH_LENGTH = 1024;

// The limits are zod checks, not refinements, so that z.toJSONSchema shows them and a test holds the
// PolicySyncParams CRD (the other way in) to the same rules. Patterns are the apimachinery ones (dns.ts).
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const GROUP = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$/;

const dnsLabel = z.string().max(DNS1123_LABEL_MAX_LENGTH, `must be at most ${DNS1123_LABEL_MAX_LENGTH} characters`).regex(DNS1123_LABEL, 'must be a lowercase DNS-1123 label');

const feedbackRuleSchema = z.strictObject({
  name: z
    .string()
    .max(MAX_FEEDBACK_RULE_NAME_LENGTH, `must be at most ${MAX_FEEDBACK_RULE_NAME_LENGTH} characters`)
    .regex(FEEDBACK_RULE_NAME, 'must be non-empty and use only letters, digits, "_", "." or "-"'),
  path: z
    .string()
    .max(MAX_FEEDBACK_PATH_LENGTH, `must be at most ${MAX_FEEDBACK_PATH_LENGTH} characters`)
    .regex(/^\.\S/, 'must be a JSONPath starting with "." (e.g. .status.limits)'),
});

const policyKindSchema = z.strictObject({
  group: z
    .string()
    .max(DNS1123_SUBDOMAIN_MAX_LENGTH, `must be at most ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`)
    .regex(GROUP, 'must be "" (core) or a lowercase DNS-1123 subdomain'),
  version: dnsLabel,
  resource: dnsLabel,
  statusFeedback: z.array(feedbackRuleSchema).max(MAX_STATUS_FEEDBACK_RULES, `must list at most ${MAX_STATUS_FEEDBACK_RULES} rules`).optional(),
});

const policyKindList = z.array(policyKindSchema).max(MAX_POLICY_KINDS, `must list at most ${MAX_POLICY_KINDS} kinds`);
const shortText = z.string().max(DNS1123_SUBDOMAIN_MAX_LENGTH, `must be at most ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`);

/** The params document (a PolicySyncParams spec); exported for the CRD agreement test. */
export const paramsSchema = z.strictObject({
  policiesToSync: policyKindList.optional(),
  experimentalPolicySync: policyKindList.optional(),
  // MGC's key: accepted so MGC params keep working, otherwise ignored.
  downstreamClass: shortText.optional(),
  downstreamNamespace: shortText.optional(),
  rolloutStrategy: rolloutStrategySchema.optional(),
  drift: z.enum(DRIFT_MODES).optional(),
});

type PolicyKindInput = z.infer<typeof policyKindSchema>;

export function parseParams(input: unknown): ParamsResult {
  const parsed = paramsSchema.safeParse(input, {
    error: (issue) => (issue.code === 'invalid_type' && issue.input === undefined ? 'Required' : undefined),
  });
  if (!parsed.success) return { ok: false, errors: parsed.error.issues.flatMap(formatIssue) };

  const doc = parsed.data;
  const errors: string[] = [];
  if (doc.policiesToSync && doc.experimentalPolicySync) {
    errors.push('experimentalPolicySync: is an alias of policiesToSync; set only one of them');
  }
  const listField = doc.policiesToSync ? 'policiesToSync' : 'experimentalPolicySync';
  const kinds = doc.policiesToSync ?? doc.experimentalPolicySync;
  if (!kinds) errors.push('policiesToSync: Required');
  errors.push(...policyKindErrors(listField, kinds ?? []));

  const downstreamNamespace = doc.downstreamNamespace ?? DEFAULT_DOWNSTREAM_NAMESPACE;
  errors.push(...downstreamNamespaceTemplateErrors(downstreamNamespace).map((e) => `downstreamNamespace: ${e}`));

  if (doc.rolloutStrategy) errors.push(...rolloutStrategyErrors(doc.rolloutStrategy, 'rolloutStrategy'));

  if (errors.length > 0) return { ok: false, errors };
  const policiesToSync = (kinds ?? []).map(({ group, version, resource, statusFeedback }) => ({
    group,
    version,
    resource,
    statusFeedback: (statusFeedback ?? []).map(({ name, path }) => ({ name, path })),
  }));
  const rolloutStrategy = doc.rolloutStrategy === undefined ? ALL : toRolloutStrategy(doc.rolloutStrategy);
  return { ok: true, params: { policiesToSync, downstreamNamespace, rolloutStrategy, drift: doc.drift ?? 'Correct' } };
}

/** Parses the ConfigMap `params` text; invalid JSON is reported like a schema error. */
export function parseParamsJson(text: string): ParamsResult {
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (error) {
    return { ok: false, errors: [`params is not valid JSON: ${(error as Error).message}`] };
  }
  return parseParams(input);
}

/** The downstream namespace for a hub Gateway namespace: `{namespace}` replaced. */
export function renderDownstreamNamespace(template: string, hubNamespace: string): string {
  return template.replaceAll(NAMESPACE_PLACEHOLDER, hubNamespace);
}

/** Problems with a downstreamNamespace template; empty when it is usable. */
export function downstreamNamespaceTemplateErrors(template: string): string[] {
  const rest = template.replaceAll(NAMESPACE_PLACEHOLDER, '');
  const unknown = rest.match(/\{[^{}]*\}/g);
  if (unknown) return unknown.map((p) => `unknown placeholder "${p}" (only ${NAMESPACE_PLACEHOLDER} is allowed)`);
  if (/[{}]/.test(rest)) return [`unbalanced "{" or "}" in "${template}"`];
  const rendered = renderDownstreamNamespace(template, SAMPLE_NAMESPACE);
  if (!isDns1123Label(rendered)) {
    return [`renders to "${rendered}" for namespace "${SAMPLE_NAMESPACE}", which is not a valid DNS-1123 label`];
  }
  return [];
}

function policyKindErrors(listField: string, kinds: readonly PolicyKindInput[]): string[] {
  const errors: string[] = [];
  // Group+resource, not GVR: two versions of one resource are the same objects, synced twice.
  const firstIndex = new Map<string, number>();
  kinds.forEach((kind, index) => {
    const at = `${listField}[${index}]`;
    const groupResource = `${kind.resource}.${kind.group}`;
    const earlier = firstIndex.get(groupResource);
    if (earlier === undefined) firstIndex.set(groupResource, index);
    else errors.push(`${at}: ${gvrKey(kind)} duplicates ${listField}[${earlier}]; list each resource once`);

    const seen = new Set<string>();
    (kind.statusFeedback ?? []).forEach(({ name }, ruleIndex) => {
      const ruleAt = `${at}.statusFeedback[${ruleIndex}].name`;
      if (RESERVED_FEEDBACK_NAMES.includes(name)) errors.push(`${ruleAt}: "${name}" is a built-in feedback rule name`);
      // The pattern allows it, but `values[name] = value` sets no key: the value would never be shown.
      else if (name === '__proto__') errors.push(`${ruleAt}: "__proto__" cannot name a value (no object can hold it as a key)`);
      else if (seen.has(name)) errors.push(`${ruleAt}: "${name}" is used more than once`);
      seen.add(name);
    });
  });
  return errors;
}

function formatIssue(issue: z.core.$ZodIssue): string[] {
  const at = formatPath(issue.path);
  const prefix = at === '' ? '' : `${at}: `;
  if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => `${prefix}unrecognized key "${key}"`);
  return [`${prefix}${issue.message}`];
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}
