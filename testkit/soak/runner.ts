// Runs a soak plan on the real plane: sets the world up, starts the hub replicas and spoke agents as
// processes, then round by round performs the operations (recording the model's state after each, with the
// time it was sent), injects the round's fault and lifts it, waits for the spokes and the hub's status to
// match the model (timed: the convergence figures), and judges the round's audited spoke writes, its drift edits
// and the copies that ran where the model wants none after the faults stopped (checks.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeHttp, isConflict, isNotFound } from '../../src/kube/http.ts';
import { mergePatch } from '../../src/kube/writes.ts';
import { RESOURCES, objectPath } from '../../src/kube/resource.ts';
import { AuditCursor } from '../audit.ts';
import { compactEtcd } from '../etcd.ts';
import { registrationAgent } from '../sandbox/registration.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import { ourWorkObjects } from '../works.ts';
import {
  LINGER_BOUND_MS,
  checkCrossings,
  checkDeletions,
  checkJoins,
  checkLingering,
  checkLocalsIntact,
  checkTakeovers,
  hubDiffs,
  judgeDrift,
  policyWrites,
  sightUnwanted,
  spokeDiffs,
  unwantedCopies,
  type DriftJudgement,
  type FaultSpan,
  type LingerFigure,
  type PolicyWrite,
  type Snapshot,
  type UnwantedSighting,
  type Violation,
} from './checks.ts';
import { copyFingerprint, driftEventWitness, driftStatusWitness, type DriftRecord } from './drift.ts';
import { AvailabilityWatch, DriftWatch, HubStatusWatch, MendWatch, ReportWatch, getOrUndefined, hubEvents, hubPolicies, reapplyToken, spokeObjects, type LocalLife } from './evidence.ts';
import { POLICY_SYNCED_ANNOTATION } from '../../src/core/metadatakeys.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { applyOp, copyId, initialState, type ModelState, type Phase } from './model.ts';
import { DRIFT_FIELD_MANAGER, SPOKES, driftValue, policyKey, type Fault, type Op, type Round, type SoakPlan, type Spoke } from './ops.ts';
import { SoakProcesses } from './processes.ts';
import {
  RESOURCE_OF,
  HUB_USER_AGENT,
  SOAK_USER_AGENT,
  SoakNames,
  apply,
  bindingObject,
  classObject,
  copyWorkName,
  createObject,
  deleteObject,
  driftSpecPatch,
  gatewayObject,
  markerOf,
  paramsObject,
  placementObject,
  policyObject,
  setMember,
  setUpWorld,
  tearDownWorld,
} from './world.ts';

export interface SoakOptions {
  sandbox: Sandbox;
  plan: SoakPlan;
  /** Start no round after this long (default: run every round). */
  durationMs?: number;
  /** Convergence after the faults of a round stop must come within this (default 180 s). */
  convergeBoundMs?: number;
  /** Where the run's plan, executed log, result and process logs go. */
  artifactsDir: string;
  log?: (message: string) => void;
  /** Leave the world and processes' objects in place (for a look after a failure). */
  keep?: boolean;
}

export interface SoakResult {
  seed: number;
  run: string;
  rounds: number;
  ops: number;
  opsByKind: Record<string, number>;
  faultsByKind: Record<string, number>;
  /** Audited DELETEs of synced kinds on the spokes, each held against the model. */
  deletionsChecked: number;
  /** Audited writes of synced kinds on the spokes by anyone but the soak. */
  writesChecked: number;
  violations: Violation[];
  /** Takeovers the hub could not have seen coming (the copy was on its way as the team took the name). */
  races: string[];
  /** By fault kind: ms from the round's faults lifted (and its operations done) to spokes and hub matching the model. */
  convergenceMs: Record<string, number[]>;
  /** The drift edits (issue 42): what became of each (checks.ts judgeDrift). */
  drifts: DriftFigures;
  /**
   * The copies seen running where the model wants none, after a round's faults stopped, for LINGER_SHOWN_MS or more:
   * how long, whether the hub said `Lingering` of them in that round and whether a mending work was seen.
   */
  lingering: LingerShown[];
  /** Copies seen running where the model wants none after a round's faults stopped, however briefly. */
  unwantedSeen: number;
  elapsedMs: number;
  /** The executed plan (replay with `npm run soak -- --replay <file>`). */
  executedFile: string;
  logs: string;
}

