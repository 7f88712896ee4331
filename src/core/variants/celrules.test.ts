import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { checkProperty } from '../../../testkit/arbitraries.ts';
import { celRulesCheck, schemaRules } from './celrules.ts';
import { schemaCheck, type OpenApiSchema } from './schemacheck.ts';

type Rule = { rule: string; message?: string; messageExpression?: string; fieldPath?: string };

const rules = (...list: Rule[]) => ({ 'x-kubernetes-validations': list });
const object = (properties: Record<string, OpenApiSchema>, extra: OpenApiSchema = {}): OpenApiSchema => ({ type: 'object', properties, ...extra });
const spec = (schema: OpenApiSchema): OpenApiSchema => object({ spec: schema });
const messages = (schema: OpenApiSchema, copy: unknown) => celRulesCheck(schema)(copy).map((v) => v.message);

test('self > 0 on an integer: 0 refused with the rule message at the field, 3 passes, an absent field is not evaluated', () => {
  const schema = spec(object({ port: { type: 'integer', ...rules({ rule: 'self > 0', message: 'must be positive' }) } }));
  assert.deepEqual(celRulesCheck(schema)({ spec: { port: 0 } }), [{ path: ['spec', 'port'], message: 'spec.port: must be positive' }]);
  assert.deepEqual(messages(schema, { spec: { port: 3 } }), []);
  assert.deepEqual(messages(schema, { spec: {} }), []);
  assert.deepEqual(messages(schema, {}), []);
});

test('self in a list of strings; without a message the apiserver says "failed rule: <rule>"', () => {
  const schema = spec(object({ protocol: { type: 'string', ...rules({ rule: "self in ['HTTP','HTTPS']" }) } }));
  assert.deepEqual(messages(schema, { spec: { protocol: 'HTTPS' } }), []);
  assert.deepEqual(messages(schema, { spec: { protocol: 'TCP' } }), ["spec.protocol: failed rule: self in ['HTTP','HTTPS']"]);
});

test('has(): fields present or not, exclusive fields (as RateLimitPolicy says of defaults and limits)', () => {
  const limits = { type: 'object', additionalProperties: { type: 'object' } };
  const schema = spec(object({ defaults: object({ limits }), limits }, rules({ rule: '!(has(self.defaults) && has(self.limits))', message: 'Implicit and explicit defaults are mutually exclusive' })));
  assert.deepEqual(messages(schema, { spec: { limits: { a: {} } } }), []);
  assert.deepEqual(messages(schema, { spec: { defaults: { limits: {} } } }), []);
  assert.deepEqual(messages(schema, { spec: { defaults: { limits: {} }, limits: { a: {} } } }), ['spec: Implicit and explicit defaults are mutually exclusive']);
});

test('a rule on a list’s items applies to each item, its path the item’s index; a rule on the list to the list', () => {
  const item = object({ fqdn: { type: 'string' }, ip: { type: 'string' } }, rules({ rule: 'has(self.fqdn) || has(self.ip)', message: 'fqdn or ip' }));
  const schema = spec(object({ endpoints: { type: 'array', items: item, ...rules({ rule: 'self.all(f, has(f.fqdn)) || !self.exists(f, has(f.fqdn))', message: 'all fqdn or none' }) } }));
  assert.deepEqual(messages(schema, { spec: { endpoints: [{ fqdn: 'a' }, { fqdn: 'b' }] } }), []);
  assert.deepEqual(celRulesCheck(schema)({ spec: { endpoints: [{ fqdn: 'a' }, {}, { ip: '10.0.0.1' }] } }), [
    { path: ['spec', 'endpoints'], message: 'spec.endpoints: all fqdn or none' },
    { path: ['spec', 'endpoints', 1], message: 'spec.endpoints[1]: fqdn or ip' },
  ]);
});

test('a rule on additionalProperties applies to each value of the map, its path the key', () => {
  const limit = object({ rates: { type: 'array', items: object({ limit: { type: 'integer' } }) } }, rules({ rule: 'size(self.rates) > 0', message: 'a limit needs a rate' }));
  const schema = spec(object({ limits: { type: 'object', additionalProperties: limit } }));
  assert.deepEqual(messages(schema, { spec: { limits: { a: { rates: [{ limit: 1 }] } } } }), []);
  assert.deepEqual(celRulesCheck(schema)({ spec: { limits: { a: { rates: [{ limit: 1 }] }, 'per.user': { rates: [] } } } }), [
    { path: ['spec', 'limits', 'per.user'], message: 'spec.limits["per.user"]: a limit needs a rate' },
  ]);
});

