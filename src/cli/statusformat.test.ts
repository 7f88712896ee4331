import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClusterFeedback, FeedbackCondition } from '../core/works/feedback.ts';
import { MAX_OVERRIDDEN_BY, aggregatePolicyStatus, type ClusterInput, type PolicyProblem, type PolicyStatus } from '../core/status/policystatus.ts';
import {
  ellipsize,
  formatExplain,
  formatExplainJson,
  formatMatrix,
  formatRows,
  formatRowsJson,
  rolloutState,
  wrap,
  type PolicyRow,
} from './statusformat.ts';

function work(enforced: FeedbackCondition | undefined, extra: Partial<ClusterFeedback> = {}): ClusterInput {
  const feedback: ClusterFeedback = {
    applied: true,
    available: true,
    appliedObservedCurrent: true,
    generation: 1,
    enforcedGeneration: 1,
    accepted: { status: 'True', reason: 'Accepted', message: 'accepted' },
    ancestors: [],
    extra: {},
    ...extra,
  };
  if (enforced) feedback.enforced = enforced;
  return { state: 'work', feedback };
}

const ENFORCED_CONDITION: FeedbackCondition = { status: 'True', reason: 'Enforced', message: 'AuthPolicy has been successfully enforced' };
const ENFORCED = work(ENFORCED_CONDITION);
/** The spoke's controller reports the copy overridden (its own precedence rule): its message names who. */
const overridden = (by: string): ClusterInput => work({ status: 'False', reason: 'Overridden', message: `AuthPolicy is overridden by [${by}]` });
/** The hub found local policies covering the copy in the spoke agent's report, and withdrew it (core/spoke/conflicts.ts). */
const withdrawn = (...by: string[]): ClusterInput => ({ state: 'overridden', message: `AuthPolicy is overridden by [${by.join(', ')}]`, by });
/** The hub found a local policy taking one listener of the copy; the controller enforces the rest. */
const PARTIAL: ClusterInput = {
  ...work(ENFORCED_CONDITION),
  local: { reason: 'PartiallyEnforced', message: 'AuthPolicy is partially overridden: listener "https" of Gateway gw by [payments/local-https]', by: ['payments/local-https'] },
} as ClusterInput;
const FAILED = work(undefined, { accepted: { status: 'False', reason: 'TargetNotFound', message: 'gateway gw not found' } });

function status(clusters: Record<string, ClusterInput>, problems: PolicyProblem[] = []): PolicyStatus {
  return aggregatePolicyStatus({ clusters, problems, now: 0 });
}

function row(kind: string, namespace: string, name: string, s: PolicyStatus): PolicyRow {
  const resource = `${kind.toLowerCase().replace(/y$/, 'ie')}s`; // AuthPolicy → authpolicies
  return { group: 'kuadrant.io', version: 'v1', resource, kind, namespace, name, status: s };
}

const CROSS_NAMESPACE: PolicyProblem[] = [
  {
    reason: 'TargetNotSynced',
    message:
      "spec.targetRef: CrossNamespace: Gateway other/gw is not in the policy's namespace payments; cross-namespace targets are not supported",
  },
  { reason: 'NotSynced', message: 'no target of this policy can be synced: it has no ManifestWorks' },
];

const AUTH = row('AuthPolicy', 'payments', 'payments-auth', status({ 'spoke-1': ENFORCED, 'spoke-2': withdrawn('payments/local-auth') }));
const RATE = row('RateLimitPolicy', 'payments', 'payments-rl', status({}, CROSS_NAMESPACE));

function lines(text: string): string[] {
  assert.ok(text.endsWith('\n'), 'output ends with a newline');
  const out = text.slice(0, -1).split('\n');
  for (const l of out) assert.ok(Array.from(l).length <= 80, `longer than 80 columns: ${JSON.stringify(l)}`);
  for (const l of out) assert.equal(l, l.trimEnd(), `trailing blanks: ${JSON.stringify(l)}`);
  return out;
}

test('table: one line per policy with enforced/clusters and the counts; problems listed below', () => {
  assert.deepEqual(lines(formatRows([AUTH, RATE], false)), [
    'POLICY                                ENFORCED  OVERRIDDEN  PENDING  FAILED',
    'AuthPolicy/payments/payments-auth     1/2       1           0        0',
    'RateLimitPolicy/payments/payments-rl  0/0       0           0        0',
    '',
    '! RateLimitPolicy/payments/payments-rl: NotSynced, TargetNotSynced',
  ]);
});

