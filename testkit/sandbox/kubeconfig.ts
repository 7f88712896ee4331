// Kubeconfigs for the sandbox clusters: client-certificate authentication, as system:masters (admin) or as
// another identity signed by the sandbox CA (the OCM registration agents' bootstrap user).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import { base64File, type Pki } from './pki.ts';

export function writeAdminKubeconfig(path: string, cluster: string, server: string, pki: Pki): void {
  writeClientKubeconfig(path, cluster, server, pki, { user: `${cluster}-admin`, cert: pki.adminCert, key: pki.adminKey });
}

/** A kubeconfig for `cluster` at `server` that presents the client certificate `client.cert`/`client.key`. */
export function writeClientKubeconfig(path: string, cluster: string, server: string, pki: Pki, client: { user: string; cert: string; key: string }): void {
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server, 'certificate-authority-data': base64File(pki.caCert) } }],
    users: [{ name: client.user, user: { 'client-certificate-data': base64File(client.cert), 'client-key-data': base64File(client.key) } }],
    contexts: [{ name: cluster, context: { cluster, user: client.user } }],
    'current-context': cluster,
  };
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, stringify(doc), { mode: 0o600 });
}
