// kubectl as built by hack/build-components.sh into .local/bin (with kustomize built in), never a kubectl
// found on the PATH. Asynchronous on purpose: tests that run a controller in-process must not block its
// event loop while kubectl runs.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { binDir, repoRoot } from './sandbox/layout.ts';
import type { KubeObject } from '../src/core/k8s/objects.ts';

export const kubectlPath = join(binDir, 'kubectl');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program to its end and collects what it printed; `input` is written to its stdin. Never rejects on a
 * non-zero exit (the caller asserts on `code`), only when the program cannot be started.
 */
export function runProcess(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? repoRoot, stdio: ['pipe', 'pipe', 'pipe'], ...(options.env ? { env: options.env } : {}) });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
    child.stdin.end(options.input ?? '');
  });
}

/** Runs kubectl from the repository root; `input` is written to its stdin. Never rejects on a non-zero exit. */
export function kubectl(args: string[], options: { input?: string; kubeconfig?: string } = {}): Promise<Run> {
  if (!existsSync(kubectlPath)) {
    return Promise.reject(new Error(`${kubectlPath} is missing: run \`npm run build:components\` (hack/build-components.sh)`));
  }
  const fullArgs = options.kubeconfig ? [`--kubeconfig=${options.kubeconfig}`, ...args] : args;
  return runProcess(kubectlPath, fullArgs, { input: options.input });
}

export interface Rendered extends Run {
  objects: KubeObject[];
}

/** `kubectl kustomize <dir>` (relative to the repository root), with the output parsed. */
export async function kustomize(dir: string): Promise<Rendered> {
  const run = await kubectl(['kustomize', dir]);
  const objects = run.code === 0 ? parseAllDocuments(run.stdout).map((d) => d.toJSON() as KubeObject).filter(Boolean) : [];
  return { ...run, objects };
}

/** Objects as one multi-document YAML stream, for `kubectl … -f -`. */
export function toYaml(objects: KubeObject[]): string {
  return objects.map((o) => stringify(o)).join('---\n');
}

export function find(objects: KubeObject[], kind: string, name: string): KubeObject | undefined {
  return objects.find((o) => o.kind === kind && o.metadata.name === name);
}
