// The pure parts of status.ts: naming a policy kind on the command line, and rebuilding the per-cluster
// status from ManifestWorks when the hub annotation was truncated. The reading is covered by
// test/integration/status-cli.test.ts against the sandbox.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidArgumentError } from 'commander';
import type { KubeObject } from '../core/k8s/objects.ts';
import type { PolicyStatus } from '../core/status/policystatus.ts';
import { isGatewayResource, matchKinds, parsePolicyReference, statusFromWorks, targetsGateway, type SyncedKind } from './status.ts';

const AUTH: SyncedKind = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies', kind: 'AuthPolicy', singular: 'authpolicy', shortNames: [] };
const RATE: SyncedKind = { group: 'kuadrant.io', version: 'v1', resource: 'ratelimitpolicies', kind: 'RateLimitPolicy', singular: 'ratelimitpolicy', shortNames: ['rlp'] };
const OTHER_AUTH: SyncedKind = { ...AUTH, group: 'example.com' };

test('matchKinds: plural, singular, Kind, short name; bare or qualified by group or version.group; any case', () => {
  for (const text of ['authpolicies', 'AuthPolicy', 'authpolicy', 'AUTHPOLICIES', 'authpolicies.kuadrant.io', 'AuthPolicy.kuadrant.io', 'authpolicies.v1.kuadrant.io']) {
    assert.deepEqual(matchKinds(text, [AUTH, RATE]), [AUTH], text);
  }
  assert.deepEqual(matchKinds('rlp', [AUTH, RATE]), [RATE]);
  assert.deepEqual(matchKinds('authpolicies.v2.kuadrant.io', [AUTH, RATE]), []);
  assert.deepEqual(matchKinds('authpolicies.kuadrant', [AUTH, RATE]), []);
  assert.deepEqual(matchKinds('dnspolicies', [AUTH, RATE]), []);
});

test('matchKinds: the same name in two groups is ambiguous unless qualified', () => {
  assert.deepEqual(matchKinds('authpolicies', [AUTH, OTHER_AUTH]), [AUTH, OTHER_AUTH]);
  assert.deepEqual(matchKinds('authpolicies.example.com', [AUTH, OTHER_AUTH]), [OTHER_AUTH]);
});

test('parsePolicyReference: <resource>/<namespace>/<name>, or <resource>/<name> in the -n namespace', () => {
  assert.deepEqual(parsePolicyReference('authpolicies/payments/payments-auth'), { resource: 'authpolicies', namespace: 'payments', name: 'payments-auth' });
  assert.deepEqual(parsePolicyReference('authpolicy/payments-auth'), { resource: 'authpolicy', name: 'payments-auth' });
  for (const bad of ['payments-auth', 'a/b/c/d', '/payments/x', 'authpolicies//x', 'authpolicies/payments/', 'authpolicies/']) {
    assert.throws(() => parsePolicyReference(bad), InvalidArgumentError, bad);
  }
});

test('targetsGateway: a targetRef or any of targetRefs naming the Gateway, in the policy\'s namespace unless it names one', () => {
  const policy = (spec: Record<string, unknown>, namespace = 'payments'): KubeObject => ({ apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { name: 'p', namespace }, spec });
  const gw = (name: string, extra: Record<string, unknown> = {}) => ({ group: 'gateway.networking.k8s.io', kind: 'Gateway', name, ...extra });
  assert.equal(targetsGateway(policy({ targetRef: gw('gw') }), 'payments', 'gw'), true);
  assert.equal(targetsGateway(policy({ targetRefs: [gw('other'), gw('gw', { sectionName: 'https' })] }), 'payments', 'gw'), true);
  assert.equal(targetsGateway(policy({ targetRef: gw('gw') }), 'shop', 'gw'), false);
  assert.equal(targetsGateway(policy({ targetRef: gw('gw', { namespace: 'shop' }) }), 'shop', 'gw'), true, 'cross-namespace: shown with its problem');
  assert.equal(targetsGateway(policy({ targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'gw' } }), 'payments', 'gw'), false);
  for (const text of ['gateway', 'Gateways', 'gateway.gateway.networking.k8s.io', 'gateways.v1.gateway.networking.k8s.io']) assert.equal(isGatewayResource(text), true, text);
  assert.equal(isGatewayResource('gatewayclass'), false);
});

const NOW = Date.parse('2026-01-01T00:00:10Z');
const value = (name: string, v: string | number) => ({ name, fieldValue: typeof v === 'number' ? { type: 'Integer', integer: v } : { type: 'String', string: v } });
const condition = (type: string) => ({ type, status: 'True', reason: type, message: '', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z' });

function work(cluster: string, status: unknown): KubeObject {
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name: 'authpolicies-payments-payments-auth-abcdef', namespace: cluster, generation: 1 },
    spec: {},
    ...(status === undefined ? {} : { status }),
  };
}

function reported(cluster: string, enforced: [string, string, string]): KubeObject {
  const [status, reason, message] = enforced;
  return work(cluster, {
    conditions: [condition('Applied'), condition('Available')],
    resourceStatus: {
      manifests: [
        {
          resourceMeta: { ordinal: 0 },
          statusFeedback: {
            values: [value('generation', 3), value('enforcedStatus', status), value('enforcedReason', reason), value('enforcedMessage', message), value('enforcedGeneration', 3)],
          },
          conditions: [],
        },
      ],
    },
  });
}

