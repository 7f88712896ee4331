// The reference tables of the metrics `/metrics` serves, read from the prom-client registry the program
// builds (src/runtime/metrics.ts): name, type, labels and help text are the registry's own.
import { Metrics } from '../../src/runtime/metrics.ts';
import { code, table } from './markdown.ts';

interface Registered {
  name: string;
  help: string;
  type: string;
  labelNames?: readonly string[];
}

function registered(): Registered[] {
  // Without the process defaults: those are prom-client's (process_*, nodejs_*), not the program's.
  const metrics = new Metrics({ defaultMetrics: false });
  return metrics.registry.getMetricsAsArray().map((m) => ({
    name: m.name,
    help: m.help,
    type: String(m.type),
    labelNames: (m as unknown as { labelNames?: readonly string[] }).labelNames,
  }));
}

/** The names of every metric the program registers (process defaults aside). */
export function registeredMetricNames(): string[] {
  return registered().map((m) => m.name);
}

/** policy-sync's own metrics (`policysync_*`) when `own`, else the controller-runtime and client-go names it serves. */
export function metricsTable(own: boolean): string {
  const rows = registered()
    .filter((m) => m.name.startsWith('policysync_') === own)
    .map((m) => [code(m.name), m.type, (m.labelNames ?? []).map(code).join(', '), m.help]);
  return table(['metric', 'type', 'labels', ''], rows);
}
