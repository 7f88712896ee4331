// The work agent's race itself, on the real OCM work agent (v1.2.1), as the soak met it (docs/reliability.md: "OCM's
// work agent leaves a copy behind when its AppliedManifestWork cache misses"), and what the hub makes of it.
//
// The agent's finalize controller (manifestwork_finalize_controller.go) deletes a terminating work's
// AppliedManifestWork only if its informer's cache shows it, and otherwise drops the work's finalizer at once. The
// cache misses an AppliedManifestWork created while that informer is between a cut watch and its next list: client-go's
// reflector (v0.34.3) first waits out a backoff — 800 ms, doubled per failure in a row up to 30 s, each wait jittered up
// to twice as long, reset only after two minutes without one. One reset (the soak's `watch-cut`) leaves 0.8–1.6 s; a
// reset repeated each time the reflector comes back stretches the wait until it holds a whole work's life. So:
//  1. Cut: every CUT_EVERY_MS, the work agent's TCP connections to its spoke apiserver are reset (`ss -K`, chosen by the
//     agent's own source ports: the spoke agent, the spoke's controller manager and this test keep theirs), until the
//     agent's log shows its AppliedManifestWork watch failing often enough that the reflector's next wait is at least
//     WINDOW_MS. Then the cutting stops.
//  2. Within that wait: the policy is placed on spoke-1 (the agent creates the AppliedManifestWork, unseen by its cache,
//     and the copy it owns); once both are on the spoke, spoke-1 leaves the placement: the hub deletes the work, and the
//     finalize controller, its cache missing the AppliedManifestWork, drops the finalizer.
//  3. Verified: the work gone from the hub while its AppliedManifestWork and the copy are still on spoke-1. Otherwise the
//     test fails, saying the race was not reproduced.
// Then the product: spoke-1 is `Removing` on the hub within seconds of the first report that lists the copy (which the
// agent's own feedback informers, held back by the same cut, bring to the hub only when they list again: up to a minute
// on), `Lingering` once LINGER_GRACE_MS have passed, the copy is handed back to the agent through a mending work
// (deleted once applied) and gone from spoke-1 within LINGER_GRACE_MS + 60 s of that report, and nothing the sync did
// not create is deleted there (audit log).
//
// Needs root (`ss -K` destroys sockets through the kernel's inet_diag): skipped, saying so, where it cannot.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { SPOKE_CONFIG_WORK_NAME, spokeReportText } from '../../src/core/spoke/spokeconfig.ts';
import { LINGER_GRACE_MS } from '../../src/core/spoke/spoketruth.ts';
import type { PolicyStatus } from '../../src/core/status/policystatus.ts';
import { workName } from '../../src/core/works/manifestwork.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, type ResourceRef } from '../../src/kube/resource.ts';
import { appendedSince } from '../../testkit/appended.ts';
import { startAgentPlane, otherDeletions, type AgentPlane } from '../../testkit/agentplane.ts';
import { AuditCursor, describeWrite } from '../../testkit/audit.ts';
import { eventually } from '../../testkit/eventually.ts';
import { report } from '../../testkit/faults.ts';
import { AUTH_POLICIES, apply, authPolicy, get, list, paramsConfigMap, placementDecision, remove } from '../../testkit/fixtures.ts';
import { hubHttp, spokeClients, testControllerName, uniqueName } from '../../testkit/hub.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { hubStatus } from '../../testkit/status.ts';
import { testSandbox, workAgentLogs } from '../../testkit/test-sandbox.ts';

const run = promisify(execFile);

const SPOKE = 'spoke-1';
const SPOKE_CONFIG = { namespace: 'policy-sync-system', name: uniqueName('spoke-config') };
const controllerName = testControllerName('race');
const ns = uniqueName('race');
const className = uniqueName('race-class');
const APPLIED_MANIFEST_WORKS: ResourceRef = { group: 'work.open-cluster-management.io', version: 'v1', resource: 'appliedmanifestworks', namespaced: false };

