import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../core/k8s/objects.ts';
import { canonicalJson } from '../core/k8s/canonical.ts';
import { buildSpokeConfigWork, buildSpokeHeartbeatWork } from '../core/spoke/spokeconfig.ts';
import { reportDigest, serializeSpokeHeartbeat } from '../core/spoke/spokeheartbeat.ts';
import { buildSpokeReport } from '../core/spoke/reportbuild.ts';
import { serializeSpokeReport } from '../core/spoke/reportwire.ts';
import { WHOLE_KIND } from '../core/spoke/spokereport.ts';
import { FakeClock } from '../../testkit/fake-clock.ts';
import { withConfigMapFeedback } from '../../testkit/reports.ts';
import { createLogger } from '../runtime/logging.ts';
import { SpokeReports } from './spokereports.ts';

const AUTH = 'authpolicies.kuadrant.io';
const RLP = 'ratelimitpolicies.kuadrant.io';
/** The spoke's wall clock when in step with the hub's; the hub's clock is monotonic and starts at 0. */
const T0 = Date.parse('2026-11-23T10:00:00Z');
const STALE = 120_000;
const HOUR = 3_600_000;

function local(namespace: string, name: string): KubeObject {
  return { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { namespace, name }, spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' } } };
}

function workWithText(text: string): KubeObject {
  const work = buildSpokeConfigWork({ cluster: 'c1', kinds: [], configMap: { namespace: 'policy-sync-system', name: 'policy-sync-spoke' }, controller: 'x' });
  return withConfigMapFeedback(work, 1, 'report', text);
}

/**
 * The spoke-config work of c1 with the report a version 2 agent wrote at `at` (the spoke's clock) as its
 * feedback: its heartbeat inside, the report rewritten at every heartbeat. (Version 3: v3Work and heartbeatWork.)
 */
function workWith(at: number, kinds: [string, KubeObject[]][]): KubeObject {
  const { report } = buildSpokeReport(new Map(kinds), new Date(at));
  return workWithText(canonicalJson({ version: 2, heartbeat: report.heartbeat, objects: report.objects }));
}

function setup(o: { config?: { namespace: string; name: string } } = {}): { clock: FakeClock; reports: SpokeReports; changes: string[]; logs: Record<string, unknown>[] } {
  const clock = new FakeClock(0);
  const changes: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) } });
  const reports = new SpokeReports({
    staleAfterMs: STALE,
    onChange: (cluster, scopes) => changes.push(`${cluster}:${scopes.map((s) => `${s.kind}/${s.namespace}`).join(',')}`),
    logger,
    clock,
    ...(o.config ? { config: o.config } : {}),
  });
  return { clock, reports, changes, logs };
}

test('a fresh report counts; heartbeats with the same content change nothing; new content names its (kind, namespace) pairs', () => {
  const { clock, reports, changes } = setup();
  reports.observe('c1', workWith(T0, [[AUTH, []], [RLP, []]]));
  assert.deepEqual(changes, [`c1:${AUTH}/${WHOLE_KIND},${RLP}/${WHOLE_KIND}`]);
  assert.ok(reports.fresh('c1'));
  clock.advance(30_000);
  reports.observe('c1', workWith(T0 + 30_000, [[AUTH, []], [RLP, []]]));
  assert.equal(changes.length, 1, 'a heartbeat is no change');
  reports.observe('c1', workWith(T0 + 31_000, [[AUTH, [local('ns', 'l')]], [RLP, []]]));
  assert.deepEqual(changes.at(-1), `c1:${AUTH}/ns`);
  assert.equal(reports.fresh('c2'), undefined, 'no report: unknown');
});

test('a report goes stale on the hub clock, staleAfter past the last change seen, with no event: the timer says so; a new heartbeat brings it back', () => {
  const { clock, reports, changes } = setup();
  reports.observe('c1', workWith(T0, [[AUTH, [local('ns', 'l')]]]));
  clock.advance(30_000);
  reports.observe('c1', workWith(T0 + 30_000, [[AUTH, [local('ns', 'l')]]]));
  clock.advance(STALE - 1);
  assert.ok(reports.fresh('c1'), 'still fresh: the limit runs from the latest heartbeat seen');
  assert.equal(changes.length, 1);
  clock.advance(1);
  assert.equal(reports.fresh('c1'), undefined);
  assert.deepEqual(changes, [`c1:${AUTH}/${WHOLE_KIND},${AUTH}/ns`, `c1:${AUTH}/${WHOLE_KIND},${AUTH}/ns`]);
  reports.observe('c1', workWith(T0 + 200_000, [[AUTH, [local('ns', 'l')]]]));
  assert.ok(reports.fresh('c1'));
  assert.equal(changes.length, 3, 'fresh again: the kind is looked at again');
});

