import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../k8s/objects.ts';
import { classifyTargets, readTargetEntries, readTargets, rewriteTargets } from './targetrefs.ts';

const GW = 'gateway.networking.k8s.io';

function policy(spec: Record<string, unknown>, namespace: string | null = 'ns'): KubeObject {
  const metadata = namespace === null ? { name: 'p' } : { name: 'p', namespace };
  return { apiVersion: 'kuadrant.io/v1', kind: 'AuthPolicy', metadata, spec };
}

const allManaged = () => true;

test('readTargets reads a single targetRef object', () => {
  assert.deepEqual(readTargets(policy({ targetRef: { group: GW, kind: 'Gateway', name: 'gw', sectionName: 'https' } })), [
    { group: GW, kind: 'Gateway', name: 'gw', sectionName: 'https' },
  ]);
});

test('readTargets reads a targetRefs list in order, keeping namespace', () => {
  const p = policy({
    targetRefs: [
      { group: GW, kind: 'Gateway', name: 'a' },
      { group: GW, kind: 'HTTPRoute', name: 'r', namespace: 'ns' },
    ],
  });
  assert.deepEqual(readTargets(p), [
    { group: GW, kind: 'Gateway', name: 'a' },
    { group: GW, kind: 'HTTPRoute', name: 'r', namespace: 'ns' },
  ]);
});