/** How long the AppliedManifestWork reflector's next wait must be, at least, before the work's life starts. */
const WINDOW_MS = 12_000;
/** How often the agent's connections are reset while cutting. */
const CUT_EVERY_MS = 100;
/** The cutting gives up after this long (the reflector's waits, from a reset backoff, add up to 12–25 s). */
const CUT_FOR_AT_MOST_MS = 180_000;
/** client-go's reflector backoff (tools/cache/reflector.go, v0.34.3): the first wait and the cap of the doubled waits. */
const REFLECTOR_BACKOFF_MS = 800;
const REFLECTOR_BACKOFF_CAP_MS = 30_000;
/**
 * The report listing the left copy reaches the hub within this long of the work going: the agent's feedback informers,
 * cut as often as its AppliedManifestWork reflector, wait out a backoff of at most twice the 30 s cap, then list.
 */
const REPORT_BACK_WITHIN_MS = 2 * REFLECTOR_BACKOFF_CAP_MS + 30_000;
/** The copy goes within this long of the hub's first report listing it (the bound this test states). */
const COPY_GONE_WITHIN_MS = LINGER_GRACE_MS + 60_000;

let sandbox: Sandbox;
let hub: KubeHttp;
let spokes: Map<string, KubeHttp>;
let plane: AgentPlane | undefined;

type ClusterStatus = NonNullable<PolicyStatus['clusters']>[string];

async function clusterStatus(name: string): Promise<ClusterStatus | undefined> {
  return (await hubStatus(hub, AUTH_POLICIES, ns, name))?.clusters?.[SPOKE];
}

/** True when `ss -K` can reset a TCP connection here (root, and a kernel with inet_diag socket destroy). */
async function ssCanReset(): Promise<boolean> {
  const server = createServer((s) => s.on('error', () => undefined));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    const client = connect(port, '127.0.0.1');
    const closed = new Promise<boolean>((resolve) => {
      client.on('error', () => undefined);
      client.on('close', () => resolve(true));
    });
    await new Promise<void>((resolve) => client.once('connect', () => resolve()));
    await run('ss', ['-K', '-tnH', `( dport = :${port} and sport = :${client.localPort} )`]).catch(() => undefined);
    const reset = await Promise.race([closed, sleep(2_000).then(() => false)]);
    client.destroy();
    return reset;
  } finally {
    server.close();
  }
}

/**
 * Resets every TCP connection of process `pid` to the apiserver on `port` (the soak's `watch-cut`, narrowed to one
 * client: `ss -K` cannot select by process, so the agent's source ports are read first). How many it reset.
 */
async function resetConnectionsOf(pid: number, port: string): Promise<number> {
  const { stdout } = await run('ss', ['-tnpH', `( dport = :${port} )`]);
  const ports = stdout
    .split('\n')
    .filter((line) => line.includes(`pid=${pid},`))
    .map((line) => /^\S+\s+\d+\s+\d+\s+\S+:(\d+)\s/.exec(line)?.[1])
    .filter((p): p is string => p !== undefined);
  if (ports.length === 0) return 0;
  await run('ss', ['-K', '-tnH', `( dport = :${port} and ( ${ports.map((p) => `sport = :${p}`).join(' or ')} ) )`]);
  return ports.length;
}

/** The lines a log gains from now on. */
class LogTail {
  private offset: number;
  private partial = '';

  constructor(private readonly path: string) {
    this.offset = statSync(path).size;
  }

  next(): string[] {
    const { text, size } = appendedSince(this.path, this.offset);
    if (text === '') return [];
    this.offset = size;
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    return lines;
  }
}

/**
 * A line of the agent's log saying its AppliedManifestWork reflector failed: a watch cut mid-stream ("watch ended with
 * error") or a list or watch request cut ("Failed to watch"). Each is one step of the reflector's backoff; a failure
 * logged only at a higher verbosity is a step not counted, so what is worked out from these is a lower bound.
 */
