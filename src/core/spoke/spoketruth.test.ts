// What the hub concludes runs on each spoke (docs/design/tenancy.md#what-runs-on-a-spoke): from a fresh report only,
// a placed copy not as sent (Drifted), and a copy reported where no work of the policy places it (Lingering once seen
// so for LINGER_GRACE_MS, being removed before). Reports are evidence: an absent, stale or refused one says nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KubeObject } from '../k8s/objects.ts';
import type { ReportEvidence } from './firstcopy.ts';
import { LINGER_GRACE_MS, driftToken, driftedCopies, lingerKey, lingerRecheckAt, lingeringCopies, type LingeringCopy, type ReportedCopyOn } from './spoketruth.ts';
import type { CopyDrift, ReportedCopy, SpokeReport } from './spokereport.ts';

const AUTH = 'authpolicies.kuadrant.io';
const SOURCE = 'hub-shop/shop-auth';
const NOW = Date.parse('2026-11-30T11:00:00Z');
const DRIFT: CopyDrift = { fields: ['spec.targetRef.name'], managers: [{ manager: 'other-tool', operation: 'Update', time: '2026-11-30T10:15:00Z' }], since: '2026-11-30T10:15:00Z' };

/** The copy a work places (its first manifest). */
function placedCopy(namespace: string, name: string): KubeObject {
  return { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { namespace, name }, spec: {} };
}

function report(entries: Record<string, ReportedCopy[]>, kind = AUTH): SpokeReport {
  return { version: 4, heartbeat: '2026-11-30T10:59:00Z', objects: { [kind]: entries } };
}

const fresh = (r: SpokeReport): ReportEvidence => ({ state: 'fresh', report: r });
const DRIFTED_REPORT = report({ shop: [{ name: 'shop-auth', synced: SOURCE, drift: DRIFT }] });

test('driftedCopies: a placed copy its cluster\'s fresh report shows drifted is named, with the drift', () => {
  const placed = new Map([['c1', placedCopy('shop', 'shop-auth')]]);
  assert.deepEqual(driftedCopies(AUTH, SOURCE, placed, () => fresh(DRIFTED_REPORT)), [{ cluster: 'c1', kind: AUTH, namespace: 'shop', name: 'shop-auth', drift: DRIFT }]);
});

test('driftedCopies: only fresh evidence counts: an absent, stale or refused report says nothing', () => {
  const placed = new Map([['c1', placedCopy('shop', 'shop-auth')]]);
  // The report held may still say "drifted": past its freshness it is not acted on.
  const evidence: ReportEvidence[] = [{ state: 'absent' }, { state: 'stale', since: '2026-11-30T10:00:00Z' }, { state: 'refused', why: 'objects: invalid' }];
  for (const e of evidence) assert.deepEqual(driftedCopies(AUTH, SOURCE, placed, () => e), [], e.state);
});

test('driftedCopies: a copy not drifted, or of another source, is not this policy\'s drift', () => {
  const placed = new Map([['c1', placedCopy('shop', 'shop-auth')]]);
  assert.deepEqual(driftedCopies(AUTH, SOURCE, placed, () => fresh(report({ shop: [{ name: 'shop-auth', synced: SOURCE }] }))), []);
  // Another hub policy's copy holds the name (a rival): its drift is that policy's.
  assert.deepEqual(driftedCopies(AUTH, SOURCE, placed, () => fresh(report({ shop: [{ name: 'shop-auth', synced: 'other/p', drift: DRIFT }] }))), []);
  assert.deepEqual(driftedCopies(AUTH, SOURCE, placed, () => fresh(report({ shop: [{ name: 'shop-auth', synced: '', drift: DRIFT }] }))), []);
});

test('driftedCopies: only at the placed copy\'s namespace, name and kind', () => {
  assert.deepEqual(driftedCopies(AUTH, SOURCE, new Map([['c1', placedCopy('shop', 'other-name')]]), () => fresh(DRIFTED_REPORT)), []);
  assert.deepEqual(driftedCopies(AUTH, SOURCE, new Map([['c1', placedCopy('other-ns', 'shop-auth')]]), () => fresh(DRIFTED_REPORT)), []);
  assert.deepEqual(driftedCopies('ratelimitpolicies.kuadrant.io', SOURCE, new Map([['c1', placedCopy('shop', 'shop-auth')]]), () => fresh(DRIFTED_REPORT)), []);
});

