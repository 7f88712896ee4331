// The reference table of annotations and labels. The program declares each key it reads or writes as an
// exported `*_ANNOTATION` or `*_LABEL` constant (most in src/core/metadatakeys.ts); this finds them by a
// scan of src/ and reads their values by importing the modules that declare them. The keys only the
// manifests in deploy/ use (the addon's cluster label, the RBAC aggregation labels) are listed apart and
// checked to be there. Rendering fails when a key has no meaning written here, or a meaning names a key
// the program (or deploy/) no longer has.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { code, table } from './markdown.ts';

const ROOT = join(import.meta.dirname, '..', '..');

interface Meaning {
  kind: 'annotation' | 'label';
  on: string;
  by: string;
  says: string;
}

/** What each key of the program means. */
export const KEY_MEANINGS: Record<string, Meaning> = {
  'kuadrant.io/policies-synced': { kind: 'annotation', on: 'hub policy', by: 'hub', says: 'where it is placed (the RFC\'s format): `[{"cluster":"c1","name":"p","namespace":"ns"}]`' },
  'policysync.kuadrant.io/status': { kind: 'annotation', on: 'hub policy', by: 'hub', says: 'per-cluster status, aggregated ([status](../concepts/status.md))' },
  'policysync.kuadrant.io/withdrawn-by': { kind: 'annotation', on: 'hub policy', by: 'hub', says: 'the controller (its label value) that withdrew the policy\'s copies from our Gateways: while copies may still run (OCM\'s work agent can leave one), they are still its to witness and hand back ([tenancy](../design/tenancy.md#what-runs-on-a-spoke)); removed once no report shows one' },
  'policysync.kuadrant.io/delete-option': { kind: 'annotation', on: 'hub policy', by: 'you', says: '`Orphan`: deleting the policy\'s works leaves the copies on the spokes' },
  'policysync.kuadrant.io/rollout-strategy': { kind: 'annotation', on: 'hub policy', by: 'you', says: 'overrides the class\'s `rolloutStrategy`: `All`, `Progressive`, or a `rolloutStrategy` as JSON ([rollout](../concepts/rollout.md))' },
  'policysync.kuadrant.io/rollout-resume': { kind: 'annotation', on: 'hub policy', by: 'you', says: '`"<generation>"`: resumes the halted rollout of that revision' },
  'kuadrant.io/policy-synced': { kind: 'annotation', on: 'spoke copy', by: 'hub', says: '`<hub namespace>/<hub name>`: marks the copy as synced, not local' },
  'kuadrant.io/origin-creation': { kind: 'annotation', on: 'spoke copy', by: 'hub', says: 'the hub policy\'s creationTimestamp, for GEP-713 oldest-wins on the spoke' },
  'policysync.kuadrant.io/dropped-keys': {
    kind: 'annotation',
    on: 'spoke copy',
    by: 'hub',
    says: 'kinds with the status subresource (`Update`): the labels and annotations the hub policy dropped that this cluster\'s copy had, `{"annotations":[…],"labels":[…]}`; the spoke agent removes them from the copy',
  },
  'policysync.kuadrant.io/variants': { kind: 'annotation', on: 'spoke copy', by: 'hub', says: 'the PolicyVariants applied to the copy, `name@generation` in name order (the generation of the variant whose content the copy runs); absent when none selects its cluster' },
  'policysync.kuadrant.io/revision': { kind: 'annotation', on: 'spoke copy', by: 'hub', says: 'the hub policy\'s `metadata.generation` the copy was rendered from; read back by the feedback rule `revision`' },
  'kubectl.kubernetes.io/last-applied-configuration': { kind: 'annotation', on: 'hub policy', by: 'kubectl', says: 'never copied to the spoke' },
  'app.kubernetes.io/managed-by': { kind: 'label', on: 'ManifestWork', by: 'hub', says: '`policy-sync`: ours' },
  'policysync.kuadrant.io/digest': { kind: 'annotation', on: 'spoke copy', by: 'hub', says: 'a short hash of each top-level spec field, of the labels and of the annotations the hub sent: the spoke agent reads the copy against it and reports what differs ([what runs on a spoke](../concepts/status.md#what-runs-on-a-spoke))' },
  'policysync.kuadrant.io/reapply': { kind: 'label', on: 'ManifestWork', by: 'hub', says: 'the token of the last drift of its copy the hub asked to put back: a new token makes OCM\'s work agent apply the work again at once' },
  'policysync.kuadrant.io/mend': { kind: 'label', on: 'ManifestWork', by: 'hub', says: 'a mending work: it takes the name of a lingering copy\'s lost work, holding no copy, so that OCM\'s work agent deletes the copy its AppliedManifestWork still owns; deleted once applied ([what runs on a spoke](../concepts/status.md#what-runs-on-a-spoke))' },
  'policysync.kuadrant.io/source': { kind: 'label', on: 'ManifestWork', by: 'hub', says: '16 hex of the source policy' },
  'policysync.kuadrant.io/controller': { kind: 'label', on: 'ManifestWork', by: 'hub', says: '16 hex of `--controller-name`: several hub controllers may share a hub' },
  'policysync.kuadrant.io/spoke-config': { kind: 'label', on: 'ManifestWork', by: 'hub', says: 'the spoke-configuration works: `policy-sync-spoke-config` (config and report) and `policy-sync-spoke-heartbeat`' },
  'policysync.kuadrant.io/source-ref': { kind: 'annotation', on: 'ManifestWork', by: 'hub', says: 'the source policy\'s identity (group, version, resource, namespace, name, uid, its CRD\'s uid)' },
  'policysync.kuadrant.io/copies': { kind: 'annotation', on: 'ManifestWork', by: 'hub', says: 'on a bundle ([design/fleet.md](../design/fleet.md#the-shape)): what each copy\'s own work would carry, and since which generation it is as it is, aligned with the manifests' },
  'policysync.kuadrant.io/bundle': { kind: 'label', on: 'ManifestWork', by: 'hub', says: 'on a bundle: the hash of the downstream namespace whose copies it carries' },
  'policysync.kuadrant.io/spec-hash': { kind: 'annotation', on: 'ManifestWork', by: 'hub', says: 'hash of what was written: an equal hash is not written again' },
  'policysync.kuadrant.io/previous-copy': {
    kind: 'annotation',
    on: 'ManifestWork',
    by: 'hub',
    says: '`Progressive`: the copy the cluster ran before its current revision (canonical JSON), to roll back to; left out when the work would pass `--max-work-bytes`',
  },
  'policysync.kuadrant.io/rollout-hold': {
    kind: 'annotation',
    on: 'ManifestWork',
    by: 'hub',
    says: '`Progressive`: the cluster is held at an earlier revision during the rollout of `revision`: `{"revision":7,"cause":"Joined"}`, or `"RolledBack"` with the `halt` (cluster, reason, message)',
  },
  'cluster.open-cluster-management.io/placement': { kind: 'label', on: 'hub Gateway', by: 'you', says: 'the Placement whose decisions place it' },
  'cluster.open-cluster-management.io/clusterset': { kind: 'label', on: 'ManagedCluster', by: 'OCM', says: 'the cluster\'s exclusive ManagedClusterSet, read to keep tenants in their lanes' },
};

