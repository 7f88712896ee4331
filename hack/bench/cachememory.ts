// What one cached ManifestWork costs in heap, without a sandbox: N works as the bench's fan-out writes them
// (P policies × 20 clusters, built by the core like the controller builds them), with what the apiserver
// adds (uid, resourceVersion, generation, creationTimestamp, a managedFields entry) and optionally the work
// agent's status, each serialised to its own JSON text and then fed the way the watcher feeds the hub's
// work informer: parsed (list pages of 500 in the apiserver's key order, or with --watch one event per
// work as the controller creates them), trimmed by cachedWork, applied to a Store indexed like the hub's.
// Reports the heap retained per work after a forced GC; with --snapshot, writes a heap snapshot, which
// --summarise sums up by constructor and by string (what repeated strings cost).
//
//   node --expose-gc --import tsx hack/bench/cachememory.ts [-n 20000] [--status] [--watch] [--then-delete] [--snapshot FILE]
//   node --import tsx hack/bench/cachememory.ts --summarise FILE.heapsnapshot [--baseline FILE-of-n-1.heapsnapshot]
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { workCacheView } from '../../src/core/works/cacheview.ts';
import type { ManifestWork } from '../../src/core/works/manifestwork.ts';
import { SOURCE_LABEL } from '../../src/core/metadatakeys.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { Store } from '../../src/kube/store.ts';
import { authPolicy } from '../../testkit/fixtures.ts';
import { clusterName, worksFor } from '../../testkit/world.ts';

/** The transform of the cache measured, with its own sharing table (as the hub's works cache has). */
const cachedWork = workCacheView();
const CLUSTERS = 20;
const PAGE = 500;
/** The bench's fan-out rate: creation times advance by a second every this many works. */
const WORKS_PER_SECOND = 190;

const { values: flags } = parseArgs({
  options: {
    n: { type: 'string', short: 'n', default: '20000' },
    status: { type: 'boolean', default: false },
    watch: { type: 'boolean', default: false },
    'then-delete': { type: 'boolean', default: false },
    snapshot: { type: 'string' },
    summarise: { type: 'string' },
    baseline: { type: 'string' },
  },
});

if (flags.summarise) summarise(flags.summarise, flags.baseline);
else measure();

function measure(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const n = Number(flags.n);
  if (!(n >= 1)) throw new Error('-n: at least 1 work');
  const store = new Store().addIndex('source', (w) => {
    const source = w.metadata.labels?.[SOURCE_LABEL];
    return source ? [source] : [];
  });
  const before = settle(gc);
  const { bytes, transformMs } = fill(store, n);
  const after = settle(gc);
  const perWork = (a: number, b: number): string => `${((b - a) / n).toFixed(0)} B`;
  console.log(`${n} works (${flags.watch ? 'watch events' : 'list pages'}, ${flags.status ? 'with' : 'without'} agent status), ${(bytes / n).toFixed(0)} B of JSON each`);
  console.log(`retained per work: heapUsed ${perWork(before.heapUsed, after.heapUsed)}, old space ${perWork(before.oldSpace, after.oldSpace)}, RSS ${perWork(before.rss, after.rss)}`);
  console.log(`process: heapUsed ${mib(after.heapUsed)}, heapTotal ${mib(after.heapTotal)}, RSS ${mib(after.rss)}; store holds ${store.size}`);
  console.log(`cachedWork: ${((transformMs * 1000) / n).toFixed(1)} µs per work; the cached view of one as JSON: ${JSON.stringify(store.list()[0]).length} B`);
  console.log(`distinct parts of the works (shared by a policy's works, or by all): ${distinctParts(store)}`);
  if (flags.snapshot) console.log(`heap snapshot: ${v8.writeHeapSnapshot(flags.snapshot)}`);
  if (flags['then-delete']) {
    // What stays once no work is cached: what the sharing tables (core/intern.ts) hold on to.
    store.replace([]);
    const empty = settle(gc);
    console.log(`after deleting every work: heapUsed ${mib(empty.heapUsed - before.heapUsed)} more than before the first (${perWork(before.heapUsed, empty.heapUsed)} per work once cached)`);
  }
}