test('table: clusters awaiting their spoke report are named below, a Pending count alone would not say why', () => {
  const waiting: ClusterInput = { state: 'awaitingReport', message: 'no report from the spoke agent yet' };
  const held = row('AuthPolicy', 'shop', 'shop-auth', status({ 'spoke-1': ENFORCED, 'spoke-2': waiting }));
  const many = row('AuthPolicy', 'shop', 'fleet-auth', status({ a: waiting, b: waiting, c: waiting, d: waiting }, CROSS_NAMESPACE.slice(1)));
  assert.deepEqual(lines(formatRows([held, many], false)), [
    'POLICY                      ENFORCED  OVERRIDDEN  PENDING  FAILED',
    'AuthPolicy/shop/shop-auth   1/2       0           1        0',
    'AuthPolicy/shop/fleet-auth  0/4       0           4        0',
    '',
    '! AuthPolicy/shop/shop-auth: AwaitingSpokeReport (spoke-2)',
    '! AuthPolicy/shop/fleet-auth: NotSynced, AwaitingSpokeReport (4 clusters)',
  ]);
});

test('table: no policies', () => {
  assert.equal(formatRows([], false), 'no synced policies\n');
  assert.equal(formatRows([], true), 'no synced policies\n');
});

test('table: a long policy name is cut with … to keep 80 columns; a short one is not', () => {
  const long = row('BackendTrafficPolicy', 'payments-production', 'payments-backend-traffic-policy-for-checkout', status({ c1: ENFORCED }));
  assert.deepEqual(lines(formatRows([long, AUTH], false)), [
    'POLICY                                     ENFORCED  OVERRIDDEN  PENDING  FAILED',
    'BackendTrafficPolicy/payments-production…  1/1       0           0        0',
    'AuthPolicy/payments/payments-auth          1/2       1           0        0',
  ]);
});

test('wide: the table, then the matrix with full state names when they fit', () => {
  const pending = row('AuthPolicy', 'shop', 'shop-auth', status({ 'spoke-1': { state: 'pending' }, 'spoke-2': PARTIAL }));
  assert.deepEqual(lines(formatRows([AUTH, pending, RATE], true)), [
    'POLICY                                ENFORCED  OVERRIDDEN  PENDING  FAILED',
    'AuthPolicy/payments/payments-auth     1/2       1           0        0',
    'AuthPolicy/shop/shop-auth             1/2       0           1        0',
    'RateLimitPolicy/payments/payments-rl  0/0       0           0        0',
    '',
    '! RateLimitPolicy/payments/payments-rl: NotSynced, TargetNotSynced',
    '',
    'POLICY                                spoke-1   spoke-2',
    'AuthPolicy/payments/payments-auth     Enforced  Overridden',
    'AuthPolicy/shop/shop-auth             Pending   Partial',
    'RateLimitPolicy/payments/payments-rl  -         -',
    '',
    'legend: Partial = PartiallyEnforced, - = not synced to that cluster',
  ]);
});

test('wide: four clusters fit 80 columns with abbreviated states and a legend', () => {
  const rows = [
    row('AuthPolicy', 'payments', 'payments-auth', status({ 'spoke-1': ENFORCED, 'spoke-2': overridden('payments/a'), 'spoke-3': PARTIAL, 'spoke-4': FAILED })),
    row('RateLimitPolicy', 'payments', 'payments-ratelimit', status({ 'spoke-1': { state: 'pending' }, 'spoke-3': ENFORCED })),
  ];
  assert.deepEqual(lines(`${formatMatrix(rows).join('\n')}\n`), [
    'POLICY                                       spoke-1  spoke-2  spoke-3  spoke-4',
    'AuthPolicy/payments/payments-auth            Enf      Ovr      Part     Fail',
    'RateLimitPolicy/payments/payments-ratelimit  Pend     -        Enf      -',
    '',
    'legend: Enf = Enforced, Part = PartiallyEnforced, Ovr = Overridden,',
    '        Pend = Pending, Fail = Failed, - = not synced to that cluster',
  ]);
});

