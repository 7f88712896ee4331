import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeConflicts, desiredEnforcedCondition } from './conflicts.ts';
import type { ConflictVerdict } from './conflicts.ts';
import { POLICY_SYNCED_ANNOTATION } from './metadatakeys.ts';
import type { KubeObject } from './objects.ts';

const GW = 'gateway.networking.k8s.io';

function gw(name: string, sectionName?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { group: GW, kind: 'Gateway', name, ...(sectionName === undefined ? {} : { sectionName }), ...extra };
}

type Targets = Record<string, unknown> | Record<string, unknown>[];

function policy(name: string, targets: Targets, options: { synced?: boolean; namespace?: string; kind?: string; deleting?: boolean } = {}): KubeObject {
  const metadata: KubeObject['metadata'] = { name, namespace: options.namespace ?? 'ns', generation: 3 };
  if (options.synced) metadata.annotations = { [POLICY_SYNCED_ANNOTATION]: `hub-ns/${name}` };
  if (options.deleting) metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: options.kind ?? 'AuthPolicy',
    metadata,
    spec: Array.isArray(targets) ? { targetRefs: targets } : { targetRef: targets },
  };
}

const synced = (name: string, targets: Targets, options: { namespace?: string; deleting?: boolean } = {}): KubeObject =>
  policy(name, targets, { ...options, synced: true });
const local = (name: string, targets: Targets, options: { namespace?: string; kind?: string; deleting?: boolean } = {}): KubeObject =>
  policy(name, targets, options);

const NONE: ConflictVerdict = { state: 'None' };

function overridden(by: string[]): ConflictVerdict {
  return { state: 'Overridden', message: `AuthPolicy is overridden by [${by.join(', ')}]`, by };
}

