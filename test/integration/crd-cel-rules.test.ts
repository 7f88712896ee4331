// The hub's check of a rendered copy (src/core/variants/schemacheck.ts, its CEL rules in celrules.ts) against the
// REAL CRDs of the kinds synced, read from the Go module downloads (never copied here): every CEL rule of every
// version of Kuadrant's policies (kuadrant-operator v1.2.0) and Envoy Gateway's (v1.5.0) compiles in the hub's
// evaluator, so none fails closed; for real rules a valid and an invalid object are told apart; and the hub's
// apiserver, which serves the Kuadrant CRDs, agrees with the check on each Kuadrant object (a server-side dry-run
// create, which writes nothing). Envoy Gateway's CRDs are not installed on the sandbox hub: their objects are
// checked against the rules alone.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { schemaRules } from '../../src/core/variants/celrules.ts';
import { schemaCheck, type OpenApiSchema } from '../../src/core/variants/schemacheck.ts';
import { ApiError } from '../../src/kube/http.ts';
import { collectionPath } from '../../src/kube/resource.ts';
import { hubHttp } from '../../testkit/hub.ts';
import { moduleFolder } from '../../testkit/sandbox/crds.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

interface Crd {
  group: string;
  kind: string;
  plural: string;
  versions: { name: string; schema: OpenApiSchema }[];
}

function readCrds(files: string[]): Crd[] {
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8'))
      .map((doc) => doc.toJS() as { kind?: string; spec?: { group: string; names: { kind: string; plural: string }; versions: { name: string; schema: { openAPIV3Schema: OpenApiSchema } }[] } } | null)
      .filter((doc) => doc?.kind === 'CustomResourceDefinition')
      .map((doc) => {
        const spec = doc!.spec!;
        return { group: spec.group, kind: spec.names.kind, plural: spec.names.plural, versions: spec.versions.map((v) => ({ name: v.name, schema: v.schema.openAPIV3Schema })) };
      }),
  );
}

const kuadrantDir = join(moduleFolder('github.com/kuadrant/kuadrant-operator'), 'config/crd/bases');
const envoyDir = join(moduleFolder('github.com/envoyproxy/gateway'), 'charts/gateway-helm/crds/generated');
const KUADRANT = readCrds(['authpolicies', 'ratelimitpolicies', 'dnspolicies', 'tlspolicies'].map((r) => join(kuadrantDir, `kuadrant.io_${r}.yaml`)));
const ENVOY_GATEWAY = readCrds(readdirSync(envoyDir).filter((f) => f.endsWith('.yaml')).map((f) => join(envoyDir, f)));

/** The rules of these CRDs that cannot be checked on the hub (every copy with a value there is refused): none. */
const FAILING_CLOSED: string[] = [];

test('every CEL rule of every version of the Kuadrant and Envoy Gateway CRDs compiles in the hub’s check; none is a transition rule', () => {
  let rules = 0;
  const unchecked: string[] = [];
  const transition: string[] = [];
  for (const crd of [...KUADRANT, ...ENVOY_GATEWAY]) {
    for (const version of crd.versions) {
      // A whole-copy check compiles the whole schema: a part that does not compile would refuse every copy.
      const uncompiled = schemaCheck(version.schema)({}).filter((v) => v.message.includes('cannot be checked here'));
      assert.deepEqual(uncompiled, [], `${crd.kind}/${version.name} compiles`);
      for (const r of schemaRules(version.schema)) {
        rules += 1;
        const where = `${crd.kind}/${version.name} ${r.at}: ${r.rule}`;
        if (r.unchecked !== undefined) unchecked.push(`${where} (${r.unchecked})`);
        if (r.transition) transition.push(where);
      }
    }
  }
  assert.deepEqual(unchecked, FAILING_CLOSED);
  assert.deepEqual(transition, []);
  assert.ok(KUADRANT.length === 4 && ENVOY_GATEWAY.length >= 8, `the CRDs read: ${[...KUADRANT, ...ENVOY_GATEWAY].map((c) => c.kind).join(', ')}`);
  assert.ok(rules > 300, `${rules} rules, fewer than these CRDs hold`);
});

interface Case {
  what: string;
  object: KubeObject;
  /** The message the rule gives; absent: the object is valid. */
  refused?: string;
}

const GATEWAY = { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' };
const ROUTE = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'route' };
const LIMITS = { api: { rates: [{ limit: 5, window: '10s' }] } };

function object(kind: string, spec: Record<string, unknown>, apiVersion = 'kuadrant.io/v1'): KubeObject {
  return { apiVersion, kind, metadata: { namespace: 'default', name: `cel-${kind.toLowerCase()}` }, spec };
}

