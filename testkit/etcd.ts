// The sandbox's etcd through its v3 JSON gateway (on its client URL): compaction, database size and alarms,
// for the tests that compact it under a watch and the bench whose 100k works fill it.
import { readFileSync } from 'node:fs';
import type { Sandbox } from './sandbox/sandbox.ts';

/** etcd's default backend quota: the sandbox sets no --quota-backend-bytes. */
const ETCD_DEFAULT_QUOTA_BYTES = 2 * 2 ** 30;

/** The sandbox etcd's client URL (`http://127.0.0.1:PORT`), from the endpoint the sandbox probes it on. */
export async function etcdUrl(sandbox: Sandbox): Promise<string> {
  const health = (await sandbox.status()).find((s) => s.name === 'etcd')?.endpoint; // http://127.0.0.1:PORT/health
  if (!health) throw new Error('the sandbox runs no etcd');
  return new URL(health).origin;
}

/** POSTs `body` to `path` of etcd's JSON gateway at `url`; rejects on an error answer. */
export async function etcdCall<T>(url: string, path: string, body: unknown, timeoutMs?: number): Promise<T> {
  const res = await fetch(new URL(path, url), {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json' },
    ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`etcd ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Compacts the sandbox's etcd at its current revision (physically): every older revision is gone. Returns that revision. */
export async function compactEtcd(sandbox: Sandbox): Promise<number> {
  const url = await etcdUrl(sandbox);
  const range = await etcdCall<{ header: { revision: string } }>(url, '/v3/kv/range', { key: 'AA==' }); // the key "\0"
  const revision = range.header.revision;
  await etcdCall(url, '/v3/kv/compaction', { revision, physical: true });
  return Number(revision);
}

/** The backend quota of the sandbox's etcd, from its command line. */
export function etcdQuotaBytes(sandbox: Sandbox): number {
  const args = readFileSync(`/proc/${sandbox.process('etcd').pid}/cmdline`, 'utf8').split('\0');
  const quota = Number(args.find((a) => a.startsWith('--quota-backend-bytes='))?.slice('--quota-backend-bytes='.length) ?? 0);
  return quota > 0 ? quota : ETCD_DEFAULT_QUOTA_BYTES;
}

/** etcd's database size, allocated and in use (its maintenance status), MiB; undefined when it does not answer. */
export async function etcdDb(url: string): Promise<{ dbMiB: number; inUseMiB: number } | undefined> {
  try {
    const body = await etcdCall<{ dbSize?: string; dbSizeInUse?: string }>(url, '/v3/maintenance/status', {}, 5_000);
    return { dbMiB: Number(body.dbSize) / 2 ** 20, inUseMiB: Number(body.dbSizeInUse) / 2 ** 20 };
  } catch {
    return undefined;
  }
}

/** etcd's raised alarms (NOSPACE once the database reached its quota: every write is refused then). */
export async function etcdAlarms(url: string): Promise<string[]> {
  try {
    const body = await etcdCall<{ alarms?: { alarm?: string }[] }>(url, '/v3/maintenance/alarm', { action: 'GET' }, 5_000);
    return (body.alarms ?? []).map((a) => a.alarm ?? 'unknown');
  } catch {
    return [];
  }
}
