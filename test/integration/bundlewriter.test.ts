// The bundle writer (src/hub/bundlewriter.ts) on the real hub apiserver, with a real works informer as its cache
// and OCM's real work agent on spoke-1 applying what it writes:
// - two owners' copies for one cluster and namespace, handed over together, are written in one create, and the
//   agent applies both;
// - a drop of a copy that changed since its owner saw it is not sent (the owner is told), and the copy runs on;
//   the same drop with what the bundle holds now removes that copy and no other;
// - a cache behind the apiserver makes the update conflict: the writer packs again from what it knows next and
//   writes, and nothing the other writer put there is lost.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { workKey } from '../../src/core/keys.ts';
import { BUNDLE_LABEL, isBundle, namespaceHash, unpackBundle } from '../../src/core/works/bundle.ts';
import { CONTROLLER_LABEL } from '../../src/core/metadatakeys.ts';
import { controllerLabelValue, readSpecHash, type ManifestWork } from '../../src/core/works/manifestwork.ts';
import { workState } from '../../src/core/works/workstate.ts';
import { BundleWriter, type BundleWriterDeps } from '../../src/hub/bundlewriter.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import { Informer } from '../../src/kube/informer.ts';
import { RESOURCES, objectPath } from '../../src/kube/resource.ts';
import { AuditCursor, describeWrite } from '../../testkit/audit.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, authPolicy, createNamespace, get, removeNamespace } from '../../testkit/fixtures.ts';
import { uniqueName } from '../../testkit/hub.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';
import { worksFor } from '../../testkit/world.ts';

const SPOKE = 'spoke-1';
const CONTROLLER_NAME = 'test.policy-sync.io/bundle-writer';
const CONTROLLER = controllerLabelValue(CONTROLLER_NAME);
const WITHIN_MS = 60_000;

let sandbox: Sandbox;
let hub: KubeHttp;
let spoke: KubeHttp;
let works: Informer;
const namespaces: string[] = [];

before(async () => {
  sandbox = await testSandbox();
  hub = new KubeHttp(sandbox.kubeConfig('hub'));
  spoke = new KubeHttp(sandbox.kubeConfig(SPOKE));
  works = new Informer(hub, RESOURCES.manifestWorks, { labelSelector: `${CONTROLLER_LABEL}=${CONTROLLER}` });
  works.start();
  await works.waitForSync();
});

after(async () => {
  for (const w of works.store.list()) await hub.request('DELETE', objectPath(RESOURCES.manifestWorks, w.metadata.namespace, w.metadata.name)).catch(() => undefined);
  await works.stop();
  for (const ns of namespaces) await removeNamespace(spoke, ns);
  hub.destroy();
  spoke.destroy();
});

async function downstream(): Promise<string> {
  const ns = uniqueName('bw');
  namespaces.push(ns);
  await createNamespace(spoke, ns);
  return ns;
}

function copies(ns: string, names: readonly string[]): ManifestWork[] {
  return worksFor(names.map((name) => ({ ...authPolicy(ns, name, 'gw'), metadata: { name, namespace: ns, uid: `uid-${name}`, generation: 1 } })), ns, [SPOKE], CONTROLLER_NAME);
}

const cached = (cluster: string, namespace: string) => works.store.list().filter((w) => w.metadata.namespace === cluster && isBundle(w) && w.metadata.labels?.[BUNDLE_LABEL] === namespaceHash(namespace));

function writer(extra: Partial<BundleWriterDeps> = {}): BundleWriter {
  return new BundleWriter({ http: hub, logger: pino({ level: 'silent' }), controller: CONTROLLER, capBytes: 64 * 1024, bundles: cached, ...extra });
}

/** The copies carried for `ns` on spoke-1 once every one is applied by the agent, by copy name. */
async function untilApplied(ns: string, names: readonly string[]): Promise<Map<string, { copy: ManifestWork; bundle: KubeObject }>> {
  return eventually(
    () => {
      const carried = new Map(cached(SPOKE, ns).flatMap((b) => (unpackBundle(b) ?? []).map((c) => [c.spec.workload.manifests[0]!.metadata.name, { copy: c, bundle: b }] as const)));
      return Promise.resolve([...carried.keys()].sort().join() === [...names].sort().join() && [...carried.values()].every(({ copy }) => workState(copy) === 'applied') && carried);
    },
    { what: `copies ${names.join(', ')} applied in ${ns}`, timeoutMs: WITHIN_MS, context: () => workAgentLogs(sandbox) },
  );
}

