// Zero writes on restart (docs/design/works.md#writes, docs/benchmarks.md#targets): a controller started again on an unchanged world of 240
// works (2 kinds × 30 policies × 4 clusters) converges without a single write — counted not by the
// controller about itself but by the hub apiserver, in its `apiserver_request_total` counters.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { readSpecHash } from '../../src/core/works/manifestwork.ts';
import { POLICIES_SYNCED_ANNOTATION } from '../../src/core/metadatakeys.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { policiesSyncedAnnotation } from '../../src/core/status/policiessynced.ts';
import { policyKey } from '../../src/core/keys.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { AuditCursor, type AuditedWrite } from '../../testkit/audit.ts';
import { copyWorks } from '../../src/core/works/bundle.ts';
import { eventually } from '../../testkit/eventually.ts';
import {
  AUTH_POLICIES,
  RATE_LIMIT_POLICIES,
  apply,
  authPolicy,
  createNamespace,
  gateway,
  gatewayClass,
  get,
  list,
  namespace,
  paramsConfigMap,
  placementDecision,
  rateLimitPolicy,
  remove,
} from '../../testkit/fixtures.ts';
import { hubHttp, startHub, testControllerName, uniqueName, type RunningHub } from '../../testkit/hub.ts';
import { describe, snapshot as counterSnapshot, waitQuiet as waitQuietCounters, delta, type Delta, type Snapshot } from '../../testkit/counters.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';
import { MANAGED_CLUSTER_LEASE_SECONDS } from '../../testkit/sandbox/registration.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { hashes, worksFor } from '../../testkit/world.ts';
import { controllerWorksSelector } from '../../testkit/works.ts';

const POLICIES_PER_KIND = 30;
const CLUSTER_COUNT = 4;
const KINDS = [AUTH_POLICIES, RATE_LIMIT_POLICIES];
const EXPECTED_WORKS = KINDS.length * POLICIES_PER_KIND * CLUSTER_COUNT;
/** Counters unchanged this long count as quiet. */
const QUIET_MS = 2_000;

const ns = uniqueName('zw');
// Cluster names are hub namespaces (where OCM keeps a cluster's works). No agent serves them: the works
// only have to exist on the hub.
const clusters = Array.from({ length: CLUSTER_COUNT }, (_, i) => `${ns}-c${i + 1}`);
const className = uniqueName('zw-class');
const controllerName = testControllerName('zw');
const worksSelector = controllerWorksSelector(controllerName);

let kubeConfig: KubeConfig;
let sandbox: Sandbox;
let http: KubeHttp;
let running: RunningHub | undefined;
const world: KubeObject[] = [];
/** `cluster/name` → spec-hash of every work the controller must keep, from the core's own build. */
let expectedWorks: Map<string, string>;
/** Policy key → the `kuadrant.io/policies-synced` value it must carry. */
let expectedSynced: Map<string, string>;
/** Counters after the first controller stopped: the baseline of the restart. */
let afterFirstRun: Snapshot | undefined;

