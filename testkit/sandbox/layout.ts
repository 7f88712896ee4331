// Where a sandbox keeps its binaries, state, credentials, data and logs. Everything lives under one
// git-ignored root so that several sandboxes (the demo's, the test suite's) can run side by side.
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const binDir = join(repoRoot, '.local', 'bin');
export const modulesFile = join(repoRoot, '.local', 'modules.json');

export interface SandboxLayout {
  root: string;
  state: string;
  pki: string;
  data: string;
  logs: string;
  kubeconfigs: string;
}

export function sandboxLayout(root = join(repoRoot, '.local')): SandboxLayout {
  return {
    root,
    state: join(root, 'sandbox', 'state.json'),
    pki: join(root, 'sandbox', 'pki'),
    data: join(root, 'sandbox', 'data'),
    logs: join(root, 'logs'),
    kubeconfigs: join(root, 'kubeconfigs'),
  };
}

export function kubeconfigPath(layout: SandboxLayout, cluster: string): string {
  return join(layout.kubeconfigs, `${cluster}.kubeconfig`);
}