const RETRY_FOR_MS = 120_000;
/** How long a drift edit waits for the copy to run on its spoke (its policy may have been applied a moment before). */
const DRIFT_FIND_MS = 10_000;
/**
 * Least time between two drift edits of one copy: the hub's token of a drift names the ten seconds it began in, so a
 * second edit of the same field by the same hand within them is the one-put-back-per-ten-seconds the hub allows a
 * hand that fights it (core/spoke/spoketruth.ts driftToken), not a drift it owes a put-back.
 */
const DRIFT_SPACING_MS = 11_000;
/** How long after a round converged a drift edit's `Drifted` may still arrive on the status watch. */
const DRIFT_REPORT_GRACE_MS = 5_000;
/** An unwanted copy listed in the result's lingering figures: one that outlived an ordinary removal. */
export const LINGER_SHOWN_MS = 5_000;

export interface DriftFigures {
  /** Edits made (a copy ran there to edit), and drift operations that found no copy to edit within DRIFT_FIND_MS. */
  injected: number;
  missed: number;
  /** Reported Drifted by the hub: in all, and of them witnessed only by an Event (the status watch saw no write). */
  reported: number;
  reportedByEvent: number;
  /** Put back (the copy no longer carries the edit's value), and of them those whose work the hub relabelled. */
  putBack: number;
  relabelled: number;
  /** Unreported drifts that owed no report, by why (judgeDrift). */
  excused: Record<string, number>;
  /** ms from the edit to its first witness of Drifted, and to the copy seen put back (polled every 250 ms). */
  toReportMs: number[];
  toPutBackMs: number[];
}

export interface LingerShown extends LingerFigure {
  /** ms after the faults stopped that the hub's status first said this cluster `Lingering` for the policy, if it did in that round. */
  saidLingeringMs?: number;
  /** A mending work for it was seen in that round. */
  mended: boolean;
}

async function retrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + RETRY_FOR_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      await sleep(Math.min(250 * 2 ** attempt, 2_000));
    }
  }
}

