// No evidence is not evidence of absence (docs/design/tenancy.md#reports-are-evidence-not-orders): which clusters
// get no first copy of a policy for want of a fresh spoke report that vouches for the copy's name, and why — the
// evidence as SpokeReports holds it, judged by core/spoke/firstcopy.ts as the decision pipeline does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../core/k8s/objects.ts';
import { buildSpokeConfigWork } from '../core/spoke/spokeconfig.ts';
import type { ManifestWork } from '../core/works/manifestwork.ts';
import { FakeClock } from '../../testkit/fake-clock.ts';
import { withConfigMapFeedback } from '../../testkit/reports.ts';
import { createLogger } from '../runtime/logging.ts';
import { awaitingFirstCopies } from '../core/spoke/firstcopy.ts';
import { SpokeReports } from './spokereports.ts';

const AUTH = 'authpolicies.kuadrant.io';
const RLP = 'ratelimitpolicies.kuadrant.io';
const T0 = Date.parse('2026-11-23T10:00:00Z');
const STALE = 120_000;

function object(kind: string, namespace: string, name: string, annotations?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind,
    metadata: { namespace, name, ...(annotations ? { annotations } : {}) },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' } },
  };
}

/** The spoke-config work of `cluster` carrying `text` as the agent's report. */
function configWork(cluster: string, text: string): KubeObject {
  const work = buildSpokeConfigWork({ cluster, kinds: [], configMap: { namespace: 'policy-sync-system', name: 'policy-sync-spoke' }, controller: 'x' });
  return withConfigMapFeedback(work, 1, 'report', text);
}

/**
 * A version-2 report (its heartbeat inside: new text is a sign of life) as an agent writes it, of these objects
 * by kind: local policies with their Gateway target, copies with the hub policy they copy.
 */
function reportText(at: number, kinds: [string, KubeObject[]][]): string {
  const entry = (o: KubeObject): Record<string, unknown> => {
    const synced = o.metadata.annotations?.['kuadrant.io/policy-synced'];
    return synced !== undefined ? { name: o.metadata.name, synced } : { name: o.metadata.name, targets: [{ gateway: 'gw' }] };
  };
  const objects = Object.fromEntries(
    kinds.map(([kind, list]) => [kind, Object.fromEntries(list.length === 0 ? [] : [['ns', list.map(entry)]])]),
  );
  return JSON.stringify({ version: 2, heartbeat: new Date(at).toISOString().replace(/\.\d+Z$/, 'Z'), objects });
}

/** The desired (or placed) work of hub policy ns/p on `cluster`, placing its copy as `ns/name`. */
function work(cluster: string, name = 'p'): ManifestWork {
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { namespace: cluster, name: 'w', labels: {}, annotations: {} },
    spec: { workload: { manifests: [object('AuthPolicy', 'ns', name, { 'kuadrant.io/policy-synced': 'ns/p' })] }, deleteOption: { propagationPolicy: 'Foreground' }, manifestConfigs: [] },
  };
}

function setup(): { clock: FakeClock; reports: SpokeReports } {
  const clock = new FakeClock(0);
  const logger = createLogger({ level: 'silent' });
  const reports = new SpokeReports({ staleAfterMs: STALE, onChange: () => undefined, logger, clock });
  return { clock, reports };
}

function held(reports: SpokeReports, clusters: string[], observed: KubeObject[] = []): Record<string, string> {
  const desired = new Map(clusters.map((c) => [c, work(c)]));
  return Object.fromEntries(awaitingFirstCopies(AUTH, desired, observed, (c) => reports.evidence(c)).map((h) => [h.cluster, h.message]));
}

const PLACED_ONCE = 'AuthPolicy ns/p is placed once a fresh report shows the name free there';