test('the same text seen again (a relist, another status field changing) is no sign of life', () => {
  const { clock, reports, changes } = setup();
  const work = workWith(T0, [[AUTH, [local('ns', 'l')]]]);
  reports.observe('c1', work);
  clock.advance(STALE - 10);
  reports.observe('c1', structuredClone(work));
  clock.advance(10);
  assert.equal(reports.fresh('c1'), undefined, 'stale: the agent wrote nothing new');
  assert.equal(changes.length, 2);
});

/** What the hub does with an agent whose clock is `skew` off the hub's: the same events, whatever the skew. */
function lifeWithSkew(skew: number): { changes: string[]; freshAt: Record<string, boolean> } {
  const { clock, reports, changes } = setup();
  const freshAt: Record<string, boolean> = {};
  const spokeNow = (): number => T0 + clock.now() + skew;
  reports.observe('c1', workWith(spokeNow(), [[AUTH, [local('ns', 'l')]]]));
  freshAt.arrival = reports.fresh('c1') !== undefined;
  for (let i = 0; i < 4; i++) {
    clock.advance(30_000);
    reports.observe('c1', workWith(spokeNow(), [[AUTH, [local('ns', 'l')]]]));
  }
  freshAt.afterHeartbeats = reports.fresh('c1') !== undefined;
  // The agent stops: its last report stays as it was.
  clock.advance(STALE - 1);
  freshAt.justBeforeLimit = reports.fresh('c1') !== undefined;
  clock.advance(1);
  freshAt.atLimit = reports.fresh('c1') !== undefined;
  return { changes, freshAt };
}

test('a spoke clock an hour ahead or an hour behind changes nothing: freshness is the hub clock since the last change seen', () => {
  const inStep = lifeWithSkew(0);
  assert.deepEqual(inStep.freshAt, { arrival: true, afterHeartbeats: true, justBeforeLimit: true, atLimit: false });
  assert.deepEqual(lifeWithSkew(+HOUR), inStep, 'an hour ahead: does not keep a stopped agent counting');
  assert.deepEqual(lifeWithSkew(-HOUR), inStep, 'an hour behind: its reports count all the same');
});

test('at hub start-up, a report is seen for the first time: it counts for staleAfter from then, however old its heartbeat', () => {
  const { clock, reports } = setup();
  reports.observe('c1', workWith(T0 - 24 * HOUR, [[AUTH, [local('ns', 'l')]]]));
  assert.ok(reports.fresh('c1'));
  clock.advance(STALE);
  assert.equal(reports.fresh('c1'), undefined);
});

test('the work gone, or without a report, counts as no report', () => {
  const { reports, changes } = setup();
  reports.observe('c1', workWith(T0, [[AUTH, []]]));
  reports.observe('c1', undefined);
  assert.equal(reports.fresh('c1'), undefined);
  assert.deepEqual(changes, [`c1:${AUTH}/${WHOLE_KIND}`, `c1:${AUTH}/${WHOLE_KIND}`]);
  const work = workWith(T0, [[AUTH, []]]);
  reports.observe('c1', { ...work, status: {} });
  assert.equal(reports.fresh('c1'), undefined);
  assert.equal(changes.length, 2);
});

