// Writes as the hub apiserver counts them: `apiserver_request_total` by verb × resource, read before and
// after a window. The counter has no client label (no user to tell clients apart), so the apiserver's own
// periodic writes, create-only reviews and other components' writes are kept apart, and a caller's own
// writes in a window are named and subtracted by it (withoutOwn).
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { metricsText, samples } from './metrics.ts';

/**
 * `apiserver_request_total` verbs that do not write. Every other value counts as a write, so a verb
 * this list does not know is caught rather than ignored. kube-apiserver 1.34 reports GET, LIST, WATCH
 * (WATCHLIST folded in) for reads and POST, PUT, PATCH, APPLY (a PATCH of `application/apply-patch+yaml`),
 * DELETE, DELETECOLLECTION for writes — never the authorization verbs CREATE/UPDATE.
 */
const READ_VERBS = new Set(['GET', 'LIST', 'WATCH', 'WATCHLIST']);

/**
 * Create-only "review" resources: POSTed, answered, never persisted. The GatewayClass reconciler
 * checks `list`/`watch` on each kind with a SelfSubjectAccessReview on every pass (docs/design/configuration.md#params-validation), and
 * the apiserver authenticates and authorizes through Token/SubjectAccessReviews of its own; none of
 * them is a write to the cluster's state, so they are reported but not held against the controller.
 */
const REVIEW_RESOURCES = new Set(['selfsubjectaccessreviews', 'selfsubjectrulesreviews', 'subjectaccessreviews', 'localsubjectaccessreviews', 'tokenreviews']);

/**
 * Periodic writes whatever the controller does, about every 10 s:
 * - `PUT leases`: the apiserver's identity Lease heartbeat (kube-system/apiserver-…, --identity-lease-renew-interval
 *   10 s) and each spoke's OCM registration agent renewing its cluster's lease. No controller measured here
 *   takes a Lease (no leader election);
 * - `POST endpoints` answered 422: the `kubernetes` Service endpoint reconciler, rejecting the sandbox's
 *   loopback advertise address. policy-sync never writes Endpoints.
 * They are kept apart (and a test may bound them by their rate), so that they cannot hide a controller
 * that suddenly renews a Lease every second.
 */
function isBackground(l: Record<string, string>): boolean {
  return (
    (l.group === 'coordination.k8s.io' && l.resource === 'leases' && l.verb === 'PUT') ||
    (l.group === '' && l.resource === 'endpoints' && l.verb === 'POST' && l.code === '422')
  );
}

/**
 * Writes of other components of the sandbox: `events.k8s.io` Events are written by the OCM placement
 * controller (its event broadcaster flushes series of DecisionUpdate/ScoreUpdate Events minutes after
 * the fact, into whatever window is open then). policy-sync writes Events only through core/v1
 * (`/api/v1/namespaces/<ns>/events`, src/kube/events.ts), which stay counted. OCM's registration controller
 * patches ManagedClusters' status and creates leases for clusters with no agent (the bench's): a steady ~10/s of
 * each at 3,500 clusters, so a hub that big is never quiet otherwise. policy-sync writes neither ManagedClusters
 * nor, but for its leader lease's first create, leases.
 */
function isOtherComponent(l: Record<string, string>): boolean {
  return (
    (l.group === 'events.k8s.io' && l.resource === 'events') ||
    (l.group === 'cluster.open-cluster-management.io' && l.resource === 'managedclusters' && l.subresource === 'status') ||
    (l.group === 'coordination.k8s.io' && l.resource === 'leases' && l.verb === 'POST')
  );
}

export interface CounterOptions {
  /** Other components' writes (isOtherComponent) kept apart in `others` (the default), or counted as writes. */
  othersApart?: boolean;
}

export type Counts = Map<string, number>;

export interface Snapshot {
  at: number;
  /** `VERB group/resource[/subresource]` → requests (all response codes). */
  writes: Counts;
  reviews: Counts;
  background: Counts;
  others: Counts;
}