test('wide: many clusters are split over blocks of at most 80 columns; long cluster names are cut', () => {
  const clusters: Record<string, ClusterInput> = {};
  for (let i = 1; i <= 12; i++) clusters[`cluster-${String(i).padStart(2, '0')}`] = ENFORCED;
  clusters['a-very-long-cluster-name-from-the-fleet'] = ENFORCED;
  const out = lines(`${formatMatrix([AUTH, row('AuthPolicy', 'shop', 'shop-auth', status(clusters))]).join('\n')}\n`);
  assert.deepEqual(out, [
    'POLICY                             a-very-long-cluster…  cluster-01  cluster-02',
    'AuthPolicy/payments/payments-auth  -                     -           -',
    'AuthPolicy/shop/shop-auth          Enf                   Enf         Enf',
    '',
    'POLICY                             cluster-03  cluster-04  cluster-05',
    'AuthPolicy/payments/payments-auth  -           -           -',
    'AuthPolicy/shop/shop-auth          Enf         Enf         Enf',
    '',
    'POLICY                             cluster-06  cluster-07  cluster-08',
    'AuthPolicy/payments/payments-auth  -           -           -',
    'AuthPolicy/shop/shop-auth          Enf         Enf         Enf',
    '',
    'POLICY                             cluster-09  cluster-10  cluster-11',
    'AuthPolicy/payments/payments-auth  -           -           -',
    'AuthPolicy/shop/shop-auth          Enf         Enf         Enf',
    '',
    'POLICY                             cluster-12  spoke-1  spoke-2',
    'AuthPolicy/payments/payments-auth  -           Enf      Ovr',
    'AuthPolicy/shop/shop-auth          Enf         -        -',
    '',
    'legend: Enf = Enforced, Ovr = Overridden, - = not synced to that cluster',
  ]);
});

test('explain: summary, no problems, per cluster state/reason/message/overridden by/upToDate/applied/available', () => {
  assert.deepEqual(lines(formatExplain(AUTH)), [
    'Policy:     AuthPolicy payments/payments-auth',
    'Resource:   authpolicies.kuadrant.io (v1)',
    'Summary:    2 clusters: 1 enforced, 1 overridden, 0 pending, 0 failed; 1 applied',
    'Problems:   none',
    'Clusters:',
    '  spoke-1:',
    '    state:          Enforced',
    '    reason:         Enforced',
    '    message:        AuthPolicy has been successfully enforced',
    '    upToDate:       true',
    '    applied:        true',
    '    available:      true',
    '  spoke-2:',
    '    state:          Overridden',
    '    reason:         Overridden',
    '    message:        AuthPolicy is overridden by [payments/local-auth]',
    '    overridden by:  payments/local-auth',
    '    upToDate:       true',
    '    applied:        false',
    '    available:      false',
  ]);
});

test('explain: several overriding policies one per line, as the status names them (a controller\'s own Overridden only in its message); long messages wrap', () => {
  const r = row(
    'AuthPolicy',
    'payments',
    'payments-auth',
    status({ 'spoke-1': withdrawn('payments/local-auth', 'payments/local-auth-2'), 'spoke-2': PARTIAL, 'spoke-3': { state: 'pending' }, 'spoke-4': overridden('payments/newer') }),
  );
  assert.deepEqual(lines(formatExplain(r)).slice(4), [
    'Clusters:',
    '  spoke-1:',
    '    state:          Overridden',
    '    reason:         Overridden',
    '    message:        AuthPolicy is overridden by [payments/local-auth,',
    '                    payments/local-auth-2]',
    '    overridden by:  payments/local-auth',
    '                    payments/local-auth-2',
    '    upToDate:       true',
    '    applied:        false',
    '    available:      false',
    '  spoke-2:',
    '    state:          Enforced',
    '    reason:         PartiallyEnforced',
    '    message:        AuthPolicy is partially overridden: listener "https" of',
    '                    Gateway gw by [payments/local-https]',
    '    overridden by:  payments/local-https',
    '    upToDate:       true',
    '    applied:        true',
    '    available:      true',
    '  spoke-3:',
    '    state:          Pending',
    '    reason:         Pending',
    '    message:        waiting for the ManifestWork status from the cluster',
    '    upToDate:       false',
    '    applied:        false',
    '    available:      false',
    '  spoke-4:',
    '    state:          Overridden',
    '    reason:         Overridden',
    '    message:        AuthPolicy is overridden by [payments/newer]',
    '    upToDate:       true',
    '    applied:        true',
    '    available:      true',
  ]);
});

