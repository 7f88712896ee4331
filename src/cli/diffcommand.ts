// `policy-sync diff`: before a hub policy is applied or edited, what the hub controller would do with it —
// which clusters it reaches, in which waves, and each spoke copy's diff against what runs there now. Reads the
// hub only (GETs and LISTs: nothing is written, not even a dry run); the decisions are the hub's own, from the
// pure core (core/pipeline/preview.ts), on a snapshot read here. Renderings: diffformat.ts.
//   policy-sync diff -f policy.yaml                  the file's policies (new or edited) against the hub
//   policy-sync diff authpolicy/NS/NAME -f edit.yaml the file holds an edited version of that hub policy
//   policy-sync diff authpolicy/NS/NAME              the hub policy as it is, against what each cluster runs
//   policy-sync diff -f variant.yaml                 the policies the file's PolicyVariants target, with them in
//                                                    place of the hub's (filevariants.ts)
import { readFileSync } from 'node:fs';
import { Argument, Command, Option } from 'commander';
import { parseAllDocuments } from 'yaml';
import { canonicalJson } from '../core/k8s/canonical.ts';
import { formatKubeTime } from '../core/k8s/kubetime.ts';
import { groupResourceKey } from '../core/k8s/gvr.ts';
import type { KubeObject } from '../core/k8s/objects.ts';
import { STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import { previewRollout, type HubSnapshot } from '../core/pipeline/preview.ts';
import { GATEWAY_GROUP, GATEWAY_KIND, readTargets } from '../core/targets/targetrefs.ts';
import { controllerLabelValue, workIdentity } from '../core/works/manifestwork.ts';
import { crdVersionSchema } from '../kube/discovery.ts';
import type { KubeHttp } from '../kube/http.ts';
import { getObject } from '../kube/writes.ts';
import { CliError, hubOptions, namespaceOf, terminalWidth, withHub, type HubFlags } from './common.ts';
import { addDecisionOptions, type DecisionFlags } from './decisionflags.ts';
import { formatDiffs, formatDiffsJson, type PolicyChange, type PolicyDiff } from './diffformat.ts';
import { isVariantDocument, readFileVariant, variantsTargeting, variantsWith, type FileVariant } from './filevariants.ts';
import { listAll } from './lists.ts';
import { kindFacts, readKindCrd, readSnapshot, type KindCrd } from './hubsnapshot.ts';
import { withSchemaDefaults, type DefaultingSchema } from '../core/k8s/schemadefaults.ts';
import { parsePolicyReference, policyResource, readPolicyWorks, readSyncedKinds, resolveKind, type PolicyReference, type SyncedKind, type SyncedKinds } from './status.ts';

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

/** The file's variants, when it holds any: in place of the hub's in every decision of this run. */
interface FileVariants {
  file: FileVariant[];
}

async function previewOne(
  http: KubeHttp,
  flags: DiffFlags,
  snapshot: () => Promise<HubSnapshot>,
  kind: SyncedKind,
  doc: Document | undefined,
  live: KubeObject | undefined,
  namespace: string,
  name: string,
  { file }: FileVariants,
): Promise<PolicyDiff> {
  const crd = await readKindCrd(http, kind);
  const { policy, change } = doc ? edited(kind, defaulted(doc.object, kind, crd), namespace, live) : { policy: live!, change: 'none' as const };
  requireGatewayTarget(policy, doc?.where ?? `${kind.kind} ${namespace}/${name}`);
  const hub = await snapshot();
  const id = { group: kind.group, resource: kind.resource, namespace, name };
  const observed = (await readPolicyWorks(http, flags.controllerName, id)).filter((w) => workIdentity(w) !== undefined);
  const sameName = (await listAll(http, policyResource(kind), { fieldSelector: `metadata.name=${name}` })).filter((p) => p.metadata.namespace !== namespace);
  const { facts, ungated } = kindFacts(kind, crd, observed);
  const key = groupResourceKey(kind);
  const variants = variantsWith(hub.variants ?? [], file);
  const preview = previewRollout({
    gvr: kind,
    policy,
    // The previewed policy in place of the hub's version of it, among the same-named ones (rivals); the file's
    // variants in place of the hub's.
    hub: { ...hub, policies: new Map([[key, [policy, ...sameName]]]), kinds: new Map([[key, facts]]), variants, ...(ungated ? { ungatedKinds: [ungated] } : {}) },
    observed,
    controller: controllerLabelValue(flags.controllerName),
    rawFeedback: flags.rawFeedback,
    maxWorkBytes: flags.maxWorkBytes,
    now: Date.now(),
  });
  const hubRevision = typeof live?.metadata.generation === 'number' ? live.metadata.generation : undefined;
  const applied = variantsTargeting(variants, file, { group: kind.group, kind: kind.kind, namespace, name });
  return {
    group: kind.group,
    version: kind.version,
    resource: kind.resource,
    kind: kind.kind,
    namespace,
    name,
    change,
    ...(hubRevision === undefined ? {} : { hubRevision }),
    ...(applied.length > 0 ? { variants: applied } : {}),
    ...(doc && crd.unreadable !== undefined ? { notes: [`the CRD of ${kind.resource}.${kind.group} could not be read (${crd.unreadable}): the file is compared without the defaults the apiserver would give it`] } : {}),
    ...(!doc && crd.unreadable !== undefined && applied.length > 0 ? { notes: [`the CRD of ${kind.resource}.${kind.group} could not be read (${crd.unreadable}): no copy a variant changes can be checked, as on a hub that cannot read it`] } : {}),
    preview,
  };
}

/** What the command line asks for, checked before the hub is reached: the policy named and the file's objects. */
interface Request {
  ref?: PolicyReference;
  /** The file's policies. */
  docs: Document[];
  /** The file's PolicyVariants. */
  variantDocs: Document[];
}

function request(target: string | undefined, flags: DiffFlags): Request {
  if (target === undefined && flags.filename === undefined) {
    throw new CliError('name a hub policy (<resource>/[<namespace>/]<name>), a file (-f policy.yaml), or both (the file holding an edited version of that policy, or variants of it)');
  }
  let ref: PolicyReference | undefined;
  if (target !== undefined) {
    try {
      ref = parsePolicyReference(target);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
  }
  const all = flags.filename === undefined ? [] : parseDocuments(readText(flags.filename), flags.filename);
  const docs = all.filter((d) => !isVariantDocument(d.object));
  const variantDocs = all.filter((d) => isVariantDocument(d.object));
  if (ref && docs.length > 1) throw new CliError(`${flags.filename}: holds ${docs.length} policies; with a policy named, it must hold that policy alone (and PolicyVariants of it)`);
  return { ...(ref ? { ref } : {}), docs, variantDocs };
}

/** A policy to preview: of a synced kind, in a namespace, by name; the file's version of it, if any. */
interface Asked {
  kind: SyncedKind;
  namespace: string;
  name: string;
  doc?: Document;
  /** The file's variant that asks for it (its target), for the error when the policy is nowhere. */
  by?: FileVariant;
  /** The hub's version of a file's variant targeted it: previewed only if it exists. */
  former?: boolean;
}

async function runDiff(http: KubeHttp, target: string | undefined, { ref, docs, variantDocs }: Request, flags: DiffFlags): Promise<string> {
  const synced = await readSyncedKinds(http, flags.controllerName);
  let snapshot: Promise<HubSnapshot> | undefined;
  const hub = (): Promise<HubSnapshot> => (snapshot ??= readSnapshot(http, flags, synced));
  const defaultNamespace = namespaceOf(flags);
  const file: FileVariant[] = [];
  for (const doc of variantDocs) file.push(await readFileVariant(http, synced, flags.controllerName, doc, defaultNamespace));
  // Each policy once, in the file's order: its policies, then the policies its variants target.
  const asked: Asked[] = [];
  const ask = (a: Asked): void => {
    const same = asked.find((x) => x.kind === a.kind && x.namespace === a.namespace && x.name === a.name);
    if (!same) asked.push(a);
    else if (!a.former) same.former = false;
  };
  if (ref) {
    const kind = resolveKind(synced, flags.controllerName, ref.resource);
    const doc = docs[0];
    const namespace = ref.namespace ?? doc?.object.metadata.namespace ?? file[0]?.namespace ?? defaultNamespace;
    if (doc) {
      const docKind = syncedKindOf(synced, flags.controllerName, doc.object, doc.where);
      if (docKind.group !== kind.group || docKind.resource !== kind.resource) throw new CliError(`${doc.where}: kind: ${doc.object.kind} is not the kind of ${target} (${kind.kind})`);
      if (doc.object.metadata.name !== ref.name) throw new CliError(`${doc.where}: metadata.name: "${doc.object.metadata.name}" is not the policy named, "${ref.name}"`);
      const docNamespace = doc.object.metadata.namespace;
      if (docNamespace !== undefined && docNamespace !== namespace) throw new CliError(`${doc.where}: metadata.namespace: "${docNamespace}" is not the policy's namespace, "${namespace}"`);
    }
    for (const v of file) {
      if (v.target.kind !== kind || v.target.name !== ref.name || v.namespace !== namespace) {
        throw new CliError(`${v.where}: spec.targetRef: the variant targets ${v.target.kind.kind} ${v.namespace}/${v.target.name}, not the policy named, ${kind.kind} ${namespace}/${ref.name}`);
      }
    }
    const live = await getObject(http, policyResource(kind), namespace, ref.name);
    if (!live && !doc) throw new CliError(`${kind.kind} ${namespace}/${ref.name} not found (${kind.resource}.${kind.group})`);
    return format([await previewOne(http, flags, hub, kind, doc, live, namespace, ref.name, { file })], flags);
  }
  for (const doc of docs) {
    ask({ kind: syncedKindOf(synced, flags.controllerName, doc.object, doc.where), namespace: doc.object.metadata.namespace ?? defaultNamespace, name: doc.object.metadata.name, doc });
  }
  for (const v of file) {
    ask({ kind: v.target.kind, namespace: v.namespace, name: v.target.name, by: v });
    // Moved to another policy: the one it leaves returns to its own copy (or to its other variants').
    if (v.formerTarget) ask({ kind: v.formerTarget.kind, namespace: v.namespace, name: v.formerTarget.name, former: true });
  }
  const diffs: PolicyDiff[] = [];
  for (const a of asked) {
    const live = await getObject(http, policyResource(a.kind), a.namespace, a.name);
    if (!live && !a.doc) {
      if (a.former) continue;
      throw new CliError(`${a.by!.where}: spec.targetRef.name: ${a.kind.kind} ${a.namespace}/${a.name} is neither on the hub nor in the file: the variant would change no copy`);
    }
    diffs.push(await previewOne(http, flags, hub, a.kind, a.doc, live, a.namespace, a.name, { file }));
  }
  return format(diffs, flags);
}

function format(diffs: readonly PolicyDiff[], flags: DiffFlags): string {
  return flags.output === 'json' ? formatDiffsJson(diffs) : formatDiffs(diffs, terminalWidth());
}

export function diffCommand(): Command {
  return addDecisionOptions(hubOptions(new Command('diff')), { for: 'preview' })
    .description(
      'preview a policy change before it is applied: which clusters it reaches, in which rollout waves, and each spoke copy\'s diff against what runs there now; reads the hub only, writes nothing',
    )
    .addArgument(new Argument('[policy]', '<resource>/[<namespace>/]<name>: a hub policy; with -f, the file holds an edited version of it (or PolicyVariants of it); alone, the policy as it is on the hub'))
    .option(
      '-f, --filename <file>',
      'the policies and PolicyVariants as they would be applied: YAML or JSON, several documents or a List; - for stdin. A variant previews the policy it targets with the file\'s variant in place of the hub\'s',
    )
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
