// One local certificate authority for the sandbox, a serving certificate for 127.0.0.1/localhost shared
// by every apiserver, an admin client certificate (O=system:masters), the service-account signing key, and
// client certificates made on demand for other identities. Made with Debian's openssl; nothing is downloaded.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface Pki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

export function pkiPaths(dir: string): Pki {
  return {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'serving.crt'),
    servingKey: join(dir, 'serving.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
  };
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
    if (e.code === 'ENOENT') throw new Error('openssl is required to make the sandbox certificates (apt-get install openssl)', { cause: err });
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.toString() ?? e.message}`, { cause: err });
  }
}

/** Creates the PKI in `dir` unless it is already there (kept across `down`/`up`). */
export function ensurePki(dir: string): Pki {
  const pki = pkiPaths(dir);
  if ((Object.values(pki) as string[]).every((f) => existsSync(f))) return pki;
  mkdirSync(dir, { recursive: true });
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', pki.caKey, '-out', pki.caCert, '-days', DAYS, '-subj', '/CN=policy-sync-sandbox-ca'], dir);
  sign(dir, pki, 'serving', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth');
  sign(dir, pki, 'admin', '/O=system:masters/CN=sandbox-admin', 'extendedKeyUsage=clientAuth');
  openssl(['genrsa', '-out', pki.serviceAccountKey, '2048'], dir);
  openssl(['rsa', '-in', pki.serviceAccountKey, '-pubout', '-out', pki.serviceAccountPub], dir);
  return pki;
}

const DAYS = '3650';

/** `<dir>/<name>.{key,crt}`: a new key and a certificate for `subj` signed by the sandbox CA. */
function sign(dir: string, pki: Pki, name: string, subj: string, ext: string): void {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const extFile = join(dir, `${name}.ext`);
  execFileSync('sh', ['-c', `printf '%s\\n' "$1" > "$2"`, 'sh', ext, extFile]);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', subj], dir);
  openssl(['x509', '-req', '-in', csr, '-CA', pki.caCert, '-CAkey', pki.caKey, '-CAcreateserial', '-out', join(dir, `${name}.crt`), '-days', DAYS, '-extfile', extFile], dir);
}

/**
 * A client certificate `<name>.{crt,key}` for `subj`, signed by the sandbox CA, made once (a PKI made before
 * it was needed gets it added, its CA untouched).
 */
export function ensureClientCertificate(pki: Pki, name: string, subj: string): { cert: string; key: string } {
  const dir = dirname(pki.caCert);
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  if (!existsSync(cert) || !existsSync(key)) sign(dir, pki, name, subj, 'extendedKeyUsage=clientAuth');
  return { cert, key };
}

export function base64File(path: string): string {
  return readFileSync(path).toString('base64');
}