test('a report past the schema or a cap is refused whole: no report counts (nothing is withdrawn for it), an error names the cluster and the field once, refused() says why', () => {
  const { clock, reports, changes, logs } = setup();
  reports.observe('c1', workWith(T0, [[AUTH, [local('ns', 'l')]]]));
  assert.equal(reports.refused('c1'), undefined);
  const bad = (at: number): string =>
    JSON.stringify({ version: 2, heartbeat: new Date(at).toISOString(), objects: { [AUTH]: { ns: [{ name: 'l', targets: [{ gateway: 'gw' }] }, { name: 'Evil Name', targets: [] }] } } });
  reports.observe('c1', workWithText(bad(T0 + 30_000)));
  assert.equal(reports.fresh('c1'), undefined, 'the local policy it lists counts no more');
  assert.equal(changes.at(-1), `c1:${AUTH}/${WHOLE_KIND},${AUTH}/ns`, 'what it kept off the cluster is looked at again');
  assert.equal(reports.refused('c1'), `objects["${AUTH}"].ns[1].name: must be a DNS-1123 subdomain of at most 253 characters`);
  const errors = (): Record<string, unknown>[] => logs.filter((l) => l.level === 'error');
  assert.deepEqual(errors().map((l) => [l.cluster, l.field]), [['c1', `objects["${AUTH}"].ns[1].name`]]);
  clock.advance(30_000);
  reports.observe('c1', workWithText(bad(T0 + 60_000)));
  assert.equal(errors().length, 1, 'the same refusal is not logged at every heartbeat');
  assert.equal(changes.length, 2);
  reports.observe('c1', workWith(T0 + 90_000, [[AUTH, [local('ns', 'l')]]]));
  assert.ok(reports.fresh('c1'));
  assert.equal(reports.refused('c1'), undefined);
});

test('a report of a version this hub does not read is refused, and says so', () => {
  const { reports } = setup();
  reports.observe('c1', workWithText(JSON.stringify({ version: 5, written: '2026-11-23T10:00:00Z', objects: {} })));
  assert.equal(reports.fresh('c1'), undefined);
  assert.equal(reports.refused('c1'), 'version: unsupported version 5: this hub reads versions 4, 3, 2, and 1 (no version field)');
});

test("an old agent's report (version 1) still counts", () => {
  const { reports } = setup();
  reports.observe('c1', workWithText(JSON.stringify({ heartbeat: '2026-11-23T10:00:00Z', kinds: { [AUTH]: { ns: [{ name: 'l', targets: [{ gateway: 'gw' }] }] } } })));
  assert.equal(reports.fresh('c1')?.version, 1);
});

test('ages: seconds since each report was last seen to change, on the hub clock; refused reports too; a cluster whose work went is gone', () => {
  const { clock, reports } = setup();
  assert.deepEqual(reports.ages(), new Map());
  reports.observe('c1', workWith(T0, [[AUTH, []]]));
  clock.advance(10_000);
  reports.observe('c2', workWithText('{not a report'));
  clock.advance(5_000);
  assert.deepEqual(reports.ages(), new Map([['c1', 15], ['c2', 5]]));
  // The same text again is no sign of life: the age keeps growing; a new heartbeat starts it again.
  reports.observe('c1', workWith(T0, [[AUTH, []]]));
  assert.equal(reports.ages().get('c1'), 15);
  clock.advance(STALE);
  assert.equal(reports.ages().get('c1'), 135, 'a stale report keeps its age');
  reports.observe('c1', workWith(T0 + 200_000, [[AUTH, []]]));
  assert.equal(reports.ages().get('c1'), 0);
  reports.observe('c2', undefined);
  assert.deepEqual([...reports.ages().keys()], ['c1']);
  reports.stop();
});

// Version 3: the report is rewritten only when its content changes; the heartbeat work says the agent is alive.

/** The report a version 4 agent writes of `kinds`, content written at `at`. */
function v3Text(at: number, kinds: [string, KubeObject[]][]): string {
  return serializeSpokeReport(buildSpokeReport(new Map(kinds), new Date(at)).report);
}

/** c1's heartbeat work, its feedback the heartbeat written at `at` naming the report `text` (or a digest of its own). */
function heartbeatWork(at: number, text: string | { digest: string }): KubeObject {
  const work = buildSpokeHeartbeatWork({ cluster: 'c1', configMap: { namespace: 'policy-sync-system', name: 'policy-sync-spoke' }, controller: 'x' });
  const report = typeof text === 'string' ? reportDigest(text) : text.digest;
  return withConfigMapFeedback(work, 0, 'heartbeat', serializeSpokeHeartbeat({ heartbeat: new Date(at).toISOString(), report }));
}