/**
 * The bundles of `ns` as the agent left them: applied at their generation, and no write of anyone's for a second
 * (the cache showing the same resourceVersions on two reads a second apart).
 */
async function untilSettled(ns: string): Promise<void> {
  let last = '';
  await eventually(
    async () => {
      const bundles = cached(SPOKE, ns);
      const applied = bundles.every((b) => (b.status as { conditions?: { type: string; status: string; observedGeneration?: number }[] } | undefined)?.conditions?.some((c) => c.type === 'Applied' && c.status === 'True' && c.observedGeneration === b.metadata.generation));
      const versions = bundles.map((b) => b.metadata.resourceVersion).join();
      const still = applied && versions === last;
      last = versions;
      if (!still) await new Promise((r) => setTimeout(r, 1_000));
      return still;
    },
    { what: `the bundles of ${ns} applied and left alone`, timeoutMs: WITHIN_MS, context: () => workAgentLogs(sandbox) },
  );
}

test("two owners' copies handed over together are written in one create, and the agent applies both", async () => {
  const ns = await downstream();
  const [a, b] = copies(ns, ['a', 'b']) as [ManifestWork, ManifestWork];
  const audit = AuditCursor.at(sandbox, 'hub');
  const w = writer();
  await Promise.all([w.submit('owner-a', [a], []), w.submit('owner-b', [b], [])]);
  await untilApplied(ns, ['a', 'b']);
  const writes = audit.since().filter((x) => x.resource === 'manifestworks' && x.namespace === SPOKE && (x.verb === 'create' || x.verb === 'update') && x.name?.startsWith('ps-'));
  assert.deepEqual(writes.map((x) => x.verb), ['create'], writes.map(describeWrite).join('\n'));
  for (const n of ['a', 'b']) assert.ok(await get(spoke, AUTH_POLICIES, ns, n), `${n} on the spoke`);
  w.stop();
});

test('a drop of a copy that changed since its owner saw it is not sent; with what the bundle holds now, that copy alone goes', async () => {
  const ns = await downstream();
  const w0 = writer();
  await w0.submit('owner', copies(ns, ['x', 'y']), []);
  const carried = await untilApplied(ns, ['x', 'y']);
  const x = carried.get('x')!;
  const stale: string[] = [];
  const w = writer({ onStale: (owner) => stale.push(owner) });
  const notSent = await w.submit('owner-x', [], [{ key: workKey(SPOKE, x.copy.metadata.name), namespace: ns, specHash: 'not-what-it-is', bundleUid: x.bundle.metadata.uid }]);
  assert.deepEqual(stale, ['owner-x']);
  assert.deepEqual(notSent, [workKey(SPOKE, x.copy.metadata.name)], 'the stale drop is named to its submitter');
  assert.ok(await get(spoke, AUTH_POLICIES, ns, 'x'), 'x runs on');

  const audit = AuditCursor.at(sandbox, SPOKE);
  assert.deepEqual(await w.submit('owner-x', [], [{ key: workKey(SPOKE, x.copy.metadata.name), namespace: ns, specHash: readSpecHash(x.copy), bundleUid: x.bundle.metadata.uid }]), []);
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, 'x')) === undefined, { what: 'x deleted on the spoke', timeoutMs: WITHIN_MS, context: () => workAgentLogs(sandbox) });
  await untilApplied(ns, ['y']);
  const deletes = audit.since().filter((d) => d.verb === 'delete' && d.resource === 'authpolicies' && d.namespace === ns);
  assert.deepEqual(deletes.map((d) => d.name), ['x'], deletes.map(describeWrite).join('\n'));
  w.stop();
  w0.stop();
});