test('driftedCopies: each cluster by its own evidence, sorted by cluster', () => {
  const placed = new Map([
    ['c3', placedCopy('shop', 'shop-auth')],
    ['c1', placedCopy('shop', 'shop-auth')],
    ['c2', placedCopy('shop', 'shop-auth')],
  ]);
  const evidence: Record<string, ReportEvidence> = { c1: fresh(DRIFTED_REPORT), c2: { state: 'absent' }, c3: fresh(DRIFTED_REPORT) };
  assert.deepEqual(
    driftedCopies(AUTH, SOURCE, placed, (c) => evidence[c]!).map((d) => d.cluster),
    ['c1', 'c3'],
  );
});

const reported = (cluster: string, namespace: string, name: string, extra: Partial<ReportedCopy> = {}): ReportedCopyOn => ({ cluster, kind: AUTH, namespace, copy: { name, synced: SOURCE, ...extra } });

test('lingeringCopies: a reported copy with no placed copy on its cluster is being removed before LINGER_GRACE_MS, lingering from then', () => {
  const r = [reported('c1', 'shop', 'shop-auth')];
  const key = lingerKey('c1', AUTH, 'shop', 'shop-auth');
  const first = NOW - 10_000;
  const seen = new Map([[key, first]]);
  const at = (now: number): LingeringCopy[] => lingeringCopies(r, new Map(), seen, now);
  assert.deepEqual(at(NOW), [{ cluster: 'c1', kind: AUTH, namespace: 'shop', name: 'shop-auth', seenSince: first, lingering: false }]);
  assert.equal(at(first + LINGER_GRACE_MS - 1)[0]?.lingering, false);
  assert.equal(at(first + LINGER_GRACE_MS)[0]?.lingering, true);
  assert.equal(at(first + 10 * LINGER_GRACE_MS)[0]?.lingering, true);
});

test('lingeringCopies: a copy seen for the first time is seen since now (the caller keeps that)', () => {
  const [c] = lingeringCopies([reported('c1', 'shop', 'shop-auth')], new Map(), new Map(), NOW);
  assert.equal(c?.seenSince, NOW);
  assert.equal(c?.lingering, false);
});

test('lingeringCopies: seenSince comes from the `seen` map by lingerKey, never later than now', () => {
  const r = [reported('c1', 'shop', 'a'), reported('c2', 'shop', 'a')];
  const seen = new Map([
    [lingerKey('c1', AUTH, 'shop', 'a'), NOW - 2 * LINGER_GRACE_MS],
    // Another cluster's time is not this one's; a time ahead of now (a clock step) is taken as now.
    [lingerKey('c2', AUTH, 'shop', 'a'), NOW + 5_000],
  ]);
  const out = lingeringCopies(r, new Map(), seen, NOW);
  assert.deepEqual(out.map((c) => [c.cluster, c.seenSince, c.lingering]), [
    ['c1', NOW - 2 * LINGER_GRACE_MS, true],
    ['c2', NOW, false],
  ]);
});

test('lingeringCopies: the copy the cluster\'s work places is not lingering; one at another name or namespace on the same cluster is', () => {
  const placed = new Map([['c1', placedCopy('shop', 'shop-auth')]]);
  const r = [reported('c1', 'shop', 'shop-auth'), reported('c1', 'shop', 'old-name'), reported('c1', 'old-ns', 'shop-auth')];
  const out = lingeringCopies(r, placed, new Map(), NOW);
  assert.deepEqual(out.map((c) => `${c.namespace}/${c.name}`), ['old-ns/shop-auth', 'shop/old-name']);
});

test('lingeringCopies: the copy placed on another cluster does not keep this one\'s from lingering', () => {
  const placed = new Map([['c2', placedCopy('shop', 'shop-auth')]]);
  assert.deepEqual(lingeringCopies([reported('c1', 'shop', 'shop-auth')], placed, new Map(), NOW).map((c) => c.cluster), ['c1']);
});

test('lingeringCopies: an unowned copy (no AppliedManifestWork: left on purpose by the Orphan option) is never lingering', () => {
  const seen = new Map([[lingerKey('c1', AUTH, 'shop', 'shop-auth'), NOW - 10 * LINGER_GRACE_MS]]);
  assert.deepEqual(lingeringCopies([reported('c1', 'shop', 'shop-auth', { unowned: true })], new Map(), seen, NOW), []);
});

test('lingeringCopies: a lingering copy that also drifted carries its drift', () => {
  const [c] = lingeringCopies([reported('c1', 'shop', 'shop-auth', { drift: DRIFT })], new Map(), new Map(), NOW);
  assert.deepEqual(c?.drift, DRIFT);
});