test('explain: past MAX_OVERRIDDEN_BY overriding policies, the names the status keeps and how many more', () => {
  const many = Array.from({ length: MAX_OVERRIDDEN_BY + 2 }, (_, i) => `payments/local-${i}`).sort();
  const out = lines(formatExplain(row('AuthPolicy', 'payments', 'payments-auth', status({ 'spoke-1': withdrawn(...many) }))));
  const at = out.findIndex((l) => l.startsWith('    overridden by:'));
  assert.deepEqual(out.slice(at, at + MAX_OVERRIDDEN_BY + 1), [
    `    overridden by:  ${many[0]}`,
    ...many.slice(1, MAX_OVERRIDDEN_BY).map((n) => `                    ${n}`),
    '                    and 2 more',
  ]);
});

test('explain: an annotation an older hub wrote (no overriddenBy) shows the message, and no names parsed out of it', () => {
  const old: PolicyStatus = {
    summary: { clusters: 1, applied: 0, enforced: 0, overridden: 1, pending: 0, failed: 0 },
    clusters: { 'spoke-1': { state: 'Overridden', applied: false, available: false, enforced: 'False', reason: 'Overridden', message: 'AuthPolicy is overridden by [payments/l]', upToDate: true } },
  };
  const out = lines(formatExplain(row('AuthPolicy', 'payments', 'payments-auth', old)));
  assert.ok(out.includes('    message:        AuthPolicy is overridden by [payments/l]'));
  assert.equal(out.some((l) => l.includes('overridden by:')), false);
});

test('explain: problems wrapped, no clusters', () => {
  assert.deepEqual(lines(formatExplain(RATE)), [
    'Policy:     RateLimitPolicy payments/payments-rl',
    'Resource:   ratelimitpolicies.kuadrant.io (v1)',
    'Summary:    0 clusters: 0 enforced, 0 overridden, 0 pending, 0 failed; 0 applied',
    'Problems:',
    '  NotSynced: no target of this policy can be synced: it has no ManifestWorks',
    '  TargetNotSynced: spec.targetRef: CrossNamespace: Gateway other/gw is not in',
    "    the policy's namespace payments; cross-namespace targets are not supported",
    'Clusters:   none',
  ]);
});

test('explain: a truncated annotation says where the per-cluster part comes from', () => {
  const s: PolicyStatus = { ...AUTH.status, summary: { ...AUTH.status.summary, truncated: true } };
  const out = lines(formatExplain({ ...AUTH, status: s }));
  assert.deepEqual(out.slice(2, 6), [
    'Summary:    2 clusters: 1 enforced, 1 overridden, 0 pending, 0 failed; 1 applied',
    'Note:       the status annotation was cut short (too large); per-cluster detail',
    '            is read from the ManifestWorks',
    'Problems:   none',
  ]);
});

test('explain: the kind\'s statusFeedback values per cluster, one per line, sorted by name, long ones wrapped', () => {
  const values = { phase: 'Ready', limitsTotal: 4, ready: true, limits: `{"limits":["${'x'.repeat(70)}"]}` };
  const r = row('RateLimitPolicy', 'payments', 'payments-rl', status({ 'spoke-1': work(ENFORCED_CONDITION, { extra: values }), 'spoke-2': ENFORCED }));
  const out = lines(formatExplain(r));
  const spoke1 = out.slice(out.indexOf('  spoke-1:'), out.indexOf('  spoke-2:'));
  assert.deepEqual(spoke1.slice(-7), [
    '    available:      true',
    '    statusFeedback: limits:',
    `                      {"limits":["${'x'.repeat(46)}`,
    `                      ${'x'.repeat(24)}"]}`,
    '                    limitsTotal: 4',
    '                    phase: Ready',
    '                    ready: true',
  ]);
  assert.equal(out.at(-1), '    available:      true', 'a cluster without values shows no statusFeedback line');
  for (const l of out) assert.ok(Array.from(l).length <= 80, l);
});

