// Garbage-collector tuning for the long-running controllers. What they keep is a trimmed cache; what they
// allocate is mostly short-lived — list pages, watch events, the desired works of each reconcile — and V8
// by default lets the old generation grow to several times the live set before collecting it again.
// A fixed percentage is wrong at both ends: 20 % of a 40 MiB heap (10k works) collects every 8 MiB and
// costs CPU for nothing, 20 % of a 300 MiB heap (100k works) lets 60 MiB of garbage sit in RSS. So the
// growth is set after each full collection to about a fixed garbage budget in MiB (docs/benchmarks.md).
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

const MiB = 1024 * 1024;

export interface HeapGrowthOptions {
  /** Garbage let grow between two full collections, in MiB. */
  budgetMiB?: number;
  minPercent?: number;
  maxPercent?: number;
}

/** The old generation's growth between collections, in percent of the live heap, for a budget. */
export function heapGrowthPercent(liveBytes: number, { budgetMiB = 24, minPercent = 10, maxPercent = 100 }: HeapGrowthOptions = {}): number {
  const percent = Math.round(((budgetMiB * MiB) / Math.max(liveBytes, 1)) * 100);
  return Math.min(maxPercent, Math.max(minPercent, percent));
}

/**
 * Keeps V8's old-generation growth at about `budgetMiB` past the live heap, re-set after each full
 * collection. Call once, before the caches fill; returns the stop.
 */
export function boundHeapGrowth(options: HeapGrowthOptions = {}): () => void {
  let current: number | undefined;
  const apply = (): void => {
    const percent = heapGrowthPercent(getHeapStatistics().used_heap_size, options);
    if (percent === current) return;
    // A heap sizing flag V8 reads when it sets the next limit after a collection, so setting it at run
    // time takes effect (unlike the young generation's size, fixed when the isolate is created).
    setFlagsFromString(`--heap-growing-percent=${percent}`);
    current = percent;
  };
  apply();
  const observer = new PerformanceObserver((list) => {
    if (list.getEntries().some((e) => (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) apply();
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