test('a cache behind the apiserver: the update conflicts, the writer packs again from what it knows next, and keeps what the other put', async () => {
  const ns = await downstream();
  const first = writer();
  await first.submit('owner', copies(ns, ['p']), []);
  await untilApplied(ns, ['p']);
  const before = cached(SPOKE, ns);
  // Another writer (a replica, say) adds q; this writer's cache still shows the bundle without q at first.
  const other = writer();
  await other.submit('owner-q', copies(ns, ['p', 'q']).slice(1), []);
  let reads = 0;
  const lagging = writer({ bundles: (cluster, namespace) => (reads++ === 0 ? before : cached(cluster, namespace)) });
  await eventually(() => Promise.resolve(cached(SPOKE, ns).some((b) => (unpackBundle(b) ?? []).length === 2)), { what: 'the cache shows q', timeoutMs: WITHIN_MS });
  const audit = AuditCursor.at(sandbox, 'hub');
  await lagging.submit('owner-r', copies(ns, ['p', 'q', 'r']).slice(2), []);
  await untilApplied(ns, ['p', 'q', 'r']);
  const updates = audit.since().filter((x) => x.resource === 'manifestworks' && x.namespace === SPOKE && x.verb === 'update' && x.name?.startsWith('ps-'));
  // Conflicts, then one update that lands. More than one conflict is the work agent's: its status write of the bundle
  // (q applied) moves the resourceVersion past the cache's again before the writer's next try.
  const codes = updates.map((x) => x.code);
  assert.ok(codes.length >= 2 && codes.at(-1) === 200 && codes.slice(0, -1).every((c) => c === 409), updates.map(describeWrite).join('\n'));
  for (const wr of [first, other, lagging]) wr.stop();
});

test('what the writer remembers of its own writes goes once the cache shows them, and the next write packs over the cache', async () => {
  const ns = await downstream();
  const w = writer();
  let wired = true;
  works.onChange((c) => {
    if (wired && isBundle(c.object)) w.cached(c.object, c.type === 'DELETED');
  });
  try {
    await w.submit('owner', copies(ns, ['m', 'n']), []);
    const edited = worksFor([{ ...authPolicy(ns, 'm', 'gw', { edited: true }), metadata: { name: 'm', namespace: ns, uid: 'uid-m', generation: 2 } }], ns, [SPOKE], CONTROLLER_NAME);
    await w.submit('owner', edited, []);
    await eventually(() => Promise.resolve(w.remembered === 0), { what: 'the writer to forget the writes the cache shows', timeoutMs: WITHIN_MS });
    // The agent's status writes of the edit change the bundle's resourceVersion too: the next write waits for them
    // (else it may meet the agent's write, not a remembered one of its own, in a conflict).
    await untilSettled(ns);
    const audit = AuditCursor.at(sandbox, 'hub');
    const again = worksFor([{ ...authPolicy(ns, 'n', 'gw', { edited: true }), metadata: { name: 'n', namespace: ns, uid: 'uid-n', generation: 2 } }], ns, [SPOKE], CONTROLLER_NAME);
    await w.submit('owner', again, []);
    const writes = audit.since().filter((x) => x.resource === 'manifestworks' && x.namespace === SPOKE && x.verb === 'update' && x.name?.startsWith('ps-'));
    assert.deepEqual(writes.map((x) => x.code), [200], writes.map(describeWrite).join('\n'));
    const carried = cached(SPOKE, ns).flatMap((b) => unpackBundle(b) ?? []);
    await eventually(() => Promise.resolve(cached(SPOKE, ns).flatMap((b) => unpackBundle(b) ?? []).map((c) => readSpecHash(c)).sort().join() === [...edited, ...again].map((c) => readSpecHash(c)).sort().join()), { what: 'both edits in the bundle', timeoutMs: WITHIN_MS, context: () => carried.map((c) => c.metadata.name).join() });
  } finally {
    wired = false;
    w.stop();
  }
});

test('stopped before its linger ends, the writer writes nothing and tells the owners', async () => {
  const ns = await downstream();
  const w = writer({ lingerMs: 1_000 });
  const pending = w.submit('owner', copies(ns, ['s']), []);
  w.stop();
  await assert.rejects(pending, /bundle writer stopped/);
  await new Promise((r) => setTimeout(r, 1_500));
  assert.deepEqual(cached(SPOKE, ns), []);
});
