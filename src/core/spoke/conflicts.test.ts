import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONFLICTED_REASON, coverage, localPolicyOf, rejectedByController, usesOverrides } from './conflicts.ts';
import { buildSpokeReport } from './reportbuild.ts';
import { localPoliciesIn } from './reportquery.ts';
import type { ConflictVerdict } from './conflicts.ts';
import { POLICY_SYNCED_ANNOTATION } from '../metadatakeys.ts';
import type { KubeObject } from '../k8s/objects.ts';

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

function withStatus(p: KubeObject, status: unknown): KubeObject {
  return { ...p, status };
}

function accepted(status: 'True' | 'False' | 'Unknown', reason: string): Record<string, unknown> {
  return { type: 'Accepted', status, reason, message: '', lastTransitionTime: '2026-01-01T00:00:00Z' };
}

/** A GEP-713 ancestor entry with its Accepted condition (none: the controller has not judged it yet). */
function ancestor(status?: 'True' | 'False' | 'Unknown', reason = status === 'True' ? 'Accepted' : 'Invalid'): Record<string, unknown> {
  return { ancestorRef: { group: GW, kind: 'Gateway', name: 'gw' }, controllerName: 'gateway.envoyproxy.io/gatewayclass-controller', conditions: status ? [accepted(status, reason)] : [] };
}

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
  ['a local policy its controller rejected covers nothing', [synced('s', gw('gw')), withStatus(local('l', gw('gw')), { conditions: [accepted('False', 'Invalid')] })], NONE],
  [
    'a local policy its controller marks Conflicted (it lost to our older copy) still covers',
    [synced('s', gw('gw')), withStatus(local('l', gw('gw')), { ancestors: [ancestor('False', CONFLICTED_REASON)] })],
    overridden(['ns/l']),
  ],
];

/** `authpolicies.kuadrant.io` for AuthPolicy: the report's key of a kind. */
function kindKey(kind: string): string {
  return `${kind.toLowerCase().replace(/y$/, 'ie')}s.kuadrant.io`;
}

/**
 * The verdict for the synced policy ns/s the way the hub reaches it: the spoke's policies reduced to a report
 * (one entry per kind), then the locals of the copy's kind and namespace weighed against the copy.
 */
function verdictOf(policies: readonly KubeObject[]): ConflictVerdict {
  const byKind = new Map<string, KubeObject[]>();
  for (const p of policies) byKind.set(kindKey(p.kind), [...(byKind.get(kindKey(p.kind)) ?? []), p]);
  const { report, leftOut } = buildSpokeReport(byKind, new Date(0));
  assert.deepEqual(leftOut, []);
  const copy = policies.find((p) => p.metadata.name === 's' && p.metadata.namespace === 'ns');
  assert.ok(copy);
  return coverage(copy.kind, copy, localPoliciesIn(report, kindKey(copy.kind), 'ns') ?? []);
}

for (const [name, policies, expected] of CASES) {
  test(`coverage: ${name}`, () => {
    const verdict = verdictOf(policies);
    if (typeof expected === 'function') expected(verdict);
    else assert.deepEqual(verdict, expected);
  });
}

test('localPolicyOf: a synced copy, a policy being deleted and one without Gateway targets cover nothing', () => {
  assert.equal(localPolicyOf(synced('s', gw('gw'))), undefined);
  assert.equal(localPolicyOf(local('l', gw('gw'), { deleting: true })), undefined);
  assert.equal(localPolicyOf(local('l', { group: GW, kind: 'HTTPRoute', name: 'r' })), undefined);
  assert.deepEqual(localPolicyOf(local('l', [gw('gw', 'a'), gw('gw', 'a'), gw('other')])), {
    key: 'ns/l',
    targets: [{ gateway: 'gw', sectionName: 'a' }, { gateway: 'other' }],
  });
});

test('coverage is independent of the order of the local policies and does not modify its input', () => {
  const copy = synced('s', gw('gw'));
  const locals = [local('l2', gw('gw', 'b')), local('l1', gw('gw', 'a'))].map((l) => localPolicyOf(l)!);
  const before = structuredClone(locals);
  const forward = coverage('AuthPolicy', copy, locals);
  assert.deepEqual(coverage('AuthPolicy', copy, [...locals].reverse()), forward);
  assert.deepEqual(locals, before);
  assert.equal(forward.state, 'PartiallyEnforced');
});