/** Feeds the store N works; returns the bytes of JSON read. (A function of its own: its last page is off the stack when the heap is measured.) */
function fill(store: Store, n: number): { bytes: number; transformMs: number } {
  let bytes = 0;
  let transformMs = 0;
  const transform = (object: KubeObject): KubeObject => {
    const start = performance.now();
    const view = cachedWork(object);
    transformMs += performance.now() - start;
    return view;
  };
  for (const page of pages(n)) {
    bytes += page.reduce((sum, text) => sum + text.length, 0);
    if (flags.watch) {
      for (const line of page) {
        const event = JSON.parse(line) as { type: 'ADDED'; object: KubeObject };
        store.apply(event.type, transform(event.object));
      }
    } else {
      // As Watcher.list: one parse per page, apiVersion and kind filled in from the page.
      const items = (JSON.parse(`{"kind":"ManifestWorkList","items":[${page.join(',')}]}`) as { items: KubeObject[] }).items;
      for (const item of items) store.apply('ADDED', transform({ ...item, apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork' }));
    }
  }
  return { bytes, transformMs };
}

function distinctParts(store: Store): string {
  const works = store.list();
  const distinct = (part: (w: KubeObject) => unknown): number => new Set(works.map(part)).size;
  return `labels ${distinct((w) => w.metadata.labels)}, annotations ${distinct((w) => w.metadata.annotations)}, managedFields ${distinct((w) => w.metadata.managedFields)}, spec ${distinct((w) => w.spec)}, status ${distinct((w) => w.status)}`;
}

function settle(gc: () => void): { heapUsed: number; heapTotal: number; rss: number; oldSpace: number } {
  for (let i = 0; i < 3; i++) gc();
  const { heapUsed, heapTotal, rss } = process.memoryUsage();
  const oldSpace = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0;
  return { heapUsed, heapTotal, rss, oldSpace };
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/**
 * The works' JSON texts, PAGE at a time (all of them at once would be hundreds of MB). Watch events come
 * as the controller creates the works, a policy's on every cluster at once; a list comes in the
 * apiserver's key order, namespace (cluster) by namespace, so a policy's works are far apart.
 */
function* pages(n: number): Generator<string[]> {
  const clusters = Array.from({ length: CLUSTERS }, (_, i) => clusterName(i + 1));
  const policies = Array.from({ length: Math.ceil(n / CLUSTERS) }, (_, p) => ({ ...authPolicy('bench-run', `p${p}`, 'gw'), metadata: { name: `p${p}`, namespace: 'bench-run', uid: randomUUID() } }));
  const start = Date.parse('2026-01-01T00:00:00Z');
  /** The created-th work: policy p on cluster c, its creation order giving its times and resourceVersion. */
  const text = (p: number, c: number): string => {
    const created = p * CLUSTERS + c;
    const [work] = worksFor([policies[p]!], 'bench-run', [clusters[c]!], 'bench.policy-sync.io/1', 'crd-uid-0000');
    const time = new Date(start + Math.floor(created / WORKS_PER_SECOND) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    const observed = asObserved(work!, 1_000_000 + created, time);
    return JSON.stringify(flags.watch ? { type: 'ADDED', object: observed } : omitTypeMeta(observed));
  };
  const order = flags.watch
    ? policies.flatMap((_, p) => clusters.map((_c, c) => [p, c] as const))
    : clusters.flatMap((_c, c) => policies.map((_, p) => [p, c] as const));
  let page: string[] = [];
  for (const [p, c] of order) {
    if (p * CLUSTERS + c >= n) continue;
    page.push(text(p, c));
    if (page.length === PAGE) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}

function omitTypeMeta(object: KubeObject): Omit<KubeObject, 'apiVersion' | 'kind'> {
  const { apiVersion: _a, kind: _k, ...rest } = object;
  return rest;
}

/** The work as the apiserver serves it after our create (and the agent's status, with --status). */
function asObserved(work: ManifestWork, resourceVersion: number, time: string): KubeObject {
  const managedFields: unknown[] = [
    { manager: 'policy-sync', operation: 'Update', apiVersion: work.apiVersion, time, fieldsType: 'FieldsV1', fieldsV1: fieldsOf({ metadata: { annotations: work.metadata.annotations, labels: work.metadata.labels }, spec: work.spec }) },
  ];
  const observed: KubeObject = {
    ...work,
    metadata: { ...work.metadata, uid: randomUUID(), resourceVersion: String(resourceVersion), generation: 1, creationTimestamp: time, managedFields },
  };
  if (!flags.status) return observed;
  observed.metadata.finalizers = ['cluster.open-cluster-management.io/manifest-work-cleanup'];
  observed.status = agentStatus(work, time);
  managedFields.push({ manager: 'work-agent', operation: 'Update', apiVersion: work.apiVersion, time, fieldsType: 'FieldsV1', fieldsV1: fieldsOf({ status: observed.status }), subresource: 'status' });
  return observed;
}

/** fieldsV1 of an object: every field of every map; lists atomic, as the ManifestWork CRD has them. */
function fieldsOf(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [`f:${k}`, fieldsOf(v)]));
}

function agentStatus(work: ManifestWork, time: string): unknown {
  const condition = (type: string, reason: string, message: string) => ({ type, status: 'True', observedGeneration: 1, lastTransitionTime: time, reason, message });
  const copy = work.spec.workload.manifests[0]!;
  const value = (name: string, v: string | number) => ({ name, fieldValue: typeof v === 'number' ? { type: 'Integer', integer: v } : { type: 'String', string: v } });
  return {
    conditions: [condition('Applied', 'AppliedManifestWorkComplete', 'Apply manifest work complete'), condition('Available', 'ResourcesAvailable', 'All resources are available')],
    resourceStatus: {
      manifests: [
        {
          resourceMeta: { ordinal: 0, group: 'kuadrant.io', version: 'v1', kind: 'AuthPolicy', resource: 'authpolicies', name: copy.metadata.name, namespace: copy.metadata.namespace },
          conditions: [
            condition('Applied', 'AppliedManifestComplete', 'Apply manifest complete'),
            condition('Available', 'ResourceAvailable', 'Resource is available'),
            condition('StatusFeedbackSynced', 'StatusFeedbackSynced', ''),
          ],
          statusFeedback: {
            values: [
              value('generation', 1),
              value('acceptedStatus', 'True'),
              value('acceptedReason', 'Accepted'),
              value('acceptedMessage', 'AuthPolicy has been accepted'),
              value('enforcedStatus', 'True'),
              value('enforcedReason', 'Enforced'),
              value('enforcedMessage', 'AuthPolicy has been successfully enforced'),
              value('statusObservedGeneration', 1),
              value('firstConditionType', 'Accepted'),
              value('firstAncestorName', 'gw'),
              value('ancestor0Status', 'True'),
              value('ancestor0Reason', 'Accepted'),
              value('ancestor0Message', 'AuthPolicy has been accepted'),
              value('ancestor0Generation', 1),
              value('ancestor0Controller', 'kuadrant.io/policy-controller'),
            ],
          },
        },
      ],
    },
  };
}

// ---- heap snapshot summary ----

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

function summarise(file: string, baseline?: string): void {
  const after = groups(file);
  const before = baseline ? groups(baseline) : { total: 0, byGroup: new Map() as Groups };
  console.log(`total self size ${mib(after.total - before.total)}${baseline ? ' more than the baseline' : ''}`);
  console.log('\nby type and constructor (top 25):');
  top(minus(after.byGroup, before.byGroup), 25);
  // What one copy of each string would save (the snapshot names a string by its content, maybe cut short).
  const copies = new Map([...after.byString].filter(([, e]) => e.count > 1).map(([key, e]) => [key, { count: e.count - 1, size: e.size - e.size / e.count }]));
  const repeated = [...copies.values()].reduce((sum, e) => sum + e.size, 0);
  console.log(`\nstrings: ${after.byString.size} distinct; ${mib(repeated)} in repeated copies, by that size (top 25):`);
  top(copies, 25);
}

type Groups = Map<string, { count: number; size: number }>;

function groups(file: string): { total: number; byGroup: Groups; byString: Groups } {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const byGroup: Groups = new Map();
  const byString: Groups = new Map();
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + typeAt]!]!;
    const name = snap.strings[snap.nodes[i + nameAt]!]!;
    const size = snap.nodes[i + sizeAt]!;
    total += size;
    const strings = type === 'string' || type === 'concatenated string' || type === 'sliced string';
    add(byGroup, strings ? `(${type})` : `${type}: ${name.slice(0, 60)}`, size);
    if (strings) add(byString, name, size);
  }
  return { total, byGroup, byString };
}

function minus(a: Groups, b: Groups): Groups {
  return new Map([...a].map(([key, e]) => [key, { count: e.count - (b.get(key)?.count ?? 0), size: e.size - (b.get(key)?.size ?? 0) }]));
}

function add(map: Map<string, { count: number; size: number }>, key: string, size: number): void {
  const entry = map.get(key) ?? { count: 0, size: 0 };
  entry.count++;
  entry.size += size;
  map.set(key, entry);
}

function top(map: Map<string, { count: number; size: number }>, k: number): void {
  for (const [key, { count, size }] of [...map].sort((a, b) => b[1].size - a[1].size).slice(0, k)) {
    console.log(`  ${mib(size).padStart(10)}  ${String(count).padStart(8)}×  ${JSON.stringify(key.slice(0, 100))}`);
  }
}
