// The bundle shape (docs/design/fleet.md#the-shape) against OCM's real work agent (v1.2.1) on spoke-1, before the
// hub writes bundles: the works are packed by the core (core/works/bundle.ts) and written by the test, and what
// the agent makes of them is read back through unpackBundle, as the hub will read it.
// - One wildcard config feeds back every copy; each copy's status is its own.
// - One copy edited: that copy alone is pending until the agent applied it, then applied with its new content.
// - One copy dropped: the agent deletes that copy and no other (the spoke's audit log).
// - Orphan per copy: the bundle deleted, the copy whose policy asks Orphan stays, the others go.
// - Migration: a copy of a one-per-placement work written into a bundle, then that work deleted once the bundle
//   has the copy Applied: the copy stays, with no spoke DELETE, owned by the bundle's AppliedManifestWork alone.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { packBundles, unpackBundle, type BundleWork } from '../../src/core/works/bundle.ts';
import { readClusterFeedback } from '../../src/core/works/feedback.ts';
import { controllerLabelValue, type ManifestWork } from '../../src/core/works/manifestwork.ts';
import { workState } from '../../src/core/works/workstate.ts';
import { isNotFound, KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, collectionPath, objectPath } from '../../src/kube/resource.ts';
import { AuditCursor, describeWrite } from '../../testkit/audit.ts';
import { eventually } from '../../testkit/eventually.ts';
import { AUTH_POLICIES, authPolicy, createNamespace, get, removeNamespace } from '../../testkit/fixtures.ts';
import { uniqueName } from '../../testkit/hub.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';
import { worksFor } from '../../testkit/world.ts';

const SPOKE = 'spoke-1';
const CONTROLLER_NAME = 'test.policy-sync.io/bundle-agent';
const CONTROLLER = controllerLabelValue(CONTROLLER_NAME);
const ns = uniqueName('bundles');
const WITHIN_MS = 60_000;

let sandbox: Sandbox;
let hub: KubeHttp;
let spoke: KubeHttp;

before(async () => {
  sandbox = await testSandbox();
  hub = new KubeHttp(sandbox.kubeConfig('hub'));
  spoke = new KubeHttp(sandbox.kubeConfig(SPOKE));
  await createNamespace(spoke, ns);
});

after(async () => {
  const works = await hub.request<{ items: KubeObject[] }>('GET', collectionPath(RESOURCES.manifestWorks, SPOKE), { query: { labelSelector: `policysync.kuadrant.io/controller=${CONTROLLER}` } });
  await Promise.all(works.items.map((w) => hub.request('DELETE', objectPath(RESOURCES.manifestWorks, SPOKE, w.metadata.name)).catch(() => undefined)));
  await removeNamespace(spoke, ns);
  hub.destroy();
  spoke.destroy();
});

/** The copy works of policies `names` of `namespace` on spoke-1, as the core builds them; `extra` adds to a policy's spec. */
function copies(names: readonly string[], extra: (name: string) => Record<string, unknown> = () => ({}), namespace = ns): ManifestWork[] {
  const policies = names.map((name) => ({ ...authPolicy(namespace, name, 'gw', extra(name)), metadata: { name, namespace, uid: `uid-${name}`, generation: 1 } }));
  return worksFor(policies, namespace, [SPOKE], CONTROLLER_NAME);
}

async function write(bundle: BundleWork, observed?: KubeObject): Promise<KubeObject> {
  if (!observed) return hub.request<KubeObject>('POST', collectionPath(RESOURCES.manifestWorks, SPOKE), { body: bundle });
  return hub.request<KubeObject>('PUT', objectPath(RESOURCES.manifestWorks, SPOKE, bundle.metadata.name), { body: { ...bundle, metadata: { ...bundle.metadata, resourceVersion: observed.metadata.resourceVersion } } });
}

async function readBundle(name: string): Promise<KubeObject> {
  return hub.request<KubeObject>('GET', objectPath(RESOURCES.manifestWorks, SPOKE, name));
}

