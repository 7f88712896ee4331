// What the hub-reading commands (status, explain, wait) share, as kubectl has it: `--kubeconfig`,
// `--context`, `--namespace`/`-n`, one `error:` line on failure and documented exit codes:
//   0  done (for `wait`: every policy got there on every cluster)
//   1  `wait`: some policy did not get there before the timeout; any command: the hub could not be read
//      (unreachable, refused, forbidden)
//   2  bad usage: an unknown flag or output format, a malformed name, a kind that is not synced, an object
//      that does not exist
import { Option, type Command } from 'commander';
import type { Logger } from 'pino';
import { DEFAULT_CONTROLLER_NAME } from '../hub/assembly.ts';
import { ApiError, KubeHttp } from '../kube/http.ts';
import { Kubeconfig, loadKubeConfig } from '../kube/kubeconfig.ts';
import { defaultNamespace } from './kubecontext.ts';

export const EXIT_OK = 0;
export const EXIT_NOT_MET = 1;
export const EXIT_USAGE = 2;

/** A mistake of the person at the terminal (or a name that is not there): `error: <message>`, exit code 2. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_USAGE,
  ) {
    super(message);
  }
}

export interface HubFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  controllerName: string;
}

export function hubOptions(command: Command): Command {
  return command
    .option('--kubeconfig <path>', 'kubeconfig of the hub (default: $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'the kubeconfig context to use (default: its current-context)')
    .option('-n, --namespace <namespace>', "the namespace (default: the context's namespace, else default)")
    .addOption(new Option('--controller-name <name>', 'GatewayClass spec.controllerName of the hub controller').default(DEFAULT_CONTROLLER_NAME));
}

/** The namespace the command works in: `-n`, else the context's, as kubectl decides it. */
export function namespaceOf(flags: HubFlags): string {
  return flags.namespace ?? defaultNamespace({ ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}), ...(flags.context ? { context: flags.context } : {}) });
}

export function hubClient(flags: HubFlags): KubeHttp {
  const kc = Kubeconfig.load(flags.kubeconfig, flags.context ? { context: flags.context } : {});
  if (!kc.getCurrentCluster()) throw new CliError(`no current context in the kubeconfig${flags.kubeconfig ? ` ${flags.kubeconfig}` : ''}: pass --context`);
  return new KubeHttp(kc, { userAgent: 'policy-sync-cli' });
}

/** One line for an error: an apiserver that cannot be reached or refuses says so plainly, without a stack. */
export function errorLine(err: unknown, server?: string): string {
  if (err instanceof ApiError && err.status === 0) return `cannot reach the hub${server ? ` at ${server}` : ''}: ${err.reason}: ${err.message.replace(/^.*?: 0 \w+: /, '')}`;
  if (err instanceof ApiError && (err.status === 401 || err.status === 403)) return `the hub refused the request (${err.status} ${err.reason}): ${err.message.replace(/^.*?: \d+ \w+: /, '')}`;
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

/**
 * Runs `body` with a hub client. Its result (the text to print) goes to stdout; a failure is one
 * `error:` line on stderr with the exit code of the error (CliError), else 1.
 */
export async function withHub(flags: HubFlags, body: (http: KubeHttp) => Promise<string | void>): Promise<void> {
  let http: KubeHttp | undefined;
  try {
    try {
      http = hubClient(flags);
    } catch (err) {
      throw err instanceof CliError ? err : new CliError(errorLine(err));
    }
    const out = await body(http);
    if (out) process.stdout.write(out);
  } catch (err) {
    process.stderr.write(`error: ${errorLine(err, http?.serverUrl)}\n`);
    process.exitCode = err instanceof CliError ? err.exitCode : EXIT_NOT_MET;
  } finally {
    http?.destroy();
  }
}

/** The terminal's width when stdout is one; undefined otherwise (kubectl cuts nothing then). */
export function terminalWidth(): number | undefined {
  return process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : undefined;
}

/**
 * The kubeconfig a controller (`hub`, `spoke`) starts with; none usable (no file, no current cluster, not in a pod):
 * one fatal log line in the controller's own format naming the flag, exit code 2, and undefined — not a stack trace.
 */
export function controllerKubeConfig(path: string | undefined, logger: Logger): Kubeconfig | undefined {
  try {
    return loadKubeConfig(path);
  } catch (err) {
    logger.fatal({ flag: '--kubeconfig', ...(path ? { path } : {}), problem: errorLine(err) }, 'cannot start: no usable kubeconfig');
    process.exitCode = EXIT_USAGE;
    return undefined;
  }
}
