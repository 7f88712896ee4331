// The layer contract (docs/architecture.md, "Layers") as the lint applies it: the repo's own ESLint config,
// given imports that cross a layer, must refuse them — so a violation fails `npm test`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readdirSync } from 'node:fs';
import { ESLint } from 'eslint';

/** The lint's own rules module (plain JS, untyped: imported by URL). */
const layers = (await import(new URL('../../eslint.layers.js', import.meta.url).href)) as {
  CORE_ORDER: readonly string[];
  layerViolation(importer: string, target: string): string | undefined;
};

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

async function ruleErrors(rule: string, filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  // A file the lint cannot parse (one the project does not hold) reports no rule at all: a vacuous pass.
  assert.deepEqual(result?.messages.filter((m) => m.fatal).map((m) => m.message) ?? [], [], `${filePath} parses`);
  return (result?.messages ?? []).filter((m) => m.ruleId === rule).map((m) => m.message);
}

function contractErrors(filePath: string, code: string): Promise<string[]> {
  return ruleErrors('layers/contract', filePath, code);
}

function testkitErrors(filePath: string, code: string): Promise<string[]> {
  return ruleErrors('layers/testkit', filePath, code);
}

test('imports that point up or sideways across layers fail the lint', async () => {
  const refused: Array<[string, string]> = [
    ['src/core/k8s/dns.ts', "import '../params/params.ts';"],
    ['src/core/works/removal.ts', "import '../../runtime/clock.ts';"],
    ['src/runtime/clock.ts', "import '../kube/http.ts';"],
    ['src/kube/http.ts', "import '../hub/controller.ts';"],
    ['src/hub/controller.ts', "import '../spoke/controller.ts';"],
    ['src/spoke/controller.ts', "export * from '../cli/main.ts';"],
    ['src/core/works/removal.ts', "import '../../../test/integration/policysync.test.ts';"],
    ['src/core/works/removal.ts', "import '../../../testkit/hub.ts';"],
    ['src/hub/controller.ts', "const m = await import('../../hack/demo.ts');"],
  ];
  for (const [file, code] of refused) {
    const errors = await contractErrors(file, code);
    assert.equal(errors.length, 1, `${file}: ${code} is refused (${errors.join('; ')})`);
  }
});

test('imports that point down are allowed', async () => {
  const allowed: Array<[string, string]> = [
    ['src/core/works/removal.ts', "import '../k8s/objects.ts';"],
    ['src/runtime/clock.ts', "import '../core/k8s/dns.ts';"],
    ['src/kube/http.ts', "import '../runtime/leadership.ts';"],
    ['src/hub/controller.ts', "import '../kube/http.ts';"],
    ['src/cli/main.ts', "import '../hub/controller.ts';"],
  ];
  for (const [file, code] of allowed) {
    assert.deepEqual(await contractErrors(file, code), [], `${file}: ${code} is allowed`);
  }
});

test('within core, an import of a higher folder fails the lint, naming both folders and the order', async () => {
  const order = 'k8s ← *.ts ← fleet ← params ← targets ← variants ← works ← spoke ← status ← rollout ← pipeline';
  const refused: Array<[string, string, string, string]> = [
    // The folder-level cycles the order broke, each one way round.
    ['src/core/params/params.ts', "import { RESERVED_FEEDBACK_NAMES } from '../works/feedbackrules.ts';", 'params', 'works'],
    ['src/core/params/params.ts', "import '../rollout/plan.ts';", 'params', 'rollout'],
    ['src/core/rollout/plan.ts', "import { decidePolicy } from '../pipeline/policypipeline.ts';", 'rollout', 'pipeline'],
    ['src/core/status/report.ts', "import type { RolloutPlan } from '../rollout/plan.ts';", 'status', 'rollout'],
    ['src/core/variants/render.ts', "export * from '../works/desiredworks.ts';", 'variants', 'works'],
    ['src/core/keys.ts', "const m = await import('./works/bundle.ts');", '*.ts', 'works'],
    ['src/core/fleet/placement.ts', "import '../targets/targetrefs.ts';", 'fleet', 'targets'],
    // k8s imports nothing else of ours, core's own files included.
    ['src/core/k8s/objects.ts', "import '../metadatakeys.ts';", 'k8s', '*.ts'],
    // A test beside a file keeps to its folder's level too.
    ['src/core/status/report.test.ts', "import { planRollout } from '../rollout/plan.ts';", 'status', 'rollout'],
  ];
  for (const [file, code, from, to] of refused) {
    const errors = await contractErrors(file, code);
    assert.equal(errors.length, 1, `${file}: ${code} is refused (${errors.join('; ')})`);
    const folder = (level: string) => (level === '*.ts' ? 'src/core/*.ts' : `src/core/${level}`);
    assert.ok(errors[0]!.startsWith(`${folder(from)} may not import ${folder(to)}: `), errors[0]);
    assert.ok(errors[0]!.includes(order), errors[0]);
  }
});

