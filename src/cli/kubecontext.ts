// Which namespace a command means when none is given, as kubectl decides it: `--namespace`, else the
// namespace of the kubeconfig context in use (`--context`, else current-context; files merged as
// $KUBECONFIG merges them, the first to name a context wins), else the pod's service-account namespace
// in a cluster, else `default`. The connection itself is src/kube/kubeconfig.ts; this reads only the
// context's namespace, which that loader does not need.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse } from 'yaml';
import { SERVICE_ACCOUNT_DIR } from '../kube/kubeconfig.ts';

export interface ContextOptions {
  kubeconfig?: string;
  context?: string;
  env?: NodeJS.ProcessEnv;
  serviceAccountDir?: string;
}

interface ContextEntry {
  name?: unknown;
  context?: { namespace?: unknown } | null;
}

/** The kubeconfig files kubectl would read, in order; empty in a cluster with none. */
export function kubeconfigFiles(options: ContextOptions): string[] {
  if (options.kubeconfig) return [options.kubeconfig];
  const env = options.env ?? process.env;
  if (env.KUBECONFIG) return env.KUBECONFIG.split(delimiter).filter((f) => f.length > 0 && existsSync(f));
  const file = join(env.HOME || homedir(), '.kube', 'config');
  return existsSync(file) ? [file] : [];
}

/** The namespace a command without `--namespace` works in. File errors are left to the kubeconfig loader. */
export function defaultNamespace(options: ContextOptions): string {
  const files = kubeconfigFiles(options);
  let current: string | undefined;
  const namespaces = new Map<string, string>();
  for (const file of files) {
    let doc: { contexts?: unknown; 'current-context'?: unknown } | null;
    try {
      doc = parse(readFileSync(file, 'utf8')) as typeof doc;
    } catch {
      continue;
    }
    if (!doc || typeof doc !== 'object') continue;
    if (!current && typeof doc['current-context'] === 'string' && doc['current-context'] !== '') current = doc['current-context'];
    for (const entry of Array.isArray(doc.contexts) ? (doc.contexts as ContextEntry[]) : []) {
      if (typeof entry?.name !== 'string' || namespaces.has(entry.name)) continue;
      const ns = entry.context?.namespace;
      namespaces.set(entry.name, typeof ns === 'string' ? ns : '');
    }
  }
  const name = options.context ?? current;
  const fromContext = name === undefined ? undefined : namespaces.get(name);
  if (fromContext) return fromContext;
  if (files.length === 0) {
    try {
      const ns = readFileSync(join(options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR, 'namespace'), 'utf8').trim();
      if (ns) return ns;
    } catch {
      // Not in a cluster.
    }
  }
  return 'default';
}
