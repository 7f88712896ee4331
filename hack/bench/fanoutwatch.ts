// What the scale and fleet fan-outs share: a stall watch that fails a fan-out whose tracked objects stop matching
// for STALL_MS, and the cost curve of its checkpoints.
import { etcdAlarms } from '../../testkit/etcd.ts';
import { STALL_MS } from './config.ts';
import type { ScalePoint } from './report.ts';
import type { Tracker } from './tracker.ts';

/** Rejects once `tracker.matched` has not moved for STALL_MS (naming etcd's alarms, if any); stop() ends the watch. */
export function watchStall(tracker: Tracker, expected: number, what: string, controllerLog: string, etcdUrl: string): { stalled: Promise<never>; stop: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    let [last, since] = [-1, Date.now()];
    timer = setInterval(() => {
      if (tracker.matched !== last) [last, since] = [tracker.matched, Date.now()];
      else if (Date.now() - since > STALL_MS) {
        clearInterval(timer);
        void etcdAlarms(etcdUrl).then((a) =>
          reject(new Error(`the fan-out stalled: ${tracker.matched} of ${expected} ${what} as expected (${tracker.seen.size} seen) for ${STALL_MS / 60_000} min${a.length ? `; etcd alarms: ${a.join(', ')}` : ''} (see ${controllerLog})`)),
        );
      }
    }, 10_000);
  });
  void stalled.catch(() => undefined);
  return { stalled, stop: () => clearInterval(timer) };
}

/** The checkpoints reached, each with its rate since the one before (or the start). */
export function costCurve(reached: readonly Omit<ScalePoint, 'segmentWorksPerSecond'>[]): ScalePoint[] {
  return reached.map((p, i) => {
    const prev = i === 0 ? { works: 0, elapsedMs: 0 } : reached[i - 1]!;
    return { ...p, segmentWorksPerSecond: (p.works - prev.works) / Math.max(0.001, (p.elapsedMs - prev.elapsedMs) / 1000) };
  });
}
