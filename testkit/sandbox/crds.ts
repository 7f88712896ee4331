// The upstream CRDs each sandbox cluster gets, read from the Go module downloads recorded by
// hack/build-components.sh (never copied into this repository), applied server-side and waited on
// until Established.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { getObject, serverSideApply } from '../../src/kube/writes.ts';
import { modulesFile, repoRoot } from './layout.ts';

const OCM_API = 'open-cluster-management.io/api';
const GATEWAY_API = 'sigs.k8s.io/gateway-api';
const KUADRANT = 'github.com/kuadrant/kuadrant-operator';

export type ClusterRole = 'hub' | 'spoke';

const ADDON_CRDS = [
  '0000_00_addon.open-cluster-management.io_clustermanagementaddons.crd.yaml',
  '0000_01_addon.open-cluster-management.io_managedclusteraddons.crd.yaml',
  '0000_02_addon.open-cluster-management.io_addondeploymentconfigs.crd.yaml',
  '0000_03_addon.open-cluster-management.io_addontemplates.crd.yaml',
];

function moduleDirs(): Record<string, string> {
  if (!existsSync(modulesFile)) {
    throw new Error(`${modulesFile} is missing: run \`npm run build:components\` (hack/build-components.sh) first`);
  }
  return JSON.parse(readFileSync(modulesFile, 'utf8')) as Record<string, string>;
}

/** The folder of a Go module recorded by hack/build-components.sh. */
export function moduleFolder(mod: string): string {
  const d = moduleDirs()[mod];
  if (!d || !existsSync(d)) throw new Error(`module ${mod} is not downloaded: run \`npm run build:components\``);
  return d;
}

/** The CRD files for a cluster of the given role, as absolute paths. */
export function crdFiles(role: ClusterRole): string[] {
  const dir = moduleFolder;
  const ocm = dir(OCM_API);
  const gatewayStandard = join(dir(GATEWAY_API), 'config/crd/standard');
  const kuadrant = join(dir(KUADRANT), 'config/crd/bases');
  const files = [
    // Gateway API standard channel, minus the ValidatingAdmissionPolicy some releases ship beside it.
    ...readdirSync(gatewayStandard).filter((f) => f.endsWith('.yaml') && !f.includes('vap')).map((f) => join(gatewayStandard, f)),
    ...['authpolicies', 'ratelimitpolicies', 'dnspolicies', 'tlspolicies'].map((r) => join(kuadrant, `kuadrant.io_${r}.yaml`)),
  ];
  if (role === 'hub') {
    const own = join(repoRoot, 'crds');
    files.push(...readdirSync(own).filter((f) => f.endsWith('.yaml')).map((f) => join(own, f)));
    files.push(
      join(ocm, 'work/v1/0000_00_work.open-cluster-management.io_manifestworks.crd.yaml'),
      join(ocm, 'work/v1alpha1/0000_00_work.open-cluster-management.io_manifestworkreplicasets.crd.yaml'),
      join(ocm, 'cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml'),
      join(ocm, 'cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml'),
      join(ocm, 'cluster/v1beta1/0000_03_clusters.open-cluster-management.io_placementdecisions.crd.yaml'),
      join(ocm, 'cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml'),
      join(ocm, 'cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml'),
      // The placement controller lists these even when no placement uses scores.
      join(ocm, 'cluster/v1alpha1/0000_05_clusters.open-cluster-management.io_addonplacementscores.crd.yaml'),
      // The addon manager: addons, their per-cluster instances, templates and deployment configs.
      ...ADDON_CRDS.map((f) => join(ocm, 'addon/v1alpha1', f)),
    );
  } else {
    files.push(
      join(ocm, 'work/v1/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml'),
      // The OCM registration agent watches ClusterClaims on its spoke.
      join(ocm, 'cluster/v1alpha1/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml'),
    );
  }
  return files;
}

function readCrds(files: string[]): KubeObject[] {
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as KubeObject | null)
      .filter((o): o is KubeObject => o?.kind === 'CustomResourceDefinition'),
  );
}

interface CrdStatus {
  status?: { conditions?: { type: string; status: string }[] };
}

/**
 * Applies the role's CRDs and `extraFiles` (raw JSON: client-node's typed models would drop `x-kubernetes-*` keys) and
 * waits until each is Established.
 */
export async function installCrds(kc: KubeConfig, role: ClusterRole, timeoutMs = 60_000, extraFiles: string[] = []): Promise<string[]> {
  const http = new KubeHttp(kc);
  try {
    const crds = readCrds([...new Set([...crdFiles(role), ...extraFiles])]);
    await Promise.all(crds.map((crd) => serverSideApply(http, RESOURCES.crds, crd, { fieldManager: 'policy-sync-sandbox' })));
    const deadline = Date.now() + timeoutMs;
    for (const crd of crds) {
      for (;;) {
        const live = (await getObject(http, RESOURCES.crds, undefined, crd.metadata.name)) as CrdStatus | undefined;
        if (live?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
        if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} not Established after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return crds.map((c) => c.metadata.name);
  } finally {
    http.destroy();
  }
}
