// The reference table of the GatewayClass params document, walked from its zod schema
// (src/core/params/params.ts, src/core/params/strategy.ts) with the defaults the code applies. The
// schema says the fields, their types and limits; what each means is written here, and rendering fails
// when a field has no meaning written or a meaning names a field the schema no longer has.
import { z } from 'zod';
import { DEFAULT_DOWNSTREAM_NAMESPACE, paramsSchema } from '../../src/core/params/params.ts';
import { ALL, toRolloutStrategy, type ClusterCount } from '../../src/core/params/strategy.ts';
import { formatDuration } from '../../src/core/k8s/duration.ts';
import { code, table } from './markdown.ts';

type Schema = {
  type?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
  maxItems?: number;
  maxLength?: number;
  pattern?: string;
};

/** Fields that take another field's shape: named, not walked again (rendering checks the shapes agree). */
const ALIASES: Record<string, string> = { experimentalPolicySync: 'policiesToSync' };
/** Fields told as a whole, not field by field. */
const WHOLE: Record<string, string> = { 'rolloutStrategy.progressive.canary': 'label selector (`matchLabels`, `matchExpressions`)' };

/** What each field means: the one part of the table not read from the program. */
export const PARAM_MEANINGS: Record<string, string> = {
  policiesToSync: 'the kinds to sync; required (or its alias); each resource (group and resource) once',
  'policiesToSync[].group': 'API group, `""` for core',
  'policiesToSync[].version': 'the version to read and write; switching it re-applies the copies in place',
  'policiesToSync[].resource': 'the plural resource, e.g. `authpolicies`',
  'policiesToSync[].statusFeedback':
    'extra feedback rules `{name, path}` of this kind, e.g. `{"name": "limitsTotal", "path": ".status.limits"}`; their values show per cluster in the status annotation, `policy-sync status -o json` and `explain`',
  'policiesToSync[].statusFeedback[].name': 'the value\'s name: not a built-in feedback rule\'s name (`revision` included), once per kind',
  'policiesToSync[].statusFeedback[].path': 'a JSONPath into the spoke copy, starting with `.`',
  experimentalPolicySync: 'an alias of `policiesToSync` (the Kuadrant RFC\'s name); set one of them',
  downstreamClass: 'MGC\'s key, accepted and ignored',
  downstreamNamespace:
    'the spoke namespace of the downstream Gateway and the copies; `{namespace}` (the only placeholder) is the hub Gateway\'s namespace; must render a DNS-1123 label (MGC used `kuadrant-{namespace}`)',
  drift:
    'what the hub does with a copy a spoke changed: `Correct` reports the cluster `Drifted` and has the work agent put the copy back at once, `Report` reports it and leaves it ([what runs on a spoke](../concepts/status.md#what-runs-on-a-spoke))',
  rolloutStrategy: 'how a new revision of a policy reaches its clusters ([rollout](../concepts/rollout.md)); a policy may override it by annotation',
  'rolloutStrategy.type': 'at once, or in waves gated on each cluster\'s controller',
  'rolloutStrategy.progressive': 'only with `Progressive`; a field left out takes its default',
  'rolloutStrategy.progressive.canary': 'ManagedClusters reached first',
  'rolloutStrategy.progressive.maxConcurrency': 'clusters per wave: a count (`"2"`) or a percentage of the policy\'s clusters (`"25%"`), rounded down, at least 1',
  'rolloutStrategy.progressive.minSuccessTime': 'how long a cluster\'s success must last before it counts',
  'rolloutStrategy.progressive.progressDeadline':
    'a cluster with no success this long after its work was last written fails; `None` waits for ever; left out: the default, or `minSuccessTime` when longer; zero or below `minSuccessTime` is refused, naming the field',
  'rolloutStrategy.progressive.maxFailures': 'failed clusters tolerated (a count or a percentage) before the rollout halts',
  'rolloutStrategy.progressive.successWhen': 'what a cluster\'s controller must say',
  'rolloutStrategy.progressive.onFailure': 'what a halt does to the clusters reached: keep the new revision, or return to the previous copy',
};

function count(c: ClusterCount): string {
  return 'count' in c ? String(c.count) : `${c.percent}%`;
}

/** The defaults the code applies to fields left out, as a user would write them. */
function defaults(): Record<string, string> {
  const progressive = toRolloutStrategy({ type: 'Progressive' });
  if (progressive.type !== 'Progressive') throw new Error('toRolloutStrategy no longer gives a Progressive strategy');
  return {
    downstreamNamespace: DEFAULT_DOWNSTREAM_NAMESPACE,
    drift: 'Correct',
    rolloutStrategy: JSON.stringify(ALL),
    'rolloutStrategy.progressive.maxConcurrency': count(progressive.maxConcurrency),
    'rolloutStrategy.progressive.minSuccessTime': progressive.minSuccessTimeMs === 0 ? '0' : formatDuration(progressive.minSuccessTimeMs),
    'rolloutStrategy.progressive.progressDeadline': progressive.progressDeadlineMs === undefined ? 'None' : formatDuration(progressive.progressDeadlineMs),
    'rolloutStrategy.progressive.maxFailures': count(progressive.maxFailures),
    'rolloutStrategy.progressive.successWhen': progressive.successWhen,
    'rolloutStrategy.progressive.onFailure': progressive.onFailure,
  };
}

function typeOf(s: Schema): string {
  if (s.enum) return s.enum.map((v) => code(String(v))).join(' or ');
  if (s.type === 'array') return 'list';
  return s.type ?? '';
}

function limitsOf(s: Schema, required: boolean): string {
  const limits: string[] = [];
  if (required) limits.push('required');
  if (s.maxItems !== undefined) limits.push(`at most ${s.maxItems}`);
  if (s.maxLength !== undefined) limits.push(`≤ ${s.maxLength} characters`);
  if (s.pattern !== undefined) limits.push(code(s.pattern));
  return limits.join(', ');
}

interface Field {
  path: string;
  schema: Schema;
  required: boolean;
}

function fields(schema: Schema, prefix = ''): Field[] {
  const out: Field[] = [];
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    out.push({ path, schema: child, required: schema.required?.includes(name) ?? false });
    if (path in ALIASES || path in WHOLE) continue;
    const inner = child.type === 'array' ? child.items : child;
    if (inner?.properties) out.push(...fields(inner, child.type === 'array' ? `${path}[]` : path));
  }
  return out;
}

export function paramsTable(): string {
  const schema = z.toJSONSchema(paramsSchema, { io: 'input' }) as Schema;
  for (const [alias, of] of Object.entries(ALIASES)) {
    if (JSON.stringify(schema.properties?.[alias]) !== JSON.stringify(schema.properties?.[of])) throw new Error(`params: ${alias} no longer has the shape of ${of}`);
  }
  const all = fields(schema);
  const missing = all.filter((f) => PARAM_MEANINGS[f.path] === undefined).map((f) => f.path);
  const stale = Object.keys(PARAM_MEANINGS).filter((p) => !all.some((f) => f.path === p));
  if (missing.length > 0 || stale.length > 0) {
    throw new Error(`hack/docs/params.ts: write the meaning of ${missing.join(', ') || '(none)'}; drop the meaning of ${stale.join(', ') || '(none)'}`);
  }
  const given = defaults();
  return table(
    ['field', 'type', 'limits', 'default', ''],
    all.map((f) => [code(f.path), WHOLE[f.path] ?? typeOf(f.schema), limitsOf(f.schema, f.required), given[f.path] === undefined ? '' : code(given[f.path]!), PARAM_MEANINGS[f.path]!]),
  );
}
