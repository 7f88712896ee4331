// Bundles, the fleet's work shape (docs/design/fleet.md#the-shape): the synced copies of one downstream namespace
// on one cluster travel together in a few ManifestWorks of at most a cap of bytes each, instead of one work per
// copy. The core goes on deciding per copy — a copy work (buildManifestWork: one policy on one cluster) is the unit
// every rule reads — and this file is the whole translation, both ways: `unpackBundle` gives back the copy works a
// bundle carries, with what the work agent reports of each, and `packBundles` writes copy changes into the bundles
// of one cluster and namespace. Nothing above it tells a bundled copy from a work of its own.
//
// What a bundle must keep per copy, from OCM's work agent (v1.2.1, pkg/work):
// - a manifest leaving a work is deleted on the spoke: an entry goes only when `drop` names it (the deletion rule
//   decided), and an entry whose bundle grew past the cap stays where it is rather than move;
// - the agent reports each manifest (resourceStatus.manifests[], matched here by group, kind, namespace and name,
//   not by ordinal, since the status may describe an older spec) and stamps every manifest's conditions with the
//   bundle's generation, which a neighbour's change moves: each entry records the generation from which it is as
//   it is now (`since`), and the copy counts as applied once the agent's Applied observed that generation or later;
// - the agent takes the first manifestConfig matching a manifest, `*` matching any name (helper
//   FindManifestConfiguration): copies with equal rules share one wildcard config, the others come first, exact;
// - ownership is decided per manifest at apply time (helper OwnedByTheWork): `SelectivelyOrphan` with one rule per
//   copy whose policy asks Orphan keeps today's per-policy meaning.
import { z } from 'zod';
import { canonicalJson, sha256Hex, specHash } from '../k8s/canonical.ts';
import type { Condition } from '../k8s/conditions.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { parseJson } from '../k8s/parsejson.ts';
import { CONTROLLER_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE, OWN_KEY_PREFIX, REAPPLY_LABEL, SOURCE_LABEL, SPEC_HASH_ANNOTATION } from '../metadatakeys.ts';
import { WORK_API_VERSION, WORK_KIND, type ManifestConfig, type ManifestWork } from './manifestwork.ts';
import { workState } from './workstate.ts';

/** On a bundle: one entry per manifest, in the manifests' order (BundleEntry). */
export const BUNDLE_COPIES_ANNOTATION = `${OWN_KEY_PREFIX}copies`;
/** On a bundle: the hash of the downstream namespace whose copies it carries. */
export const BUNDLE_LABEL = `${OWN_KEY_PREFIX}bundle`;
/**
 * On a bundle, one label per policy it carries a copy of (the key ends with the copy's SOURCE_LABEL value): a
 * reader of one policy's copies (`policy-sync status`, `wait`, `diff`) selects the few bundles carrying it rather
 * than list the fleet's.
 */
export const BUNDLE_SOURCE_PREFIX = `source.${OWN_KEY_PREFIX}`;

/** The label selector of the bundles carrying a copy of the policy whose SOURCE_LABEL value is `source`. */
export function bundleSourceSelector(source: string): string {
  return `${BUNDLE_SOURCE_PREFIX}${source}`;
}

/** What a bundle records of each copy besides its manifest: what its copy work carried, and since when it is as it is. */
export interface BundleEntry {
  /** The copy work's name (workName of its policy). */
  work: string;
  /** The copy work's labels and annotations, as buildManifestWork (and the rollout) made them. */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The copy's resource (the manifest names only its apiVersion and kind). */
  resource: string;
  /** The bundle generation from which the agent is asked to apply the copy as it is now. */
  since: number;
  /**
   * When (the hub's wall clock, RFC 3339) the hub last wrote this copy as it is: the copy work's own last spec
   * write, which a neighbour's write leaves alone (feedback.ts dates an apply by it). Absent in entries written
   * before it was recorded.
   */
  at?: string;
}

