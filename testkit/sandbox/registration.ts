// OCM's registration in the sandbox, run the way a production fleet runs it (both from the pinned OCM module,
// `registration` in .local/bin): on the hub the registration controller (accepts clusters, approves their agents'
// CSRs, watches each cluster's lease, sets ManagedClusterConditionAvailable and the NoSelect taints
// `unreachable`/`unavailable`), and per spoke a registration agent (bootstraps with a CSR for a hub client
// certificate of its own, then renews its cluster's lease and reports the cluster's status). Stopping a spoke's
// agent is how a test takes that cluster off the hub: LEASE_GRACE_FACTOR × leaseDurationSeconds after its last
// renewal the hub marks it Available=Unknown and taints it, and every Placement that does not tolerate the taint
// drops it. The work agents do not go through this: they keep the admin hub kubeconfig.
import { join } from 'node:path';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES, type ResourceRef } from '../../src/kube/resource.ts';
import { getObject, serverSideApply } from '../../src/kube/writes.ts';
import { clusterHealth } from '../../src/core/fleet/clusterhealth.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { writeClientKubeconfig } from './kubeconfig.ts';
import { binDir, type SandboxLayout } from './layout.ts';
import { ensureClientCertificate, type Pki } from './pki.ts';
import { freePort } from './ports.ts';
import type { PlannedComponent } from './spokecontrollers.ts';

/** The hub registration controller's component name. */
export const REGISTRATION_CONTROLLER = 'registration-controller';
const AGENT_PREFIX = 'registration-agent/';

/** The component name of a spoke's registration agent: `sandbox.stop(it)` takes the cluster off the hub. */
export function registrationAgent(spoke: string): string {
  return `${AGENT_PREFIX}${spoke}`;
}

export function isRegistrationComponent(name: string): boolean {
  return name === REGISTRATION_CONTROLLER || name.startsWith(AGENT_PREFIX);
}

/**
 * `spec.leaseDurationSeconds` of the sandbox's ManagedClusters (OCM's default is 60): how often an agent renews
 * its lease. Short, so that a stopped agent makes its cluster unavailable within half a minute.
 */
export const MANAGED_CLUSTER_LEASE_SECONDS = 5;
/** OCM's hub marks a cluster unavailable after this many lease durations without renewal (pkg/registration/hub/lease `leaseDurationTimes`). */
export const LEASE_GRACE_FACTOR = 5;
/** From an agent's last lease renewal to its cluster turning Available=Unknown (and tainted `unreachable`). */
export const LEASE_GRACE_MS = LEASE_GRACE_FACTOR * MANAGED_CLUSTER_LEASE_SECONDS * 1000;

/**
 * The identity the agents bootstrap with: a client certificate of the sandbox CA in the group OCM's
 * cluster-manager binds its bootstrap ClusterRole to. The hub controller auto-approves this user's CSRs.
 */
const BOOTSTRAP_USER = 'policy-sync-sandbox:registration-bootstrap';
const BOOTSTRAP_GROUP = 'system:bootstrappers:managedcluster';
const BOOTSTRAP_CLUSTER_ROLE = 'open-cluster-management:bootstrap';

const CLUSTER_ROLES: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', namespaced: false };
const CLUSTER_ROLE_BINDINGS: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', namespaced: false };
const FIELD_MANAGER = 'policy-sync-sandbox';

interface ClusterRef {
  name: string;
  server: string;
  kubeconfig: string;
}

/**
 * The hub's kube-controller-manager arguments with its CSR signer added (idempotent): the agents' CSRs for the
 * `kubernetes.io/kube-apiserver-client` signer are signed with the sandbox CA, which the apiservers trust for
 * client certificates; the cleaner drops old CSRs as a real cluster does.
 */
export function withCsrSigning(args: readonly string[], pki: Pki): string[] {
  const controllers = ['certificatesigningrequest-signing-controller', 'certificatesigningrequest-cleaner-controller'];
  const out = args.filter((a) => !a.startsWith('--cluster-signing-cert-file=') && !a.startsWith('--cluster-signing-key-file='));
  const i = out.findIndex((a) => a.startsWith('--controllers='));
  if (i < 0) throw new Error('the hub kube-controller-manager has no --controllers list to add the CSR signer to');
  const listed = out[i]!.slice('--controllers='.length).split(',');
  out[i] = `--controllers=${[...listed, ...controllers.filter((c) => !listed.includes(c))].join(',')}`;
  out.push(`--cluster-signing-cert-file=${pki.caCert}`, `--cluster-signing-key-file=${pki.caKey}`);
  return out;
}

