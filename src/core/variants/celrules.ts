// The CEL rules of a kind's schema (`x-kubernetes-validations`), evaluated on a rendered copy the way the
// apiserver evaluates them when the copy is created, so that a copy the spoke's apiserver would refuse for a rule is
// refused on the hub before it is sent (docs/design/variants.md#validation). Pure: each rule is compiled once, when a
// check first reaches its node.
//
// What the apiserver does, and so does this:
// - a rule on a node is evaluated with `self` bound to the value at that node, when the node is present and not null;
//   a rule on `items` for each item, on `additionalProperties` for each value;
// - `self` is typed by the schema: integers are CEL ints, numbers doubles, `format: byte` strings bytes,
//   `date`/`date-time` strings timestamps, declared properties are reached by their escaped names (`namespace` is
//   `__namespace__`, `a-b` is `a__dash__b`), maps by their keys; the root's metadata shows only name and
//   generateName; a null where the schema does not allow one is absent (the apiserver prunes it);
// - the copy is checked as the apiserver validates it: after structural defaulting (schema `default`s filled in,
//   as the check reads each level; an object is converted field by field as its rules read it);
// - a rule that evaluates to an error refuses the copy, with the error;
// - the message is the `messageExpression`'s result when it yields a one-line string, else `message`, else
//   `failed rule: <rule>`; `fieldPath` moves the violation to that field.
// What is not done, and how it is said:
// - transition rules (a rule that reads `oldSelf`) are evaluated by the apiserver only on an update, against the
//   object it replaces: the spoke's running copy, which the hub does not hold as the spoke's apiserver has it.
//   They are skipped (the spoke's apiserver judges them when the work agent applies the copy), except those with
//   `optionalOldSelf`, which the apiserver evaluates on create too: those fail closed (below);
// - a rule this evaluator cannot compile, or that calls a function it does not have (Kubernetes' own CEL libraries:
//   quantity, url, ip, isSorted, format.named…, none of which the CRDs synced today use; cel-go's strings library
//   is there), or a value it cannot type as the apiserver does (`format: duration`) that the rule reads, fails closed: a violation
//   saying the rule cannot be checked here, so the copy is not sent;
// - the apiserver's CEL cost limits, and the order-insensitive equality of `x-kubernetes-list-type: set|map` lists,
//   are not modelled.
import { createRequire } from 'node:module';
import type * as CelModule from '@bufbuild/cel';
import type { CelEnv, CelInput, CelResult } from '@bufbuild/cel';
import type * as CelExtModule from '@bufbuild/cel/ext';
import type * as ProtobufModule from '@bufbuild/protobuf';
import type * as WktModule from '@bufbuild/protobuf/wkt';
import { changeReach, escapeProperty, selfReads, type SelfRead, type SelfReads } from './celreads.ts';
import { formatFieldPath, type PathSegment } from './fieldpath.ts';

type Schema = Record<string, unknown>;

export interface RuleViolation {
  /** The node the rule is on (or its `fieldPath`), in the copy. */
  path: PathSegment[];
  message: string;
}

/**
 * `changed`: the paths set in a copy otherwise valid (see celRulesCheck); undefined: the whole copy is checked.
 * `base`: the copy they were set in; copies checked with one base share the verdicts of the rules above the changed
 * paths that cannot see how they differ (celreads.ts).
 */
export type RulesCheck = (copy: unknown, changed?: readonly (readonly PathSegment[])[], base?: object) => RuleViolation[];

type Program = (bindings: { self: CelInput }) => CelResult;

/** One rule of a node, compiled; `unchecked` says why it cannot be evaluated here (the copy fails closed). */
interface CompiledRule {
  rule: string;
  message: string | undefined;
  messageProgram: Program | undefined;
  fieldPath: PathSegment[];
  program: Program | undefined;
  unchecked: string | undefined;
  /** It reads `oldSelf`: skipped (see above). */
  transition: boolean;
  /** What of `self` the rule and its message expression read (nothing, for a rule not evaluated). */
  reads: SelfReads;
}