test('wrap and ellipsize', () => {
  assert.deepEqual(wrap('a bb ccc', '> ', '  ', 6), ['> a bb', '  ccc']);
  assert.deepEqual(wrap('abcdefghij', '> ', '  ', 6), ['> abcd', '  efgh', '  ij']);
  assert.deepEqual(wrap('', 'x: ', '   '), ['x:']);
  assert.equal(ellipsize('abcdef', 4), 'abc…');
  assert.equal(ellipsize('abcd', 4), 'abcd');
});

test('json: the rows with sorted keys at every level, the same text for the same status', () => {
  const text = formatRowsJson([AUTH]);
  const parsed = JSON.parse(text) as Record<string, unknown>[];
  assert.deepEqual(Object.keys(parsed[0]!), ['group', 'kind', 'name', 'namespace', 'resource', 'status', 'version']);
  assert.deepEqual(parsed[0]!.status, AUTH.status);
  assert.ok(text.includes('\n  {\n    "group": "kuadrant.io",\n'));
  const reordered: PolicyRow = { ...AUTH, status: { clusters: AUTH.status.clusters!, summary: AUTH.status.summary } };
  assert.equal(formatRowsJson([reordered]), text);
  assert.equal(formatExplainJson(AUTH), `${JSON.stringify(parsed[0], null, 2)}\n`);
  assert.equal(formatRowsJson([]), '[]\n');
});

test('json: a cluster carries its statusFeedback values, keys sorted', () => {
  const r = row('RateLimitPolicy', 'payments', 'payments-rl', status({ 'spoke-1': work(ENFORCED_CONDITION, { extra: { phase: 'Ready', limitsTotal: 4 } }) }));
  const parsed = JSON.parse(formatRowsJson([r])) as { status: PolicyStatus }[];
  assert.deepEqual(parsed[0]!.status.clusters?.['spoke-1']?.statusFeedback, { limitsTotal: 4, phase: 'Ready' });
  const text = formatExplainJson(r);
  assert.ok(text.indexOf('"limitsTotal": 4') < text.indexOf('"phase": "Ready"'));
});

test('rolloutState: Progressing wave n/m, Halted with the first failed cluster in its controller\'s words, Complete', () => {
  assert.equal(rolloutState({ strategy: 'Progressive', revision: 3, state: 'Progressing', wave: 1, waves: 2, message: 'wave 1 of 2: spoke-2' }), 'Progressing wave 1/2');
  assert.equal(
    rolloutState({
      strategy: 'Progressive',
      revision: 3,
      state: 'Halted',
      wave: 1,
      waves: 2,
      halted: { cluster: 'spoke-2', reason: 'TargetNotFound', message: 'gateway not found', rolledBack: false },
      message: 'halted',
    }),
    'Halted: spoke-2: TargetNotFound: gateway not found',
  );
  assert.equal(rolloutState({ strategy: 'Progressive', revision: 3, state: 'Complete', wave: 2, waves: 2, message: 'revision 3 on every cluster' }), 'Complete');
});

test('explain: the rollout of a Progressive policy, and per cluster the revision it runs and its rollout phase', () => {
  const s = aggregatePolicyStatus({ clusters: { 'spoke-1': ENFORCED, 'spoke-2': ENFORCED }, now: 0 });
  s.clusters!['spoke-1'] = { ...s.clusters!['spoke-1']!, revision: 2, rollout: { phase: 'Waiting', message: 'runs revision 2 until its wave' } };
  s.clusters!['spoke-2'] = { ...s.clusters!['spoke-2']!, revision: 3, rollout: { phase: 'Failed', message: 'gateway not found' } };
  s.rollout = {
    strategy: 'Progressive',
    revision: 3,
    state: 'Halted',
    wave: 1,
    waves: 2,
    halted: { cluster: 'spoke-2', reason: 'TargetNotFound', message: 'gateway not found', rolledBack: false },
    message:
      'halted at revision 3: spoke-2: TargetNotFound: gateway not found; the clusters reached keep it, the others their previous revision (edit the policy back to roll back, or annotate it policysync.kuadrant.io/rollout-resume: "3" to resume)',
  };
  const text = lines(formatExplain(row('AuthPolicy', 'payments', 'payments-auth', s)));
  assert.deepEqual(text.slice(2, 8), [
    'Summary:    2 clusters: 2 enforced, 0 overridden, 0 pending, 0 failed; 2 applied',
    'Rollout:    Progressive, revision 3: Halted: spoke-2: TargetNotFound: gateway',
    '            not found',
    '            at wave 1/2: the clusters reached keep it, the others their previous',
    '            revision (edit the policy back to roll back, or annotate it',
    '            policysync.kuadrant.io/rollout-resume: "3" to resume)',
  ]);
  assert.deepEqual(text.filter((l) => /^ {4}(revision|rollout):/.test(l)), [
    '    revision:       2',
    '    rollout:        Waiting: runs revision 2 until its wave',
    '    revision:       3',
    '    rollout:        Failed: gateway not found',
  ]);
  for (const l of text) assert.ok(l.length <= 80, l);
  const progressing = { ...s, rollout: { strategy: 'Progressive' as const, revision: 3, state: 'Progressing' as const, wave: 1, waves: 2, message: 'wave 1 of 2: spoke-2' } };
  assert.deepEqual(lines(formatExplain(row('AuthPolicy', 'payments', 'payments-auth', progressing))).slice(3, 5), ['Rollout:    Progressive, revision 3: Progressing wave 1/2', '            wave 1 of 2: spoke-2']);
});

