// Checks a rendered copy against its kind's schema as the hub's apiserver serves it (the CRD version's
// openAPIV3Schema), before a variant's copy is sent: the structural part by ajv, a JSON Schema validator, over the
// schema translated from Kubernetes' OpenAPI v3 dialect; the CEL rules (x-kubernetes-validations) are evaluated by
// celrules.ts. What neither can judge is said, never passed silently (docs/design/variants.md#validation). Pure: each
// part of a schema is compiled once, when a check first reaches it.
import { createRequire } from 'node:module';
import type * as AjvModule from 'ajv';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { celRulesCheck, firstVisitor, outermost } from './celrules.ts';
import { formatFieldPath, type PathSegment } from './fieldpath.ts';

/** An openAPIV3Schema node as a CRD holds it. */
export type OpenApiSchema = Record<string, unknown>;

export interface SchemaViolation {
  /** Where, in the copy. */
  path: PathSegment[];
  message: string;
}

/**
 * `changed`: the paths set in a copy otherwise valid (see schemaCheck); undefined: the whole copy is checked.
 * `base`: the copy they were set in (copies of one base share what cannot tell them apart: celrules.ts RulesCheck).
 */
export type SchemaCheck = (copy: unknown, changed?: readonly (readonly PathSegment[])[], base?: object) => SchemaViolation[];

