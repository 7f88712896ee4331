// Admin kubeconfigs for the sandbox clusters (client-certificate authentication as system:masters).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import { base64File, type Pki } from './pki.ts';

export function writeAdminKubeconfig(path: string, cluster: string, server: string, pki: Pki): void {
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server, 'certificate-authority-data': base64File(pki.caCert) } }],
    users: [{ name: `${cluster}-admin`, user: { 'client-certificate-data': base64File(pki.adminCert), 'client-key-data': base64File(pki.adminKey) } }],
    contexts: [{ name: cluster, context: { cluster, user: `${cluster}-admin` } }],
    'current-context': cluster,
  };
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, stringify(doc), { mode: 0o600 });
}