before(async () => {
  sandbox = await testSandbox();
  kubeConfig = sandbox.kubeConfig('hub');
  http = hubHttp(sandbox);
  // The sandbox's namespace controller empties the namespaces earlier test files deleted: its writes
  // would be counted against the restart, so they are let finish first.
  await eventually(async () => (await list(http, RESOURCES.namespaces)).every((n) => !n.metadata.deletionTimestamp), {
    what: 'namespaces deleted by earlier tests to be gone',
    timeoutMs: 60_000,
  }).catch(() => undefined); // one stuck for good is not this test's business; the counters will tell
  for (const n of [ns, ...clusters]) await createNamespace(http, n);

  const params = paramsConfigMap(ns, 'params', {
    policiesToSync: KINDS.map(({ group, version, resource }) => ({ group, version, resource })),
  });
  const decisions = [placementDecision(ns, 'placement', clusters.slice(0, 2)), placementDecision(ns, 'placement', clusters.slice(2))];
  decisions[1]!.metadata.name = 'placement-decision-2'; // two decisions: the clusters are their union
  const policies = Array.from({ length: POLICIES_PER_KIND }, (_, i) => [authPolicy(ns, `auth-${i}`, 'gw'), rateLimitPolicy(ns, `rl-${i}`, 'gw')]).flat();
  world.push(params, gatewayClass(className, { namespace: ns, name: 'params' }, controllerName), gateway(ns, 'gw', className, 'placement'), ...decisions, ...policies);
  for (const o of world.slice(0, -policies.length)) await apply(http, o);
  await Promise.all(policies.map((p) => apply(http, p)));

  // What the controller must converge to, computed by the core from the policies as stored (uids).
  expectedWorks = new Map();
  expectedSynced = new Map();
  for (const kind of KINDS) {
    const crdUid = (await get(http, RESOURCES.crds, undefined, `${kind.resource}.${kind.group}`))?.metadata.uid;
    for (const policy of await list(http, kind, ns)) {
      for (const [key, hash] of hashes(worksFor([policy], ns, clusters, controllerName, crdUid, kind))) expectedWorks.set(key, hash);
      const synced = policiesSyncedAnnotation(clusters.map((cluster) => ({ cluster, name: policy.metadata.name, namespace: ns })));
      expectedSynced.set(policyKey(kind, ns, policy.metadata.name), synced ?? '');
    }
  }
  assert.equal(expectedWorks.size, EXPECTED_WORKS, 'the world is built: every policy lands on every cluster');
});

after(async () => {
  await running?.stop();
  if (!http) return;
  // Works first (no agent serves these clusters, so they carry no finalizer and go at once), then the
  // policies, so that no controller could bring works back; then the rest and the namespaces.
  for (const w of await list(http, RESOURCES.manifestWorks, undefined, worksSelector)) await remove(http, w);
  const policies = world.filter((o) => o.kind === 'AuthPolicy' || o.kind === 'RateLimitPolicy');
  await Promise.all(policies.map((p) => remove(http, p)));
  for (const o of world.filter((x) => !policies.includes(x)).reverse()) await remove(http, o);
  for (const n of [...clusters, ns]) await remove(http, namespace(n));
  http.destroy();
});

test(`first run: the controller converges ${EXPECTED_WORKS} works, and the counters see its writes`, { timeout: 180_000 }, async (t) => {
  const before = await snapshot();
  const audit = AuditCursor.at(await testSandbox(), 'hub');
  const started = Date.now();
  const { hub, logs } = await startCapturing();
  running = hub;

  await eventually(async () => (await converged()) || undefined, {
    what: `${EXPECTED_WORKS} works with the expected spec-hash and every policy annotated`,
    timeoutMs: 120_000,
    intervalMs: 250,
    context: () => `last check: ${lastConvergence}`,
  });
  const convergedMs = Date.now() - started;
  await waitQuiet();
  await hub.stop();
  running = undefined;
  afterFirstRun = await snapshot();

  const writes = delta(before, afterFirstRun);
  t.diagnostic(`converged ${EXPECTED_WORKS} works in ${convergedMs} ms (from start(), cache sync included)`);
  t.diagnostic(`writes of the first run: ${describe(writes.writes)}`);
  t.diagnostic(`left out — reviews: ${describe(writes.reviews)}; apiserver background: ${describe(writes.background)}`);
  // Sanity: the counters see the controller's writes, so a zero below is not a blind spot.
  // One create per work object at least: a work per copy, or a bundle per few copies (then also updates).
  const stored = (await list(http, RESOURCES.manifestWorks, undefined, worksSelector)).length;
  const workCreates = writes.writes.get('POST work.open-cluster-management.io/manifestworks') ?? 0;
  assert.ok(workCreates >= stored, `the first run created ${workCreates} ManifestWorks, expected at least ${stored}: ${describe(writes.writes)}`);
  assertBackgroundPlausible(writes);
  // Its own writes coming back (each work's creation, the policy's annotation patch) show nothing new:
  // they do not reconcile the policy again. A watch event that beats the answer to its write still does.
  const reconciles = logs.filter((l) => l.msg === 'reconciled' && l.controller === 'policy').length;
  t.diagnostic(`policy reconciles of the first run: ${reconciles} for ${expectedSynced.size} policies`);
  assert.ok(reconciles <= expectedSynced.size * 1.25, `${reconciles} policy reconciles for ${expectedSynced.size} policies: own writes coming back reconcile again`);
  // Enforcement first: the annotation writes wait while the works are being written, so at least half the
  // works are created before the first annotation patch (not each policy's annotation right after its own works).
  const ours = audit.since().filter((w) => w.namespace === ns || clusters.includes(w.namespace ?? ''));
  const firstPatch = ours.findIndex((w) => w.verb === 'patch');
  const workWrite = (w: AuditedWrite): boolean => (w.verb === 'create' || w.verb === 'update') && w.resource === 'manifestworks';
  const workWrites = ours.filter(workWrite).length;
  const createsBefore = ours.slice(0, firstPatch < 0 ? ours.length : firstPatch).filter(workWrite).length;
  t.diagnostic(`ManifestWork writes before the first annotation write: ${createsBefore} of ${workWrites}`);
  assert.ok(createsBefore >= workWrites / 2, `only ${createsBefore} of ${workWrites} work writes came before the first annotation write: status writes did not give way to the fan-out`);
});