function isAppliedWorkReflectorFailure(line: string): boolean {
  return line.includes('*v1.AppliedManifestWork') && (line.includes('watch ended with error') || line.includes('Failed to watch'));
}

/**
 * The least the reflector waits after the last of `failures` (ms since the epoch, consecutive, each within two minutes
 * of the one before, so no reset between): the k-th wait of a backoff that started anywhere is at least
 * 800 ms·2^(k−1); and a gap g between the last two (g ≤ twice the base before plus the time to list and be cut) makes
 * the next base at least g − 1 s (the margin takes the list and the poll); both capped at 30 s.
 */
function nextWaitAtLeast(failures: readonly number[]): number {
  const k = failures.length;
  if (k === 0) return 0;
  const byCount = Math.min(REFLECTOR_BACKOFF_MS * 2 ** (k - 1), REFLECTOR_BACKOFF_CAP_MS);
  const byGap = k >= 2 ? Math.min(failures[k - 1]! - failures[k - 2]! - 1_000, REFLECTOR_BACKOFF_CAP_MS) : 0;
  return Math.max(byCount, byGap);
}

interface Cut {
  /** AppliedManifestWork reflector failures seen in a row. */
  failures: number;
  /** When the last one was seen (ms since the epoch): the reflector waits at least `windowMs` from then. */
  lastFailureAt: number;
  windowMs: number;
  /** How long the cutting took, and how many connections it reset. */
  cutMs: number;
  resets: number;
}

/** Step 1: cuts the work agent's spoke connections until its AppliedManifestWork reflector waits at least WINDOW_MS. */
async function cutUntilTheCacheStaysBehind(): Promise<Cut> {
  const pid = sandbox.process(`work-agent/${SPOKE}`).pid;
  const port = new URL(sandbox.cluster(SPOKE).server).port;
  const log = new LogTail(sandbox.logOf(`work-agent/${SPOKE}`));
  const started = Date.now();
  const failures: number[] = [];
  let resets = 0;
  while (Date.now() - started < CUT_FOR_AT_MOST_MS) {
    for (const line of log.next()) if (isAppliedWorkReflectorFailure(line)) failures.push(Date.now());
    const windowMs = nextWaitAtLeast(failures);
    if (windowMs >= WINDOW_MS) return { failures: failures.length, lastFailureAt: failures.at(-1)!, windowMs, cutMs: Date.now() - started, resets };
    resets += await resetConnectionsOf(pid, port);
    await sleep(CUT_EVERY_MS);
  }
  throw new Error(
    `cutting the work agent's connections to ${SPOKE}'s apiserver for ${CUT_FOR_AT_MOST_MS} ms (${resets} resets) did not hold its AppliedManifestWork reflector back ${WINDOW_MS} ms: ${failures.length} failures logged\n${workAgentLogs(sandbox, 20)}`,
  );
}

/** The AppliedManifestWorks on the spoke that stand for hub work `work` (`<hub hash>-<work name>`). */
async function appliedWorksOf(spoke: KubeHttp, work: string): Promise<KubeObject[]> {
  return (await list(spoke, APPLIED_MANIFEST_WORKS)).filter((a) => (a.spec as { manifestWorkName?: string } | undefined)?.manifestWorkName === work);
}

/** Whether the spoke agent's report, as the hub holds it (the feedback on spoke-1's spoke configuration work), lists copy `name`. */
async function reportOnHubLists(name: string): Promise<boolean> {
  const work = await get(hub, RESOURCES.manifestWorks, SPOKE, SPOKE_CONFIG_WORK_NAME);
  const text = work && spokeReportText(work, SPOKE_CONFIG);
  if (text === undefined) return false;
  const section = (JSON.parse(text) as { objects?: Record<string, Record<string, { name?: string }[] | { listed?: { name?: string }[] }>> }).objects?.['authpolicies.kuadrant.io']?.[ns];
  const listed = Array.isArray(section) ? section : (section?.listed ?? []);
  return listed.some((o) => o.name === name);
}