test('statusFromWorks: per-cluster entries from the works; the summary (truncated) and problems stay the annotation’s', () => {
  const annotation: PolicyStatus = {
    summary: { clusters: 4, applied: 2, enforced: 1, overridden: 1, pending: 1, failed: 1, truncated: true },
    problems: [{ reason: 'NamespaceMismatch', message: 'something the hub found' }],
  };
  const works = [
    reported('c1', ['True', 'Enforced', 'AuthPolicy has been successfully enforced']),
    reported('c2', ['False', 'Overridden', 'AuthPolicy is overridden by [payments/local]']),
    work('c3', undefined),
  ];
  assert.deepEqual(statusFromWorks(annotation, works, NOW), {
    summary: annotation.summary,
    problems: annotation.problems,
    clusters: {
      c1: { state: 'Enforced', applied: true, available: true, enforced: 'True', reason: 'Enforced', message: 'AuthPolicy has been successfully enforced', upToDate: true },
      c2: { state: 'Overridden', applied: true, available: true, enforced: 'False', reason: 'Overridden', message: 'AuthPolicy is overridden by [payments/local]', upToDate: true },
      c3: { state: 'Pending', applied: false, available: false, enforced: 'Unknown', reason: 'Pending', message: 'waiting for the ManifestWork status from the cluster', upToDate: false },
    },
  });
  assert.deepEqual(statusFromWorks(annotation, [], NOW).clusters, {});
});

test('statusFromWorks: the annotation\'s own entries stay for clusters without a work; works bring the statusFeedback values', () => {
  const conflicted = { state: 'Failed', applied: false, available: false, enforced: 'False', reason: 'Conflicted', message: 'already synced', upToDate: false } as const;
  const stale = { state: 'Pending', applied: false, available: false, enforced: 'Unknown', reason: 'Pending', message: 'old', upToDate: false } as const;
  // The hub left the values out (too large) but kept the clusters.
  const annotation: PolicyStatus = {
    summary: { clusters: 2, applied: 1, enforced: 1, overridden: 0, pending: 0, failed: 1, truncated: true },
    clusters: { c2: stale, c0: conflicted },
  };
  const withValues = reported('c2', ['True', 'Enforced', 'ok']);
  const values = (withValues.status as { resourceStatus: { manifests: { statusFeedback: { values: unknown[] } }[] } }).resourceStatus.manifests[0]!.statusFeedback.values;
  values.push(value('limitsTotal', 4));
  const rebuilt = statusFromWorks(annotation, [withValues], NOW);
  assert.deepEqual(Object.keys(rebuilt.clusters ?? {}), ['c0', 'c2'], 'sorted by cluster');
  assert.deepEqual(rebuilt.clusters?.c0, conflicted);
  assert.equal(rebuilt.clusters?.c2?.state, 'Enforced');
  assert.deepEqual(rebuilt.clusters?.c2?.statusFeedback, { limitsTotal: 4 });
});

test('statusFromWorks judges a copy without a readable status at `now`', () => {
  const applied = { ...condition('Applied'), lastTransitionTime: '2026-01-01T00:00:00Z' };
  const silent = work('c1', { conditions: [applied, condition('Available')], resourceStatus: { manifests: [{ resourceMeta: { ordinal: 0 }, statusFeedback: { values: [value('generation', 1)] }, conditions: [] }] } });
  const annotation: PolicyStatus = { summary: { clusters: 1, applied: 1, enforced: 0, overridden: 0, pending: 1, failed: 0, truncated: true } };
  assert.equal(statusFromWorks(annotation, [silent], Date.parse('2026-01-01T00:00:30Z')).clusters?.c1?.state, 'Pending');
  assert.equal(statusFromWorks(annotation, [silent], Date.parse('2026-01-01T00:01:00Z')).clusters?.c1?.reason, 'NoStatus');
});

test('statusFromWorks: each cluster\'s revision is what its work\'s copy carries; its rollout phase stays the annotation\'s', () => {
  const copy = { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata: { name: 'payments-auth', namespace: 'payments', annotations: { 'policysync.kuadrant.io/revision': '3' } }, spec: {} };
  const withCopy = { ...reported('c1', ['True', 'Enforced', 'ok']), spec: { workload: { manifests: [copy] } } };
  const phase = { phase: 'Succeeded' as const };
  const annotation: PolicyStatus = {
    summary: { clusters: 1, applied: 1, enforced: 1, overridden: 0, pending: 0, failed: 0, truncated: true },
    clusters: { c1: { state: 'Pending', applied: false, available: false, enforced: 'Unknown', reason: 'Pending', message: 'old', upToDate: false, rollout: phase } },
  };
  const rebuilt = statusFromWorks(annotation, [withCopy], NOW);
  assert.equal(rebuilt.clusters?.c1?.state, 'Enforced');
  assert.equal(rebuilt.clusters?.c1?.revision, 3);
  assert.deepEqual(rebuilt.clusters?.c1?.rollout, phase);
  assert.equal(statusFromWorks(annotation, [reported('c1', ['True', 'Enforced', 'ok'])], NOW).clusters?.c1?.revision, undefined, 'no copy: no revision');
});