/**
 * A schema node whose subtree holds rules: only those parts are walked. Its own rules are compiled, and its
 * children found, when a check first reaches it: a kind's schema may hold hundreds of rules (AuthPolicy's
 * ~0.7 s and ~10 MiB to compile them all), of which a variant's copies reach only those on the paths it changes.
 */
class RuleNode {
  private compiledRules: CompiledRule[] | undefined;
  private readonly plans = new Map<string, AbovePlan>();
  private children: { properties: [string, RuleNode][]; items: RuleNode | undefined; additionalProperties: RuleNode | undefined } | undefined;

  constructor(readonly schema: Schema) {}

  get rules(): CompiledRule[] {
    this.compiledRules ??= Array.isArray(this.schema['x-kubernetes-validations']) ? (this.schema['x-kubernetes-validations'] as unknown[]).map(compileRule) : [];
    return this.compiledRules;
  }

  get properties(): [string, RuleNode][] {
    return this.found().properties;
  }

  get items(): RuleNode | undefined {
    return this.found().items;
  }

  get additionalProperties(): RuleNode | undefined {
    return this.found().additionalProperties;
  }

  /** How changes at `below` (paths from this node) reach its rules: found once per set of paths (variants set few). */
  planAbove(below: readonly (readonly PathSegment[])[]): AbovePlan {
    const key = JSON.stringify(below);
    let plan = this.plans.get(key);
    if (plan === undefined) {
      plan = { id: nextPlanId++, reaches: this.rules.map((rule) => changeReach(rule.reads, below)) };
      if (this.plans.size < MAX_PLANS) this.plans.set(key, plan);
    }
    return plan;
  }

  /** The node of the value at `segment` below this one's (undefined: no rule there or under it). */
  child(segment: PathSegment): RuleNode | undefined {
    if (typeof segment === 'number') return this.items;
    const declared = isRecord(this.schema.properties) && segment in this.schema.properties;
    return declared ? this.properties.find(([name]) => name === segment)?.[1] : this.additionalProperties;
  }

  private found(): NonNullable<RuleNode['children']> {
    const { schema } = this;
    this.children ??= {
      properties: isRecord(schema.properties)
        ? Object.entries(schema.properties).flatMap(([name, sub]): [string, RuleNode][] => {
            const node = isRecord(sub) ? ruleNode(sub) : undefined;
            return node ? [[name, node]] : [];
          })
        : [],
      items: isRecord(schema.items) ? ruleNode(schema.items) : undefined,
      additionalProperties: isRecord(schema.additionalProperties) ? ruleNode(schema.additionalProperties) : undefined,
    };
    return this.children;
  }
}

/** How changes at some paths below a node reach each of its rules (changeReach), with an id for the verdicts it keys. */
interface AbovePlan {
  id: number;
  reaches: ReturnType<typeof changeReach>[];
}
let nextPlanId = 0;
/** Plans kept per node: one per set of changed paths the variants of a kind set under it. */
const MAX_PLANS = 256;

const ruleNodes = new WeakMap<Schema, RuleNode | null>();

/** The node of `schema`, one per schema object; undefined when no rule is declared at or under it. */
function ruleNode(schema: Schema): RuleNode | undefined {
  let node = ruleNodes.get(schema);
  if (node === undefined) {
    node = holdsRules(schema) ? new RuleNode(schema) : null;
    ruleNodes.set(schema, node);
  }
  return node ?? undefined;
}

const rulesUnder = new WeakMap<Schema, boolean>();

/** Whether a rule is declared at or under this node (computed once per node, compiling nothing). */
function holdsRules(schema: Schema): boolean {
  let has = rulesUnder.get(schema);
  if (has === undefined) {
    const own = Array.isArray(schema['x-kubernetes-validations']) && schema['x-kubernetes-validations'].length > 0;
    const children = [...(isRecord(schema.properties) ? Object.values(schema.properties) : []), schema.items, schema.additionalProperties].filter(isRecord);
    has = own || children.some(holdsRules);
    rulesUnder.set(schema, has);
  }
  return has;
}

