// The soak's result as people read it: one block of text (printed by `npm run soak` and the test), and, for a
// failing run, the operation log and the command that replays it.
import { readFileSync } from 'node:fs';
import { LINGER_BOUND_MS } from './checks.ts';
import { LINGER_SHOWN_MS, percentile, type SoakResult } from './runner.ts';

export function summarize(r: SoakResult): string {
  const lines = [
    `soak seed=${r.seed} run=${r.run}: ${r.rounds} rounds, ${r.ops} operations in ${Math.round(r.elapsedMs / 1000)} s`,
    `  operations: ${Object.entries(r.opsByKind).sort().map(([k, n]) => `${k}=${n}`).join(' ')}`,
    `  faults: ${Object.entries(r.faultsByKind).sort().map(([k, n]) => `${k}=${n}`).join(' ')}`,
    `  spoke writes checked: ${r.writesChecked} (deletions ${r.deletionsChecked}); races (copy on its way as the name was taken): ${r.races.length}`,
    `  convergence after the faults stop (ms): ${Object.entries(r.convergenceMs)
      .sort()
      .map(([k, v]) => `${k} n=${v.length} p50=${percentile(v, 50)} p99=${percentile(v, 99)}`)
      .join('; ')}`,
    `  all rounds: p50=${percentile(Object.values(r.convergenceMs).flat(), 50)} p99=${percentile(Object.values(r.convergenceMs).flat(), 99)} ms`,
    `  drifts: ${r.drifts.injected} injected (${r.drifts.missed} more found no copy to edit), ${r.drifts.reported} reported Drifted (${r.drifts.reportedByEvent} witnessed by an Event alone), ` +
      `${r.drifts.putBack} put back (${r.drifts.relabelled} with the work relabelled by the hub)` +
      `${Object.keys(r.drifts.excused).length > 0 ? `; owed no report: ${Object.entries(r.drifts.excused).map(([why, n]) => `${n} ${why}`).join(', ')}` : ''}` +
      `; edit to Drifted p50=${percentile(r.drifts.toReportMs, 50)} p99=${percentile(r.drifts.toReportMs, 99)} ms, edit to put back p50=${percentile(r.drifts.toPutBackMs, 50)} p99=${percentile(r.drifts.toPutBackMs, 99)} ms`,
    `  copies where the model wants none after the faults stopped: ${r.unwantedSeen} seen, ${r.lingering.length} for ${LINGER_SHOWN_MS / 1000} s or more (bound ${LINGER_BOUND_MS / 1000} s)` +
      r.lingering.map((l) => `\n    round ${l.round}: ${l.id} ${(l.ranMs / 1000).toFixed(1)} s${l.stillRunning ? ' (still running)' : ''}${l.saidLingeringMs === undefined ? '' : `, said Lingering at ${(l.saidLingeringMs / 1000).toFixed(1)} s`}${l.mended ? ', mending work seen' : ''}`).join(''),
    `  violations: ${r.violations.length}`,
    ...r.violations.map((v) => `    ${v.kind} ${v.at}: ${v.message}`),
  ];
  if (r.violations.length > 0) {
    lines.push(`  operation log (${r.executedFile}):`, readFileSync(r.executedFile, 'utf8'), `  replay: npm run soak -- --replay ${r.executedFile}`, `  process logs: ${r.logs}`);
  }
  return lines.join('\n');
}
