// The layer contract (docs/architecture.md, "Layers") as the lint applies it: the repo's own ESLint config,
// given imports that cross a layer, must refuse them — so a violation fails `npm test`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ESLint } from 'eslint';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

async function ruleErrors(rule: string, filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
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
