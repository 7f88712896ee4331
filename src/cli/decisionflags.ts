// The flags that change what the hub decides for a policy: declared once, for `policy-sync hub` that runs the
// decisions and `policy-sync diff` that previews them (core/pipeline/policypipeline.ts). A preview run without
// the hub's values would disagree with it; `diff` takes them "as the hub controller's flag".
import { Option, type Command } from 'commander';
import { positiveInt } from './options.ts';

/** OCM's default limit on a ManifestWork's size. */
export const DEFAULT_MAX_WORK_BYTES = 500 * 1024;

export interface DecisionFlags {
  maxWorkBytes: number;
  rawFeedback: boolean;
  trustDecisionLabels: boolean;
}

const FLAGS = {
  maxWorkBytes: 'largest ManifestWork written (OCM default limit 500 KiB)',
  rawFeedback: 'add the raw `conditions` feedback rule (needs the agent gate RawFeedbackJsonString)',
  trustDecisionLabels:
    "take PlacementDecisions by their placement label alone, as MGC did (decisions written by a tool of one's own, no tenants); by default only decisions the Placement owns, for clusters of ManagedClusterSets bound to the Gateway's namespace, count",
};

/** Adds the decision flags: the hub's own (`for: 'hub'`), or a preview's, which must be given the hub's values. */
export function addDecisionOptions(command: Command, o: { for: 'hub' | 'preview' }): Command {
  const say = (text: string): string => (o.for === 'hub' ? text : `as the hub controller's flag: ${text}`);
  return command
    .addOption(new Option('--max-work-bytes <n>', say(FLAGS.maxWorkBytes)).argParser(positiveInt).default(DEFAULT_MAX_WORK_BYTES, String(DEFAULT_MAX_WORK_BYTES)))
    .option('--raw-feedback', say(FLAGS.rawFeedback), false)
    .option('--trust-decision-labels', say(FLAGS.trustDecisionLabels), false);
}
