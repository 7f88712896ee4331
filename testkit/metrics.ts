// The hub apiserver's own Prometheus metrics, for tests that count the requests a controller made.
// `/metrics` is plain text, which KubeHttp (JSON only) does not read: a small node:https GET with the
// kubeconfig's credentials instead (the sandbox admin is system:masters, allowed the non-resource URL).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** GETs `path` (default `/metrics`) from the kubeconfig's current cluster and returns the body. */
export async function metricsText(kubeConfig: KubeConfig, path = '/metrics'): Promise<string> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(path, cluster.server);
  const options: RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { ...options, method: 'GET', headers: { ...options.headers, Accept: 'text/plain' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 299) reject(new Error(`GET ${url.href}: ${status}: ${body.slice(0, 300)}`));
        else resolve(body);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** One sample of a counter or gauge: its labels and value. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The samples of metric `name` in Prometheus text exposition format (comments and other metrics skipped). */
export function samples(text: string, name: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const close = line.lastIndexOf('}');
    const labels = close > 0 ? parseLabels(line.slice(name.length + 1, close)) : {};
    const value = Number(line.slice(close > 0 ? close + 1 : name.length).trim().split(/\s+/)[0]);
    if (!Number.isNaN(value)) out.push({ labels, value });
  }
  return out;
}

/** `a="x",b="y\"z"` → {a: 'x', b: 'y"z'}. */
function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}