test('messageExpression is the message when it yields a string; else message', () => {
  const made = spec(object({ replicas: { type: 'integer', ...rules({ rule: 'self <= 10', messageExpression: "'at most 10 replicas, not ' + string(self)", message: 'too many' }) } }));
  assert.deepEqual(messages(made, { spec: { replicas: 12 } }), ['spec.replicas: at most 10 replicas, not 12']);
  const broken = spec(object({ replicas: { type: 'integer', ...rules({ rule: 'self <= 10', messageExpression: 'self', message: 'too many' }) } }));
  assert.deepEqual(messages(broken, { spec: { replicas: 12 } }), ['spec.replicas: too many']);
});

test('a transition rule (it reads oldSelf) is skipped: the apiserver judges it on update against the running object', () => {
  const schema = spec(object({ name: { type: 'string', ...rules({ rule: 'self == oldSelf', message: 'immutable' }) } }));
  assert.deepEqual(messages(schema, { spec: { name: 'changed' } }), []);
  assert.deepEqual(schemaRules(schema), [{ at: 'spec.name', rule: 'self == oldSelf', transition: true, unchecked: undefined }]);
  const optional = spec(object({ name: { type: 'string', 'x-kubernetes-validations': [{ rule: '!oldSelf.hasValue() || self == oldSelf.value()', optionalOldSelf: true }] } }));
  assert.match(messages(optional, { spec: { name: 'x' } })[0] ?? '', /cannot be checked here \(a transition rule with optionalOldSelf/, 'evaluated on create too: fails closed');
});

test('a rule that cannot be compiled or calls a function this evaluator lacks fails closed, naming the rule and why', () => {
  const schema = spec(
    object({
      tags: { type: 'array', items: { type: 'string' }, ...rules({ rule: 'self.isSorted()' }) },
      name: { type: 'string', ...rules({ rule: 'self.startsWith(' }) },
      cpu: { type: 'string', ...rules({ rule: "quantity(self).isLessThan(quantity('2'))" }) },
    }),
  );
  const out = messages(schema, { spec: { tags: ['a', 'b'], name: 'x', cpu: '1' } });
  assert.equal(out.length, 3);
  assert.match(out[0]!, /^spec\.tags: the rule `self\.isSorted\(\)` cannot be checked here \(isSorted is not available in this evaluator\)/);
  assert.match(out[1]!, /^spec\.name: the rule `self\.startsWith\(` cannot be checked here \(it does not parse here: /);
  assert.match(out[2]!, /^spec\.cpu: the rule .* cannot be checked here \((quantity, isLessThan|isLessThan, quantity) are not available/);
  assert.deepEqual(messages(schema, { spec: {} }), [], 'absent: not evaluated, so not refused');
});

test('cel-go’s extended strings library, which the apiserver has, is there (Gateway API’s Gateway splits label keys)', () => {
  const schema = spec(object({ labels: { type: 'object', additionalProperties: { type: 'string' }, ...rules({ rule: 'self.all(key, key.split("/")[0].size() < 5)', message: 'prefix too long' }) } }));
  assert.deepEqual(messages(schema, { spec: { labels: { 'a.io/x': 'y' } } }), []);
  assert.deepEqual(messages(schema, { spec: { labels: { 'example.com/x': 'y' } } }), ['spec.labels: prefix too long']);
  const quoted = spec(object({ name: { type: 'string', ...rules({ rule: 'strings.quote(self) == \'"a"\'' }) } }));
  assert.deepEqual(messages(quoted, { spec: { name: 'a' } }), [], 'a namespaced function of the library');
  assert.deepEqual(messages(quoted, { spec: { name: 'b' } }), ['spec.name: failed rule: strings.quote(self) == \'"a"\'']);
});

test('a rule that errs on the copy refuses it, with the error (as the apiserver does)', () => {
  const schema = spec(object({ x: { type: 'integer' } }, rules({ rule: 'self.x > 0' })));
  const out = messages(schema, { spec: {} });
  assert.equal(out.length, 1);
  assert.match(out[0]!, /^spec: .*x.* evaluating rule: self\.x > 0$/);
});

test('the copy is checked as the apiserver validates it: after defaulting', () => {
  const schema = spec(object({ type: { type: 'string', default: 'HTTP' }, http: { type: 'object' } }, rules({ rule: "self.type == 'HTTP' ? has(self.http) : !has(self.http)", message: 'http iff type HTTP' })));
  assert.deepEqual(messages(schema, { spec: {} }), ['spec: http iff type HTTP'], 'type defaults to HTTP, which wants http');
  assert.deepEqual(messages(schema, { spec: { http: {} } }), []);
  assert.deepEqual(messages(schema, { spec: { type: 'TCP', http: {} } }), ['spec: http iff type HTTP']);
});

test('values typed by the schema: ints, doubles, int-or-string, bytes, timestamps, escaped property names, root metadata', () => {
  const schema = object(
    {
      metadata: { type: 'object' },
      spec: object(
        {
          weight: { type: 'integer' },
          ratio: { type: 'number' },
          port: { 'x-kubernetes-int-or-string': true },
          ca: { type: 'string', format: 'byte' },
          since: { type: 'string', format: 'date-time' },
          namespace: { type: 'string' },
          'tls-mode': { type: 'string' },
        },
        rules(
          { rule: 'self.weight == 3 && type(self.weight) == int' },
          { rule: 'type(self.ratio) == double' },
          { rule: 'type(self.port) == int' },
          { rule: 'size(self.ca) == 3' },
          { rule: "self.since < timestamp('2030-01-01T00:00:00Z')" },
          { rule: "self.__namespace__ == 'ns' && self.tls__dash__mode == 'strict'" },
        ),
      ),
    },
    rules({ rule: "self.metadata.name == 'p' && !has(self.metadata.labels)" }),
  );
  const copy = { metadata: { name: 'p', labels: { a: 'b' } }, spec: { weight: 3, ratio: 0.5, port: 80, ca: Buffer.from('abc').toString('base64'), since: '2026-11-27T10:00:00.5Z', namespace: 'ns', 'tls-mode': 'strict' } };
  assert.deepEqual(messages(schema, copy), []);
  assert.deepEqual(messages(schema, { ...copy, spec: { ...copy.spec, weight: 4 } }), ['spec: failed rule: self.weight == 3 && type(self.weight) == int']);
});

test('a value the apiserver types in a way this check does not (format: duration) fails closed the rules that read it', () => {
  const schema = spec(object({ timeout: { type: 'string', format: 'duration', ...rules({ rule: "self != duration('0s')" }) }, name: { type: 'string' } }, rules({ rule: "self.timeout != ''" }, { rule: "self.name != 'x'" })));
  const out = messages(schema, { spec: { timeout: '1s', name: 'y' } });
  assert.equal(out.length, 2, JSON.stringify(out));
  assert.match(out[0]!, /^spec: the rule `self\.timeout != ''` cannot be checked here \("1s" is a CEL duration/);
  assert.match(out[1]!, /^spec\.timeout: the rule `self != duration\('0s'\)` cannot be checked here \("1s" is a CEL duration/);
  // A rule beside them that does not read it is evaluated: its verdict is the apiserver's.
  const named = messages(schema, { spec: { timeout: '1s', name: 'x' } });
  assert.equal(named.length, 3, JSON.stringify(named));
  assert.equal(named[1], "spec: failed rule: self.name != 'x'");
});

test('an object is read field by field as its rules read it: size, in, all, exists, equality and has() see the fields present after defaulting, a pruned null absent', () => {
  const props = {
    a: { type: 'string' },
    b: { type: 'integer', default: 2 },
    n: { type: 'string' },
    m: { type: 'object', additionalProperties: { type: 'integer' } },
    x: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  };
  const schema = spec(
    object(
      props,
      rules(
        { rule: 'size(self) == 4' },
        { rule: "'b' in self && self.b == 2 && !('n' in self) && !has(self.n)" },
        { rule: "self.all(k, k in ['a', 'b', 'm', 'x'])" },
        { rule: "self.m == {'k': 1, 'l': 2}" },
        { rule: 'self.m.exists(k, self.m[k] == 2) && size(self.m) == 2' },
        { rule: 'self.x.y.z == 3 && type(self.x.y.z) == int' },
        { rule: "self == {'a': 'v', 'b': 2, 'm': {'k': 1, 'l': 2}, 'x': {'y': {'z': 3}}}" },
      ),
    ),
  );
  const copy = { spec: { a: 'v', n: null, m: { k: 1, l: 2 }, x: { y: { z: 3 } } } };
  assert.deepEqual(messages(schema, copy), []);
  assert.deepEqual(messages(schema, { spec: { ...copy.spec, b: 5, n: 'here' } }), [
    'spec: failed rule: size(self) == 4',
    "spec: failed rule: 'b' in self && self.b == 2 && !('n' in self) && !has(self.n)",
    "spec: failed rule: self.all(k, k in ['a', 'b', 'm', 'x'])",
    "spec: failed rule: self == {'a': 'v', 'b': 2, 'm': {'k': 1, 'l': 2}, 'x': {'y': {'z': 3}}}",
  ]);
  assert.deepEqual(messages(schema, { spec: { ...copy.spec, m: { k: 1, l: 3 }, x: { y: { z: 3.5 } } } }), [
    "spec: failed rule: self.m == {'k': 1, 'l': 2}",
    'spec: failed rule: self.m.exists(k, self.m[k] == 2) && size(self.m) == 2',
    'spec: failed rule: self.x.y.z == 3 && type(self.x.y.z) == int',
    "spec: failed rule: self == {'a': 'v', 'b': 2, 'm': {'k': 1, 'l': 2}, 'x': {'y': {'z': 3}}}",
  ]);
});

test('fieldPath moves the violation to the field it names', () => {
  const schema = spec(object({ a: { type: 'integer' } }, rules({ rule: 'self.a > 1', message: 'a too small', fieldPath: '.a' })));
  assert.deepEqual(celRulesCheck(schema)({ spec: { a: 1 } }), [{ path: ['spec', 'a'], message: 'spec.a: a too small' }]);
});

test('copies of one base share the verdicts of the rules above their changes that cannot tell them apart, and only those: the verdicts are the ones of a check without a base', (t) => {
  const schema = spec(
    object(
      {
        a: object({ x: { type: 'string' }, y: { type: 'integer' } }, rules({ rule: 'has(self.x) || has(self.y)', message: 'x or y' })),
        b: { type: 'string' },
        c: { type: 'object', additionalProperties: { type: 'string' } },
        'tls-mode': { type: 'string', default: 'none' },
      },
      rules(
        { rule: 'has(self.a) && has(self.a.x)', message: 'a.x is set' },
        { rule: '!has(self.c) || size(self.c) < 3', message: 'c has fewer than 3 keys' },
        { rule: "self.b != 'bad'", message: 'b is not bad' },
        { rule: "!has(self.a.x) || self.a.x != 'forbidden'", message: 'a.x is not forbidden' },
        { rule: 'has(self.b)', messageExpression: "'no b, and a.x is ' + (has(self.a.x) ? self.a.x : '(none)')" },
        { rule: "self.tls__dash__mode != 'strict' || has(self.c)", message: 'strict wants c' },
        { rule: "self.all(k, k != 'zz')", message: 'no zz' },
      ),
    ),
  );
  const changed = [
    ['spec', 'a', 'x'],
    ['spec', 'c', 'k'],
    ['spec', 'tls-mode'],
  ];
  const value = fc.oneof(fc.constant(undefined), fc.constantFrom('ok', 'forbidden', ''), fc.constant(null));
  const base = fc.record({ a: fc.option(fc.record({ y: fc.option(fc.integer(), { nil: undefined }) }, { requiredKeys: [] }), { nil: undefined }), b: fc.option(fc.constantFrom('ok', 'bad'), { nil: undefined }), c: fc.option(fc.dictionary(fc.constantFrom('k', 'l', 'm'), fc.string()), { nil: undefined }), zz: fc.option(fc.constant('here'), { nil: undefined }) }, { requiredKeys: [] });
  const render = fc.record({ x: value, k: value, mode: fc.oneof(fc.constant(undefined), fc.constantFrom('strict', 'none')) });
  checkProperty(t, 200, [base, fc.array(render, { minLength: 1, maxLength: 6 })], (baseSpec, renders) => {
    const check = celRulesCheck(schema);
    const baseCopy = { spec: baseSpec };
    for (const r of renders) {
      const a = { ...(baseSpec.a ?? {}), ...(r.x === undefined ? {} : { x: r.x }) };
      const c = { ...(baseSpec.c ?? {}), ...(r.k === undefined ? {} : { k: r.k }) };
      const copy = { spec: { ...baseSpec, a, c, ...(r.mode === undefined ? {} : { 'tls-mode': r.mode }) } };
      assert.deepEqual(check(copy, changed, baseCopy), check(copy, changed), JSON.stringify({ baseSpec, r }));
    }
  });
});

test('schemaCheck reports ajv’s violations and the CEL rules’ together', () => {
  const schema = spec(object({ port: { type: 'integer', minimum: 1, ...rules({ rule: 'self in [80, 443] || (self >= 1024 && self <= 49151)', message: 'Only ports 80, 443, 1024-49151 are allowed' }) } }));
  assert.deepEqual(
    schemaCheck(schema)({ spec: { port: 0 } }).map((v) => v.message),
    ['spec.port: must be >= 1', 'spec.port: Only ports 80, 443, 1024-49151 are allowed'],
  );
  assert.deepEqual(schemaCheck(schema)({ spec: { port: 8080 } }), []);
  assert.equal(schemaCheck(schema), schemaCheck(schema), 'memoised per schema object');
});