// The standard CEL environment plus cel-go's extended strings library, as the apiserver has them (its strings
// library is cel-go's; the evaluator ships the same, conformance-tested: Gateway API's Gateway uses `split`). The
// CRDs synced today (Kuadrant's and Envoy Gateway's) use only standard functions (size, has, all, exists, in,
// startsWith, matches, map literals), so none of Kubernetes' own libraries (quantity, url, ip, cidr, isSorted,
// format.named…) is implemented; a rule calling one fails closed at compile time instead of passing.
// Loaded on the first schema with rules (their CommonJS builds, synchronously): a hub with no PolicyVariant never
// checks a copy, and need not hold the evaluator in memory (~2 MiB).
interface CelLibrary {
  env: CelEnv;
  parse: typeof CelModule.parse;
  plan: typeof CelModule.plan;
  isCelError: typeof CelModule.isCelError;
  timestamp: (seconds: bigint, nanos: number) => CelInput;
}
let library: CelLibrary | undefined;
function cel(): CelLibrary {
  if (library === undefined) {
    const require = createRequire(import.meta.url);
    const { celEnv, parse, plan, isCelError } = require('@bufbuild/cel') as typeof CelModule;
    const { strings } = require('@bufbuild/cel/ext') as typeof CelExtModule;
    const { create } = require('@bufbuild/protobuf') as typeof ProtobufModule;
    const { TimestampSchema } = require('@bufbuild/protobuf/wkt') as typeof WktModule;
    library = { env: celEnv({ funcs: strings }), parse, plan, isCelError, timestamp: (seconds, nanos) => create(TimestampSchema, { seconds, nanos }) };
  }
  return library;
}

// Calls the evaluator plans itself (logic, conditional, index, optional access): they are in no function table.
const PLANNED_CALLS = new Set(['_&&_', '_||_', '_?_:_', '_[_]', '_[?_]', '_?._', '@not_strictly_false', '__not_strictly_false__']);

/**
 * The CEL rules of `schema` as a check of copies (no rules: a check that finds nothing). With `changed`, the paths
 * a copy's variants set in an otherwise valid copy (the policy as the hub's apiserver accepted it), only the rules
 * that can see a changed value are evaluated: those on the nodes above each path and those at or under it. A rule
 * elsewhere reads only values the apiserver already judged with it.
 */
export function celRulesCheck(schema: Schema): RulesCheck {
  const root = ruleNode(schema);
  if (root === undefined) return () => [];
  // The verdicts shared by the copies of one base (see RulesCheck), for as long as the base lives.
  const shared = new WeakMap<object, Map<string, RuleViolation[]>>();
  return (copy, changed, base) => {
    const out: RuleViolation[] = [];
    if (changed === undefined) {
      walk(root, copy, [], true, out);
      return out;
    }
    const paths = outermost(changed);
    const firstVisit = firstVisitor(paths);
    let verdicts = base === undefined ? undefined : shared.get(base);
    if (base !== undefined && verdicts === undefined) shared.set(base, (verdicts = new Map<string, RuleViolation[]>()));
    for (const path of paths) {
      let node: RuleNode | undefined = root;
      let at: unknown = copy;
      for (let depth = 0; node !== undefined && at !== undefined && at !== null; depth++) {
        if (depth === path.length) {
          walk(node, at, [...path], depth === 0, out);
          break;
        }
        const above = path.slice(0, depth);
        if (firstVisit(above) && node.rules.length > 0) {
          const below = paths.filter((p) => startsWith(p, above)).map((p) => p.slice(depth));
          evaluateAbove(node, at, above, depth === 0, below, verdicts, out);
        }
        const segment = path[depth]!;
        at = typeof segment === 'number' ? (Array.isArray(at) ? at[segment] : undefined) : isRecord(at) ? fieldOf(node.schema, at, segment) : undefined;
        node = node.child(segment);
      }
    }
    return out;
  };
}