test('readTargets is empty for a spec without targets', () => {
  assert.deepEqual(readTargets(policy({ rules: {} })), []);
  assert.deepEqual(readTargets({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' } }), []);
});

test('readTargetEntries reports malformed entries instead of throwing', () => {
  const p = policy({ targetRefs: ['gw', { group: GW, kind: 'Gateway' }, { kind: 'Gateway', name: 'x' }, { group: GW, kind: 'Gateway', name: 'ok' }] });
  assert.deepEqual(readTargetEntries(p), [
    { path: 'spec.targetRefs[0]', error: 'must be an object' },
    { path: 'spec.targetRefs[1]', error: 'name is required' },
    { path: 'spec.targetRefs[2]', error: 'group must be a string' },
    { path: 'spec.targetRefs[3]', ref: { group: GW, kind: 'Gateway', name: 'ok' } },
  ]);
  assert.deepEqual(readTargetEntries(policy({ targetRefs: { name: 'x' } })), [{ path: 'spec.targetRefs', error: 'must be a list' }]);
  assert.deepEqual(readTargets(p), [{ group: GW, kind: 'Gateway', name: 'ok' }]);
});

test('classifyTargets marks a managed Gateway target syncable, keeping sectionName', () => {
  const p = policy({ targetRef: { group: GW, kind: 'Gateway', name: 'gw', sectionName: 'https' } });
  assert.deepEqual(classifyTargets(p, allManaged), [
    {
      path: 'spec.targetRef',
      target: { group: GW, kind: 'Gateway', name: 'gw', sectionName: 'https' },
      state: 'syncable',
      gateway: { namespace: 'ns', name: 'gw' },
      sectionName: 'https',
    },
  ]);
});

test('classifyTargets accepts an explicit namespace equal to the policy namespace', () => {
  const [result] = classifyTargets(policy({ targetRefs: [{ group: GW, kind: 'Gateway', name: 'gw', namespace: 'ns' }] }), allManaged);
  assert.equal(result?.state, 'syncable');
});

test('classifyTargets rejects a cross-namespace target', () => {
  const p = policy({ targetRefs: [{ group: GW, kind: 'Gateway', name: 'gw', namespace: 'other' }] });
  assert.deepEqual(classifyTargets(p, allManaged), [
    {
      path: 'spec.targetRefs[0]',
      target: { group: GW, kind: 'Gateway', name: 'gw', namespace: 'other' },
      state: 'rejected',
      reason: 'CrossNamespace',
      message: "Gateway other/gw is not in the policy's namespace ns; cross-namespace targets are not supported",
    },
  ]);
});

test('classifyTargets rejects non-Gateway kinds and Gateway kinds of another group as NotAGateway', () => {
  const p = policy({
    targetRefs: [
      { group: GW, kind: 'HTTPRoute', name: 'r' },
      { group: '', kind: 'Service', name: 's' },
      { group: 'example.com', kind: 'Gateway', name: 'g' },
    ],
  });
  const results = classifyTargets(p, allManaged);
  assert.deepEqual(
    results.map((r) => (r.state === 'rejected' ? [r.reason, r.message] : r.state)),
    [
      ['NotAGateway', `HTTPRoute r (group ${GW}) is not a Gateway; only Gateway.${GW} targets are synced`],
      ['NotAGateway', `Service s (group core) is not a Gateway; only Gateway.${GW} targets are synced`],
      ['NotAGateway', `Gateway g (group example.com) is not a Gateway; only Gateway.${GW} targets are synced`],
    ],
  );
});

test('classifyTargets rejects Gateways that are not managed, asking with the policy namespace', () => {
  const asked: string[] = [];
  const p = policy({ targetRefs: [{ group: GW, kind: 'Gateway', name: 'mine' }, { group: GW, kind: 'Gateway', name: 'theirs' }] });
  const results = classifyTargets(p, (namespace, name) => {
    asked.push(`${namespace}/${name}`);
    return name === 'mine';
  });
  assert.deepEqual(asked, ['ns/mine', 'ns/theirs']);
  assert.equal(results[0]?.state, 'syncable');
  assert.deepEqual(results[1], {
    path: 'spec.targetRefs[1]',
    target: { group: GW, kind: 'Gateway', name: 'theirs' },
    state: 'rejected',
    reason: 'GatewayNotManaged',
    message: 'Gateway ns/theirs does not exist or its GatewayClass is not managed by policy-sync',
  });
});

test('classifyTargets reports malformed entries and a namespace-less policy as Invalid', () => {
  assert.deepEqual(classifyTargets(policy({ targetRef: { group: GW, kind: 'Gateway' } }), allManaged), [
    { path: 'spec.targetRef', state: 'rejected', reason: 'Invalid', message: 'spec.targetRef: name is required' },
  ]);
  const [result] = classifyTargets(policy({ targetRef: { group: GW, kind: 'Gateway', name: 'gw' } }, null), allManaged);
  assert.deepEqual(result && result.state === 'rejected' ? [result.reason, result.message] : result, ['Invalid', 'the policy has no namespace']);
});

test('rewriteTargets keeps a targetRef object, renamed, namespace dropped, sectionName and other spec kept', () => {
  const p = policy({ targetRef: { group: GW, kind: 'Gateway', name: 'gw', namespace: 'ns', sectionName: 'https' }, rules: { a: 1 } });
  const spec = rewriteTargets(p, [{ path: 'spec.targetRef' }], (target) => `${target.name}-down`);
  assert.deepEqual(spec, { targetRef: { group: GW, kind: 'Gateway', name: 'gw-down', sectionName: 'https' }, rules: { a: 1 } });
});

test('rewriteTargets keeps only the listed targetRefs, still as a list, in spec order', () => {
  const p = policy({
    targetRefs: [
      { group: GW, kind: 'Gateway', name: 'a', sectionName: 'l1' },
      { group: GW, kind: 'HTTPRoute', name: 'r' },
      { group: GW, kind: 'Gateway', name: 'b', namespace: 'ns' },
    ],
    defaults: { x: true },
  });
  const spec = rewriteTargets(p, [{ path: 'spec.targetRefs[2]' }, { path: 'spec.targetRefs[0]' }], (target) => target.name);
  assert.deepEqual(spec, {
    targetRefs: [
      { group: GW, kind: 'Gateway', name: 'a', sectionName: 'l1' },
      { group: GW, kind: 'Gateway', name: 'b' },
    ],
    defaults: { x: true },
  });
});

test('rewriteTargets does not modify the policy and shares no nested objects with it', () => {
  const p = policy({ targetRefs: [{ group: GW, kind: 'Gateway', name: 'a', namespace: 'ns' }], rules: { nested: { v: 1 } } });
  const before = structuredClone(p);
  const spec = rewriteTargets(p, [{ path: 'spec.targetRefs[0]' }], () => 'renamed');
  assert.deepEqual(p, before);
  assert.notEqual(spec.rules, p.spec?.rules);
});

test('rewriteTargets drops a targetRef that is not kept', () => {
  const p = policy({ targetRef: { group: GW, kind: 'Gateway', name: 'gw' }, rules: {} });
  assert.deepEqual(rewriteTargets(p, [], (target) => target.name), { rules: {} });
});