test('restart on the unchanged world: no write of any verb to any resource', { timeout: 180_000 }, async (t) => {
  assert.ok(afterFirstRun, 'the first run completed');
  const before = afterFirstRun;
  const started = Date.now();
  const { hub, logs } = await startCapturing();
  running = hub;

  // Done with the start-up pass: caches synced (the policy kinds' watches included, once the class's
  // kinds are in force), and both queues idle. The kinds' first lists enqueue every policy before their
  // watch reports synced, so idle after that means each policy was reconciled against synced caches.
  const policyKeys = [...expectedSynced.keys()];
  await eventually(
    () => {
      const c = hub.controller;
      if (!c.cachesSynced || c.configs.kindsToWatch().length !== KINDS.length || !c.idle()) return Promise.resolve(undefined);
      const reconciled = new Set(logs.filter((l) => l.msg === 'reconciled' && l.controller === 'policy').map((l) => l.key));
      return Promise.resolve(policyKeys.every((k) => reconciled.has(k)) || undefined);
    },
    { what: 'the restarted controller to finish its start-up pass', timeoutMs: 120_000, intervalMs: 50 },
  );
  const passMs = Date.now() - started;
  await waitQuiet();
  assert.ok(hub.controller.idle(), 'still idle after the quiet period');
  await hub.stop();
  running = undefined;
  const afterRestart = await snapshot();

  const synced = logs.find((l) => l.msg === 'caches synced');
  const worksSeen = Number(synced?.works ?? -1);
  const reconciles = logs.filter((l) => l.msg === 'reconciled' && l.controller === 'policy').length;
  const changes = delta(before, afterRestart);
  t.diagnostic(`restart pass (start() to idle, all ${policyKeys.length} policies reconciled): ${passMs} ms; ${reconciles} policy reconciles; works in cache at sync: ${worksSeen}`);
  t.diagnostic(`left out — reviews: ${describe(changes.reviews)}; apiserver background: ${describe(changes.background)}`);
  // Sanity: the second controller really ran, on the whole world.
  assert.ok(worksSeen >= EXPECTED_WORKS, `the restarted controller's work cache held ${worksSeen} works at sync, expected ${EXPECTED_WORKS}`);
  assert.ok(reconciles >= policyKeys.length, `the restarted controller reconciled ${reconciles} times, fewer than the ${policyKeys.length} policies`);
  // Policies wait for the GatewayClass params to be read (and their kinds listed): none is reconciled
  // first against a configuration not known yet — a pass that decides nothing and warns about each one.
  assert.ok(reconciles <= policyKeys.length * 1.25, `${reconciles} policy reconciles on restart for ${policyKeys.length} policies: some ran before the class params were read`);
  const kept = logs.filter((l) => l.msg === 'ManifestWorks no longer desired are kept: not known to be unwanted');
  assert.equal(kept.length, 0, `restart of an unchanged world logged ${kept.length} "kept" warnings, first: ${JSON.stringify(kept[0])}`);
  // The point: no mutating request, of any verb, to any resource.
  assert.deepEqual(Object.fromEntries(changes.writes), {}, `writes on restart of an unchanged world: ${describe(changes.writes)}`);
  assertBackgroundPlausible(changes);
  // And the world is as the first run left it.
  assert.equal(await converged(), true, `the world still converged: ${lastConvergence}`);
});

