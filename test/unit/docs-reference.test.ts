// The reference pages cannot drift from the program: their tables are generated from it
// (hack/docs/reference.ts) and committed, and this fails on any difference, as test/unit/gen-chart.test.ts and
// the addon's check do for the chart and the addon template. Regenerate with `npx tsx hack/docs/reference.ts`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { EVENT_MEANINGS, eventsTable } from '../../hack/docs/events.ts';
import { registeredMetricNames } from '../../hack/docs/metrics.ts';
import { PARAM_MEANINGS, paramsTable } from '../../hack/docs/params.ts';
import { referencePages, renderPage } from '../../hack/docs/reference.ts';
import { beginMarker, endMarker, fillSections, sectionIds } from '../../hack/docs/sections.ts';
import { ACCEPTED, POLICIES_SYNCED, PROGRESSIVE_ROLLOUT_READY } from '../../src/core/params/classparams.ts';
import { GATEWAY_CONDITION_PREFIX, POLICIES_ENFORCED, PROGRAMMED } from '../../src/core/status/gatewaystatus.ts';

const ROOT = join(import.meta.dirname, '..', '..');

test('each reference page is what the generator writes from the program', async () => {
  for (const page of await referencePages()) {
    assert.ok(sectionIds(page.committed).length > 0, `${page.path} has generated sections`);
    assert.equal(page.committed, page.rendered, `${page.path} is out of date: run \`npx tsx hack/docs/reference.ts\``);
  }
});

test('a generated table edited by hand is put back; the prose around it is kept', async () => {
  const [page] = await referencePages();
  const id = sectionIds(page!.committed)[0]!;
  const edited = page!.committed.replace(`${beginMarker(id)}\n`, `${beginMarker(id)}\n| a row written by hand |\n`);
  assert.notEqual(edited, page!.committed);
  assert.equal(await renderPage(edited), page!.committed);
});

test('only the text between the markers is replaced', () => {
  const page = `intro\n${beginMarker('x')}\nold\n${endMarker('x')}\nmiddle\n${beginMarker('y')}\n${endMarker('y')}\nend\n`;
  assert.equal(fillSections(page, (id) => `new ${id}`), `intro\n${beginMarker('x')}\nnew x\n${endMarker('x')}\nmiddle\n${beginMarker('y')}\nnew y\n${endMarker('y')}\nend\n`);
});

test('a params field or an Event reason without a meaning written fails the generator, naming it', () => {
  const field = 'rolloutStrategy.progressive.onFailure';
  const meaning = PARAM_MEANINGS[field]!;
  delete PARAM_MEANINGS[field];
  try {
    assert.throws(() => paramsTable(), new RegExp(`write the meaning of ${field.replace(/\./g, '\\.')}`));
  } finally {
    PARAM_MEANINGS[field] = meaning;
  }
  PARAM_MEANINGS['rolloutStrategy.gone'] = 'a field the schema does not have';
  try {
    assert.throws(() => paramsTable(), /drop the meaning of rolloutStrategy\.gone/);
  } finally {
    delete PARAM_MEANINGS['rolloutStrategy.gone'];
  }
  const when = EVENT_MEANINGS.RolloutHalted!;
  delete EVENT_MEANINGS.RolloutHalted;
  try {
    assert.throws(() => eventsTable(), /write when RolloutHalted is recorded/);
  } finally {
    EVENT_MEANINGS.RolloutHalted = when;
  }
});

test('the conditions page (written by hand) names every condition type the program declares', () => {
  const page = readFileSync(join(ROOT, 'docs/reference/conditions.md'), 'utf8');
  for (const type of [ACCEPTED, POLICIES_SYNCED, PROGRESSIVE_ROLLOUT_READY, PROGRAMMED, POLICIES_ENFORCED, `${GATEWAY_CONDITION_PREFIX}<Kind>Affected`]) {
    assert.ok(page.includes(`\`${type}\``), `docs/reference/conditions.md names ${type}`);
  }
});

test('docs/monitoring.md (written by hand) tells what every registered metric means in operation', () => {
  const page = readFileSync(join(ROOT, 'docs/monitoring.md'), 'utf8');
  const names = registeredMetricNames();
  assert.ok(names.length > 0);
  for (const name of names) assert.ok(page.includes(`\`${name}\``), `docs/monitoring.md names ${name}`);
});
