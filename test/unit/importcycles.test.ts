// No import cycles (docs/architecture.md, "Layers"), as the lint checks it: the repo's own dependency-cruiser
// config (.dependency-cruiser.js, run by `npm run lint`) must report a cycle — of values or of types alone —
// and find none in src, testkit and test.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');
const CONFIG = join(ROOT, '.dependency-cruiser.js');
const DEPCRUISE = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

interface Violation {
  type: string;
  from: string;
  to: string;
  rule: { name: string; severity: string };
  cycle?: Array<{ name: string }>;
}

/** The violations the lint's config finds in `paths`, cruised from `cwd`. */
function violations(cwd: string, paths: string[]): Violation[] {
  const out = execFileSync(process.execPath, [DEPCRUISE, '--config', CONFIG, '--output-type', 'json', ...paths], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

/** The modules of a reported cycle, sorted. */
function members(v: Violation | undefined): string[] {
  return [...new Set([v?.from ?? '', ...(v?.cycle ?? []).map((c) => c.name)])].sort();
}

/** Files written to a fresh directory outside the repo (so neither lint nor tsc sees them), removed after. */
function withFiles(files: Record<string, string>, body: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'importcycles-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a cycle of value imports through three modules is refused', () => {
  withFiles(
    {
      'a.ts': "import { b } from './b.ts';\nexport const a = (): number => b() + 1;\n",
      'b.ts': "import { c } from './c.ts';\nexport const b = (): number => c() + 1;\n",
      'c.ts': "import { a } from './a.ts';\nexport const c = (): number => (Math.random() > 2 ? a() : 0);\n",
      'd.ts': "import { a } from './a.ts';\nexport const d = a;\n",
    },
    (dir) => {
      const found = violations(dir, ['.']);
      assert.deepEqual(found.map((v) => `${v.type} ${v.rule.name} ${v.rule.severity}`), ['cycle no-cycle error'], 'the cycle is reported once');
      assert.deepEqual(members(found[0]), ['a.ts', 'b.ts', 'c.ts'], 'd.ts, which only imports the cycle, is no part of it');
    },
  );
});

test('a cycle made of type-only imports is refused too', () => {
  withFiles(
    {
      'status.ts': "import type { Plan } from './plan.ts';\nexport interface Status { plan?: Plan }\n",
      'plan.ts': "import type { Status } from './status.ts';\nexport interface Plan { status?: Status }\n",
    },
    (dir) => {
      const found = violations(dir, ['.']);
      assert.deepEqual(found.map((v) => `${v.type} ${v.rule.name} ${v.rule.severity}`), ['cycle no-cycle error']);
      assert.deepEqual(members(found[0]), ['plan.ts', 'status.ts']);
    },
  );
});

test('modules that import one way only are not a cycle', () => {
  withFiles(
    {
      'status.ts': 'export interface Status { state: string }\n',
      'plan.ts': "import type { Status } from './status.ts';\nexport interface Plan { status?: Status }\n",
      'report.ts': "import type { Plan } from './plan.ts';\nimport type { Status } from './status.ts';\nexport type Report = [Plan, Status];\n",
    },
    (dir) => assert.deepEqual(violations(dir, ['.']), []),
  );
});

test('src, testkit, test, hack and bin have no import cycle', () => {
  const found = violations(ROOT, ['src', 'testkit', 'test', 'hack', 'bin']);
  assert.deepEqual(
    found.map((v) => [v.from, ...(v.cycle ?? []).map((c) => c.name)].join(' → ')),
    [],
  );
});
