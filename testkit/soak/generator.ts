// The soak's generator: from a seed, rounds of what users and the fleet do, each with a fault. Pure: the same
// seed and options give the same plan. It keeps the model's state as it goes, only to choose operations that
// make sense (delete what exists, create what does not); the model decides nothing here.
import { Prng } from './prng.ts';
import { applyOp, expected, copyId, initialState, localKey, type ModelState } from './model.ts';
import {
  CLASSES,
  FAULT_KINDS,
  GATEWAYS,
  HUB_POLICY_NAMES,
  KINDS,
  LOCAL_POLICY_NAMES,
  SPOKES,
  TENANTS,
  policyKey,
  type Fault,
  type FaultKind,
  type Kind,
  type Op,
  type Round,
  type SoakPlan,
  type Target,
} from './ops.ts';

export interface GeneratorOptions {
  seed: number;
  /** Operations in all (the last round may end past it). */
  ops: number;
  /** The faults to draw from (default: every kind). */
  faults?: readonly FaultKind[];
  /** Operations per round (default 3–7). */
  opsPerRound?: [number, number];
  /** How each round's fault kind is chosen: drawn by weight (default), or each kind in turn, so that a short
   *  run (the suite's) meets every kind once in as many rounds as there are kinds. */
  faultOrder?: 'drawn' | 'in-turn';
}

const SINGLE_TARGETS: readonly Target[] = [
  { gateway: 'gw1' },
  { gateway: 'gw2' },
  { gateway: 'gw2', sectionName: 'api' },
  { gateway: 'gw2', sectionName: 'http' },
  { gateway: 'gw1', sectionName: 'http' },
];

const FAULT_WEIGHTS: Record<FaultKind, number> = {
  none: 2,
  'hub-kill': 2,
  'spoke-agent-stop': 2,
  'registration-stop': 0.7,
  'spoke-apiserver-restart': 1.5,
  'hub-apiserver-restart-compaction': 1,
  'watch-cut': 2,
  'spoke-apiserver-freeze': 1.5,
};

export function generate(options: GeneratorOptions): SoakPlan {
  const rng = new Prng(options.seed);
  const faults = options.faults ?? FAULT_KINDS;
  const [lo, hi] = options.opsPerRound ?? [3, 7];
  let state = initialState();
  let marker = 0;
  let drift = 0;
  const rounds: Round[] = [];
  let total = 0;
  while (total < options.ops) {
    const n = rng.int(lo, hi);
    const ops: Op[] = [];
    const gaps: number[] = [];
    // One drift edit per copy a round: a second one by the same hand on the same field within ten seconds would be
    // the "hand fighting the put-back" the hub deliberately puts back only once (core/spoke/spoketruth.ts driftToken).
    const drifted = new Set<string>();
    const counters = { marker: () => ++marker, drift: () => ++drift };
    for (let i = 0; i < n; i++) {
      const op = nextOp(rng, state, counters, drifted);
      if (op.op === 'copy-drift') drifted.add(copyId(op.spoke, op.kind, op.tenant, op.name));
      ops.push(op);
      gaps.push(rng.int(0, 1500));
      state = applyOp(state, op);
    }
    total += n;
    const inTurn = options.faultOrder === 'in-turn' ? faults[rounds.length % faults.length] : undefined;
    rounds.push({ ops, gaps, fault: nextFault(rng, faults, n, inTurn) });
  }
  return { seed: options.seed, rounds };
}

function nextFault(rng: Prng, kinds: readonly FaultKind[], opCount: number, inTurn?: FaultKind): Fault {
  const kind = inTurn ?? rng.weighted(kinds.map((k) => [k, FAULT_WEIGHTS[k]] as const));
  const afterOps = rng.int(0, opCount);
  switch (kind) {
    case 'spoke-agent-stop':
      return { kind, target: rng.pick(SPOKES), afterOps, holdMs: rng.int(4_000, 15_000) };
    case 'registration-stop':
      return { kind, target: rng.pick(SPOKES), afterOps, holdMs: 40_000 };
    case 'spoke-apiserver-restart':
      return { kind, target: rng.pick(SPOKES), afterOps, holdMs: 0 };
    case 'spoke-apiserver-freeze':
      return { kind, target: rng.pick(SPOKES), afterOps, holdMs: rng.int(4_000, 10_000) };
    case 'watch-cut':
      return { kind, target: rng.pick(['hub', ...SPOKES] as const), afterOps, holdMs: 0 };
    default:
      return { kind, afterOps, holdMs: 0 };
  }
}

/** What is switched off (a tenant unbound, a spoke out of the set, a Gateway deleted), to be switched on again. */
function restorations(s: ModelState): Op[] {
  return [
    ...TENANTS.filter((t) => !s.bound[t]).map((tenant): Op => ({ op: 'binding-set', tenant, bound: true })),
    ...SPOKES.filter((sp) => !s.member[sp]).map((spoke): Op => ({ op: 'cluster-member', spoke, member: true })),
    ...TENANTS.flatMap((tenant) => GATEWAYS.filter((g) => s.gateways[`${tenant}/${g}`] === undefined).map((name): Op => ({ op: 'gateway-apply', tenant, name, className: 'a' }))),
  ];
}

interface Counters {
  marker: () => number;
  drift: () => number;
}