/** The hub registration controller and one agent per spoke, each with its health endpoint on a port of its own. */
export async function planRegistration(layout: SandboxLayout, pki: Pki, hub: ClusterRef, spokes: readonly ClusterRef[], hubNamespace: string, agentNamespace: string): Promise<PlannedComponent[]> {
  const dir = join(layout.data, 'registration');
  const bootstrapKubeconfig = join(dir, 'bootstrap-hub.kubeconfig');
  const client = ensureClientCertificate(pki, 'registration-bootstrap', `/O=${BOOTSTRAP_GROUP}/CN=${BOOTSTRAP_USER}`);
  writeClientKubeconfig(bootstrapKubeconfig, hub.name, hub.server, pki, { user: BOOTSTRAP_USER, ...client });
  const command = join(binDir, 'registration');
  const controllerPort = await freePort();
  const components: PlannedComponent[] = [
    {
      spec: {
        name: REGISTRATION_CONTROLLER,
        command,
        args: [
          'controller',
          `--kubeconfig=${hub.kubeconfig}`,
          `--namespace=${hubNamespace}`,
          '--disable-leader-election',
          `--listen=127.0.0.1:${controllerPort}`,
          // Approving a new cluster's first CSR by its bootstrap user is behind this gate (the cluster-manager
          // operator turns it on when it is given auto-approved users); renewals are approved without it.
          '--feature-gates=ManagedClusterAutoApproval=true',
          `--auto-approved-csr-users=${BOOTSTRAP_USER}`,
        ],
        log: join(layout.logs, 'registration-controller.log'),
      },
      probe: { url: `https://127.0.0.1:${controllerPort}/healthz` },
    },
  ];
  for (const spoke of spokes) {
    const port = await freePort();
    components.push({
      spec: {
        name: registrationAgent(spoke.name),
        command,
        args: [
          'agent',
          `--spoke-cluster-name=${spoke.name}`,
          `--agent-id=${spoke.name}`,
          `--bootstrap-kubeconfig=${bootstrapKubeconfig}`,
          // The agent runs on (and keeps its hub-kubeconfig Secret in `agentNamespace` of) the spoke it registers.
          `--kubeconfig=${spoke.kubeconfig}`,
          `--spoke-kubeconfig=${spoke.kubeconfig}`,
          // Where it writes the hub kubeconfig it obtained (a pod mounts its Secret at /spoke/hub-kubeconfig).
          `--hub-kubeconfig-dir=${join(dir, spoke.name, 'hub-kubeconfig')}`,
          `--namespace=${agentNamespace}`,
          '--disable-leader-election',
          `--listen=127.0.0.1:${port}`,
        ],
        log: join(layout.logs, `registration-agent-${spoke.name}.log`),
      },
      probe: { url: `https://127.0.0.1:${port}/healthz` },
    });
  }
  return components;
}

/** The ManagedCluster the sandbox registers for a spoke: accepted by the hub, with the sandbox's short lease. */
export function managedCluster(name: string): KubeObject {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name },
    spec: { hubAcceptsClient: true, leaseDurationSeconds: MANAGED_CLUSTER_LEASE_SECONDS },
  };
}

/**
 * Hub: the bootstrap ClusterRole and its binding to the bootstrap group, with the rules OCM's cluster-manager
 * chart ships (deploy/cluster-manager/chart/cluster-manager/templates/bootstrap_cluster_role.yaml): enough to
 * create the ManagedCluster and the CSR, nothing after.
 */
export async function applyBootstrapRbac(hub: KubeHttp): Promise<void> {
  await serverSideApply(hub, CLUSTER_ROLES, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: BOOTSTRAP_CLUSTER_ROLE },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', 'get', 'list', 'watch'] },
      { apiGroups: ['cluster.open-cluster-management.io'], resources: ['managedclusters'], verbs: ['get', 'create', 'list', 'watch'] },
      { apiGroups: ['cluster.open-cluster-management.io'], resources: ['managedclustersets/join'], verbs: ['create'] },
    ],
  }, { fieldManager: FIELD_MANAGER });
  await serverSideApply(hub, CLUSTER_ROLE_BINDINGS, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `${BOOTSTRAP_CLUSTER_ROLE}:managedcluster` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: BOOTSTRAP_CLUSTER_ROLE },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: BOOTSTRAP_GROUP }],
  }, { fieldManager: FIELD_MANAGER });
}

/** The agent watches ClusterClaims on its spoke (its ClusterClaim feature is on by default). */
export const CLUSTER_CLAIMS_CRD = 'clusterclaims.cluster.open-cluster-management.io';

export async function hasCrd(http: KubeHttp, name: string): Promise<boolean> {
  return (await getObject(http, RESOURCES.crds, undefined, name)) !== undefined;
}


/** `Available=True, no availability taint` (what OCM vouches for: core/clusterhealth.ts), or what the cluster shows instead. */
export function availabilityOf(object: KubeObject | undefined): { ready: boolean; describe: string } {
  if (!object) return { ready: false, describe: 'no ManagedCluster' };
  const health = clusterHealth(object);
  return { ready: health.state === 'healthy', describe: health.state === 'unavailable' ? `${health.reason}: ${health.message}` : health.state };
}