test('explain with PolicyVariants: what became of each, and per cluster the variants its copy carries and each field they set and from where', () => {
  const GEO = 'kuadrant.io/lb-attribute-geo-code';
  const base = status({ c1: ENFORCED, c2: ENFORCED, c3: { state: 'variantFailed', reason: 'VariantValueMissing', message: `variant geo entry 0 (spec.loadBalancing.geo): label ${GEO} is not set on cluster c3 and the value has no default` } });
  const s: PolicyStatus = { ...base, clusters: { ...base.clusters, c1: { ...base.clusters!.c1!, variants: ['geo@1'] }, c2: { ...base.clusters!.c2!, variants: ['geo@1'] } } };
  const dns: PolicyRow = { group: 'kuadrant.io', version: 'v1', resource: 'dnspolicies', kind: 'DNSPolicy', namespace: 'ns', name: 'dns', status: s };
  const geo = (value: string): { path: string; value: unknown; variant: string; entry: number; source: { from: 'clusterLabel'; key: string } } => ({ path: 'spec.loadBalancing.geo', value, variant: 'geo', entry: 0, source: { from: 'clusterLabel', key: GEO } });
  const weight = { path: 'spec.loadBalancing.weight', value: 120, variant: 'geo', entry: 0, source: { from: 'clusterLabel' as const, key: 'kuadrant.io/lb-attribute-custom-weight' }, defaulted: true };
  const failure = { cluster: 'c3', reason: 'VariantValueMissing' as const, message: 'm', variants: ['geo'] };
  const text = formatExplain(dns, {
    variants: [{ namespace: 'ns', name: 'geo', generation: 2, applied: ['c1', 'c2'], failing: [failure], unmatched: [] }],
    clusters: new Map([
      ['c1', { carried: ['geo@2'], fields: [geo('EU'), weight] }],
      ['c2', { carried: ['geo@1'], fields: [geo('NA')] }],
    ]),
    failures: [failure],
    placed: new Set(['c1', 'c2', 'c3']),
  });
  const out = lines(text);
  const at = (cluster: string): string[] => out.slice(out.indexOf(`  ${cluster}:`) + 1, out.findIndex((l, i) => i > out.indexOf(`  ${cluster}:`) && /^ {2}\S/.test(l)) >>> 0);
  assert.deepEqual(out.slice(out.indexOf('Variants:'), out.indexOf('Clusters:')), ['Variants:', '  geo@2: changes 2 clusters (c1, c2); fails on 1 (c3: VariantValueMissing)']);
  const c1 = at('c1');
  assert.deepEqual(c1.slice(c1.findIndex((l) => l.startsWith('    variants:'))), [
    '    variants:       geo@1',
    '    renders now:    geo@2 (not yet the copy it runs)',
    '    variant fields: spec.loadBalancing.geo = "EU" from label',
    '                      kuadrant.io/lb-attribute-geo-code (variant geo, entry 0)',
    '                    spec.loadBalancing.weight = 120 (default; label',
    '                      kuadrant.io/lb-attribute-custom-weight not set) (variant',
    '                      geo, entry 0)',
  ]);
  const c2 = at('c2');
  assert.deepEqual(c2.slice(c2.findIndex((l) => l.startsWith('    variants:'))), [
    '    variants:       geo@1',
    '    variant fields: spec.loadBalancing.geo = "NA" from label',
    '                      kuadrant.io/lb-attribute-geo-code (variant geo, entry 0)',
  ]);
  const c3 = at('c3');
  assert.deepEqual(c3.slice(0, 2), ['    state:          Failed', '    reason:         VariantValueMissing']);
  assert.ok(!c3.some((l) => l.includes('variant fields')), 'a failing cluster has no fields, its reason says why');
  // Without the decision (no variant targets the policy), the status alone: the variants the copy carries.
  assert.ok(lines(formatExplain(dns)).includes('    variants:       geo@1'));
  assert.ok(!formatExplain(dns).includes('Variants:'));
});

