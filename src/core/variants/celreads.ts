// What of `self` a CEL rule reads, found in its parsed expression (cel-spec's Expr, as @bufbuild/cel parses it), and
// whether a change at some paths below the rule's node can change its verdict. celrules.ts uses it so that the
// rules above a variant's changed values are evaluated once for the copies of a policy that differ only where those
// rules do not look (a policy's copies on ten clusters, each with its own label value, and a rule on `spec` that
// tests which fields are present). Pure.
//
// A read is a chain of field selections from `self` (`self.a.b`), either of the value (`self.a.b == 1`,
// `size(self.a.b)`: everything under it counts) or of its presence only (`has(self.a.b)`, cel-spec's `testOnly`
// select, which also reads the presence of `self.a`). Anything else that reaches `self` — `self` itself, a
// comprehension binding the name `self` — makes the rule opaque: it is evaluated for every copy. An index
// (`self.m['k']`) or an optional selection reads the whole value it is applied to: coarser, never wrong.
import type { PathSegment } from './fieldpath.ts';

export interface SelfRead {
  /** CEL field names from `self`: escaped names of declared properties, map keys as they are. */
  fields: string[];
  presence: boolean;
}

export type SelfReads = { opaque: true } | { opaque: false; reads: SelfRead[] };

const OPAQUE: SelfReads = { opaque: true };

/** Thrown inside selfReads only, and caught there: a read of `self` that is not a field chain. */
class Opaque extends Error {}

/** The reads of `self` by one or more parsed expressions (a rule and its messageExpression read together). */
export function selfReads(...exprs: unknown[]): SelfReads {
  const reads: SelfRead[] = [];
  try {
    for (const expr of exprs) visit(expr, reads);
  } catch (err) {
    if (err instanceof Opaque) return OPAQUE;
    throw err;
  }
  return { opaque: false, reads };
}

function visit(expr: unknown, reads: SelfRead[]): void {
  const kind = exprKind(expr);
  if (kind === undefined) return;
  const value = kind.value;
  switch (kind.case) {
    case 'identExpr':
      // `self` read whole (compared, passed to a function, iterated).
      if (value.name === 'self') reads.push({ fields: [], presence: false });
      return;
    case 'selectExpr': {
      const chain = selectChain(expr);
      if (chain) reads.push(chain);
      else visit(value.operand, reads);
      return;
    }
    case 'comprehensionExpr':
      if (['iterVar', 'iterVar2', 'accuVar'].some((k) => value[k] === 'self')) throw new Opaque();
      for (const k of ['iterRange', 'accuInit', 'loopCondition', 'loopStep', 'result']) visit(value[k], reads);
      return;
    case 'callExpr':
      visit(value.target, reads);
      for (const arg of asArray(value.args)) visit(arg, reads);
      return;
    case 'listExpr':
      for (const element of asArray(value.elements)) visit(element, reads);
      return;
    case 'structExpr':
      for (const entry of asArray(value.entries)) {
        const key = isRecord(entry) && isRecord(entry.keyKind) && entry.keyKind.case === 'mapKey' ? entry.keyKind.value : undefined;
        visit(key, reads);
        visit(isRecord(entry) ? entry.value : undefined, reads);
      }
      return;
    case 'constExpr':
      return;
    default:
      // An expression kind not known here may hide a read of `self`.
      throw new Opaque();
  }
}

/** `self.a.b` (optionally under `has()`) as a read; undefined when the chain does not start at `self`. */
function selectChain(expr: unknown): SelfRead | undefined {
  const fields: string[] = [];
  let node = expr;
  let presence = false;
  for (;;) {
    const kind = exprKind(node);
    if (kind?.case === 'identExpr') return kind.value.name === 'self' ? { fields: fields.reverse(), presence } : undefined;
    if (kind?.case !== 'selectExpr' || typeof kind.value.field !== 'string') return undefined;
    // Only the outermost selection of a has() tests presence; the ones inside it read values.
    if (kind.value.testOnly === true) {
      if (fields.length > 0) return undefined;
      presence = true;
    }
    fields.push(kind.value.field);
    node = kind.value.operand;
  }
}

/**
 * How a change at `changed` (paths relative to the rule's node, each non-empty) can reach a rule with `reads`:
 * `constant` — it reads nothing there, so its verdict is the one on any copy that differs only there; `presence` —
 * it reads only whether fields there are present, the reads listed (their presence, and that of each field above,
 * tells the verdict apart); `varies` — it reads a value there, or is opaque.
 */
export function changeReach(reads: SelfReads, changed: readonly (readonly PathSegment[])[]): { kind: 'constant' } | { kind: 'presence'; reads: SelfRead[] } | { kind: 'varies' } {
  if (reads.opaque) return { kind: 'varies' };
  const reached = reads.reads.filter((read) => changed.some((path) => overlaps(read.fields, path)));
  if (reached.length === 0) return { kind: 'constant' };
  if (reached.some((read) => !read.presence)) return { kind: 'varies' };
  return { kind: 'presence', reads: reached };
}

/**
 * One is a prefix of the other, a field matching a segment by its name or its escaped CEL name, and any field a
 * list index (a selection on a list errs whatever the list holds; counting it as a meeting costs an evaluation).
 */
function overlaps(fields: readonly string[], path: readonly PathSegment[]): boolean {
  const n = Math.min(fields.length, path.length);
  for (let i = 0; i < n; i++) {
    const segment = path[i]!;
    if (typeof segment !== 'number' && !sameField(fields[i]!, segment)) return false;
  }
  return true;
}

/** A CEL field name naming a JSON key: a map's key as it is, a declared property's escaped. */
function sameField(field: string, key: string): boolean {
  return field === key || field === escapeProperty(key);
}

// Kubernetes' escaping of property names for CEL (k8s.io/apiserver/pkg/cel escaping.go): a reserved word is
// wrapped in double underscores; `__`, `.`, `-`, `/` are spelt out; a name with any other character is not
// reachable from a rule.
const RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);
const SPELT: Record<string, string> = { __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' };

export function escapeProperty(name: string): string | undefined {
  if (name === '' || /^[0-9]/.test(name)) return undefined;
  if (RESERVED.has(name)) return `__${name}__`;
  if (/[^a-zA-Z0-9_./-]/.test(name)) return undefined;
  return name.replaceAll(/__|[./-]/g, (s) => SPELT[s]!);
}

function exprKind(expr: unknown): { case: string; value: Record<string, unknown> } | undefined {
  if (!isRecord(expr) || !isRecord(expr.exprKind)) return undefined;
  const { case: name, value } = expr.exprKind;
  return typeof name === 'string' && isRecord(value) ? { case: name, value } : undefined;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
