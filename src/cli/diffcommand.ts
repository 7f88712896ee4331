// `policy-sync diff`: before a hub policy is applied or edited, what the hub controller would do with it —
// which clusters it reaches, in which waves, and each spoke copy's diff against what runs there now. Reads the
// hub only (GETs and LISTs: nothing is written, not even a dry run); the decisions are the hub's own, from the
// pure core (core/rollout/preview.ts), on a snapshot read here. Renderings: diffformat.ts.
//   policy-sync diff -f policy.yaml                  the file's policies (new or edited) against the hub
//   policy-sync diff authpolicy/NS/NAME -f edit.yaml the file holds an edited version of that hub policy
//   policy-sync diff authpolicy/NS/NAME              the hub policy as it is, against what each cluster runs
import { readFileSync } from 'node:fs';
import { Argument, Command, Option } from 'commander';
import { parseAllDocuments } from 'yaml';
import { canonicalJson } from '../core/k8s/canonical.ts';
import { formatKubeTime } from '../core/k8s/kubetime.ts';
import { groupResourceKey, gvrKey } from '../core/k8s/gvr.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import type { KindFacts } from '../core/pipeline/hubview.ts';
import { CONTROLLER_LABEL, STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import { previewRollout, type HubSnapshot } from '../core/rollout/preview.ts';
import { SPOKE_CONFIG_LABEL, spokeReportText } from '../core/spoke/spokeconfig.ts';
import { parseSpokeReport, type SpokeReport } from '../core/spoke/spokereport.ts';
import { GATEWAY_GROUP, GATEWAY_KIND, readTargets } from '../core/targets/targetrefs.ts';
import { controllerLabelValue, readSourceRef, workIdentity } from '../core/works/manifestwork.ts';
import { crdVersionHasStatus, crdVersionSchema, readCrd, schemaHasObservedGeneration, type CrdInfo } from '../kube/discovery.ts';
import { isNotFound, type KubeHttp } from '../kube/http.ts';
import { RESOURCES, collectionPath, type ResourceRef } from '../kube/resource.ts';
import { getObject } from '../kube/writes.ts';
import { CliError, errorLine, hubOptions, namespaceOf, terminalWidth, withHub, type HubFlags } from './common.ts';
import { addDecisionOptions, type DecisionFlags } from './decisionflags.ts';
import { formatDiffs, formatDiffsJson, type PolicyChange, type PolicyDiff } from './diffformat.ts';
import { withSchemaDefaults, type DefaultingSchema } from './schemadefaults.ts';
import { isPolicyWork, parsePolicyReference, policyResource, policyWorksSelector, readSyncedKinds, resolveKind, type PolicyReference, type SyncedKind, type SyncedKinds } from './status.ts';

export const DIFF_OUTPUTS = ['text', 'json'] as const;

interface DiffFlags extends HubFlags, DecisionFlags {
  filename?: string;
  output: (typeof DIFF_OUTPUTS)[number];
}

/** One policy document of the file, where it came from (for errors that name it). */
interface Document {
  object: KubeObject;
  where: string;
}

function readText(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new CliError(`${file}: cannot be read: ${(err as Error).message}`);
  }
}