function nextOp(rng: Prng, s: ModelState, counters: Counters, driftedThisRound: ReadonlySet<string>): Op {
  // The fleet mostly on: what was switched off comes back after a few operations, as in a real fleet.
  const restore = restorations(s);
  if (restore.length > 0 && rng.chance(0.25)) return rng.pick(restore);
  for (;;) {
    const choice = rng.weighted([
      ['policy-apply', 30],
      ['policy-delete', 8],
      ['local-create', 14],
      ['local-delete', 9],
      ['gateway-apply', 4],
      ['gateway-delete', 2],
      ['params-set', 3],
      ['params-invalid', 1.5],
      ['class-replace', 1],
      ['placement-replace', 1],
      ['binding-set', 2],
      ['cluster-member', 4],
      ['copy-drift', 6],
    ] as const);
    const op = tryOp(rng, s, choice, counters, driftedThisRound);
    if (op) return op;
  }
}

function targetsFor(rng: Prng, kind: Kind): Target[] {
  if (kind !== 'soak') return [rng.pick(SINGLE_TARGETS)];
  const chosen = rng.subset(SINGLE_TARGETS);
  return chosen.slice(0, 3);
}

function labelsFor(rng: Prng): Record<string, string> {
  const labels: Record<string, string> = {};
  if (rng.chance(0.5)) labels['soak.policysync.io/team'] = rng.pick(['red', 'blue']);
  if (rng.chance(0.3)) labels['soak.policysync.io/tier'] = rng.pick(['gold', 'silver']);
  return labels;
}

function tryOp(rng: Prng, s: ModelState, choice: Op['op'], counters: Counters, driftedThisRound: ReadonlySet<string>): Op | undefined {
  const nextMarker = counters.marker;
  const tenant = rng.pick(TENANTS);
  const kind = rng.pick(KINDS);
  const spoke = rng.pick(SPOKES);
  switch (choice) {
    case 'policy-apply': {
      const name = rng.pick(HUB_POLICY_NAMES[kind]);
      const existing = s.policies[policyKey(kind, tenant, name)];
      if (!existing) return { op: 'policy-apply', kind, tenant, name, targets: targetsFor(rng, kind), marker: nextMarker(), labels: labelsFor(rng) };
      // An edit (the spec's marker), a relabel, or a retarget: one at a time, as people change things.
      const what = rng.weighted([['edit', 3], ['relabel', 2], ['retarget', 2]] as const);
      return {
        op: 'policy-apply',
        kind,
        tenant,
        name,
        targets: what === 'retarget' ? targetsFor(rng, kind) : existing.targets,
        marker: what === 'edit' ? nextMarker() : existing.marker,
        labels: what === 'relabel' ? labelsFor(rng) : existing.labels,
      };
    }
    case 'policy-delete': {
      const existing = Object.values(s.policies);
      if (existing.length === 0) return undefined;
      const p = rng.pick(existing);
      return { op: 'policy-delete', kind: p.kind, tenant: p.tenant, name: p.name };
    }
    case 'local-create': {
      const name = rng.pick(LOCAL_POLICY_NAMES[kind]);
      if (s.locals[localKey(spoke, kind, tenant, name)]) return undefined;
      // A same-named local policy only where no copy of that name is wanted now: a team takes a name that is
      // free. (Where a copy still runs, its create is refused, 409, and the runner records that.)
      if (expected(s).copies.has(copyId(spoke, kind, tenant, name))) return undefined;
      return { op: 'local-create', spoke, kind, tenant, name, targets: targetsFor(rng, kind) };
    }
    case 'local-delete': {
      const existing = Object.values(s.locals);
      if (existing.length === 0) return undefined;
      const l = rng.pick(existing);
      return { op: 'local-delete', spoke: l.spoke, kind: l.kind, tenant: l.tenant, name: l.name };
    }
    case 'gateway-apply': {
      const name = rng.pick(GATEWAYS);
      const current = s.gateways[`${tenant}/${name}`];
      const className = current === undefined ? rng.pick(CLASSES) : current === 'a' ? 'b' : 'a';
      return { op: 'gateway-apply', tenant, name, className };
    }
    case 'gateway-delete': {
      const name = rng.pick(GATEWAYS);
      if (s.gateways[`${tenant}/${name}`] === undefined) return undefined;
      return { op: 'gateway-delete', tenant, name };
    }
    case 'params-set': {
      const className = rng.pick(CLASSES);
      const kinds = KINDS.filter((k) => k === 'auth' || rng.chance(0.7));
      if (kinds.join() === s.classKinds[className].join()) return undefined;
      return { op: 'params-set', className, kinds };
    }
    case 'params-invalid':
      return { op: 'params-invalid', className: rng.pick(CLASSES), holdMs: rng.int(2_000, 8_000) };
    case 'class-replace':
      return { op: 'class-replace', className: rng.pick(CLASSES), holdMs: rng.int(2_000, 8_000) };
    case 'placement-replace':
      return { op: 'placement-replace', tenant, holdMs: rng.int(2_000, 6_000) };
    case 'binding-set':
      return { op: 'binding-set', tenant, bound: !s.bound[tenant] };
    case 'cluster-member': {
      // Keep at least one member most of the time: a fleet with no cluster tests little.
      const member = !s.member[spoke];
      if (!member && !s.member[spoke === 'spoke-1' ? 'spoke-2' : 'spoke-1'] && rng.chance(0.8)) return undefined;
      return { op: 'cluster-member', spoke, member };
    }
    case 'copy-drift': {
      // A copy the model wants on its spoke, edited there by another hand.
      const copies = [...expected(s).copies.values()].filter((c) => !driftedThisRound.has(copyId(c.spoke, c.kind, c.tenant, c.name)));
      if (copies.length === 0) return undefined;
      const c = rng.pick(copies);
      return { op: 'copy-drift', spoke: c.spoke, kind: c.kind, tenant: c.tenant, name: c.name, drift: counters.drift() };
    }
  }
}