export function requestKey(verb: string, group: string, resource: string, subresource?: string): string {
  return `${verb} ${group || 'core'}/${resource}${subresource ? `/${subresource}` : ''}`;
}

export async function snapshot(kubeConfig: KubeConfig, options: CounterOptions = {}): Promise<Snapshot> {
  const othersApart = options.othersApart ?? true;
  const s: Snapshot = { at: Date.now(), writes: new Map(), reviews: new Map(), background: new Map(), others: new Map() };
  for (const { labels, value } of samples(await metricsText(kubeConfig), 'apiserver_request_total')) {
    if (READ_VERBS.has(labels.verb ?? '')) continue;
    const into = REVIEW_RESOURCES.has(labels.resource ?? '') ? s.reviews : isBackground(labels) ? s.background : othersApart && isOtherComponent(labels) ? s.others : s.writes;
    const key = requestKey(labels.verb ?? '', labels.group ?? '', labels.resource ?? '', labels.subresource);
    into.set(key, (into.get(key) ?? 0) + value);
  }
  return s;
}

function subtract(later: Counts, earlier: Counts): Counts {
  const out: Counts = new Map();
  for (const [k, v] of later) if (v - (earlier.get(k) ?? 0) !== 0) out.set(k, v - (earlier.get(k) ?? 0));
  for (const [k, v] of earlier) if (!later.has(k)) out.set(k, -v); // a counter never vanishes; show it if it did
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export interface Delta {
  ms: number;
  writes: Counts;
  reviews: Counts;
  background: Counts;
  others: Counts;
}

export function delta(a: Snapshot, b: Snapshot): Delta {
  return {
    ms: b.at - a.at,
    writes: subtract(b.writes, a.writes),
    reviews: subtract(b.reviews, a.reviews),
    background: subtract(b.background, a.background),
    others: subtract(b.others, a.others),
  };
}

/** Removes writes the benchmark itself made in the window (e.g. `APPLY gateway.networking.k8s.io/gateways`: 1). */
export function withoutOwn(writes: Counts, own: Record<string, number>): Counts {
  const out = new Map(writes);
  for (const [k, n] of Object.entries(own)) {
    const left = (out.get(k) ?? 0) - n;
    if (left === 0) out.delete(k);
    else out.set(k, left);
  }
  return out;
}

export function total(counts: Counts, filter: (key: string) => boolean = () => true): number {
  let sum = 0;
  for (const [k, v] of counts) if (filter(k)) sum += v;
  return sum;
}

export function describe(counts: Counts): string {
  return counts.size === 0 ? 'none' : [...counts].map(([k, v]) => `${k}=${v}`).join(', ');
}

export interface QuietOptions extends CounterOptions {
  /** Counters unchanged this long count as quiet (2 s). */
  quietMs?: number;
  /** Give up (quiet: false) after this long (120 s). */
  timeoutMs?: number;
}

/**
 * Waits until the write counters (reviews and background aside) have not moved for `quietMs`; returns
 * the last reading, and whether it was quiet (false: still moving after `timeoutMs`).
 */
export async function waitQuiet(kubeConfig: KubeConfig, options: QuietOptions = {}): Promise<{ snapshot: Snapshot; quiet: boolean }> {
  const { quietMs = 2_000, timeoutMs = 120_000 } = options;
  const deadline = Date.now() + timeoutMs;
  let last = await snapshot(kubeConfig, options);
  let text = describe(last.writes);
  let since = Date.now();
  while (Date.now() - since < quietMs) {
    if (Date.now() > deadline) return { snapshot: last, quiet: false };
    await sleep(250);
    const now = await snapshot(kubeConfig, options);
    const nowText = describe(now.writes);
    if (nowText !== text) [text, since] = [nowText, Date.now()];
    last = now;
  }
  return { snapshot: last, quiet: true };
}
