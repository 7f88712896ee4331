// Runs a soak plan on the real plane: sets the world up, starts the hub replicas and spoke agents as
// processes, then round by round performs the operations (recording the model's state after each, with the
// time it was sent), injects the round's fault and lifts it, waits for the spokes and the hub's status to
// match the model (timed: the convergence figures), and judges the round's audited spoke writes (checks.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeHttp, isConflict } from '../../src/kube/http.ts';
import { RESOURCES, objectPath } from '../../src/kube/resource.ts';
import { AuditCursor } from '../audit.ts';
import { compactEtcd } from '../etcd.ts';
import { registrationAgent } from '../sandbox/registration.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import { ourWorkObjects } from '../works.ts';
import {
  checkCrossings,
  checkDeletions,
  checkJoins,
  checkLocalsIntact,
  checkTakeovers,
  hubDiffs,
  policyWrites,
  spokeDiffs,
  type FaultSpan,
  type Snapshot,
  type Violation,
} from './checks.ts';
import { AvailabilityWatch, ReportWatch, getOrUndefined, hubPolicies, spokeObjects, type LocalLife } from './evidence.ts';
import { POLICY_SYNCED_ANNOTATION } from '../../src/core/metadatakeys.ts';
import { applyOp, initialState, type ModelState, type Phase } from './model.ts';
import { SPOKES, type Fault, type Op, type Round, type SoakPlan, type Spoke } from './ops.ts';
import { SoakProcesses } from './processes.ts';
import {
  RESOURCE_OF,
  SOAK_USER_AGENT,
  SoakNames,
  apply,
  bindingObject,
  classObject,
  createObject,
  deleteObject,
  gatewayObject,
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
  elapsedMs: number;
  /** The executed plan (replay with `npm run soak -- --replay <file>`). */
  executedFile: string;
  logs: string;
}

const RETRY_FOR_MS = 120_000;

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
  const executedFile = join(dir, 'executed.json');
  const saveExecuted = (): void => writeFileSync(executedFile, JSON.stringify({ seed: options.plan.seed, rounds: executed }, null, 1));

  log(`run ${names.run}, seed ${options.plan.seed}: ${options.plan.rounds.length} rounds planned; artifacts in ${dir}`);
  await setUpWorld(hub, spokes, names, state);
  const processes = await SoakProcesses.start(sandbox, names, SPOKES, join(dir, 'logs'));
  const reports = new ReportWatch(hub, names, () => lives);
  reports.start();
  // Whether OCM vouches for each spoke, as its ManagedCluster says: the doubt the deletion check allows for.
  const availability = new AvailabilityWatch(hub).start();
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
    }
    record(op, 'whole', t0);
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

  /** Until the spokes and the hub's annotations match the model; the ms it took, or undefined past the bound (with the last differences). */
  const converge = async (): Promise<{ ms?: number; diffs: string[] }> => {
    const from = Date.now();
    let diffs: string[] = ['not read yet'];
    let calm = 0;
    while (Date.now() - from < bound) {
      try {
        diffs = [...spokeDiffs(state, await spokeObjects(spokes, names), names), ...hubDiffs(state, await hubPolicies(hub, names), names)];
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
      for (const op of round.ops) if (op.op === 'local-create') delete op.created;
      executed.push(round);
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
      const result = await converge();
      if (result.ms !== undefined) (convergenceMs[span.kind] ??= []).push(result.ms);
      else violations.push({ kind: 'convergence', at: new Date().toISOString(), message: `round ${i + 1} (fault ${span.kind}): not converged within ${bound / 1000} s: ${result.diffs.join('; ')}` });
      const writes = SPOKES.flatMap((s) => policyWrites(s, cursors.get(s)!.since(), names));
      writesChecked += writes.length;
      const deletions = checkDeletions(writes, timeline, availability.changes);
      deletionsChecked += deletions.checked;
      const takeovers = checkTakeovers(writes, lives, timeline);
      const objects = await spokeObjects(spokes, names);
      const found = [...deletions.violations, ...takeovers.violations, ...checkJoins(writes, lives, timeline), ...checkCrossings(objects)];
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
    elapsedMs: Date.now() - started,
    executedFile,
    logs: processes.logs,
  };
  writeFileSync(join(dir, 'result.json'), JSON.stringify({ ...result, restarts: processes.restarts() }, null, 1));
  return result;
}

/** p-th percentile (nearest rank) of `values`. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