test('coverage falls back to "Policy" in the message when no kind is known', () => {
  assert.deepEqual(coverage('', synced('s', gw('gw')), [localPolicyOf(local('l', gw('gw')))!]), {
    state: 'Overridden',
    message: 'Policy is overridden by [ns/l]',
    by: ['ns/l'],
  });
});

test('usesOverrides: a policy with GEP-713 overrides, and not one with defaults or a plain spec', () => {
  const withSpec = (spec: Record<string, unknown>): KubeObject => ({ ...synced('s', gw('gw')), spec: { targetRef: gw('gw'), ...spec } });
  assert.equal(usesOverrides(withSpec({ overrides: { rules: {} } })), true);
  assert.equal(usesOverrides(withSpec({ defaults: { rules: {} } })), false);
  assert.equal(usesOverrides(withSpec({ rules: {} })), false);
  assert.equal(usesOverrides(withSpec({ overrides: null })), false);
});

// [case, status, rejected?] — the rule of rejectedByController, shape by shape.
const REJECTION_CASES: [string, unknown, boolean][] = [
  ['no status: the controller has not spoken', undefined, false],
  ['a status that is not an object', 'weird', false],
  ['Kuadrant: no conditions', { conditions: [] }, false],
  ['Kuadrant: Accepted=True', { conditions: [accepted('True', 'Accepted')] }, false],
  ['Kuadrant: Accepted=Unknown', { conditions: [accepted('Unknown', 'Pending')] }, false],
  ['Kuadrant: Accepted=False Invalid', { conditions: [accepted('False', 'Invalid')] }, true],
  ['Kuadrant: Accepted=False TargetNotFound', { conditions: [accepted('False', 'TargetNotFound')] }, true],
  ['Kuadrant: Accepted=False Conflicted is no rejection', { conditions: [accepted('False', CONFLICTED_REASON)] }, false],
  ['Kuadrant: Enforced=False alone (overridden by a newer policy) is no rejection', { conditions: [accepted('True', 'Accepted'), { type: 'Enforced', status: 'False', reason: 'Overridden' }] }, false],
  ['Kuadrant: conditions not a list', { conditions: { Accepted: 'False' } }, false],
  ['GEP-713: no ancestors', { ancestors: [] }, false],
  ['GEP-713: one ancestor Accepted=True', { ancestors: [ancestor('True')] }, false],
  ['GEP-713: one ancestor Accepted=False', { ancestors: [ancestor('False', 'Invalid')] }, true],
  ['GEP-713: every ancestor Accepted=False', { ancestors: [ancestor('False', 'TargetNotFound'), ancestor('False', 'Invalid')] }, true],
  ['GEP-713: accepted on one ancestor, rejected on another: in force there', { ancestors: [ancestor('False', 'TargetNotFound'), ancestor('True')] }, false],
  ['GEP-713: rejected on one ancestor, not judged yet on the other', { ancestors: [ancestor('False', 'Invalid'), ancestor()] }, true],
  ['GEP-713: not judged yet anywhere', { ancestors: [ancestor(), ancestor('Unknown', 'Pending')] }, false],
  ['GEP-713: Conflicted only (Envoy Gateway: the newer of two on one target)', { ancestors: [ancestor('False', CONFLICTED_REASON)] }, false],
  ['GEP-713: Conflicted on one ancestor, rejected on another: it still must win where it conflicts', { ancestors: [ancestor('False', CONFLICTED_REASON), ancestor('False', 'TargetNotFound')] }, false],
  ['GEP-713: malformed entries are not judged', { ancestors: ['x', null, { conditions: 'no' }] }, false],
  ['both shapes, either rejecting is enough', { conditions: [accepted('False', 'Invalid')], ancestors: [ancestor('True')] }, true],
];

for (const [name, status, rejected] of REJECTION_CASES) {
  test(`rejectedByController: ${name}`, () => {
    const p = local('l', gw('gw'));
    assert.equal(rejectedByController(status === undefined ? p : withStatus(p, status)), rejected);
  });
}
