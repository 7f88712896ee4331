// A kubeconfig that authenticates as a ServiceAccount of the sandbox hub: a token minted by the TokenRequest
// API, the hub's CA and server from the sandbox admin kubeconfig. A controller run in-process with it is
// authorised by the apiserver exactly as its pod would be in a cluster.
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeHttp } from '../src/kube/http.ts';
import { objectPath, type ResourceRef } from '../src/kube/resource.ts';
import type { Sandbox } from './sandbox/sandbox.ts';

const SERVICE_ACCOUNTS: ResourceRef = { group: '', version: 'v1', resource: 'serviceaccounts', namespaced: true };

export async function serviceAccountKubeConfig(sandbox: Sandbox, admin: KubeHttp, namespace: string, name: string): Promise<KubeConfig> {
  const cluster = sandbox.kubeConfig('hub').getCurrentCluster();
  if (!cluster?.caData) throw new Error('the sandbox admin kubeconfig carries no hub CA');
  const request = await admin.request<{ status: { token: string } }>('POST', `${objectPath(SERVICE_ACCOUNTS, namespace, name)}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'hub', server: cluster.server, caData: cluster.caData, skipTLSVerify: false }],
    users: [{ name, token: request.status.token }],
    contexts: [{ name: 'hub', cluster: 'hub', user: name }],
    currentContext: 'hub',
  });
  return kc;
}

/** Who the apiserver says `http` is (SelfSubjectReview). */
export async function whoAmI(http: KubeHttp): Promise<string> {
  const me = await http.request<{ status: { userInfo: { username: string } } }>('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  return me.status.userInfo.username;
}
