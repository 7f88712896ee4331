// The digest the hub puts on each spoke copy (docs/design/tenancy.md#what-runs-on-a-spoke): what the spoke agent
// reads the copy it runs against, so equal content must give an equal digest however it was built, and a digest that
// does not read must say "unknown" rather than anything the agent would act on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson } from '../k8s/canonical.ts';
import type { KubeObject } from '../k8s/objects.ts';
import type { DefaultingSchema } from '../k8s/schemadefaults.ts';
import { DIGEST_ANNOTATION, POLICY_SYNCED_ANNOTATION } from '../metadatakeys.ts';
import { copyDigest, partHash, readCopyDigest, withCopyDigest } from './copydigest.ts';

function copy(spec: unknown, extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'AuthPolicy',
    metadata: {
      namespace: 'shop',
      name: 'p',
      labels: extra.labels ?? { app: 'shop' },
      annotations: extra.annotations ?? { [POLICY_SYNCED_ANNOTATION]: 'hub/p' },
    },
    spec,
  } as KubeObject;
}

const SPEC = {
  targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'shop' },
  rules: { authentication: { apikey: { apiKey: { selector: { matchLabels: { app: 'shop' } } } } } },
};

/** The same object with its keys in reverse order, at every level. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).reverse().map(([k, v]) => [k, reversed(v)]));
}

test('copyDigest: one 16-hex hash per top-level spec field, and one each for the labels and the annotations', () => {
  const digest = copyDigest(copy(SPEC));
  assert.deepEqual(Object.keys(digest.spec).sort(), ['rules', 'targetRef']);
  for (const hash of [...Object.values(digest.spec), digest.labels, digest.annotations]) assert.match(hash, /^[0-9a-f]{16}$/);
  // Per field: each hash is that field's alone, so the agent can name which field differs.
  assert.equal(digest.spec.targetRef, partHash(SPEC.targetRef));
  assert.equal(digest.spec.rules, partHash(SPEC.rules));
  assert.equal(digest.labels, partHash({ app: 'shop' }));
});

test('copyDigest: a change to one spec field changes that field\'s hash only', () => {
  const before = copyDigest(copy(SPEC));
  const after = copyDigest(copy({ ...SPEC, targetRef: { ...SPEC.targetRef, name: 'other' } }));
  assert.notEqual(after.spec.targetRef, before.spec.targetRef);
  assert.equal(after.spec.rules, before.spec.rules);
  assert.equal(after.labels, before.labels);
  assert.equal(after.annotations, before.annotations);
});

test('copyDigest: equal content gives an equal digest whatever the key order (canonical JSON)', () => {
  const a = copy(SPEC, { labels: { a: '1', b: '2' }, annotations: { x: '1', [POLICY_SYNCED_ANNOTATION]: 'hub/p' } });
  const b = copy(reversed(SPEC), { labels: { b: '2', a: '1' }, annotations: { [POLICY_SYNCED_ANNOTATION]: 'hub/p', x: '1' } });
  assert.deepEqual(copyDigest(b), copyDigest(a));
  assert.equal(withCopyDigest(b).metadata.annotations?.[DIGEST_ANNOTATION], withCopyDigest(a).metadata.annotations?.[DIGEST_ANNOTATION]);
});

test('copyDigest (property): any spec and its key-reversed twin digest alike', () => {
  const json = fc.jsonValue({ maxDepth: 3 });
  fc.assert(
    fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), json, { maxKeys: 6 }), (spec) => {
      assert.deepEqual(copyDigest(copy(reversed(spec))), copyDigest(copy(spec)));
    }),
  );
});

test('copyDigest: a spec that is not an object has no fields; no labels and empty labels hash alike', () => {
  assert.deepEqual(copyDigest(copy(undefined)).spec, {});
  assert.deepEqual(copyDigest(copy(['a'])).spec, {});
  assert.deepEqual(copyDigest(copy('text')).spec, {});
  const bare: KubeObject = { apiVersion: 'v1', kind: 'AuthPolicy', metadata: { name: 'p' } };
  // The spoke stores absent labels as absent: hashing them as {} keeps a copy without labels "as sent".
  assert.equal(copyDigest(bare).labels, partHash({}));
  assert.equal(copyDigest(bare).annotations, partHash({}));
});

test('copyDigest: the digest annotation itself is never hashed', () => {
  const plain = copy(SPEC);
  const carrying = copy(SPEC, { annotations: { [POLICY_SYNCED_ANNOTATION]: 'hub/p', [DIGEST_ANNOTATION]: 'anything at all' } });
  assert.deepEqual(copyDigest(carrying), copyDigest(plain));
});

test('withCopyDigest: puts the canonical JSON of copyDigest on the copy, without changing the rest or the input', () => {
  const input = copy(SPEC);
  const before = structuredClone(input);
  const stamped = withCopyDigest(input);
  assert.deepEqual(input, before);
  assert.equal(stamped.metadata.annotations?.[DIGEST_ANNOTATION], canonicalJson(copyDigest(input)));
  const { [DIGEST_ANNOTATION]: _digest, ...others } = stamped.metadata.annotations ?? {};
  assert.deepEqual(others, input.metadata.annotations);
  assert.deepEqual((stamped as { spec?: unknown }).spec, SPEC);
  assert.deepEqual(stamped.metadata.labels, input.metadata.labels);
});

test('withCopyDigest is idempotent: applied twice, the same object and the same text (no write loop)', () => {
  const once = withCopyDigest(copy(SPEC));
  const twice = withCopyDigest(once);
  // The very object: a copy already stamped is handed back as it is.
  assert.equal(twice, once);
  assert.equal(canonicalJson(twice), canonicalJson(once));
});

test('withCopyDigest: a stale digest is replaced by the one of the content', () => {
  const stale = copy(SPEC, { annotations: { [POLICY_SYNCED_ANNOTATION]: 'hub/p', [DIGEST_ANNOTATION]: '{"old":true}' } });
  assert.equal(withCopyDigest(stale).metadata.annotations?.[DIGEST_ANNOTATION], withCopyDigest(copy(SPEC)).metadata.annotations?.[DIGEST_ANNOTATION]);
});

/** A small schema: `rules` defaults `priority` to 0 and each list item's `enabled` to true; `mode` defaults to 'Strict'. */
const SCHEMA: DefaultingSchema = {
  properties: {
    mode: { default: 'Strict' },
    rules: {
      properties: {
        priority: { default: 0 },
        items: { items: { properties: { enabled: { default: true } } } },
      },
    },
  },
};