// [name, policies, expected verdict of ns/s]
const CASES: [string, KubeObject[], ConflictVerdict | ((v: ConflictVerdict) => void)][] = [
  ['no local policy', [synced('s', gw('gw'))], NONE],
  ['a local policy on another Gateway', [synced('s', gw('gw')), local('l', gw('other'))], NONE],
  ['whole Gateway vs whole Gateway', [synced('s', gw('gw')), local('l', gw('gw'))], overridden(['ns/l'])],
  [
    'synced on the whole Gateway, local on one listener: partially',
    [synced('s', gw('gw')), local('local-auth', gw('gw', 'https'))],
    {
      state: 'PartiallyEnforced',
      message: 'AuthPolicy is partially overridden: listener "https" of Gateway gw by [ns/local-auth]',
      by: ['ns/local-auth'],
      covered: [{ gateway: 'gw', sectionName: 'https', by: ['ns/local-auth'] }],
    },
  ],
  ['synced on a listener, local on the whole Gateway: covered', [synced('s', gw('gw', 'a')), local('l', gw('gw'))], overridden(['ns/l'])],
  ['same listener', [synced('s', gw('gw', 'a')), local('l', gw('gw', 'a'))], overridden(['ns/l'])],
  ['different listeners', [synced('s', gw('gw', 'a')), local('l', gw('gw', 'b'))], NONE],
  [
    'several local policies, sorted and deduplicated',
    [synced('s', gw('gw')), local('l2', gw('gw')), local('l1', [gw('gw'), gw('gw', 'x')]), local('l3', gw('gw', 'https'))],
    overridden(['ns/l1', 'ns/l2', 'ns/l3']),
  ],
  [
    'several targetRefs, one covered',
    [synced('s', [gw('gw1'), gw('gw2')]), local('l', gw('gw1'))],
    {
      state: 'PartiallyEnforced',
      message: 'AuthPolicy is partially overridden: Gateway gw1 by [ns/l]',
      by: ['ns/l'],
      covered: [{ gateway: 'gw1', by: ['ns/l'] }],
    },
  ],
  ['several targetRefs, all covered', [synced('s', [gw('gw2'), gw('gw1', 'a')]), local('l2', gw('gw2')), local('l1', gw('gw1'))], overridden(['ns/l1', 'ns/l2'])],
  [
    'several listeners of a whole-Gateway target, grouped per listener',
    [synced('s', gw('gw')), local('l1', gw('gw', 'b')), local('l3', gw('gw', 'a')), local('l2', gw('gw', 'a'))],
    {
      state: 'PartiallyEnforced',
      message: 'AuthPolicy is partially overridden: listener "a" of Gateway gw by [ns/l2, ns/l3]; listener "b" of Gateway gw by [ns/l1]',
      by: ['ns/l1', 'ns/l2', 'ns/l3'],
      covered: [
        { gateway: 'gw', sectionName: 'a', by: ['ns/l2', 'ns/l3'] },
        { gateway: 'gw', sectionName: 'b', by: ['ns/l1'] },
      ],
    },
  ],
  [
    'several Gateways and listeners, sorted by Gateway, whole Gateway first',
    [
      synced('s', [gw('gw-c'), gw('gw-b'), gw('gw-a', 'x'), gw('gw-d')]),
      local('l1', gw('gw-b', 'https')),
      local('l2', gw('gw-a')),
      local('l3', gw('gw-d')),
      local('l4', gw('gw-d', 'http')),
    ],
    {
      state: 'PartiallyEnforced',
      message:
        'AuthPolicy is partially overridden: listener "x" of Gateway gw-a by [ns/l2]; listener "https" of Gateway gw-b by [ns/l1]; ' +
        'Gateway gw-d by [ns/l3, ns/l4]',
      by: ['ns/l1', 'ns/l2', 'ns/l3', 'ns/l4'],
      covered: [
        { gateway: 'gw-a', sectionName: 'x', by: ['ns/l2'] },
        { gateway: 'gw-b', sectionName: 'https', by: ['ns/l1'] },
        { gateway: 'gw-d', by: ['ns/l3', 'ns/l4'] },
      ],
    },
  ],
  [
    'a whole-Gateway and a listener target of the same Gateway, the listener covered, listed once',
    [synced('s', [gw('gw'), gw('gw', 'a')]), local('l', gw('gw', 'a'))],
    {
      state: 'PartiallyEnforced',
      message: 'AuthPolicy is partially overridden: listener "a" of Gateway gw by [ns/l]',
      by: ['ns/l'],
      covered: [{ gateway: 'gw', sectionName: 'a', by: ['ns/l'] }],
    },
  ],
  ['a duplicated target', [synced('s', [gw('gw'), gw('gw')]), local('l', gw('gw'))], overridden(['ns/l'])],
  ['local policies in another namespace do not count', [synced('s', gw('gw')), local('l', gw('gw'), { namespace: 'other' })], NONE],
  [
    'a local target naming the namespace explicitly counts; another namespace does not',
    [synced('s', [gw('gw1'), gw('gw2')]), local('l1', gw('gw1', undefined, { namespace: 'ns' })), local('l2', gw('gw2', undefined, { namespace: 'x' }))],
    (v) => assert.deepEqual(v.state === 'PartiallyEnforced' ? v.covered : v, [{ gateway: 'gw1', by: ['ns/l1'] }]),
  ],
  [
    'local targets of other kinds or groups are ignored',
    [
      synced('s', gw('gw')),
      local('route', { group: GW, kind: 'HTTPRoute', name: 'gw' }),
      local('svc', { group: '', kind: 'Service', name: 'gw' }),
      local('foreign', { group: 'example.com', kind: 'Gateway', name: 'gw' }),
    ],
    NONE,
  ],
  [
    'synced targets of other kinds are ignored: the Gateway targets decide',
    [synced('s', [{ group: GW, kind: 'HTTPRoute', name: 'r' }, gw('gw')]), local('l', gw('gw'))],
    overridden(['ns/l']),
  ],
  ['a synced policy without Gateway targets', [synced('s', { group: GW, kind: 'HTTPRoute', name: 'gw' }), local('l', gw('gw'))], NONE],
  ['synced policies never cover each other', [synced('s', gw('gw')), synced('s2', gw('gw'))], NONE],
  ['local policies being deleted are ignored', [synced('s', gw('gw')), local('l', gw('gw'), { deleting: true })], NONE],
  ['local policies of another kind are ignored', [synced('s', gw('gw')), local('l', gw('gw'), { kind: 'RateLimitPolicy' })], NONE],
];