// ---- the controller, with its log captured ----

type LogLine = Record<string, unknown> & { msg?: string };

async function startCapturing(): Promise<{ hub: RunningHub; logs: LogLine[] }> {
  const logs: LogLine[] = [];
  // Debug level: the runner logs every reconcile (`reconciled`, with controller and key).
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) });
  const hub = await startHub(kubeConfig, { controllerName, logger });
  return { hub, logs };
}

// ---- convergence ----

let lastConvergence = 'not checked yet';

async function converged(): Promise<boolean> {
  // The copy works, whatever the work shape (a bundle's copies unpacked).
  const works = copyWorks(await list(http, RESOURCES.manifestWorks, undefined, worksSelector));
  const wrong = works.filter((w) => expectedWorks.get(`${w.metadata.namespace}/${w.metadata.name}`) !== readSpecHash(w));
  if (works.length !== EXPECTED_WORKS || wrong.length > 0) {
    lastConvergence = `${works.length} works, ${wrong.length} unexpected or with another spec-hash`;
    return false;
  }
  for (const kind of KINDS) {
    const unsynced = (await list(http, kind, ns)).filter(
      (p) => p.metadata.annotations?.[POLICIES_SYNCED_ANNOTATION] !== expectedSynced.get(policyKey(kind, ns, p.metadata.name)),
    );
    if (unsynced.length > 0) {
      lastConvergence = `${unsynced.length} ${kind.resource} without the expected ${POLICIES_SYNCED_ANNOTATION}`;
      return false;
    }
  }
  lastConvergence = 'converged';
  return true;
}

// ---- the apiserver's request counters (testkit/counters.ts; other components' Events count as writes here) ----

/** The apiserver's own periodic writes (counters.ts isBackground) come about every 10 s. */
const BACKGROUND_PERIOD_MS = 10_000;

function snapshot(): Promise<Snapshot> {
  return counterSnapshot(kubeConfig, { othersApart: false });
}

/** The apiserver's background writes in a window of `d.ms` ms came at no more than their period. */
function assertBackgroundPlausible(d: Delta): void {
  const registration = sandbox.runsRegistration ? sandbox.spokes.length * (Math.floor(d.ms / (MANAGED_CLUSTER_LEASE_SECONDS * 1000)) + 1) : 0;
  const allowed = Math.floor(d.ms / BACKGROUND_PERIOD_MS) + 2 + registration;
  for (const [k, v] of d.background) {
    assert.ok(v <= allowed, `${k}: ${v} requests in ${d.ms} ms, more than the apiserver's own ${allowed}: someone else writes these`);
  }
}

/** Waits until the write counters (reviews and background aside) have not moved for QUIET_MS. */
async function waitQuiet(): Promise<void> {
  const { snapshot: last, quiet } = await waitQuietCounters(kubeConfig, { quietMs: QUIET_MS, timeoutMs: 60_000, othersApart: false });
  if (!quiet) throw new Error(`the apiserver's write counters kept moving for 60 s: ${describe(last.writes)}`);
}
