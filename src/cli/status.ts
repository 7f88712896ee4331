// `policy-sync status`: reads the hub and prints, per synced policy, where it is enforced, overridden,
// pending or failed — from the `policysync.kuadrant.io/status` annotation the hub controller keeps.
import { Command, Option } from 'commander';
import { readParamsRef, parseParamsObject } from '../core/classparams.ts';
import { gvrKey, type GroupVersionResource } from '../core/gvr.ts';
import { STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import type { KubeObject } from '../core/objects.ts';
import { readPolicyStatus, type PolicyStatus } from '../core/policystatus.ts';
import { KubeHttp } from '../kube/http.ts';
import { RESOURCES, collectionPath } from '../kube/resource.ts';
import { getObject } from '../kube/writes.ts';
import { DEFAULT_CONTROLLER_NAME } from '../hub/controller.ts';
import { loadKubeConfig } from './kubeconfig.ts';

export interface PolicyRow {
  kind: string;
  namespace: string;
  name: string;
  status: PolicyStatus;
}

/** Every policy of a kind listed by an owned GatewayClass that carries the hub's status annotation. */
export async function readPolicyRows(http: KubeHttp, controllerName: string): Promise<PolicyRow[]> {
  const classes = await http.request<{ items: KubeObject[] }>('GET', collectionPath(RESOURCES.gatewayClasses));
  const kinds = new Map<string, GroupVersionResource>();
  for (const cls of classes.items) {
    if ((cls.spec as { controllerName?: string } | undefined)?.controllerName !== controllerName) continue;
    const ref = readParamsRef(cls);
    if (!ref.ok) continue;
    const resource = ref.ref.kind === 'ConfigMap' ? RESOURCES.configMaps : RESOURCES.policySyncParams;
    const params = await getObject(http, resource, ref.ref.namespace, ref.ref.name);
    const parsed = params ? parseParamsObject(ref.ref.kind, params) : undefined;
    if (parsed?.ok) for (const k of parsed.params.policiesToSync) kinds.set(gvrKey(k), k);
  }
  const rows: PolicyRow[] = [];
  for (const gvr of kinds.values()) {
    let list: { kind?: string; items: KubeObject[] };
    try {
      list = await http.request('GET', collectionPath({ ...gvr, namespaced: true }));
    } catch {
      continue; // a kind listed in params but not served: the GatewayClass status says so
    }
    const kind = list.kind?.replace(/List$/, '') ?? gvr.resource;
    for (const policy of list.items) {
      const status = readPolicyStatus(policy.metadata.annotations?.[STATUS_ANNOTATION]);
      if (status) rows.push({ kind, namespace: policy.metadata.namespace ?? '', name: policy.metadata.name, status });
    }
  }
  return rows.sort((a, b) => `${a.kind}/${a.namespace}/${a.name}`.localeCompare(`${b.kind}/${b.namespace}/${b.name}`));
}

/** One line per policy, then (wide) one line per cluster; fits 80 columns for ordinary names. */
export function formatRows(rows: PolicyRow[], wide: boolean): string {
  if (rows.length === 0) return 'no synced policies\n';
  const header = ['POLICY', 'CLUSTERS', 'ENFORCED', 'OVERRIDDEN', 'PENDING', 'FAILED'];
  const lines = rows.map((r) => [
    `${r.kind}/${r.namespace}/${r.name}`,
    String(r.status.summary.clusters),
    String(r.status.summary.enforced),
    String(r.status.summary.overridden),
    String(r.status.summary.pending),
    String(r.status.summary.failed),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]! + 2))).join('').trimEnd();
  const out = [fmt(header)];
  rows.forEach((row, i) => {
    out.push(fmt(lines[i]!));
    if (!wide) return;
    for (const [cluster, c] of Object.entries(row.status.clusters ?? {})) {
      out.push(`  ${cluster.padEnd(12)} ${c.state.padEnd(11)} ${c.reason}${c.message ? `: ${c.message}` : ''}`);
    }
    for (const p of row.status.problems ?? []) out.push(`  ! ${p.reason}: ${p.message}`);
  });
  return `${out.join('\n')}\n`;
}

export function statusCommand(): Command {
  return new Command('status')
    .description('print where each synced policy is enforced, overridden, pending or failed')
    .option('--kubeconfig <path>', 'kubeconfig of the hub (default: $KUBECONFIG or ~/.kube/config)')
    .option('--controller-name <name>', 'GatewayClass spec.controllerName of the hub controller', DEFAULT_CONTROLLER_NAME)
    .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'wide', 'json']).default('table'))
    .action(async (flags: { kubeconfig?: string; controllerName: string; output: 'table' | 'wide' | 'json' }) => {
      const http = new KubeHttp(loadKubeConfig(flags.kubeconfig));
      try {
        const rows = await readPolicyRows(http, flags.controllerName);
        process.stdout.write(flags.output === 'json' ? `${JSON.stringify(rows, null, 2)}\n` : formatRows(rows, flags.output === 'wide'));
      } finally {
        http.destroy();
      }
    });
}
