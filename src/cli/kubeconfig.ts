// Loads the kubeconfig a command talks to: `--kubeconfig`, else $KUBECONFIG / ~/.kube/config / in-cluster.
import { KubeConfig } from '@kubernetes/client-node';

export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error(`no current cluster in the kubeconfig${path ? ` ${path}` : ''}`);
  return kc;
}
