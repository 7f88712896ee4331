// `policy-sync wait <policy>... --for=enforced|synced --timeout=30s`: for scripts and pipelines, as
// `kubectl wait`. What each condition means on each cluster is waitcondition.ts. The hub is followed with
// the project's watcher (the policy and its ManifestWorks), not polled; the verdicts are judged again every
// second as well, since some change with time alone (the hub's grace for a status to appear).
// Exit codes (common.ts): 0 every policy got there on every cluster; 1 the timeout passed first (stderr
// names each cluster not there, with its state and reason); 2 bad usage, a kind not synced, a policy not found.
import { Command, Option } from 'commander';
import { STATUS_ANNOTATION } from '../core/metadatakeys.ts';
import { readPolicyStatus } from '../core/status/annotation.ts';
import { Informer } from '../kube/informer.ts';
import type { KubeHttp } from '../kube/http.ts';
import { RESOURCES } from '../kube/resource.ts';
import { CliError, EXIT_NOT_MET, hubOptions, namespaceOf, withHub, type HubFlags } from './common.ts';
import { duration } from './duration.ts';
import { parsePolicyReference, policyBundlesSelector, policyCopies, policyResource, policyWorksSelector, readNamedPolicy, readSyncedKinds, type SyncedKind } from './status.ts';
import { qualifiedName } from './tableformat.ts';
import { policyProgress, unmetLines, WAIT_CONDITIONS, type PolicyProgress, type WaitFor } from './waitcondition.ts';

interface WaitFlags extends HubFlags {
  for: WaitFor;
  timeout: number;
}

interface Watched {
  label: string;
  kind: SyncedKind;
  namespace: string;
  name: string;
  policy: Informer;
  /** The policy's works of their own, and the bundles carrying a copy of it. */
  works: Informer;
  bundles: Informer;
}

const RECHECK_MS = 1000;

function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

async function runWait(http: KubeHttp, refs: readonly string[], flags: WaitFlags): Promise<string> {
  const synced = await readSyncedKinds(http, flags.controllerName);
  const namespace = namespaceOf(flags);
  const watched: Watched[] = [];
  for (const text of refs) {
    let ref;
    try {
      ref = parsePolicyReference(text);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
    // Named policies must exist now: a typo is bad usage, not something to wait for.
    const { kind, policy } = await readNamedPolicy(http, flags.controllerName, synced, ref, namespace);
    const id = { group: kind.group, resource: kind.resource, namespace: policy.metadata.namespace ?? '', name: policy.metadata.name };
    watched.push({
      label: qualifiedName({ kind: kind.kind, group: kind.group, name: `${id.namespace}/${id.name}` }),
      kind,
      namespace: id.namespace,
      name: id.name,
      policy: new Informer(http, policyResource(kind), { namespace: id.namespace, fieldSelector: `metadata.name=${id.name}` }),
      works: new Informer(http, RESOURCES.manifestWorks, { labelSelector: policyWorksSelector(flags.controllerName, id) }),
      bundles: new Informer(http, RESOURCES.manifestWorks, { labelSelector: policyBundlesSelector(flags.controllerName, id) }),
    });
  }
  const informers = watched.flatMap((w) => [w.policy, w.works, w.bundles]);
  const judge = (): PolicyProgress[] =>
    watched.map((w) => {
      const policy = w.policy.store.get(`${w.namespace}/${w.name}`);
      const status = readPolicyStatus(policy?.metadata.annotations?.[STATUS_ANNOTATION]);
      const works = policyCopies([...w.works.store.list(), ...w.bundles.store.list()], { group: w.kind.group, resource: w.kind.resource, namespace: w.namespace, name: w.name });
      return policyProgress(flags.for, policy, status, works, Date.now());
    });

  let timer: NodeJS.Timeout | undefined;
  let ticker: NodeJS.Timeout | undefined;
  try {
    for (const i of informers) i.start();
    const outcome = await new Promise<{ met: boolean; progress: PolicyProgress[] }>((resolve, reject) => {
      let synced = false;
      const check = (): void => {
        if (!synced) return;
        const progress = judge();
        if (progress.every((p) => p.reached)) resolve({ met: true, progress });
      };
      for (const i of informers) {
        i.onChange(() => queueMicrotask(check));
        i.onFailure((err) => (i.synced ? undefined : reject(err)));
      }
      // --timeout=0s checks once, when the caches hold the hub's state.
      if (flags.timeout > 0) timer = setTimeout(() => resolve({ met: false, progress: synced ? judge() : [] }), flags.timeout);
      void Promise.all(informers.map((i) => i.waitForSync())).then(() => {
        synced = true;
        check();
        if (flags.timeout === 0) resolve({ met: false, progress: judge() });
        ticker = setInterval(check, RECHECK_MS);
      });
    });
    if (outcome.met) {
      return watched.map((w, i) => `${w.label} ${flags.for} on ${clusterList(outcome.progress[i]!)}\n`).join('');
    }
    const lines =
      outcome.progress.length === 0
        ? ['the hub could not be read before the timeout']
        : watched.flatMap((w, i) => (outcome.progress[i]!.reached ? [] : unmetLines(w.label, flags.for, outcome.progress[i]!)));
    process.stderr.write(`error: timed out after ${formatDuration(flags.timeout)} waiting for ${flags.for}:\n${lines.map((l) => `  ${l}\n`).join('')}`);
    process.exitCode = EXIT_NOT_MET;
    return '';
  } finally {
    clearTimeout(timer);
    clearInterval(ticker);
    await Promise.all(informers.map((i) => i.stop()));
  }
}

/** `spoke-1, spoke-2 (overridden)`: the clusters, marking those that count because local policies win there. */
function clusterList(progress: PolicyProgress): string {
  return progress.clusters.map((c) => (c.state === 'Overridden' ? `${c.cluster} (overridden)` : c.cluster)).join(', ');
}

export function waitCommand(): Command {
  return hubOptions(new Command('wait'))
    .description(
      'wait until each policy is synced (its current revision applied) or enforced on every cluster it is placed on; exit 0 when so, 1 at the timeout naming the clusters not there, 2 on bad usage',
    )
    .argument('<policy...>', '<resource>/[<namespace>/]<name>, e.g. authpolicy/payments/payments-auth')
    .addOption(new Option('--for <condition>', 'enforced: enforced (or overridden by local policies) on each cluster; synced: the current revision applied on each cluster').choices(WAIT_CONDITIONS).makeOptionMandatory())
    .addOption(new Option('--timeout <duration>', 'how long to wait, e.g. 30s, 5m; 0s: check once').argParser(duration).default(30_000, '30s'))
    .action(async (refs: string[], flags: WaitFlags) => {
      await withHub(flags, (http) => runWait(http, refs, flags));
    });
}