const dns = (spec: Record<string, unknown>) => object('DNSPolicy', { targetRef: GATEWAY, providerRefs: [{ name: 'dns-provider' }], ...spec });
const rlp = (spec: Record<string, unknown>) => object('RateLimitPolicy', { targetRef: ROUTE, ...spec });

const KUADRANT_CASES: Case[] = [
  { what: 'DNSPolicy health check on 443', object: dns({ healthCheck: { port: 443, protocol: 'HTTPS' } }) },
  { what: 'DNSPolicy health check on 8080', object: dns({ healthCheck: { port: 8080 } }) },
  { what: 'DNSPolicy health check with the defaults (port 443, HTTPS, threshold 5)', object: dns({ healthCheck: { path: '/health' } }) },
  { what: 'DNSPolicy health check on 22', object: dns({ healthCheck: { port: 22 } }), refused: 'Only ports 80, 443, 1024-49151 are allowed' },
  { what: 'DNSPolicy health check on 50000', object: dns({ healthCheck: { port: 50000 } }), refused: 'Only ports 80, 443, 1024-49151 are allowed' },
  // The rule's bounds, each side: what the apiserver says of each is what the check must say.
  ...[79, 80, 81, 442, 444, 1023, 1024, 49151, 49152].map(
    (port): Case => ({ what: `DNSPolicy health check on ${port}`, object: dns({ healthCheck: { port } }), ...([80, 1024, 49151].includes(port) ? {} : { refused: 'Only ports 80, 443, 1024-49151 are allowed' }) }),
  ),
  { what: 'DNSPolicy health check over TCP', object: dns({ healthCheck: { protocol: 'TCP' } }), refused: 'Only HTTP or HTTPS protocols are allowed' },
  { what: 'DNSPolicy failure threshold 0', object: dns({ healthCheck: { failureThreshold: 0 } }), refused: 'Failure threshold must be greater than 0' },
  { what: 'DNSPolicy targeting an HTTPRoute', object: dns({ targetRef: ROUTE }), refused: "Invalid targetRef.kind. The only supported values are 'Gateway'" },
  { what: 'RateLimitPolicy with limits', object: rlp({ limits: LIMITS }) },
  { what: 'RateLimitPolicy with defaults', object: rlp({ defaults: { limits: LIMITS } }) },
  { what: 'RateLimitPolicy with overrides', object: rlp({ overrides: { limits: LIMITS } }) },
  { what: 'RateLimitPolicy with defaults and limits', object: rlp({ defaults: { limits: LIMITS }, limits: LIMITS }), refused: 'Implicit and explicit defaults are mutually exclusive' },
  { what: 'RateLimitPolicy with defaults and overrides', object: rlp({ defaults: { limits: LIMITS }, overrides: { limits: LIMITS } }), refused: 'Overrides and explicit defaults are mutually exclusive' },
  { what: 'RateLimitPolicy with overrides and limits', object: rlp({ overrides: { limits: LIMITS }, limits: LIMITS }), refused: 'Overrides and implicit defaults are mutually exclusive' },
  { what: 'RateLimitPolicy with no limits', object: rlp({ limits: {} }), refused: 'At least one spec.limits must be defined' },
  { what: 'RateLimitPolicy with empty defaults', object: rlp({ defaults: { limits: {} } }), refused: 'At least one spec.defaults.limits must be defined' },
  { what: 'RateLimitPolicy targeting another group', object: rlp({ targetRef: { ...ROUTE, group: 'example.com' }, limits: LIMITS }), refused: "Invalid targetRef.group. The only supported value is 'gateway.networking.k8s.io'" },
  { what: 'RateLimitPolicy targeting a Service', object: rlp({ targetRef: { ...ROUTE, kind: 'Service' }, limits: LIMITS }), refused: "Invalid targetRef.kind. The only supported values are 'HTTPRoute' and 'Gateway'" },
  { what: 'TLSPolicy targeting another group', object: object('TLSPolicy', { targetRef: { ...GATEWAY, group: 'example.com' }, issuerRef: { name: 'issuer' } }), refused: "Invalid targetRef.group. The only supported value is 'gateway.networking.k8s.io'" },
  { what: 'AuthPolicy with overrides and defaults', object: object('AuthPolicy', { targetRef: ROUTE, defaults: { rules: { authentication: { a: { anonymous: {} } } } }, overrides: { rules: { authentication: { a: { anonymous: {} } } } } }), refused: 'Explicit overrides and explicit defaults are mutually exclusive' },
  { what: 'AuthPolicy with rules', object: object('AuthPolicy', { targetRef: ROUTE, rules: { authentication: { a: { anonymous: {} } } } }) },
];

const btp = (spec: Record<string, unknown>) => object('BackendTrafficPolicy', { targetRefs: [ROUTE], ...spec }, 'gateway.envoyproxy.io/v1alpha1');