/** Keys only the manifests in deploy/ use. */
export const DEPLOY_KEY_MEANINGS: Record<string, Meaning> = {
  'policysync.kuadrant.io/spoke': { kind: 'label', on: 'ManagedCluster', by: 'you', says: '`"true"`: the cluster joins the addon\'s ManagedClusterSet ([install](../install.md))' },
  'policysync.kuadrant.io/aggregate-to-hub': { kind: 'label', on: 'ClusterRole', by: 'you', says: 'grants the hub a policy kind ([granting kinds](../install.md#granting-policy-kinds))' },
  'policysync.kuadrant.io/aggregate-to-spoke': { kind: 'label', on: 'ClusterRole', by: 'you', says: 'grants the spoke agent a policy kind' },
  'open-cluster-management.io/aggregate-to-work': { kind: 'label', on: 'ClusterRole', by: 'you', says: 'OCM\'s: grants the work agent a policy kind, to apply its copies' },
};

function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name), keep) : keep(e.name) ? [join(dir, e.name)] : []));
}

/** Every key the program declares, by the constants' values. */
export async function programKeys(): Promise<string[]> {
  const keys = new Set<string>();
  for (const file of files(join(ROOT, 'src'), (n) => n.endsWith('.ts') && !n.endsWith('.test.ts'))) {
    const names = [...readFileSync(file, 'utf8').matchAll(/export const (\w+_(?:ANNOTATION|LABEL)) =/g)].map((m) => m[1]!);
    if (names.length === 0) continue;
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    for (const name of names) {
      const value = module[name];
      if (typeof value !== 'string') throw new Error(`hack/docs/keys.ts: ${name} in ${file} is not a string`);
      keys.add(value);
    }
  }
  return [...keys];
}

export async function keysTable(): Promise<string> {
  const keys = await programKeys();
  const missing = keys.filter((k) => KEY_MEANINGS[k] === undefined);
  const stale = Object.keys(KEY_MEANINGS).filter((k) => !keys.includes(k));
  const deploy = files(join(ROOT, 'deploy'), (n) => n.endsWith('.yaml'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  const gone = Object.keys(DEPLOY_KEY_MEANINGS).filter((k) => !deploy.includes(k));
  if (missing.length > 0 || stale.length > 0 || gone.length > 0) {
    throw new Error(
      `hack/docs/keys.ts: write the meaning of ${missing.join(', ') || '(none)'}; drop ${[...stale, ...gone].join(', ') || '(none)'}, which the program no longer has`,
    );
  }
  const rows = [...Object.entries(KEY_MEANINGS), ...Object.entries(DEPLOY_KEY_MEANINGS)].map(([key, m]) => [code(key), m.kind, m.on, m.by, m.says]);
  return table(['key', '', 'on', 'set by', ''], rows);
}
