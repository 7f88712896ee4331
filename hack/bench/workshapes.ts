// The work-shape probe (issue 32; docs/design/ chooses the shape from its numbers): P policies × C clusters
// written to the hub in each candidate ManifestWork shape, one shape after another on the same hub, each
// measured for what a fleet pays: creating it, the work agents' first status (every manifest's feedback),
// etcd's bytes per placement (in use, after a compaction), listing it all (a restart: unpaged and in pages
// of 500; what the parsed list holds in heap), one policy edited on every cluster (the writes and their bytes:
// a bundle rewrites all its manifests), and one copy's status changed on every cluster (a bundle's status
// holds every manifest's feedback). No controller runs: the works are built by the core as the hub builds
// today's, reshaped here, and written by a bare client, so that the shapes differ only in what the apiserver
// and etcd are sent.
//
//   npm run bench:shapes -- [-C 1000] [-P 30] [--in-flight 16]
//     [--shapes per-placement,slim,bundled,bundled-slim] [--bundle-kib 100] [--root DIR] [--down]
//
// Shapes: `per-placement` (today's: one work per policy × cluster, the default feedback rules and one
// Gateway's ancestor rules), `slim` (the same, with only the rules a verdict needs: generation, revision,
// the status's observedGeneration and the raw conditions list — OCM's RawFeedbackJsonString gate), and
// `bundled` / `bundled-slim` (one cluster's copies in works of at most --bundle-kib of spec), and
// `bundled-shared` / `bundled-slim-shared` (the same, each set of copies with equal rules configured by one
// manifestConfig whose name and namespace are `*`: OCM's agent takes the first config matching a manifest,
// wildcards included — pkg/work/helper FindManifestConfiguration).
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { FeedbackRule } from '../../src/core/works/feedbackrules.ts';
import type { ManifestConfig, ManifestWork } from '../../src/core/works/manifestwork.ts';
import { configFor } from '../../src/core/works/bundle.ts';
import { controllerLabelValue } from '../../src/core/works/manifestwork.ts';
import { CONTROLLER_LABEL } from '../../src/core/metadatakeys.ts';
import { KubeHttp, isAlreadyExists } from '../../src/kube/http.ts';
import { RESOURCES, collectionPath, objectPath } from '../../src/kube/resource.ts';
import { compactEtcd, etcdDb, etcdUrl } from '../../testkit/etcd.ts';
import { authPolicy } from '../../testkit/fixtures.ts';
import { repoRoot } from '../../testkit/sandbox/layout.ts';
import { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { deleteCollection, pool, worksFor } from '../../testkit/world.ts';

const SHAPES = ['per-placement', 'slim', 'bundled', 'bundled-slim', 'bundled-shared', 'bundled-slim-shared'] as const;
type Shape = (typeof SHAPES)[number];
const NS_LABEL = 'policysync.kuadrant.io/bench';
const PROBE = 'bench.policy-sync.io/workshapes';
const SLIM_RULES: readonly FeedbackRule[] = [
  {
    type: 'JSONPaths',
    jsonPaths: [
      { name: 'generation', path: '.metadata.generation' },
      { name: 'revision', path: '.metadata.annotations.policysync\\.kuadrant\\.io/revision' },
      { name: 'statusObservedGeneration', path: '.status.observedGeneration' },
      { name: 'conditions', path: '.status.conditions' },
    ],
  },
];

const { values: flags } = parseArgs({
  options: {
    clusters: { type: 'string', short: 'C', default: '1000' },
    policies: { type: 'string', short: 'P', default: '30' },
    'in-flight': { type: 'string', default: '16' },
    shapes: { type: 'string', default: SHAPES.join(',') },
    'bundle-kib': { type: 'string', default: '100' },
    root: { type: 'string' },
    down: { type: 'boolean', default: false },
  },
});
const C = positive('clusters', flags.clusters);
const P = positive('policies', flags.policies);
const IN_FLIGHT = positive('in-flight', flags['in-flight']);
const BUNDLE_BYTES = positive('bundle-kib', flags['bundle-kib']) * 1024;
const shapes = flags.shapes.split(',').map((s) => s.trim()) as Shape[];
for (const s of shapes) if (!SHAPES.includes(s)) throw new Error(`--shapes: unknown shape ${s} (known: ${SHAPES.join(', ')})`);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc --import tsx');

function positive(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${value}`);
  return n;
}

const t0 = performance.now();
function log(message: string): void {
  process.stderr.write(`[workshapes ${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${message}\n`);
}

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/** A shape's works, from today's per-placement works (`works`, in cluster order). */
function reshape(shape: Shape, works: readonly ManifestWork[]): ManifestWork[] {
  const slim = shape === 'slim' || shape === 'bundled-slim' || shape === 'bundled-slim-shared';
  const shared = shape === 'bundled-shared' || shape === 'bundled-slim-shared';
  const shaped = slim ? works.map((w) => ({ ...w, spec: { ...w.spec, manifestConfigs: w.spec.manifestConfigs.map((c) => ({ ...c, feedbackRules: SLIM_RULES })) } })) : [...works];
  if (shape === 'per-placement' || shape === 'slim') return shaped;
  // One cluster's copies in works of at most BUNDLE_BYTES of spec, in policy order.
  const bundles: ManifestWork[] = [];
  const byCluster = new Map<string, ManifestWork[]>();
  for (const w of shaped) byCluster.set(w.metadata.namespace, [...(byCluster.get(w.metadata.namespace) ?? []), w]);
  for (const [cluster, list] of byCluster) {
    let current: ManifestWork | undefined;
    let size = 0;
    let index = 0;
    for (const w of list) {
      const configBytes = (into: ManifestWork | undefined) => (shared && into && w.spec.manifestConfigs.every((c) => into.spec.manifestConfigs.some((have) => sameConfig(have, c))) ? 0 : bytesOf(w.spec.manifestConfigs));
      const manifestBytes = bytesOf(w.spec.workload.manifests);
      if (!current || size + manifestBytes + configBytes(current) > BUNDLE_BYTES) {
        current = {
          apiVersion: w.apiVersion,
          kind: w.kind,
          metadata: { name: `bundle-${index++}`, namespace: cluster, labels: { [CONTROLLER_LABEL]: controllerLabelValue(PROBE) }, annotations: {} },
          spec: { workload: { manifests: [] }, deleteOption: w.spec.deleteOption, manifestConfigs: [] },
        };
        bundles.push(current);
        size = 0;
      }
      size += manifestBytes + configBytes(current);
      current.spec.workload.manifests.push(...w.spec.workload.manifests);
      for (const config of w.spec.manifestConfigs) {
        if (!shared) current.spec.manifestConfigs.push(config);
        else if (!current.spec.manifestConfigs.some((c) => sameConfig(c, config))) current.spec.manifestConfigs.push({ ...config, resourceIdentifier: { ...config.resourceIdentifier, name: '*', namespace: '*' } });
      }
    }
  }
  return bundles;
}

/** Configs alike but for the copy they name: one wildcard config serves both. */
function sameConfig(a: ManifestConfig, b: ManifestConfig): boolean {
  const { resourceIdentifier: ra, ...restA } = a;
  const { resourceIdentifier: rb, ...restB } = b;
  return ra.group === rb.group && ra.resource === rb.resource && JSON.stringify(restA) === JSON.stringify(restB);
}

/** The config the agent takes for a manifest (the core's reading of it: first match, `*` for any name). */
function configOf(work: ManifestWork, manifest: KubeObject): ManifestConfig {
  const config = configFor(work.spec.manifestConfigs, 'kuadrant.io', 'authpolicies', manifest.metadata.namespace ?? '', manifest.metadata.name);
  if (!config) throw new Error(`no manifestConfig of ${work.metadata.name} matches ${manifest.metadata.name}`);
  return config;
}

/** What the work agent writes when every copy of `work` is applied and reports its feedback. */
function agentStatus(work: ManifestWork, changed?: number): unknown {
  const time = new Date().toISOString();
  const condition = (type: string, reason: string, message: string) => ({ type, status: 'True', observedGeneration: 1, lastTransitionTime: time, reason, message });
  const value = (name: string, generation: number) => {
    if (name === 'conditions') return { name, fieldValue: { type: 'JsonRaw', jsonRaw: JSON.stringify([condition('Accepted', 'Accepted', 'AuthPolicy has been accepted'), condition('Enforced', 'Enforced', 'AuthPolicy has been successfully enforced')]) } };
    if (/generation|Generation/.test(name)) return { name, fieldValue: { type: 'Integer', integer: generation } };
    if (name === 'revision') return { name, fieldValue: { type: 'String', string: `${generation}` } };
    return { name, fieldValue: { type: 'String', string: /Message$/.test(name) ? 'AuthPolicy has been successfully enforced' : /Controller$/.test(name) ? 'kuadrant.io/policy-controller' : 'True' } };
  };
  return {
    conditions: [condition('Applied', 'AppliedManifestWorkComplete', 'Apply manifest work complete'), condition('Available', 'ResourcesAvailable', 'All resources are available')],
    resourceStatus: {
      manifests: work.spec.workload.manifests.map((m, ordinal) => ({
        resourceMeta: { ordinal, group: 'kuadrant.io', version: 'v1', kind: 'AuthPolicy', resource: 'authpolicies', name: m.metadata.name, namespace: m.metadata.namespace },
        conditions: [condition('Applied', 'AppliedManifestComplete', 'Apply manifest complete'), condition('Available', 'ResourceAvailable', 'Resource is available'), condition('StatusFeedbackSynced', 'StatusFeedbackSynced', '')],
        statusFeedback: { values: configOf(work, m).feedbackRules.flatMap((r) => r.jsonPaths.map((p) => value(p.name, ordinal === changed ? 2 : 1))) },
      })),
    },
  };
}

interface ShapeResult {
  shape: Shape;
  works: number;
  specBytes: number;
  createS: number;
  statusFillS: number;
  etcdBytesPerPlacement: number;
  listUnpagedS: number;
  listPagedS: number;
  listMiB: number;
  heapBytesPerPlacement: number;
  editWrites: number;
  editS: number;
  editKiB: number;
  statusChangeS: number;
  statusChangeKiB: number;
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await fn();
  return [value, (performance.now() - start) / 1000];
}

async function etcdInUse(sandbox: Sandbox, url: string): Promise<number> {
  await compactEtcd(sandbox);
  const db = await etcdDb(url);
  if (!db) throw new Error('etcd did not report its size');
  return db.inUseMiB * 2 ** 20;
}

async function listAllPages(http: KubeHttp, limit: number | undefined): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  let token: string | undefined;
  do {
    const page = await http.request<{ items: KubeObject[]; metadata: { continue?: string } }>('GET', collectionPath(RESOURCES.manifestWorks), {
      query: { labelSelector: `${CONTROLLER_LABEL}=${controllerLabelValue(PROBE)}`, ...(limit ? { limit } : {}), ...(token ? { continue: token } : {}) },
    });
    items.push(...page.items);
    token = page.metadata.continue || undefined;
  } while (token);
  return items;
}

async function probe(sandbox: Sandbox, http: KubeHttp, clusters: string[], shape: Shape, today: readonly ManifestWork[]): Promise<ShapeResult> {
  const url = await etcdUrl(sandbox);
  const works = reshape(shape, today);
  const placements = today.length;
  log(`${shape}: ${works.length} works for ${placements} placements`);
  const before = await etcdInUse(sandbox, url);
  const created = new Map<string, string>();
  const [, createS] = await timed(() =>
    pool(works, IN_FLIGHT, async (w) => {
      const got = await http.request<KubeObject>('POST', collectionPath(RESOURCES.manifestWorks, w.metadata.namespace), { body: w });
      created.set(`${w.metadata.namespace}/${w.metadata.name}`, got.metadata.resourceVersion ?? '');
    }),
  );
  log(`${shape}: created in ${createS.toFixed(1)} s`);
  const statusOf = async (w: ManifestWork, changed?: number): Promise<number> => {
    const key = `${w.metadata.namespace}/${w.metadata.name}`;
    const body = { apiVersion: w.apiVersion, kind: w.kind, metadata: { name: w.metadata.name, namespace: w.metadata.namespace, resourceVersion: created.get(key) }, spec: w.spec, status: agentStatus(w, changed) };
    const got = await http.request<KubeObject>('PUT', objectPath(RESOURCES.manifestWorks, w.metadata.namespace, w.metadata.name, 'status'), { body });
    created.set(key, got.metadata.resourceVersion ?? '');
    return bytesOf(body);
  };
  const [, statusFillS] = await timed(() => pool(works, IN_FLIGHT, (w) => statusOf(w)));
  log(`${shape}: first status of every work in ${statusFillS.toFixed(1)} s`);
  const after = await etcdInUse(sandbox, url);

  // A restart's list: unpaged, then in pages of 500, each with a fresh connection pool.
  const lister = new KubeHttp(sandbox.kubeConfig('hub'), { requestTimeoutMs: 300_000 });
  gc!();
  const heapBefore = process.memoryUsage().heapUsed;
  const [listed, listUnpagedS] = await timed(() => listAllPages(lister, undefined));
  gc!();
  const heapBytesPerPlacement = (process.memoryUsage().heapUsed - heapBefore) / placements;
  const listMiB = bytesOf(listed) / 2 ** 20;
  if (listed.length !== works.length) throw new Error(`${shape}: listed ${listed.length} works, wrote ${works.length}`);
  listed.length = 0;
  const [, listPagedS] = await timed(() => listAllPages(lister, 500));
  lister.destroy();

  // The first policy edited: on each cluster, the work holding its copy is written whole.
  const first = today[0]!.spec.workload.manifests[0]!.metadata.name;
  const holding = works.filter((w) => w.spec.workload.manifests.some((m) => m.metadata.name === first));
  let editBytes = 0;
  const [, editS] = await timed(() =>
    pool(holding, IN_FLIGHT, async (w) => {
      const key = `${w.metadata.namespace}/${w.metadata.name}`;
      const manifests = w.spec.workload.manifests.map((m) => (m.metadata.name === first ? { ...m, spec: { ...(m.spec as object), edited: true } } : m));
      const body = { ...w, metadata: { ...w.metadata, resourceVersion: created.get(key) }, spec: { ...w.spec, workload: { manifests } } };
      editBytes += bytesOf(body);
      const got = await http.request<KubeObject>('PUT', objectPath(RESOURCES.manifestWorks, w.metadata.namespace, w.metadata.name), { body });
      created.set(key, got.metadata.resourceVersion ?? '');
    }),
  );
  // That copy's status changed on every cluster: the agent writes the work's status whole.
  let statusBytes = 0;
  const [, statusChangeS] = await timed(() =>
    pool(holding, IN_FLIGHT, async (w) => {
      statusBytes += await statusOf(w, w.spec.workload.manifests.findIndex((m) => m.metadata.name === first));
    }),
  );
  log(`${shape}: edit ${editS.toFixed(2)} s, status change ${statusChangeS.toFixed(2)} s`);

  await pool(clusters, 8, (n) => deleteCollection(http, RESOURCES.manifestWorks, n, `${CONTROLLER_LABEL}=${controllerLabelValue(PROBE)}`));
  return {
    shape,
    works: works.length,
    specBytes: works.reduce((sum, w) => sum + bytesOf(w), 0) / placements,
    createS,
    statusFillS,
    etcdBytesPerPlacement: (after - before) / placements,
    listUnpagedS,
    listPagedS,
    listMiB,
    heapBytesPerPlacement,
    editWrites: holding.length,
    editS,
    editKiB: editBytes / 1024,
    statusChangeS,
    statusChangeKiB: statusBytes / 1024,
  };
}

function table(results: readonly ShapeResult[]): string {
  const head = ['shape', 'works', 'spec B/placement', 'create s', 'status fill s', 'etcd B/placement', 'list s (unpaged/paged)', 'list MiB', 'heap B/placement', `edit (${C} clusters) s / KiB`, 'status change s / KiB'];
  const rows = results.map((r) => [
    r.shape,
    String(r.works),
    r.specBytes.toFixed(0),
    r.createS.toFixed(1),
    r.statusFillS.toFixed(1),
    r.etcdBytesPerPlacement.toFixed(0),
    `${r.listUnpagedS.toFixed(2)} / ${r.listPagedS.toFixed(2)}`,
    r.listMiB.toFixed(1),
    r.heapBytesPerPlacement.toFixed(0),
    `${r.editS.toFixed(2)} / ${r.editKiB.toFixed(0)} (${r.editWrites} writes)`,
    `${r.statusChangeS.toFixed(2)} / ${r.statusChangeKiB.toFixed(0)}`,
  ]);
  return [head, head.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

/** Waits until no namespace this probe creates is terminating. */
async function namespacesGone(http: KubeHttp): Promise<void> {
  const deadline = performance.now() + 600_000;
  for (;;) {
    const list = await http.request<{ items: KubeObject[] }>('GET', '/api/v1/namespaces', { query: { labelSelector: `${NS_LABEL}=workshapes` } });
    const left = list.items.filter((ns) => ns.metadata.deletionTimestamp);
    if (left.length === 0) return;
    if (performance.now() > deadline) throw new Error(`${left.length} namespaces of the probe still there after 10 min`);
    log(`waiting for ${left.length} namespaces to go`);
    await new Promise((r) => setTimeout(r, 5_000));
  }
}

async function main(): Promise<void> {
  const root = resolve(flags.root ?? join(repoRoot, '.local', 'bench-sandbox'));
  const sandbox = await Sandbox.up({ root, spokes: 1, log: (m) => log(`sandbox: ${m}`) });
  const http = new KubeHttp(sandbox.kubeConfig('hub'), { maxInFlight: IN_FLIGHT, requestTimeoutMs: 120_000 });
  try {
    const clusters = Array.from({ length: C }, (_, i) => `ws-c${String(i + 1).padStart(4, '0')}`);
    // Only the namespaces this run created are deleted at its end; an earlier run's still terminating go first.
    await namespacesGone(http);
    const created: string[] = [];
    await pool(clusters, 16, async (name) => {
      try {
        await http.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [NS_LABEL]: 'workshapes' } } } });
        created.push(name);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    });
    // What a run that failed left behind.
    await pool(clusters, 8, (n) => deleteCollection(http, RESOURCES.manifestWorks, n, `${CONTROLLER_LABEL}=${controllerLabelValue(PROBE)}`));
    log(`${C} cluster namespaces`);
    const policies = Array.from({ length: P }, (_, i) => {
      const p = authPolicy('ws-run', `p-${String(i + 1).padStart(5, '0')}`, 'gw');
      return { ...p, metadata: { ...p.metadata, uid: randomUUID(), generation: 1 } };
    });
    // Cluster by cluster (the bundles' order), as the core builds today's works.
    const today = worksFor(policies, 'ws-run', clusters, PROBE).sort((a, b) => (a.metadata.namespace < b.metadata.namespace ? -1 : a.metadata.namespace > b.metadata.namespace ? 1 : 0));
    const results: ShapeResult[] = [];
    for (const shape of shapes) results.push(await probe(sandbox, http, clusters, shape, today));
    console.log(`\nwork shapes: P=${P} policies × C=${C} clusters = ${P * C} placements, ${IN_FLIGHT} requests in flight, bundles ≤ ${BUNDLE_BYTES / 1024} KiB of spec\n`);
    console.log(table(results));
    await pool(created, 16, (name) => http.request('DELETE', `/api/v1/namespaces/${name}`).catch(() => undefined));
    // Gone before the next run names them again (a terminating namespace refuses the works).
    await namespacesGone(http);
  } finally {
    http.destroy();
    if (flags.down) await sandbox.down();
  }
}

await main();