test('version 3: a report counts only while a fresh heartbeat names its digest; heartbeats keep it fresh without new report text', () => {
  const { clock, reports, changes } = setup();
  const text = v3Text(T0, [[AUTH, [local('ns', 'l')]]]);
  reports.observe('c1', workWithText(text));
  assert.equal(reports.fresh('c1'), undefined, 'no heartbeat yet: not fresh');
  assert.deepEqual(reports.evidence('c1').state, 'stale');
  reports.observeHeartbeat('c1', heartbeatWork(T0, text));
  assert.equal(reports.fresh('c1')?.version, 4);
  assert.deepEqual(changes, [`c1:${AUTH}/${WHOLE_KIND},${AUTH}/ns`]);
  // Heartbeats every 30 s, the report text unchanged: fresh throughout, nothing re-queued.
  for (let i = 1; i <= 10; i++) {
    clock.advance(30_000);
    reports.observeHeartbeat('c1', heartbeatWork(T0 + i * 30_000, text));
    assert.ok(reports.fresh('c1'), `heartbeat ${i}`);
  }
  assert.equal(changes.length, 1);
  assert.equal(reports.ages().get('c1'), 0);
  // The agent stops: stale staleAfter after its last heartbeat, the timer says so.
  clock.advance(STALE - 1);
  assert.ok(reports.fresh('c1'));
  clock.advance(1);
  assert.equal(reports.fresh('c1'), undefined);
  assert.equal(changes.length, 2);
  assert.equal(reports.ages().get('c1'), STALE / 1000);
  // The same heartbeat seen again (a relist) is no sign of life; a new one is.
  reports.observeHeartbeat('c1', heartbeatWork(T0 + 330_000, text));
  assert.ok(reports.fresh('c1'));
  reports.observe('c1', heartbeatWork(T0 + 330_000, text));
  clock.advance(STALE);
  assert.equal(reports.fresh('c1'), undefined, 'observe() hands a heartbeat work to observeHeartbeat: the same text, no sign of life');
});

test('version 3: a heartbeat naming another digest says the hub holds an older report: not fresh until the report catches up', () => {
  const { clock, reports, changes } = setup();
  const first = v3Text(T0, [[AUTH, []]]);
  reports.observe('c1', workWithText(first));
  reports.observeHeartbeat('c1', heartbeatWork(T0, first));
  assert.ok(reports.fresh('c1'));
  // The agent wrote new content and its heartbeat; the heartbeat reaches the hub first.
  const second = v3Text(T0 + 5_000, [[AUTH, [local('ns', 'l')]]]);
  clock.advance(5_000);
  reports.observeHeartbeat('c1', heartbeatWork(T0 + 5_000, second));
  assert.equal(reports.fresh('c1'), undefined, 'the hub copy is behind the spoke');
  assert.equal(reports.evidence('c1').state, 'stale');
  clock.advance(1_000);
  reports.observe('c1', workWithText(second));
  assert.ok(reports.fresh('c1'));
  assert.deepEqual(reports.fresh('c1')?.objects[AUTH], { ns: [{ name: 'l', targets: [{ gateway: 'gw' }] }] });
  // Fresh from the heartbeat that vouched for it, not from the report's arrival.
  clock.advance(STALE - 1_000 - 1);
  assert.ok(reports.fresh('c1'));
  clock.advance(1);
  assert.equal(reports.fresh('c1'), undefined);
  assert.ok(changes.length >= 3);
  // A heartbeat naming a digest that is no report at all, or the heartbeat work gone: not fresh.
  reports.observeHeartbeat('c1', heartbeatWork(T0 + 400_000, second));
  assert.ok(reports.fresh('c1'));
  reports.observeHeartbeat('c1', heartbeatWork(T0 + 430_000, { digest: 'f'.repeat(64) }));
  assert.equal(reports.fresh('c1'), undefined);
  reports.observeHeartbeat('c1', heartbeatWork(T0 + 460_000, second));
  assert.ok(reports.fresh('c1'));
  reports.observeHeartbeat('c1', undefined);
  assert.equal(reports.fresh('c1'), undefined, 'no heartbeat: not fresh');
});