/** The paths none of the others contains (a path under another is checked with it). */
export function outermost(paths: readonly (readonly PathSegment[])[]): (readonly PathSegment[])[] {
  if (paths.length < 2) return [...paths];
  const within = (inner: readonly PathSegment[], outer: readonly PathSegment[]): boolean => outer.length <= inner.length && outer.every((s, i) => s === inner[i]);
  const unique = [...new Map(paths.map((p) => [JSON.stringify(p), p])).values()];
  return unique.filter((p) => !unique.some((q) => q !== p && within(p, q)));
}

/**
 * Whether the node at `above` is met for the first time on the walks down `paths` (outermost): a node above several
 * changed values is checked once. With one path each node is met once, and nothing is remembered.
 */
export function firstVisitor(paths: readonly (readonly PathSegment[])[]): (above: readonly PathSegment[]) => boolean {
  if (paths.length < 2) return () => true;
  const seen = new Set<string>();
  return (above) => {
    const key = JSON.stringify(above);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
}

/** Compiles one entry of `x-kubernetes-validations`. */
function compileRule(entry: unknown): CompiledRule {
  const spec = isRecord(entry) ? entry : {};
  const rule = typeof spec.rule === 'string' ? spec.rule.trim() : '';
  const message = typeof spec.message === 'string' && spec.message.trim() !== '' ? spec.message : undefined;
  const fieldPath = typeof spec.fieldPath === 'string' ? (parseRuleFieldPath(spec.fieldPath) ?? []) : [];
  const compiled = compileExpression(rule);
  const messageExpression = typeof spec.messageExpression === 'string' ? compileExpression(spec.messageExpression) : undefined;
  const reads = compiled.program ? selfReads(compiled.expr, messageExpression?.program ? messageExpression.expr : undefined) : NOTHING_READ;
  const compiledRule = { rule, message, messageProgram: messageExpression?.program, fieldPath, program: compiled.program, unchecked: compiled.unchecked, transition: compiled.oldSelf === true, reads };
  // With optionalOldSelf the apiserver evaluates the rule on create too (oldSelf an empty optional): not skipped.
  if (compiledRule.transition && spec.optionalOldSelf === true) return { ...compiledRule, transition: false, unchecked: 'a transition rule with optionalOldSelf, which this check does not evaluate' };
  return compiledRule;
}

const NOTHING_READ: SelfReads = { opaque: false, reads: [] };

function compileExpression(text: string): { program?: Program; expr?: unknown; unchecked?: string; oldSelf?: boolean } {
  if (text === '') return { unchecked: 'the rule is empty' };
  const { env, parse, plan } = cel();
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(text);
  } catch (err) {
    return { unchecked: `it does not parse here: ${(err as Error).message}` };
  }
  const { identifiers, calls } = references(parsed.expr);
  if (identifiers.has('oldSelf')) return { oldSelf: true };
  const missing = [...calls].filter((name) => !PLANNED_CALLS.has(name) && env.funcs.find(name) === undefined);
  if (missing.length > 0) return { unchecked: `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not available in this evaluator` };
  try {
    return { program: plan(env, parsed), expr: parsed.expr };
  } catch (err) {
    return { unchecked: `it cannot be planned here: ${(err as Error).message}` };
  }
}

/** The identifiers and called functions of an expression (an identifier it does not bind errs when evaluated). */
function references(root: unknown): { identifiers: Set<string>; calls: Set<string> } {
  const identifiers = new Set<string>();
  const calls = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isRecord(node)) return;
    const kind = isRecord(node.exprKind) ? node.exprKind : undefined;
    if (kind?.case === 'identExpr' && isRecord(kind.value)) identifiers.add(String(kind.value.name));
    if (kind?.case === 'callExpr' && isRecord(kind.value)) {
      // `strings.quote(x)` calls the function `strings.quote`: the target names its namespace.
      const target = isRecord(kind.value.target) && isRecord(kind.value.target.exprKind) ? kind.value.target.exprKind : undefined;
      const namespace = target?.case === 'identExpr' && isRecord(target.value) ? `${String(target.value.name)}.` : '';
      calls.add(namespace !== '' && cel().env.funcs.find(`${namespace}${String(kind.value.function)}`) ? `${namespace}${String(kind.value.function)}` : String(kind.value.function));
    }
    for (const [key, value] of Object.entries(node)) if (key !== '$typeName' && typeof value === 'object') visit(value);
  };
  visit(root);
  return { identifiers, calls };
}