const entrySchema = z.object({
  work: z.string().min(1),
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()),
  resource: z.string().min(1),
  since: z.number().int().positive(),
  at: z.string().optional(),
});
const entriesSchema = z.array(entrySchema);

export type BundleDeleteOption =
  | { propagationPolicy: 'Foreground' }
  | { propagationPolicy: 'SelectivelyOrphan'; selectivelyOrphans: { orphaningRules: ResourceIdentifier[] } };

type ResourceIdentifier = ManifestConfig['resourceIdentifier'];

export interface BundleWork extends KubeObject {
  metadata: ManifestWork['metadata'];
  spec: { workload: { manifests: KubeObject[] }; deleteOption: BundleDeleteOption; manifestConfigs: ManifestConfig[] };
}

const NAME_HASH_LENGTH = 12;

/** The name of a bundle: the controller's and the namespace's hashes, then its index among the namespace's bundles. */
export function bundleName(controller: string, namespace: string, index: number): string {
  return `ps-${controller.slice(0, 8)}-${namespaceHash(namespace)}-${index}`;
}

/** The value of BUNDLE_LABEL on the bundles of `namespace`. */
export function namespaceHash(namespace: string): string {
  return sha256Hex(`policysync.kuadrant.io/bundle\n${namespace}`).slice(0, NAME_HASH_LENGTH);
}

/** The index of a bundle of `namespace` by its name; undefined for any other name. */
export function bundleIndex(controller: string, namespace: string, name: string): number | undefined {
  const prefix = `ps-${controller.slice(0, 8)}-${namespaceHash(namespace)}-`;
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  return /^(0|[1-9][0-9]{0,5})$/.test(rest) ? Number(rest) : undefined;
}

/** A work is a bundle: it carries the copies annotation (a copy work never does). */
export function isBundle(work: KubeObject): boolean {
  return work.metadata.annotations?.[BUNDLE_COPIES_ANNOTATION] !== undefined;
}

/** The entries of a bundle, aligned with its manifests; undefined when absent, malformed, or not aligned. */
export function readEntries(bundle: KubeObject): BundleEntry[] | undefined {
  const entries = parseJson(bundle.metadata.annotations?.[BUNDLE_COPIES_ANNOTATION], entriesSchema);
  return entries && entries.length === manifestsOf(bundle).length ? entries : undefined;
}

function manifestsOf(work: KubeObject): KubeObject[] {
  return (work.spec as { workload?: { manifests?: KubeObject[] } } | undefined)?.workload?.manifests ?? [];
}

interface ManifestStatus {
  resourceMeta?: { ordinal?: number; group?: string; kind?: string; resource?: string; name?: string; namespace?: string; version?: string };
  conditions?: Condition[];
  statusFeedback?: unknown;
}

/** The config the agent takes for a manifest: the first whose identifier matches it, `*` matching any name or namespace. */
export function configFor(configs: readonly ManifestConfig[], group: string, resource: string, namespace: string, name: string): ManifestConfig | undefined {
  const match = (pattern: string, value: string) => pattern === value || pattern === '*';
  return configs.find((c) => c.resourceIdentifier.group === group && c.resourceIdentifier.resource === resource && match(c.resourceIdentifier.namespace, namespace) && match(c.resourceIdentifier.name, name));
}

/**
 * The copy works a bundle carries, one per manifest, each as its own work would be: its name, labels and
 * annotations; the manifest, its config (exact) and its delete option; the bundle's uid, resourceVersion and
 * finalizers; as its generation the entry's `since`; and what the agent reported of that manifest as the work's
 * status — its Applied and Available conditions, an observedGeneration of `since` or later read as `since` (so a
 * neighbour's change leaves this copy applied, and its copy work unchanged but for the resourceVersion), and its
 * manifest status at ordinal 0. Undefined for a bundle whose entries do not parse.
 *
 * `view` is what a cache keeps of each copy work (cacheview.ts workCacheView: what the copies of one policy on a
 * thousand clusters hold alike, held once); the copy work returned is the one it gives.
 */