// The formats the apiserver validates (k8s.io/kube-openapi pkg/validation/strfmt) that mean the same in ajv-formats;
// others (int32, int64, Go durations…) the apiserver does not check or checks its own way: not checked here either.
const CHECKED_FORMATS = ['date-time', 'date', 'uri', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid', 'byte'];

// Made on the first schema checked (ajv's CommonJS build, synchronously): a hub with no PolicyVariant never checks
// a copy, and need not hold the validator in memory.
let validator: Ajv | undefined;
function ajv(): Ajv {
  if (validator === undefined) {
    const require = createRequire(import.meta.url);
    const { Ajv: AjvClass } = require('ajv') as typeof AjvModule;
    // ajv-formats is published as CommonJS with `exports.default`.
    const formatsModule = require('ajv-formats') as { default?: unknown };
    const addFormats = (formatsModule.default ?? formatsModule) as (ajv: Ajv, formats: string[]) => Ajv;
    const made = addFormats(new AjvClass({ allErrors: true, strict: false, validateFormats: true, unicodeRegExp: false, formats: {} }), CHECKED_FORMATS);
    // Formats outside CHECKED_FORMATS pass, as the apiserver passes a format it does not know.
    for (const name of ['int32', 'int64', 'float', 'double', 'password', 'duration', 'byte-string', 'binary', 'cidr', 'mac', 'quantity']) made.addFormat(name, true);
    made.addKeyword({ keyword: 'x-kubernetes-int-or-string', schemaType: 'boolean', validate: intOrString, errors: false });
    validator = made;
  }
  return validator;
}

function intOrString(on: boolean, data: unknown): boolean {
  return !on || typeof data === 'string' || (typeof data === 'number' && Number.isInteger(data));
}

const compiled = new WeakMap<OpenApiSchema, SchemaCheck>();

/**
 * The check of copies against `schema`: ajv's violations, then the CEL rules' (celrules.ts). A rule or a part of
 * the schema that cannot be compiled is a violation of every copy it applies to: the copy is not sent.
 *
 * With `changed` — the paths a copy's variants set, in a copy otherwise valid (the policy as the hub's apiserver
 * accepted it under this very schema) — only what a changed value can break is checked: each changed value
 * against the schema at its path, and each node above it for what the node itself says (its required fields, the
 * fields it declares, its bounds, a list's unique keys; not its other children, unchanged), and the CEL rules that
 * can see a changed value. Each part of the schema is compiled the first time a copy reaches it: a kind's whole
 * schema (AuthPolicy's is 270 KB) costs seconds and tens of MiB to compile, the few paths a variant sets almost
 * nothing. Without `changed`, the whole copy is checked.
 */
export function schemaCheck(schema: OpenApiSchema): SchemaCheck {
  let check = compiled.get(schema);
  if (check === undefined) {
    const rules = celRulesCheck(schema);
    check = (copy, changed, base) => [...structural(schema, copy, changed), ...rules(copy, changed, base)];
    compiled.set(schema, check);
  }
  return check;
}

function structural(schema: OpenApiSchema, copy: unknown, changed: readonly (readonly PathSegment[])[] | undefined): SchemaViolation[] {
  if (changed === undefined) return validateAt(schema, copy, [], 'deep', true);
  const out: SchemaViolation[] = [];
  const paths = outermost(changed);
  const firstVisit = firstVisitor(paths);
  for (const path of paths) {
    let node: OpenApiSchema | undefined = schema;
    let value: unknown = copy;
    // A value removed (a merge patch's null) ends the walk at its parent, whose check says whether it was required.
    for (let depth = 0; node !== undefined && value !== undefined; depth++) {
      if (depth === path.length) {
        out.push(...validateAt(node, value, [...path], 'deep', depth === 0));
        break;
      }
      const above = path.slice(0, depth);
      if (firstVisit(above)) out.push(...validateAt(node, value, above, 'shallow', depth === 0));
      const segment = path[depth]!;
      node = childSchema(node, segment);
      value = typeof segment === 'number' ? (Array.isArray(value) ? (value as unknown[])[segment] : undefined) : isRecord(value) ? value[segment] : undefined;
    }
  }
  return out;
}

/** The schema of the value at `segment` under `node`; undefined where the schema says nothing (or not declared: the node's own check says so). */
function childSchema(node: OpenApiSchema, segment: PathSegment): OpenApiSchema | undefined {
  if (typeof segment === 'number') return isRecord(node.items) ? node.items : undefined;
  const declared = isRecord(node.properties) ? node.properties[segment] : undefined;
  if (isRecord(declared)) return declared;
  return isRecord(node.additionalProperties) ? node.additionalProperties : undefined;
}

type Depth = 'deep' | 'shallow';

/** Compiled validators per schema node: of the node and everything under it (deep), or of the node itself (shallow). */
const validators: Record<Depth, WeakMap<OpenApiSchema, ValidateFunction | Error>> = { deep: new WeakMap(), shallow: new WeakMap() };

function validateAt(node: OpenApiSchema, value: unknown, path: readonly PathSegment[], depth: Depth, root: boolean): SchemaViolation[] {
  let validate = validators[depth].get(node);
  if (validate === undefined) {
    try {
      validate = ajv().compile(toJsonSchema(node, root, depth === 'shallow'));
    } catch (err) {
      validate = err instanceof Error ? err : new Error(String(err));
    }
    validators[depth].set(node, validate);
  }
  if (validate instanceof Error) {
    const where = path.length > 0 ? formatFieldPath(path) : '(the copy)';
    return [{ path: [...path], message: `${where}: the schema there cannot be checked here (${validate.message}); refused rather than passed unchecked` }];
  }
  const violations = validate(value) ? [] : (validate.errors ?? []).map((e) => violation(e, path));
  return [...violations, ...listMapDuplicates(node, value, path, depth === 'deep')];
}

/**
 * Items of an `x-kubernetes-list-type: map` list that share their key fields (`x-kubernetes-list-map-keys`): the
 * apiserver refuses them ("Duplicate value"). At the node, and with `under` in every list below it.
 */
function listMapDuplicates(node: OpenApiSchema, value: unknown, path: readonly PathSegment[], under: boolean): SchemaViolation[] {
  const out: SchemaViolation[] = [];
  if (Array.isArray(value) && node['x-kubernetes-list-type'] === 'map' && Array.isArray(node['x-kubernetes-list-map-keys'])) {
    const keys = (node['x-kubernetes-list-map-keys'] as unknown[]).filter((k): k is string => typeof k === 'string');
    const seen = new Set<string>();
    for (const [i, item] of (value as unknown[]).entries()) {
      const identity = keys.map((k) => (isRecord(item) ? (item[k] ?? null) : null));
      const text = JSON.stringify(identity);
      if (seen.has(text)) out.push({ path: [...path, i], message: `${formatFieldPath([...path, i])}: Duplicate value: ${keys.map((k, j) => `${k}=${JSON.stringify(identity[j])}`).join(', ')}` });
      seen.add(text);
    }
  }
  if (!under) return out;
  if (Array.isArray(value) && isRecord(node.items)) for (const [i, item] of (value as unknown[]).entries()) out.push(...listMapDuplicates(node.items, item, [...path, i], true));
  if (isRecord(value)) {
    for (const [key, sub] of Object.entries(value)) {
      const child = childSchema(node, key);
      if (child) out.push(...listMapDuplicates(child, sub, [...path, key], true));
    }
  }
  return out;
}

function violation(error: ErrorObject, at: readonly PathSegment[] = []): SchemaViolation {
  const path = [
    ...at,
    ...error.instancePath
      .split('/')
      .slice(1)
      .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
      .map((s): PathSegment => (/^\d+$/.test(s) ? Number(s) : s)),
  ];
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') {
    const field = String(params.additionalProperty);
    return { path: [...path, field], message: `${formatFieldPath([...path, field])}: field not declared in the schema` };
  }
  if (error.keyword === 'required') {
    const field = String(params.missingProperty);
    return { path: [...path, field], message: `${formatFieldPath([...path, field])}: required` };
  }
  const where = path.length > 0 ? formatFieldPath(path) : '(the copy)';
  const allowed = error.keyword === 'enum' ? `: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` : '';
  return { path, message: `${where}: ${error.message ?? error.keyword}${allowed}` };
}

