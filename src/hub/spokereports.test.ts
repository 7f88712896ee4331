import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import type { KubeObject } from '../core/objects.ts';
import { buildSpokeConfigWork } from '../core/spokeconfig.ts';
import { buildSpokeReport, serializeSpokeReport } from '../core/spokereport.ts';
import { FakeClock } from '../runtime/fake-clock.ts';
import { SpokeReports } from './spokereports.ts';

const AUTH = 'authpolicies.kuadrant.io';
const RLP = 'ratelimitpolicies.kuadrant.io';
const T0 = Date.parse('2026-11-23T10:00:00Z');
const STALE = 120_000;

function local(namespace: string, name: string): KubeObject {
  return { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { namespace, name }, spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' } } };
}

/** The spoke-config work of c1 with the report the agent wrote at `at` as its feedback. */
function workWith(at: number, kinds: [string, KubeObject[]][]): KubeObject {
  const work = buildSpokeConfigWork({ cluster: 'c1', kinds: [], configMap: { namespace: 'policy-sync-system', name: 'policy-sync-spoke' }, controller: 'x' });
  const text = serializeSpokeReport(buildSpokeReport(new Map(kinds), new Date(at)));
  const value = { name: 'report', fieldValue: { type: 'String', string: text } };
  return { ...work, status: { resourceStatus: { manifests: [{ resourceMeta: { ordinal: 1, resource: 'configmaps' }, statusFeedback: { values: [value] } }] } } };
}

function setup(): { clock: FakeClock; reports: SpokeReports; changes: string[] } {
  const clock = new FakeClock(T0);
  const changes: string[] = [];
  const reports = new SpokeReports({ staleAfterMs: STALE, onChange: (cluster, kinds) => changes.push(`${cluster}:${kinds.join(',')}`), logger: pino({ level: 'silent' }), now: () => clock.now(), clock });
  return { clock, reports, changes };
}

test('a fresh report counts; heartbeats with the same content change nothing; new content names its kinds', () => {
  const { clock, reports, changes } = setup();
  reports.observe('c1', workWith(T0, [[AUTH, []], [RLP, []]]));
  assert.deepEqual(changes, ['c1:authpolicies.kuadrant.io,ratelimitpolicies.kuadrant.io']);
  assert.ok(reports.fresh('c1'));
  clock.advance(30_000);
  reports.observe('c1', workWith(T0 + 30_000, [[AUTH, []], [RLP, []]]));
  assert.equal(changes.length, 1, 'a heartbeat is no change');
  reports.observe('c1', workWith(T0 + 31_000, [[AUTH, [local('ns', 'l')]], [RLP, []]]));
  assert.deepEqual(changes.at(-1), 'c1:authpolicies.kuadrant.io');
  assert.equal(reports.fresh('c2'), undefined, 'no report: unknown');
});

test('a report goes stale with no event: the timer says so, and it no longer counts; a new heartbeat brings it back', () => {
  const { clock, reports, changes } = setup();
  reports.observe('c1', workWith(T0, [[AUTH, [local('ns', 'l')]]]));
  clock.advance(30_000);
  reports.observe('c1', workWith(T0 + 30_000, [[AUTH, [local('ns', 'l')]]]));
  clock.advance(STALE - 1);
  assert.ok(reports.fresh('c1'), 'still fresh: the limit runs from the latest heartbeat');
  assert.equal(changes.length, 1);
  clock.advance(1);
  assert.equal(reports.fresh('c1'), undefined);
  assert.deepEqual(changes, ['c1:authpolicies.kuadrant.io', 'c1:authpolicies.kuadrant.io']);
  reports.observe('c1', workWith(clock.now(), [[AUTH, [local('ns', 'l')]]]));
  assert.ok(reports.fresh('c1'));
  assert.equal(changes.length, 3, 'fresh again: the kind is looked at again');
});

test('a report stale on arrival (an agent that stopped long ago, or clocks apart) never counts', () => {
  const { clock, reports, changes } = setup();
  clock.advance(STALE + 1);
  reports.observe('c1', workWith(T0, [[AUTH, [local('ns', 'l')]]]));
  assert.equal(reports.fresh('c1'), undefined);
  assert.deepEqual(changes, []);
});

test('the work gone, or a report unreadable, counts as no report', () => {
  const { reports, changes } = setup();
  reports.observe('c1', workWith(T0, [[AUTH, []]]));
  reports.observe('c1', undefined);
  assert.equal(reports.fresh('c1'), undefined);
  assert.deepEqual(changes, ['c1:authpolicies.kuadrant.io', 'c1:authpolicies.kuadrant.io']);
  const work = workWith(T0, [[AUTH, []]]);
  reports.observe('c1', { ...work, status: {} });
  assert.equal(reports.fresh('c1'), undefined);
  assert.equal(changes.length, 2);
});