test('explain: a cluster whose copy carries a variant that selects it no more returns to the policy\'s own copy; one the decision here does not place is said not known', () => {
  const base = status({ c1: ENFORCED, c2: ENFORCED });
  const s: PolicyStatus = { ...base, clusters: { c1: { ...base.clusters!.c1!, variants: ['geo@1'] }, c2: { ...base.clusters!.c2!, variants: ['geo@1'] } } };
  const dns: PolicyRow = { group: 'kuadrant.io', version: 'v1', resource: 'dnspolicies', kind: 'DNSPolicy', namespace: 'ns', name: 'dns', status: s };
  const text = formatExplain(dns, { variants: [{ namespace: 'ns', name: 'geo', generation: 2, applied: [], failing: [], unmatched: [0] }], clusters: new Map(), failures: [], placed: new Set(['c1']) });
  const flat = text.replace(/\n {6,}/g, ' ');
  assert.match(flat, /c1:\n(.*\n)*? {4}renders now: {4}the policy's own copy: no variant selects the cluster now/);
  assert.match(flat, /c2:\n(.*\n)*? {4}variant fields: not known here: the decision read here does not place the policy on this cluster/);
});

test('explain: a drifted copy names its fields, who changed them and since when; a lingering one its copies', () => {
  const drifted: ClusterInput = {
    ...work(ENFORCED_CONDITION),
    drift: { drift: { fields: ['spec.rules.authorization.deny.opa.rego'], managers: [{ manager: 'kubectl-edit', operation: 'Update', time: '2026-12-02T01:18:05Z' }], since: '2026-12-02T01:18:05Z' }, correcting: false },
  } as ClusterInput;
  const removed: ClusterInput = { ...work(ENFORCED_CONDITION), drift: { drift: { fields: ['spec.rules'], managers: [] }, correcting: true } } as ClusterInput;
  const left: ClusterInput = { state: 'lingering', copies: [{ kind: 'authpolicies.kuadrant.io', namespace: 'payments', name: 'payments-auth', lingering: true, since: '2026-12-02T01:00:00Z', seenAt: Date.parse('2026-12-02T01:00:00Z') }] };
  const out = lines(formatExplain(row('AuthPolicy', 'payments', 'payments-auth', status({ 'spoke-1': drifted, 'spoke-2': removed, 'spoke-3': left }))));
  const at = (label: string, cluster: string): string | undefined => {
    const start = out.indexOf(`  ${cluster}:`);
    return out.slice(start).find((l) => l.startsWith(`    ${label}:`));
  };
  assert.equal(at('state', 'spoke-1'), '    state:          Failed');
  assert.equal(at('reason', 'spoke-1'), '    reason:         Drifted');
  assert.equal(at('drifted', 'spoke-1'), '    drifted:        spec.rules.authorization.deny.opa.rego');
  assert.equal(at('changed by', 'spoke-1'), '    changed by:     kubectl-edit (Update) at 2026-12-02T01:18:05Z');
  assert.equal(at('since', 'spoke-1'), '    since:          2026-12-02T01:18:05Z');
  assert.equal(at('changed by', 'spoke-2'), '    changed by:     no field manager (a removal, or a schema default)');
  assert.equal(at('reason', 'spoke-3'), '    reason:         Lingering');
  assert.equal(at('lingering', 'spoke-3'), '    lingering:      payments/payments-auth');
});
