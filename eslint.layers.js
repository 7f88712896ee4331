// The layer contract (docs/architecture.md, "Layers"): imports point down only.
//   core     pure model, no I/O; its folders in an order of their own (CORE_ORDER below), core/k8s at the bottom
//            (general Kubernetes helpers, importing nothing else of ours)
//   runtime  clocks, queues, runners, metrics: core only
//   kube     HTTP, watches, caches, leader election, process assembly: core and runtime
//   hub, spoke  the two controllers: everything below, never each other
//   cli      commands: everything
// Nothing under src imports test/, hack/ or the test kit; a test beside a file may also import the test kit.
// The test kit (testkit/: the sandbox and what tests, bench and demo share) imports src/ and itself only —
// never test/ or hack/, which import it.
import path from 'node:path';

const SRC = path.join(import.meta.dirname, 'src');
const CORE = path.join(SRC, 'core');
const TESTKIT = path.join(import.meta.dirname, 'testkit');

const MAY_IMPORT = {
  core: ['core'],
  runtime: ['core', 'runtime'],
  kube: ['core', 'runtime', 'kube'],
  hub: ['core', 'runtime', 'kube', 'hub'],
  spoke: ['core', 'runtime', 'kube', 'spoke'],
  cli: ['core', 'runtime', 'kube', 'hub', 'spoke', 'cli'],
};

/**
 * The levels of src/core, bottom first (docs/architecture.md, "Layers"): a file of core imports only its own level
 * and those below, tests beside it included. '' is core's own files (src/core/*.ts: the product's keys and names).
 */
export const CORE_ORDER = ['k8s', '', 'fleet', 'params', 'targets', 'variants', 'works', 'spoke', 'status', 'rollout', 'pipeline'];
const CORE_ORDER_TEXT = CORE_ORDER.map((level) => (level === '' ? '*.ts' : level)).join(' ← ');

/** `core/k8s` for the general helpers, else the first folder under src; undefined outside src. */
function layerOf(file) {
  const rel = path.relative(SRC, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const parts = rel.split(path.sep);
  if (parts[0] === 'core' && parts[1] === 'k8s') return 'core/k8s';
  return parts.length > 1 ? parts[0] : undefined;
}

/** The level in CORE_ORDER of a file under src/core: its folder, or '' for core's own files. */
function coreLevelOf(file) {
  const parts = path.relative(CORE, file).split(path.sep);
  return parts.length === 1 ? '' : parts[0];
}

const coreLevelName = (level) => (level === '' ? 'src/core/*.ts' : `src/core/${level}`);

/** Why core file `importer` may not import core file `target`, or undefined when it may. */
function coreViolation(importer, target) {
  const from = coreLevelOf(importer);
  const to = coreLevelOf(target);
  if (from === to) return undefined;
  const order = `within src/core, imports point down only: ${CORE_ORDER_TEXT} (*.ts: core's own files)`;
  for (const level of [from, to]) {
    if (!CORE_ORDER.includes(level)) return `${coreLevelName(level)} has no level in core's order (${CORE_ORDER_TEXT}): give it one in CORE_ORDER (eslint.layers.js) and docs/architecture.md, "Layers"`;
  }
  if (CORE_ORDER.indexOf(to) < CORE_ORDER.indexOf(from)) return undefined;
  return `${coreLevelName(from)} may not import ${coreLevelName(to)}: ${order}`;
}

/** Why `importer` may not import `target` (absolute paths), or undefined when it may. */
export function layerViolation(importer, target) {
  const from = layerOf(importer);
  if (from === undefined) return undefined;
  const to = layerOf(target);
  const isTest = importer.endsWith('.test.ts');
  if (to === undefined) {
    const inTestkit = !path.relative(TESTKIT, target).startsWith('..');
    if (isTest && inTestkit) return undefined;
    return `src/${from} may not import ${path.relative(path.dirname(SRC), target)}: src depends on nothing outside src`;
  }
  const toLayer = to === 'core/k8s' ? 'core' : to;
  if ((from === 'core' || from === 'core/k8s') && toLayer === 'core') return coreViolation(importer, target);
  if (from === 'core/k8s') return `core/k8s (general helpers) may not import src/${to}`;
  if (MAY_IMPORT[from]?.includes(toLayer)) return undefined;
  return `src/${from} may not import src/${toLayer}: imports point down only (core ← runtime ← kube ← hub/spoke ← cli)`;
}

function inside(dir, file) {
  const rel = path.relative(dir, file);
  return !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** Why test kit file `importer` may not import `target` (absolute paths), or undefined when it may. */
export function testkitViolation(importer, target) {
  if (!inside(TESTKIT, importer)) return undefined;
  if (inside(TESTKIT, target) || inside(SRC, target)) return undefined;
  return `testkit may not import ${path.relative(path.dirname(SRC), target)}: the test kit depends on src and npm packages only (test/, hack/ and bench import it)`;
}

/** A rule reporting each relative import (static, re-export or dynamic) for which `violation` gives a reason. */
function importRule(description, violation) {
  return {
    meta: { type: 'problem', docs: { description }, schema: [] },
    create(context) {
      const file = context.filename;
      const check = (node, source) => {
        if (typeof source !== 'string' || !source.startsWith('.')) return;
        const why = violation(file, path.resolve(path.dirname(file), source));
        if (why) context.report({ node, message: why });
      };
      return {
        ImportDeclaration: (node) => check(node, node.source.value),
        ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
        ExportAllDeclaration: (node) => check(node, node.source.value),
        ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
      };
    },
  };
}

export const layersPlugin = {
  rules: {
    contract: importRule('imports follow the layer contract', layerViolation),
    testkit: importRule('the test kit imports src and itself only', testkitViolation),
  },
};