test("another spoke configuration's report and heartbeat do not count: a work still placing another ConfigMap, or its status still about the one its spec named before", () => {
  const ours = { namespace: 'policy-sync-system', name: 'policy-sync-spoke' };
  const former = { namespace: 'policy-sync-system', name: 'spoke-config-old' };
  const text = v3Text(T0, [[AUTH, []]]);
  const configWork = (configMap: typeof ours) => buildSpokeConfigWork({ cluster: 'c1', kinds: [], configMap, controller: 'x' });
  const beatWork = (configMap: typeof ours) => buildSpokeHeartbeatWork({ cluster: 'c1', configMap, controller: 'x' });
  const heartbeat = serializeSpokeHeartbeat({ heartbeat: new Date(T0).toISOString(), report: reportDigest(text) });
  const { reports, changes } = setup({ config: ours });
  // The works of the former configuration, as the agent of that configuration had them: not this hub's configuration.
  reports.observe('c1', withConfigMapFeedback(configWork(former), 1, 'report', text));
  reports.observeHeartbeat('c1', withConfigMapFeedback(beatWork(former), 0, 'heartbeat', heartbeat));
  assert.equal(reports.fresh('c1'), undefined, 'the former configuration works: no report');
  assert.deepEqual(reports.ages(), new Map(), 'nothing seen');
  // This hub rewrote their spec; the status is still the work agent's of the former spec: no report until it applies this one.
  const stale = <T extends KubeObject>(rewritten: T, of: KubeObject): T => ({ ...rewritten, status: of.status });
  reports.observe('c1', stale(configWork(ours), withConfigMapFeedback(configWork(former), 1, 'report', text)));
  reports.observeHeartbeat('c1', stale(beatWork(ours), withConfigMapFeedback(beatWork(former), 0, 'heartbeat', heartbeat)));
  assert.equal(reports.fresh('c1'), undefined, 'the spec rewritten, the status not yet: no report');
  assert.deepEqual(changes, []);
  // Applied: the status is about this configuration's ConfigMaps, and the agent of this configuration vouches for its report.
  reports.observe('c1', withConfigMapFeedback(configWork(ours), 1, 'report', text));
  reports.observeHeartbeat('c1', withConfigMapFeedback(beatWork(ours), 0, 'heartbeat', heartbeat));
  assert.ok(reports.fresh('c1'), "this configuration's report, vouched for by its heartbeat");
  // Without a configuration given (the CLI reading what the works say), the work's own spec is the only test.
  const cli = setup();
  cli.reports.observe('c1', withConfigMapFeedback(configWork(former), 1, 'report', text));
  cli.reports.observeHeartbeat('c1', withConfigMapFeedback(beatWork(former), 0, 'heartbeat', heartbeat));
  assert.ok(cli.reports.fresh('c1'));
  cli.reports.observe('c1', stale(configWork(ours), withConfigMapFeedback(configWork(former), 1, 'report', text)));
  assert.equal(cli.reports.fresh('c1'), undefined);
});

test('version 3: an unreadable heartbeat vouches for nothing and is named as the refusal; a version 2 report needs no heartbeat', () => {
  const { reports, logs } = setup();
  const text = v3Text(T0, [[AUTH, []]]);
  reports.observe('c1', workWithText(text));
  const bad = heartbeatWork(T0, text);
  (bad.status as { resourceStatus: { manifests: { statusFeedback: { values: { fieldValue: { string: string } }[] } }[] } }).resourceStatus.manifests[0]!.statusFeedback.values[0]!.fieldValue.string = '{"heartbeat":"soon","report":"x"}';
  reports.observeHeartbeat('c1', bad);
  assert.equal(reports.fresh('c1'), undefined);
  assert.equal(reports.refused('c1'), 'heartbeat: heartbeat: must be an RFC 3339 time');
  assert.deepEqual(reports.evidence('c1'), { state: 'refused', why: 'heartbeat: heartbeat: must be an RFC 3339 time' });
  assert.equal(logs.filter((l) => l.level === 'error').length, 1);
  // An older agent's report (version 2) counts by its own text, whatever the heartbeat work says.
  reports.observe('c1', workWith(T0 + 30_000, [[AUTH, []]]));
  assert.equal(reports.fresh('c1')?.version, 2);
  assert.equal(reports.refused('c1'), undefined);
});

test('allFresh: true with no report or every report fresh; false while one is stale (it may hide a copy)', () => {
  const { clock, reports } = setup();
  assert.equal(reports.allFresh(), true, 'none held');
  reports.observe('c1', workWith(T0, [[AUTH, []]]));
  assert.equal(reports.allFresh(), true);
  clock.advance(STALE + 1);
  assert.equal(reports.fresh('c1'), undefined);
  assert.equal(reports.allFresh(), false, 'c1 stale');
  reports.observe('c1', workWith(T0 + STALE + 1, [[AUTH, [local('ns', 'p')]]]));
  assert.equal(reports.allFresh(), true, 'c1 fresh again');
  reports.observe('c1', undefined);
  assert.equal(reports.allFresh(), true, 'its work gone: nothing held');
});