export function unpackBundle(bundle: KubeObject, view: CopyView = (work) => work): ManifestWork[] | undefined {
  const entries = readEntries(bundle);
  if (!entries) return undefined;
  const spec = bundle.spec as BundleWork['spec'];
  const manifests = spec.workload.manifests;
  const statuses = (bundle.status as { resourceStatus?: { manifests?: ManifestStatus[] } } | undefined)?.resourceStatus?.manifests ?? [];
  const orphaned = spec.deleteOption.propagationPolicy === 'SelectivelyOrphan' ? spec.deleteOption.selectivelyOrphans.orphaningRules : [];
  // The bundle's managed fields date every write of it, a neighbour's too: a copy's are its entry's own `at`.
  const { labels: _l, annotations: _a, name: _n, managedFields: _m, ...shared } = bundle.metadata;
  return entries.map((entry, i) => {
    const manifest = manifests[i]!;
    const group = apiGroup(manifest.apiVersion);
    const namespace = manifest.metadata.namespace ?? '';
    const name = manifest.metadata.name;
    const config = configFor(spec.manifestConfigs, group, entry.resource, namespace, name);
    const identifier = { group, resource: entry.resource, name, namespace };
    const orphan = orphaned.some((r) => r.group === group && r.resource === entry.resource && r.namespace === namespace && r.name === name);
    const reported = statuses.find((s) => s.resourceMeta?.group === group && s.resourceMeta.kind === manifest.kind && (s.resourceMeta.namespace ?? '') === namespace && s.resourceMeta.name === name);
    const current = (c: Condition): Condition => {
      const observed = c.observedGeneration;
      return typeof observed === 'number' && observed >= entry.since ? { ...c, observedGeneration: entry.since } : c;
    };
    const conditions = (reported?.conditions ?? []).filter((c) => c.type === 'Applied' || c.type === 'Available').map(current);
    const work: ManifestWork = {
      apiVersion: WORK_API_VERSION,
      kind: WORK_KIND,
      metadata: {
        ...shared,
        name: entry.work,
        namespace: bundle.metadata.namespace ?? '',
        generation: entry.since,
        labels: entry.labels,
        annotations: entry.annotations,
        ...(entry.at ? { managedFields: [{ manager: 'policy-sync', operation: 'Update', time: entry.at }] } : {}),
      },
      spec: {
        workload: { manifests: [manifest] },
        deleteOption: { propagationPolicy: orphan ? 'Orphan' : 'Foreground' },
        manifestConfigs: config ? [{ ...config, resourceIdentifier: identifier }] : [],
      },
    };
    if (reported) work.status = { conditions, resourceStatus: { manifests: [{ ...reported, resourceMeta: { ...reported.resourceMeta, ordinal: 0 }, conditions: (reported.conditions ?? []).map(current) }] } };
    const kept = view(work);
    carriedBy.set(kept, bundle.metadata.name);
    return kept;
  });
}

/** The bundle a copy work came from (unpackBundle), by object: the works cache keeps these objects as they are. */
const carriedBy = new WeakMap<object, string>();

/** The name of the bundle `copy` was unpacked from; undefined for a work of its own. */
export function bundleOf(copy: KubeObject): string | undefined {
  return carriedBy.get(copy);
}

/** What a cache keeps of a copy work (unpackBundle). */
export type CopyView = (work: ManifestWork) => ManifestWork;

/**
 * The copy works a work carries: a bundle's (none when its entries do not parse: nobody's), each as `view` keeps
 * it, else the work itself.
 */
export function copiesOf(work: KubeObject, view?: CopyView): readonly KubeObject[] {
  return isBundle(work) ? (unpackBundle(work, view) ?? []) : [work];
}

/**
 * The copy works of a list of works (bundles unpacked, works of their own as they are), one per copy: where two
 * works carry one copy (a copy on the move), the one preferredCopy picks. For readers of a listed snapshot.
 */