/** The bundle once every copy it carries is applied by the agent, with its feedback. */
async function untilApplied(name: string, what: string): Promise<KubeObject> {
  return eventually(
    async () => {
      const bundle = await readBundle(name);
      const carried = unpackBundle(bundle) ?? [];
      return carried.length > 0 && carried.every((c) => workState(c) === 'applied' && readClusterFeedback(c).generation !== undefined) && bundle;
    },
    { what, timeoutMs: WITHIN_MS, context: () => workAgentLogs(sandbox) },
  );
}

const spokeCopy = (name: string) => get(spoke, AUTH_POLICIES, ns, name);
const deletesOfCopies = (cursor: AuditCursor) => cursor.since().filter((w) => w.verb === 'delete' && w.resource === 'authpolicies' && w.namespace === ns);

test('the agent applies a bundle, feeds back every copy through one wildcard config; an edit is pending for that copy alone; a drop deletes that copy alone', async () => {
  const names = ['a1', 'a2', 'a3', 'a4'];
  const first = packBundles({ cluster: SPOKE, namespace: ns, observed: [], put: copies(names), drop: new Set(), capBytes: 64 * 1024, controller: CONTROLLER });
  assert.equal(first.writes.length, 1);
  const [{ bundle }] = first.writes as [{ bundle: BundleWork }];
  assert.deepEqual(bundle.spec.manifestConfigs.map((c) => c.resourceIdentifier.name), ['*']);
  await write(bundle);
  let applied = await untilApplied(bundle.metadata.name, 'the agent applies the bundle and feeds back each copy');
  for (const copy of unpackBundle(applied)!) {
    const onSpoke = await spokeCopy(copy.spec.workload.manifests[0]!.metadata.name);
    assert.ok(onSpoke, `${copy.metadata.name} on the spoke`);
    assert.equal(readClusterFeedback(copy).generation, onSpoke.metadata.generation);
  }

  // a2 edited.
  const rego = 'allow = input.context.request.http.method == "GET"';
  const edited = copies(names, (n) => (n === 'a2' ? { rules: { authorization: { deny: { opa: { rego } } } } } : {}));
  const edit = packBundles({ cluster: SPOKE, namespace: ns, observed: [applied], put: edited, drop: new Set(), capBytes: 64 * 1024, controller: CONTROLLER });
  assert.equal(edit.writes.length, 1);
  const written = await write(edit.writes[0]!.bundle, applied);
  const right = unpackBundle(written)!;
  assert.equal(workState(right.find((c) => c.metadata.name === edited[1]!.metadata.name)!), 'pending', 'the edited copy is pending until the agent applied it');
  for (const c of right.filter((c) => c.metadata.name !== edited[1]!.metadata.name)) assert.equal(workState(c), 'applied', `${c.metadata.name}: a neighbour's edit leaves it applied`);
  applied = await untilApplied(bundle.metadata.name, 'the edit applied');
  assert.equal(((await spokeCopy('a2'))!.spec as { rules: { authorization: { deny: { opa: { rego: string } } } } }).rules.authorization.deny.opa.rego, rego, 'a2 runs its edit');

  // a3 dropped.
  const cursor = AuditCursor.at(sandbox, SPOKE);
  const drop = packBundles({ cluster: SPOKE, namespace: ns, observed: [applied], put: [], drop: new Set([edited[2]!.metadata.name]), capBytes: 64 * 1024, controller: CONTROLLER });
  await write(drop.writes[0]!.bundle, applied);
  await eventually(async () => (await spokeCopy('a3')) === undefined, { what: 'a3 deleted on the spoke', timeoutMs: WITHIN_MS, context: () => workAgentLogs(sandbox) });
  await untilApplied(bundle.metadata.name, 'the bundle without a3 applied');
  assert.deepEqual(deletesOfCopies(cursor).map((w) => `${w.name} ${w.code}`), ['a3 200'], deletesOfCopies(cursor).map(describeWrite).join('\n'));
  for (const n of ['a1', 'a2', 'a4']) assert.ok(await spokeCopy(n), `${n} stays`);
});

