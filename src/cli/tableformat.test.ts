import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import type { PolicyStatus } from '../core/status/policystatus.ts';
import type { PolicyRow } from './statusformat.ts';
import { formatClusterTable, formatDocument, formatNames, formatPolicyTable, listOf, policyMessage, qualifiedName, renderLine, rolloutCell } from './tableformat.ts';

const enforced = { state: 'Enforced', applied: true, available: true, enforced: 'True', reason: 'Enforced', message: 'AuthPolicy has been successfully enforced', upToDate: true } as const;
const failed = { state: 'Failed', applied: true, available: true, enforced: 'False', reason: 'MissingResource', message: 'gateway not found on the cluster, a long message to be cut', upToDate: true } as const;

function row(name: string, namespace: string, status: PolicyStatus): PolicyRow {
  return { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', kind: 'AuthPolicy', namespace, name, status };
}

const AUTH = row('payments-auth', 'payments', { summary: { clusters: 2, applied: 2, enforced: 1, overridden: 0, pending: 0, failed: 1 }, clusters: { c1: enforced, c2: failed } });
const NOWHERE = row('a-policy-with-a-rather-long-name', 'shop', {
  summary: { clusters: 0, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 0 },
  clusters: {},
  problems: [{ reason: 'NoClusters', message: 'the targeted Gateways are placed on no cluster: nothing is synced' }],
});

test('qualifiedName: kind.group/name as kubectl -o name prints it; the core group has no suffix', () => {
  assert.equal(qualifiedName(AUTH), 'authpolicy.kuadrant.io/payments-auth');
  assert.equal(qualifiedName({ kind: 'ConfigMap', group: '', name: 'x' }), 'configmap/x');
  assert.equal(formatNames([AUTH, NOWHERE]), 'authpolicy.kuadrant.io/payments-auth\nauthpolicy.kuadrant.io/a-policy-with-a-rather-long-name\n');
});

test('policyMessage: the problems, then each cluster neither enforced nor overridden', () => {
  assert.equal(policyMessage(AUTH), 'c2: Failed MissingResource');
  assert.equal(policyMessage(NOWHERE), 'NoClusters: the targeted Gateways are placed on no cluster: nothing is synced');
});

test('the policy table: kubectl columns, three-space padding, nothing cut without a terminal width', () => {
  const long = 'authpolicy.kuadrant.io/a-policy-with-a-rather-long-name';
  const name = (text: string): string => text.padEnd(long.length + 3);
  assert.deepEqual(formatPolicyTable([AUTH, NOWHERE], { namespaceColumn: false }), [
    `${name('NAME')}ENFORCED   OVERRIDDEN   PENDING   FAILED   MESSAGE`,
    `${name('authpolicy.kuadrant.io/payments-auth')}1/2        0            0         1        c2: Failed MissingResource`,
    `${name(long)}0/0        0            0         0        ${NOWHERE.status.problems![0]!.reason}: ${NOWHERE.status.problems![0]!.message}`,
  ]);
});

test('on a terminal only the MESSAGE column is cut to its width; names never are', () => {
  const lines = formatPolicyTable([AUTH, NOWHERE], { namespaceColumn: true, width: 130 });
  assert.deepEqual(lines.map((l) => l.split(/ {2,}/)[0]), ['NAMESPACE', 'payments', 'shop']);
  for (const l of lines) assert.ok(Array.from(l).length <= 130, l);
  assert.ok(lines[2]!.includes('authpolicy.kuadrant.io/a-policy-with-a-rather-long-name'));
  assert.ok(lines[2]!.endsWith('…'));
  // Names wider than the terminal: the line overflows, the message keeps ten characters.
  const narrow = formatPolicyTable([NOWHERE], { namespaceColumn: false, width: 40 });
  assert.ok(narrow[1]!.startsWith('authpolicy.kuadrant.io/a-policy-with-a-rather-long-name'));
  assert.ok(narrow[1]!.endsWith('   NoCluster…'), narrow[1]);
  assert.equal(renderLine(['a', 'b'], [3, 1], 80), 'a     b');
});

test('the UNKNOWN column appears only when some policy has unknown clusters', () => {
  const unknown = row('u', 'p', { summary: { clusters: 1, applied: 0, enforced: 0, overridden: 0, pending: 0, failed: 0, unknown: 1 }, clusters: {} });
  assert.ok(formatPolicyTable([AUTH, unknown], { namespaceColumn: false })[0]!.includes('UNKNOWN'));
  assert.ok(!formatPolicyTable([AUTH], { namespaceColumn: false })[0]!.includes('UNKNOWN'));
});

test('per-cluster rows: one per policy per cluster; a policy on no cluster gets one <none> row', () => {
  const rows = formatClusterTable([AUTH, NOWHERE], { namespaceColumn: false }).map((l) => l.split(/ {2,}/));
  assert.deepEqual(rows, [
    ['NAME', 'CLUSTER', 'STATE', 'REASON', 'UPTODATE', 'MESSAGE'],
    ['authpolicy.kuadrant.io/payments-auth', 'c1', 'Enforced', 'Enforced', 'true', enforced.message],
    ['authpolicy.kuadrant.io/payments-auth', 'c2', 'Failed', 'MissingResource', 'true', failed.message],
    ['authpolicy.kuadrant.io/a-policy-with-a-rather-long-name', '<none>', '-', 'NoClusters', '-', NOWHERE.status.problems![0]!.message],
  ]);
});

test('-o json and -o yaml: a v1 List of items with apiVersion, kind, metadata and syncStatus; keys sorted', () => {
  const json = formatDocument(listOf([AUTH]), 'json');
  const doc = JSON.parse(json) as Record<string, unknown>;
  assert.deepEqual(Object.keys(doc), ['apiVersion', 'items', 'kind', 'metadata']);
  assert.deepEqual(doc, {
    apiVersion: 'v1',
    kind: 'List',
    metadata: { resourceVersion: '' },
    items: [{ apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { name: 'payments-auth', namespace: 'payments' }, syncStatus: AUTH.status }],
  });
  const yaml = formatDocument(listOf([AUTH]), 'yaml');
  assert.deepEqual(parse(yaml), doc);
  assert.match(yaml, /^apiVersion: v1\nitems:\n {2}- apiVersion: kuadrant\.io\/v1\n/);
});

const PROGRESSIVE = row('canaried', 'payments', {
  summary: { clusters: 2, applied: 2, enforced: 1, overridden: 0, pending: 0, failed: 1 },
  clusters: {
    c1: { ...enforced, revision: 2, rollout: { phase: 'Waiting', message: 'runs revision 2 until its wave' } },
    c2: { ...failed, revision: 3, rollout: { phase: 'Failed', message: 'gateway not found' } },
  },
  rollout: {
    strategy: 'Progressive',
    revision: 3,
    state: 'Halted',
    wave: 1,
    waves: 2,
    halted: { cluster: 'c2', reason: 'MissingResource', message: 'gateway not found', rolledBack: false },
    message: 'halted at revision 3: c2: MissingResource: gateway not found; …',
  },
});

test('the policy table: a ROLLOUT column only when some policy rolls out Progressive; a halt leads its MESSAGE', () => {
  assert.ok(!formatPolicyTable([AUTH], { namespaceColumn: false })[0]!.includes('ROLLOUT'));
  const rows = formatPolicyTable([AUTH, PROGRESSIVE], { namespaceColumn: false }).map((l) => l.split(/ {2,}/));
  assert.deepEqual(rows, [
    ['NAME', 'ENFORCED', 'OVERRIDDEN', 'PENDING', 'FAILED', 'ROLLOUT', 'MESSAGE'],
    ['authpolicy.kuadrant.io/payments-auth', '1/2', '0', '0', '1', '-', 'c2: Failed MissingResource'],
    ['authpolicy.kuadrant.io/canaried', '1/2', '0', '0', '1', 'Halted wave 1/2', 'Halted: c2: MissingResource: gateway not found; c2: Failed MissingResource'],
  ]);
  assert.equal(rolloutCell({ ...PROGRESSIVE, status: { ...PROGRESSIVE.status, rollout: { ...PROGRESSIVE.status.rollout!, state: 'Progressing', message: '' } } }), 'Progressing wave 1/2');
});

test('-o wide per-cluster rows: REVISION, and ROLLOUT (the cluster\'s phase) when some policy rolls out Progressive', () => {
  const plain = formatClusterTable([AUTH, NOWHERE], { namespaceColumn: false, wide: true }).map((l) => l.split(/ {2,}/));
  assert.deepEqual(plain[0], ['NAME', 'CLUSTER', 'STATE', 'REASON', 'UPTODATE', 'REVISION', 'MESSAGE']);
  assert.deepEqual(plain.slice(1).map((r) => r.slice(1, 2).concat(r.slice(5, 6))), [['c1', '-'], ['c2', '-'], ['<none>', '-']]);
  const rows = formatClusterTable([PROGRESSIVE], { namespaceColumn: false, wide: true }).map((l) => l.split(/ {2,}/));
  assert.deepEqual(rows, [
    ['NAME', 'CLUSTER', 'STATE', 'REASON', 'UPTODATE', 'REVISION', 'ROLLOUT', 'MESSAGE'],
    ['authpolicy.kuadrant.io/canaried', 'c1', 'Enforced', 'Enforced', 'true', '2', 'Waiting', enforced.message],
    ['authpolicy.kuadrant.io/canaried', 'c2', 'Failed', 'MissingResource', 'true', '3', 'Failed', failed.message],
  ]);
  // Not wide (a Gateway's view): the columns stay as they were.
  assert.deepEqual(formatClusterTable([PROGRESSIVE], { namespaceColumn: false }).map((l) => l.split(/ {2,}/))[0], ['NAME', 'CLUSTER', 'STATE', 'REASON', 'UPTODATE', 'MESSAGE']);
});

const GEO_FAILED = { state: 'Failed', applied: true, available: true, enforced: 'Unknown', reason: 'VariantValueMissing', message: 'variant geo entry 0: label geo is not set on cluster c3', upToDate: false } as const;
const VARIED = row('dns', 'payments', {
  summary: { clusters: 3, applied: 3, enforced: 2, overridden: 0, pending: 0, failed: 1 },
  clusters: { c1: { ...enforced, variants: ['geo@1'] }, c2: { ...enforced, variants: ['geo@1', 'zone@2'] }, c3: GEO_FAILED },
});

test('clusters running a PolicyVariant: the table counts them (VARIANTS), -o wide names the variants each copy carries; no column when none runs one', () => {
  assert.ok(!formatPolicyTable([AUTH], { namespaceColumn: false })[0]!.includes('VARIANTS'));
  assert.ok(!formatClusterTable([AUTH], { namespaceColumn: false, wide: true })[0]!.includes('VARIANTS'));
  assert.deepEqual(formatPolicyTable([AUTH, VARIED], { namespaceColumn: false }).map((l) => l.split(/ {2,}/)), [
    ['NAME', 'ENFORCED', 'OVERRIDDEN', 'PENDING', 'FAILED', 'VARIANTS', 'MESSAGE'],
    ['authpolicy.kuadrant.io/payments-auth', '1/2', '0', '0', '1', '0', 'c2: Failed MissingResource'],
    ['authpolicy.kuadrant.io/dns', '2/3', '0', '0', '1', '2', 'c3: Failed VariantValueMissing'],
  ]);
  assert.deepEqual(formatClusterTable([VARIED], { namespaceColumn: false, wide: true }).map((l) => l.split(/ {2,}/)), [
    ['NAME', 'CLUSTER', 'STATE', 'REASON', 'UPTODATE', 'REVISION', 'VARIANTS', 'MESSAGE'],
    ['authpolicy.kuadrant.io/dns', 'c1', 'Enforced', 'Enforced', 'true', '-', 'geo@1', enforced.message],
    ['authpolicy.kuadrant.io/dns', 'c2', 'Enforced', 'Enforced', 'true', '-', 'geo@1,zone@2', enforced.message],
    ['authpolicy.kuadrant.io/dns', 'c3', 'Failed', 'VariantValueMissing', 'false', '-', '-', GEO_FAILED.message],
  ]);
  // Not wide (a Gateway's view): no VARIANTS column.
  assert.deepEqual(formatClusterTable([VARIED], { namespaceColumn: false }).map((l) => l.split(/ {2,}/))[0], ['NAME', 'CLUSTER', 'STATE', 'REASON', 'UPTODATE', 'MESSAGE']);
  // A per-cluster part cut short (the table reads the summary only): how many is not known.
  const cut = row('cut', 'payments', { summary: { clusters: 40, applied: 40, enforced: 40, overridden: 0, pending: 0, failed: 0, truncated: true } });
  assert.equal(formatPolicyTable([VARIED, cut], { namespaceColumn: false }).map((l) => l.split(/ {2,}/))[2]![5], '?');
});
