// Label-selector targets (issue 44, docs: DESIGN.md §4): which selector forms a policy kind accepts, read from its
// schema as the hub serves it — never from a list of known kinds — and the hub Gateways each selector chooses.
//  - GEP-713's standard form: a `selector` beside `group` and `kind` in a `spec.targetRefs[]` item;
//  - Envoy Gateway's: `spec.targetSelectors[]`, `{group (default gateway.networking.k8s.io), kind, matchLabels,
//    matchExpressions}`.
// A selector is resolved against the hub's own Gateways in the policy's namespace (their labels on the hub). A copy
// names the Gateways chosen, so the kind must take Gateways by name too (`spec.targetRefs[].name`): a copy that kept
// the selector would also select the spoke's own Gateways, which the sync never takes over. Pure. Not yet called by the
// pipeline: until it is, a selector in targetRefs is refused as before and targetSelectors are not read.
import { labelSelectorSchema, selectorMatches, type LabelSelector } from '../k8s/labelselector.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { GATEWAY_GROUP, GATEWAY_KIND } from './targetrefs.ts';

/** The targeting forms a kind's schema accepts. */
export interface TargetForms {
  /** `spec.targetRefs[]` items with a `name`: what a copy's targets are written as. */
  namedRefs: boolean;
  /** `spec.targetRefs[]` items with a `selector`. */
  refSelectors: boolean;
  /** `spec.targetSelectors[]`. */
  targetSelectors: boolean;
}

/** What the forms read of a schema: properties, and list items. */
interface FormSchema {
  properties?: Record<string, FormSchema>;
  items?: FormSchema;
}

/** The forms of a kind from the `spec` property of its schema; none known when there is no schema. */
export function targetFormsOf(specSchema: unknown): TargetForms {
  const spec = asSchema(specSchema);
  const refItem = asSchema(asSchema(spec?.properties?.targetRefs)?.items)?.properties;
  const selectorItem = asSchema(asSchema(spec?.properties?.targetSelectors)?.items)?.properties;
  return {
    namedRefs: refItem?.name !== undefined,
    refSelectors: refItem?.selector !== undefined,
    targetSelectors: selectorItem !== undefined && (selectorItem.matchLabels !== undefined || selectorItem.matchExpressions !== undefined),
  };
}

/** One selector as written in the policy: where (`spec.targetRefs[1]`, `spec.targetSelectors[0]`), what it selects. */
export type SelectorEntry =
  | { path: string; group: string; kind: string; selector: LabelSelector; sectionName?: string }
  | { path: string; error: string };

/**
 * The policy's selectors in the forms its kind accepts, in spec order (targetRefs first). A form the schema does not
 * have is not read (the apiserver prunes it anyway); a malformed selector carries an error naming its field.
 */
export function readSelectorEntries(policy: KubeObject, forms: TargetForms): SelectorEntry[] {
  const spec = policy.spec ?? {};
  const entries: SelectorEntry[] = [];
  if (forms.refSelectors && Array.isArray(spec.targetRefs)) {
    spec.targetRefs.forEach((raw: unknown, index) => {
      if (!isRecord(raw) || raw.selector === undefined || raw.selector === null) return;
      entries.push(readSelector(`spec.targetRefs[${index}]`, raw, raw.selector, 'selector.'));
    });
  }
  if (forms.targetSelectors && Array.isArray(spec.targetSelectors)) {
    spec.targetSelectors.forEach((raw: unknown, index) => {
      const path = `spec.targetSelectors[${index}]`;
      if (!isRecord(raw)) return entries.push({ path, error: `${path}: must be an object` });
      const { group = GATEWAY_GROUP, kind, matchLabels, matchExpressions } = raw;
      entries.push(readSelector(path, { group, kind }, { ...(matchLabels === undefined ? {} : { matchLabels }), ...(matchExpressions === undefined ? {} : { matchExpressions }) }, ''));
    });
  }
  return entries;
}

function readSelector(path: string, ref: Record<string, unknown>, rawSelector: unknown, field: string): SelectorEntry {
  const { group, kind, sectionName } = ref;
  if (typeof group !== 'string') return { path, error: `${path}: group must be a string` };
  if (typeof kind !== 'string' || kind === '') return { path, error: `${path}: kind is required` };
  if (sectionName !== undefined && sectionName !== null && typeof sectionName !== 'string') return { path, error: `${path}: sectionName must be a string` };
  const parsed = labelSelectorSchema.safeParse(rawSelector);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { path, error: `${path}: ${field}${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}` };
  }
  // An empty selector chooses every Gateway of the namespace, as the spoke controllers read one.
  const selector = parsed.data as LabelSelector;
  return { path, group, kind, selector, ...(typeof sectionName === 'string' && sectionName !== '' ? { sectionName } : {}) };
}

/**
 * The names of the hub Gateways in the policy's namespace that the selector chooses, sorted; `gateways` are the
 * Gateways of that namespace. A selector of another kind chooses none (the caller refuses it as not a Gateway).
 */
export function selectedGateways(entry: Extract<SelectorEntry, { selector: LabelSelector }>, gateways: readonly KubeObject[]): string[] {
  if (entry.group !== GATEWAY_GROUP || entry.kind !== GATEWAY_KIND) return [];
  return gateways
    .filter((g) => selectorMatches(entry.selector, g.metadata.labels ?? {}))
    .map((g) => g.metadata.name)
    .sort();
}

function asSchema(value: unknown): FormSchema | undefined {
  return isRecord(value) ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