test('every kind of missing evidence holds a first copy, and the message names it', () => {
  const { clock, reports } = setup();
  // c-fresh: a fresh version-2 report covering the kind, the name free. c-absent: nothing yet.
  reports.observe('c-fresh', configWork('c-fresh', reportText(T0, [[AUTH, []]])));
  // c-stale: reported once, then silent past the limit.
  reports.observe('c-stale', configWork('c-stale', reportText(T0, [[AUTH, []]])));
  // c-refused: a report that breaks the schema.
  reports.observe('c-refused', configWork('c-refused', '{"version":2,"heartbeat":"2026-11-23T10:00:00Z","objects":{"Bad Kind":{}}}'));
  // c-nokind: fresh, without the policy's kind (its watch not live, or left out for the caps).
  reports.observe('c-nokind', configWork('c-nokind', reportText(T0, [[RLP, []]])));
  // c-v1: an older agent's report: local policies only, no word on who holds a name.
  const v1 = (heartbeat: string): string => JSON.stringify({ heartbeat, kinds: { [AUTH]: {} } });
  reports.observe('c-v1', configWork('c-v1', v1('2026-11-23T10:00:00Z')));
  // Past the limit, all but c-stale have heartbeated meanwhile.
  clock.advance(STALE - 1_000);
  reports.observe('c-fresh', configWork('c-fresh', reportText(T0 + STALE, [[AUTH, []]])));
  reports.observe('c-nokind', configWork('c-nokind', reportText(T0 + STALE, [[RLP, []]])));
  reports.observe('c-v1', configWork('c-v1', v1('2026-11-23T10:02:00Z')));
  clock.advance(1_000);
  assert.equal(reports.fresh('c-stale'), undefined);

  const messages = held(reports, ['c-fresh', 'c-absent', 'c-stale', 'c-refused', 'c-nokind', 'c-v1']);
  assert.deepEqual(Object.keys(messages).sort(), ['c-absent', 'c-nokind', 'c-refused', 'c-stale', 'c-v1'], 'only the fresh version-2 report covering the kind lets the copy go');
  assert.equal(messages['c-absent'], `no report from the spoke agent yet; ${PLACED_ONCE}`);
  assert.match(messages['c-stale']!, /^the spoke agent's report is stale since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(hub time\); /);
  assert.match(messages['c-refused']!, /^the spoke agent's report is refused: .+; AuthPolicy ns\/p is placed once/);
  assert.equal(messages['c-nokind'], `kind ${AUTH} is not in the spoke agent's report (its watch is not live, or it was left out); ${PLACED_ONCE}`);
  assert.equal(messages['c-v1'], `the spoke agent's report predates name occupancy (an older agent); ${PLACED_ONCE}`);
});

test("a stale report's message stays the same from one reconcile to the next (no status rewrite for it)", () => {
  const { clock, reports } = setup();
  reports.observe('c1', configWork('c1', reportText(T0, [[AUTH, []]])));
  clock.advance(STALE + 5_000);
  const first = held(reports, ['c1']);
  clock.advance(60_000);
  assert.deepEqual(held(reports, ['c1']), first);
  // A new report, gone stale in its turn, is stale since a later time.
  reports.observe('c1', configWork('c1', reportText(T0 + 200_000, [[AUTH, []]])));
  assert.deepEqual(held(reports, ['c1']), {}, 'fresh again: nothing held');
});

test('a fresh report that vouches for the name lets the first copy go: free, or held by this policy\'s own copy', () => {
  const { reports } = setup();
  reports.observe('c1', configWork('c1', reportText(T0, [[AUTH, [object('AuthPolicy', 'ns', 'other')]]])));
  reports.observe('c2', configWork('c2', reportText(T0, [[AUTH, [object('AuthPolicy', 'ns', 'p', { 'kuadrant.io/policy-synced': 'ns/p' })]]])));
  assert.deepEqual(held(reports, ['c1', 'c2']), {});
});

test('a work already placed, its copy the same object, is kept and updated whatever the reports say; one that would move the copy is a first copy', () => {
  const { clock, reports } = setup();
  reports.observe('c-stale', configWork('c-stale', reportText(T0, [[AUTH, []]])));
  clock.advance(STALE);
  // Every cluster has this policy's work placing ns/p: an edit of the policy rewrites it there, report or none.
  const placed = ['c-absent', 'c-stale'].map((c) => work(c));
  assert.deepEqual(held(reports, ['c-absent', 'c-stale'], placed), {});
  // A work placing ns/old (the downstream namespace or name changed): the new name has not been checked.
  const moved = held(reports, ['c-absent'], [work('c-absent', 'old')]);
  assert.deepEqual(Object.keys(moved), ['c-absent']);
  assert.match(moved['c-absent']!, /^no report from the spoke agent yet; /);
});

test('a work being deleted (its policy deleted and re-created before the agent finished) places no copy: what is written next is a first copy, held for a report', () => {
  const { clock, reports } = setup();
  reports.observe('c1', configWork('c1', reportText(T0, [[AUTH, []]])));
  clock.advance(STALE);
  const terminating = { ...work('c1'), metadata: { ...work('c1').metadata, deletionTimestamp: '2026-11-23T10:02:00Z' } };
  assert.deepEqual(Object.keys(held(reports, ['c1'], [terminating])), ['c1']);
  assert.deepEqual(held(reports, ['c1'], [work('c1')]), {}, 'the same work not being deleted: kept and updated');
});

test('a copy withdrawn before (overridden: no work now) is a first copy again: not placed again on doubt', () => {
  const { clock, reports } = setup();
  // The report that withdrew it covered it; now the agent is down.
  reports.observe('c1', configWork('c1', reportText(T0, [[AUTH, [object('AuthPolicy', 'ns', 'local')]]])));
  clock.advance(STALE);
  assert.deepEqual(Object.keys(held(reports, ['c1'], [])), ['c1']);
});