export function copyWorks(works: readonly KubeObject[]): KubeObject[] {
  const byKey = new Map<string, KubeObject[]>();
  for (const work of works) {
    for (const copy of copiesOf(work)) {
      const key = `${copy.metadata.namespace ?? ''}/${copy.metadata.name}`;
      const carriers = byKey.get(key);
      if (carriers) carriers.push(copy);
      else byKey.set(key, [copy]);
    }
  }
  return [...byKey.values()].map((carriers) => (carriers.length === 1 ? carriers[0]! : preferredCopy(carriers)));
}

/**
 * Of the works carrying one copy for a while (a copy moving from a work of its own into a bundle), the one the
 * hub reads: the bundle's once the agent applied the copy there, until then the work of its own.
 */
export function preferredCopy(candidates: readonly KubeObject[]): KubeObject {
  const bundled = candidates.filter((c) => bundleOf(c) !== undefined);
  const own = candidates.filter((c) => bundleOf(c) === undefined);
  return bundled.find((c) => workState(c) === 'applied') ?? own[0] ?? bundled[0]!;
}

/** Two copy works alike but for the resourceVersion (a bundle rewritten for a neighbour). */
export function sameCopy(a: KubeObject, b: KubeObject): boolean {
  if (a === b) return true;
  if (bundleOf(a) !== bundleOf(b) || a.metadata.uid !== b.metadata.uid) return false;
  const strip = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return canonicalJson(strip(a)) === canonicalJson(strip(b));
}

/** Changes to the bundles of one cluster and downstream namespace. */
export interface BundleChanges {
  cluster: string;
  namespace: string;
  /** This controller's bundles of that cluster and namespace, as observed (their entries parse). */
  observed: readonly KubeObject[];
  /** Copy works to carry (buildManifestWork's: one manifest, one config), new or replacing the entry of the same work name. */
  put: readonly ManifestWork[];
  /** Work names whose copies leave (the deletion rule decided). */
  drop: ReadonlySet<string>;
  /** The bytes of entries (manifest and entry) a bundle takes new copies up to. */
  capBytes: number;
  /** controllerLabelValue of this controller. */
  controller: string;
  /** The hub's wall clock now (RFC 3339): the `at` of the entries this write changes. */
  now?: string;
}

export interface BundleWrite {
  bundle: BundleWork;
  /** The bundle as observed: the write is an update of it (its resourceVersion the precondition); absent, a create. */
  observed?: KubeObject;
}

export interface PackedBundles {
  writes: BundleWrite[];
  /** Observed bundles left without any copy: deleted (every copy of theirs was dropped). */
  deletes: KubeObject[];
}

interface Slot {
  index: number;
  observed?: KubeObject;
  /** Entries with their manifest and config, in order. */
  items: { entry: BundleEntry; manifest: KubeObject; config: ManifestConfig | undefined; orphan: boolean; changed: boolean }[];
}

const entryBytes = (entry: BundleEntry, manifest: KubeObject): number => Buffer.byteLength(JSON.stringify(entry)) + Buffer.byteLength(JSON.stringify(manifest));

/**
 * The writes that make the bundles of one cluster and namespace carry `put` and lose `drop`: an entry is replaced
 * where it is (even past the cap: moving a copy between works would be a deletion on the spoke); a new copy goes to
 * the first bundle with room, else to a new one; a bundle is written only when it changes, and deleted only when
 * every copy it carried was dropped.
 */