/** A rule's `fieldPath` (`.a.b`, `.a['x.y']`) as segments; undefined when it is not of that form. */
function parseRuleFieldPath(text: string): PathSegment[] | undefined {
  const segments: PathSegment[] = [];
  const step = /^(?:\.([A-Za-z_][A-Za-z0-9_-]*)|\['((?:[^'\\]|\\.)*)'\])/;
  let rest = text.trim();
  while (rest.length > 0) {
    const m = step.exec(rest);
    if (!m) return undefined;
    segments.push(m[1] ?? m[2]!.replaceAll(/\\(.)/g, '$1'));
    rest = rest.slice(m[0].length);
  }
  return segments;
}

/** A rule of a schema as this check reads it: where it is (`spec.limits.*`, `spec.endpoints[*]`), and whether it is evaluated. */
export interface SchemaRule {
  at: string;
  rule: string;
  /** A transition rule: not evaluated here (the apiserver evaluates it on update). */
  transition: boolean;
  /** Why it cannot be checked here: every copy that has a value at its node is refused. */
  unchecked: string | undefined;
}

/** Every rule of `schema`, compiled as the check compiles it: to say, when a kind is validated, which fail closed. */
export function schemaRules(schema: Schema): SchemaRule[] {
  const out: SchemaRule[] = [];
  const visit = (node: RuleNode | undefined, at: string): void => {
    if (node === undefined) return;
    for (const r of node.rules) out.push({ at: at === '' ? '(root)' : at, rule: r.rule, transition: r.transition, unchecked: r.unchecked });
    for (const [name, child] of node.properties) visit(child, at === '' ? name : `${at}.${name}`);
    visit(node.items, `${at}[*]`);
    visit(node.additionalProperties, `${at}.*`);
  };
  visit(ruleNode(schema), '');
  return out;
}

function walk(node: RuleNode, value: unknown, path: PathSegment[], root: boolean, out: RuleViolation[]): void {
  if (value === undefined || value === null) return;
  if (node.rules.length > 0) evaluate(node, value, path, root, out);
  if (isRecord(value)) {
    for (const [name, child] of node.properties) walk(child, fieldOf(node.schema, value, name), [...path, name], false, out);
    if (node.additionalProperties) {
      const declared = isRecord(node.schema.properties) ? node.schema.properties : {};
      for (const [key, sub] of Object.entries(value)) if (!(key in declared)) walk(node.additionalProperties, sub, [...path, key], false, out);
    }
  } else if (Array.isArray(value) && node.items) {
    for (const [i, item] of value.entries()) walk(node.items, item, [...path, i], false, out);
  }
}

function evaluate(node: RuleNode, value: unknown, path: PathSegment[], root: boolean, out: RuleViolation[]): void {
  for (const found of evaluateRules(node, value, path, root, node.rules)) out.push(...found);
}

/**
 * The rules of a node above changed values (`below`: their paths from the node). A rule that reads nothing there,
 * or only whether fields there are present, has the verdict it had on a copy of the same base with the same
 * presence there: it is kept in `verdicts` and used again. The others are evaluated.
 */
