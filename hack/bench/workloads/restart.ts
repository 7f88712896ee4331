// Workload 3, a restart on the unchanged world: the controller stopped and started again on the P×C works,
// timed to caches synced and its no-op pass done, its writes (none) and its memory. With --cpu-prof, the
// profiles of the fan-out's controller and of this one are summed up.
import { delta, waitQuiet } from '../../../testkit/counters.ts';
import { PS_COMPONENT, log, type Bench, type ResultDraft } from '../config.ts';
import { profileOf, rssOf, startController, startupPass } from '../controller.ts';
import { report } from '../writes.ts';
import { profileDir } from './fanout.ts';

/** Fills in `result.startup`, `result.writes.restart`, `result.memory` (and `result.profile`). */
export async function restartUnchanged(bench: Bench, fanoutRss: { peakMiB: number; rssMiB: number }, result: ResultDraft): Promise<void> {
  const { sandbox, kubeConfig } = bench;
  const { P, C, PASS_TIMEOUT_MS } = bench.cfg;
  const N = P * C;
  const fanoutProfile = profileDir(bench, 'fanout');
  const restartProfile = profileDir(bench, 'restart');
  await sandbox.remove(PS_COMPONENT, 15_000);
  const beforeRestart = (await waitQuiet(kubeConfig)).snapshot;
  log(`restart: starting the controller on ${N} works`);
  const controller = await startController(bench, restartProfile);
  const pass = await startupPass(controller, P, PASS_TIMEOUT_MS);
  const afterRestart = await waitQuiet(kubeConfig);
  const restartRss = rssOf(controller.pid);
  result.startup = pass;
  result.writes.restart = report(delta(beforeRestart, afterRestart.snapshot), {}, 0, afterRestart.quiet, { text: '= 0', ok: (w) => w.total === 0 });
  result.memory = {
    fanoutPeakRssMiB: fanoutRss.peakMiB,
    fanoutRssMiB: fanoutRss.rssMiB,
    restartPeakRssMiB: restartRss.peakMiB,
    restartRssMiB: restartRss.rssMiB,
    works: N,
  };
  log(`restart: caches synced ${pass.cachesSyncedMs.toFixed(0)} ms, pass done ${pass.passMs.toFixed(0)} ms; peak RSS ${restartRss.peakMiB.toFixed(1)} MiB`);
  if (fanoutProfile && restartProfile) {
    // The restarted controller's profile covers its start-up; it is written when it exits.
    await sandbox.remove(PS_COMPONENT, 15_000);
    result.profile = { fanout: profileOf(fanoutProfile), restart: profileOf(restartProfile) };
    await startupPass(await startController(bench), P, PASS_TIMEOUT_MS);
  }
}