test('within core, an import of the same or a lower folder is allowed, for a test beside a file too', async () => {
  const allowed: Array<[string, string]> = [
    ['src/core/pipeline/preview.ts', "import { planRollout } from '../rollout/plan.ts';"],
    ['src/core/rollout/plan.ts', "import type { RolloutStatus } from '../status/rolloutstatus.ts';"],
    ['src/core/status/report.ts', "import { workRevision } from '../works/revision.ts';"],
    ['src/core/works/desiredworks.ts', "import { renderCopy } from '../variants/render.ts';"],
    ['src/core/works/revision.ts', "import { rehashWork } from './manifestwork.ts';"],
    ['src/core/variants/render.ts', "import { revisionTag } from '../revisionannotation.ts';"],
    ['src/core/params/params.ts', "import { RESERVED_FEEDBACK_NAMES } from '../feedbacknames.ts';"],
    ['src/core/keys.ts', "import './k8s/objects.ts';"],
    ['src/core/k8s/dns.ts', "import './objects.ts';"],
    ['src/core/rollout/plan.report.test.ts', "import { reportPolicyStatus } from '../status/report.ts';"],
    ['src/core/status/report.test.ts', "import { NOW } from '../../../testkit/statusfixtures.ts';"],
  ];
  for (const [file, code] of allowed) {
    assert.deepEqual(await contractErrors(file, code), [], `${file}: ${code} is allowed`);
  }
});

test('every folder of src/core has a level in the order, and one without is refused', () => {
  const core = new URL('../../src/core/', import.meta.url).pathname;
  const folders = readdirSync(core, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  assert.deepEqual(folders.filter((f) => !layers.CORE_ORDER.includes(f)), []);
  // The rule itself (a file of a folder the project does not hold yet cannot be linted here).
  assert.match(layers.layerViolation(`${core}newfolder/thing.ts`, `${core}k8s/objects.ts`) ?? '', /^src\/core\/newfolder has no level in core's order/);
  assert.match(layers.layerViolation(`${core}works/bundle.ts`, `${core}newfolder/thing.ts`) ?? '', /^src\/core\/newfolder has no level in core's order/);
});

test('a test beside a src file may import the test kit', async () => {
  assert.deepEqual(await contractErrors('src/runtime/clock.test.ts', "import '../../testkit/fake-clock.ts';"), []);
});

test('the test kit imports neither test/ nor hack/', async () => {
  const refused: Array<[string, string]> = [
    ['testkit/hub.ts', "import '../test/integration/policysync.test.ts';"],
    ['testkit/sandbox/sandbox.ts', "import '../../hack/bench/report.ts';"],
    ['testkit/world.ts', "export * from '../hack/addon.ts';"],
    ['testkit/fixtures.ts', "const m = await import('../hack/demo.ts');"],
  ];
  for (const [file, code] of refused) {
    const errors = await testkitErrors(file, code);
    assert.equal(errors.length, 1, `${file}: ${code} is refused (${errors.join('; ')})`);
  }
  const allowed: Array<[string, string]> = [
    ['testkit/hub.ts', "import '../src/hub/controller.ts';"],
    ['testkit/sandbox/sandbox.ts', "import '../../src/kube/http.ts';"],
    ['testkit/faults.ts', "import './sandbox/sandbox.ts';"],
    ['testkit/fixtures.ts', "import 'yaml';"],
  ];
  for (const [file, code] of allowed) {
    assert.deepEqual(await testkitErrors(file, code), [], `${file}: ${code} is allowed`);
  }
});