function evaluateAbove(node: RuleNode, value: unknown, path: PathSegment[], root: boolean, below: PathSegment[][], verdicts: Map<string, RuleViolation[]> | undefined, out: RuleViolation[]): void {
  if (verdicts === undefined) return evaluate(node, value, path, root, out);
  const plan = node.planAbove(below);
  const found: (RuleViolation[] | undefined)[] = [];
  const keys: (string | undefined)[] = [];
  const pending: CompiledRule[] = [];
  for (const [i, rule] of node.rules.entries()) {
    const reach = plan.reaches[i]!;
    const key = reach.kind === 'varies' ? undefined : reach.kind === 'constant' ? `${plan.id}/${i}` : `${plan.id}/${i}/${presenceOf(node.schema, value, reach.reads)}`;
    const known = key === undefined ? undefined : verdicts.get(key);
    found.push(known);
    keys.push(key);
    if (known === undefined) pending.push(rule);
  }
  const evaluated = pending.length > 0 ? evaluateRules(node, value, path, root, pending) : [];
  let next = 0;
  for (const [i, known] of found.entries()) {
    const verdict = known ?? evaluated[next++]!;
    if (known === undefined && keys[i] !== undefined) verdicts.set(keys[i], verdict);
    out.push(...verdict);
  }
}

/** Each rule's violations, in the order given (none for a transition rule). */
function evaluateRules(node: RuleNode, value: unknown, path: PathSegment[], root: boolean, rules: readonly CompiledRule[]): RuleViolation[][] {
  let self: CelInput;
  try {
    self = celValue(node.schema, value, root);
  } catch (err) {
    if (!(err instanceof UntypedValue)) throw err;
    return rules.map((rule) => (rule.transition ? [] : [violation(path, rule, `the rule \`${rule.rule}\` cannot be checked here (${err.message}); refused rather than passed unchecked`)]));
  }
  return rules.map((rule): RuleViolation[] => {
    if (rule.transition) return [];
    if (rule.program === undefined) return [violation(path, rule, `the rule \`${rule.rule}\` cannot be checked here (${rule.unchecked ?? 'not compiled'}); refused rather than passed unchecked`)];
    const result = rule.program({ self });
    // A value read that cannot be typed here (converted as the rule reads it) fails the rule closed.
    if (cel().isCelError(result) && result.cause instanceof UntypedValue) return [violation(path, rule, `the rule \`${rule.rule}\` cannot be checked here (${result.cause.message}); refused rather than passed unchecked`)];
    if (cel().isCelError(result)) return [violation(path, rule, `${result.message} evaluating rule: ${rule.rule}`)];
    return result === true ? [] : [violation(path, rule, messageOf(rule, self))];
  });
}

/**
 * What a rule reading `reads` (presence only) can tell of `value`: at each field along each read, absent, null, an
 * object, a list or a scalar — as its CEL value shows it (defaulted, a null the schema does not allow absent).
 */
function presenceOf(schema: Schema, value: unknown, reads: readonly SelfRead[]): string {
  let text = '';
  for (const read of reads) {
    let node: Schema | undefined = schema;
    let at: unknown = value;
    for (const field of read.fields) {
      const step: { value: unknown; schema: Schema | undefined } = isRecord(at) ? celField(node, at, field) : { value: undefined, schema: undefined };
      at = step.value;
      node = step.schema;
      text += at === undefined ? '0' : at === null ? 'n' : Array.isArray(at) ? 'l' : isRecord(at) ? 'o' : 's';
      if (at === undefined) break;
    }
    text += '|';
  }
  return text;
}

/** The field a CEL name reaches in an object, as declaredFields and celValue read it, with its schema. */
function celField(schema: Schema | undefined, value: Record<string, unknown>, field: string): { value: unknown; schema: Schema | undefined } {
  if (schema !== undefined && isRecord(schema.properties)) {
    const property = celPropertyNamed(schema.properties, field);
    if (property === undefined) return { value: undefined, schema: undefined };
    const found = fieldOf(schema, value, property.name);
    return { value: found === null && property.schema?.nullable !== true ? undefined : found, schema: property.schema };
  }
  const found = Object.hasOwn(value, field) ? value[field] : undefined;
  return { value: found, schema: schema !== undefined && isRecord(schema.additionalProperties) ? schema.additionalProperties : undefined };
}

function startsWith(path: readonly PathSegment[], prefix: readonly PathSegment[]): boolean {
  return prefix.length <= path.length && prefix.every((s, i) => s === path[i]);
}