before(async () => {
  sandbox = await testSandbox();
  hub = hubHttp(sandbox);
  spokes = spokeClients(sandbox);
  plane = await startAgentPlane(sandbox, hub, spokes, { ns, className, controllerName, spokeConfig: SPOKE_CONFIG, params: paramsConfigMap(ns, 'params', { policiesToSync: [{ group: 'kuadrant.io', version: 'v1', resource: 'authpolicies' }] }), cluster: SPOKE });
});

after(async () => {
  await plane?.stop();
});

test("the work agent's race, reproduced: its spoke connection reset as a work comes, the work deleted, its finalizer dropped on a cache miss and the copy left; the hub says Removing, then Lingering, and the copy is handed back to the agent and gone, nothing else deleted", async (t) => {
  if (!(await ssCanReset())) {
    t.skip('`ss -K` cannot reset a TCP connection here (it needs root and a kernel with inet_diag socket destroy)');
    return;
  }
  const name = 'raced';
  const work = workName(AUTH_POLICIES, ns, name);
  const spoke = spokes.get(SPOKE)!;
  t.after(async () => {
    // The policy first, then spoke-1 placed again: the other order places the copy anew.
    await remove(hub, authPolicy(ns, name, 'gw'));
    await eventually(async () => (await get(hub, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: 'the policy gone from the hub' });
    await apply(hub, placementDecision(ns, SPOKE, [SPOKE]));
    await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: 'the copy gone', timeoutMs: 90_000 });
  });
  // A first policy placed and withdrawn, the ordinary way: the spoke agent's report is fresh on the hub (without one no
  // first copy is placed, AwaitingSpokeReport, and the raced work's life would not fit the window), and the work agent
  // takes works up and lets them go.
  const warm = authPolicy(ns, 'warm-up', 'gw');
  await apply(hub, warm);
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, 'warm-up')) ?? undefined, { what: `the warm-up copy on ${SPOKE}`, timeoutMs: 90_000 });
  await remove(hub, warm);
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, 'warm-up')) === undefined || undefined, { what: 'the warm-up copy gone', timeoutMs: 60_000 });
  const spokeAudit = AuditCursor.at(sandbox, SPOKE);

  // 1. The agent's AppliedManifestWork cache held behind.
  const cut = await cutUntilTheCacheStaysBehind();

  // 2. The work's whole life within the reflector's wait: a new policy placed on spoke-1, taken up there
  // (AppliedManifestWork and copy), spoke-1 no longer placed: the work deleted.
  await apply(hub, authPolicy(ns, name, 'gw'));
  const taken = await eventually(async () => {
    const copy = await get(spoke, AUTH_POLICIES, ns, name);
    const applied = await appliedWorksOf(spoke, work);
    return copy && applied.length === 1 ? { copy, applied: applied[0]! } : undefined;
  }, { what: `the copy and its AppliedManifestWork on ${SPOKE}`, timeoutMs: 60_000, intervalMs: 50, context: () => workAgentLogs(sandbox, 20) });
  const takenAt = Date.now();
  await apply(hub, placementDecision(ns, SPOKE, []));
  await eventually(async () => (await get(hub, RESOURCES.manifestWorks, SPOKE, work)) === undefined || undefined, { what: `${work} gone from the hub`, timeoutMs: 60_000, intervalMs: 50, context: () => workAgentLogs(sandbox, 20) });
  const gone = Date.now();
  const hubAudit = AuditCursor.at(sandbox, 'hub');
  // From now on, what the hub holds, polled: when a report listing the copy reaches it, and spoke-1's first status
  // about the copy (Removing, or Lingering).
  const seen: { reportedAt?: number; first?: { at: number; status: ClusterStatus } } = {};
  let watching = true;
  const watcher = (async () => {
    while (watching && (seen.reportedAt === undefined || seen.first === undefined)) {
      try {
        if (seen.reportedAt === undefined && (await reportOnHubLists(name))) seen.reportedAt = Date.now();
        const c = seen.first === undefined ? await clusterStatus(name) : undefined;
        if (c?.reason === 'Removing' || c?.reason === 'Lingering') seen.first = { at: Date.now(), status: c };
      } catch {
        // a failed read: the next poll
      }
      await sleep(100);
    }
  })();
  t.after(async () => {
    watching = false;
    await watcher;
  });

  // 3. The race happened: the work is gone, its AppliedManifestWork and the copy are not.
  const left = await appliedWorksOf(spoke, work);
  const copy = await get(spoke, AUTH_POLICIES, ns, name);
  const timeline = `the cut: ${cut.failures} AppliedManifestWork reflector failures in ${cut.cutMs} ms (${cut.resets} connections reset), a wait of at least ${cut.windowMs} ms from the last; the copy and AppliedManifestWork there ${takenAt - cut.lastFailureAt} ms after it, the work gone ${gone - cut.lastFailureAt} ms after it`;
  assert.ok(
    left.length === 1 && left[0]!.metadata.uid === taken.applied.metadata.uid && !left[0]!.metadata.deletionTimestamp && copy?.metadata.uid === taken.copy.metadata.uid,
    `the race was not reproduced: the work agent deleted the AppliedManifestWork (${left.length === 0 ? 'gone' : left[0]!.metadata.deletionTimestamp ? 'terminating' : 'kept'}) and the copy (${copy ? 'kept' : 'gone'}) before dropping the work's finalizer — its cache saw the AppliedManifestWork (${timeline})\n${workAgentLogs(sandbox, 20)}`,
  );
  // A moment on, still there: the finalize controller, finding no work, leaves the AppliedManifestWork to the eviction.
  await sleep(2_000);
  assert.equal((await get(spoke, AUTH_POLICIES, ns, name))?.metadata.uid, taken.copy.metadata.uid, `the copy left on ${SPOKE} (${timeline})`);
  assert.equal((await appliedWorksOf(spoke, work)).length, 1, `its AppliedManifestWork left on ${SPOKE}`);
  report('agent race, reproduced', {
    'AppliedManifestWork reflector failures': cut.failures,
    'cut (ms)': cut.cutMs,
    'connections reset': cut.resets,
    'reflector wait at least (ms)': cut.windowMs,
    'last failure to copy and AppliedManifestWork there (ms)': takenAt - cut.lastFailureAt,
    'last failure to work gone (ms)': gone - cut.lastFailureAt,
  });

  // The hub: Removing from the first report that lists the copy, then Lingering past the grace. The report travels
  // through the work agent's ReadOnly feedback on the spoke configuration work, read by informers of the agent's that
  // the same cut holds back (their own backoff, as long as the AppliedManifestWork reflector's): it reaches the hub only
  // when they list again.
  const first = await eventually(() => Promise.resolve(seen.first), {
    what: `${SPOKE} Removing on the hub`,
    timeoutMs: REPORT_BACK_WITHIN_MS + 10_000 - (Date.now() - gone),
    context: () => `a report listing the copy on the hub: ${seen.reportedAt === undefined ? 'none' : `${seen.reportedAt - gone} ms after the work went`}\n${workAgentLogs(sandbox, 20)}`,
  });
  const removing = first.status;
  const removingAt = first.at;
  const reportedAt = seen.reportedAt ?? removingAt;
  const toRemoving = removingAt - gone;
  assert.equal(removing.reason, 'Removing', `${SPOKE} Removing before it lingers: ${JSON.stringify(removing)}`);
  assert.equal(removing.state, 'Pending');
  assert.deepEqual(removing.lingering, [`${ns}/${name}`]);
  assert.ok(reportedAt - gone <= REPORT_BACK_WITHIN_MS, `the report listing the copy reached the hub ${reportedAt - gone} ms after the work went`);
  assert.ok(removingAt - reportedAt <= 10_000, `Removing within seconds of the report (${removingAt - reportedAt} ms)`);
  let lastSeen: ClusterStatus | undefined;
  const lingering = await eventually(async () => {
    const c = await clusterStatus(name);
    lastSeen = c;
    return c?.reason === 'Lingering' ? c : undefined;
  }, { what: `${SPOKE} Lingering`, timeoutMs: LINGER_GRACE_MS + 30_000, intervalMs: 100, context: () => `Removing ${removingAt - gone} ms after the work went, the report listing the copy on the hub ${reportedAt - gone} ms after; ${SPOKE} now: ${JSON.stringify(lastSeen)}${lastSeen?.reason === 'Removing' ? ' — still Removing well past the grace: the hub did not look at the policy again when the grace ended' : ''}` });
  const lingeringAt = Date.now();
  const toLingering = lingeringAt - gone;
  assert.equal(lingering.state, 'Failed');
  assert.match(lingering.message, /still runs on the cluster, though no ManifestWork of this hub places it/);
  // The grace counts from when the hub first saw the copy where no work places it: its first Removing.
  assert.ok(lingeringAt - removingAt >= LINGER_GRACE_MS - 1_000, `Lingering only after the grace (${lingeringAt - removingAt} ms after Removing)`);

  // Handed back: a mending work of the lost work's name, which the agent takes up, deleting the copy.
  await eventually(async () => (await get(spoke, AUTH_POLICIES, ns, name)) === undefined || undefined, { what: `the lingering copy gone from ${SPOKE}`, timeoutMs: Math.max(1_000, reportedAt + COPY_GONE_WITHIN_MS - Date.now()), intervalMs: 100, context: () => workAgentLogs(sandbox, 20) });
  const toGone = Date.now() - gone;
  await eventually(async () => (await get(hub, RESOURCES.manifestWorks, SPOKE, work)) === undefined || undefined, { what: 'the mending work deleted once applied', timeoutMs: 30_000 });
  // From the hub's audit log: the mending work created, its status written by the agent, then deleted.
  const writes = hubAudit.since().filter((w) => w.namespace === SPOKE && w.name === work && w.code < 300);
  const mendCreate = writes.findLastIndex((w) => w.verb === 'create' && w.resource === 'manifestworks');
  assert.ok(mendCreate >= 0, `a mending work of the lost work's name was created:\n${writes.map(describeWrite).join('\n')}`);
  const afterCreate = writes.slice(mendCreate + 1);
  const statusAt = afterCreate.findIndex((w) => w.resource === 'manifestworks/status');
  const deleteAt = afterCreate.findIndex((w) => w.verb === 'delete' && w.resource === 'manifestworks');
  assert.ok(statusAt >= 0 && deleteAt > statusAt, `the mending work deleted after the agent wrote its status:\n${writes.map(describeWrite).join('\n')}`);
  await eventually(async () => (await clusterStatus(name)) === undefined || undefined, { what: `${SPOKE} no longer in the policy status`, timeoutMs: 30_000 });
  assert.deepEqual(otherDeletions(spokeAudit, ns, SPOKE_CONFIG, [name]), [], `nothing else deleted on ${SPOKE}`);
  const reportToGone = gone + toGone - reportedAt;
  assert.ok(reportToGone <= COPY_GONE_WITHIN_MS, `the copy gone within ${COPY_GONE_WITHIN_MS} ms of the report listing it on the hub (${reportToGone} ms)`);
  report('agent race, handled', {
    'work gone to report on the hub (ms)': reportedAt - gone,
    'work gone to Removing on the hub (ms)': toRemoving,
    'work gone to Lingering (ms)': toLingering,
    'Removing to Lingering (ms)': lingeringAt - removingAt,
    'work gone to copy removed (ms)': toGone,
    'report on the hub to copy removed (ms)': reportToGone,
    'linger grace (ms)': LINGER_GRACE_MS,
  });
});