export function describeOp(op: Op): string {
  const { op: name, ...rest } = op;
  return `${name} ${JSON.stringify(rest)}`;
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const started = Date.now();
  const log = options.log ?? ((m: string) => process.stderr.write(`[soak] ${m}\n`));
  const sandbox = options.sandbox;
  const bound = options.convergeBoundMs ?? 180_000;
  const names = new SoakNames(`soak-${randomBytes(2).toString('hex')}`);
  const dir = join(options.artifactsDir, `seed-${options.plan.seed}-${names.run}`);
  mkdirSync(dir, { recursive: true });
  const hub = new KubeHttp(sandbox.kubeConfig('hub'), { userAgent: SOAK_USER_AGENT });
  const spokes = new Map<Spoke, KubeHttp>(SPOKES.map((s) => [s, new KubeHttp(sandbox.kubeConfig(s), { userAgent: SOAK_USER_AGENT })]));
  let state: ModelState = initialState();
  const timeline: Snapshot[] = [{ at: started, state, label: 'initial' }];
  const lives: LocalLife[] = [];
  const violations: Violation[] = [];
  const races: string[] = [];
  const convergenceMs: Record<string, number[]> = {};
  const opsByKind: Record<string, number> = {};
  const faultsByKind: Record<string, number> = {};
  const executed: Round[] = [];
  let deletionsChecked = 0;
  let writesChecked = 0;
  let opsRun = 0;
  const drifts: DriftRecord[] = [];
  const judgements: DriftJudgement[] = [];
  let driftsMissed = 0;
  const lastDrift = new Map<string, number>();
  const lingering: LingerShown[] = [];
  let unwantedSeen = 0;
  let roundNo = 0;
  const executedFile = join(dir, 'executed.json');
  const saveExecuted = (): void => writeFileSync(executedFile, JSON.stringify({ seed: options.plan.seed, rounds: executed }, null, 1));

  log(`run ${names.run}, seed ${options.plan.seed}: ${options.plan.rounds.length} rounds planned; artifacts in ${dir}`);
  await setUpWorld(hub, spokes, names, state);
  const processes = await SoakProcesses.start(sandbox, names, SPOKES, join(dir, 'logs'));
  const reports = new ReportWatch(hub, names, () => lives);
  reports.start();
  // Whether OCM vouches for each spoke, as its ManagedCluster says: the doubt the deletion check allows for.
  const availability = new AvailabilityWatch(hub).start();
  // When the hub wrote each ManifestWork (its audit log): the decision a work agent's write on a spoke carries out.
  // The hub's own writes only: the work agent's finalizer patches on the hub come when it takes a work up, not when
  // the hub decided.
  const hubAudit = AuditCursor.at(sandbox, 'hub');
  const workWrites = new Map<string, { at: number; verb: string }[]>();
  /** Folds the hub's ManifestWork writes logged since the last call into workWrites: once per round, before its checks. */
  const readWorkWrites = (): void => {
    for (const w of hubAudit.advance()) {
      if (w.resource !== 'manifestworks' || w.code >= 300 || !w.namespace || !w.name || !w.userAgent.startsWith(HUB_USER_AGENT)) continue;
      const key = `${w.namespace}/${w.name}`;
      const writes = workWrites.get(key) ?? [];
      writes.push({ at: Date.parse(w.at), verb: w.verb });
      workWrites.set(key, writes);
    }
  };
  /** The hub's last write of the work that carried the copy `p` wrote, before `p` (a delete too, or only what placed it). */
  const lastHubWrite = (p: PolicyWrite, placing: boolean): number | undefined => {
    if (!p.w.userAgent.startsWith('work-agent') || !p.w.namespace || !p.w.name) return undefined;
    const writes = workWrites.get(`${p.spoke}/${copyWorkName(p.kind, p.w.namespace, p.w.name)}`) ?? [];
    return writes
      .filter((w) => w.at <= p.at && !(placing && w.verb === 'delete'))
      .reduce<number | undefined>((a, w) => (a === undefined || w.at > a ? w.at : a), undefined);
  };
  // What the hub says of what runs on the spokes (Drifted, Removing, Lingering: every status write), the mending works
  // it creates, and the drifted copies until they are put back.
  const truth = new HubStatusWatch(hub, names).start();
  const mends = new MendWatch(hub, names.controllerName).start();
  const driftWatch = new DriftWatch(spokes, names).start();
  const record = (op: Op, phase: Phase, at: number): void => {
    state = applyOp(state, op, phase);
    timeline.push({ at, state, label: `${describeOp(op)}${phase === 'whole' ? '' : ` (${phase})`}` });
  };

  const execute = async (op: Op): Promise<void> => {
    const ns = 'tenant' in op ? names.namespace(op.tenant) : '';
    const t0 = Date.now();
    switch (op.op) {
      case 'policy-apply':
        await retrying(describeOp(op), () => apply(hub, RESOURCE_OF[op.kind], policyObject(op.kind, ns, op.name, op.targets, op.marker, op.labels)));
        break;
      case 'policy-delete':
        await retrying(describeOp(op), () => deleteObject(hub, RESOURCE_OF[op.kind], ns, op.name));
        break;
      case 'local-create': {
        const http = spokes.get(op.spoke)!;
        const created = await retrying(describeOp(op), async () => {
          const made = await createObject(http, RESOURCE_OF[op.kind], policyObject(op.kind, ns, op.name, op.targets, 0));
          if (made) return made;
          // Taken (409): by a copy, or by our own create of an earlier attempt whose answer was lost.
          const there = await getOrUndefined(http, objectPath(RESOURCE_OF[op.kind], ns, op.name));
          return there && there.metadata.annotations?.[POLICY_SYNCED_ANNOTATION] === undefined ? there : undefined;
        });
        op.created = created !== undefined;
        if (created) lives.push({ local: { spoke: op.spoke, kind: op.kind, tenant: op.tenant, name: op.name, targets: op.targets }, createdAt: t0, uid: created.metadata.uid ?? '', resourceVersion: created.metadata.resourceVersion ?? '' });
        break;
      }
      case 'local-delete': {
        const life = lives.find((l) => l.deletedAt === undefined && l.local.spoke === op.spoke && l.local.kind === op.kind && l.local.tenant === op.tenant && l.local.name === op.name);
        // Only the local policy this run created, by its uid: where its create was refused (409, a copy held the
        // name) the object of that name is the copy, and a team deletes its own policy, never the hub's copy.
        if (!life) break;
        life.deletedAt = t0;
        await retrying(describeOp(op), () =>
          deleteObject(spokes.get(op.spoke)!, RESOURCE_OF[op.kind], ns, op.name, { uid: life.uid }).catch((err: unknown) => {
            if (isConflict(err)) return false; // another object holds the name now: ours is gone
            throw err;
          }),
        );
        break;
      }
      case 'gateway-apply':
        await retrying(describeOp(op), () => apply(hub, RESOURCES.gateways, gatewayObject(names, op.tenant, op.name, op.className)));
        break;
      case 'gateway-delete':
        await retrying(describeOp(op), () => deleteObject(hub, RESOURCES.gateways, ns, op.name));
        break;
      case 'params-set':
        await retrying(describeOp(op), () => apply(hub, RESOURCES.configMaps, paramsObject(names, op.className, op.kinds)));
        break;
      case 'params-invalid': {
        await retrying(describeOp(op), () => apply(hub, RESOURCES.configMaps, paramsObject(names, op.className, 'invalid')));
        record(op, 'begin', t0);
        await sleep(op.holdMs);
        const kinds = state.classKinds[op.className];
        const t1 = Date.now();
        await retrying(describeOp(op), () => apply(hub, RESOURCES.configMaps, paramsObject(names, op.className, kinds)));
        record(op, 'end', t1);
        return;
      }
      case 'class-replace': {
        await retrying(describeOp(op), () => deleteObject(hub, RESOURCES.gatewayClasses, undefined, names.className(op.className)));
        record(op, 'begin', t0);
        await sleep(op.holdMs);
        const t1 = Date.now();
        await retrying(describeOp(op), () => apply(hub, RESOURCES.gatewayClasses, classObject(names, op.className)));
        record(op, 'end', t1);
        return;
      }
      case 'placement-replace': {
        await retrying(describeOp(op), () => deleteObject(hub, RESOURCES.placements, ns, 'spokes'));
        record(op, 'begin', t0);
        await sleep(op.holdMs);
        const t1 = Date.now();
        await retrying(describeOp(op), () => apply(hub, RESOURCES.placements, placementObject(names, op.tenant)));
        record(op, 'end', t1);
        return;
      }
      case 'binding-set':
        await retrying(describeOp(op), async () => {
          if (op.bound) await apply(hub, RESOURCES.managedClusterSetBindings, bindingObject(names, op.tenant));
          else await deleteObject(hub, RESOURCES.managedClusterSetBindings, ns, names.clusterSet);
        });
        break;
      case 'cluster-member':
        await retrying(describeOp(op), () => setMember(hub, names, op.spoke, op.member));
        break;
      case 'copy-drift': {
        const made = await driftCopy(op, ns);
        op.edited = made !== undefined;
        if (made) {
          drifts.push(made);
          driftWatch.track(made);
        } else driftsMissed += 1;
        break;
      }
    }
    record(op, 'whole', t0);
  };

  /**
   * Another hand's edit of a synced copy (ops.ts copy-drift), by the soak's own client — its user agent, so the audit
   * checks count it as the soak's write, never a foreign one — as field manager DRIFT_FIELD_MANAGER: a merge patch of
   * the marker's field, preconditioned on the resourceVersion of the copy just read (a copy, by its policy-synced
   * annotation: never a local policy of that name). Undefined when no copy ran there within DRIFT_FIND_MS.
   */
  const driftCopy = async (op: Extract<Op, { op: 'copy-drift' }>, ns: string): Promise<DriftRecord | undefined> => {
    const http = spokes.get(op.spoke)!;
    const id = copyId(op.spoke, op.kind, op.tenant, op.name);
    const last = lastDrift.get(id);
    if (last !== undefined && Date.now() - last < DRIFT_SPACING_MS) await sleep(DRIFT_SPACING_MS - (Date.now() - last));
    const path = objectPath(RESOURCE_OF[op.kind], ns, op.name);
    const value = driftValue(op.drift);
    const findBy = Date.now() + DRIFT_FIND_MS;
    const failBy = Date.now() + RETRY_FOR_MS;
    // Set once a patch is sent: its time is the edit's (a retry after a lost answer keeps the first).
    let sent: DriftRecord | undefined;
    for (let attempt = 0; ; attempt++) {
      if (Date.now() > failBy) throw new Error(`${describeOp(op)}: the spoke did not take the edit within ${RETRY_FOR_MS / 1000} s`);
      try {
        const copy = await getOrUndefined(http, path);
        if (!copy || copy.metadata.annotations?.[POLICY_SYNCED_ANNOTATION] === undefined || (sent && copy.metadata.uid !== sent.uid)) {
          // No copy (yet) to edit; or the one edited went.
          if (sent || Date.now() > findBy) return undefined;
          await sleep(250);
          continue;
        }
        // A patch whose answer was lost may have landed: the copy carries the edit already.
        if (sent && markerOf(op.kind, copy) === value) break;
        const tokenBefore = sent ? sent.tokenBefore : (await reapplyToken(hub, names.controllerName, op.spoke, op.kind, ns, op.name)).token;
        sent = {
          drift: op.drift,
          round: roundNo,
          spoke: op.spoke,
          kind: op.kind,
          tenant: op.tenant,
          name: op.name,
          editedAt: sent?.editedAt ?? Date.now(),
          uid: copy.metadata.uid ?? '',
          sentBefore: sent?.sentBefore ?? copyFingerprint(op.kind, copy),
          ...(tokenBefore === undefined ? {} : { tokenBefore }),
        };
        await mergePatch(http, RESOURCE_OF[op.kind], ns, op.name, { metadata: { resourceVersion: copy.metadata.resourceVersion }, spec: driftSpecPatch(op.kind, value) }, { fieldManager: DRIFT_FIELD_MANAGER });
        break;
      } catch (err) {
        // Changed (or gone) between the read and the patch: read again.
        if (isConflict(err) || isNotFound(err)) {
          await sleep(100);
          continue;
        }
        await sleep(Math.min(250 * 2 ** attempt, 2_000));
      }
    }
    if (!sent) return undefined;
    lastDrift.set(id, sent.editedAt);
    return sent;
  };

  const inject = async (fault: Fault): Promise<FaultSpan> => {
    const start = Date.now();
    const target = fault.target;
    const apiserver = (t: string): string => `kube-apiserver/${t}`;
    switch (fault.kind) {
      case 'none':
        break;
      case 'hub-kill': {
        const killed = await processes.killLeader();
        log(`  fault hub-kill: ${killed ?? 'no leader found'} SIGKILLed`);
        break;
      }
      case 'spoke-agent-stop':
        await processes.stopAgent(target as Spoke);
        await sleep(fault.holdMs);
        await processes.startAgent(target as Spoke);
        break;
      case 'registration-stop':
        await sandbox.stop(registrationAgent(target!));
        try {
          await sleep(fault.holdMs);
        } finally {
          await sandbox.start(registrationAgent(target!));
        }
        break;
      case 'spoke-apiserver-restart':
        await sandbox.restart(apiserver(target!));
        break;
      case 'hub-apiserver-restart-compaction': {
        const revision = await compactEtcd(sandbox);
        await sandbox.restart(apiserver('hub'));
        log(`  fault: etcd compacted at ${revision}, hub apiserver restarted`);
        break;
      }
      case 'watch-cut': {
        const port = new URL(sandbox.cluster(target!).server).port;
        // Resets every TCP connection to (and from) the apiserver: each client's watches are cut mid-stream.
        execFileSync('ss', ['-K', `( dport = :${port} or sport = :${port} )`], { stdio: 'ignore' });
        break;
      }
      case 'spoke-apiserver-freeze':
        sandbox.freeze(apiserver(target!), true);
        try {
          await sleep(fault.holdMs);
        } finally {
          sandbox.freeze(apiserver(target!), false);
        }
        break;
    }
    return { kind: fault.kind, ...(target ? { target } : {}), start, end: Date.now() };
  };

  /**
   * Until the spokes and the hub's annotations match the model; the ms it took, or undefined past the bound (with the
   * last differences). Each poll also notes the copies that run where the model wants none (`sightings`).
   */
  const converge = async (from: number, sightings: Map<string, UnwantedSighting>): Promise<{ ms?: number; diffs: string[] }> => {
    let diffs: string[] = ['not read yet'];
    let calm = 0;
    while (Date.now() - from < bound) {
      try {
        const objects = await spokeObjects(spokes, names);
        sightUnwanted(sightings, Date.now(), unwantedCopies(state, objects, names));
        diffs = [...spokeDiffs(state, objects, names), ...hubDiffs(state, await hubPolicies(hub, names), names)];
      } catch (err) {
        diffs = [`read failed: ${err instanceof Error ? err.message : String(err)}`];
      }
      calm = diffs.length === 0 ? calm + 1 : 0;
      // Twice in a row a second apart: a copy on its way out is not read as converged.
      if (calm >= 2) return { ms: Date.now() - from - 1_000, diffs };
      await sleep(1_000);
    }
    return { diffs };
  };

  let aborted: Error | undefined;
  try {
    if ((await processes.leader(600_000)) === undefined) throw new Error(`no hub replica took the lease within 600 s; logs in ${processes.logs}`);
    const freshBy = Date.now() + 180_000;
    while (!reports.reported()) {
      if (Date.now() > freshBy) throw new Error(`the spoke agents' reports did not reach the hub within 180 s; logs in ${processes.logs}`);
      await sleep(500);
    }
    log('hub leader elected, both spoke reports on the hub: starting');
    for (const [i, planned] of options.plan.rounds.entries()) {
      if (options.durationMs !== undefined && Date.now() - started > options.durationMs) break;
      const round: Round = structuredClone(planned);
      for (const op of round.ops) {
        if (op.op === 'local-create') delete op.created;
        if (op.op === 'copy-drift') delete op.edited;
      }
      executed.push(round);
      roundNo = i + 1;
      const roundStart = Date.now();
      const cursors = new Map(SPOKES.map((s) => [s, AuditCursor.at(sandbox, s)] as const));
      // Settled into a value: a fault failing while operations still run must not be an unhandled rejection.
      let faultTask: Promise<FaultSpan | Error> | undefined;
      const startFault = (): void => {
        faultTask = inject(round.fault).catch((err: unknown) => new Error(`fault ${round.fault.kind}: ${err instanceof Error ? err.message : String(err)}`, { cause: err }));
      };
      for (const [j, op] of round.ops.entries()) {
        if (j === round.fault.afterOps) startFault();
        await execute(op);
        opsByKind[op.op] = (opsByKind[op.op] ?? 0) + 1;
        opsRun += 1;
        await sleep(round.gaps[j] ?? 0);
      }
      if (!faultTask) startFault();
      const span = await faultTask!;
      if (span instanceof Error) throw span;
      faultsByKind[span.kind] = (faultsByKind[span.kind] ?? 0) + 1;
      saveExecuted();
      const stoppedAt = Date.now();
      const sightings = new Map<string, UnwantedSighting>();
      const result = await converge(stoppedAt, sightings);
      const endAt = Date.now();
      if (result.ms !== undefined) (convergenceMs[span.kind] ??= []).push(result.ms);
      else violations.push({ kind: 'convergence', at: new Date().toISOString(), message: `round ${i + 1} (fault ${span.kind}): not converged within ${bound / 1000} s: ${result.diffs.join('; ')}` });
      const writes = SPOKES.flatMap((s) => policyWrites(s, cursors.get(s)!.since(), names));
      writesChecked += writes.length;
      readWorkWrites();
      const deletions = checkDeletions(writes, timeline, availability.changes, (p) => lastHubWrite(p, false));
      deletionsChecked += deletions.checked;
      const takeovers = checkTakeovers(writes, lives, timeline);
      const objects = await spokeObjects(spokes, names);
      // The round's drift edits: reported Drifted (the status watch, else the hub's Events) and put back (checks.ts).
      await driftWatch.settle();
      driftWatch.clear();
      const roundDrifts = drifts.filter((x) => x.round === i + 1);
      // The hub has converged: a status write held behind its work writes (YieldingWrites) is made by now, or at once.
      // A moment's grace for the watch to deliver it.
      for (const by = Date.now() + DRIFT_REPORT_GRACE_MS; Date.now() < by && roundDrifts.some((d) => driftStatusWitness(d, truth.sightings) === undefined); ) await sleep(250);
      const driftFound: Violation[] = [];
      let events: KubeObject[] | undefined;
      for (const d of roundDrifts) {
        const byStatus = driftStatusWitness(d, truth.sightings);
        if (byStatus !== undefined) Object.assign(d, { reportedAt: byStatus, reportedBy: 'status' });
        else {
          events ??= await hubEvents(hub, names).catch(() => []);
          const byEvent = driftEventWitness(d, events, names);
          if (byEvent !== undefined) Object.assign(d, { reportedAt: byEvent, reportedBy: 'event' });
        }
        const after = await reapplyToken(hub, names.controllerName, d.spoke, d.kind, names.namespace(d.tenant), d.name).catch(() => ({ found: false, token: undefined }));
        if (after.token !== undefined) d.tokenAfter = after.token;
        const judged = judgeDrift(d, timeline, endAt);
        judgements.push(judged);
        driftFound.push(...judged.violations);
      }
      // The lingering bound: copies that ran where the model wants none after the faults stopped.
      const lingered = checkLingering([...sightings.values()], i + 1, stoppedAt, endAt, LINGER_BOUND_MS);
      unwantedSeen += lingered.figures.length;
      for (const f of lingered.figures.filter((x) => x.ranMs >= LINGER_SHOWN_MS)) {
        const policy = policyKey(f.kind, f.tenant, f.name);
        const said = truth.sightings.find((t) => t.policy === policy && t.cluster === f.spoke && t.reason === 'Lingering' && t.at >= roundStart);
        const mended = mends.sightings.some((m) => m.cluster === f.spoke && m.resource === RESOURCE_OF[f.kind].resource && m.source === `${names.namespace(f.tenant)}/${f.name}` && m.at >= roundStart);
        lingering.push({ ...f, ...(said ? { saidLingeringMs: said.at - stoppedAt } : {}), mended });
      }
      const found = [...deletions.violations, ...takeovers.violations, ...checkJoins(writes, lives, timeline, (p) => lastHubWrite(p, true)), ...checkCrossings(objects), ...driftFound, ...lingered.violations];
      violations.push(...found);
      races.push(...takeovers.races);
      log(
        `round ${i + 1}: ${round.ops.length} ops, fault ${span.kind}${span.target ? ` on ${span.target}` : ''}; ` +
          `${result.ms !== undefined ? `converged in ${result.ms} ms` : 'NOT converged'}; writes ${writes.length}, deletions ${deletions.checked}; violations ${found.length + (result.ms === undefined ? 1 : 0)}`,
      );
      for (const v of found) log(`  VIOLATION ${v.kind}: ${v.message}`);
      if (result.ms === undefined) log(`  VIOLATION convergence: ${result.diffs.join('; ')}`);
    }
    violations.push(...checkLocalsIntact(lives, await spokeObjects(spokes, names), names));
  } catch (err) {
    aborted = err instanceof Error ? err : new Error(String(err));
  } finally {
    saveExecuted();
    reports.stop();
    driftWatch.stop();
    await truth.stop();
    await mends.stop();
    await availability.stop();
    await processes.stop();
    if (!options.keep) {
      await tearDownWorld(hub, spokes, names, () => ourWorkObjects(hub, { controllerName: names.controllerName })).catch((err: unknown) => log(`tear-down: ${String(err)}`));
    }
    hub.destroy();
    for (const s of spokes.values()) s.destroy();
  }
  if (aborted) throw aborted;
  const result: SoakResult = {
    seed: options.plan.seed,
    run: names.run,
    rounds: executed.length,
    ops: opsRun,
    opsByKind,
    faultsByKind,
    deletionsChecked,
    writesChecked,
    violations,
    races,
    convergenceMs,
    drifts: driftFigures(judgements, driftsMissed),
    lingering,
    unwantedSeen,
    elapsedMs: Date.now() - started,
    executedFile,
    logs: processes.logs,
  };
  writeFileSync(join(dir, 'result.json'), JSON.stringify({ ...result, restarts: processes.restarts() }, null, 1));
  // Each drift edit, its judgement, and what the hub said of its cluster from a second before the edit to 10 s after.
  const driftLog = judgements.map((j) => {
    const d = j.record;
    const policy = policyKey(d.kind, d.tenant, d.name);
    const said = truth.history.filter((h) => h.policy === policy && h.cluster === d.spoke && h.at >= d.editedAt - 1_000 && h.at <= d.editedAt + 10_000);
    return { ...j, hubSaid: said.map((h) => ({ afterMs: h.at - d.editedAt, state: h.state, reason: h.reason })) };
  });
  writeFileSync(join(dir, 'drifts.json'), JSON.stringify(driftLog, null, 1));
  return result;
}

/** p-th percentile (nearest rank) of `values`. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** The drift figures of a run from its judgements. */
export function driftFigures(judgements: readonly DriftJudgement[], missed: number): DriftFigures {
  const excused: Record<string, number> = {};
  for (const j of judgements) if (j.excused) excused[j.excused] = (excused[j.excused] ?? 0) + 1;
  const records = judgements.map((j) => j.record);
  return {
    injected: judgements.length,
    missed,
    reported: judgements.filter((j) => j.reported).length,
    reportedByEvent: records.filter((d) => d.reportedBy === 'event').length,
    putBack: judgements.filter((j) => j.putBack).length,
    relabelled: records.filter((d) => d.tokenAfter !== undefined && d.tokenAfter !== d.tokenBefore).length,
    excused,
    toReportMs: records.flatMap((d) => (d.reportedAt === undefined ? [] : [Math.max(0, d.reportedAt - d.editedAt)])),
    toPutBackMs: records.flatMap((d) => (d.putBackAt === undefined ? [] : [d.putBackAt - d.editedAt])),
  };
}