function violation(path: PathSegment[], rule: CompiledRule, message: string): RuleViolation {
  const at = [...path, ...rule.fieldPath];
  return { path: at, message: `${at.length > 0 ? formatFieldPath(at) : '(the copy)'}: ${message}` };
}

/** As the apiserver words a failed rule: the message expression's string, else the message, else the rule. */
function messageOf(rule: CompiledRule, self: CelInput): string {
  const made = rule.messageProgram?.({ self });
  if (typeof made === 'string' && made.trim() !== '' && !made.includes('\n')) return made;
  return rule.message ?? `failed rule: ${rule.rule}`;
}

class UntypedValue extends Error {}

/**
 * The value as the apiserver types it for CEL under `schema` (see the header), after defaulting. An object is read
 * field by field as the rules read it (CelFields): a rule reads a few fields of a copy. Throws UntypedValue, here or
 * when a rule reads such a value (the evaluator then returns an error whose cause it is).
 */
function celValue(schema: Schema | undefined, value: unknown, root = false): CelInput {
  if (value === null || value === undefined) return null;
  if (schema === undefined) return dynValue(value);
  if (schema['x-kubernetes-int-or-string'] === true) return typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : (value as CelInput);
  switch (schema.type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : (value as CelInput);
    case 'string':
      return typeof value === 'string' ? stringValue(schema.format, value) : (value as CelInput);
    case 'array':
      return Array.isArray(value) ? value.map((item) => celValue(isRecord(schema.items) ? schema.items : undefined, item)) : (value as CelInput);
    case 'object':
      if (!isRecord(value)) return value as CelInput;
      if (isRecord(schema.properties)) return new CelFields(declaredFields(schema, schema.properties, value, root));
      if (isRecord(schema.additionalProperties)) {
        const values = schema.additionalProperties;
        return new CelFields({ keys: () => Object.keys(value), read: (key) => (Object.hasOwn(value, key) ? celValue(values, value[key]) : undefined) });
      }
      return dynValue(value);
    default:
      return schema.type === undefined ? dynValue(value) : (value as CelInput);
  }
}

/** How a CelFields reads its object: the keys CEL sees, and one field's CEL value (undefined: absent). */
interface FieldReader {
  keys(): string[];
  read(key: string): CelInput | undefined;
}

/**
 * An object as a CEL map whose fields are converted when first read, and kept. The evaluator (@bufbuild/cel) takes
 * any Map as a CEL map and reads it through get, size, keys, entries, values and forEach, all answered here.
 */
class CelFields extends Map<string, CelInput> {
  private fieldKeys: string[] | undefined;
  private readonly read = new Map<string, CelInput | undefined>();

  constructor(private readonly reader: FieldReader) {
    super();
  }

  private names(): string[] {
    this.fieldKeys ??= this.reader.keys();
    return this.fieldKeys;
  }

  override get size(): number {
    return this.names().length;
  }

  override get(key: string): CelInput | undefined {
    if (typeof key !== 'string') return undefined;
    if (!this.read.has(key)) this.read.set(key, this.reader.read(key));
    return this.read.get(key);
  }

  override has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  override keys(): MapIterator<string> {
    return this.names()[Symbol.iterator]();
  }

  override *entries(): MapIterator<[string, CelInput]> {
    for (const key of this.names()) yield [key, this.get(key)!];
  }

  override *values(): MapIterator<CelInput> {
    for (const key of this.names()) yield this.get(key)!;
  }

  override forEach(callback: (value: CelInput, key: string, map: Map<string, CelInput>) => void, thisArg?: unknown): void {
    for (const key of this.names()) callback.call(thisArg, this.get(key)!, key, this);
  }

  override [Symbol.iterator](): MapIterator<[string, CelInput]> {
    return this.entries();
  }
}

