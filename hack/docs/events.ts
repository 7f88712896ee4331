// The reference table of the Events the hub records. Event reasons are not declared in one place in the
// program: the hub records the Events src/core/status/transitions.ts derives from a policy's status (a
// cluster entering a state, a rollout moving) and one Warning per new problem, whose reasons are string
// literals where each problem is found. So this is a static scan of src/ (tests and the CLI left out),
// and rendering fails when it finds a reason with no meaning written here, or a meaning for a reason no
// longer found — or when transitions.ts no longer reads as the scan expects.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { code, table } from './markdown.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');
const TRANSITIONS = join(SRC, 'core', 'status', 'transitions.ts');

/** When each Event is recorded: the one part of the table not read from the program. */
export const EVENT_MEANINGS: Record<string, string> = {
  Enforced: 'a cluster became Enforced',
  Overridden: 'a cluster became Overridden',
  Failed: 'a cluster became Failed; the message names the cluster and its reason',
  ClusterUnknown: 'a cluster became Unknown',
  Drifted: 'a cluster\'s copy runs not as the hub sent it (its spoke agent\'s fresh report): the fields and the field managers that changed them',
  Lingering: 'a copy of the policy runs on a cluster where no work of this hub places it (the work agent left it behind)',
  RolloutProgressing: 'a `Progressive` rollout started a wave (a new revision, the next wave, or a halt lifted): the revision, the wave and its clusters',
  RolloutHalted: 'it halted: the cluster, its controller\'s reason and message, and what the halt did',
  RolloutComplete: 'every wave passed and no joined cluster is held (none for a policy first seen complete)',
  TargetNotSynced: 'a target cannot be synced (`CrossNamespace`, `NotAGateway`, `KindNotSynced`, `Invalid`, `InvalidDownstreamNamespace`)',
  NamespaceMismatch: 'targets whose Gateways render different downstream namespaces on one cluster: one is kept',
  NoClusters: 'the targeted Gateways are placed on no cluster',
  NotSynced: 'no target can be synced: the policy has no ManifestWorks',
  PlacementRefused: 'a decision not owned by the Placement, or a cluster of a set not bound to the namespace',
  DownstreamGatewayConflict: 'two hub Gateways would be one downstream Gateway; also on both Gateways',
  SpokeReportRefused: 'a spoke\'s report broke its schema or a cap, or its heartbeat is unreadable',
  InvalidRolloutStrategy: 'the policy\'s `policysync.kuadrant.io/rollout-strategy` is invalid: the class\'s strategy stays in force',
  NoObservedGeneration: 'the policy selects `Progressive` by annotation for a kind whose CRD cannot say which generation its controller observed',
  InvalidVariant: 'a PolicyVariant of the policy does not parse (its field named): every cluster of the policy keeps the copy it runs',
};

export interface FoundReason {
  reason: string;
  type: 'Normal' | 'Warning';
  /** Where the scan found it, relative to the repository. */
  files: string[];
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return path === join(SRC, 'cli') ? [] : sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every Event reason the hub can record, by a scan of the source. */
export function scanEventReasons(): FoundReason[] {
  const found = new Map<string, FoundReason>();
  const add = (reason: string, type: FoundReason['type'], file: string): void => {
    const entry = found.get(reason) ?? { reason, type, files: [] };
    const rel = relative(ROOT, file);
    if (!entry.files.includes(rel)) entry.files.push(rel);
    found.set(reason, entry);
  };

  const transitions = readFileSync(TRANSITIONS, 'utf8');
  const states = /type: ('\w+'(?: \| '\w+')*);/.exec(transitions);
  const naming = /t\.type === 'Enforced' \? 'Normal' : 'Warning'/.test(transitions) && /reason: SPOKE_TRUTH_REASONS\.has\(t\.reason\) \? t\.reason : t\.type === 'Unknown' \? '(\w+)' : t\.type/.exec(transitions);
  // Reasons of the spoke's truth (a cluster coming to Drifted or Lingering) are Events of their own, Warnings.
  const truth = /const SPOKE_TRUTH_REASONS[^=]*= new Set\(\[([A-Z_, ]+)\]\)/.exec(transitions);
  const statusText = readFileSync(join(SRC, 'core', 'status', 'policystatus.ts'), 'utf8');
  const problemsAsWarnings = /type: 'Warning', reason: p\.reason/.test(transitions);
  if (!states || !naming || !problemsAsWarnings || !truth) throw new Error(`hack/docs/events.ts: ${relative(ROOT, TRANSITIONS)} no longer reads as the Event scan expects; update the scan`);
  for (const state of states[1]!.split(' | ').map((s) => s.slice(1, -1))) {
    add(state === 'Unknown' ? naming[1]! : state, state === 'Enforced' ? 'Normal' : 'Warning', TRANSITIONS);
  }
  for (const m of transitions.matchAll(/type: '(Normal|Warning)', reason: '(\w+)'/g)) add(m[2]!, m[1] as FoundReason['type'], TRANSITIONS);
  for (const name of truth[1]!.split(',').map((n) => n.trim())) {
    const value = new RegExp(`export const ${name} = '(\\w+)'`).exec(statusText)?.[1];
    if (value === undefined) throw new Error(`hack/docs/events.ts: ${name} is no constant of src/core/status/policystatus.ts; update the scan`);
    add(value, 'Warning', TRANSITIONS);
  }

  const files = sources(SRC);
  const constants = new Map<string, string>();
  for (const file of files) for (const m of readFileSync(file, 'utf8').matchAll(/export const (\w+_REASON) = '(\w+)'/g)) constants.set(m[1]!, m[2]!);
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    // A problem: pushed onto a `problems` list, or returned as `problem`; its reason a literal or a *_REASON constant.
    for (const m of text.matchAll(/(?:problems\.push\(\{|problem: \{) reason: (?:'(\w+)'|(\w+_REASON))/g)) {
      const reason = m[1] ?? constants.get(m[2]!);
      if (reason === undefined) throw new Error(`hack/docs/events.ts: ${m[2]} in ${relative(ROOT, file)} is no *_REASON constant the scan found`);
      add(reason, 'Warning', file);
    }
    // A lane conflict is a problem built apart from the others (statusinput.ts).
    for (const m of text.matchAll(/\(\{ reason: (\w+_REASON), message: l\.message \}\)/g)) add(constants.get(m[1]!)!, 'Warning', file);
  }
  return [...found.values()];
}

export function eventsTable(): string {
  const found = scanEventReasons();
  const missing = found.filter((f) => EVENT_MEANINGS[f.reason] === undefined).map((f) => f.reason);
  const stale = Object.keys(EVENT_MEANINGS).filter((r) => !found.some((f) => f.reason === r));
  if (missing.length > 0 || stale.length > 0) {
    throw new Error(`hack/docs/events.ts: write when ${missing.join(', ') || '(none)'} is recorded; drop ${stale.join(', ') || '(none)'}, which the scan no longer finds`);
  }
  const order = Object.keys(EVENT_MEANINGS);
  found.sort((a, b) => order.indexOf(a.reason) - order.indexOf(b.reason));
  return table(
    ['reason', 'type', 'when'],
    found.map((f) => [code(f.reason), f.type, EVENT_MEANINGS[f.reason]!]),
  );
}