test('Orphan is per copy: the bundle deleted, the copy whose policy asks Orphan stays and the others go', async () => {
  const namespaceOf = `${ns}-orphan`;
  await createNamespace(spoke, namespaceOf);
  const works = copies(['o1', 'o2', 'o3'], () => ({}), namespaceOf).map((w) => (w.spec.workload.manifests[0]!.metadata.name === 'o2' ? { ...w, spec: { ...w.spec, deleteOption: { propagationPolicy: 'Orphan' as const } } } : w));
  const [{ bundle }] = packBundles({ cluster: SPOKE, namespace: namespaceOf, observed: [], put: works, drop: new Set(), capBytes: 64 * 1024, controller: CONTROLLER }).writes as [{ bundle: BundleWork }];
  assert.equal(bundle.spec.deleteOption.propagationPolicy, 'SelectivelyOrphan');
  await write(bundle);
  await untilApplied(bundle.metadata.name, 'the bundle applied');
  await hub.request('DELETE', objectPath(RESOURCES.manifestWorks, SPOKE, bundle.metadata.name));
  await eventually(async () => (await get(spoke, AUTH_POLICIES, namespaceOf, 'o1')) === undefined && (await get(spoke, AUTH_POLICIES, namespaceOf, 'o3')) === undefined, {
    what: 'o1 and o3 deleted with their bundle',
    timeoutMs: WITHIN_MS,
    context: () => workAgentLogs(sandbox),
  });
  await eventually(async () => readBundle(bundle.metadata.name).then(() => false, (err: unknown) => isNotFound(err)), { what: 'the bundle gone', timeoutMs: WITHIN_MS });
  assert.ok(await get(spoke, AUTH_POLICIES, namespaceOf, 'o2'), 'o2 (Orphan) stays');
  await removeNamespace(spoke, namespaceOf);
});

test('migration: a copy moves from its own work into a bundle with no spoke DELETE, owned by the bundle alone at the end', async () => {
  const [own] = copies(['m1']) as [ManifestWork];
  await hub.request('POST', collectionPath(RESOURCES.manifestWorks, SPOKE), { body: own });
  await eventually(async () => workState(await readBundle(own.metadata.name)) === 'applied', { what: 'the work of its own applied', timeoutMs: WITHIN_MS, context: () => workAgentLogs(sandbox) });
  const cursor = AuditCursor.at(sandbox, SPOKE);

  // A bundle of its own (the first test's bundle of this namespace still stands): same packing, another name.
  const [{ bundle }] = packBundles({ cluster: SPOKE, namespace: ns, observed: [], put: [own], drop: new Set(), capBytes: 64 * 1024, controller: CONTROLLER }).writes as [{ bundle: BundleWork }];
  const name = `${bundle.metadata.name}-migration`;
  await write({ ...bundle, metadata: { ...bundle.metadata, name } });
  await untilApplied(name, 'the bundle has the copy applied');
  const owners = async () => (((await spokeCopy('m1'))?.metadata.ownerReferences ?? []) as { kind?: string }[]).filter((o) => o.kind === 'AppliedManifestWork').length;
  assert.equal(await owners(), 2, 'owned by both AppliedManifestWorks');

  await hub.request('DELETE', objectPath(RESOURCES.manifestWorks, SPOKE, own.metadata.name));
  await eventually(async () => readBundle(own.metadata.name).then(() => false, (err: unknown) => isNotFound(err)), { what: 'the old work gone (the agent took its finalizer off)', timeoutMs: WITHIN_MS, context: () => workAgentLogs(sandbox) });
  await eventually(async () => (await owners()) === 1, { what: 'the old AppliedManifestWork no longer owns the copy', timeoutMs: WITHIN_MS });
  assert.ok(await spokeCopy('m1'), 'the copy stays');
  assert.deepEqual(deletesOfCopies(cursor).map(describeWrite), [], 'no spoke DELETE of a copy during the migration');
});