/** The declared properties of an object, by their CEL names: defaulted, a null the schema does not allow absent. */
function declaredFields(schema: Schema, properties: Record<string, unknown>, value: Record<string, unknown>, root: boolean): FieldReader {
  const present = (name: string, sub: Schema | undefined): unknown => {
    const field = fieldOf(schema, value, name);
    // A null the schema does not allow is pruned by the apiserver: absent.
    return field === null && sub?.nullable !== true ? undefined : field;
  };
  return {
    keys: () => celProperties(properties).flatMap(({ name, escaped, schema: sub }) => (present(name, sub) === undefined ? [] : [escaped])),
    read: (key) => {
      const property = celPropertyNamed(properties, key);
      if (property === undefined) return undefined;
      const field = present(property.name, property.schema);
      if (field === undefined) return undefined;
      if (root && property.name === 'metadata' && isRecord(field)) {
        const { name: n, generateName } = field;
        return { ...(typeof n === 'string' ? { name: n } : {}), ...(typeof generateName === 'string' ? { generateName } : {}) };
      }
      return celValue(property.schema, field);
    },
  };
}

/**
 * A declared property's value as the apiserver validates it: absent (or a null the schema does not allow) and
 * declared with a `default`, the default (structural defaulting, done level by level as the check reads the copy).
 */
function fieldOf(schema: Schema, value: Record<string, unknown>, name: string): unknown {
  const field = value[name];
  const declared = isRecord(schema.properties) && Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
  if (isRecord(declared) && declared.default !== undefined && (field === undefined || (field === null && declared.nullable !== true))) return declared.default;
  return field;
}

const celPropertiesOf = new WeakMap<Record<string, unknown>, { name: string; escaped: string; schema: Schema | undefined }[]>();

/** The declared properties a rule can reach, with their CEL names (computed once per schema node). */
function celProperties(properties: Record<string, unknown>): { name: string; escaped: string; schema: Schema | undefined }[] {
  let list = celPropertiesOf.get(properties);
  if (list === undefined) {
    list = Object.entries(properties).flatMap(([name, sub]) => {
      const escaped = escapeProperty(name);
      return escaped === undefined ? [] : [{ name, escaped, schema: isRecord(sub) ? sub : undefined }];
    });
    celPropertiesOf.set(properties, list);
  }
  return list;
}

const celPropertyByName = new WeakMap<Record<string, unknown>, Map<string, { name: string; escaped: string; schema: Schema | undefined }>>();

/** The declared property a CEL name reaches (computed once per schema node). */
function celPropertyNamed(properties: Record<string, unknown>, escaped: string): { name: string; escaped: string; schema: Schema | undefined } | undefined {
  let byName = celPropertyByName.get(properties);
  if (byName === undefined) {
    byName = new Map(celProperties(properties).map((p) => [p.escaped, p]));
    celPropertyByName.set(properties, byName);
  }
  return byName.get(escaped);
}

function stringValue(format: unknown, value: string): CelInput {
  if (format === 'byte') return new Uint8Array(Buffer.from(value, 'base64'));
  if (format === 'date' || format === 'date-time') return timestamp(value);
  if (format === 'duration') throw new UntypedValue(`"${value}" is a CEL duration for the apiserver, which this check does not convert`);
  return value;
}

function timestamp(value: string): CelInput {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2}))?$/.exec(value);
  const ms = m ? Date.parse(m[2] === undefined ? `${m[1]}T00:00:00Z` : `${m[1]}T${m[2]}${m[4]!.toUpperCase()}`) : NaN;
  if (!m || Number.isNaN(ms)) throw new UntypedValue(`"${value}" is not a date-time the apiserver reads`);
  return cel().timestamp(BigInt(Math.floor(ms / 1000)), Number(((m[3] ?? '.').slice(1) + '000000000').slice(0, 9)));
}

/** A value the schema does not type (preserved unknown fields): integers are ints, as the apiserver decodes JSON. */
function dynValue(value: unknown): CelInput {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(dynValue);
  if (isRecord(value)) return new CelFields({ keys: () => Object.keys(value), read: (key) => (Object.hasOwn(value, key) ? dynValue(value[key]) : undefined) });
  return value as CelInput;
}


function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
