import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDns1123Subdomain } from '../k8s/dns.ts';
import { downstreamNamespaceTemplateErrors, parseParams, parseParamsJson, renderDownstreamNamespace } from './params.ts';
import { ALL } from './strategy.ts';

const auth = { group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' };
const rlp = { group: 'kuadrant.io', version: 'v1', resource: 'ratelimitpolicies' };

test('parseParams reads the docs/architecture.md example, normalising statusFeedback to a list', () => {
  const result = parseParams({
    policiesToSync: [auth, { ...rlp, statusFeedback: [{ name: 'limitsTotal', path: '.status.limits' }] }],
    downstreamNamespace: 'kuadrant-{namespace}',
  });
  assert.deepEqual(result, {
    ok: true,
    params: {
      policiesToSync: [
        { ...auth, statusFeedback: [] },
        { ...rlp, statusFeedback: [{ name: 'limitsTotal', path: '.status.limits' }] },
      ],
      downstreamNamespace: 'kuadrant-{namespace}',
      rolloutStrategy: ALL,
      drift: 'Correct',
    },
  });
});

test('parseParams defaults downstreamNamespace to {namespace} and accepts an empty list', () => {
  assert.deepEqual(parseParams({ policiesToSync: [] }), { ok: true, params: { policiesToSync: [], downstreamNamespace: '{namespace}', rolloutStrategy: ALL, drift: 'Correct' } });
});

test('parseParams reads drift: Report, defaults it to Correct, and names a value that is neither', () => {
  const read = (drift: unknown) => {
    const result = parseParams({ policiesToSync: [], drift });
    return result.ok ? result.params.drift : result.errors;
  };
  assert.equal(read('Report'), 'Report');
  assert.equal(read('Correct'), 'Correct');
  assert.equal(read(undefined), 'Correct');
  assert.deepEqual(read('report'), ['drift: Invalid option: expected one of "Correct"|"Report"']);
});

test('parseParams accepts the core group ""', () => {
  const result = parseParams({ policiesToSync: [{ group: '', version: 'v1', resource: 'configmaps' }] });
  assert.deepEqual(result, {
    ok: true,
    params: { policiesToSync: [{ group: '', version: 'v1', resource: 'configmaps', statusFeedback: [] }], downstreamNamespace: '{namespace}', rolloutStrategy: ALL, drift: 'Correct' },
  });
});

test('parseParams accepts experimentalPolicySync as an alias of policiesToSync', () => {
  assert.deepEqual(parseParams({ experimentalPolicySync: [auth] }), {
    ok: true,
    params: { policiesToSync: [{ ...auth, statusFeedback: [] }], downstreamNamespace: '{namespace}', rolloutStrategy: ALL, drift: 'Correct' },
  });
});

test('parseParams rejects both policiesToSync and experimentalPolicySync', () => {
  assert.deepEqual(parseParams({ policiesToSync: [auth], experimentalPolicySync: [auth] }), {
    ok: false,
    errors: ['experimentalPolicySync: is an alias of policiesToSync; set only one of them'],
  });
});

test('parseParams accepts and ignores MGC downstreamClass', () => {
  assert.deepEqual(parseParams({ policiesToSync: [auth], downstreamClass: 'istio' }), {
    ok: true,
    params: { policiesToSync: [{ ...auth, statusFeedback: [] }], downstreamNamespace: '{namespace}', rolloutStrategy: ALL, drift: 'Correct' },
  });
});

test('parseParams names an unknown top-level key', () => {
  assert.deepEqual(parseParams({ policiesToSync: [auth], foo: 1 }), { ok: false, errors: ['unrecognized key "foo"'] });
});

test('parseParams names an unknown key inside an entry and inside a feedback rule, with its path', () => {
  const result = parseParams({
    policiesToSync: [auth, { ...rlp, kind: 'RateLimitPolicy', statusFeedback: [{ name: 'a', path: '.status.a', type: 'x' }] }],
  });
  assert.deepEqual(result, {
    ok: false,
    errors: ['policiesToSync[1].statusFeedback[0]: unrecognized key "type"', 'policiesToSync[1]: unrecognized key "kind"'],
  });
});

test('parseParams reports a missing field as Required with its path', () => {
  assert.deepEqual(parseParams({ policiesToSync: [auth, { group: 'kuadrant.io', version: 'v1' }] }), {
    ok: false,
    errors: ['policiesToSync[1].resource: Required'],
  });
});

test('parseParams requires policiesToSync (or its alias)', () => {
  assert.deepEqual(parseParams({}), { ok: false, errors: ['policiesToSync: Required'] });
});

test('parseParams reports wrong types and a non-object document', () => {
  assert.deepEqual(parseParams({ policiesToSync: {} }), {
    ok: false,
    errors: ['policiesToSync: Invalid input: expected array, received object'],
  });
  assert.deepEqual(parseParams(['x']), { ok: false, errors: ['Invalid input: expected object, received array'] });
});

test('parseParams rejects non-DNS resource, version and group values', () => {
  const result = parseParams({ policiesToSync: [{ group: 'Kuadrant.io', version: 'V1', resource: 'auth_policies' }] });
  assert.deepEqual(result, {
    ok: false,
    errors: [
      'policiesToSync[0].group: must be "" (core) or a lowercase DNS-1123 subdomain',
      'policiesToSync[0].version: must be a lowercase DNS-1123 label',
      'policiesToSync[0].resource: must be a lowercase DNS-1123 label',
    ],
  });
});

test('parseParams rejects a resource listed twice, also in another version', () => {
  const result = parseParams({ policiesToSync: [auth, rlp, auth, { ...auth, version: 'v1beta3' }] });
  assert.deepEqual(result, {
    ok: false,
    errors: [
      'policiesToSync[2]: authpolicies.v1.kuadrant.io duplicates policiesToSync[0]; list each resource once',
      'policiesToSync[3]: authpolicies.v1beta3.kuadrant.io duplicates policiesToSync[0]; list each resource once',
    ],
  });
});

test('parseParams rejects feedback names that repeat or clash with built-in rules', () => {
  const result = parseParams({
    policiesToSync: [
      {
        ...rlp,
        statusFeedback: [
          { name: 'limits', path: '.status.a' },
          { name: 'limits', path: '.status.b' },
          { name: 'enforcedStatus', path: '.status.c' },
          { name: 'conditions', path: '.status.conditions' },
        ],
      },
      // The same name in another kind is fine.
      { ...auth, statusFeedback: [{ name: 'limits', path: '.status.a' }] },
    ],
  });
  assert.deepEqual(result, {
    ok: false,
    errors: [
      'policiesToSync[0].statusFeedback[1].name: "limits" is used more than once',
      'policiesToSync[0].statusFeedback[2].name: "enforcedStatus" is a built-in feedback rule name',
      'policiesToSync[0].statusFeedback[3].name: "conditions" is a built-in feedback rule name',
    ],
  });
});

test('parseParams rejects a feedback path that is not a JSONPath from the object root', () => {
  assert.deepEqual(parseParams({ policiesToSync: [{ ...auth, statusFeedback: [{ name: 'x', path: 'status.x' }] }] }), {
    ok: false,
    errors: ['policiesToSync[0].statusFeedback[0].path: must be a JSONPath starting with "." (e.g. .status.limits)'],
  });
});

test('parseParams rejects an unknown placeholder in downstreamNamespace', () => {
  assert.deepEqual(parseParams({ policiesToSync: [], downstreamNamespace: 'kuadrant-{cluster}' }), {
    ok: false,
    errors: ['downstreamNamespace: unknown placeholder "{cluster}" (only {namespace} is allowed)'],
  });
});

test('parseParams rejects a downstreamNamespace that does not render to a DNS-1123 label', () => {
  assert.deepEqual(parseParams({ policiesToSync: [], downstreamNamespace: 'Kuadrant_{namespace}' }), {
    ok: false,
    errors: ['downstreamNamespace: renders to "Kuadrant_default" for namespace "default", which is not a valid DNS-1123 label'],
  });
});

test('downstreamNamespaceTemplateErrors accepts fixed namespaces and rejects stray braces and empty templates', () => {
  assert.deepEqual(downstreamNamespaceTemplateErrors('kuadrant-system'), []);
  assert.deepEqual(downstreamNamespaceTemplateErrors('{namespace}-{namespace}'), []);
  assert.deepEqual(downstreamNamespaceTemplateErrors('x-{namespace'), ['unbalanced "{" or "}" in "x-{namespace"']);
  assert.deepEqual(downstreamNamespaceTemplateErrors(''), [
    'renders to "" for namespace "default", which is not a valid DNS-1123 label',
  ]);
});

test('parseParams collects errors from several fields at once', () => {
  const result = parseParams({ policiesToSync: [{ group: 'kuadrant.io', resource: 'authpolicies' }], bar: true, downstreamNamespace: 7 });
  assert.deepEqual(result, {
    ok: false,
    errors: [
      'policiesToSync[0].version: Required',
      'downstreamNamespace: Invalid input: expected string, received number',
      'unrecognized key "bar"',
    ],
  });
});

test('parseParamsJson reports invalid JSON with the parser message', () => {
  const result = parseParamsJson('{"policiesToSync": [');
  assert.equal(result.ok, false);
  assert.equal(result.ok ? '' : result.errors.length, 1);
  assert.match(result.ok ? '' : (result.errors[0] ?? ''), /^params is not valid JSON: .+/);
});

test('parseParamsJson parses valid JSON text with the schema', () => {
  assert.deepEqual(parseParamsJson('{"experimentalPolicySync":[{"group":"kuadrant.io","version":"v1","resource":"authpolicies"}],"downstreamClass":"istio"}'), {
    ok: true,
    params: { policiesToSync: [{ ...auth, statusFeedback: [] }], downstreamNamespace: '{namespace}', rolloutStrategy: ALL, drift: 'Correct' },
  });
  assert.deepEqual(parseParamsJson('{"nope":1}'), { ok: false, errors: ['unrecognized key "nope"'] });
});

test('renderDownstreamNamespace replaces every {namespace}', () => {
  assert.equal(renderDownstreamNamespace('kuadrant-{namespace}', 'team-a'), 'kuadrant-team-a');
  assert.equal(renderDownstreamNamespace('{namespace}', 'team-a'), 'team-a');
  assert.equal(renderDownstreamNamespace('fixed', 'team-a'), 'fixed');
});

test('parseParams caps policiesToSync (and its alias) at 64 kinds, as the PolicySyncParams CRD does', () => {
  const kinds = (count: number) => Array.from({ length: count }, (_, i) => ({ ...auth, resource: `kind${i}` }));
  assert.equal(parseParams({ policiesToSync: kinds(64) }).ok, true);
  assert.deepEqual(parseParams({ policiesToSync: kinds(65) }), { ok: false, errors: ['policiesToSync: must list at most 64 kinds'] });
  assert.deepEqual(parseParams({ experimentalPolicySync: kinds(65) }), { ok: false, errors: ['experimentalPolicySync: must list at most 64 kinds'] });
});

test('parseParams caps statusFeedback rules, their names and paths, and the free-text fields', () => {
  const rules = (count: number) => Array.from({ length: count }, (_, i) => ({ name: `r${i}`, path: '.status.x' }));
  assert.equal(parseParams({ policiesToSync: [{ ...rlp, statusFeedback: rules(16) }] }).ok, true);
  assert.deepEqual(parseParams({ policiesToSync: [{ ...rlp, statusFeedback: rules(17) }] }), {
    ok: false,
    errors: ['policiesToSync[0].statusFeedback: must list at most 16 rules'],
  });
  assert.deepEqual(parseParams({ policiesToSync: [{ ...rlp, statusFeedback: [{ name: 'n'.repeat(64), path: `.${'p'.repeat(1024)}` }] }] }), {
    ok: false,
    errors: ['policiesToSync[0].statusFeedback[0].name: must be at most 63 characters', 'policiesToSync[0].statusFeedback[0].path: must be at most 1024 characters'],
  });
  assert.deepEqual(parseParams({ policiesToSync: [auth], downstreamNamespace: 'x'.repeat(254), downstreamClass: 'c'.repeat(254) }), {
    ok: false,
    errors: ['downstreamClass: must be at most 253 characters', 'downstreamNamespace: must be at most 253 characters'],
  });
  assert.deepEqual(parseParams({ policiesToSync: [{ ...auth, resource: 'r'.repeat(64) }] }), {
    ok: false,
    errors: ['policiesToSync[0].resource: must be at most 63 characters'],
  });
});

test('the group pattern accepts exactly "" and the DNS-1123 subdomains', () => {
  const samples = ['', 'kuadrant.io', 'a', 'a.b.c', 'a-b.c-d', '-a', 'a-', 'a..b', '.a', 'a.', 'A.io', 'a_b', 'x'.repeat(253), 'x'.repeat(254), `${'a.'.repeat(126)}a`];
  for (const group of samples) {
    const accepted = parseParams({ policiesToSync: [{ ...auth, group }] }).ok;
    assert.equal(accepted, group === '' || isDns1123Subdomain(group), JSON.stringify(group));
  }
});