test('copyDigest with a spec schema: a copy without a defaulted field digests as the one with the default written out', () => {
  // The spoke apiserver stores the defaults: what runs carries them, so the hub hashes as if it sent them.
  const sparse = copy({ rules: { items: [{ name: 'a' }] } });
  const written = copy({ mode: 'Strict', rules: { priority: 0, items: [{ name: 'a', enabled: true }] } });
  assert.deepEqual(copyDigest(sparse, SCHEMA), copyDigest(written, SCHEMA));
  assert.deepEqual(copyDigest(sparse, SCHEMA), copyDigest(written));
  // A defaulted top-level field is a field of the digest too.
  assert.deepEqual(Object.keys(copyDigest(sparse, SCHEMA).spec).sort(), ['mode', 'rules']);
  // Without the schema the two differ: the defaults are what makes them equal.
  assert.notDeepEqual(copyDigest(sparse), copyDigest(written));
});

test('copyDigest with a spec schema: a value set otherwise than the default is kept, and the copy itself is not changed', () => {
  const lenient = copy({ mode: 'Lenient', rules: {} });
  const before = structuredClone(lenient);
  assert.equal(copyDigest(lenient, SCHEMA).spec.mode, partHash('Lenient'));
  assert.deepEqual(lenient, before);
  // withCopyDigest hashes with the defaults but sends the copy as rendered: the apiserver writes them.
  assert.deepEqual((withCopyDigest(lenient, SCHEMA) as { spec?: unknown }).spec, { mode: 'Lenient', rules: {} });
});

test('readCopyDigest: reads back what withCopyDigest wrote', () => {
  const stamped = withCopyDigest(copy(SPEC));
  assert.deepEqual(readCopyDigest(stamped), copyDigest(stamped));
});

test('readCopyDigest: no digest (an older hub\'s copy) is undefined: unknown, not "as sent"', () => {
  assert.equal(readCopyDigest(copy(SPEC)), undefined);
  assert.equal(readCopyDigest({ apiVersion: 'v1', kind: 'AuthPolicy', metadata: { name: 'p' } }), undefined);
});

const H = '0123456789abcdef';
// [case, annotation text]
const MALFORMED: [string, string][] = [
  ['not JSON', '{spec:'],
  ['JSON null', 'null'],
  ['a JSON string', '"x"'],
  ['a JSON number', '42'],
  ['labels missing', JSON.stringify({ spec: {}, annotations: H })],
  ['annotations missing', JSON.stringify({ spec: {}, labels: H })],
  ['a hash too short', JSON.stringify({ spec: {}, labels: H.slice(1), annotations: H })],
  ['a hash too long', JSON.stringify({ spec: {}, labels: H, annotations: `${H}0` })],
  ['a hash not hex', JSON.stringify({ spec: {}, labels: 'ghijklmnopqrstuv', annotations: H })],
  ['a hash in upper case', JSON.stringify({ spec: {}, labels: H.toUpperCase(), annotations: H })],
  ['a hash that is a number', JSON.stringify({ spec: {}, labels: 1234567890123456, annotations: H })],
  ['a spec field hash not hex', JSON.stringify({ spec: { rules: 'zz' }, labels: H, annotations: H })],
  ['a spec field hash that is an object', JSON.stringify({ spec: { rules: { h: H } }, labels: H, annotations: H })],
  ['spec missing', JSON.stringify({ labels: H, annotations: H })],
  ['spec null', JSON.stringify({ spec: null, labels: H, annotations: H })],
  ['spec an array', JSON.stringify({ spec: [H], labels: H, annotations: H })],
  ['spec a string', JSON.stringify({ spec: H, labels: H, annotations: H })],
  ['text past 16 KiB', JSON.stringify({ spec: { pad: H }, labels: H, annotations: H, pad: 'x'.repeat(16_384) })],
];

for (const [name, text] of MALFORMED) {
  test(`readCopyDigest refuses ${name}: undefined`, () => {
    assert.equal(readCopyDigest(copy(SPEC, { annotations: { [DIGEST_ANNOTATION]: text } })), undefined);
  });
}

test('readCopyDigest: a well-formed digest with extra members reads as its three parts', () => {
  // A newer hub may add to the digest: what this agent knows of it still reads.
  const text = JSON.stringify({ spec: { rules: H }, labels: H, annotations: H, status: H });
  assert.deepEqual(readCopyDigest(copy(SPEC, { annotations: { [DIGEST_ANNOTATION]: text } })), { spec: { rules: H }, labels: H, annotations: H });
});