/**
 * Kubernetes' structural schema as JSON Schema: `nullable` as ajv reads it, OpenAPI 3.0's boolean
 * exclusiveMinimum/Maximum as numbers, `x-kubernetes-list-type: set` as unique items. An object that declares
 * its properties and does not preserve unknown fields refuses others: the apiserver would prune them, silently
 * dropping what the variant set (a misspelt field). The metadata of an object is checked by the apiserver's own
 * rules, not its schema: left open.
 */
function toJsonSchema(node: OpenApiSchema, root = false, shallow = false, inJunctor = false): OpenApiSchema {
  const out: OpenApiSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-') && key !== 'x-kubernetes-int-or-string') continue;
    if (['description', 'default', 'example', 'externalDocs'].includes(key)) continue;
    if (key === 'properties' && isRecord(value)) {
      // Shallow: the fields the node declares, whatever their values (those are checked where they change).
      out.properties = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, shallow || (root && name === 'metadata') ? {} : toJsonSchema(sub as OpenApiSchema, false, false, inJunctor)]));
    } else if ((key === 'items' || key === 'additionalProperties') && isRecord(value)) {
      out[key] = shallow ? {} : toJsonSchema(value, false, false, inJunctor);
    } else if (key === 'not' && isRecord(value)) {
      out[key] = toJsonSchema(value, false, false, true);
    } else if ((key === 'allOf' || key === 'anyOf' || key === 'oneOf') && Array.isArray(value)) {
      out[key] = (value as unknown[]).map((sub): unknown => (isRecord(sub) ? toJsonSchema(sub, false, false, true) : sub));
    } else out[key] = value;
  }
  for (const bound of ['Minimum', 'Maximum'] as const) {
    const exclusive = `exclusive${bound}`;
    const limit = bound.toLowerCase();
    if (node[exclusive] === true && typeof node[limit] === 'number') {
      out[exclusive] = node[limit];
      delete out[limit];
    } else if (typeof node[exclusive] === 'boolean') delete out[exclusive];
  }
  if (node['x-kubernetes-list-type'] === 'set') out.uniqueItems = true;
  const preserves = node['x-kubernetes-preserve-unknown-fields'] === true || node['x-kubernetes-embedded-resource'] === true;
  // Unknown fields are refused by the structural schema only: under allOf/anyOf/oneOf/not, `properties` are value
  // validation of fields the structural schema declares (a structural schema may say no more there), and a branch
  // naming some of them says nothing of the others (`anyOf: [{required: [a]}, {properties: {b: …}}]`).
  if (isRecord(node.properties) && node.additionalProperties === undefined && !preserves && !inJunctor) out.additionalProperties = false;
  // The anyOf of an int-or-string member restates the extension; ajv has it from the keyword.
  if (node['x-kubernetes-int-or-string'] === true) delete out.anyOf;
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The schema of the field at `segments` (undefined: the schema says nothing there, e.g. preserved unknown fields). */
export function schemaAt(schema: OpenApiSchema | undefined, segments: readonly PathSegment[]): { ok: true; schema: OpenApiSchema | undefined } | { ok: false; message: string } {
  let node = schema;
  for (const [i, segment] of segments.entries()) {
    if (node === undefined) return { ok: true, schema: undefined };
    const properties = isRecord(node.properties) ? node.properties : undefined;
    if (typeof segment === 'number') {
      if (!isRecord(node.items)) return { ok: false, message: `${formatFieldPath(segments.slice(0, i))} is not a list in the schema` };
      node = node.items;
    } else if (properties && isRecord(properties[segment])) {
      node = properties[segment];
    } else if (isRecord(node.additionalProperties)) {
      node = node.additionalProperties;
    } else if (node['x-kubernetes-preserve-unknown-fields'] === true) {
      return { ok: true, schema: undefined };
    } else return { ok: false, message: `${formatFieldPath(segments.slice(0, i + 1))}: field not declared in the schema` };
  }
  return { ok: true, schema: node };
}