export function packBundles(changes: BundleChanges): PackedBundles {
  const slots: Slot[] = [];
  for (const observed of changes.observed) {
    const index = bundleIndex(changes.controller, changes.namespace, observed.metadata.name);
    const copies = unpackBundle(observed);
    if (index === undefined || !copies) continue;
    const entries = readEntries(observed)!;
    slots.push({
      index,
      observed,
      items: copies.map((copy, i) => ({ entry: entries[i]!, manifest: copy.spec.workload.manifests[0]!, config: copy.spec.manifestConfigs[0], orphan: copy.spec.deleteOption.propagationPolicy === 'Orphan', changed: false })),
    });
  }
  slots.sort((a, b) => a.index - b.index);
  const where = new Map<string, Slot>();
  for (const slot of slots) for (const item of slot.items) where.set(item.entry.work, slot);

  for (const slot of slots) slot.items = slot.items.filter((item) => !changes.drop.has(item.entry.work));
  const sizeOf = (slot: Slot) => slot.items.reduce((sum, item) => sum + entryBytes(item.entry, item.manifest), 0);
  // The last put of a copy wins; copies already carried are replaced first, so that room is counted after them.
  const puts = [...new Map(changes.put.filter((w) => !changes.drop.has(w.metadata.name)).map((w) => [w.metadata.name, w])).values()];
  const fresh: Slot['items'] = [];
  for (const work of puts) {
    const manifest = work.spec.workload.manifests[0];
    const config = work.spec.manifestConfigs[0];
    // An entry without its resource would make the whole bundle unreadable (nobody's): refused here, loudly.
    if (!manifest || !config) throw new Error(`copy work ${work.metadata.namespace}/${work.metadata.name}: a bundle carries one manifest with its config per copy work`);
    const item = {
      entry: { work: work.metadata.name, labels: work.metadata.labels, annotations: work.metadata.annotations, resource: config.resourceIdentifier.resource, since: 0 },
      manifest,
      config,
      orphan: work.spec.deleteOption.propagationPolicy === 'Orphan',
      changed: true,
    };
    const home = where.get(work.metadata.name);
    const at = home ? home.items.findIndex((i) => i.entry.work === work.metadata.name) : -1;
    if (!home || at < 0) {
      fresh.push(item);
      continue;
    }
    const before = home.items[at]!;
    const sameCopy = canonicalJson(before.manifest) === canonicalJson(manifest) && canonicalJson(before.config ?? null) === canonicalJson(config ?? null) && before.orphan === item.orphan;
    // Unchanged content keeps its `since`.
    home.items[at] = sameCopy ? { ...item, entry: { ...item.entry, since: before.entry.since, ...(before.entry.at ? { at: before.entry.at } : {}) }, changed: false } : item;
  }
  const sizes = new Map(slots.map((slot) => [slot, sizeOf(slot)]));
  for (const item of fresh) {
    const bytes = entryBytes(item.entry, item.manifest);
    let slot = slots.find((s) => s.items.length === 0 || sizes.get(s)! + bytes <= changes.capBytes);
    if (!slot) {
      // Every observed name is taken, a bundle whose entries do not parse too (never overwritten).
      const taken = new Set([...slots.map((s) => s.index), ...changes.observed.map((o) => bundleIndex(changes.controller, changes.namespace, o.metadata.name))]);
      let index = 0;
      while (taken.has(index)) index++;
      slot = { index, items: [] };
      slots.push(slot);
      slots.sort((a, b) => a.index - b.index);
    }
    slot.items.push(item);
    sizes.set(slot, (sizes.get(slot) ?? 0) + bytes);
  }

  const writes: BundleWrite[] = [];
  const deletes: KubeObject[] = [];
  for (const slot of slots) {
    if (slot.items.length === 0) {
      if (slot.observed) deletes.push(slot.observed);
      continue;
    }
    // A spec change moves the generation by exactly one: the write is an update fenced on the observed resourceVersion.
    const next = slot.observed ? (slot.observed.metadata.generation ?? 0) + 1 : 1;
    const entries = slot.items.map((item) => (item.changed ? { ...item.entry, since: next, ...(changes.now ? { at: changes.now } : {}) } : item.entry));
    const bundle = buildBundle(changes, slot.index, entries, slot.items);
    if (slot.observed && sameBundle(bundle, slot.observed)) continue;
    writes.push(slot.observed ? { bundle, observed: slot.observed } : { bundle });
  }
  return { writes, deletes };
}

