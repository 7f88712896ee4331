// Loads the kubeconfig a command talks to: `--kubeconfig`, else $KUBECONFIG / ~/.kube/config / in-cluster.
import { Kubeconfig } from '../kube/kubeconfig.ts';

export function loadKubeConfig(path: string | undefined): Kubeconfig {
  const kc = Kubeconfig.load(path);
  if (!kc.getCurrentCluster()) throw new Error(`no current cluster in the kubeconfig${path ? ` ${path}` : ''}`);
  return kc;
}