for (const [name, policies, expected] of CASES) {
  test(`computeConflicts: ${name}`, () => {
    const verdict = computeConflicts(policies).get('ns/s');
    assert.ok(verdict, 'every synced policy has a verdict');
    if (typeof expected === 'function') expected(verdict);
    else assert.deepEqual(verdict, expected);
  });
}

test('computeConflicts has an entry for every synced policy and none for local ones', () => {
  const result = computeConflicts([
    synced('a', gw('gw')),
    local('l', gw('gw', 'x')),
    synced('b', gw('gw', 'x')),
    synced('c', gw('gw'), { namespace: 'other' }),
    synced('d', gw('gw'), { deleting: true }),
  ]);
  assert.deepEqual([...result.keys()].sort(), ['ns/a', 'ns/b', 'ns/d', 'other/c']);
  assert.equal(result.get('ns/a')?.state, 'PartiallyEnforced');
  assert.equal(result.get('ns/b')?.state, 'Overridden');
  assert.equal(result.get('other/c')?.state, 'None');
});

test('computeConflicts is independent of input order and does not modify its input', () => {
  const policies = [synced('s', gw('gw')), local('l2', gw('gw', 'b')), local('l1', gw('gw', 'a'))];
  const before = structuredClone(policies);
  const forward = computeConflicts(policies);
  assert.deepEqual(computeConflicts([...policies].reverse()), forward);
  assert.deepEqual(policies, before);
});

test('computeConflicts falls back to "Policy" in the message when the synced object carries no kind', () => {
  const s = { ...synced('s', gw('gw')), kind: '' };
  assert.deepEqual(computeConflicts([s, local('l', gw('gw'))]).get('ns/s'), {
    state: 'Overridden',
    message: 'Policy is overridden by [ns/l]',
    by: ['ns/l'],
  });
});

test('desiredEnforcedCondition: Overridden is Enforced=False, reason Overridden', () => {
  const verdict = computeConflicts([synced('s', gw('gw')), local('l', gw('gw'))]).get('ns/s');
  assert.ok(verdict);
  assert.deepEqual(desiredEnforcedCondition(verdict, 'AuthPolicy', 3, '2026-01-01T00:00:00Z'), {
    type: 'Enforced',
    status: 'False',
    reason: 'Overridden',
    message: 'AuthPolicy is overridden by [ns/l]',
    observedGeneration: 3,
    lastTransitionTime: '2026-01-01T00:00:00Z',
  });
});

test('desiredEnforcedCondition: PartiallyEnforced is Enforced=True, the message built with the given kind', () => {
  const verdict = computeConflicts([{ ...synced('s', gw('gw')), kind: '' }, local('l', gw('gw', 'https'))]).get('ns/s');
  assert.ok(verdict);
  assert.deepEqual(desiredEnforcedCondition(verdict, 'RateLimitPolicy', undefined, 'NOW'), {
    type: 'Enforced',
    status: 'True',
    reason: 'PartiallyEnforced',
    message: 'RateLimitPolicy is partially overridden: listener "https" of Gateway gw by [ns/l]',
    lastTransitionTime: 'NOW',
  });
});

test('desiredEnforcedCondition: None gives no condition (the agent removes its own)', () => {
  assert.equal(desiredEnforcedCondition({ state: 'None' }, 'AuthPolicy', 3, 'NOW'), undefined);
});