/** The objects of a YAML or JSON file (several documents, or a `List`), each checked to be a Kubernetes object. */
export function parseDocuments(text: string, file: string): Document[] {
  const docs = parseAllDocuments(text);
  const out: Document[] = [];
  for (const [i, doc] of (Array.isArray(docs) ? docs : [docs]).entries()) {
    const where = `${file}${i > 0 || (Array.isArray(docs) && docs.length > 1) ? ` (document ${i + 1})` : ''}`;
    if (doc.errors.length > 0) throw new CliError(`${where}: not valid YAML or JSON: ${doc.errors[0]!.message.split('\n')[0]!.replace(/:\s*$/, '')}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (isRecord(value) && value.kind === 'List' && Array.isArray(value.items)) {
      value.items.forEach((item, j) => out.push({ object: checkObject(item, `${where} items[${j}]`), where: `${where} items[${j}]` }));
    } else out.push({ object: checkObject(value, where), where });
  }
  if (out.length === 0) throw new CliError(`${file}: holds no object`);
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function checkObject(value: unknown, where: string): KubeObject {
  if (!isRecord(value)) throw new CliError(`${where}: not an object`);
  for (const field of ['apiVersion', 'kind'] as const) {
    if (typeof value[field] !== 'string' || value[field] === '') throw new CliError(`${where}: ${field}: required`);
  }
  const metadata = value.metadata;
  if (!isRecord(metadata)) throw new CliError(`${where}: metadata: required`);
  if (typeof metadata.name !== 'string' || metadata.name === '') throw new CliError(`${where}: metadata.name: required`);
  if (metadata.namespace !== undefined && typeof metadata.namespace !== 'string') throw new CliError(`${where}: metadata.namespace: must be a string`);
  if (value.spec !== undefined && !isRecord(value.spec)) throw new CliError(`${where}: spec: must be an object`);
  for (const field of ['labels', 'annotations'] as const) {
    const map = metadata[field];
    if (map !== undefined && !(isRecord(map) && Object.values(map).every((v) => typeof v === 'string'))) {
      throw new CliError(`${where}: metadata.${field}: must map strings to strings`);
    }
  }
  return value as unknown as KubeObject;
}

/** The synced kind of an object by its apiVersion's group and its kind. */
function syncedKindOf(synced: SyncedKinds, controllerName: string, object: KubeObject, where: string): SyncedKind {
  const slash = object.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : object.apiVersion.slice(0, slash);
  const kind = synced.kinds.find((k) => k.group === group && k.kind === object.kind);
  if (kind) return kind;
  const list = synced.kinds.length === 0 ? 'none' : synced.kinds.map((k) => `${k.kind} (${k.group})`).join(', ');
  throw new CliError(`${where}: kind: ${object.kind} of ${object.apiVersion} is not a policy kind synced by ${controllerName} (synced: ${list})`);
}

/** A list; empty when the resource is not served (no OCM on this hub). */
async function listAll(http: KubeHttp, resource: ResourceRef, query: Record<string, string> = {}): Promise<KubeObject[]> {
  try {
    return (await http.request<{ items: KubeObject[] }>('GET', collectionPath(resource), { query })).items;
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

/** What the hub controller's caches hold, as far as a preview reads it. */
async function readSnapshot(http: KubeHttp, flags: DiffFlags, synced: SyncedKinds): Promise<HubSnapshot> {
  const [gateways, placements, decisions, managedClusters, clusterSets, bindings, spokeConfigs] = await Promise.all([
    listAll(http, RESOURCES.gateways),
    listAll(http, RESOURCES.placements),
    listAll(http, RESOURCES.placementDecisions),
    listAll(http, RESOURCES.managedClusters),
    listAll(http, RESOURCES.managedClusterSets),
    listAll(http, RESOURCES.managedClusterSetBindings),
    listAll(http, RESOURCES.manifestWorks, { labelSelector: `${SPOKE_CONFIG_LABEL}=true,${CONTROLLER_LABEL}=${controllerLabelValue(flags.controllerName)}` }),
  ]);
  // The reports as the spoke agents last wrote them, each counted as fresh: what the hub controller does
  // with them right after a start (it cannot know their age before it sees them change).
  const reports = new Map<string, SpokeReport>();
  const refusedReports = new Map<string, string>();
  for (const work of spokeConfigs) {
    const text = spokeReportText(work);
    if (text === undefined) continue;
    const parsed = parseSpokeReport(text);
    if (parsed.ok) reports.set(work.metadata.namespace ?? '', parsed.report);
    else refusedReports.set(work.metadata.namespace ?? '', `${parsed.field}: ${parsed.message}`);
  }
  // Who holds a tenant lane on a cluster is what the works there show; read only where two hub Gateways of a
  // class in force share a name, the only way two may share a lane (a large fleet's works are many).
  const names = new Set<string>();
  let sharedName = false;
  for (const g of gateways) {
    const className = (g.spec as { gatewayClassName?: unknown } | undefined)?.gatewayClassName;
    if (typeof className !== 'string' || !synced.params.has(className)) continue;
    if (names.has(g.metadata.name)) sharedName = true;
    names.add(g.metadata.name);
  }
  const works = sharedName ? await listAll(http, RESOURCES.manifestWorks, { labelSelector: `${CONTROLLER_LABEL}=${controllerLabelValue(flags.controllerName)}` }) : [];
  return {
    classes: synced.params,
    servedKinds: new Set(synced.kinds.map(groupResourceKey)),
    gateways,
    placements,
    decisions,
    managedClusters,
    clusterSets,
    bindings,
    trustDecisionLabels: flags.trustDecisionLabels,
    reports,
    refusedReports,
    spokeAgents: spokeConfigs.length > 0,
    works,
  };
}

/** The kind's CRD as the hub's class reconciler reads it (kube/discovery.ts); why not, when it cannot be read. */
interface KindCrd {
  /** Undefined when the kind has no CRD (a built-in or aggregated resource). */
  crd?: CrdInfo;
  unreadable?: string;
}

async function readKindCrd(http: KubeHttp, kind: SyncedKind): Promise<KindCrd> {
  try {
    const crd = await readCrd(http, kind);
    return crd ? { crd } : {};
  } catch (err) {
    // No right to read CRDs: the file is taken as it is, and said so.
    return { unreadable: errorLine(err) };
  }
}

/**
 * What the hub controller knows of the kind, read from the same CRD with the same helpers as its class reconciler:
 * the uid recorded in each work (as the policy's works carry it, else the CRD's), whether its status is a
 * subresource (none without a CRD, as on the hub), and whether a Progressive rollout can gate on it. A CRD that
 * cannot be read: the update strategy the policy's works carry, else `Update`.
 */
function kindFacts(kind: SyncedKind, { crd, unreadable }: KindCrd, observed: readonly KubeObject[]): { facts: KindFacts; ungated?: { apiVersion: string; kind: string; name: string } } {
  const uid = observed.map((w) => readSourceRef(w)?.crdUid).find((u) => u !== undefined) ?? crd?.uid;
  const statusSubresource = unreadable === undefined ? crdVersionHasStatus(crd, kind.version) : observedStrategy(observed) === 'Update';
  const facts: KindFacts = { ...(uid === undefined ? {} : { crdUid: uid }), statusSubresource };
  const ungated = crd !== undefined && schemaHasObservedGeneration(crdVersionSchema(crd, kind.version)) === false;
  return { facts, ...(ungated ? { ungated: { apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, name: gvrKey(kind) } } : {}) };
}

/** The update strategy the policy's works carry for their copy; Update when none says. */
function observedStrategy(observed: readonly KubeObject[]): 'Update' | 'ServerSideApply' {
  for (const w of observed) {
    const type = (w.spec as { manifestConfigs?: { updateStrategy?: { type?: unknown } }[] } | undefined)?.manifestConfigs?.[0]?.updateStrategy?.type;
    if (type === 'ServerSideApply' || type === 'Update') return type;
  }
  return 'Update';
}

/** The object with the defaults its CRD's schema gives it, as the apiserver stores it: in the file's version, then in the version the hub reads. */
function defaulted(object: KubeObject, kind: SyncedKind, { crd }: KindCrd): KubeObject {
  const slash = object.apiVersion.indexOf('/');
  const version = slash < 0 ? object.apiVersion : object.apiVersion.slice(slash + 1);
  const schema = (v: string): DefaultingSchema | undefined => crdVersionSchema(crd, v);
  const once = withSchemaDefaults(object, schema(version));
  return version === kind.version ? once : withSchemaDefaults(once, schema(kind.version));
}

/** The policy as it would be once the file is applied: the file's, with what the apiserver keeps or sets. */
function edited(kind: SyncedKind, object: KubeObject, namespace: string, live: KubeObject | undefined): { policy: KubeObject; change: PolicyChange } {
  const specChanged = live === undefined || canonicalJson(object.spec ?? {}) !== canonicalJson(live.spec ?? {});
  const liveGeneration = typeof live?.metadata.generation === 'number' ? live.metadata.generation : undefined;
  const generation = live === undefined ? 1 : specChanged ? (liveGeneration ?? 0) + 1 : (liveGeneration ?? 1);
  const { status: _status, ...rest } = object;
  const metadata = { ...object.metadata, namespace, generation };
  // The status the hub wrote stays on the policy whatever the file says (the hub's own annotation): it says where
  // the rollout of the revision stands.
  const reported = live?.metadata.annotations?.[STATUS_ANNOTATION];
  if (reported !== undefined) metadata.annotations = { ...metadata.annotations, [STATUS_ANNOTATION]: reported };
  else if (metadata.annotations?.[STATUS_ANNOTATION] !== undefined) {
    const { [STATUS_ANNOTATION]: _ignored, ...rest } = metadata.annotations;
    metadata.annotations = rest;
  }
  delete metadata.deletionTimestamp;
  if (live?.metadata.uid) metadata.uid = live.metadata.uid;
  else delete metadata.uid;
  // The copy carries the hub policy's creationTimestamp (GEP-713 oldest-wins): a new one's is now.
  metadata.creationTimestamp = live?.metadata.creationTimestamp ?? formatKubeTime(new Date())!;
  return {
    policy: { ...rest, apiVersion: kind.group === '' ? kind.version : `${kind.group}/${kind.version}`, metadata },
    change: live === undefined ? 'new' : specChanged ? 'spec' : 'metadata',
  };
}

function requireGatewayTarget(policy: KubeObject, where: string): void {
  const spec = policy.spec ?? {};
  if (spec.targetRef === undefined && spec.targetRefs === undefined) throw new CliError(`${where}: spec.targetRef or spec.targetRefs: required (a policy targets a Gateway)`);
  const gateways = readTargets(policy).filter((t) => t.group === GATEWAY_GROUP && t.kind === GATEWAY_KIND);
  if (gateways.length === 0) {
    const field = spec.targetRef !== undefined ? 'spec.targetRef' : 'spec.targetRefs';
    throw new CliError(`${where}: ${field}: no target is a Gateway (group ${GATEWAY_GROUP}, kind ${GATEWAY_KIND}): nothing would be synced`);
  }
}

async function previewOne(http: KubeHttp, flags: DiffFlags, snapshot: () => Promise<HubSnapshot>, kind: SyncedKind, doc: Document | undefined, live: KubeObject | undefined, namespace: string, name: string): Promise<PolicyDiff> {
  const crd = await readKindCrd(http, kind);
  const { policy, change } = doc ? edited(kind, defaulted(doc.object, kind, crd), namespace, live) : { policy: live!, change: 'none' as const };
  requireGatewayTarget(policy, doc?.where ?? `${kind.kind} ${namespace}/${name}`);
  const hub = await snapshot();
  const id = { group: kind.group, resource: kind.resource, namespace, name };
  const works = await listAll(http, RESOURCES.manifestWorks, { labelSelector: policyWorksSelector(flags.controllerName, id) });
  const observed = works.filter((w) => isPolicyWork(w, id) && workIdentity(w) !== undefined);
  const sameName = (await listAll(http, policyResource(kind), { fieldSelector: `metadata.name=${name}` })).filter((p) => p.metadata.namespace !== namespace);
  const { facts, ungated } = kindFacts(kind, crd, observed);
  const key = groupResourceKey(kind);
  const preview = previewRollout({
    gvr: kind,
    policy,
    // The previewed policy in place of the hub's version of it, among the same-named ones (rivals).
    hub: { ...hub, policies: new Map([[key, [policy, ...sameName]]]), kinds: new Map([[key, facts]]), ...(ungated ? { ungatedKinds: [ungated] } : {}) },
    observed,
    controller: controllerLabelValue(flags.controllerName),
    rawFeedback: flags.rawFeedback,
    maxWorkBytes: flags.maxWorkBytes,
    now: Date.now(),
  });
  const hubRevision = typeof live?.metadata.generation === 'number' ? live.metadata.generation : undefined;
  return {
    group: kind.group,
    version: kind.version,
    resource: kind.resource,
    kind: kind.kind,
    namespace,
    name,
    change,
    ...(hubRevision === undefined ? {} : { hubRevision }),
    ...(doc && crd.unreadable !== undefined ? { notes: [`the CRD of ${kind.resource}.${kind.group} could not be read (${crd.unreadable}): the file is compared without the defaults the apiserver would give it`] } : {}),
    preview,
  };
}

/** What the command line asks for, checked before the hub is reached: the policy named and the file's objects. */
interface Request {
  ref?: PolicyReference;
  docs: Document[];
}

function request(target: string | undefined, flags: DiffFlags): Request {
  if (target === undefined && flags.filename === undefined) {
    throw new CliError('name a hub policy (<resource>/[<namespace>/]<name>), a file (-f policy.yaml), or both (the file holding an edited version of that policy)');
  }
  let ref: PolicyReference | undefined;
  if (target !== undefined) {
    try {
      ref = parsePolicyReference(target);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
  }
  const docs = flags.filename === undefined ? [] : parseDocuments(readText(flags.filename), flags.filename);
  if (ref && docs.length > 1) throw new CliError(`${flags.filename}: holds ${docs.length} objects; with a policy named, it must hold that policy alone`);
  return { ...(ref ? { ref } : {}), docs };
}

async function runDiff(http: KubeHttp, target: string | undefined, { ref, docs }: Request, flags: DiffFlags): Promise<string> {
  const synced = await readSyncedKinds(http, flags.controllerName);
  let snapshot: Promise<HubSnapshot> | undefined;
  const hub = (): Promise<HubSnapshot> => (snapshot ??= readSnapshot(http, flags, synced));
  const diffs: PolicyDiff[] = [];
  const defaultNamespace = namespaceOf(flags);
  if (ref) {
    const kind = resolveKind(synced, flags.controllerName, ref.resource);
    const doc = docs[0];
    const namespace = ref.namespace ?? doc?.object.metadata.namespace ?? defaultNamespace;
    if (doc) {
      const docKind = syncedKindOf(synced, flags.controllerName, doc.object, doc.where);
      if (docKind.group !== kind.group || docKind.resource !== kind.resource) throw new CliError(`${doc.where}: kind: ${doc.object.kind} is not the kind of ${target} (${kind.kind})`);
      if (doc.object.metadata.name !== ref.name) throw new CliError(`${doc.where}: metadata.name: "${doc.object.metadata.name}" is not the policy named, "${ref.name}"`);
      const docNamespace = doc.object.metadata.namespace;
      if (docNamespace !== undefined && docNamespace !== namespace) throw new CliError(`${doc.where}: metadata.namespace: "${docNamespace}" is not the policy's namespace, "${namespace}"`);
    }
    const live = await getObject(http, policyResource(kind), namespace, ref.name);
    if (!live) {
      if (!doc) throw new CliError(`${kind.kind} ${namespace}/${ref.name} not found (${kind.resource}.${kind.group})`);
    }
    diffs.push(await previewOne(http, flags, hub, kind, doc, live, namespace, ref.name));
  } else {
    for (const doc of docs) {
      const kind = syncedKindOf(synced, flags.controllerName, doc.object, doc.where);
      const namespace = doc.object.metadata.namespace ?? defaultNamespace;
      const live = await getObject(http, policyResource(kind), namespace, doc.object.metadata.name);
      diffs.push(await previewOne(http, flags, hub, kind, doc, live, namespace, doc.object.metadata.name));
    }
  }
  if (flags.output === 'json') return formatDiffsJson(diffs);
  return formatDiffs(diffs, terminalWidth());
}

export function diffCommand(): Command {
  return addDecisionOptions(hubOptions(new Command('diff')), { for: 'preview' })
    .description(
      'preview a policy change before it is applied: which clusters it reaches, in which rollout waves, and each spoke copy\'s diff against what runs there now; reads the hub only, writes nothing',
    )
    .addArgument(new Argument('[policy]', '<resource>/[<namespace>/]<name>: a hub policy; with -f, the file holds an edited version of it; alone, the policy as it is on the hub'))
    .option('-f, --filename <file>', 'the policy (or policies) as they would be applied: YAML or JSON, several documents or a List; - for stdin')
    .addOption(new Option('-o, --output <format>', 'text: the plan and unified diffs; json: the same for scripts').choices(DIFF_OUTPUTS).default('text'))
    .action(async (target: string | undefined, flags: DiffFlags) => {
      // A usage mistake or a bad file is told before the hub is reached (or found missing).
      let asked: Request;
      try {
        asked = request(target, flags);
      } catch (err) {
        if (!(err instanceof CliError)) throw err;
        process.stderr.write(`error: ${err.message}\n`);
        process.exitCode = err.exitCode;
        return;
      }
      await withHub(flags, (http) => runDiff(http, target, asked, flags));
    });
}