function buildBundle(changes: BundleChanges, index: number, entries: BundleEntry[], items: Slot['items']): BundleWork {
  const manifests = items.map((item) => item.manifest);
  const orphaningRules = items.filter((item) => item.orphan).map((item) => identifierOf(item));
  const deleteOption: BundleDeleteOption = orphaningRules.length > 0 ? { propagationPolicy: 'SelectivelyOrphan', selectivelyOrphans: { orphaningRules } } : { propagationPolicy: 'Foreground' };
  const spec: BundleWork['spec'] = { workload: { manifests }, deleteOption, manifestConfigs: sharedConfigs(changes.namespace, items) };
  const labels: Record<string, string> = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [CONTROLLER_LABEL]: changes.controller, [BUNDLE_LABEL]: namespaceHash(changes.namespace) };
  const reapply: string[] = [];
  for (const { entry } of items) {
    const source = entry.labels[SOURCE_LABEL];
    if (source) labels[`${BUNDLE_SOURCE_PREFIX}${source}`] = 'true';
    const token = entry.labels[REAPPLY_LABEL];
    if (token) reapply.push(token);
  }
  // A copy to put back (its drift's token, core/spoke/spoketruth.ts) makes the work agent apply the whole bundle
  // again at once: it does so when a work's labels change, and a bundle has no per-copy label.
  if (reapply.length > 0) labels[REAPPLY_LABEL] = sha256Hex(reapply.join('\n')).slice(0, 16);
  const annotations: Record<string, string> = { [BUNDLE_COPIES_ANNOTATION]: JSON.stringify(entries) };
  annotations[SPEC_HASH_ANNOTATION] = specHash({ metadata: { labels, annotations }, spec });
  return { apiVersion: WORK_API_VERSION, kind: WORK_KIND, metadata: { name: bundleName(changes.controller, changes.namespace, index), namespace: changes.cluster, labels, annotations }, spec };
}

function identifierOf(item: Slot['items'][number]): ResourceIdentifier {
  return { group: apiGroup(item.manifest.apiVersion), resource: item.entry.resource, name: item.manifest.metadata.name, namespace: item.manifest.metadata.namespace ?? '' };
}

/**
 * One config per kind for the copies whose config is the kind's most common one, its name `*`, after an exact
 * config for each copy whose config differs (the agent takes the first match).
 */
function sharedConfigs(namespace: string, items: Slot['items']): ManifestConfig[] {
  type Variant = { config: ManifestConfig; items: Slot['items'] };
  const byKind = new Map<string, { group: string; resource: string; variants: Map<string, Variant> }>();
  for (const item of items) {
    if (!item.config) continue;
    const { group, resource } = item.config.resourceIdentifier;
    const kind = `${resource}.${group}`;
    const { resourceIdentifier: _id, ...rest } = item.config;
    const variant = canonicalJson(rest);
    const entry = byKind.get(kind) ?? { group, resource, variants: new Map<string, Variant>() };
    byKind.set(kind, entry);
    const list: Variant = entry.variants.get(variant) ?? { config: item.config, items: [] };
    list.items.push(item);
    entry.variants.set(variant, list);
  }
  const exact: ManifestConfig[] = [];
  const wildcards: ManifestConfig[] = [];
  for (const kind of [...byKind.keys()].sort()) {
    const { group, resource, variants } = byKind.get(kind)!;
    const ordered = [...variants.entries()].sort(([a, va], [b, vb]) => vb.items.length - va.items.length || (a < b ? -1 : a > b ? 1 : 0));
    const [[, common], ...others] = ordered as [[string, Variant], ...[string, Variant][]];
    for (const [, { config, items: its }] of others) for (const item of its) exact.push({ ...config, resourceIdentifier: identifierOf(item) });
    wildcards.push({ ...common.config, resourceIdentifier: { group, resource, name: '*', namespace } });
  }
  return [...exact, ...wildcards];
}

function sameBundle(bundle: BundleWork, observed: KubeObject): boolean {
  return observed.metadata.annotations?.[SPEC_HASH_ANNOTATION] === bundle.metadata.annotations[SPEC_HASH_ANNOTATION];
}

/** The API group of an apiVersion (`v1` is the core group's). */
function apiGroup(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}