const ENVOY_CASES: Case[] = [
  { what: 'BackendTrafficPolicy with a request timeout', object: btp({ timeout: { http: { requestTimeout: '10s' } } }) },
  { what: 'BackendTrafficPolicy targeting a Service', object: btp({ targetRefs: [{ ...ROUTE, kind: 'Service' }] }), refused: 'this policy can only have a targetRefs[*].kind of Gateway/HTTPRoute/GRPCRoute/TCPRoute/UDPRoute/TLSRoute' },
  { what: 'BackendTrafficPolicy with targetRef and targetRefs', object: btp({ targetRef: ROUTE }), refused: 'either targetRef or targetRefs must be used' },
  { what: 'BackendTrafficPolicy consistent hash by source IP', object: btp({ loadBalancer: { type: 'ConsistentHash', consistentHash: { type: 'SourceIP' } } }) },
  { what: 'BackendTrafficPolicy consistent hash without its settings', object: btp({ loadBalancer: { type: 'ConsistentHash' } }), refused: 'If LoadBalancer type is consistentHash, consistentHash field needs to be set.' },
  { what: 'BackendTrafficPolicy consistent hash by header without a header', object: btp({ loadBalancer: { type: 'ConsistentHash', consistentHash: { type: 'Header' } } }), refused: 'If consistent hash type is header, the header field must be set.' },
  { what: 'BackendTrafficPolicy fault injection with nothing', object: btp({ faultInjection: {} }), refused: 'Delay and abort faults are set at least one.' },
  {
    what: 'SecurityPolicy with both remote and local JWKS',
    object: object('SecurityPolicy', { targetRefs: [ROUTE], jwt: { providers: [{ name: 'p', remoteJWKS: { uri: 'https://idp.example.com/jwks' }, localJWKS: { type: 'Inline', inline: '{}' } }] } }, 'gateway.envoyproxy.io/v1alpha1'),
    refused: 'remoteJWKS and localJWKS cannot both be specified.',
  },
  { what: 'ClientTrafficPolicy targeting an HTTPRoute', object: object('ClientTrafficPolicy', { targetRefs: [ROUTE] }, 'gateway.envoyproxy.io/v1alpha1'), refused: 'this policy can only have a targetRefs[*].kind of Gateway' },
];

function servedSchema(crds: Crd[], o: KubeObject): OpenApiSchema {
  const [group, version] = o.apiVersion.split('/');
  const crd = crds.find((c) => c.group === group && c.kind === o.kind);
  const schema = crd?.versions.find((v) => v.name === version)?.schema;
  assert.ok(schema, `${o.apiVersion} ${o.kind} among the CRDs read`);
  return schema;
}

/** The messages of the hub's check for `o`: all of them, ajv's and the rules'. */
function hubCheck(crds: Crd[], o: KubeObject): string[] {
  return schemaCheck(servedSchema(crds, o))(o).map((v) => v.message);
}

function assertCase(c: Case, messages: string[]): void {
  if (c.refused === undefined) assert.deepEqual(messages, [], `${c.what}: valid`);
  else assert.ok(messages.length > 0 && messages.every((m) => m.includes(c.refused!)), `${c.what}: refused with "${c.refused}", got ${JSON.stringify(messages)}`);
}

test('real rules of the Kuadrant CRDs tell a valid copy from an invalid one, with the rule’s message', () => {
  for (const c of KUADRANT_CASES) assertCase(c, hubCheck(KUADRANT, c.object));
});

test('real rules of the Envoy Gateway CRDs tell a valid copy from an invalid one, with the rule’s message', () => {
  for (const c of ENVOY_CASES) assertCase(c, hubCheck(ENVOY_GATEWAY, c.object));
});

test('the hub’s apiserver agrees with the check on every Kuadrant object (server-side dry-run create)', async () => {
  const http = hubHttp(await testSandbox());
  try {
    for (const c of KUADRANT_CASES) {
      const [group, version] = c.object.apiVersion.split('/');
      const plural = KUADRANT.find((crd) => crd.kind === c.object.kind)!.plural;
      const resource = { group: group!, version: version!, resource: plural, namespaced: true };
      const verdict = await http.request('POST', collectionPath(resource, 'default'), { body: c.object, query: { dryRun: 'All' } }).then(
        () => 'accepted',
        (err: unknown) => {
          if (err instanceof ApiError && err.status === 422) return err.message;
          throw err;
        },
      );
      if (c.refused === undefined) assert.equal(verdict, 'accepted', `${c.what}: the apiserver accepts it too`);
      else assert.ok(verdict.includes(c.refused), `${c.what}: the apiserver refuses it too, for "${c.refused}": ${verdict}`);
    }
  } finally {
    http.destroy();
  }
});