test('lingeringCopies: sorted by cluster, kind, namespace and name', () => {
  const r = [reported('c2', 'a', 'x'), reported('c1', 'b', 'x'), reported('c1', 'a', 'y'), reported('c1', 'a', 'x')];
  assert.deepEqual(lingeringCopies(r, new Map(), new Map(), NOW).map((c) => `${c.cluster} ${c.namespace}/${c.name}`), ['c1 a/x', 'c1 a/y', 'c1 b/x', 'c2 a/x']);
});

test('lingerKey: cluster, kind and namespace/name, each apart', () => {
  assert.equal(lingerKey('c1', AUTH, 'shop', 'p'), `c1|${AUTH}|shop/p`);
  assert.notEqual(lingerKey('c1', AUTH, 'shop', 'p'), lingerKey('c1', AUTH, 'shop', 'q'));
  assert.notEqual(lingerKey('c1', AUTH, 'shop', 'p'), lingerKey('c2', AUTH, 'shop', 'p'));
});

test('lingerRecheckAt: when the first copy being removed would linger; undefined when none waits', () => {
  const copy = (seenSince: number, lingering: boolean): LingeringCopy => ({ cluster: 'c1', kind: AUTH, namespace: 'shop', name: 'p', seenSince, lingering });
  assert.equal(lingerRecheckAt([]), undefined);
  // Those already lingering wait for nothing.
  assert.equal(lingerRecheckAt([copy(NOW - 2 * LINGER_GRACE_MS, true)]), undefined);
  assert.equal(lingerRecheckAt([copy(NOW - 2 * LINGER_GRACE_MS, true), copy(NOW - 5_000, false), copy(NOW - 20_000, false)]), NOW - 20_000 + LINGER_GRACE_MS);
});

test('lingerRecheckAt: at the time it names, lingeringCopies says the copy lingers', () => {
  const r = [reported('c1', 'shop', 'shop-auth')];
  const before = lingeringCopies(r, new Map(), new Map(), NOW);
  const at = lingerRecheckAt(before);
  assert.equal(at, NOW + LINGER_GRACE_MS);
  const seen = new Map(before.map((c) => [lingerKey(c.cluster, c.kind, c.namespace, c.name), c.seenSince]));
  assert.equal(lingeringCopies(r, new Map(), seen, at)[0]?.lingering, true);
});

test('driftToken: stable for the same drift, a 16-hex token', () => {
  assert.equal(driftToken(DRIFT), driftToken(structuredClone(DRIFT)));
  // Key order does not matter: the token is canonical.
  assert.equal(driftToken({ since: DRIFT.since!, managers: DRIFT.managers, fields: DRIFT.fields }), driftToken(DRIFT));
  assert.match(driftToken(DRIFT), /^[0-9a-f]{16}$/);
});

test('driftToken: the same within the ten seconds a fighting hand rewrites the same fields (no put-back loop); not after', () => {
  assert.equal(driftToken({ ...DRIFT, managers: [{ ...DRIFT.managers[0]!, time: '2026-11-30T10:15:04Z' }], since: '2026-11-30T10:15:04Z' }), driftToken(DRIFT));
  assert.notEqual(driftToken({ ...DRIFT, since: '2026-11-30T10:15:10Z' }), driftToken(DRIFT));
  assert.notEqual(driftToken({ ...DRIFT, fields: ['spec.rules.authorization.deny.priority'] }), driftToken(DRIFT), 'other fields: a new drift at once');
});

test('driftToken: changes with the fields, the count left out, the managers and since', () => {
  const tokens = new Set([
    driftToken(DRIFT),
    driftToken({ ...DRIFT, fields: ['spec.rules'] }),
    driftToken({ ...DRIFT, more: 2 }),
    driftToken({ ...DRIFT, managers: [{ manager: 'kubectl-edit', operation: 'Update', time: DRIFT.since! }] }),
    driftToken({ ...DRIFT, since: '2026-11-30T10:16:00Z' }),
    driftToken({ fields: DRIFT.fields, managers: DRIFT.managers }),
  ]);
  assert.equal(tokens.size, 6);
});

test('driftToken (property): equal drifts give equal tokens, differing fields give differing tokens', () => {
  const text = fc.string({ minLength: 1, maxLength: 12 });
  const drift = fc.record({ fields: fc.uniqueArray(text, { minLength: 1, maxLength: 4 }), managers: fc.array(fc.record({ manager: text }), { maxLength: 3 }) });
  fc.assert(
    fc.property(drift, text, (d, extra) => {
      assert.equal(driftToken(structuredClone(d)), driftToken(d));
      if (!d.fields.includes(extra)) assert.notEqual(driftToken({ ...d, fields: [...d.fields, extra] }), driftToken(d));
    }),
  );
});
