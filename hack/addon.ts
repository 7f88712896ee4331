// The policy-sync OCM addon (deploy/addon) as the demo and the e2e test drive it: install it on the hub with
// the repository's kubectl, let clusters join or leave its ManagedClusterSet, and list the agent's objects (the
// AddOnTemplate's manifests; testkit/manifests.ts reads them live on a spoke).
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../src/core/k8s/objects.ts';
import type { KubeHttp } from '../src/kube/http.ts';
import { RESOURCES, type ResourceRef } from '../src/kube/resource.ts';
import { mergePatch } from '../src/kube/writes.ts';
import { kubectl as runKubectl } from '../testkit/kubectl.ts';
import { ADDON_NAME, TEMPLATE_FILE } from './gen-addon.ts';

export { ADDON_NAME };
/** The label that puts a ManagedCluster into the addon's ManagedClusterSet (deploy/addon/placement.yaml). */
export const SPOKE_LABEL = 'policysync.kuadrant.io/spoke';
/** Hub namespace of the addon's Placement and AddOnDeploymentConfig. */
export const ADDON_NAMESPACE = 'policy-sync-addon';
/** The ManifestWork the addon manager writes into each selected cluster's namespace. */
export const DEPLOY_WORK = `addon-${ADDON_NAME}-deploy-0`;

export const MANAGED_CLUSTER_ADDONS: ResourceRef = { group: 'addon.open-cluster-management.io', version: 'v1alpha1', resource: 'managedclusteraddons', namespaced: true };
export const ADDON_DEPLOYMENT_CONFIGS: ResourceRef = { group: 'addon.open-cluster-management.io', version: 'v1alpha1', resource: 'addondeploymentconfigs', namespaced: true };

/** The objects the addon places on each cluster: the AddOnTemplate's manifests, as committed. */
export function agentObjects(): KubeObject[] {
  const [template] = parseAllDocuments(readFileSync(TEMPLATE_FILE, 'utf8')).map((d) => d.toJS() as KubeObject);
  const manifests = (template?.spec as { agentSpec?: { workload?: { manifests?: KubeObject[] } } } | undefined)?.agentSpec?.workload?.manifests;
  if (!manifests?.length) throw new Error(`${TEMPLATE_FILE} holds no manifests`);
  return manifests;
}

export function describe(o: KubeObject): string {
  return `${o.kind}/${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
}

/** The kubectl this repository builds, from the repository root, against one cluster. Never rejects on a non-zero exit. */
export async function kubectl(kubeconfig: string, args: string[]): Promise<{ code: number; output: string }> {
  const run = await runKubectl(args, { kubeconfig });
  return { code: run.code, output: `${run.stdout}${run.stderr}` };
}

/** `kubectl <verb> -k deploy/addon` against the hub. */
export function kubectlAddon(verb: 'apply' | 'delete', hubKubeconfig: string, extra: string[] = []): Promise<{ code: number; output: string }> {
  return kubectl(hubKubeconfig, [verb, '-k', 'deploy/addon', ...extra]);
}

/** A cluster joins (true) or leaves (false) the addon's ManagedClusterSet: the label on its ManagedCluster. */
export async function setMember(hub: KubeHttp, cluster: string, member: boolean): Promise<void> {
  await mergePatch(hub, RESOURCES.managedClusters, undefined, cluster, { metadata: { labels: { [SPOKE_LABEL]: member ? 'true' : null } } }, { fieldManager: 'policy-sync-addon-cli' });
}
